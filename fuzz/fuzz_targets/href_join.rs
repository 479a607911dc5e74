#![no_main]
//! The `href_join` target: see `rip_fuzz`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    rip_fuzz::target("href_join").expect("a target")(data);
});
