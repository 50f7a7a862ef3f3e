//! `aceapex-device`: the one definition of the aceapex format structs, the decode cores that
//! the CPU decoder and the kernels share, and (on `nvptx64`) the kernels themselves.
//!
//! Contents: [`format`] (structs and constants of FORMAT.md), [`status`] (per-block decode
//! status), [`rans`] (interleaved rANS decode), [`two_bit`] (two-bit literal slices),
//! [`lines`] (line layouts), [`lz`] (match layer), [`params`] (kernel parameter lists),
//! [`kernel_names`] (the one list of entry points), [`handoff`] (the dense pipe's kernels
//! overlapping), [`wave_layout`] (wavefront decoder data), [`trace`] (timeline marks of measurement builds), and, on
//! `nvptx64` only, `kernels`, `dense` and `wave`.
#![no_std]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(
        abi_ptx,
        stdarch_nvptx,
        link_llvm_intrinsics,
        gpu_intrinsics,
        gpu_launch_sized_workgroup_mem,
        core_intrinsics,
        asm_experimental_arch
    )
)]
#![cfg_attr(target_arch = "nvptx64", allow(internal_features))]

pub mod format;
pub mod handoff;
pub mod kernel_names;
pub mod lines;
pub mod lz;
pub mod own;
pub mod params;
pub mod rans;
pub mod rans_launch;
pub mod status;
pub mod trace;
pub mod two_bit;
pub mod xxh3;

#[cfg(target_arch = "nvptx64")]
pub mod dense;
#[cfg(target_arch = "nvptx64")]
pub mod kernels;
#[cfg(target_arch = "nvptx64")]
pub mod wave;
pub mod wave_layout;

pub mod dense_layout;
