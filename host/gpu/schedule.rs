//! The GPU decoder's scheduling policy, as pure functions of plain data: which rANS entry
//! point runs, its CTA size, chunks, grid and chunk order, the dense kernel's block order and
//! grid, whether the lane kernel follows it, whether the dense kernel runs alone. Inputs are
//! archive facts (block table, table kinds), device facts ([`DeviceFacts`]) and the caller's
//! [`GpuTuning`]; no CUDA type and no `unsafe` here. `launch.rs` executes the result.

use super::tuning::GpuTuning;
use crate::device::dense_layout::{DENSE_MAX_BLOCK, STAGE_LATE_PARSE, STAGE_SEQ_PARSE};
use crate::device::format::{
    is_two_bit, BlockEntry, DecodeTable, LANES_TWO_BIT_RUNS, STREAM_COMMANDS, STREAM_COUNT,
    STREAM_LITERALS,
};
use crate::device::rans::{
    KERNEL_CTAS_PER_SM, KERNEL_EXPAND_BYTES, KERNEL_MAX_WARPS, KERNEL_NARROW_WARPS,
    KERNEL_PAIR_BYTES, KERNEL_SOLO_WARPS, KERNEL_STAGED_TABLES,
};
use crate::format::Archive;

/// What the scheduler needs to know of the GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceFacts {
    /// Streaming multiprocessors.
    pub sm_count: u32,
    /// CTAs of the dense kernel one SM holds at once (the driver's occupancy answer; at
    /// least 1).
    pub dense_ctas_per_sm: u32,
}

/// Which entry point of the GPU rANS stage decodes an archive (`rans_decode_slices` and its
/// variants): each holds only the step variants its table kinds need, so that archives
/// without context pairs or packed literals keep the registers (and the speed) of the plain
/// kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RansKernel {
    /// One table per stream and group.
    Plain,
    /// Context pairs somewhere (FORMAT.md §5.4).
    Context,
    /// Packed literal tables somewhere (§5.6), context pairs too.
    Packed,
}

impl RansKernel {
    /// The entry point for `a`'s tables.
    pub fn for_archive(a: &Archive<'_>) -> RansKernel {
        let tables = || a.tables.iter().flatten().flatten();
        if tables().any(|t| t.is_packed()) {
            RansKernel::Packed
        } else if tables().any(|t| t.has_context()) {
            RansKernel::Context
        } else {
            RansKernel::Plain
        }
    }
}

/// The rANS stage's entry points, one per kernel name (`device/src/params.rs`,
/// `KERNEL_NAMES`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RansEntry {
    /// `rans_decode_slices`.
    Plain,
    /// `rans_decode_slices_ctx`.
    Context,
    /// `rans_decode_slices_pack` (CTAs of up to 16 warps).
    Packed,
    /// `rans_decode_slices_pack_narrow` (CTAs of up to 8 warps).
    PackedNarrow,
    /// `rans_decode_slices_pack_solo` (one CTA of up to 24 warps per SM).
    PackedSolo,
    /// `rans_decode_slices_two_bit` (CTAs of up to 8 warps, every table kind, two-bit
    /// literal slices).
    TwoBit,
}

impl RansEntry {
    /// Whether it can leave self-contained blocks to the dense kernel ([`leaves_self_contained`]):
    /// only `rans_decode_slices_two_bit` has that code (the 64-register entry points keep
    /// theirs without it).
    pub fn can_leave_self_contained(self) -> bool {
        self == RansEntry::TwoBit
    }
}

/// The facts of an archive that the rANS stage's plan depends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RansFacts {
    /// Blocks in the archive.
    pub n_blocks: usize,
    /// Blocks per table group (FORMAT.md §2; 0 taken as 1).
    pub group_blocks: u32,
    /// Warps per block: [`rans_halves`].
    pub halves: u32,
    /// The table kinds' entry point family: [`RansKernel::for_archive`].
    pub kernel: RansKernel,
    /// Whether some block's literals are a two-bit slice (FORMAT.md §5.7, §5.8): the rANS
    /// stage's entry point that leaves self-contained blocks to the dense kernel.
    pub two_bit: bool,
    /// The rule of [`stage_pair_tables`] for the archive.
    pub pair_tables_rule: bool,
}

impl RansFacts {
    /// The facts of `a`.
    pub fn of(a: &Archive<'_>) -> RansFacts {
        RansFacts {
            n_blocks: a.entries.len(),
            group_blocks: a.header.group_blocks,
            halves: rans_halves(&a.entries),
            kernel: RansKernel::for_archive(a),
            two_bit: (a.entries.iter()).any(|e| is_two_bit(e.lanes[STREAM_LITERALS])),
            pair_tables_rule: stage_pair_tables(a),
        }
    }
}

/// The rANS stage's launch plan for an archive ([`rans_plan`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RansPlan {
    /// Warps per CTA: `blocks_per_chunk * halves`.
    pub warps_per_cta: u32,
    /// Warps per block: 2 when a block has a wide slice, else 1 ([`rans_halves`]).
    pub halves: u32,
    /// Consecutive blocks of one table group a CTA takes at a time ([`rans_chunks`]).
    pub blocks_per_chunk: u32,
    /// CTAs of the grid ([`rans_grid`]), the grid the chunk order is laid out for.
    pub grid: u32,
    /// Decode tables staged per round in shared memory: [`STREAM_COUNT`], or
    /// [`KERNEL_STAGED_TABLES`] with the context pairs' second tables.
    pub staged_tables: u32,
    /// Whether a packed literal table's expansion slots are staged in shared memory.
    pub stage_expand: bool,
    /// The entry point.
    pub entry: RansEntry,
    /// Whether the grid is at most one CTA per SM ([`rans_solo_blocks`]).
    pub solo: bool,
}

impl RansPlan {
    /// Bytes of dynamic shared memory a CTA of the plan uses: the staged tables, an
    /// expansion table's slots, and a pair of warps' status slots when blocks take two.
    pub fn smem_bytes(&self) -> u32 {
        self.staged_tables * std::mem::size_of::<DecodeTable>() as u32
            + if self.stage_expand {
                KERNEL_EXPAND_BYTES as u32
            } else {
                0
            }
            + if self.halves == 2 {
                KERNEL_PAIR_BYTES as u32
            } else {
                0
            }
    }
}

/// The rANS stage's plan for an archive with facts `f` on a GPU of `sms` SMs.
///
/// Packed archives whose usual grid would run two CTAs on some SMs take one CTA per SM
/// ([`rans_solo_blocks`]); otherwise CTAs of [`rans_warps_per_cta`] warps. A chunk holds no
/// more blocks than a table group (warps past it would idle). The context pairs' second
/// tables are staged where [`GpuTuning::stage_pair_tables`] (default: the archive's rule)
/// says so and a pair of warps' status slots leave room for them beside an expansion table.
/// Two-bit literals (FORMAT.md §5.7, §5.8) take the two-bit entry point on a grid of up to 8
/// warps per CTA, whatever the archive's size: the one entry point that expands them and
/// leaves the self-contained blocks to the dense kernel (`leaves_self_contained`; the others
/// would fail the first and hand the slices with runs to the lane kernel).
pub fn rans_plan(f: &RansFacts, sms: u32, tuning: &GpuTuning) -> RansPlan {
    let halves = f.halves.max(1);
    let solo_bpc = match f.kernel {
        RansKernel::Packed if !f.two_bit => {
            rans_solo_blocks(f.n_blocks, f.group_blocks, halves, sms)
        }
        _ => None,
    };
    let warps = match solo_bpc {
        Some(bpc) => bpc * halves,
        None if f.two_bit => rans_warps_per_cta(f.n_blocks, halves, sms).min(KERNEL_NARROW_WARPS),
        None => rans_warps_per_cta(f.n_blocks, halves, sms),
    };
    let blocks_per_chunk = (warps / halves).min(f.group_blocks.max(1));
    let warps_per_cta = blocks_per_chunk * halves;
    let stage_expand = (tuning.stage_expansion_tables).unwrap_or(f.kernel == RansKernel::Packed);
    // (pairs of warps take their status slots, `KERNEL_PAIR_BYTES`, where the seconds of the
    // context pairs would go beside an expansion table: two CTAs per SM leave no byte for
    // both, so those seconds are then read from global memory)
    let room_for_pairs = halves == 1 || !stage_expand;
    let staged_tables = if tuning.stage_pair_tables.unwrap_or(f.pair_tables_rule) && room_for_pairs
    {
        KERNEL_STAGED_TABLES
    } else {
        STREAM_COUNT
    } as u32;
    let chunks = rans_chunk_count(f.n_blocks, f.group_blocks, blocks_per_chunk);
    let solo = solo_bpc.is_some();
    let narrow = warps_per_cta <= KERNEL_NARROW_WARPS;
    RansPlan {
        warps_per_cta,
        halves,
        blocks_per_chunk,
        grid: rans_grid(chunks, sms),
        staged_tables,
        stage_expand,
        entry: rans_entry(f.kernel, f.two_bit, narrow, solo),
        solo,
    }
}

/// The rANS entry point for table kinds `kernel` (FORMAT.md §5.4, §5.6), with two-bit
/// literal slices somewhere (`two_bit`, §5.7), on a grid of at most 8 warps per CTA
/// (`narrow`) or of one CTA per SM (`solo`).
pub fn rans_entry(kernel: RansKernel, two_bit: bool, narrow: bool, solo: bool) -> RansEntry {
    match kernel {
        // two-bit literal slices on a narrow grid: the entry point that expands them with the
        // whole warp, under the narrow bounds (it decodes every table kind)
        _ if two_bit && narrow && !solo => RansEntry::TwoBit,
        RansKernel::Plain => RansEntry::Plain,
        RansKernel::Context => RansEntry::Context,
        RansKernel::Packed if solo => RansEntry::PackedSolo,
        RansKernel::Packed if narrow => RansEntry::PackedNarrow,
        RansKernel::Packed => RansEntry::Packed,
    }
}

/// The orders a decode's kernels take the blocks in ([`block_orders`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockOrders {
    /// The rANS stage's chunk order ([`rans_chunk_order`]), whole rounds of the plan's grid.
    pub rans_chunk_order: Vec<u32>,
    /// The dense kernel's block order: [`dense_block_order`], longest first where
    /// [`dense_order_longest_first`] says so, then the self-contained blocks moved to the
    /// front (a stable sort: each part keeps its order), which the dense kernel decodes
    /// without waiting for the rANS stage.
    pub dense_order: Vec<u32>,
    /// Blocks the dense kernel can decode from the data section alone
    /// (`device::own::own_slice`, the kernels' own rule).
    pub self_contained: u32,
}

/// The block orders of an archive (block table `entries`, each block's data offset
/// `block_offsets`, a data section of `data_len` bytes, block `b`'s literal width
/// `literal_width(b)`, table groups of `group_blocks`) under the rANS plan `plan` on `sms`
/// SMs.
pub fn block_orders(
    entries: &[BlockEntry],
    block_offsets: &[u64],
    data_len: u64,
    literal_width: impl Fn(usize) -> u32,
    group_blocks: u32,
    plan: &RansPlan,
    sms: u32,
) -> BlockOrders {
    let chunks = rans_chunks(entries.len(), group_blocks, plan.blocks_per_chunk);
    let order = rans_chunk_order(entries, &literal_width, &chunks, plan.grid);
    let dense = dense_block_order(entries, &literal_width, &chunks, plan.grid, &order);
    // the longest dense work first where the rANS grid leaves the dense kernel little room
    // beside it
    let mut dense = if dense_order_longest_first(chunks.len() as u64, sms, plan.solo) {
        dense_longest_first(entries, dense)
    } else {
        dense
    };
    let own: Vec<bool> = (entries.iter().zip(block_offsets))
        .map(|(e, &off)| crate::device::own::own_slice(e, off, data_len).is_some())
        .collect();
    let self_contained = own.iter().filter(|&&o| o).count() as u32;
    if self_contained > 0 {
        dense.sort_by_key(|&b| !own[b as usize]);
    }
    BlockOrders {
        rans_chunk_order: order,
        dense_order: dense,
        self_contained,
    }
}

/// Whether the rANS stage stages the context pairs' second tables of the literal and command
/// streams (FORMAT.md §5.4; [`KERNEL_STAGED_TABLES`]): when at least a quarter of the groups
/// have such a pair. Staging them takes shared memory that every block then lacks as L1, so
/// an archive with pairs in a few groups reads those groups' second tables from global
/// memory instead.
pub fn stage_pair_tables(a: &Archive<'_>) -> bool {
    let with_pairs = a
        .tables
        .iter()
        .filter(|g| {
            [STREAM_LITERALS, STREAM_COMMANDS]
                .iter()
                .any(|&k| g[k].as_ref().is_some_and(|t| t.has_context()))
        })
        .count();
    with_pairs > 0 && 4 * with_pairs >= a.tables.len()
}

/// The dense kernel's grid: a CTA per block, at most as many as the GPU holds at once.
pub fn dense_grid(n_blocks: u32, d: DeviceFacts) -> u32 {
    (n_blocks as u64).min(d.sm_count as u64 * d.dense_ctas_per_sm as u64) as u32
}

/// Whether a dense decode whose self-contained blocks are left to the dense kernel (`leave`:
/// the decode's one answer of [`leaves_self_contained`]) is the dense kernel alone: every one
/// of the `n_blocks` blocks self-contained (`self_contained` of them), no lane kernel after it
/// (`lane_after_dense`, see [`dense_leaves_no_fallback`]), and a CTA for every block
/// ([`dense_grid`]), so that no CTA takes a second block from the queue's ticket word and
/// nothing reads its fallback word. The rANS stage, whose only work would be zeroing those
/// words and publishing the epoch, is then not launched, and the dense kernel runs with
/// epoch 0 (no hand-off).
pub fn dense_alone(
    leave: bool,
    self_contained: u32,
    n_blocks: u32,
    lane_after_dense: bool,
    d: DeviceFacts,
) -> bool {
    leave && self_contained == n_blocks && !lane_after_dense && dense_grid(n_blocks, d) >= n_blocks
}

/// Whether a dense decode with stage bits `stages` leaves the archive's `self_contained`
/// blocks (`device::own::own_slice`) to the dense kernel: the rANS stage then skips them and
/// `decode_blocks_dense_sc` decodes them from the data section, never waiting for them. Yes
/// when there is such a block, the rANS `entry` can leave them
/// ([`RansEntry::can_leave_self_contained`]), the stages read nothing of them from the
/// scratch (no `STAGE_SEQ_PARSE`, no `STAGE_LATE_PARSE`), and the caller did not turn it off
/// (`enabled`: `GpuArchive::set_self_contained`).
pub fn leaves_self_contained(
    self_contained: u32,
    enabled: bool,
    stages: u32,
    entry: RansEntry,
) -> bool {
    enabled
        && self_contained > 0
        && stages & (STAGE_SEQ_PARSE | STAGE_LATE_PARSE) == 0
        && entry.can_leave_self_contained()
}

/// The rANS launch's grid and chunk count: the plan's (`grid`, `chunks` entries of the chunk
/// order), or one CTA and no chunk when every one of the `n_blocks` blocks is left to the
/// dense kernel (`leave` with `self_contained == n_blocks`: CTA 0 only zeroes the queue and
/// publishes the epoch).
pub fn rans_launch_grid(
    grid: u32,
    chunks: u32,
    leave: bool,
    self_contained: u32,
    n_blocks: u32,
) -> (u32, u32) {
    if leave && self_contained == n_blocks {
        (1, 0)
    } else {
        (grid, chunks)
    }
}

/// CTAs for `items` work items, `per_block` a CTA, on `sms` SMs: one CTA per `per_block`
/// items, at least 1 and at most 32 per SM (the kernels loop over the rest: the token
/// kernels and `wave_place`).
pub fn item_grid(items: u64, per_block: u64, sms: u32) -> u32 {
    let want = items.div_ceil(per_block.max(1)).max(1);
    want.min(sms as u64 * 32) as u32
}

/// CTAs of a `wave_copy` launch (one level's matches, a warp each, in a grid-stride loop):
/// 8 per SM, whatever the level's count, which the graph does not know when it is captured.
pub fn wave_copy_grid(sms: u32) -> u32 {
    sms * 8
}

/// Threads per CTA of the lane kernel (`decode_blocks_lane`).
pub const LANE_THREADS: u32 = 128;

/// CTAs of the lane kernel for `n_blocks` blocks of `block_size` bytes on `sms` SMs: a warp
/// per block, at most 64 warps per SM, or 8 when it only takes the blocks the dense kernel
/// handed back (`only_fallback`; usually none, and a launch of a few CTAs costs less than
/// one of thousands), except for blocks larger than the dense kernel takes, which all fall
/// back.
pub fn lane_grid(n_blocks: u32, block_size: u32, only_fallback: bool, sms: u32) -> u32 {
    let per_sm = if only_fallback && block_size <= DENSE_MAX_BLOCK {
        8
    } else {
        64
    };
    let want_warps = (n_blocks as u64).min(sms as u64 * per_sm);
    want_warps.div_ceil((LANE_THREADS / 32) as u64) as u32
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
    entries: &[BlockEntry],
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
/// Faster than `order` alone on most archives, but slower where the rANS grid leaves most
/// SMs one rANS CTA and room for two dense CTAs beside it, which then work through the
/// blocks as the stage publishes them: there the expected-finish order is kept
/// ([`dense_order_longest_first`]; measurements in docs/PERFORMANCE.md).
pub fn dense_longest_first(entries: &[BlockEntry], mut order: Vec<u32>) -> Vec<u32> {
    order.sort_by_key(|&b| std::cmp::Reverse(entries[b as usize].decoded_len[STREAM_COMMANDS]));
    order
}

/// Whether the dense kernel takes its blocks longest first ([`dense_longest_first`]) for a
/// rANS stage of `rans_chunks` chunks (one CTA's blocks each) on `sms` SMs: yes when the
/// chunks outnumber the SMs by over an eighth, no below. An SM that runs two rANS CTAs has
/// room for one dense CTA beside them, one that runs a single rANS CTA for two, and those
/// work through the blocks as the stage publishes them; the more SMs hold two rANS CTAs,
/// the more of the dense work runs after the stage, where its tail is what the order
/// shortens. The threshold is measured, not derived (see docs/PERFORMANCE.md). A `solo` grid
/// ([`rans_solo_blocks`]: one CTA of up to 24 warps at 80 registers per SM) leaves an SM
/// that runs it little room for a dense CTA (none from 20 warps up), so its dense work runs
/// mostly after the stage: longest first.
pub fn dense_order_longest_first(rans_chunks: u64, sms: u32, solo: bool) -> bool {
    solo || rans_chunks > sms as u64 + sms as u64 / 8
}

/// What [`dense_block_order`] charges a rANS CTA for starting a chunk (staging its decode
/// tables), in steps of a chain: the time of the table staging over the time of one step,
/// as measured on an H200. Only the order depends on it.
pub const CHUNK_START_STEPS: u64 = 8;

/// Warps per CTA of the rANS stage's usual grid for `n_blocks` blocks of `halves` warps each
/// ([`rans_halves`]: 2 with wide slices) on `sms` SMs: 8, or
/// [`KERNEL_MAX_WARPS`] when 8-warp CTAs would need a second round at
/// [`KERNEL_CTAS_PER_SM`] CTAs per SM: 8 is faster than 16 on small archives, 2 or 4 gain
/// nothing more, and a second round costs much of the stage (see docs/PERFORMANCE.md).
pub fn rans_warps_per_cta(n_blocks: usize, halves: u32, sms: u32) -> u32 {
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
/// (`dense/`, `rans_stage`); 1 otherwise.
pub fn rans_halves(entries: &[BlockEntry]) -> u32 {
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
/// [`crate::format::Archive::literal_width`]). With one block per warp and all blocks in
/// flight, the stage takes at least the longest block's steps times the latency of one step.
pub fn rans_block_steps(e: &BlockEntry, literal_width: u32) -> u32 {
    rans_block_steps_split(e, literal_width, 1)
}

/// [`rans_block_steps`] if `parts` warps shared block `e`: its rANS rounds as
/// [`crate::device::rans::warp_part_steps`] deals them, its raw slices copied by the last
/// warp; the block's chain is its longest warp's. A model for `examples/rans_chains.rs` (no
/// kernel runs it yet). `parts` 0 is taken as 1.
pub fn rans_block_steps_split(e: &BlockEntry, literal_width: u32, parts: u32) -> u32 {
    use crate::device::format::LANES_RAW;
    let parts = parts.max(1);
    let mut raw = 0u32;
    let mut symbols = [0u32; STREAM_COUNT];
    let mut lanes = [0u32; STREAM_COUNT];
    for k in 0..STREAM_COUNT {
        if e.lanes[k] == LANES_RAW {
            raw += e.decoded_len[k].div_ceil(32 * crate::device::rans::RAW_COPY_UNROLL as u32);
            continue;
        }
        if is_two_bit(e.lanes[k]) {
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
    (n_chunks as u64)
        .min(sms as u64 * KERNEL_CTAS_PER_SM as u64)
        .max(1) as u32
}

/// A chunk index the rANS stage skips ([`rans_chunk_order`] pads its last round with it).
pub const RANS_NO_CHUNK: u32 = u32::MAX;

/// The rANS stage's chunks for `n_blocks` blocks in table groups of `group_blocks`, as
/// (first block, blocks): each group cut into runs of `bpc` consecutive blocks from its first
/// block on, the last run of a group shorter where `bpc` does not divide it. A chunk never
/// crosses a group, so the CTA that takes it stages one group's tables and every warp reads
/// them there (`dense/`, `rans_decode_slices`). In block order; `bpc` and `group_blocks` 0
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
/// would run two CTAs and the stage waits for those) and the chunk's warps (`halves` per
/// block) fit [`KERNEL_SOLO_WARPS`]. For example 1,317 blocks with wide slices in groups
/// of 64 on 132 SMs: 11 blocks, 124 CTAs of 22 warps, where the usual rule runs 165 CTAs of
/// 16 warps, two on 33 SMs. Faster on the archives it takes (see docs/PERFORMANCE.md).
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
/// The last round is padded with [`RANS_NO_CHUNK`] to a whole round. So where a second
/// round has a few short chunks, they go to the CTAs of the shortest chunks of the first,
/// not of the longest, which would add their steps to the longest chain. Deterministic;
/// every chunk exactly once.
pub fn rans_chunk_order(
    entries: &[BlockEntry],
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
/// (`compress --target gpu`), and each block the dense kernel takes passes what it
/// checks before it would hand the block back (`device/src/dense/`): its streams within
/// the shared-memory caps (`fits`), at most `LENV_CAP` length varints (bytes without bit 7),
/// as many offset first bytes with a tail (bit 7) as tail bytes, and no tail byte with bit 7
/// (a distance of more than 14 bits), and a line layout whose table fits
/// (`dense_layout::line_table_fits`). A block with a rANS-coded match stream would need its
/// decode first: such an archive keeps the lane kernel.
pub fn dense_leaves_no_fallback(a: &Archive<'_>) -> bool {
    use crate::device::dense_layout::{
        line_table_fits, CMD_CAP, LENB_CAP, LENV_CAP, LIT_CAP, OFFB_CAP, TAILB_CAP,
    };
    use crate::device::format::{
        STREAM_COMMANDS, STREAM_LENGTHS, STREAM_OFFSETS, STREAM_OFFSET_TAILS,
    };
    use crate::device::lines::split_commands;
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
        // a slice with runs (FORMAT.md §5.8) of a block not self-contained: the rANS stage
        // hands it back
        let runs_left = e.lanes[STREAM_LITERALS] == LANES_TWO_BIT_RUNS
            && crate::device::own::own_slice(e, a.block_offsets[b], a.data.len() as u64).is_none();
        if !fits || !raw || runs_left {
            return false;
        }
        let s = a.slices(b);
        // a line layout whose table the dense kernel cannot place (FORMAT.md §4.6; a broken
        // layout fails, it is not handed back)
        let r = a.block_range(b);
        let block_len = (r.end - r.start) as u32;
        if let Ok((lines, _)) = split_commands(s[STREAM_COMMANDS], block_len, a.line_layouts) {
            if lines.n > 0 && !line_table_fits(block_len - lines.removed, lines.n) {
                return false;
            }
        }
        let lengths = s[STREAM_LENGTHS].iter().filter(|&&x| x < 0x80).count();
        let with_tail = s[STREAM_OFFSETS].iter().filter(|&&x| x >= 0x80).count();
        lengths <= LENV_CAP
            && with_tail == s[STREAM_OFFSET_TAILS].len()
            && s[STREAM_OFFSET_TAILS].iter().all(|&x| x < 0x80)
    })
}

#[cfg(test)]
mod tests {
    use super::{rans_chunk_order, rans_chunks, rans_warps_per_cta};
    use crate::device::format::{BlockEntry, LANES_RAW, STREAM_COMMANDS};

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

    /// The kernel's rule (`dense/`, `rans_stage`: CTA `c` takes the order's entries `c, c +
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

    /// The rANS plans worked by hand (132 SMs, groups of 64 unless said).
    #[test]
    fn rans_plans_worked_by_hand() {
        use super::{rans_plan, RansEntry, RansFacts, RansKernel, RansPlan};
        use crate::gpu::GpuTuning;
        let facts = |n_blocks, group_blocks, halves, kernel, two_bit, pair_tables_rule| RansFacts {
            n_blocks,
            group_blocks,
            halves,
            kernel,
            two_bit,
            pair_tables_rule,
        };
        let dflt = GpuTuning::default();
        // 287 blocks with wide slices, plain tables: 574 warps in 8-warp CTAs fit the 264
        // slots, so 4 blocks a chunk: 4 groups of 16 chunks and 31 blocks in 8: 72 CTAs
        let p = rans_plan(
            &facts(287, 64, 2, RansKernel::Plain, false, false),
            132,
            &dflt,
        );
        assert_eq!(
            p,
            RansPlan {
                warps_per_cta: 8,
                halves: 2,
                blocks_per_chunk: 4,
                grid: 72,
                staged_tables: 5,
                stage_expand: false,
                entry: RansEntry::Plain,
                solo: false,
            }
        );
        // five tables of 16 KiB and the pair slots (8 bytes for each of 12 pairs)
        assert_eq!(p.smem_bytes(), 5 * 16384 + 96);
        // the pairs' rule staged (no expansion table beside the pair slots): seven tables
        let p = rans_plan(
            &facts(287, 64, 2, RansKernel::Context, false, true),
            132,
            &dflt,
        );
        assert_eq!((p.staged_tables, p.entry), (7, RansEntry::Context));
        // and forced off by the tuning
        let off = GpuTuning::default().with_stage_pair_tables(Some(false));
        let p = rans_plan(
            &facts(287, 64, 2, RansKernel::Context, false, true),
            132,
            &off,
        );
        assert_eq!(p.staged_tables, 5);
        // dm3, packed: the solo grid of 11 blocks (22 warps), 20 groups of 6 chunks and 37
        // blocks in 4: 124 CTAs; the expansion table staged, so no room for the pairs
        let dm3 = facts(1317, 64, 2, RansKernel::Packed, false, true);
        let p = rans_plan(&dm3, 132, &dflt);
        assert_eq!(
            (p.warps_per_cta, p.blocks_per_chunk, p.grid, p.solo),
            (22, 11, 124, true)
        );
        assert_eq!((p.staged_tables, p.stage_expand), (5, true));
        assert_eq!(p.entry, RansEntry::PackedSolo);
        assert_eq!(p.smem_bytes(), 5 * 16384 + 1024 + 96);
        // without the expansion table the pairs fit again
        let no_expand = GpuTuning::default().with_stage_expansion_tables(Some(false));
        let p = rans_plan(&dm3, 132, &no_expand);
        assert_eq!((p.staged_tables, p.stage_expand), (7, false));
        // two-bit literals, 100 blocks of one warp: 8-warp CTAs (narrow): the two-bit entry;
        // 8 chunks of group 0, 36 blocks in 5: 13 CTAs
        let p = rans_plan(
            &facts(100, 64, 1, RansKernel::Plain, true, false),
            132,
            &dflt,
        );
        assert_eq!(
            (p.warps_per_cta, p.grid, p.entry),
            (8, 13, RansEntry::TwoBit)
        );
        // 5,000 such blocks need 625 CTAs of 8 > 264, yet keep 8-warp CTAs and the two-bit
        // entry (the one that leaves self-contained blocks); without two-bit slices: 16
        // warps, the plain entry
        let p = rans_plan(
            &facts(5000, 64, 1, RansKernel::Plain, true, false),
            132,
            &dflt,
        );
        assert_eq!((p.warps_per_cta, p.entry), (8, RansEntry::TwoBit));
        let p = rans_plan(
            &facts(5000, 64, 1, RansKernel::Plain, false, false),
            132,
            &dflt,
        );
        assert_eq!((p.warps_per_cta, p.entry), (16, RansEntry::Plain));
        // packed, 100 blocks: the usual grid (13 chunks) fits the SMs, no solo grid; narrow
        let p = rans_plan(
            &facts(100, 64, 1, RansKernel::Packed, false, false),
            132,
            &dflt,
        );
        assert_eq!((p.solo, p.entry), (false, RansEntry::PackedNarrow));
        // packed two-bit where the solo grid would fit (dm3's counts): 8-warp CTAs of 4 blocks
        // of two warps, the two-bit entry
        let p = rans_plan(
            &facts(1317, 64, 2, RansKernel::Packed, true, false),
            132,
            &dflt,
        );
        assert_eq!(
            (p.solo, p.warps_per_cta, p.blocks_per_chunk, p.entry),
            (false, 8, 4, RansEntry::TwoBit)
        );
        // groups of 3 blocks: chunks of at most 3 (33 groups, 1 block left): 34 CTAs of 3
        let p = rans_plan(
            &facts(100, 3, 1, RansKernel::Plain, false, false),
            132,
            &dflt,
        );
        assert_eq!((p.warps_per_cta, p.blocks_per_chunk, p.grid), (3, 3, 34));
        // no block: one CTA of 8 warps, which launches nothing (`rans_decode_slices`)
        let p = rans_plan(
            &facts(0, 64, 1, RansKernel::Plain, false, false),
            132,
            &dflt,
        );
        assert_eq!((p.warps_per_cta, p.grid), (8, 1));
    }

    /// The entry point table: two-bit literals take the two-bit entry only on a narrow grid
    /// that is not solo.
    #[test]
    fn rans_entry_table() {
        use super::{rans_entry, RansEntry as E, RansKernel as K};
        assert_eq!(rans_entry(K::Plain, false, true, false), E::Plain);
        assert_eq!(rans_entry(K::Context, false, false, false), E::Context);
        assert_eq!(rans_entry(K::Packed, false, false, false), E::Packed);
        assert_eq!(rans_entry(K::Packed, false, true, false), E::PackedNarrow);
        assert_eq!(rans_entry(K::Packed, false, true, true), E::PackedSolo);
        assert_eq!(rans_entry(K::Packed, true, true, false), E::TwoBit);
        assert_eq!(rans_entry(K::Context, true, true, false), E::TwoBit);
        assert_eq!(rans_entry(K::Plain, true, false, false), E::Plain);
        assert_eq!(rans_entry(K::Packed, true, true, true), E::PackedSolo);
        assert!(E::TwoBit.can_leave_self_contained());
        assert!(!E::PackedNarrow.can_leave_self_contained());
    }

    /// The dense kernel's grid, when it runs alone, when it is left the self-contained
    /// blocks, and the grids of the lane kernel and of a rANS launch that leaves them all.
    #[test]
    fn dense_and_lane_grids_worked_by_hand() {
        use super::{
            dense_alone, dense_grid, lane_grid, leaves_self_contained, rans_launch_grid,
            DeviceFacts, RansEntry,
        };
        use crate::device::dense_layout::{STAGES_ALL, STAGE_LATE_PARSE, STAGE_SEQ_PARSE};
        let h = DeviceFacts {
            sm_count: 132,
            dense_ctas_per_sm: 4,
        };
        assert_eq!(dense_grid(1000, h), 528);
        assert_eq!(dense_grid(100, h), 100);
        assert_eq!(dense_grid(0, h), 0);
        assert!(dense_alone(true, 100, 100, false, h));
        assert!(dense_alone(true, 528, 528, false, h));
        assert!(
            !dense_alone(true, 529, 529, false, h),
            "a CTA takes a second block"
        );
        assert!(
            !dense_alone(true, 100, 100, true, h),
            "the lane kernel follows"
        );
        assert!(!dense_alone(false, 100, 100, false, h));
        assert!(!dense_alone(true, 99, 100, false, h));
        assert!(leaves_self_contained(
            5,
            true,
            STAGES_ALL,
            RansEntry::TwoBit
        ));
        assert!(!leaves_self_contained(
            0,
            true,
            STAGES_ALL,
            RansEntry::TwoBit
        ));
        assert!(!leaves_self_contained(
            5,
            false,
            STAGES_ALL,
            RansEntry::TwoBit
        ));
        assert!(!leaves_self_contained(
            5,
            true,
            STAGES_ALL,
            RansEntry::Plain
        ));
        let late = STAGES_ALL | STAGE_LATE_PARSE;
        assert!(!leaves_self_contained(5, true, late, RansEntry::TwoBit));
        let seq = STAGES_ALL | STAGE_SEQ_PARSE;
        assert!(!leaves_self_contained(5, true, seq, RansEntry::TwoBit));
        assert!(leaves_self_contained(5, true, 1, RansEntry::TwoBit));
        // four warps a CTA; after the dense kernel 8 warps per SM (1,056), else 64 (8,448)
        assert_eq!(lane_grid(1000, 16384, true, 132), 250);
        assert_eq!(lane_grid(10_000, 16384, true, 132), 264);
        assert_eq!(lane_grid(4000, 16384, false, 132), 1000);
        assert_eq!(lane_grid(10_000, 16384, false, 132), 2112);
        assert_eq!(lane_grid(4000, 32768, true, 132), 1000);
        assert_eq!(lane_grid(1, 4096, true, 132), 1);
        assert_eq!(rans_launch_grid(72, 72, true, 287, 287), (1, 0));
        assert_eq!(rans_launch_grid(72, 72, true, 286, 287), (72, 72));
        assert_eq!(rans_launch_grid(72, 72, false, 287, 287), (72, 72));
    }

    /// The orders of four blocks of one table group (literal chains 100, 400, 200, 300 steps,
    /// raw command slices of 10, 0, 30 and 20 bytes: one copy step each but block 1's), one
    /// block a chunk on a grid of 2, worked by hand: chunks longest first in serpentine
    /// rounds [1, 3] then [2, 0] reversed; the dense order by expected finish (block 3 at
    /// 8 + 301, block 1 at 8 + 400, block 0 at 416 + 101, block 2 at 317 + 201); on a solo
    /// grid by command bytes instead (30, 20, 10, 0).
    #[test]
    fn block_orders_worked_by_hand() {
        use super::{block_orders, RansEntry, RansPlan};
        let e = |lit: u32, cmds: u32| {
            let mut b: BlockEntry = bytemuck::Zeroable::zeroed();
            b.decoded_len[0] = lit;
            b.lanes[0] = 1;
            b.decoded_len[STREAM_COMMANDS] = cmds;
            b.lanes[STREAM_COMMANDS] = LANES_RAW;
            b
        };
        let blocks = [e(100, 10), e(400, 0), e(200, 30), e(300, 20)];
        let plan = RansPlan {
            warps_per_cta: 1,
            halves: 1,
            blocks_per_chunk: 1,
            grid: 2,
            staged_tables: 5,
            stage_expand: false,
            entry: RansEntry::Plain,
            solo: false,
        };
        let o = block_orders(&blocks, &[0; 4], 0, |_| 1, 64, &plan, 132);
        assert_eq!(o.rans_chunk_order, vec![1, 3, 0, 2]);
        assert_eq!(o.dense_order, vec![3, 1, 0, 2]);
        assert_eq!(o.self_contained, 0);
        let solo = RansPlan { solo: true, ..plan };
        let o = block_orders(&blocks, &[0; 4], 0, |_| 1, 64, &solo, 132);
        assert_eq!(o.dense_order, vec![2, 3, 0, 1]);
    }

    /// Grids of the token and wavefront kernels: one CTA per `per_block` items, 1 to 32 per
    /// SM; `wave_copy` 8 per SM.
    #[test]
    fn item_grids_worked_by_hand() {
        use super::{item_grid, wave_copy_grid};
        assert_eq!(item_grid(0, 8, 132), 1);
        assert_eq!(item_grid(1, 8, 132), 1);
        assert_eq!(item_grid(17, 8, 132), 3);
        assert_eq!(item_grid(1 << 20, 8, 132), 4224);
        assert_eq!(item_grid(100, 0, 132), 100);
        assert_eq!(wave_copy_grid(132), 1056);
    }
}
