//! Fuzz target `decode_mutated`: [`aceapex_fuzz::fuzz_decode_mutated`] (fuzz/src/lib.rs says what it checks).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| aceapex_fuzz::fuzz_decode_mutated(data));
