//! The one place kernels are launched: each function checks the buffer sizes its kernel relies
//! on, then launches what `schedule.rs` decided (grids, entry points, orders, made at upload
//! and kept in the [`super::resident::GpuArchive`]); each `unsafe` states the invariant the
//! kernel needs.

use super::schedule::{self, RansEntry};
use super::{Ctx, Gpu, GpuError};
use crate::device::format::{CopyToken, LiteralRun, STREAM_COUNT};
use crate::device::handoff::QUEUE_FALLBACK;
use crate::device::params::{DenseParams, LaneParams, RansParams};
use crate::device::rans::KERNEL_SMEM_BYTES;
use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut, LaunchConfig, PushKernelArg};

/// Threads per block of the token kernels.
const TOKEN_BLOCK: u32 = 256;

/// Which match-copy kernel to run (the three are compared by `benches/gpu_copy.rs`).
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
    schedule::item_grid(items, per_block, gpu.sm_count())
}

/// The device address of `buf`, which the kernel writes, as a kernel parameter that may be
/// null (0).
fn addr<T>(gpu: &Gpu, buf: &mut impl DevicePtrMut<T>) -> u64 {
    // (event tracking is off, `Gpu::open`: the returned guard records nothing)
    buf.device_ptr_mut(gpu.stream()).0
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
    assert!(
        tokens.len() >= n as usize * std::mem::size_of::<CopyToken>(),
        "token buffer too small"
    );
    assert!(!status.is_empty());
    if n == 0 {
        return Ok(());
    }
    let (f, per_block) = match variant {
        CopyVariant::ThreadPerMatch => (&gpu.k.match_copy_thread, TOKEN_BLOCK as u64),
        CopyVariant::WarpPeriodAware => (&gpu.k.match_copy_warp, TOKEN_BLOCK as u64 / 32),
        CopyVariant::WarpRounds => (&gpu.k.match_copy_warp_rounds, TOKEN_BLOCK as u64 / 32),
    };
    let cfg = LaunchConfig {
        grid_dim: (grid_for(gpu, n as u64, per_block), 1, 1),
        block_dim: (TOKEN_BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    let out_len = out.len() as u64;
    let mut b = gpu.stream().launch_builder(f);
    b.arg(out).arg(&out_len).arg(tokens).arg(&n).arg(status);
    // SAFETY: argument order matches (out, out_len, tokens, n, status); `tokens` holds n tokens
    // (asserted), `out` holds out_len bytes and the kernel checks each token against it;
    // `status` holds at least one word.
    unsafe { b.launch(cfg) }
        .ctx("launching match_copy")
        .map(|_| ())
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
    assert!(
        runs.len() >= n as usize * std::mem::size_of::<LiteralRun>(),
        "run buffer too small"
    );
    assert!(!status.is_empty());
    if n == 0 {
        return Ok(());
    }
    let cfg = LaunchConfig {
        grid_dim: (grid_for(gpu, n as u64, TOKEN_BLOCK as u64 / 32), 1, 1),
        block_dim: (TOKEN_BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    let out_len = out.len() as u64;
    let lits_len = lits.len() as u64;
    let mut b = gpu.stream().launch_builder(&gpu.k.literal_scatter);
    b.arg(out)
        .arg(&out_len)
        .arg(lits)
        .arg(&lits_len)
        .arg(runs)
        .arg(&n)
        .arg(status);
    // SAFETY: argument order matches the kernel; `runs` holds n runs (asserted); the kernel
    // checks each run against out_len and lits_len; `status` holds at least one word.
    unsafe { b.launch(cfg) }
        .ctx("launching literal_scatter")
        .map(|_| ())
}

/// Adds one to each word of `buf` (toolchain smoke test).
pub fn smoke_add_one(gpu: &Gpu, buf: &mut CudaSlice<u32>) -> Result<(), GpuError> {
    let n = buf.len() as u32;
    let cfg = LaunchConfig::for_num_elems(n.max(1));
    let mut b = gpu.stream().launch_builder(&gpu.k.smoke_add_one);
    b.arg(buf).arg(&n);
    // SAFETY: `buf` holds n words and the kernel touches indices < n only.
    unsafe { b.launch(cfg) }
        .ctx("launching smoke_add_one")
        .map(|_| ())
}

/// The buffer sizes every block-decoder launch relies on (asserted: a caller bug, not bad
/// input); false when the archive has no block and nothing is to be launched.
pub(crate) fn has_blocks(
    ga: &super::resident::GpuArchive,
    out: &CudaSlice<u8>,
    status: &CudaSlice<u32>,
) -> bool {
    assert!(
        out.len() as u64 >= ga.original_size,
        "output smaller than the original size"
    );
    assert!(
        status.len() >= ga.n_blocks as usize,
        "one status word per block"
    );
    ga.n_blocks > 0
}

/// Launches the lane-per-block decoder over every block of `ga` (independent blocks only);
/// with `only_fallback`, the blocks the dense kernel before it on the stream left
/// (`Status::Fallback`; it returns at once when word 1 of `queue`, the archive's dense
/// queue, counts none). With `after_dense` (sm_90 and later, the dense kernel just before it
/// on the stream) a programmatic dependent launch, whose CTAs start while the dense kernel
/// runs and wait for it to complete (`griddepcontrol.wait`), so that its launch latency
/// does not follow the dense kernel's end.
pub(crate) fn decode_blocks_lane(
    gpu: &Gpu,
    ga: &super::resident::GpuArchive,
    out: &mut CudaSlice<u8>,
    status: &mut CudaSlice<u32>,
    queue: &CudaSlice<u32>,
    only_fallback: bool,
    after_dense: bool,
) -> Result<(), GpuError> {
    if !has_blocks(ga, out, status) {
        return Ok(());
    }
    const THREADS: u32 = schedule::LANE_THREADS;
    let grid = schedule::lane_grid(ga.n_blocks, ga.block_size, only_fallback, gpu.sm_count());
    let total_warps = grid as usize * (THREADS / 32) as usize;
    let scratch_len = total_warps * STREAM_COUNT * (ga.block_size as usize + 1);
    let mut guard = ga.lane_scratch.lock().unwrap_or_else(|e| e.into_inner());
    if guard.as_ref().is_none_or(|s| s.len() < scratch_len) {
        // SAFETY (alloc): the kernel writes scratch before reading it; no read of uninitialised
        // bytes reaches the output, which the status words and checksums guard.
        *guard = Some(
            unsafe { gpu.stream().alloc::<u8>(scratch_len) }.ctx("allocating decode scratch")?,
        );
    }
    let scratch = guard.as_mut().expect("allocated above");
    let data_len = ga.data_len;
    let out_len = ga.original_size;
    let only_fb = only_fallback as u32;
    // word 1 of the dense queue: the dense kernel's count of blocks it left to this kernel
    let fallbacks = queue.slice(QUEUE_FALLBACK..QUEUE_FALLBACK + 1);
    let cfg = LaunchConfig {
        grid_dim: (grid, 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    let stream = gpu.stream();
    let p = LaneParams {
        data: ga.data.device_ptr(stream).0,
        data_len,
        entries: ga.entries.device_ptr(stream).0,
        offsets: ga.offsets.device_ptr(stream).0,
        n_blocks: ga.n_blocks as u64,
        tables: ga.tables.device_ptr(stream).0,
        n_tables: ga.n_tables as u64,
        table_index: ga.table_index.device_ptr(stream).0,
        group_blocks: ga.group_blocks as u64,
        block_size: ga.block_size as u64,
        window: ga.window as u64,
        match_base: ga.match_base as u64,
        scratch: addr(gpu, scratch),
        out: addr(gpu, out),
        out_len,
        status: addr(gpu, status),
        only_fallback: only_fb as u64,
        fallbacks: fallbacks.device_ptr(stream).0,
        line_layouts: ga.line_layouts as u64,
    };
    // SAFETY: `p` is `decode_blocks_lane`'s parameter list (`LaneParams`, from the device
    // crate's one list); entries/offsets hold n_blocks
    // items, tables n_tables, table_index group_count*STREAM_COUNT words (GpuArchive::upload builds them
    // from a validated Archive); scratch holds total_warps*4*(block_size+1) bytes as the kernel
    // assumes; out holds >= original_size bytes (asserted); status one word per block;
    // fallbacks one word (of the queue's handoff::queue_words(n_blocks), GpuArchive::upload).
    // After the dense kernel (`after_dense`) a programmatic launch: the kernel waits for the
    // dense grid (`griddepcontrol.wait`) before it reads the fallback count.
    unsafe { launch_after(gpu, &gpu.k.decode_blocks_lane, cfg, params(&p), after_dense) }
        .ctx("launching decode_blocks_lane")
}

/// Raises the dynamic shared-memory limit of the kernels that use more than the default
/// 48 KiB (`Gpu::open`, once, before any launch or graph capture).
pub(crate) fn raise_shared_memory_limits(k: &super::kernels::Kernels) -> Result<(), GpuError> {
    use crate::device::dense_layout::SMEM_BYTES;
    let attr =
        cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
    k.decode_blocks_dense
        .set_attribute(attr, SMEM_BYTES as i32)
        .ctx("raising the dense kernel's shared-memory limit")?;
    // The rANS kernels prefer the most shared memory an SM can have (carveout 100 %), as
    // the dense kernel's four CTAs of ~56 KB need anyway: with the driver's choice, an SM
    // set up for a rANS CTA's shared memory takes no dense CTA until the rANS CTA is done,
    // and the dense CTAs parse their blocks beside the rANS stage (`dense/`,
    // `early_match_streams`).
    const CARVEOUT_PERCENT: i32 = 100;
    for f in [
        &k.decode_blocks_dense_sc,
        &k.decode_blocks_seek,
        &k.decode_blocks_seek_batch,
    ] {
        f.set_attribute(attr, SMEM_BYTES as i32)
            .ctx("raising the dense kernel's shared-memory limit")?;
    }
    for f in [
        &k.rans_decode_slices,
        &k.rans_decode_slices_ctx,
        &k.rans_decode_slices_pack,
        &k.rans_decode_slices_pack_narrow,
        &k.rans_decode_slices_two_bit,
        &k.rans_decode_slices_pack_solo,
    ] {
        f.set_attribute(attr, KERNEL_SMEM_BYTES as i32)
            .ctx("raising the rANS kernel's shared-memory limit")?;
        // a hint (the driver may take another split); a device that refuses it decodes the
        // same, only slower, so the error is not the caller's
        let _ = f.set_attribute(
            cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
            CARVEOUT_PERCENT,
        );
    }
    Ok(())
}

/// CTAs of the dense kernel one SM holds at once, by the driver's occupancy calculator (after
/// [`raise_shared_memory_limits`]); at least 1, so a launch always has a grid.
pub(crate) fn dense_ctas_per_sm(k: &super::kernels::Kernels) -> Result<u32, GpuError> {
    use crate::device::dense_layout::{SMEM_BYTES, THREADS};
    k.decode_blocks_dense
        .occupancy_max_active_blocks_per_multiprocessor(THREADS, SMEM_BYTES, None)
        .ctx("asking the dense kernel's occupancy")
        .map(|n| n.max(1))
}

/// Launches the dense full-pipe kernel over every block of `ga` (independent blocks only);
/// `stages` selects the stages run (`dense_layout::STAGES_ALL` to decode; fewer for the
/// stage-split benchmark). Blocks it cannot hold get `Status::Fallback`. Only right after
/// [`rans_decode_slices`] (or alone, with epoch 0: [`schedule::dense_alone`]) with the same `queue` (the archive's dense queue, locked by the
/// caller across both launches) and `epoch` on the same stream: that kernel zeroes the
/// words this one takes tickets from and counts fallbacks in (no memset between the two
/// launches) and publishes each block's streams (`device/src/handoff.rs`). With `overlap`
/// (sm_90 and later, [`Gpu::overlap`]) the launch is a programmatic dependent one: this
/// kernel's CTAs start once every CTA of the rANS stage has, and decode each block as soon
/// as its streams are published, in the archive's dense order
/// ([`schedule::dense_block_order`], longest first where
/// [`schedule::dense_order_longest_first`] says so); without `overlap` the blocks go in index
/// order (a null order).
/// `leave`: the rANS stage before it left the self-contained blocks
/// ([`schedule::leaves_self_contained`]): `decode_blocks_dense_sc` runs, which decodes them from the
/// data section.
#[allow(clippy::too_many_arguments)]
pub(crate) fn decode_blocks_dense(
    gpu: &Gpu,
    ga: &super::resident::GpuArchive,
    out: &mut CudaSlice<u8>,
    status: &mut CudaSlice<u32>,
    queue: &mut CudaSlice<u32>,
    epoch: u32,
    stages: u32,
    overlap: bool,
    leave: bool,
) -> Result<(), GpuError> {
    use crate::device::dense_layout::{SMEM_BYTES, THREADS};
    if !has_blocks(ga, out, status) {
        return Ok(());
    }
    // every CTA resident at once; CTA c decodes block order[c], then takes the next entry of
    // the order from the queue (blocks differ in cost: a fixed stride left some CTAs one
    // block more than others)
    let grid = schedule::dense_grid(ga.n_blocks, gpu.facts());
    // the queue's ticket word and its count of blocks left to the lane kernel
    // (`decode_blocks_lane` reads it), zeroed by the rANS kernel before this one
    // (`rans_decode_slices` with the queue), and the hand-off's epoch and ready words
    let out_len = ga.original_size;
    // (the rANS stage allocates the scratch, but a decode of the dense kernel alone has no
    // rANS launch: `schedule::dense_alone`; the kernel then reads no byte of it)
    ga.ensure_decoded(gpu)?;
    let guard = ga.decoded.lock().unwrap_or_else(|e| e.into_inner());
    let decoded = guard.as_ref().expect("ensure_decoded allocated it");
    let cfg = LaunchConfig {
        grid_dim: (grid, 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: SMEM_BYTES as u32,
    };
    let stream = gpu.stream();
    // the kernel's parameters: device addresses and scalars, each widened to u64
    let p = DenseParams {
        out: addr(gpu, out),
        out_len,
        status: addr(gpu, status),
        stages: stages as u64,
        queue: addr(gpu, queue),
        // (blocks in index order when the two kernels do not overlap)
        order: if overlap {
            ga.dense_order.device_ptr(stream).0
        } else {
            0
        },
        epoch: epoch as u64,
        n_order: ga.n_blocks as u64,
        ..dense_archive_params(gpu, ga, decoded.device_ptr(stream).0)
    };
    // SAFETY: `p` is `decode_blocks_dense`'s parameter list (`DenseParams`, from the device
    // crate's one list: u32 and u64 scalars, device addresses); `queue` holds
    // handoff::queue_words(n_blocks) words (GpuArchive::upload), handed over by the rANS
    // kernel launched just before this one on the same stream with the same epoch (the
    // caller's contract); `dense_order` holds every block once; `decoded` holds dec_len
    // bytes and dec_offsets STREAM_COUNT words per block, `data` the archive's data
    // section (data.len() bytes, its buffer padded with zeros to a multiple of 16, which
    // `decode_blocks_dense_sc` reads in aligned words: `Gpu::upload_padded16`) and `offsets` one data offset per block (GpuArchive::upload,
    // from a validated Archive); the kernel checks every stream range against dec_len and
    // every raw match-stream range it reads from the data section against its length; out holds
    // >= original_size bytes and status n_blocks words (asserted); SMEM_BYTES of dynamic
    // shared memory is what the kernel's layout (dense_layout.rs, shared with the kernel)
    // addresses, and the function's limit was raised to it.
    // (the entry point that decodes self-contained blocks itself exactly when the rANS stage
    // before it left them: the caller passes both launches one `leave`)
    let kernel = if leave {
        &gpu.k.decode_blocks_dense_sc
    } else {
        &gpu.k.decode_blocks_dense
    };
    unsafe { launch_after(gpu, kernel, cfg, params(&p), overlap) }
        .ctx("launching decode_blocks_dense")
}

/// The dense kernel's parameters that describe the resident archive (its buffers and header
/// values, with the decoded-stream scratch at `decoded`); the launch's own ones are 0.
fn dense_archive_params(gpu: &Gpu, ga: &super::resident::GpuArchive, decoded: u64) -> DenseParams {
    let stream = gpu.stream();
    DenseParams {
        decoded,
        dec_len: ga.decoded_len,
        dec_offsets: ga.dec_offsets.device_ptr(stream).0,
        data: ga.data.device_ptr(stream).0,
        data_len: ga.data_len,
        offsets: ga.offsets.device_ptr(stream).0,
        entries: ga.entries.device_ptr(stream).0,
        n_blocks: ga.n_blocks as u64,
        block_size: ga.block_size as u64,
        window: ga.window as u64,
        match_base: ga.match_base as u64,
        original_size: ga.original_size,
        line_layouts: ga.line_layouts as u64,
        ..DenseParams::default()
    }
}

/// The rANS stage's parameters that describe the resident archive (its buffers, tables and
/// the plan's staging, with the decoded-stream scratch at `decoded`); the launch's own ones
/// are 0.
fn rans_archive_params(gpu: &Gpu, ga: &super::resident::GpuArchive, decoded: u64) -> RansParams {
    let stream = gpu.stream();
    RansParams {
        data: ga.data.device_ptr(stream).0,
        data_len: ga.data_len,
        entries: ga.entries.device_ptr(stream).0,
        offsets: ga.offsets.device_ptr(stream).0,
        n_blocks: ga.n_blocks as u64,
        tables: ga.tables.device_ptr(stream).0,
        n_tables: ga.n_tables as u64,
        table_index: ga.table_index.device_ptr(stream).0,
        group_blocks: ga.group_blocks as u64,
        decoded,
        dec_len: ga.decoded_len,
        dec_offsets: ga.dec_offsets.device_ptr(stream).0,
        staged_tables: ga.rans.staged_tables as u64,
        stage_expand: ga.rans.stage_expand as u64,
        ..RansParams::default()
    }
}

/// A parameter struct of the device crate (`device/src/params.rs`: one `u64` per kernel
/// parameter, in order) as [`launch_after`]'s argument list.
fn params<P: bytemuck::Pod>(p: &P) -> &[u64] {
    bytemuck::cast_slice(std::slice::from_ref(p))
}

/// Launches `f` on the GPU's stream with `cfg` and the kernel arguments `args`, through
/// `cuLaunchKernelEx`; each argument is a `u32` or `u64` parameter (a device address, a size,
/// a count) widened to `u64`, of which the driver reads the parameter's own size (the low
/// bytes: this host is little-endian). With `programmatic` as a programmatic dependent launch
/// (`CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION`): its CTAs may start once every
/// CTA of the kernel before it on the stream has executed `griddepcontrol.launch_dependents`
/// or exited, so the kernel must wait for that one's results itself
/// (`device/src/handoff.rs`); should the driver refuse that launch, a plain one (the kernels
/// decode the same with it). Work queued after it still waits for both.
///
/// # Safety
/// `args` matches `f`'s parameter list (count, order, and each a 4- or 8-byte integer or
/// address) and every argument satisfies the kernel's contract; `cfg`'s dynamic shared
/// memory is within the function's limit.
unsafe fn launch_after(
    gpu: &Gpu,
    f: &cudarc::driver::CudaFunction,
    cfg: LaunchConfig,
    args: &[u64],
    programmatic: bool,
) -> Result<(), cudarc::driver::DriverError> {
    use cudarc::driver::sys;
    const _: () = assert!(cfg!(target_endian = "little"));
    gpu.context().bind_to_thread()?;
    let mut values = args.to_vec();
    let mut params: Vec<*mut std::ffi::c_void> = values
        .iter_mut()
        .map(|v| v as *mut u64 as *mut std::ffi::c_void)
        .collect();
    // SAFETY: a plain-data union of the driver's headers; all zero is a valid value of it.
    let mut attr: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
    attr.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attr.value.programmaticStreamSerializationAllowed = 1;
    let mut config = sys::CUlaunchConfig {
        gridDimX: cfg.grid_dim.0,
        gridDimY: cfg.grid_dim.1,
        gridDimZ: cfg.grid_dim.2,
        blockDimX: cfg.block_dim.0,
        blockDimY: cfg.block_dim.1,
        blockDimZ: cfg.block_dim.2,
        sharedMemBytes: cfg.shared_mem_bytes,
        hStream: gpu.stream().cu_stream(),
        attrs: &mut attr,
        numAttrs: programmatic as u32,
    };
    // SAFETY: the caller's contract for `args` and `cfg`; `params` points into `values`,
    // which, like `config` and `attr`, lives until the call returns (the driver copies the
    // arguments); the function handle is alive while `gpu` (its module) is.
    let mut launch = |config: &sys::CUlaunchConfig| {
        unsafe {
            sys::cuLaunchKernelEx(
                config,
                f.cu_function(),
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        }
        .result()
    };
    match launch(&config) {
        // a driver or setup that refuses the attribute: a plain launch, which the kernels'
        // hand-off also serves (their waits then find every word already published)
        Err(_) if programmatic => {
            config.numAttrs = 0;
            launch(&config)
        }
        r => r,
    }
}

/// The loaded function of a rANS entry point.
fn rans_function(e: RansEntry, k: &super::kernels::Kernels) -> &cudarc::driver::CudaFunction {
    match e {
        RansEntry::Plain => &k.rans_decode_slices,
        RansEntry::Context => &k.rans_decode_slices_ctx,
        RansEntry::Packed => &k.rans_decode_slices_pack,
        RansEntry::PackedNarrow => &k.rans_decode_slices_pack_narrow,
        RansEntry::PackedSolo => &k.rans_decode_slices_pack_solo,
        RansEntry::TwoBit => &k.rans_decode_slices_two_bit,
    }
}

/// Launches the rANS stage: every block's slices decoded into the archive's `decoded`
/// scratch, one warp per block (its slices' lanes packed into the warp; a pair of warps per
/// block for an archive with wide slices, `schedule::rans_halves`). Writes every
/// block's status word (0, or the first broken rule's status), so `status` needs no zeroing
/// first (a memset less per decode).
/// With `dense_queue` (the archive's queue, locked by the caller, and the decode's epoch,
/// never 0 nor the previous decode's) it also hands over to [`decode_blocks_dense`], which
/// must follow it on the stream: it zeroes the queue's ticket and fallback words and
/// publishes the epoch there and in each block's ready word once the block's streams and
/// status are written (`device/src/handoff.rs`). With `leave` ([`schedule::leaves_self_contained`],
/// the same answer the caller gives [`decode_blocks_dense`]) it writes nothing for the
/// blocks that kernel decodes from the data section alone (`dense/`, `self_contained`),
/// status and ready word included; when that is every block, its grid is one CTA that only
/// zeroes the queue and publishes the epoch.
pub(crate) fn rans_decode_slices(
    gpu: &Gpu,
    ga: &super::resident::GpuArchive,
    status: &mut CudaSlice<u32>,
    dense_queue: Option<(&mut CudaSlice<u32>, u32)>,
    leave: bool,
) -> Result<(), GpuError> {
    assert!(
        status.len() >= ga.n_blocks as usize,
        "one status word per block"
    );
    assert!(
        !leave || dense_queue.is_some() && ga.rans.entry.can_leave_self_contained(),
        "self-contained blocks left only to a dense kernel after an entry point that knows them"
    );
    // (the kernel writes every block's status word, 0 for a block without error)
    if ga.n_blocks == 0 {
        return Ok(());
    }
    ga.ensure_decoded(gpu)?;
    let mut guard = ga.decoded.lock().unwrap_or_else(|e| e.into_inner());
    let decoded = guard.as_mut().expect("ensure_decoded allocated it");
    // One warp (or pair of warps) per block: the CTA's blocks of a round are consecutive, of
    // one table group (`rans_chunks`), whose decode tables the CTA stages in shared memory
    // (in L1 they miss often enough to stall most steps).
    // (warps per CTA and the chunk order were chosen at upload: `rans_warps_per_cta` or
    // `rans_solo_blocks`, `rans_chunk_order`)
    let threads = 32 * ga.rans.warps_per_cta;
    // the context pairs' second tables staged too only where the archive has such pairs
    // (`KERNEL_STAGED_TABLES`: more shared memory leaves L1 less room)
    let smem = ga.rans.smem_bytes();
    // (the upload stages the pairs' second tables only where the pair slots leave room)
    assert!(
        smem as usize <= KERNEL_SMEM_BYTES,
        "rANS stage shared memory {smem} over its limit"
    );
    // CTAs the GPU holds at once, at most (`rans_grid`, the grid the order was laid out for
    // at upload): the kernel's loop takes the remaining chunks in the host's order (the
    // hardware's order of starting queued CTAs is not specified); with every block left to
    // the dense kernel, one CTA and no chunk (CTA 0 zeroes the queue, publishes the epoch)
    let (grid, n_chunks) = schedule::rans_launch_grid(
        ga.rans.grid,
        ga.rans_chunks,
        leave,
        ga.self_contained,
        ga.n_blocks,
    );
    let cfg = LaunchConfig {
        grid_dim: (grid, 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: smem,
    };
    let kernel = rans_function(ga.rans.entry, &gpu.k);
    let stream = gpu.stream();
    let (dense_queue, epoch) = dense_queue.map_or((0, 0), |(q, e)| (addr(gpu, q), e));
    let p = RansParams {
        status: addr(gpu, status),
        chunk_order: ga.rans_order.device_ptr(stream).0,
        n_chunks: n_chunks as u64,
        dense_queue,
        epoch: epoch as u64,
        halves: ga.rans.halves as u64,
        leave_self_contained: leave as u64,
        ..rans_archive_params(gpu, ga, addr(gpu, decoded))
    };
    // SAFETY: `p` is the rANS entry points' parameter list (`RansParams`, from the device
    // crate's one list); rans_order holds at least n_chunks
    // entries (n_chunks is 0 or all of them): the first block of every chunk of
    // `schedule::rans_chunks(n_blocks, group_blocks, blocks_per_chunk)` once, and RANS_NO_CHUNK,
    // which the kernel skips (with `leave`, the self-contained blocks' one writer is the
    // dense kernel that follows, which the caller launches with the same `leave`); with
    // 32 * warps_per_cta threads the kernel's rule (warp w decodes block r0 + w / halves if it
    // is in r0's group) picks exactly that chunk's blocks, so every block's slices and status
    // word have one writer (a pair of warps with halves 2, their status slots,
    // KERNEL_PAIR_BYTES, in the shared memory above); entries/offsets hold n_blocks items,
    // tables n_tables, table_index group_count*STREAM_COUNT words, dec_offsets STREAM_COUNT words per block, and
    // `decoded` dec_len bytes (GpuArchive::upload from a validated Archive); the kernel checks
    // every slice range against data_len and dec_len; status holds n_blocks words (asserted);
    // staged tables of PROB_SCALE words of dynamic shared memory, the tables the kernel
    // stages (STREAM_COUNT, or KERNEL_STAGED_TABLES with the pairs' seconds), and with
    // stage_expand set KERNEL_EXPAND_BYTES more for an expansion table: at most
    // KERNEL_SMEM_BYTES, the limit raised in `raise_shared_memory_limits`; dense_queue is 0
    // or the archive's dense queue (handoff::queue_words(n_blocks) words), which only the
    // dense and lane kernels after this one use, the dense kernel beside it only as
    // device/src/handoff.rs orders (the caller holds its lock across the three launches).
    unsafe { launch_after(gpu, kernel, cfg, params(&p), false) }.ctx("launching rans_decode_slices")
}

/// Threads per block of the wavefront kernels.
const WAVE_BLOCK: u32 = 256;

/// Launches `wave_parse` over blocks `list[first..first + count]` (one generation): one thread
/// per block. `args` holds one `WaveArgs` built by `host/gpu/wave.rs` from a validated archive.
pub(crate) fn wave_parse(
    gpu: &Gpu,
    args: &CudaSlice<u8>,
    list: &CudaSlice<u32>,
    first: usize,
    count: usize,
) -> Result<(), GpuError> {
    assert!(
        first + count <= list.len(),
        "generation outside the block list"
    );
    if count == 0 {
        return Ok(());
    }
    let view = list.slice(first..first + count);
    let n = count as u32;
    const THREADS: u32 = 64;
    let cfg = LaunchConfig {
        grid_dim: ((count as u32).div_ceil(THREADS), 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut b = gpu.stream().launch_builder(&gpu.k.wave_parse);
    b.arg(args).arg(&view).arg(&n);
    // SAFETY: argument order matches `wave_parse`; `args` holds a WaveArgs whose buffers were
    // sized from the archive's block table (host/gpu/wave.rs); the view holds n block indices
    // (asserted), and the kernel ignores any index >= n_blocks.
    unsafe { b.launch(cfg) }
        .ctx("launching wave_parse")
        .map(|_| ())
}

/// Launches `wave_scan` (one thread): level counts to offsets.
pub(crate) fn wave_scan(gpu: &Gpu, args: &CudaSlice<u8>) -> Result<(), GpuError> {
    let cfg = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (1, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut b = gpu.stream().launch_builder(&gpu.k.wave_scan);
    b.arg(args);
    // SAFETY: `args` holds a WaveArgs whose level arrays have n_waves + 2 words each.
    unsafe { b.launch(cfg) }
        .ctx("launching wave_scan")
        .map(|_| ())
}

/// Launches `wave_place`: one warp per block places literal runs and buckets matches.
pub(crate) fn wave_place(gpu: &Gpu, args: &CudaSlice<u8>, n_blocks: u32) -> Result<(), GpuError> {
    if n_blocks == 0 {
        return Ok(());
    }
    let cfg = LaunchConfig {
        grid_dim: (grid_for(gpu, n_blocks as u64, WAVE_BLOCK as u64 / 32), 1, 1),
        block_dim: (WAVE_BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut b = gpu.stream().launch_builder(&gpu.k.wave_place);
    b.arg(args);
    // SAFETY: `args` holds a WaveArgs built from a validated archive; the kernel bounds every
    // segment, literal and token index by the sizes in it.
    unsafe { b.launch(cfg) }
        .ctx("launching wave_place")
        .map(|_| ())
}

/// Launches `wave_copy` for one level: one warp per match of that level.
pub(crate) fn wave_copy(gpu: &Gpu, args: &CudaSlice<u8>, level: u32) -> Result<(), GpuError> {
    let cfg = LaunchConfig {
        grid_dim: (schedule::wave_copy_grid(gpu.sm_count()), 1, 1),
        block_dim: (WAVE_BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut b = gpu.stream().launch_builder(&gpu.k.wave_copy);
    b.arg(args).arg(&level);
    // SAFETY: `args` holds a WaveArgs built from a validated archive; the kernel reads the
    // level's token range from the offsets wave_scan wrote and checks every token against
    // out_len before copying.
    unsafe { b.launch(cfg) }
        .ctx("launching wave_copy")
        .map(|_| ())
}

/// Threads of a `seek_gather` CTA.
const GATHER_THREADS: u32 = 256;
/// Bytes of a range `seek_gather` gives a CTA when there are fewer ranges than CTAs: two
/// 4-byte words a thread, one round of loads.
const GATHER_PIECE: u64 = 2 * 4 * GATHER_THREADS as u64;

/// The buffers of one random-access read ([`super::seek`]), laid out by it: `order`
/// (`n_order` block indices, each once), `rans` (`n_rans` chunk starts of the rANS stage,
/// ascending, whose chunks of up to `chunk_blocks` blocks cover the blocks of the order not
/// decodable from the data section alone, `seek::plan`), `ranges` (`n_ranges`
/// [`SeekRange`]s) inside `req`, the slots, the per-block status words and the per-range
/// status words. The request and the range status words are device buffers, or for a small
/// request page-locked host memory the kernels reach through its device address (`seek`'s
/// zero-copy path: no copy in either direction).
pub(crate) struct SeekLaunch<'a> {
    /// The request's device address (`req_len` bytes: block order, rANS list, ranges).
    pub req: u64,
    pub req_len: u64,
    pub order_at: u64,
    pub n_order: u32,
    /// Where the take order starts (`n_order` positions in the order), if the request has
    /// one (`seek::Plan::takes_at`).
    pub takes_at: Option<u64>,
    pub rans_at: u64,
    pub n_rans: u32,
    pub chunk_blocks: u32,
    pub ranges_at: u64,
    pub n_ranges: u32,
    /// The ranges' bytes in all.
    pub range_bytes: u64,
    /// A direct request (`seek::Plan::direct`): the dense kernel writes the blocks to `out`
    /// and a status word pair per order position, and no gather runs.
    pub direct: bool,
    pub slots: &'a mut CudaSlice<u8>,
    pub status: &'a mut CudaSlice<u32>,
    /// The range status words' device address (`range_status_len` words).
    pub range_status: u64,
    pub range_status_len: u64,
}

/// Launches a random-access read's kernels on the stream: the rANS stage on the chunks that
/// cover the blocks that need it (one CTA per chunk of `chunk_blocks` blocks,
/// `seek::seek_chunk_blocks`: `32 * halves` threads a block), `decode_blocks_seek` (each
/// block of the order to its slot, its XXH3-64 checked on the device; beside the rANS stage
/// where the GPU allows it, waiting for each block's hand-off, `device/src/handoff.rs`;
/// `decode_blocks_seek_batch` for more blocks than that one's CTAs the GPU holds at once)
/// and `seek_gather` (the ranges to `out`, back to back from byte 0, and their status
/// words).
pub(crate) fn seek(
    gpu: &Gpu,
    ga: &super::resident::GpuArchive,
    l: SeekLaunch<'_>,
    out: &mut CudaSlice<u8>,
) -> Result<(), GpuError> {
    use crate::device::dense_layout::{MIN_CTAS_PER_SM, SEEK_CTAS_PER_SM, SMEM_BYTES, THREADS};
    use crate::device::params::SeekGatherParams;
    assert!(
        l.direct || l.slots.len() as u64 >= l.n_order as u64 * ga.block_size as u64,
        "a slot per block"
    );
    assert!(
        !l.direct || out.len() as u64 >= l.range_bytes,
        "a direct request's ranges inside the output"
    );
    assert!(
        !l.direct || l.range_status_len >= 2 * l.n_order as u64,
        "a direct request's status words: a pair per block of its order"
    );
    assert!(
        l.status.len() >= ga.n_blocks as usize,
        "a status word per block"
    );
    assert!(
        l.range_status_len >= 2 * l.n_ranges as u64,
        "two words per range"
    );
    let req_len = l.req_len;
    assert!(
        l.order_at + 4 * l.n_order as u64 <= req_len
            && l.takes_at
                .is_none_or(|t| t + 4 * l.n_order as u64 <= req_len)
            && l.rans_at + 4 * l.n_rans as u64 <= req_len
            && (l.direct || l.ranges_at + 32 * l.n_ranges as u64 <= req_len)
            && l.ranges_at.is_multiple_of(8),
        "request layout inside the request buffer"
    );
    if l.n_order == 0 {
        return Ok(());
    }
    let req = l.req;
    ga.ensure_decoded(gpu)?;
    let mut guard = ga.decoded.lock().unwrap_or_else(|e| e.into_inner());
    let decoded = guard.as_mut().expect("ensure_decoded allocated it");
    let decoded_ptr = addr(gpu, decoded);
    let status = addr(gpu, l.status);
    let slots = addr(gpu, l.slots);
    let cap = gpu.sm_count().max(1) * 16;
    let bs = ga.block_size as u64;
    // Self-contained blocks are the dense kernel's alone (the rANS stage leaves them where its
    // entry point can, `dense/rans.rs`): then the dense kernel runs beside the stage under a
    // fresh epoch and waits only for the blocks the stage decodes. (An entry point that would
    // decode them too writes their status words: the dense kernel then waits for its grid.)
    let leave = ga.rans.entry.can_leave_self_contained();
    let overlap = l.n_rans > 0 && leave && ga.overlaps(gpu);
    let epoch = if overlap { ga.next_epoch() } else { 0 };
    // the queue's ready words and counters, from the rANS launch (which zeroes the counters
    // and publishes the ready words) to the dense one
    let mut queue = ga.dense_queue.lock().unwrap_or_else(|e| e.into_inner());
    let queue_ptr = addr(gpu, &mut *queue);
    if l.n_rans > 0 {
        let halves = ga.rans.halves.max(1);
        let p = RansParams {
            status,
            chunk_order: req + l.rans_at,
            n_chunks: l.n_rans as u64,
            halves: halves as u64,
            // (with the overlap, the hand-off to the dense kernel under a fresh epoch)
            dense_queue: if overlap { queue_ptr } else { 0 },
            epoch: epoch as u64,
            leave_self_contained: leave as u64,
            ..rans_archive_params(gpu, ga, decoded_ptr)
        };
        // (within the entry point's launch bounds, `.maxntid`: a CTA of more threads is
        // refused; the narrow entry points hold 4 blocks of pairs of warps)
        let warps = halves * l.chunk_blocks;
        assert!(
            l.chunk_blocks >= 1 && warps <= super::seek::rans_max_warps(ga.rans.entry),
            "seek chunks of {} blocks over the rANS entry point's launch bounds",
            l.chunk_blocks
        );
        let cfg = LaunchConfig {
            grid_dim: (l.n_rans.min(cap), 1, 1),
            block_dim: (32 * warps, 1, 1),
            shared_mem_bytes: ga.rans.smem_bytes(),
        };
        // SAFETY: `p` is the rANS entry points' parameter list; the chunk order is the
        // request's n_rans ascending block indices below n_blocks, each a chunk's first
        // block, the chunks (chunk_blocks blocks from it within its table group, the CTA's
        // warps / halves, the plan's chunks, which `submit_locked` checked are the
        // archive's) not overlapping (`seek::plan`), so each block's slices and status word
        // have one writer (a block of a chunk not in the order is decoded into its own
        // scratch area and its status word, which nothing of this request reads; a
        // self-contained block is left to the dense kernel where `leave`, the entry point
        // that knows them); at most the entry point's launch-bound warps (asserted), which
        // also bound the pair slots (KERNEL_PAIR_BYTES holds KERNEL_SOLO_WARPS / 2 pairs);
        // the dense queue (locked) and a fresh epoch with the overlap, else none and epoch
        // 0; the other buffers are the archive's, as for `rans_decode_slices`, with its
        // shared memory (the plan's, within the raised limit).
        unsafe {
            launch_after(
                gpu,
                rans_function(ga.rans.entry, &gpu.k),
                cfg,
                params(&p),
                false,
            )
        }
        .ctx("launching the seek's rANS stage")?;
    }
    // a direct request's blocks go straight to the output, with their ranges' status words
    let (dense_out, dense_out_len, range_status) = match l.direct {
        true => (addr(gpu, out), out.len() as u64, l.range_status),
        false => (slots, l.slots.len() as u64, 0),
    };
    let p = DenseParams {
        out: dense_out,
        out_len: dense_out_len,
        status,
        stages: crate::device::dense_layout::STAGES_ALL as u64,
        queue: queue_ptr,
        order: req + l.order_at,
        epoch: epoch as u64,
        n_order: l.n_order as u64,
        takes: l.takes_at.map_or(0, |t| req + t),
        range_status,
        ..dense_archive_params(gpu, ga, decoded_ptr)
    };
    // the two-CTA entry point for what its CTAs take in one round, else the four-CTA one
    let sms = gpu.sm_count().max(1);
    let (kernel, per_sm) = if l.n_order <= sms * SEEK_CTAS_PER_SM {
        (&gpu.k.decode_blocks_seek, SEEK_CTAS_PER_SM)
    } else {
        (&gpu.k.decode_blocks_seek_batch, MIN_CTAS_PER_SM)
    };
    let cfg = LaunchConfig {
        grid_dim: (l.n_order.min(sms * per_sm), 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: SMEM_BYTES as u32,
    };
    // SAFETY: `p` is the dense parameter list (`decode_blocks_seek`'s contract, both entry
    // points'): the order is n_order block indices below n_blocks, each once (a direct
    // request's in request order, where one may recur), the take order (where there is one)
    // n_order positions, each once (`seek::plan`), and the slots hold n_order * block_size
    // bytes (asserted), or for a direct request the output holds its ranges, whole blocks
    // at block_size steps (`seek::plan`; its length asserted), and the status words 2 *
    // n_order (asserted); every block not decodable from the data section alone has its
    // streams and status written by the rANS launch above on the same stream (`seek::plan`
    // puts exactly those in the rANS list), which with a non-zero epoch (a fresh one, with
    // the queue locked across both launches) publishes each one's ready word, and otherwise
    // completes before this kernel reads anything; no queue ticket is taken; the other
    // buffers are the archive's as for `decode_blocks_dense`.
    // (after the rANS stage a programmatic launch: the kernel's CTAs start while that grid
    // runs; nothing to overlap without)
    unsafe { launch_after(gpu, kernel, cfg, params(&p), gpu.overlap() && l.n_rans > 0) }
        .ctx("launching decode_blocks_seek")?;
    drop(queue);
    if l.direct {
        return Ok(());
    }
    let p = SeekGatherParams {
        slots,
        block_size: bs,
        ranges: req + l.ranges_at,
        n_ranges: l.n_ranges as u64,
        status,
        out: addr(gpu, out),
        out_len: out.len() as u64,
        range_status: l.range_status,
    };
    // fewer ranges than the cap are cut into pieces of about GATHER_PIECE bytes, a CTA each
    // (`seek_gather`), so that one long range is not copied by one CTA's chain of loads
    let pieces = if l.n_ranges < cap {
        (l.range_bytes / l.n_ranges.max(1) as u64 / GATHER_PIECE)
            .clamp(1, (cap / l.n_ranges.max(1)) as u64) as u32
    } else {
        1
    };
    let cfg = LaunchConfig {
        grid_dim: ((l.n_ranges * pieces).clamp(1, cap), 1, 1),
        block_dim: (GATHER_THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: `seek_gather`'s contract: `seek::plan` gave every range its blocks in
    // consecutive slots from first_slot (the order is sorted and each range's blocks are in
    // it) and out_at + len <= the sum of the lengths <= out.len() (checked by the kernel
    // too); a status word per block; two words per range (asserted).
    // (a programmatic launch: its CTAs start while the dense kernel runs, which lets them
    // from its start, and wait for its grid before they read a slot or status word)
    unsafe { launch_after(gpu, &gpu.k.seek_gather, cfg, params(&p), gpu.overlap()) }
        .ctx("launching seek_gather")
}
