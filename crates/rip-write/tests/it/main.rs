//! `rip-write` as a binary: what it writes, that it passes everything through, and what a
//! write error becomes.

mod feeds;
mod folder;
mod identity;
mod layout;
mod markdown;
mod modes;
mod support;
