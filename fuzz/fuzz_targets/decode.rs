//! Fuzz target `decode`: [`aceapex_fuzz::fuzz_decode`] (fuzz/src/lib.rs says what it checks).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| aceapex_fuzz::fuzz_decode(data));
