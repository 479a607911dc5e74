#![no_main]
//! The `charset` target: see `rip_fuzz`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    rip_fuzz::target("charset").expect("a target")(data);
});
