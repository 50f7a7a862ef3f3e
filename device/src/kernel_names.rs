//! The one list of the kernels' entry points, and the launch bounds `build.rs` writes into
//! the PTX of some of them. Plain items (no dependency but [`crate::dense_layout`] and
//! [`crate::rans_launch`]), so that `build.rs` compiles this file as a module too: it checks
//! that the PTX has every entry point, and the host loads every one (`host/gpu/kernels.rs`,
//! through [`with_kernel_names`]); `.ci/run` reads the names from this file.

/// Calls `$m!` with the entry point names, in two groups: `test_only:` the kernels that only
/// tests and benchmarks launch (the token kernels of the match-copy comparison and the
/// toolchain smoke test), then `decode:` the decoders' kernels. Each name is a
/// `#[no_mangle] extern "ptx-kernel"` function of this crate.
#[macro_export]
macro_rules! with_kernel_names {
    ($m:ident) => {
        $m! {
            test_only:
                smoke_add_one,
                match_copy_warp,
                match_copy_warp_rounds,
                match_copy_thread,
                literal_scatter;
            decode:
                decode_blocks_lane,
                decode_blocks_dense,
                decode_blocks_dense_sc,
                decode_blocks_seek,
                decode_blocks_seek_batch,
                seek_gather,
                rans_decode_slices,
                rans_decode_slices_ctx,
                rans_decode_slices_pack,
                rans_decode_slices_pack_narrow,
                rans_decode_slices_two_bit,
                rans_decode_slices_pack_solo,
                wave_parse,
                wave_scan,
                wave_place,
                wave_copy
        }
    };
}

macro_rules! name_lists {
    (test_only: $($t:ident),* ; decode: $($d:ident),*) => {
        /// Every entry point of the PTX, by name ([`with_kernel_names`]).
        pub const KERNEL_NAMES: &[&str] = &[$(stringify!($t),)* $(stringify!($d)),*];
        /// The entry points only tests and benchmarks launch.
        pub const TEST_ONLY_KERNELS: &[&str] = &[$(stringify!($t)),*];
    };
}
with_kernel_names!(name_lists);

/// Launch bounds per entry point, as `(name, threads per CTA, CTAs per SM)`: `build.rs` writes
/// them as `.maxntid` and `.minnctapersm` (Rust has no attribute for them), which make
/// `ptxas` keep each kernel within the registers that many CTAs of that size leave a thread.
pub const LAUNCH_BOUNDS: [(&str, u32, u32); 10] = [
    (
        "decode_blocks_dense",
        crate::dense_layout::THREADS,
        crate::dense_layout::MIN_CTAS_PER_SM,
    ),
    (
        "decode_blocks_dense_sc",
        crate::dense_layout::THREADS,
        crate::dense_layout::MIN_CTAS_PER_SM,
    ),
    (
        "decode_blocks_seek",
        crate::dense_layout::THREADS,
        crate::dense_layout::SEEK_CTAS_PER_SM,
    ),
    (
        "decode_blocks_seek_batch",
        crate::dense_layout::THREADS,
        crate::dense_layout::MIN_CTAS_PER_SM,
    ),
    (
        "rans_decode_slices",
        32 * crate::rans_launch::KERNEL_MAX_WARPS,
        crate::rans_launch::KERNEL_CTAS_PER_SM,
    ),
    (
        "rans_decode_slices_ctx",
        32 * crate::rans_launch::KERNEL_MAX_WARPS,
        crate::rans_launch::KERNEL_CTAS_PER_SM,
    ),
    (
        "rans_decode_slices_pack",
        32 * crate::rans_launch::KERNEL_MAX_WARPS,
        crate::rans_launch::KERNEL_CTAS_PER_SM,
    ),
    (
        "rans_decode_slices_pack_narrow",
        32 * crate::rans_launch::KERNEL_NARROW_WARPS,
        crate::rans_launch::KERNEL_CTAS_PER_SM,
    ),
    (
        "rans_decode_slices_two_bit",
        32 * crate::rans_launch::KERNEL_NARROW_WARPS,
        crate::rans_launch::KERNEL_CTAS_PER_SM,
    ),
    (
        "rans_decode_slices_pack_solo",
        32 * crate::rans_launch::KERNEL_SOLO_WARPS,
        1,
    ),
];

#[cfg(test)]
mod tests {
    /// Every bounded entry point is in the list, once; no name twice in the list.
    #[test]
    fn names_are_unique_and_bounds_name_entry_points() {
        let names = super::KERNEL_NAMES;
        assert_eq!(names.len(), 21);
        for (i, n) in names.iter().enumerate() {
            assert!(!names[..i].contains(n), "{n} twice");
        }
        for (n, _, _) in super::LAUNCH_BOUNDS {
            assert!(names.contains(&n), "{n} bounded but not an entry point");
        }
        assert_eq!(super::TEST_ONLY_KERNELS.len(), 5);
        assert!(super::TEST_ONLY_KERNELS.iter().all(|t| names.contains(t)));
    }
}
