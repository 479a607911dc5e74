//! Integration tests: a real HTTP client (reqwest) or raw TCP against the server on
//! 127.0.0.1:0.

mod binary;
mod faults;
mod log;
mod protocol;
mod site;
mod support;
