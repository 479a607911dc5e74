#![no_main]
//! The `ndjson` target: see `rip_fuzz`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    rip_fuzz::target("ndjson").expect("a target")(data);
});
