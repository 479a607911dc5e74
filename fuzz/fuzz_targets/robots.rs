#![no_main]
//! The `robots` target: see `rip_fuzz`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    rip_fuzz::target("robots").expect("a target")(data);
});
