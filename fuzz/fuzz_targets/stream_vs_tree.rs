#![no_main]
//! The `stream_vs_tree` target: see `rip_fuzz`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    rip_fuzz::target("stream_vs_tree").expect("a target")(data);
});
