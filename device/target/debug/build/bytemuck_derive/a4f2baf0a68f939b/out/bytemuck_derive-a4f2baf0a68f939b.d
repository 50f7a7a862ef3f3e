/work/main/device/target/debug/build/bytemuck_derive/a4f2baf0a68f939b/out/bytemuck_derive-a4f2baf0a68f939b.d: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/bytemuck_derive-1.12.1/src/lib.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/bytemuck_derive-1.12.1/src/traits.rs

/work/main/device/target/debug/build/bytemuck_derive/a4f2baf0a68f939b/out/libbytemuck_derive-a4f2baf0a68f939b.so: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/bytemuck_derive-1.12.1/src/lib.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/bytemuck_derive-1.12.1/src/traits.rs

/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/bytemuck_derive-1.12.1/src/lib.rs:
/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/bytemuck_derive-1.12.1/src/traits.rs:
