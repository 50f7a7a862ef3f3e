//! The one place kernels are launched. Each function checks the buffer sizes its kernel relies
//! on, then launches; each `unsafe` states the invariant the kernel needs.

use super::{Ctx, Gpu, GpuError};
use crate::device::format::{CopyToken, LiteralRun};
use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};

/// Threads per block of the token kernels.
const TOKEN_BLOCK: u32 = 256;

/// Which match-copy kernel to run (issue 2's comparison).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyVariant {
    /// One thread per match, forward byte copy.
    ThreadPerMatch,
    /// One warp per match, period-aware fill.
    WarpPeriodAware,
    /// One warp per match, rounds of `min(dist, 32)` bytes with a warp barrier.
    WarpRounds,
}

fn grid_for(gpu: &Gpu, items: u64, per_block: u64) -> u32 {
    let want = items.div_ceil(per_block).max(1);
    want.min(gpu.sm_count() as u64 * 32) as u32
}

/// Copies every token of one dependency level into `out` (see `match_copy_warp`).
///
/// `tokens` holds `n` [`CopyToken`]s as bytes; `status` is one word, raised on a bad token.
pub fn match_copy(
    gpu: &Gpu,
    variant: CopyVariant,
    out: &mut CudaSlice<u8>,
    tokens: &CudaSlice<u8>,
    n: u32,
    status: &mut CudaSlice<u32>,
) -> Result<(), GpuError> {
    assert!(tokens.len() >= n as usize * std::mem::size_of::<CopyToken>(), "token buffer too small");
    assert!(!status.is_empty());
    if n == 0 {
        return Ok(());
    }
    let (f, per_block) = match variant {
        CopyVariant::ThreadPerMatch => (&gpu.k.match_copy_thread, TOKEN_BLOCK as u64),
        CopyVariant::WarpPeriodAware => (&gpu.k.match_copy_warp, TOKEN_BLOCK as u64 / 32),
        CopyVariant::WarpRounds => (&gpu.k.match_copy_warp_rounds, TOKEN_BLOCK as u64 / 32),
    };
    let cfg = LaunchConfig { grid_dim: (grid_for(gpu, n as u64, per_block), 1, 1), block_dim: (TOKEN_BLOCK, 1, 1), shared_mem_bytes: 0 };
    let out_len = out.len() as u64;
    let mut b = gpu.stream().launch_builder(f);
    b.arg(out).arg(&out_len).arg(tokens).arg(&n).arg(status);
    // SAFETY: argument order matches (out, out_len, tokens, n, status); `tokens` holds n tokens
    // (asserted), `out` holds out_len bytes and the kernel checks each token against it;
    // `status` holds at least one word.
    unsafe { b.launch(cfg) }.ctx("launching match_copy").map(|_| ())
}

/// Places literal runs: `out[r.dst..][..r.len] = lits[r.src..][..r.len]` for each run.
pub fn literal_scatter(
    gpu: &Gpu,
    out: &mut CudaSlice<u8>,
    lits: &CudaSlice<u8>,
    runs: &CudaSlice<u8>,
    n: u32,
    status: &mut CudaSlice<u32>,
) -> Result<(), GpuError> {
    assert!(runs.len() >= n as usize * std::mem::size_of::<LiteralRun>(), "run buffer too small");
    assert!(!status.is_empty());
    if n == 0 {
        return Ok(());
    }
    let cfg = LaunchConfig { grid_dim: (grid_for(gpu, n as u64, TOKEN_BLOCK as u64 / 32), 1, 1), block_dim: (TOKEN_BLOCK, 1, 1), shared_mem_bytes: 0 };
    let out_len = out.len() as u64;
    let lits_len = lits.len() as u64;
    let mut b = gpu.stream().launch_builder(&gpu.k.literal_scatter);
    b.arg(out).arg(&out_len).arg(lits).arg(&lits_len).arg(runs).arg(&n).arg(status);
    // SAFETY: argument order matches the kernel; `runs` holds n runs (asserted); the kernel
    // checks each run against out_len and lits_len; `status` holds at least one word.
    unsafe { b.launch(cfg) }.ctx("launching literal_scatter").map(|_| ())
}

/// Adds one to each word of `buf` (toolchain smoke test).
pub fn smoke_add_one(gpu: &Gpu, buf: &mut CudaSlice<u32>) -> Result<(), GpuError> {
    let n = buf.len() as u32;
    let cfg = LaunchConfig::for_num_elems(n.max(1));
    let mut b = gpu.stream().launch_builder(&gpu.k.smoke_add_one);
    b.arg(buf).arg(&n);
    // SAFETY: `buf` holds n words and the kernel touches indices < n only.
    unsafe { b.launch(cfg) }.ctx("launching smoke_add_one").map(|_| ())
}

/// Launches the lane-per-block decoder over every block of `ga` (independent blocks only).
pub fn decode_blocks_lane(
    gpu: &Gpu,
    ga: &super::decoder::GpuArchive,
    out: &mut CudaSlice<u8>,
    status: &mut CudaSlice<u32>,
) -> Result<(), GpuError> {
    assert!(out.len() as u64 >= ga.original_size, "output smaller than the original size");
    assert!(status.len() >= ga.n_blocks as usize, "one status word per block");
    if ga.n_blocks == 0 {
        return Ok(());
    }
    const THREADS: u32 = 128;
    let warps_per_cta = THREADS / 32;
    let want_warps = (ga.n_blocks as u64).min(gpu.sm_count() as u64 * 64);
    let grid = want_warps.div_ceil(warps_per_cta as u64) as u32;
    let total_warps = grid as usize * warps_per_cta as usize;
    let scratch_len = total_warps * crate::device::format::STREAM_COUNT * (ga.block_size as usize + 1);
    // SAFETY (alloc): the kernel writes scratch before reading it; no read of uninitialised
    // bytes reaches the output, which the status words and checksums guard.
    let mut scratch = unsafe { gpu.stream().alloc::<u8>(scratch_len) }.ctx("allocating decode scratch")?;
    let data_len = ga.data.len() as u64;
    let out_len = ga.original_size;
    let cfg = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (THREADS, 1, 1), shared_mem_bytes: 0 };
    let mut b = gpu.stream().launch_builder(&gpu.k.decode_blocks_lane);
    b.arg(&ga.data)
        .arg(&data_len)
        .arg(&ga.entries)
        .arg(&ga.offsets)
        .arg(&ga.n_blocks)
        .arg(&ga.tables)
        .arg(&ga.n_tables)
        .arg(&ga.table_index)
        .arg(&ga.group_blocks)
        .arg(&ga.block_size)
        .arg(&ga.window)
        .arg(&mut scratch)
        .arg(out)
        .arg(&out_len)
        .arg(status);
    // SAFETY: argument order matches `decode_blocks_lane`; entries/offsets hold n_blocks
    // items, tables n_tables, table_index group_count*4 words (GpuArchive::upload builds them
    // from a validated Archive); scratch holds total_warps*4*(block_size+1) bytes as the kernel
    // assumes; out holds >= original_size bytes (asserted); status one word per block.
    unsafe { b.launch(cfg) }.ctx("launching decode_blocks_lane").map(|_| ())
}
