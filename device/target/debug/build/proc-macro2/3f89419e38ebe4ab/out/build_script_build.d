/work/main/device/target/debug/build/proc-macro2/3f89419e38ebe4ab/out/build_script_build.d: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/proc-macro2-1.0.107/build.rs

/work/main/device/target/debug/build/proc-macro2/3f89419e38ebe4ab/out/build_script_build: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/proc-macro2-1.0.107/build.rs

/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/proc-macro2-1.0.107/build.rs:
