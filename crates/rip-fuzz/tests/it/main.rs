//! Replays every fuzz target's corpus and past findings (`fuzz/`), on stable Rust.

mod corpus;
