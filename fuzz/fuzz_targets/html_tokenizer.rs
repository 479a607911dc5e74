#![no_main]
//! The `html_tokenizer` target: see `rip_fuzz`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    rip_fuzz::target("html_tokenizer").expect("a target")(data);
});
