#![no_main]
//! The `warc` target: see `rip_fuzz`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    rip_fuzz::target("warc").expect("a target")(data);
});
