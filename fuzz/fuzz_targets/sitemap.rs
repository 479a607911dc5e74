#![no_main]
//! The `sitemap` target: see `rip_fuzz`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    rip_fuzz::target("sitemap").expect("a target")(data);
});
