//! rip-html against the standard's own tokenizer tests.

mod html5lib;
