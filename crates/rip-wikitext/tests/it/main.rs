//! rip-wikitext on real-looking wikitext, on every page of the test wiki's dump, and on
//! garbage.

mod dump;
mod garbage;
mod pages;
