//! The one place kernels are launched. Each function checks the buffer sizes its kernel relies
//! on, then launches; each `unsafe` states the invariant the kernel needs.

use super::decoder::RansKernel;
use super::{Ctx, Gpu, GpuError};
use crate::device::format::{CopyToken, DecodeTable, LiteralRun, STREAM_COUNT};
use crate::device::handoff::QUEUE_FALLBACK;
use crate::device::rans::{
    KERNEL_CTAS_PER_SM, KERNEL_EXPAND_BYTES, KERNEL_MAX_WARPS, KERNEL_PAIR_BYTES,
    KERNEL_SMEM_BYTES, KERNEL_SOLO_WARPS,
};
use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut, LaunchConfig, PushKernelArg};

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
    ga: &super::decoder::GpuArchive,
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
    ga: &super::decoder::GpuArchive,
    out: &mut CudaSlice<u8>,
    status: &mut CudaSlice<u32>,
    queue: &CudaSlice<u32>,
    only_fallback: bool,
    after_dense: bool,
) -> Result<(), GpuError> {
    if !has_blocks(ga, out, status) {
        return Ok(());
    }
    const THREADS: u32 = 128;
    let warps_per_cta = THREADS / 32;
    // after a dense decode of blocks it takes, which leaves few to this kernel and usually
    // none (the kernel then returns at once: a launch of a few CTAs costs less than one of
    // thousands), eight warps per SM; blocks larger than the dense kernel takes all fall back
    use crate::device::dense_layout::DENSE_MAX_BLOCK;
    let per_sm = if only_fallback && ga.block_size <= DENSE_MAX_BLOCK {
        8
    } else {
        64
    };
    let want_warps = (ga.n_blocks as u64).min(gpu.sm_count() as u64 * per_sm);
    let grid = want_warps.div_ceil(warps_per_cta as u64) as u32;
    let total_warps = grid as usize * warps_per_cta as usize;
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
    let args = [
        ga.data.device_ptr(stream).0,
        data_len,
        ga.entries.device_ptr(stream).0,
        ga.offsets.device_ptr(stream).0,
        ga.n_blocks as u64,
        ga.tables.device_ptr(stream).0,
        ga.n_tables as u64,
        ga.table_index.device_ptr(stream).0,
        ga.group_blocks as u64,
        ga.block_size as u64,
        ga.window as u64,
        ga.match_base as u64,
        addr(gpu, scratch),
        addr(gpu, out),
        out_len,
        addr(gpu, status),
        only_fb as u64,
        fallbacks.device_ptr(stream).0,
    ];
    // SAFETY: the arguments match `decode_blocks_lane`'s list in order and kind; entries/offsets hold n_blocks
    // items, tables n_tables, table_index group_count*STREAM_COUNT words (GpuArchive::upload builds them
    // from a validated Archive); scratch holds total_warps*4*(block_size+1) bytes as the kernel
    // assumes; out holds >= original_size bytes (asserted); status one word per block;
    // fallbacks one word (of the queue's handoff::queue_words(n_blocks), GpuArchive::upload).
    // After the dense kernel (`after_dense`) a programmatic launch: the kernel waits for the
    // dense grid (`griddepcontrol.wait`) before it reads the fallback count.
    unsafe { launch_after(gpu, &gpu.k.decode_blocks_lane, cfg, &args, after_dense) }
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
    // set up for a rANS CTA's shared memory took no dense CTA until the rANS CTA was done,
    // and the dense CTAs parse their blocks beside the rANS stage (`dense.rs`,
    // `early_match_streams`).
    // Measured (PERFORMANCE.md twenty-ninth session, with the early parse): E. coli 88-93
    // -> 114-116 GB/s (every dense CTA resident from the start, against a tenth or more
    // waiting for the rANS CTAs), the rANS stage alone unchanged.
    // `ACEAPEX_GPU_RANS_CARVEOUT=P` sets P percent instead, -1 the driver's choice.
    // (a value that is neither -1 nor 0..=100 is ignored: the default)
    let carveout = match std::env::var("ACEAPEX_GPU_RANS_CARVEOUT").as_deref() {
        Ok("-1") => None,
        Ok(v) => Some(
            v.parse::<i32>()
                .ok()
                .filter(|v| (0..=100).contains(v))
                .unwrap_or(100),
        ),
        Err(_) => Some(100),
    };
    k.decode_blocks_dense_sc
        .set_attribute(attr, SMEM_BYTES as i32)
        .ctx("raising the dense kernel's shared-memory limit")?;
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
        if let Some(c) = carveout {
            // a hint (the driver may take another split); a device that refuses it decodes
            // the same, only slower, so the error is not the caller's
            let _ = f.set_attribute(
                cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
                c,
            );
        }
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
/// [`rans_decode_slices`] (or alone, with epoch 0: [`dense_alone`]) with the same `queue` (the archive's dense queue, locked by the
/// caller across both launches) and `epoch` on the same stream: that kernel zeroes the
/// words this one takes tickets from and counts fallbacks in (no memset between the two
/// launches) and publishes each block's streams (`device/src/handoff.rs`). With `overlap`
/// (sm_90 and later, [`Gpu::overlap`]) the launch is a programmatic dependent one: this
/// kernel's CTAs start once every CTA of the rANS stage has, and decode each block as soon
/// as its streams are published, in the archive's dense order ([`dense_block_order`], longest
/// first where [`dense_order_longest_first`] says so); without `overlap` the blocks go in
/// index order (a null order), so neither order nor `ACEAPEX_GPU_DENSE_ORDER` applies.
/// `leave`: the rANS stage before it left the self-contained blocks
/// ([`leaves_self_contained`]): `decode_blocks_dense_sc` runs, which decodes them from the
/// data section.
#[allow(clippy::too_many_arguments)]
pub(crate) fn decode_blocks_dense(
    gpu: &Gpu,
    ga: &super::decoder::GpuArchive,
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
    let grid = dense_grid(gpu, ga);
    // the queue's ticket word and its count of blocks left to the lane kernel
    // (`decode_blocks_lane` reads it), zeroed by the rANS kernel before this one
    // (`rans_decode_slices` with the queue), and the hand-off's epoch and ready words
    let out_len = ga.original_size;
    // (the rANS stage allocates the scratch, but a decode of the dense kernel alone has no
    // rANS launch: `dense_alone`; the kernel then reads no byte of it)
    ga.ensure_decoded(gpu)?;
    let guard = ga.decoded.lock().unwrap_or_else(|e| e.into_inner());
    let decoded = guard.as_ref().expect("ensure_decoded allocated it");
    let dec_len = ga.decoded_len;
    let cfg = LaunchConfig {
        grid_dim: (grid, 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: SMEM_BYTES as u32,
    };
    let stream = gpu.stream();
    // the kernel's parameters in order: device addresses and scalars, each widened to u64
    let args = [
        decoded.device_ptr(stream).0,
        dec_len,
        ga.dec_offsets.device_ptr(stream).0,
        ga.data.device_ptr(stream).0,
        ga.data_len,
        ga.offsets.device_ptr(stream).0,
        ga.entries.device_ptr(stream).0,
        ga.n_blocks as u64,
        ga.block_size as u64,
        ga.window as u64,
        ga.match_base as u64,
        addr(gpu, out),
        out_len,
        addr(gpu, status),
        // (`ACEAPEX_GPU_EARLY_PARSE=0`: no block parsed before its hand-off, for A/B runs)
        (stages | early_parse_off()) as u64,
        addr(gpu, queue),
        // (blocks in index order when the two kernels do not overlap)
        if overlap {
            ga.dense_order.device_ptr(stream).0
        } else {
            0
        },
        epoch as u64,
    ];
    // SAFETY: the arguments match `decode_blocks_dense`'s list in order and kind (u32 and
    // u64 scalars, device addresses); `queue` holds
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
    unsafe { launch_after(gpu, kernel, cfg, &args, overlap) }.ctx("launching decode_blocks_dense")
}

/// [`crate::device::dense_layout::STAGE_LATE_PARSE`] when `ACEAPEX_GPU_EARLY_PARSE=0` (read
/// once), else 0: the dense kernel then parses every block after its hand-off.
fn early_parse_off() -> u32 {
    static OFF: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if *OFF.get_or_init(|| std::env::var("ACEAPEX_GPU_EARLY_PARSE").as_deref() == Ok("0")) {
        crate::device::dense_layout::STAGE_LATE_PARSE
    } else {
        0
    }
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

/// The order in which the dense kernel takes the blocks (`decode_blocks_dense`'s `order`):
/// every block once, by the time the rANS stage is expected to publish it. The stage's CTA
/// `c` of `grid` takes the chunks that start at `chunk_order[c], chunk_order[c + grid], ...`
/// (`chunks`, [`rans_chunks`], in [`rans_chunk_order`]), one after the other; a block is
/// expected at its chunk's start plus its own [`rans_block_steps`], a chunk starts when the
/// CTA's previous chunk's longest block is done plus [`CHUNK_START_STEPS`]. Ties by block index. With the
/// two kernels overlapping, a dense CTA that took a block the stage has not published yet
/// waits for it (`device/src/handoff.rs`), so the better this order, the less they wait;
/// any order decodes the same bytes.
pub fn dense_block_order(
    entries: &[crate::device::format::BlockEntry],
    literal_width: impl Fn(usize) -> u32,
    chunks: &[(u32, u32)],
    grid: u32,
    chunk_order: &[u32],
) -> Vec<u32> {
    let grid = grid.max(1) as usize;
    let n = entries.len() as u64;
    let mut due = vec![0u64; entries.len()];
    let mut clock = vec![0u64; grid];
    for (slot, &r0) in chunk_order.iter().enumerate() {
        // the chunk that starts at r0 (`chunks` is in block order)
        let Ok(k) = chunks.binary_search_by_key(&r0, |c| c.0) else {
            continue;
        };
        let (r0, len) = (r0 as u64, chunks[k].1 as u64);
        let t0 = clock[slot % grid] + CHUNK_START_STEPS;
        let mut longest = 0u64;
        for b in r0..(r0 + len).min(n) {
            let steps = rans_block_steps(&entries[b as usize], literal_width(b as usize)) as u64;
            due[b as usize] = t0 + steps;
            longest = longest.max(steps);
        }
        clock[slot % grid] = t0 + longest;
    }
    let mut order: Vec<u32> = (0..entries.len() as u32).collect();
    order.sort_by_key(|&b| (due[b as usize], b));
    order
}

/// `order` ([`dense_block_order`]'s) with the blocks of more command bytes first, ties
/// kept in `order`: the dense kernel's longest blocks first, so that the last ones its CTAs
/// take from the queue are short and the CTAs finish together. A block's command bytes (one
/// per literal run or match, and their varints) are what its parse and fill steps grow with.
/// Measured against `order` alone (PERFORMANCE.md twenty-third session, runs 4-5): TAIR10
/// +9 %, dm3 +9 %, P. falciparum +3 %, hs37 +2 %; but ce2 -4 % and brown -2.5 %, whose rANS
/// grids leave most SMs one rANS CTA and room for two dense CTAs beside it, which then work
/// through the blocks as the stage publishes them: there the expected-finish order is
/// kept ([`dense_order_longest_first`]).
pub fn dense_longest_first(
    entries: &[crate::device::format::BlockEntry],
    mut order: Vec<u32>,
) -> Vec<u32> {
    use crate::device::format::STREAM_COMMANDS;
    order.sort_by_key(|&b| std::cmp::Reverse(entries[b as usize].decoded_len[STREAM_COMMANDS]));
    order
}

/// Whether the dense kernel takes its blocks longest first ([`dense_longest_first`]) for a
/// rANS stage of `rans_chunks` chunks (one CTA's blocks each) on `sms` SMs: yes when the
/// chunks outnumber the SMs by over an eighth, no below. An SM that runs two rANS CTAs has
/// room for one dense CTA beside them, one that runs a single rANS CTA for two, and those
/// work through the blocks as the stage publishes them; the more SMs hold two rANS CTAs,
/// the more of the dense work runs after the stage, where its tail is what the order
/// shortens. The threshold is measured, not derived (runs 4-6: ce2, 138 chunks of 8 blocks on
/// 132 SMs, -4 % longest first; dm3, 165, +9 %). A `solo` grid ([`rans_solo_blocks`]: one
/// CTA of up to 24 warps at 80 registers per SM) leaves an SM that runs it little room for a
/// dense CTA (none from 20 warps up), so its dense work runs mostly after the stage: longest
/// first (PERFORMANCE.md twenty-seventh session, runs 2-3: dm3's 22-warp CTAs 198-211 ->
/// 210-214 GB/s, a 12 MB prefix of dm3 with 12-warp CTAs 140-142 -> 143-144, the others
/// level).
pub fn dense_order_longest_first(rans_chunks: u64, sms: u32, solo: bool) -> bool {
    solo || rans_chunks > sms as u64 + sms as u64 / 8
}

/// What [`dense_block_order`] charges a rANS CTA for starting a chunk (staging its decode
/// tables), in steps of a chain: ~2 us of table staging at ~0.23 us per step (PERFORMANCE.md
/// nineteenth session). Only the order depends on it.
pub const CHUNK_START_STEPS: u64 = 8;

/// Warps per CTA of the rANS stage's usual grid for `n_blocks` blocks of `halves` warps each
/// ([`rans_halves`]: 2 with wide slices) on `sms` SMs: 8, or
/// [`KERNEL_MAX_WARPS`] when 8-warp CTAs would need a second round at
/// [`KERNEL_CTAS_PER_SM`] CTAs per SM. Measured (PERFORMANCE.md seventh session, run 10):
/// 8 rather than 16 gains 2-4 % on archives of under ~2,100 blocks (E. coli, brown,
/// moby_dick), 2 or 4 gain nothing more, and a second round costs ~40 % of the stage
/// (gcide at 8: rANS 0.125 -> 0.20 ms).
pub(crate) fn rans_warps_per_cta(n_blocks: usize, halves: u32, sms: u32) -> u32 {
    let n_warps = n_blocks as u64 * halves.max(1) as u64;
    let slots = sms as u64 * KERNEL_CTAS_PER_SM as u64;
    if n_warps.div_ceil(8) > slots {
        KERNEL_MAX_WARPS
    } else {
        8
    }
}

/// Warps of the rANS stage per block: 2 when some block has a wide slice (more than 32 lanes,
/// FORMAT.md §5.4), which a pair of warps decodes side by side, half its lanes each
/// (`dense.rs`, `rans_stage`); 1 otherwise.
pub fn rans_halves(entries: &[crate::device::format::BlockEntry]) -> u32 {
    if entries.iter().any(|e| e.has_wide_slice()) {
        2
    } else {
        1
    }
}

/// Steps of the rANS stage's warp on block `e`: its raw slices first, copied by the whole
/// warp, `ceil(decoded / (32 * RAW_COPY_UNROLL))` each (`RAW_COPY_UNROLL` bytes per lane per
/// memory latency; its tail takes up to 3 more, an estimate for the order only), then its
/// rANS slices in rounds of at most 32 lanes, or one wide slice (its half on each of the
/// block's two warps) ([`crate::device::rans::warp_steps`], the
/// kernel's rounds), each round as long as its slowest slice, `ceil(symbols / lanes)`.
/// A rANS slice's symbols are its decoded bytes, but `ceil(decoded / literal_width)` for the
/// literals of a group with a packed literal table (FORMAT.md §5.6,
/// [`crate::archive::Archive::literal_width`]). With one block per warp and all blocks in
/// flight, the stage takes at least the longest block's steps times the latency of one step
/// (PERFORMANCE.md eighth session).
pub fn rans_block_steps(e: &crate::device::format::BlockEntry, literal_width: u32) -> u32 {
    rans_block_steps_split(e, literal_width, 1)
}

/// [`rans_block_steps`] if `parts` warps shared block `e`: its rANS rounds as
/// [`crate::device::rans::warp_part_steps`] deals them, its raw slices copied by the last
/// warp; the block's chain is its longest warp's. A model for `examples/rans_chains.rs` (no
/// kernel runs it yet; PERFORMANCE.md nineteenth session). `parts` 0 is taken as 1.
pub fn rans_block_steps_split(
    e: &crate::device::format::BlockEntry,
    literal_width: u32,
    parts: u32,
) -> u32 {
    use crate::device::format::{LANES_RAW, LANES_TWO_BIT, STREAM_LITERALS};
    let parts = parts.max(1);
    let mut raw = 0u32;
    let mut symbols = [0u32; STREAM_COUNT];
    let mut lanes = [0u32; STREAM_COUNT];
    for k in 0..STREAM_COUNT {
        if e.lanes[k] == LANES_RAW {
            raw += e.decoded_len[k].div_ceil(32 * crate::device::rans::RAW_COPY_UNROLL as u32);
            continue;
        }
        if e.lanes[k] == LANES_TWO_BIT {
            // expanded, not decoded (FORMAT.md §5.7): its codes' bytes, like a raw slice's
            raw += e.stored_len[k].div_ceil(32 * crate::device::rans::RAW_COPY_UNROLL as u32);
            continue;
        }
        let width = if k == STREAM_LITERALS {
            literal_width.max(1)
        } else {
            1
        };
        symbols[k] = e.decoded_len[k].div_ceil(width);
        lanes[k] = e.lanes[k] as u32;
    }
    let steps = crate::device::rans::warp_part_steps(symbols, lanes, parts);
    // the last warp's rounds (none when parts > STREAM_COUNT) and the raw copies
    let last = steps.get(parts as usize - 1).copied().unwrap_or(0);
    (raw + last).max(steps.into_iter().max().unwrap_or(0))
}

/// CTAs of the rANS stage's grid for `n_chunks` chunks on `sms` SMs: as many as the GPU
/// holds at once ([`KERNEL_CTAS_PER_SM`] per SM), at most one per chunk, at least 1.
pub fn rans_grid(n_chunks: usize, sms: u32) -> u32 {
    rans_grid_per_sm(n_chunks, sms, KERNEL_CTAS_PER_SM)
}

/// [`rans_grid`] for `per_sm` CTAs per SM (smaller CTAs fit more; benchmarks:
/// `ACEAPEX_GPU_RANS_CTAS_PER_SM`).
pub fn rans_grid_per_sm(n_chunks: usize, sms: u32, per_sm: u32) -> u32 {
    (n_chunks as u64)
        .min(sms as u64 * per_sm.max(1) as u64)
        .max(1) as u32
}

/// A chunk index the rANS stage skips ([`rans_chunk_order`] pads its last round with it).
pub const RANS_NO_CHUNK: u32 = u32::MAX;

/// The rANS stage's chunks for `n_blocks` blocks in table groups of `group_blocks`, as
/// (first block, blocks): each group cut into runs of `bpc` consecutive blocks from its first
/// block on, the last run of a group shorter where `bpc` does not divide it. A chunk never
/// crosses a group, so the CTA that takes it stages one group's tables and every warp reads
/// them there (`dense.rs`, `rans_decode_slices`). In block order; `bpc` and `group_blocks` 0
/// are taken as 1.
pub fn rans_chunks(n_blocks: usize, group_blocks: u32, bpc: u32) -> Vec<(u32, u32)> {
    let (g, bpc) = (group_blocks.max(1) as usize, bpc.max(1) as usize);
    let mut out = Vec::with_capacity(rans_chunk_count(n_blocks, group_blocks, bpc as u32));
    for g0 in (0..n_blocks).step_by(g) {
        let g1 = (g0 + g).min(n_blocks);
        for r0 in (g0..g1).step_by(bpc) {
            out.push((r0 as u32, (g1 - r0).min(bpc) as u32));
        }
    }
    out
}

/// How many chunks [`rans_chunks`] cuts (without making them).
pub fn rans_chunk_count(n_blocks: usize, group_blocks: u32, bpc: u32) -> usize {
    let (g, bpc) = (group_blocks.max(1) as usize, bpc.max(1) as usize);
    (n_blocks / g) * g.div_ceil(bpc) + (n_blocks % g).div_ceil(bpc)
}

/// Blocks per chunk of a rANS grid of at most one CTA per SM (the `rans_decode_slices_pack_solo`
/// entry point), or `None` where the usual grid ([`rans_warps_per_cta`],
/// [`KERNEL_CTAS_PER_SM`] CTAs per SM) is kept: the fewest blocks per chunk whose chunks
/// ([`rans_chunks`]) fit `sms` CTAs, when the usual grid has more chunks than SMs (some SMs
/// would run two CTAs and the stage waits for those: PERFORMANCE.md twenty-sixth session,
/// dm3's busiest SM 1.22 times the mean) and the chunk's warps (`halves` per block) fit
/// [`KERNEL_SOLO_WARPS`]. dm3 (1,317 blocks with wide slices, groups of 64, 132 SMs):
/// 11 blocks, 124 CTAs of 22 warps, where the usual rule runs 165 CTAs of 16 warps, two on
/// 33 SMs; ce2 (1,104): 10 blocks, 121 CTAs of 20 warps against 138 of 16. On an H200 it
/// takes packed archives of ~530-1,400 blocks with wide slices and ~1,060-2,800 without;
/// measured (PERFORMANCE.md twenty-seventh session) on ce2 and dm3 (+6-9 %), a 12 MB prefix
/// of dm3 (733 blocks, 12-warp CTAs, +3 %), and without wide slices TAIR10 (16 warps, +2 %)
/// and A. arenosa (2,454 blocks, 22 warps, +8 %).
pub fn rans_solo_blocks(n_blocks: usize, group_blocks: u32, halves: u32, sms: u32) -> Option<u32> {
    let halves = halves.max(1);
    let usual_bpc = rans_warps_per_cta(n_blocks, halves, sms) / halves;
    if rans_chunk_count(n_blocks, group_blocks, usual_bpc) <= sms as usize {
        return None;
    }
    (1..=KERNEL_SOLO_WARPS / halves)
        .find(|&bpc| rans_chunk_count(n_blocks, group_blocks, bpc) <= sms as usize)
}

/// The order in which the rANS stage's `grid` CTAs ([`rans_grid`]) take `chunks` (from
/// [`rans_chunks`]), as the chunks' first blocks, the kernel's `chunk_order`: CTA `c` takes
/// the entries `c, c + grid, c + 2 grid, ...` of the result, one round of the grid each, and
/// skips [`RANS_NO_CHUNK`]. The chunks go longest chain first (a chunk's chain is its
/// blocks' longest [`rans_block_steps`], block `b`'s literal width `literal_width(b)`; ties
/// by first block), in serpentine rounds: round 0 gives CTA `c` the `c`-th longest, round 1
/// runs the other way, so the CTA with the shortest chunk of one round takes the longest of
/// the next (a CTA takes its next chunk as soon as it is done with one, not with the round).
/// The last round is padded with [`RANS_NO_CHUNK`] to a whole round. hs37 (4,334 blocks,
/// 271 chunks of 16 for 264 CTAs on an H200): the seven chunks of the second round (N runs,
/// 71 steps) went to the CTAs of the seven longest chunks (391 steps in all, against 320 for
/// the longest chunk); now to those of the seven shortest (PERFORMANCE.md fifteenth session;
/// longest first alone: eighth session). Deterministic; every chunk exactly once.
pub fn rans_chunk_order(
    entries: &[crate::device::format::BlockEntry],
    literal_width: impl Fn(usize) -> u32,
    chunks: &[(u32, u32)],
    grid: u32,
) -> Vec<u32> {
    let grid = grid.max(1) as usize;
    let keys: Vec<u32> = chunks
        .iter()
        .map(|&(r0, n)| {
            (r0 as usize..(r0 + n) as usize)
                .map(|b| rans_block_steps(&entries[b], literal_width(b)))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut sorted: Vec<usize> = (0..keys.len()).collect();
    sorted.sort_by_key(|&k| (std::cmp::Reverse(keys[k]), k));
    let rounds = sorted.len().div_ceil(grid);
    let mut order = vec![RANS_NO_CHUNK; rounds * grid];
    for (i, &k) in sorted.iter().enumerate() {
        let (r, j) = (i / grid, i % grid);
        let cta = if r % 2 == 0 { j } else { grid - 1 - j };
        order[r * grid + cta] = chunks[k].0;
    }
    order
}

/// Whether no block of `a` can come out of the dense kernel as `Status::Fallback`, so that
/// the lane kernel after it would have nothing to do and a dense decode leaves it out
/// (`GpuArchive::decode_all_with`; one launch and its wait less a decode). Decided on the
/// archive's own bytes, the ones the GPU decodes: every block's match streams are raw slices
/// (`compress --raw-match-streams`), and each block the dense kernel takes passes what it
/// checks before it would hand the block back (`device/src/dense.rs`): its streams within
/// the shared-memory caps (`fits`), at most `LENV_CAP` length varints (bytes without bit 7),
/// as many offset first bytes with a tail (bit 7) as tail bytes, and no tail byte with bit 7
/// (a distance of more than 14 bits). A block with a rANS-coded match stream would need its
/// decode first: such an archive keeps the lane kernel. `ACEAPEX_GPU_LANE_ALWAYS=1` keeps it
/// for every archive (A/B runs).
pub fn dense_leaves_no_fallback(a: &crate::archive::Archive<'_>) -> bool {
    use crate::device::dense_layout::{
        CMD_CAP, DENSE_MAX_BLOCK, LENB_CAP, LENV_CAP, LIT_CAP, OFFB_CAP, TAILB_CAP,
    };
    use crate::device::format::{
        STREAM_COMMANDS, STREAM_LENGTHS, STREAM_LITERALS, STREAM_OFFSETS, STREAM_OFFSET_TAILS,
    };
    if std::env::var("ACEAPEX_GPU_LANE_ALWAYS").as_deref() == Ok("1") {
        return false;
    }
    let bs = a.header.block_size;
    if bs > DENSE_MAX_BLOCK {
        return false;
    }
    (a.entries.iter().enumerate()).all(|(b, e)| {
        let start = b as u64 * bs as u64;
        // a block past the end or whose matches reach another block is BadDistance, not
        // Fallback (the kernel's first check): nothing for the lane kernel either way
        if start >= a.header.original_size || e.lowest_source_block as usize != b {
            return true;
        }
        let fits = e.decoded_len[STREAM_LITERALS] as usize <= LIT_CAP
            && e.decoded_len[STREAM_COMMANDS] as usize <= CMD_CAP
            && e.decoded_len[STREAM_LENGTHS] as usize <= LENB_CAP
            && e.decoded_len[STREAM_OFFSETS] as usize <= OFFB_CAP
            && e.decoded_len[STREAM_OFFSET_TAILS] as usize <= TAILB_CAP;
        // the match streams raw slices, as the dense kernel's early load asks (own.rs)
        let raw =
            crate::device::own::raw_match_streams_at(e, || a.block_offsets[b], a.data.len() as u64)
                .is_some();
        if !fits || !raw {
            return false;
        }
        let s = a.slices(b);
        let lengths = s[STREAM_LENGTHS].iter().filter(|&&x| x < 0x80).count();
        let with_tail = s[STREAM_OFFSETS].iter().filter(|&&x| x >= 0x80).count();
        lengths <= LENV_CAP
            && with_tail == s[STREAM_OFFSET_TAILS].len()
            && s[STREAM_OFFSET_TAILS].iter().all(|&x| x < 0x80)
    })
}

/// The rANS stage's entry points (`device/src/dense.rs`, `rans_decode_slices`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RansEntry {
    Plain,
    Context,
    Packed,
    PackedNarrow,
    PackedSolo,
    TwoBit,
}

impl RansEntry {
    /// The loaded function.
    fn function(self, k: &super::kernels::Kernels) -> &cudarc::driver::CudaFunction {
        match self {
            RansEntry::Plain => &k.rans_decode_slices,
            RansEntry::Context => &k.rans_decode_slices_ctx,
            RansEntry::Packed => &k.rans_decode_slices_pack,
            RansEntry::PackedNarrow => &k.rans_decode_slices_pack_narrow,
            RansEntry::PackedSolo => &k.rans_decode_slices_pack_solo,
            RansEntry::TwoBit => &k.rans_decode_slices_two_bit,
        }
    }

    /// Whether it can leave self-contained blocks to the dense kernel
    /// (`leave_self_contained`, [`leaves_self_contained`]): only
    /// `rans_decode_slices_two_bit` has that code (the 64-register entry points keep theirs
    /// as it was, `dense.rs`).
    pub(crate) fn can_leave_self_contained(self) -> bool {
        self == RansEntry::TwoBit
    }
}

/// The rANS entry point for `ga`: the step variants its tables need (FORMAT.md §5.4, §5.6;
/// `dense.rs`, `rans_decode_slices`).
pub(crate) fn rans_entry(ga: &super::decoder::GpuArchive) -> RansEntry {
    match ga.rans_kernel {
        // two-bit literal slices (FORMAT.md §5.7) on a narrow grid: the entry point that
        // expands them with the whole warp, under the narrow bounds (it decodes every table
        // kind; the narrow packed one has no two-bit code)
        _ if ga.rans_two_bit && ga.rans_narrow && !ga.rans_solo => RansEntry::TwoBit,
        RansKernel::Plain => RansEntry::Plain,
        RansKernel::Context => RansEntry::Context,
        RansKernel::Packed if ga.rans_solo => RansEntry::PackedSolo,
        RansKernel::Packed if ga.rans_narrow => RansEntry::PackedNarrow,
        RansKernel::Packed => RansEntry::Packed,
    }
}

/// The dense kernel's grid for `ga`: a CTA per block, at most as many as the GPU holds at once.
pub(crate) fn dense_grid(gpu: &Gpu, ga: &super::decoder::GpuArchive) -> u32 {
    (ga.n_blocks as u64).min(gpu.sm_count() as u64 * gpu.dense_ctas_per_sm() as u64) as u32
}

/// Whether a dense decode of `ga` whose self-contained blocks are left to the dense kernel
/// (`leave`: the decode's one answer of [`leaves_self_contained`], so that a setting changed
/// by another thread meanwhile cannot split it) is the dense kernel alone: every block
/// self-contained, no lane kernel after it
/// (`GpuArchive`'s `lane_after_dense`, [`dense_leaves_no_fallback`]), and a CTA for every
/// block ([`dense_grid`]), so that no CTA takes a second block from the queue's ticket word
/// (whose value then does not matter: `next_block` ends the CTA's loop past the order
/// whatever the ticket) and nothing reads its fallback word. The rANS stage, whose only work
/// would be zeroing those words and publishing the epoch, is not launched; the dense kernel
/// runs with epoch 0 (no hand-off: it waits for no word and, launched programmatically, for
/// the grid before it on the stream to complete). One launch a decode (PERFORMANCE.md
/// thirty-first session).
pub(crate) fn dense_alone(gpu: &Gpu, ga: &super::decoder::GpuArchive, leave: bool) -> bool {
    leave
        && ga.self_contained == ga.n_blocks
        && !ga.lane_after_dense
        && dense_grid(gpu, ga) >= ga.n_blocks
}

/// Whether a dense decode of `ga` with stage bits `stages` leaves the archive's
/// self-contained blocks (`device::own::own_slice`) to the dense kernel: the rANS stage then
/// skips them ([`rans_decode_slices`] with `leave`) and `decode_blocks_dense_sc` decodes them
/// from the data section, never waiting for them (PERFORMANCE.md thirty-first session).
/// Yes when the archive has such a block, its rANS entry point can leave them (the narrow
/// two-bit one, [`RansEntry::can_leave_self_contained`]: archives of up to ~4,200 blocks of
/// 16 KiB on the H200, more blocks take the 16-warp grid), the stages read
/// nothing of them from the scratch (no `STAGE_SEQ_PARSE`, no `STAGE_LATE_PARSE`, also not by
/// `ACEAPEX_GPU_EARLY_PARSE=0`), and neither `ACEAPEX_GPU_SELF_CONTAINED=0` (A/B runs) nor
/// `GpuArchive::set_self_contained(false)` turned it off.
pub(crate) fn leaves_self_contained(ga: &super::decoder::GpuArchive, stages: u32) -> bool {
    use crate::device::dense_layout::{STAGE_LATE_PARSE, STAGE_SEQ_PARSE};
    static OFF: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let off =
        *OFF.get_or_init(|| std::env::var("ACEAPEX_GPU_SELF_CONTAINED").as_deref() == Ok("0"));
    !off && ga.self_contained > 0
        && !ga
            .no_self_contained
            .load(std::sync::atomic::Ordering::Relaxed)
        && (stages | early_parse_off()) & (STAGE_SEQ_PARSE | STAGE_LATE_PARSE) == 0
        && rans_entry(ga).can_leave_self_contained()
}

/// Launches the rANS stage: every block's slices decoded into the archive's `decoded`
/// scratch, one warp per block (its slices' lanes packed into the warp; a pair of warps per
/// block for an archive with wide slices, `rans_halves`). Writes every
/// block's status word (0, or the first broken rule's status), so `status` needs no zeroing
/// first (a memset less per decode).
/// With `dense_queue` (the archive's queue, locked by the caller, and the decode's epoch,
/// never 0 nor the previous decode's) it also hands over to [`decode_blocks_dense`], which
/// must follow it on the stream: it zeroes the queue's ticket and fallback words and
/// publishes the epoch there and in each block's ready word once the block's streams and
/// status are written (`device/src/handoff.rs`). With `leave` ([`leaves_self_contained`],
/// the same answer the caller gives [`decode_blocks_dense`]) it writes nothing for the
/// blocks that kernel decodes from the data section alone (`dense.rs`, `self_contained`),
/// status and ready word included; when that is every block, its grid is one CTA that only
/// zeroes the queue and publishes the epoch.
pub(crate) fn rans_decode_slices(
    gpu: &Gpu,
    ga: &super::decoder::GpuArchive,
    status: &mut CudaSlice<u32>,
    dense_queue: Option<(&mut CudaSlice<u32>, u32)>,
    leave: bool,
) -> Result<(), GpuError> {
    assert!(
        status.len() >= ga.n_blocks as usize,
        "one status word per block"
    );
    assert!(
        !leave || dense_queue.is_some() && rans_entry(ga).can_leave_self_contained(),
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
    // (in L1 they missed often enough to stall most steps; PERFORMANCE.md seventh session).
    // (warps per CTA and the chunk order were chosen at upload: `rans_warps_per_cta` or
    // `rans_solo_blocks`, `rans_chunk_order`)
    let threads = 32 * ga.rans_wpc;
    // the context pairs' second tables staged too only where the archive has such pairs
    // (`KERNEL_STAGED_TABLES`: more shared memory leaves L1 less room)
    let smem = ga.rans_staged * std::mem::size_of::<DecodeTable>() as u32
        + if ga.rans_stage_expand != 0 {
            KERNEL_EXPAND_BYTES as u32
        } else {
            0
        }
        + if ga.rans_halves == 2 {
            KERNEL_PAIR_BYTES as u32
        } else {
            0
        };
    // (the upload stages the pairs' second tables only where the pair slots leave room)
    assert!(
        smem as usize <= KERNEL_SMEM_BYTES,
        "rANS stage shared memory {smem} over its limit"
    );
    // CTAs the GPU holds at once, at most (`rans_grid`, the grid the order was laid out for
    // at upload): the kernel's loop takes the remaining chunks in the host's order (the
    // hardware's order of starting queued CTAs is not specified); with every block left to
    // the dense kernel, one CTA and no chunk (CTA 0 zeroes the queue, publishes the epoch)
    let (grid, n_chunks) = if leave && ga.self_contained == ga.n_blocks {
        (1, 0)
    } else {
        (ga.rans_grid, ga.rans_chunks)
    };
    let data_len = ga.data_len;
    let dec_len = ga.decoded_len;
    let cfg = LaunchConfig {
        grid_dim: (grid, 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: smem,
    };
    let kernel = rans_entry(ga).function(&gpu.k);
    let mut b = gpu.stream().launch_builder(kernel);
    b.arg(&ga.data)
        .arg(&data_len)
        .arg(&ga.entries)
        .arg(&ga.offsets)
        .arg(&ga.n_blocks)
        .arg(&ga.tables)
        .arg(&ga.n_tables)
        .arg(&ga.table_index)
        .arg(&ga.group_blocks)
        .arg(decoded)
        .arg(&dec_len)
        .arg(&ga.dec_offsets)
        .arg(status)
        .arg(&ga.rans_order)
        .arg(&n_chunks)
        .arg(&ga.rans_staged)
        .arg(&ga.rans_stage_expand);
    let (queue_addr, epoch) = dense_queue.map_or((0, 0), |(q, e)| (addr(gpu, q), e));
    let leave_self_contained = leave as u32;
    b.arg(&queue_addr)
        .arg(&epoch)
        .arg(&ga.rans_halves)
        .arg(&leave_self_contained);
    // SAFETY: argument order matches `rans_decode_slices`; rans_order holds at least n_chunks
    // entries (n_chunks is 0 or all of them): the first block of every chunk of
    // `rans_chunks(n_blocks, group_blocks, rans_wpc / rans_halves)` once, and RANS_NO_CHUNK,
    // which the kernel skips (with `leave`, the self-contained blocks' one writer is the
    // dense kernel that follows, which the caller launches with the same `leave`); with
    // 32 * rans_wpc threads the kernel's rule (warp w decodes block r0 + w / rans_halves if it
    // is in r0's group) picks exactly that chunk's blocks, so every block's slices and status
    // word have one writer (a pair of warps with rans_halves 2, their status slots,
    // KERNEL_PAIR_BYTES, in the shared memory above); entries/offsets hold n_blocks items,
    // tables n_tables, table_index group_count*STREAM_COUNT words, dec_offsets STREAM_COUNT words per block, and
    // `decoded` dec_len bytes (GpuArchive::upload from a validated Archive); the kernel checks
    // every slice range against data_len and dec_len; status holds n_blocks words (asserted);
    // rans_staged tables of PROB_SCALE words of dynamic shared memory, the tables the kernel
    // stages (STREAM_COUNT, or KERNEL_STAGED_TABLES with the pairs' seconds), and with
    // rans_stage_expand set KERNEL_EXPAND_BYTES more for an expansion table: at most
    // KERNEL_SMEM_BYTES, the limit raised in `raise_shared_memory_limits`; queue_addr is 0
    // or the archive's dense queue (handoff::queue_words(n_blocks) words), which only the
    // dense and lane kernels after this one use, the dense kernel beside it only as
    // device/src/handoff.rs orders (the caller holds its lock across the three launches).
    unsafe { b.launch(cfg) }
        .ctx("launching rans_decode_slices")
        .map(|_| ())
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
        grid_dim: (gpu.sm_count() * 8, 1, 1),
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

#[cfg(test)]
mod tests {
    use super::{rans_chunk_order, rans_chunks, rans_warps_per_cta};
    use crate::device::format::{BlockEntry, LANES_RAW};

    /// Chunk order worked by hand: chains 300, 0, 500, 300 (two blocks per chunk).
    #[test]
    fn rans_chunks_go_longest_chain_first() {
        let e = |lit: u32, lanes: u8| {
            let mut b: BlockEntry = bytemuck::Zeroable::zeroed();
            b.decoded_len[0] = lit;
            b.lanes[0] = lanes;
            b
        };
        let blocks = [
            e(2400, 8),          // chunk 0: 300 steps
            e(100, 1),           // chunk 0: 100
            e(0, 1),             // chunk 1: 0
            e(0, LANES_RAW),     // chunk 1: a raw empty slice
            e(16384, LANES_RAW), // chunk 2: a raw slice, copied 128 bytes per step: 128
            e(500, 1),           // chunk 2: 500
            e(600, 2),           // chunk 3: 300 (ties with chunk 0: index order)
        ];
        // (the chunks' first blocks: 0, 2, 4, 6; groups of 64 blocks)
        let (one, two) = (
            rans_chunks(blocks.len(), 64, 1),
            rans_chunks(blocks.len(), 64, 2),
        );
        assert_eq!(two, vec![(0, 2), (2, 2), (4, 2), (6, 1)]);
        // one CTA: one chunk per round, all in one row
        assert_eq!(rans_chunk_order(&blocks, |_| 1, &two, 1), vec![4, 0, 6, 2]);
        // groups of 3 blocks: no chunk crosses one (chunk [2, 3] would), so block 2 and
        // block 6 are chunks of their own: chains 300, 0, 128, 500, 300 -> first blocks
        // 5, 0, 6, 3, 2 (ties by first block)
        let grouped = rans_chunks(blocks.len(), 3, 2);
        assert_eq!(grouped, vec![(0, 2), (2, 1), (3, 2), (5, 1), (6, 1)]);
        assert_eq!(
            rans_chunk_order(&blocks, |_| 1, &grouped, 1),
            vec![5, 0, 6, 3, 2]
        );
        // one block per chunk, three CTAs: rounds [5, 0, 6], then [4, 1, 2] the other
        // way (CTA 2, whose chunk was the shortest, takes the longest left), then [3]
        // padded
        const NO: u32 = super::RANS_NO_CHUNK;
        assert_eq!(
            rans_chunk_order(&blocks, |_| 1, &one, 3),
            vec![5, 0, 6, 2, 1, 4, 3, NO, NO]
        );
        assert!(rans_chunk_order(&[], |_| 1, &[], 4).is_empty());
        // packed literals (FORMAT.md §5.6): block 0's 2400 literals in 800 symbols of three,
        // 100 steps; block 6's 600 in 300 pairs, 150 steps; a raw slice is copied as is
        let widths = |b: usize| [3, 1, 1, 1, 3, 1, 2][b];
        assert_eq!(rans_chunk_order(&blocks, widths, &two, 1), vec![4, 6, 0, 2]);
        // two CTAs: [2, 3], then [1, 0] reversed
        assert_eq!(rans_chunk_order(&blocks, widths, &two, 2), vec![4, 6, 2, 0]);
        assert_eq!(super::rans_block_steps(&blocks[4], 3), 128);
        // raw slices first, then the rounds: 4,096 raw literals (32 steps), 600 commands on
        // 24 lanes and 100 offsets on 16 (40 lanes: two rounds, 25 + 7 steps)
        let mut b: BlockEntry = bytemuck::Zeroable::zeroed();
        b.decoded_len = [4096, 0, 100, 600, 0];
        b.lanes = [LANES_RAW, LANES_RAW, 16, 24, LANES_RAW];
        assert_eq!(super::rans_block_steps(&b, 1), 32 + 25 + 7);
        // two warps sharing the rounds: 25 steps on the first, the raw copy's 32 and the
        // second round's 7 on the last; four warps: the raw copy alone on the last; 0 as 1
        assert_eq!(super::rans_block_steps_split(&b, 1, 2), 32 + 7);
        assert_eq!(super::rans_block_steps_split(&b, 1, 4), 32);
        assert_eq!(super::rans_block_steps_split(&b, 1, 0), 32 + 25 + 7);
    }

    /// The dense kernel's block order worked by hand, on the blocks of the test above (chains
    /// 300, 100, 0, 0, 128, 500, 300), each chunk charged 8 steps to start.
    #[test]
    fn dense_blocks_go_in_expected_finish_order() {
        use super::dense_block_order;
        assert_eq!(super::CHUNK_START_STEPS, 8, "the expected orders assume 8");
        let e = |lit: u32, lanes: u8| {
            let mut b: BlockEntry = bytemuck::Zeroable::zeroed();
            b.decoded_len[0] = lit;
            b.lanes[0] = lanes;
            b
        };
        let blocks = [
            e(2400, 8),
            e(100, 1),
            e(0, 1),
            e(0, LANES_RAW),
            e(16384, LANES_RAW),
            e(500, 1),
            e(600, 2),
        ];
        // one block per chunk, three CTAs, chunk order [5, 0, 6, 2, 1, 4, 3, -, -]: CTA 0
        // runs blocks 5, 2, 3 (done at 508, 516, 524), CTA 1 blocks 0, 1 (308, 416), CTA 2
        // blocks 6, 4 (308, 444); ties by block index
        let one = rans_chunks(blocks.len(), 64, 1);
        let order = rans_chunk_order(&blocks, |_| 1, &one, 3);
        assert_eq!(
            dense_block_order(&blocks, |_| 1, &one, 3, &order),
            vec![0, 6, 1, 4, 5, 2, 3]
        );
        // two blocks per chunk, one CTA, chunks 2, 0, 3, 1 in a row: blocks 4 and 5 (done at
        // 136, 508), then 0 and 1 (816, 616), then 6 (1124), then 2 and 3 (1132)
        let two = rans_chunks(blocks.len(), 64, 2);
        let order = rans_chunk_order(&blocks, |_| 1, &two, 1);
        assert_eq!(
            dense_block_order(&blocks, |_| 1, &two, 1, &order),
            vec![4, 5, 1, 0, 6, 2, 3]
        );
        assert!(dense_block_order(&[], |_| 1, &[], 4, &[]).is_empty());
    }

    /// Longest first: more command bytes first, ties in the order given; a permutation.
    #[test]
    fn dense_blocks_longest_first() {
        use super::dense_longest_first;
        use crate::device::format::STREAM_COMMANDS;
        let e = |cmds: u32| {
            let mut b: BlockEntry = bytemuck::Zeroable::zeroed();
            b.decoded_len[STREAM_COMMANDS] = cmds;
            b
        };
        let blocks = [e(10), e(300), e(10), e(0), e(300), e(45)];
        assert_eq!(
            dense_longest_first(&blocks, vec![5, 4, 3, 2, 1, 0]),
            vec![4, 1, 5, 2, 0, 3]
        );
        assert_eq!(
            dense_longest_first(&blocks, vec![0, 1, 2, 3, 4, 5]),
            vec![1, 4, 5, 0, 2, 3]
        );
        assert!(dense_longest_first(&[], vec![]).is_empty());
    }

    /// The order's choice on the H200's 132 SMs, for the archives measured (8-warp CTAs up
    /// to 2,112 blocks, 16-warp ones above, `rans_warps_per_cta`).
    #[test]
    fn longest_first_only_for_grids_over_the_sms() {
        let lf = |chunks: u64, sms: u32| super::dense_order_longest_first(chunks, sms, false);
        let ctas =
            |blocks: u64| blocks.div_ceil(rans_warps_per_cta(blocks as usize, 1, 132) as u64);
        assert!(!lf(ctas(287), 132)); // E. coli: 36 CTAs
        assert!(!lf(ctas(609), 132)); // brown: 77
        assert!(!lf(ctas(1103), 132)); // ce2: 138
        assert!(!lf(148, 132));
        assert!(lf(149, 132));
        assert!(lf(ctas(1317), 132)); // dm3: 165
        assert!(lf(ctas(1889), 132)); // TAIR10: 237
        assert!(lf(ctas(4334), 132)); // hs37: 271 of 16 warps

        // a grid of one CTA per SM: always (ce2 with wide slices: 121 CTAs of 20 warps)
        assert!(super::dense_order_longest_first(121, 132, true));
        assert!(!lf(121, 132));
    }

    /// Chunks cut by hand: 10 blocks in groups of 4, two or three blocks a chunk; every
    /// block in exactly one chunk, none across a group, for many sizes.
    #[test]
    fn rans_chunks_cover_every_block_once_within_groups() {
        use super::rans_chunk_count;
        assert_eq!(
            rans_chunks(10, 4, 2),
            vec![(0, 2), (2, 2), (4, 2), (6, 2), (8, 2)]
        );
        assert_eq!(
            rans_chunks(10, 4, 3),
            vec![(0, 3), (3, 1), (4, 3), (7, 1), (8, 2)]
        );
        // 0 taken as 1
        assert_eq!(rans_chunks(2, 0, 0), vec![(0, 1), (1, 1)]);
        assert!(rans_chunks(0, 64, 8).is_empty());
        for n in [0usize, 1, 5, 63, 64, 65, 200, 1317] {
            for g in [1u32, 3, 8, 64] {
                for bpc in [1u32, 2, 7, 8, 11, 16, 64, 100] {
                    let c = rans_chunks(n, g, bpc);
                    assert_eq!(c.len(), rans_chunk_count(n, g, bpc), "{n} {g} {bpc}");
                    let mut next = 0u32;
                    for &(r0, len) in &c {
                        assert_eq!(r0, next, "{n} {g} {bpc}: in block order, no gap");
                        assert!(len >= 1 && len <= bpc, "{n} {g} {bpc}");
                        assert_eq!(r0 / g, (r0 + len - 1) / g, "{n} {g} {bpc}: one group");
                        next = r0 + len;
                    }
                    assert_eq!(next as usize, n);
                }
            }
        }
    }

    /// The kernel's rule (`dense.rs`, `rans_stage`: CTA `c` takes the order's entries `c, c +
    /// grid, ...`, skips those past the last block, and its warp `w` decodes block `r0 + w /
    /// halves` when `w / halves < wpc / halves` and the block lies in `r0`'s group), played
    /// on the host over the chunks and orders the upload makes: every block decoded by
    /// exactly one warp (or pair) for CTA sizes that divide a group and those that do not,
    /// odd warp counts with pairs (the last warp idle), partial last groups and grids of
    /// several rounds.
    #[test]
    fn the_kernels_warp_rule_decodes_every_block_once() {
        let e = |i: usize| {
            let mut b: BlockEntry = bytemuck::Zeroable::zeroed();
            b.decoded_len[0] = (i * 37 % 500) as u32;
            b.lanes[0] = 1;
            b
        };
        for n in [0usize, 1, 7, 64, 65, 300, 1317] {
            let blocks: Vec<BlockEntry> = (0..n).map(e).collect();
            for group in [1u32, 3, 64, 256] {
                for halves in [1u32, 2] {
                    for wpc in [1u32, 2, 3, 8, 13, 16, 22, 24] {
                        let bpc = wpc / halves;
                        if bpc == 0 {
                            continue;
                        }
                        let chunks = rans_chunks(n, group, bpc);
                        for grid in [1u32, 5, 132] {
                            let order = rans_chunk_order(&blocks, |_| 1, &chunks, grid);
                            let mut seen = vec![0u32; n];
                            for c in 0..grid as usize {
                                for &r0 in order.iter().skip(c).step_by(grid as usize) {
                                    if r0 as usize >= n {
                                        continue;
                                    }
                                    for w in 0..wpc {
                                        let b = r0 + w / halves;
                                        let mine = w / halves < bpc
                                            && (b as usize) < n
                                            && b / group == r0 / group;
                                        // the first warp of a pair reports the block
                                        if mine && w % halves == 0 {
                                            seen[b as usize] += 1;
                                        }
                                    }
                                }
                            }
                            assert!(
                                seen.iter().all(|&k| k == 1),
                                "n {n} group {group} halves {halves} wpc {wpc} grid {grid}"
                            );
                        }
                    }
                }
            }
        }
    }

    /// The one-CTA-per-SM rule on the DNA corpora's block counts (wide slices: two warps a
    /// block; groups of 64; 132 SMs), worked by hand: dm3 (1,317 blocks, usual grid 165
    /// CTAs of 8 blocks) needs 11 blocks a chunk (20 groups of 6 chunks and 37 blocks in 4:
    /// 124; 10 would cut 7 a group, 144), ce2 (1,104: 138) 10 (17 x 7 + 2 = 121), P.
    /// falciparum (1,444: 181) would need 13 (22 x 5 + 3 = 113), 26 warps, over the 24 of
    /// the entry point; E. coli (287: 72 CTAs of 4 blocks) fits the SMs already. Without
    /// wide slices (one warp a block) ce2's usual grid is 138 CTAs of 8 warps, and 9 blocks
    /// still cut a group in 8 chunks (138), so 10; P. falciparum's 13 warps fit.
    #[test]
    fn rans_solo_grid_only_where_the_usual_one_doubles_up_sms() {
        use super::rans_solo_blocks;
        assert_eq!(rans_solo_blocks(1317, 64, 2, 132), Some(11));
        assert_eq!(rans_solo_blocks(1104, 64, 2, 132), Some(10));
        assert_eq!(rans_solo_blocks(1444, 64, 2, 132), None);
        assert_eq!(rans_solo_blocks(1444, 64, 1, 132), Some(13));
        assert_eq!(rans_solo_blocks(287, 64, 2, 132), None);
        assert_eq!(rans_solo_blocks(1889, 64, 2, 132), None);
        assert_eq!(rans_solo_blocks(0, 64, 2, 132), None);
        assert_eq!(rans_solo_blocks(1104, 64, 1, 132), Some(10));
    }

    #[test]
    fn rans_chunk_order_lays_every_chunk_once_in_serpentine_rounds() {
        use super::{rans_block_steps, RANS_NO_CHUNK};
        // chunks of one block whose chain is its index times 7 modulo 31 (ties and all)
        let e = |steps: u32| {
            let mut b: BlockEntry = bytemuck::Zeroable::zeroed();
            b.decoded_len[0] = steps;
            b.lanes[0] = 1;
            b
        };
        for chunks in [0usize, 1, 2, 5, 31, 64, 100] {
            let blocks: Vec<BlockEntry> = (0..chunks).map(|i| e((i * 7 % 31) as u32)).collect();
            for grid in [1u32, 2, 3, 8, 31, 64, 200] {
                let one = rans_chunks(blocks.len(), 64, 1);
                let order = rans_chunk_order(&blocks, |_| 1, &one, grid);
                let g = grid as usize;
                assert_eq!(
                    order.len(),
                    chunks.div_ceil(g) * g,
                    "{chunks} chunks, grid {grid}"
                );
                let mut real: Vec<u32> = order
                    .iter()
                    .copied()
                    .filter(|&k| k != RANS_NO_CHUNK)
                    .collect();
                real.sort_unstable();
                assert_eq!(real, (0..chunks as u32).collect::<Vec<_>>());
                let steps = |k: u32| rans_block_steps(&blocks[k as usize], 1);
                for (r, round) in order.chunks(g).enumerate() {
                    // every chunk of a round is at least as long as every chunk of the next
                    if let Some(next) = order.chunks(g).nth(r + 1) {
                        let shortest = round.iter().map(|&k| steps(k)).min().unwrap();
                        for &k in next.iter().filter(|&&k| k != RANS_NO_CHUNK) {
                            assert!(steps(k) <= shortest, "{chunks} chunks, grid {grid}");
                        }
                    }
                    // within a round, longest first in even rounds and last in odd ones,
                    // the padding at the round's far end
                    let real: Vec<u32> = round
                        .iter()
                        .map(|&k| if k == RANS_NO_CHUNK { 0 } else { steps(k) })
                        .collect();
                    let mut want = real.clone();
                    if r % 2 == 0 {
                        want.sort_unstable_by(|a, b| b.cmp(a));
                    } else {
                        want.sort_unstable();
                    }
                    assert_eq!(real, want, "{chunks} chunks, grid {grid}, round {r}");
                }
            }
        }
    }

    /// Warps per rANS CTA on a 132-SM H200 (264 CTA slots at two per SM), worked by hand:
    /// 8 while ceil(blocks / 8) <= 264, else 16.
    #[test]
    fn rans_ctas_take_8_warps_unless_a_second_round_would_follow() {
        assert_eq!(rans_warps_per_cta(0, 1, 132), 8);
        assert_eq!(rans_warps_per_cta(75, 1, 132), 8); // moby_dick
        assert_eq!(rans_warps_per_cta(1889, 1, 132), 8); // TAIR10: 237 CTAs
        assert_eq!(rans_warps_per_cta(2112, 1, 132), 8); // exactly 264 CTAs
        assert_eq!(rans_warps_per_cta(2113, 1, 132), 16);
        assert_eq!(rans_warps_per_cta(2439, 1, 132), 16); // gcide: 153 CTAs
        assert_eq!(rans_warps_per_cta(100_000, 1, 132), 16); // several rounds

        // a pair of warps a block (wide slices): 1,056 blocks are 2,112 warps
        assert_eq!(rans_warps_per_cta(1056, 2, 132), 8);
        assert_eq!(rans_warps_per_cta(1057, 2, 132), 16);
    }
}
