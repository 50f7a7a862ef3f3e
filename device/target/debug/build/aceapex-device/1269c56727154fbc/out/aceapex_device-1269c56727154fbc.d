/work/main/device/target/debug/build/aceapex-device/1269c56727154fbc/out/aceapex_device-1269c56727154fbc.d: src/lib.rs src/format.rs src/lz.rs src/rans.rs src/status.rs

/work/main/device/target/debug/build/aceapex-device/1269c56727154fbc/out/libaceapex_device-1269c56727154fbc.rmeta: src/lib.rs src/format.rs src/lz.rs src/rans.rs src/status.rs

src/lib.rs:
src/format.rs:
src/lz.rs:
src/rans.rs:
src/status.rs:
