#![no_main]
//! The `rules` target: see `rip_fuzz`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    rip_fuzz::target("rules").expect("a target")(data);
});
