//! The kernel entry points of `device/src/kernels.rs`, loaded once per [`super::Gpu`].

use super::{Ctx, GpuError};
use cudarc::driver::{CudaFunction, CudaModule};
use std::sync::Arc;

macro_rules! kernels {
    ($($name:ident),* $(,)?) => {
        /// Loaded kernel functions, one field per entry point of the device crate.
        pub struct Kernels { $(pub(crate) $name: CudaFunction,)* }
        /// Names of every entry point the host expects in the PTX.
        pub const ENTRY_POINTS: &[&str] = &[$(stringify!($name)),*];
        impl Kernels {
            pub(crate) fn load(m: &Arc<CudaModule>) -> Result<Kernels, GpuError> {
                Ok(Kernels { $($name: m.load_function(stringify!($name)).ctx(concat!("loading kernel ", stringify!($name)))?,)* })
            }
        }
    };
}

kernels!(
    smoke_add_one,
    match_copy_warp,
    match_copy_warp_rounds,
    match_copy_thread,
    literal_scatter,
    decode_blocks_lane,
    decode_blocks_dense,
    decode_blocks_dense_sc,
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
);
