//! Fuzz target `container`: [`aceapex_fuzz::fuzz_container`] (fuzz/src/lib.rs says what it checks).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| aceapex_fuzz::fuzz_container(data));
