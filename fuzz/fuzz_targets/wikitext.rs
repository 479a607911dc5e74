#![no_main]
//! The `wikitext` target: see `rip_fuzz`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    rip_fuzz::target("wikitext").expect("a target")(data);
});
