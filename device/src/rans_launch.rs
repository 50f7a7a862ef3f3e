//! Launch bounds of the GPU rANS stage (`rans_decode_slices` in `dense/`), plain `const`
//! items so that `build.rs` can compile this file as a module too: it writes them into the
//! kernel's PTX as `.maxntid` and `.minnctapersm`, which makes `ptxas` keep the kernel within
//! the registers that [`KERNEL_CTAS_PER_SM`] CTAs of [`KERNEL_MAX_WARPS`] warps need (64 per
//! thread). Re-exported by [`crate::rans`].

/// Most warps per CTA of the GPU rANS stage's usual grid (`rans_decode_slices` in `dense/`):
/// each warp decodes one block per round, and a CTA's blocks of a round are consecutive, of
/// one table group (`gpu::schedule::rans_chunks`). The host
/// takes 8, or 16 for archives whose blocks would need a second round of 8-warp CTAs
/// (`gpu::schedule::rans_warps_per_cta`).
pub const KERNEL_MAX_WARPS: u32 = 16;

/// CTAs of the GPU rANS stage one SM holds: `crate::rans::KERNEL_SMEM_BYTES` of shared
/// memory each, and (PTX launch bounds, `build.rs`) at most 64 registers per thread at
/// [`KERNEL_MAX_WARPS`] warps: with more, an SM holds one 16-warp CTA instead of two
/// (measured slower: see docs/PERFORMANCE.md).
pub const KERNEL_CTAS_PER_SM: u32 = 2;

/// Most warps per CTA of `rans_decode_slices_pack_narrow`, the packed-literal kernel for
/// launches of at most this many warps (`gpu::schedule::rans_warps_per_cta` takes 8 for
/// archives of up to ~2,100 blocks): its launch bounds (`.maxntid 256`, two CTAs per SM)
/// leave `ptxas` the registers its packed step wants (no spills), where the bounds of
/// [`KERNEL_MAX_WARPS`] warps hold it to 64 and it spills (measured slower: see
/// docs/PERFORMANCE.md).
pub const KERNEL_NARROW_WARPS: u32 = 8;

/// Most warps per CTA of `rans_decode_slices_pack_solo`, the packed-literal kernel for grids of
/// at most one CTA per SM (`gpu::schedule::rans_solo_blocks`): where two 16-warp CTAs on some
/// SMs and one on the others would leave the stage waiting for the doubled SMs, one CTA of
/// up to this many warps per SM spreads the blocks evenly. Its launch bounds (`.maxntid 768`,
/// one CTA per SM) leave `ptxas` up to 80 registers a thread, which its packed step with the
/// word load first (`LATE`) takes without spilling; under the 64 registers of the 16-warp
/// kernels such CTAs decoded slower than the usual grid (see docs/PERFORMANCE.md).
pub const KERNEL_SOLO_WARPS: u32 = 24;
