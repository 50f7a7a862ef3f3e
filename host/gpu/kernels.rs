//! The kernel entry points of the device crate, loaded once per [`super::Gpu`]; their names
//! come from the device crate's one list (`device/src/kernel_names.rs`,
//! [`crate::device::with_kernel_names`]).

use super::{Ctx, GpuError};
use cudarc::driver::{CudaFunction, CudaModule};
use std::sync::Arc;

macro_rules! kernels {
    (test_only: $($t:ident),* ; decode: $($d:ident),*) => {
        kernels!(@ $($t,)* $($d),*);
    };
    (@ $($name:ident),* $(,)?) => {
        /// Loaded kernel functions, one field per entry point of the device crate.
        pub struct Kernels { $(pub(crate) $name: CudaFunction,)* }
        impl Kernels {
            pub(crate) fn load(m: &Arc<CudaModule>) -> Result<Kernels, GpuError> {
                Ok(Kernels { $($name: m.load_function(stringify!($name)).ctx(concat!("loading kernel ", stringify!($name)))?,)* })
            }
        }
    };
}

crate::device::with_kernel_names!(kernels);

/// Names of every entry point the host expects in the PTX.
pub const ENTRY_POINTS: &[&str] = crate::device::kernel_names::KERNEL_NAMES;
