//! Fuzz target `determinism`: [`aceapex_fuzz::fuzz_determinism`] (fuzz/src/lib.rs says what it checks).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| aceapex_fuzz::fuzz_determinism(data));
