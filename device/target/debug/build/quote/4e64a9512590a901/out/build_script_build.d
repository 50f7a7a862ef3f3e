/work/main/device/target/debug/build/quote/4e64a9512590a901/out/build_script_build.d: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/quote-1.0.47/build.rs

/work/main/device/target/debug/build/quote/4e64a9512590a901/out/build_script_build: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/quote-1.0.47/build.rs

/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/quote-1.0.47/build.rs:
