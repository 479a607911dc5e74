#![deny(missing_docs)]
//! `rip-discover`: the link crawler (being written, issue 4). The parts so far: link
//! extraction ([`links`], [`context`]), the scope regexes ([`scope`]), sitemaps
//! ([`sitemap`]), the frontier and visited set ([`frontier`]) and the state journal
//! ([`journal`]).

pub mod context;
pub mod frontier;
pub mod journal;
pub mod links;
pub mod scope;
pub mod sitemap;
