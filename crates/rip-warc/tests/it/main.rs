//! rip-warc's integration tests: files written, then checked by the ecosystem's tools.

mod index;
mod killed;
mod read;
mod warcio;
mod write;
