//! The host's plan of a GPU seek: from a request's ranges, the distinct blocks they lie in
//! (through a bit set over the archive's blocks, or a sort), the rANS stage's chunks over
//! those that need it, the direct order of a request of whole blocks, and the request buffer
//! the kernels read ([`Plan::bytes`]). Pure host code: tested without a GPU.

#[cfg(doc)]
use super::super::resident::GpuArchive;
use super::super::GpuError;
use crate::device::format::SeekRange;
use crate::device::rans::{KERNEL_MAX_WARPS, KERNEL_NARROW_WARPS, KERNEL_SOLO_WARPS};
use crate::gpu::schedule::RansEntry;

/// Blocks a CTA of the seek's rANS stage decodes at most: the blocks from a chunk's first (a
/// block asked for) on that lie in its table group, one warp (or pair) each, so that they
/// share the group's tables staged once in shared memory. Blocks of a chunk not asked for are
/// decoded into the scratch too and never read: with a CTA per block asked for, a batch of
/// random tiles held a group's tables per warp and ran in several rounds of CTAs. An entry
/// point whose launch bounds allow fewer warps takes fewer ([`seek_chunk_blocks`]).
pub const SEEK_RANS_BLOCKS: u32 = 8;

/// Blocks needing the seek's rANS stage up to which a request gives each its own CTA (chunks
/// of one block): so few CTAs run at once on the GPU, and a chunk would only add its other
/// blocks' chains to the asked block's (a block of N runs, whose chain is short, then waits
/// for its neighbours' chains of bases). Past it, chunks share their group's staged tables.
pub const SEEK_LONE_BLOCKS: u32 = 128;

/// Most warps per CTA of the rANS entry point `entry`: its launch bounds' `.maxntid` over 32
/// (`device::kernel_names::LAUNCH_BOUNDS`, written into the PTX by `build.rs`). A launch of
/// more threads than that is refused by the driver (`CUDA_ERROR_INVALID_VALUE`); up to it,
/// the registers `ptxas` gave the kernel fit the SM.
pub fn rans_max_warps(entry: RansEntry) -> u32 {
    match entry {
        RansEntry::Plain | RansEntry::Context | RansEntry::Packed => KERNEL_MAX_WARPS,
        RansEntry::PackedNarrow | RansEntry::TwoBit => KERNEL_NARROW_WARPS,
        RansEntry::PackedSolo => KERNEL_SOLO_WARPS,
    }
}

/// Blocks per chunk of the seek's rANS stage for an archive decoded by `entry` with `halves`
/// warps per block (`schedule::rans_halves`; 0 taken as 1): [`SEEK_RANS_BLOCKS`], or as many
/// as [`rans_max_warps`] holds when that is fewer (4 for the 8-warp entry points on an
/// archive with wide slices), at least 1.
pub fn seek_chunk_blocks(entry: RansEntry, halves: u32) -> u32 {
    (rans_max_warps(entry) / halves.max(1)).clamp(1, SEEK_RANS_BLOCKS)
}

/// The chunks of a seek's rANS stage for one archive: a chunk is up to `blocks` blocks from
/// its first, within its table group of `group_blocks` (FORMAT.md §5.1), one CTA of
/// `32 * halves * blocks` threads (`launch::seek`). [`plan`] lays chunks out with it and the
/// launch takes its CTA size from the plan's, so the two agree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SeekChunks {
    /// Blocks that share a table group (0 taken as 1).
    pub group_blocks: u32,
    /// Most blocks of a chunk: [`seek_chunk_blocks`] of the archive (0 taken as 1).
    pub blocks: u32,
    /// Up to this many blocks needing the rANS stage, a request's chunks are of one block
    /// ([`SEEK_LONE_BLOCKS`] for an archive).
    pub lone_blocks: u32,
}

impl SeekChunks {
    /// Whether a request [`plan`]ned with `planned` fits an archive of these chunks: the
    /// same groups and rule, and chunks of this size or of one block.
    pub fn admits(&self, planned: &SeekChunks) -> bool {
        planned.group_blocks == self.group_blocks
            && planned.lone_blocks == self.lone_blocks
            && (planned.blocks == self.blocks || planned.blocks == 1)
    }
}

/// A planned request: the request buffer's bytes and its layout.
#[derive(Debug, Default)]
pub struct Plan {
    /// Block order, take order (where there is one), rANS list, ranges, each 8-byte
    /// aligned.
    pub bytes: Vec<u8>,
    /// Blocks to decode (the order's entries, from byte 0).
    pub n_order: u32,
    /// Where the take order starts, where the request has one: `n_order` positions in the
    /// order, those of the blocks the dense kernel decodes from the data section alone
    /// first, so that its CTAs take them while the rANS stage decodes the others (none where
    /// the blocks are all of one kind: the order itself).
    pub takes_at: Option<u64>,
    /// Where the rANS list starts.
    pub rans_at: u64,
    /// Chunks of the rANS stage (their first blocks, ascending): every block of the order
    /// that needs that stage lies in one, `chunks.blocks` blocks from its first within its
    /// table group; chunks do not overlap.
    pub n_rans: u32,
    /// The chunk geometry the rANS list was laid out for: the archive's
    /// [`GpuArchive::seek_chunks`], with chunks of one block where few blocks need the
    /// stage ([`SeekChunks::lone_blocks`]).
    pub chunks: SeekChunks,
    /// Where the ranges start (none are written for a direct request).
    pub ranges_at: u64,
    /// Ranges.
    pub n_ranges: u32,
    /// Bytes of all ranges together: the output's length.
    pub out_len: u64,
    /// A direct request: every range is whole blocks (a multiple of `block_size` long, but
    /// the last range, which may end at the input's short last block) and few blocks are
    /// asked twice ([`DIRECT_REPEATS`]); the order holds each range's blocks in request order
    /// (a block asked twice is decoded twice) and the dense kernel writes the blocks straight
    /// into the caller's buffer, order position `i` at byte `i * block_size`, and a status
    /// word pair per order position, with no slots and no gather (`decode_blocks_seek`'s
    /// `range_status`).
    pub direct: bool,
    /// A direct request whose ranges are not all one block: each range's blocks (empty
    /// otherwise, where the status word pairs are the ranges').
    pub run_blocks: Vec<u32>,
    /// The planner's working lists, kept so that [`plan_into`] allocates nothing for a
    /// request no larger than one this plan held before.
    scratch: PlanScratch,
}

/// [`plan_into`]'s working lists (each cleared and refilled per request).
#[derive(Debug, Default)]
struct PlanScratch {
    /// The request's distinct blocks, ascending.
    distinct: Vec<u32>,
    /// The bit set over the archive's blocks and each word's rank ([`asked_blocks`]).
    bits: Vec<u64>,
    rank: Vec<u32>,
    /// The distinct blocks that need the rANS stage.
    needs: Vec<u32>,
    /// A direct request's order: each range's blocks as asked.
    direct: Vec<u32>,
    /// The take order.
    takes: Vec<u32>,
}

/// Largest plan (its buffers' capacity in bytes, [`Plan::kept_bytes`]) that
/// `GpuArchive::read_ranges` keeps for the next request: 16 MiB, a request of about 400,000
/// ranges; a larger one is freed, so that one huge request does not hold its memory for the
/// archive's lifetime.
pub(crate) const SPARE_PLAN_BYTES: usize = 16 << 20;

impl Plan {
    /// Bytes of host memory its buffers hold (their capacity), the request bytes and the
    /// planner's lists together.
    pub(crate) fn kept_bytes(&self) -> usize {
        let sc = &self.scratch;
        self.bytes.capacity()
            + 4 * (self.run_blocks.capacity()
                + sc.distinct.capacity()
                + sc.rank.capacity()
                + sc.needs.capacity()
                + sc.direct.capacity()
                + sc.takes.capacity())
            + 8 * sc.bits.capacity()
    }

    /// Status words the kernels write for this request: a pair per order position of a
    /// direct request, else per range.
    pub fn status_words(&self) -> usize {
        2 * match self.direct {
            true => self.n_order,
            false => self.n_ranges,
        } as usize
    }
}

/// The blocks of `1 << shift` bytes that range `(off, len)` (at least one byte) lies in.
fn range_blocks(&(off, len): &(u64, u64), shift: u32) -> std::ops::RangeInclusive<u32> {
    (off >> shift) as u32..=((off + len - 1) >> shift) as u32
}

/// Why a range cannot be read.
fn range_error(i: usize, off: u64, len: u64, size: u64) -> GpuError {
    GpuError::Status(format!(
        "range {i} ({off}+{len}) is not inside the original data of {size} bytes"
    ))
}

/// Requests of at least this many ranges are planned on the rayon pool: on one thread of the
/// 2-core VM the plan of 100,000 ranges took 1-3 ms (`cargo run --release --example
/// seek_plan`), as long as the GPU's part of such a request on a small archive; smaller
/// requests stay on the calling thread. [`plan`] runs before the seek buffers are locked, so
/// a caller on the pool never waits for that lock inside it.
pub const PLAN_PAR_RANGES: usize = 16_384;

/// A request of whole blocks is direct ([`Plan::direct`]) where at most one block in this many
/// that it asks for is asked for again.
pub const DIRECT_REPEATS: usize = 8;

/// Plans a request for `ranges` (`(offset, length)` in original bytes, each of at least one
/// byte, inside the original): the sorted, distinct blocks they lie in, the rANS stage's
/// chunks covering those of them not in `own` (`chunks`: the archive's
/// [`GpuArchive::seek_chunks`]), and each range's place in the output (back to back, in
/// request order) and its first slot. `block_size` is a power of two (FORMAT.md §2). From
/// [`PLAN_PAR_RANGES`] ranges on, the work is shared over the rayon pool; the plan is the
/// same either way.
///
/// Errors: [`GpuError::Status`] naming the first range that is empty or reaches past
/// `original_size`, or for a block size that is not a power of two.
pub fn plan(
    ranges: &[(u64, u64)],
    block_size: u32,
    original_size: u64,
    own: &[bool],
    chunks: SeekChunks,
) -> Result<Plan, GpuError> {
    let mut p = Plan::default();
    plan_into(&mut p, ranges, block_size, original_size, own, chunks)?;
    Ok(p)
}

/// [`plan`] into `p`, reusing its buffers: the same plan, without the allocations (and the
/// first touches of fresh pages) where `p` held a request at least as large before. On an
/// error `p` is left holding no request (`n_ranges == 0`).
///
/// Errors: as [`plan`].
pub fn plan_into(
    p: &mut Plan,
    ranges: &[(u64, u64)],
    block_size: u32,
    original_size: u64,
    own: &[bool],
    chunks: SeekChunks,
) -> Result<(), GpuError> {
    plan_with(
        p,
        ranges,
        block_size,
        original_size,
        own,
        chunks,
        ranges.len() >= PLAN_PAR_RANGES,
    )
}

/// [`plan_into`], on the rayon pool where `par`.
#[allow(clippy::too_many_arguments)]
fn plan_with(
    p: &mut Plan,
    ranges: &[(u64, u64)],
    block_size: u32,
    original_size: u64,
    own: &[bool],
    chunks: SeekChunks,
    par: bool,
) -> Result<(), GpuError> {
    use rayon::prelude::*;
    p.n_ranges = 0;
    if !block_size.is_power_of_two() {
        return Err(GpuError::Status(format!(
            "block size {block_size} is not a power of two (FORMAT.md §2)"
        )));
    }
    let shift = block_size.trailing_zeros();
    // One pass over the request: the first range that is empty or past the end, whether
    // every range is whole blocks (the last one possibly ending at the archive's short last
    // block, so that every block's output starts at a multiple of the block size), the blocks
    // touched (with repeats) and the bytes.
    let bs = block_size as u64;
    let n = ranges.len();
    let scan = |(i, &(off, len)): (usize, &(u64, u64))| {
        if len == 0 || off > original_size || len > original_size - off {
            return (i, false, 0, 0);
        }
        let b = range_blocks(&(off, len), shift);
        let blocks = (b.end() - b.start()) as u64 + 1;
        let whole = off & (bs - 1) == 0
            && (len & (bs - 1) == 0 || i + 1 == n && off + len == original_size);
        (usize::MAX, whole, blocks, len)
    };
    let join = |a: (usize, bool, u64, u64), b: (usize, bool, u64, u64)| {
        (a.0.min(b.0), a.1 && b.1, a.2 + b.2, a.3 + b.3)
    };
    let none = (usize::MAX, true, 0, 0);
    let (first_bad, whole_blocks, asked, out_len) = match par {
        true => ranges
            .par_iter()
            .enumerate()
            .map(scan)
            .reduce(|| none, join),
        false => ranges.iter().enumerate().map(scan).fold(none, join),
    };
    if first_bad != usize::MAX {
        let (off, len) = ranges[first_bad];
        return Err(range_error(first_bad, off, len, original_size));
    }
    // a bit set over the archive's blocks where the request touches many of them, else a
    // sort: the work follows the request, not the archive's size
    let dense = asked.saturating_mul(64) >= own.len() as u64;
    let sc = &mut p.scratch;
    asked_blocks(ranges, shift, own.len(), dense, par, sc);
    // the blocks that need the rANS stage, ascending
    let not_own = |b: &u32| !own[*b as usize];
    sc.needs.clear();
    match par {
        true => sc
            .needs
            .par_extend(sc.distinct.par_iter().copied().filter(not_own)),
        false => sc.needs.extend(sc.distinct.iter().copied().filter(not_own)),
    }
    let needs = &sc.needs;
    let chunks = if needs.len() <= chunks.lone_blocks as usize {
        SeekChunks {
            blocks: 1,
            ..chunks
        }
    } else {
        chunks
    };
    let group = chunks.group_blocks.max(1) as u64;
    let chunk = chunks.blocks.max(1) as u64;
    // A chunk never crosses a group's end, so the request's blocks split at group starts are
    // planned piece by piece alike (a piece's first block starts a chunk), on the pool where
    // `par`.
    let rans: Vec<u32> = if par && !needs.is_empty() {
        let pieces = 4 * rayon::current_num_threads();
        let mut cuts: Vec<usize> = (0..=pieces)
            .map(|k| {
                let mut i = k * needs.len() / pieces;
                while i > 0
                    && i < needs.len()
                    && needs[i] as u64 / group == needs[i - 1] as u64 / group
                {
                    i += 1;
                }
                i
            })
            .collect();
        cuts.dedup();
        cuts.par_windows(2)
            .map(|w| chunk_starts(&needs[w[0]..w[1]], group, chunk))
            .collect::<Vec<Vec<u32>>>()
            .concat()
    } else {
        chunk_starts(needs, group, chunk)
    };
    // Whole blocks go direct unless many are asked more than once: a direct request decodes
    // a block once per range that asks for it, where the slots decode it once and the gather
    // copies it, a fraction of a decode's cost (PERFORMANCE.md, random access).
    let distinct = &sc.distinct;
    let direct = whole_blocks && (asked - distinct.len() as u64) * DIRECT_REPEATS as u64 <= asked;
    let runs = direct && asked > ranges.len() as u64;
    // a direct request's order: the ranges' blocks as asked
    let blocks = |r: &(u64, u64)| range_blocks(r, shift);
    sc.direct.clear();
    match (direct, par) {
        (true, true) => sc
            .direct
            .par_extend(ranges.par_iter().flat_map_iter(blocks)),
        (true, false) => sc.direct.extend(ranges.iter().flat_map(blocks)),
        (false, _) => {}
    }
    let order: &[u32] = if direct { &sc.direct } else { distinct };
    p.run_blocks.clear();
    if runs {
        p.run_blocks.extend(ranges.iter().map(|r| {
            let b = blocks(r);
            b.end() - b.start() + 1
        }));
    }
    let (n_order, n_rans) = (order.len() as u32, rans.len() as u32);
    // the positions of the self-contained blocks, then the others', where there are both
    let takes = &mut sc.takes;
    takes.clear();
    if n_rans > 0 {
        // (the distinct order's are those not in `needs`; a direct order repeats blocks)
        let n_own = match (direct, par) {
            (false, _) => order.len() - needs.len(),
            (true, true) => order.par_iter().filter(|&&b| own[b as usize]).count(),
            (true, false) => order.iter().filter(|&&b| own[b as usize]).count(),
        };
        if n_own > 0 {
            takes.resize(order.len(), 0);
            if par {
                let pick = |want: bool| {
                    let at = |(i, &b): (usize, &u32)| (own[b as usize] == want).then_some(i as u32);
                    order
                        .par_iter()
                        .enumerate()
                        .filter_map(at)
                        .collect::<Vec<u32>>()
                };
                let (first, rest) = rayon::join(|| pick(true), || pick(false));
                takes[..n_own].copy_from_slice(&first);
                takes[n_own..].copy_from_slice(&rest);
            } else {
                // (without a branch per block: the kinds interleave at random)
                let (mut a, mut z) = (0usize, n_own);
                for (i, &b) in order.iter().enumerate() {
                    let o = own[b as usize] as usize;
                    takes[if o == 1 { a } else { z }] = i as u32;
                    a += o;
                    z += 1 - o;
                }
            }
        }
    }
    let takes = &sc.takes;
    let align8 = |n: usize| n.div_ceil(8) * 8;
    let takes_at = align8(order.len() * 4);
    let rans_at = takes_at + align8(takes.len() * 4);
    let ranges_at = rans_at + align8(rans.len() * 4);
    let bytes = &mut p.bytes;
    bytes.clear();
    bytes.resize(ranges_at + if direct { 0 } else { ranges.len() * 32 }, 0);
    bytes[..order.len() * 4].copy_from_slice(bytemuck::cast_slice(order));
    bytes[takes_at..takes_at + takes.len() * 4].copy_from_slice(bytemuck::cast_slice(takes));
    bytes[rans_at..rans_at + rans.len() * 4].copy_from_slice(bytemuck::cast_slice(&rans));
    // a range's first slot is its first block's rank in the order: the set bits below it,
    // counted from each word's rank, or a binary search
    let (bits, rank) = (&sc.bits, &sc.rank);
    let slot = |b: u64| match dense {
        true => {
            let (w, k) = ((b / 64) as usize, b % 64);
            rank[w] + (bits[w] & ((1u64 << k) - 1)).count_ones()
        }
        false => distinct.partition_point(|&x| (x as u64) < b) as u32,
    };
    // each piece of ranges is written from its first byte in the output (`out_at`), the
    // pieces' lengths summed before them
    let fill = |piece: &[(u64, u64)], out: &mut [u8], mut out_at: u64| {
        for (&(off, len), g) in piece.iter().zip(out.as_chunks_mut::<32>().0) {
            let first_block = off >> shift;
            g.copy_from_slice(bytemuck::bytes_of(&SeekRange {
                offset: off,
                len,
                out_at,
                first_slot: slot(first_block),
                first_block: first_block as u32,
            }));
            out_at += len;
        }
    };
    let out = &mut bytes[ranges_at..];
    if direct {
        // (no ranges: the dense kernel places each block by its position in the order)
    } else if par {
        const PIECE: usize = 4096;
        let lengths: Vec<u64> = ranges
            .par_chunks(PIECE)
            .map(|p| p.iter().map(|r| r.1).sum::<u64>())
            .collect();
        let starts = sums_before(&lengths);
        ranges
            .par_chunks(PIECE)
            .zip(out.par_chunks_mut(32 * PIECE))
            .zip(starts)
            .for_each(|((piece, out), at)| fill(piece, out, at));
    } else {
        fill(ranges, out, 0);
    }
    p.n_order = n_order;
    p.takes_at = (!takes.is_empty()).then_some(takes_at as u64);
    p.rans_at = rans_at as u64;
    p.n_rans = n_rans;
    p.chunks = chunks;
    p.ranges_at = ranges_at as u64;
    p.n_ranges = ranges.len() as u32;
    p.out_len = out_len;
    p.direct = direct;
    Ok(())
}

/// Each item's sum of the items before it (an exclusive prefix sum): where each piece's
/// part starts.
fn sums_before<T: Copy + Default + std::ops::AddAssign>(items: &[T]) -> Vec<T> {
    items
        .iter()
        .scan(T::default(), |n, &x| {
            let at = *n;
            *n += x;
            Some(at)
        })
        .collect()
}

/// The rANS stage's chunks over `needs` (ascending blocks that need the stage, the first a
/// chunk's): each chunk starts at the first block at or past the end of the chunk before and
/// covers `chunk` blocks, or fewer where its group of `group` blocks ends first.
fn chunk_starts(needs: &[u32], group: u64, chunk: u64) -> Vec<u32> {
    // (without a branch per block, whose outcome is as random as the request; a group's end
    // without a division where groups are a power of two, as the encoder writes them)
    let pow2 = group.is_power_of_two();
    let mut starts = vec![0u32; needs.len()];
    let (mut cover, mut n) = (0u64, 0);
    for &b in needs {
        let b = b as u64;
        let group_end = match pow2 {
            true => (b | (group - 1)) + 1,
            false => (b / group + 1) * group,
        };
        let starts_one = b >= cover;
        cover = if starts_one {
            (b + chunk).min(group_end)
        } else {
            cover
        };
        starts[n] = b as u32;
        n += starts_one as usize;
    }
    starts.truncate(n);
    starts
}

/// Largest bit set, in 64-bit words (4,096: 32 KiB), for which [`asked_blocks`] on the pool
/// gives each piece of the request a copy of its own and ORs the copies; a larger set is
/// shared and set with atomic ORs.
const PLAN_LOCAL_WORDS: usize = 4096;

/// The distinct blocks `ranges` lie in, ascending, into `sc.distinct`, of an archive of
/// `n_blocks` blocks of `1 << shift` bytes: through a bit set over the archive's blocks
/// (`dense`; kept in `sc.bits`, with each word's rank in `sc.rank`: the set bits before it)
/// or a sort of the request's (the bit set and ranks then empty); on the rayon pool where
/// `par`.
fn asked_blocks(
    ranges: &[(u64, u64)],
    shift: u32,
    n_blocks: usize,
    dense: bool,
    par: bool,
    sc: &mut PlanScratch,
) {
    use rayon::prelude::*;
    use std::sync::atomic::{AtomicU64, Ordering};
    let blocks = |r: &(u64, u64)| range_blocks(r, shift);
    sc.bits.clear();
    sc.rank.clear();
    sc.distinct.clear();
    if !dense {
        let v = &mut sc.distinct;
        match par {
            true => v.par_extend(ranges.par_iter().flat_map_iter(blocks)),
            false => v.extend(ranges.iter().flat_map(blocks)),
        }
        match par {
            true => v.par_sort_unstable(),
            false => v.sort_unstable(),
        }
        v.dedup();
        return;
    }
    let words = n_blocks.div_ceil(64);
    sc.bits.resize(words, 0);
    let set = |mut bits: Vec<u64>, b: u32| {
        bits[(b / 64) as usize] |= 1 << (b % 64);
        bits
    };
    match par {
        // a small set: a copy per piece of the request, joined (atomics on a few words
        // would have every thread contend for the same cache lines)
        true if words <= PLAN_LOCAL_WORDS => {
            let joined = ranges
                .par_iter()
                .with_min_len(4096)
                .flat_map_iter(blocks)
                .fold(|| vec![0u64; words], set)
                .reduce(
                    || vec![0u64; words],
                    |mut a, b| {
                        a.iter_mut().zip(b).for_each(|(x, y)| *x |= y);
                        a
                    },
                );
            sc.bits.copy_from_slice(&joined);
        }
        // a large one: one copy, set bit by bit with atomic ORs that rarely meet
        true => {
            const _: () = assert!(
                size_of::<AtomicU64>() == size_of::<u64>()
                    && align_of::<AtomicU64>() == align_of::<u64>()
            );
            // SAFETY: AtomicU64 has u64's size and alignment (asserted) and the same valid
            // values; the words are borrowed exclusively by `sc.bits` for the atomics' use.
            let atoms = unsafe { &*(sc.bits.as_mut_slice() as *mut [u64] as *const [AtomicU64]) };
            ranges.par_iter().flat_map_iter(blocks).for_each(|b| {
                atoms[(b / 64) as usize].fetch_or(1 << (b % 64), Ordering::Relaxed);
            });
        }
        false => {
            for b in ranges.iter().flat_map(blocks) {
                sc.bits[(b / 64) as usize] |= 1 << (b % 64);
            }
        }
    }
    // the set bits' blocks and each word's rank (the set bits before it), a piece of the set
    // at a time from its first rank: the pieces' counts summed before them
    const EXTRACT_WORDS: usize = 2048;
    let bits = &sc.bits;
    let count = |c: &[u64]| c.iter().map(|w| w.count_ones()).sum::<u32>();
    let counts: Vec<u32> = match par {
        true => bits.par_chunks(EXTRACT_WORDS).map(count).collect(),
        false => bits.chunks(EXTRACT_WORDS).map(count).collect(),
    };
    let firsts = sums_before(&counts);
    sc.distinct.resize(counts.iter().sum::<u32>() as usize, 0);
    sc.rank.resize(words, 0);
    let mut outs = Vec::with_capacity(counts.len());
    let mut rest = &mut sc.distinct[..];
    for &c in &counts {
        let (piece, tail) = rest.split_at_mut(c as usize);
        outs.push(piece);
        rest = tail;
    }
    // one piece: its blocks from `first_block` on, its words' ranks from `first`
    fn piece(first_block: usize, bits: &[u64], rank: &mut [u32], out: &mut [u32], first: u32) {
        let mut k = 0;
        for (i, (&word, r)) in bits.iter().zip(rank).enumerate() {
            *r = first + k as u32;
            let base = (first_block + i * 64) as u32;
            let mut m = word;
            while m != 0 {
                out[k] = base + m.trailing_zeros();
                k += 1;
                m &= m - 1;
            }
        }
    }
    let w = EXTRACT_WORDS;
    match par {
        true => bits
            .par_chunks(w)
            .zip(sc.rank.par_chunks_mut(w))
            .zip(outs.par_iter_mut().zip(&firsts))
            .enumerate()
            .for_each(|(p, ((b, r), (o, &f)))| piece(p * w * 64, b, r, o, f)),
        false => bits
            .chunks(w)
            .zip(sc.rank.chunks_mut(w))
            .zip(outs.iter_mut().zip(&firsts))
            .enumerate()
            .for_each(|(p, ((b, r), (o, &f)))| piece(p * w * 64, b, r, o, f)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunks(group_blocks: u32, blocks: u32) -> SeekChunks {
        SeekChunks {
            group_blocks,
            blocks,
            lone_blocks: 0,
        }
    }

    /// Up to `lone_blocks` blocks needing the rANS stage, chunks of one block: blocks 0, 3,
    /// 4 (3 self-contained) in groups of 64 with chunks of 8 and the rule at 2: by hand, two
    /// blocks need the stage, so chunks 0 and 4 of one block each; at 1, one chunk (0-7).
    #[test]
    fn few_blocks_get_a_chunk_each() {
        let mut own = vec![false; 64];
        own[3] = true;
        let r: Vec<(u64, u64)> = [0u64, 3, 4].iter().map(|&b| (b * 4096, 10)).collect();
        let rule = |lone_blocks| SeekChunks {
            lone_blocks,
            ..chunks(64, 8)
        };
        let p = plan(&r, 4096, 64 * 4096, &own, rule(2)).unwrap();
        assert_eq!(rans_of(&p), [0, 4]);
        assert_eq!(p.chunks.blocks, 1);
        assert!(rule(2).admits(&p.chunks));
        let p = plan(&r, 4096, 64 * 4096, &own, rule(1)).unwrap();
        assert_eq!(rans_of(&p), [0]);
        assert_eq!(p.chunks, rule(1));
        assert!(!rule(1).admits(&chunks(64, 4)));
        assert!(!rule(1).admits(&chunks(32, 8)));
    }

    /// Each rANS entry point's most warps per CTA, by hand from its launch bounds (16 for
    /// the usual kernels, 8 for the narrow ones, 24 for the solo one), and the same as
    /// `.maxntid` / 32 of its kernel name in the bounds `build.rs` writes into the PTX.
    #[test]
    fn rans_max_warps_are_the_entry_points_launch_bounds() {
        use crate::device::kernel_names::LAUNCH_BOUNDS;
        for (entry, name, warps) in [
            (RansEntry::Plain, "rans_decode_slices", 16),
            (RansEntry::Context, "rans_decode_slices_ctx", 16),
            (RansEntry::Packed, "rans_decode_slices_pack", 16),
            (RansEntry::PackedNarrow, "rans_decode_slices_pack_narrow", 8),
            (RansEntry::TwoBit, "rans_decode_slices_two_bit", 8),
            (RansEntry::PackedSolo, "rans_decode_slices_pack_solo", 24),
        ] {
            assert_eq!(rans_max_warps(entry), warps, "{entry:?}");
            let bound = LAUNCH_BOUNDS.iter().find(|b| b.0 == name).expect(name);
            assert_eq!(bound.1, 32 * warps, "{name}");
        }
    }

    /// Blocks per seek chunk, by hand: 8 wherever 8 blocks' warps fit the entry point's
    /// bounds; 4 for the 8-warp entry points with a pair of warps per block (wide slices,
    /// the archive whose launch of 16 warps the narrow kernel's `.maxntid 256` refused).
    #[test]
    fn seek_chunks_fit_the_entry_points_launch_bounds() {
        use RansEntry as E;
        assert_eq!(seek_chunk_blocks(E::PackedNarrow, 2), 4);
        assert_eq!(seek_chunk_blocks(E::TwoBit, 2), 4);
        assert_eq!(seek_chunk_blocks(E::PackedNarrow, 1), 8);
        assert_eq!(seek_chunk_blocks(E::TwoBit, 1), 8);
        assert_eq!(seek_chunk_blocks(E::Plain, 2), 8);
        assert_eq!(seek_chunk_blocks(E::Context, 2), 8);
        assert_eq!(seek_chunk_blocks(E::Packed, 2), 8);
        assert_eq!(seek_chunk_blocks(E::PackedSolo, 2), 8);
        assert_eq!(seek_chunk_blocks(E::Plain, 1), 8);
        assert_eq!(seek_chunk_blocks(E::Plain, 0), 8);
        for e in [
            E::Plain,
            E::Context,
            E::Packed,
            E::PackedNarrow,
            E::TwoBit,
            E::PackedSolo,
        ] {
            for halves in [1, 2] {
                let threads = 32 * halves * seek_chunk_blocks(e, halves);
                let bound = if matches!(e, E::PackedNarrow | E::TwoBit) {
                    256
                } else {
                    512
                };
                assert!(threads <= bound, "{e:?} halves {halves}: {threads} threads");
            }
        }
    }

    /// Chunks of 4 blocks (a narrow entry point with pairs of warps) in groups of 64: blocks
    /// 0, 3, 4, 9, 10, 13 asked for; by hand: 0 covers 0-3, 4 covers 4-7, 9 covers 9-12, 13
    /// covers 13-16. With chunks of 8: 0 covers 0-7, 9 covers 9-16.
    #[test]
    fn plan_lays_out_chunks_of_the_given_size() {
        let own = vec![false; 64];
        let r: Vec<(u64, u64)> = [0u64, 3, 4, 9, 10, 13]
            .iter()
            .map(|&b| (b * 4096 + 100, 5))
            .collect();
        let p = plan(&r, 4096, 64 * 4096, &own, chunks(64, 4)).unwrap();
        assert_eq!(rans_of(&p), [0, 4, 9, 13]);
        assert_eq!(p.chunks, chunks(64, 4));
        let p = plan(&r, 4096, 64 * 4096, &own, chunks(64, 8)).unwrap();
        assert_eq!(rans_of(&p), [0, 9]);
    }

    fn rans_of(p: &Plan) -> Vec<u32> {
        bytemuck::pod_collect_to_vec(
            &p.bytes[p.rans_at as usize..p.rans_at as usize + 4 * p.n_rans as usize],
        )
    }

    /// Chunks of 8 blocks within groups of 16: blocks 0, 3, 8, 9, 15, 16, 30, 40 asked for,
    /// block 3 self-contained; by hand: 0 covers 0-7, 8 covers 8-15, 16 covers 16-23, 30
    /// covers 30-31 (its group ends at 32), 40 covers 40-47. Within groups of 12 (the format
    /// allows any size): 0 covers 0-7, 8 covers 8-11, 15 covers 15-22, 30 covers 30-35, 40
    /// covers 40-47.
    #[test]
    fn plan_covers_the_rans_blocks_with_chunks_inside_groups() {
        let mut own = vec![false; 64];
        own[3] = true;
        let r: Vec<(u64, u64)> = [0u64, 3, 8, 9, 15, 16, 30, 40]
            .iter()
            .map(|&b| (b * 4096 + 7, 10))
            .collect();
        let p = plan(&r, 4096, 64 * 4096, &own, chunks(16, 8)).unwrap();
        assert_eq!(p.n_order, 8);
        assert_eq!(rans_of(&p), [0, 8, 16, 30, 40]);
        let p = plan(&r, 4096, 64 * 4096, &own, chunks(12, 8)).unwrap();
        assert_eq!(rans_of(&p), [0, 8, 15, 30, 40]);
    }

    /// [`plan_with`] into a new plan.
    fn plan_on(
        ranges: &[(u64, u64)],
        block_size: u32,
        size: u64,
        own: &[bool],
        ch: SeekChunks,
        par: bool,
    ) -> Result<Plan, GpuError> {
        let mut p = Plan::default();
        plan_with(&mut p, ranges, block_size, size, own, ch, par).map(|()| p)
    }

    /// A plan's fields but its bytes and its scratch, in declaration order.
    type PlanFields<'a> = (
        u32,
        Option<u64>,
        u64,
        u32,
        SeekChunks,
        u64,
        u32,
        u64,
        bool,
        &'a [u32],
    );

    /// `p`'s [`PlanFields`].
    fn fields(p: &Plan) -> PlanFields<'_> {
        (
            p.n_order,
            p.takes_at,
            p.rans_at,
            p.n_rans,
            p.chunks,
            p.ranges_at,
            p.n_ranges,
            p.out_len,
            p.direct,
            &p.run_blocks,
        )
    }

    /// `read_ranges` keeps the plan of 100,000 8 KiB windows for the next request and frees
    /// that of 600,000 ([`SPARE_PLAN_BYTES`]: about 400,000 ranges), each over an archive of
    /// 3,276,800 blocks of 16 KiB; a plan keeps at least its request's bytes.
    #[test]
    fn spare_plans_stop_at_about_400_000_ranges() {
        let mut r = crate::gpu::tokens::Rng::new(59);
        let n_blocks = 3_276_800usize;
        let own = vec![false; n_blocks];
        let size = n_blocks as u64 * (16 << 10);
        for (n, kept) in [(100_000usize, true), (600_000, false)] {
            let ranges: Vec<(u64, u64)> = (0..n).map(|_| (r.below(size - 8192), 8192)).collect();
            let p = plan(&ranges, 16 << 10, size, &own, chunks(64, 8)).unwrap();
            assert!(p.kept_bytes() >= p.bytes.len());
            assert_eq!(p.kept_bytes() <= SPARE_PLAN_BYTES, kept, "{n} windows");
        }
    }

    /// A plan reused for one request after another (direct tiles, windows through the bit
    /// set and through the sort, runs, repeats, small and over [`PLAN_PAR_RANGES`], on one
    /// thread and on the pool) is each time the fresh plan of its request, field by field;
    /// after a refused request it holds none.
    #[test]
    fn a_reused_plan_is_the_fresh_plan() {
        let mut r = crate::gpu::tokens::Rng::new(53);
        let mut reused = Plan::default();
        for n_blocks in [3_000usize, 400_000] {
            let own: Vec<bool> = (0..n_blocks).map(|_| r.below(3) == 0).collect();
            let size = n_blocks as u64 * 4096;
            for round in 0..24 {
                let n = match round % 4 {
                    0 => 1 + r.below(50) as usize,
                    1 => 1 + r.below(5_000) as usize,
                    2 => PLAN_PAR_RANGES + r.below(3_000) as usize,
                    _ => 1 + r.below(300) as usize,
                };
                let ranges: Vec<(u64, u64)> = match round % 3 {
                    // whole blocks, runs of one to three, a few asked twice
                    0 => (0..n)
                        .map(|_| {
                            let k = 1 + r.below(3);
                            let b = r.below(n_blocks as u64 - k);
                            (b * 4096, k * 4096)
                        })
                        .collect(),
                    _ => random_ranges(&mut r, n, size, 20_000),
                };
                let ch = SeekChunks {
                    lone_blocks: r.below(3) as u32 * 16,
                    ..chunks(16, 8)
                };
                let par = r.below(2) == 1;
                plan_with(&mut reused, &ranges, 4096, size, &own, ch, par).unwrap();
                let fresh = plan_on(&ranges, 4096, size, &own, ch, par).unwrap();
                assert!(reused.bytes == fresh.bytes, "round {round}: {n} ranges");
                assert_eq!(fields(&reused), fields(&fresh), "round {round}");
            }
            let e = plan_into(
                &mut reused,
                &[(0, 8), (size, 1)],
                4096,
                size,
                &own,
                chunks(16, 8),
            );
            assert!(e.is_err());
            assert_eq!(reused.n_ranges, 0);
        }
    }

    /// The bit set and the sort, on one thread and on the pool, give the same blocks: random
    /// requests of 1 to 3,000 ranges of up to 40 KiB over 5,000 and 600,000 blocks of 4 KiB
    /// (a bit set of one piece and of five), against a `BTreeSet` of every block touched; each
    /// word's rank is the count of those blocks below the word.
    #[test]
    fn asked_blocks_are_the_same_by_bit_set_and_by_sort() {
        let mut r = crate::gpu::tokens::Rng::new(17);
        let mut sc = PlanScratch::default();
        for (n_blocks, rounds) in [(5_000usize, 200), (600_000, 40)] {
            for _ in 0..rounds {
                let n = 1 + r.below(3_000) as usize;
                let size = n_blocks as u64 * 4096;
                let ranges = random_ranges(&mut r, n, size, 40 << 10);
                let want: Vec<u32> = ranges
                    .iter()
                    .flat_map(|&(o, l)| (o / 4096) as u32..=((o + l - 1) / 4096) as u32)
                    .collect::<std::collections::BTreeSet<u32>>()
                    .into_iter()
                    .collect();
                // (one scratch for every request and way: each refills it)
                for (dense, par) in [(true, false), (false, false), (true, true), (false, true)] {
                    asked_blocks(&ranges, 12, n_blocks, dense, par, &mut sc);
                    let (order, rank) = (&sc.distinct, &sc.rank);
                    assert_eq!(*order, want);
                    if dense {
                        assert_eq!(rank.len(), n_blocks.div_ceil(64));
                        for (w, &k) in rank.iter().enumerate() {
                            let below = want.partition_point(|&b| (b as usize) < w * 64);
                            assert_eq!(k as usize, below, "word {w}");
                        }
                    }
                }
            }
        }
    }

    /// A request planned through the bit set (an archive of 2,000 blocks) and through the
    /// sort (the same blocks first in an archive of a million) lays out the same bytes: the
    /// order, the rANS chunks and each range's slot; random requests of 1 to 40 ranges, a
    /// block in five self-contained.
    #[test]
    fn plans_by_bit_set_and_by_sort_are_the_same() {
        let mut r = crate::gpu::tokens::Rng::new(29);
        let small: Vec<bool> = (0..2_000).map(|_| r.below(5) == 0).collect();
        let mut big = small.clone();
        big.resize(1_000_000, false);
        let size = 2_000 * 4096u64;
        for _ in 0..300 {
            let n = 1 + r.below(40) as usize;
            let ranges = random_ranges(&mut r, n, size, 20_000);
            let ch = SeekChunks {
                lone_blocks: r.below(3) as u32 * 8,
                ..chunks(16, 8)
            };
            let a = plan(&ranges, 4096, size, &small, ch).unwrap();
            let b = plan(&ranges, 4096, size, &big, ch).unwrap();
            assert!(a.bytes == b.bytes, "{ranges:?}");
            assert_eq!(
                (a.n_order, a.n_rans, a.chunks),
                (b.n_order, b.n_rans, b.chunks)
            );
        }
    }

    /// A request planned on the pool lays out the bytes one thread does, through the bit set
    /// and through the sort, over pieces of ranges whose lengths differ: random requests of
    /// up to 3 * 4096 + 5 ranges over archives of 3,000 and 3,000,000 blocks of 4 KiB, in
    /// table groups of 16, 12 or 64 blocks; and both name the same first bad range.
    #[test]
    fn plans_on_the_pool_and_on_one_thread_are_the_same() {
        let mut r = crate::gpu::tokens::Rng::new(41);
        let mut own: Vec<bool> = (0..3_000).map(|_| r.below(4) == 0).collect();
        for n_blocks in [3_000usize, 3_000_000] {
            own.resize(n_blocks, false);
            let size = n_blocks as u64 * 4096;
            for _ in 0..6 {
                let n = 1 + r.below(3 * 4096 + 5) as usize;
                let ranges = random_ranges(&mut r, n, size, 30_000);
                let ch = SeekChunks {
                    lone_blocks: r.below(3) as u32 * 64,
                    ..chunks([16, 12, 64][r.below(3) as usize], 8)
                };
                let a = plan_on(&ranges, 4096, size, &own, ch, false).unwrap();
                let b = plan_on(&ranges, 4096, size, &own, ch, true).unwrap();
                assert!(a.bytes == b.bytes, "{n} ranges over {n_blocks} blocks");
                assert_eq!(
                    (a.n_order, a.n_rans, a.chunks, a.out_len),
                    (b.n_order, b.n_rans, b.chunks, b.out_len)
                );
                let mut broken = ranges.clone();
                let at = r.below(n.max(2) as u64 - 1) as usize;
                broken[at] = (size, 1);
                broken[n - 1] = (0, 0);
                for par in [false, true] {
                    let e = plan_on(&broken, 4096, size, &own, ch, par).unwrap_err();
                    assert!(e.to_string().contains(&format!("range {at} ")), "{e}");
                }
            }
        }
    }

    /// Requests of whole-block runs, some with repeated blocks, some with a range off its
    /// blocks, against a model written from the rule (`Plan::direct`): whether the request is
    /// direct, its order (each range's blocks in request order), its runs and status words;
    /// on one thread and on the pool alike.
    #[test]
    fn runs_follow_the_direct_rule_on_one_thread_and_the_pool() {
        let mut r = crate::gpu::tokens::Rng::new(47);
        let n_blocks = 40_000u64;
        let size = n_blocks * 4096 - 1_000;
        let own: Vec<bool> = (0..n_blocks).map(|b| b % 5 == 0).collect();
        for case in 0..60 {
            let n = [1, 7, 300, PLAN_PAR_RANGES + 3][case % 4];
            let mut ranges: Vec<(u64, u64)> = (0..n)
                .map(|_| {
                    let b = r.below(n_blocks - 4);
                    (b * 4096, (1 + r.below(4)) * 4096)
                })
                .collect();
            if case % 3 == 0 {
                // the input's short last block, at the end of the request
                let b = n_blocks - 1 - r.below(3);
                ranges.push((b * 4096, size - b * 4096));
            }
            if case % 7 == 0 {
                let at = r.below(ranges.len() as u64) as usize;
                ranges[at].1 -= 1;
            }
            let whole = case % 7 != 0;
            let blocks: Vec<u32> = ranges
                .iter()
                .flat_map(|&(o, l)| (o / 4096) as u32..(o + l).div_ceil(4096) as u32)
                .collect();
            let distinct = blocks
                .iter()
                .collect::<std::collections::BTreeSet<_>>()
                .len();
            let direct = whole && (blocks.len() - distinct) * DIRECT_REPEATS <= blocks.len();
            let a = plan_on(&ranges, 4096, size, &own, chunks(16, 8), false).unwrap();
            let b = plan_on(&ranges, 4096, size, &own, chunks(16, 8), true).unwrap();
            assert!(
                a.bytes == b.bytes && a.run_blocks == b.run_blocks,
                "case {case}"
            );
            assert_eq!(a.direct, direct, "case {case}");
            if !direct {
                continue;
            }
            let order: Vec<u32> = bytemuck::pod_collect_to_vec(&a.bytes[..4 * blocks.len()]);
            assert_eq!((order, a.n_order as usize), (blocks.clone(), blocks.len()));
            let runs: Vec<u32> = ranges
                .iter()
                .map(|&(o, l)| ((o + l).div_ceil(4096) - o / 4096) as u32)
                .collect();
            let expect_runs = if blocks.len() > ranges.len() {
                runs
            } else {
                Vec::new()
            };
            assert_eq!(a.run_blocks, expect_runs, "case {case}");
            assert_eq!(a.status_words(), 2 * blocks.len());
        }
    }

    /// `plan` takes the pool from `PLAN_PAR_RANGES` ranges on and gives what one thread
    /// gives, through a small bit set, a large one and the sort.
    #[test]
    fn plan_over_the_threshold_is_one_threads_plan() {
        let mut r = crate::gpu::tokens::Rng::new(43);
        for (n_blocks, n) in [
            (3_000usize, PLAN_PAR_RANGES),
            (3_000_000, PLAN_PAR_RANGES + 9),
            (30_000_000, PLAN_PAR_RANGES),
        ] {
            let own: Vec<bool> = (0..n_blocks).map(|b| b % 3 == 0).collect();
            let size = n_blocks as u64 * 4096;
            let ranges = random_ranges(&mut r, n, size, 9_000);
            let a = plan(&ranges, 4096, size, &own, chunks(16, 8)).unwrap();
            let b = plan_on(&ranges, 4096, size, &own, chunks(16, 8), false).unwrap();
            assert!(a.bytes == b.bytes, "{n} ranges over {n_blocks} blocks");
        }
    }

    #[test]
    fn plan_refuses_a_block_size_not_a_power_of_two() {
        let e = plan(&[(0, 1)], 12_288, 1 << 20, &[false; 86], chunks(16, 8)).unwrap_err();
        assert!(e.to_string().contains("power of two"), "{e}");
    }

    /// `n` ranges at random places of `size` bytes, each of 1 to `max_len` bytes.
    fn random_ranges(
        r: &mut crate::gpu::tokens::Rng,
        n: usize,
        size: u64,
        max_len: u64,
    ) -> Vec<(u64, u64)> {
        (0..n)
            .map(|_| {
                let len = 1 + r.below(max_len);
                (r.below(size - len + 1), len)
            })
            .collect()
    }

    fn ranges_of(p: &Plan) -> Vec<SeekRange> {
        bytemuck::pod_collect_to_vec(&p.bytes[p.ranges_at as usize..])
    }

    #[test]
    fn plan_sorts_blocks_once_and_places_ranges() {
        // block size 4096; ranges in blocks {5}, {1, 2}, {5, 6}, {0}
        let own = vec![true, false, true, true, true, false, true, true];
        let r = [
            (5 * 4096 + 10, 100),
            (4096 + 4000, 200),
            (5 * 4096 + 4090, 20),
            (0, 1),
        ];
        // tables shared by 4 blocks: block 1's chunk ends at its group's end (4), so block 5
        // starts one
        let p = plan(&r, 4096, 8 * 4096, &own, chunks(4, 8)).unwrap();
        let order: Vec<u32> = bytemuck::pod_collect_to_vec(&p.bytes[..4 * p.n_order as usize]);
        assert_eq!(order, [0, 1, 2, 5, 6]);
        assert_eq!(rans_of(&p), [1, 5]);
        // one group of 64: block 1's chunk (blocks 1 to 8) covers block 5
        assert_eq!(
            rans_of(&plan(&r, 4096, 8 * 4096, &own, chunks(64, 8)).unwrap()),
            [1]
        );
        let rs = ranges_of(&p);
        assert_eq!(
            rs.iter().map(|g| g.first_slot).collect::<Vec<_>>(),
            [3, 1, 3, 0]
        );
        assert_eq!(
            rs.iter().map(|g| g.out_at).collect::<Vec<_>>(),
            [0, 100, 300, 320]
        );
        assert_eq!(p.out_len, 321);
        assert_eq!(p.ranges_at % 8, 0);
        // the self-contained blocks' positions (blocks 0, 2, 6), then the others' (1, 5)
        let t = p.takes_at.expect("both kinds of block: a take order") as usize;
        assert_eq!(t % 8, 0);
        let takes: Vec<u32> = bytemuck::pod_collect_to_vec(&p.bytes[t..t + 4 * 5]);
        assert_eq!(takes, [0, 2, 4, 1, 3]);
        // blocks of one kind: no take order (block 0, self-contained: no rANS list either;
        // block 5, not)
        assert_eq!(
            plan(&r[3..], 4096, 8 * 4096, &own, chunks(4, 8))
                .unwrap()
                .takes_at,
            None
        );
        assert_eq!(
            plan(&r[..1], 4096, 8 * 4096, &own, chunks(4, 8))
                .unwrap()
                .takes_at,
            None
        );
    }

    /// Whole blocks make a direct request: the ranges' blocks in request order, a block asked
    /// twice listed twice, the self-contained ones' positions first, no ranges written; the
    /// archive's short last block only as the last range; many repeated blocks or any other
    /// range make the usual plan.
    #[test]
    fn whole_blocks_make_a_direct_request() {
        let own = vec![true, false, true, true, true, false, true, true];
        // 8 blocks of 4096, the last one 100 bytes
        let size = 7 * 4096 + 100;
        // blocks 5, 2, 5, 0, 3, 4, 6 and the short last one: one range in eight repeats a block
        let blocks = [5u32, 2, 5, 0, 3, 4, 6];
        let mut r: Vec<(u64, u64)> = blocks.iter().map(|&b| (b as u64 * 4096, 4096)).collect();
        r.push((7 * 4096, 100));
        let p = plan(&r, 4096, size, &own, chunks(4, 8)).unwrap();
        assert!(p.direct);
        assert_eq!((p.n_order, p.n_ranges, p.out_len), (8, 8, 7 * 4096 + 100));
        let order: Vec<u32> = bytemuck::pod_collect_to_vec(&p.bytes[..32]);
        assert_eq!(order, [5, 2, 5, 0, 3, 4, 6, 7]);
        let t = p.takes_at.expect("both kinds") as usize;
        let takes: Vec<u32> = bytemuck::pod_collect_to_vec(&p.bytes[t..t + 32]);
        assert_eq!(takes, [1, 3, 4, 5, 6, 7, 0, 2]);
        assert_eq!(rans_of(&p), [5]);
        assert_eq!(p.bytes.len() as u64, p.ranges_at);
        // more repeats than that: the slots and the gather
        let repeats = [
            (5 * 4096, 4096),
            (2 * 4096, 4096),
            (5 * 4096, 4096),
            (7 * 4096, 100),
        ];
        assert!(
            !plan(&repeats, 4096, size, &own, chunks(4, 8))
                .unwrap()
                .direct
        );
        for (bad, why) in [
            (
                [(7 * 4096, 100), (0, 4096)],
                "the short block before the last range",
            ),
            ([(0, 4096), (4096, 4095)], "a range short of its block"),
            ([(0, 4096), (4097, 4096)], "a range off its block's start"),
            (
                [(0, 4096), (4096, 8192 + 1)],
                "a range past its last block's start",
            ),
        ] {
            assert!(
                !plan(&bad, 4096, size, &own, chunks(4, 8)).unwrap().direct,
                "{why}"
            );
        }
    }

    #[test]
    fn runs_of_whole_blocks_make_a_direct_request() {
        let own = vec![true, false, true, true, true, false, true, true];
        let size = 7 * 4096 + 100;
        // blocks 4-5, 0, 1-3, and the last two (the short one last)
        let r = [
            (4 * 4096, 2 * 4096),
            (0, 4096),
            (4096, 3 * 4096),
            (6 * 4096, 4096 + 100),
        ];
        for par in [false, true] {
            let p = plan_on(&r, 4096, size, &own, chunks(4, 8), par).unwrap();
            assert!(p.direct);
            assert_eq!((p.n_order, p.n_ranges), (8, 4));
            assert_eq!(p.out_len, 7 * 4096 + 100);
            let order: Vec<u32> = bytemuck::pod_collect_to_vec(&p.bytes[..32]);
            assert_eq!(order, [4, 5, 0, 1, 2, 3, 6, 7]);
            assert_eq!(p.run_blocks, [2, 1, 3, 2]);
            assert_eq!(p.status_words(), 16);
            assert_eq!(rans_of(&p), [1, 5]);
        }
        // the whole input as one range
        let p = plan(&[(0, size)], 4096, size, &own, chunks(4, 8)).unwrap();
        assert!(p.direct);
        assert_eq!((p.n_order, p.run_blocks.as_slice()), (8, &[8u32][..]));
        // one-block ranges keep a status word pair a range
        let p = plan(&[(4096, 4096), (0, 4096)], 4096, size, &own, chunks(4, 8)).unwrap();
        assert!(p.direct && p.run_blocks.is_empty());
        assert_eq!(p.status_words(), 4);
        // a block asked again more than one time in eight: the slots and the gather
        let p = plan(
            &[(0, 2 * 4096), (4096, 2 * 4096)],
            4096,
            size,
            &own,
            chunks(4, 8),
        );
        assert!(!p.unwrap().direct);
    }

    #[test]
    fn plan_refuses_empty_and_out_of_range() {
        let own = vec![true; 2];
        assert!(plan(&[(0, 0)], 4096, 8192, &own, chunks(64, 8)).is_err());
        assert!(plan(&[(8000, 193)], 4096, 8192, &own, chunks(64, 8)).is_err());
        assert!(plan(&[(u64::MAX, 2)], 4096, 8192, &own, chunks(64, 8)).is_err());
        assert!(plan(&[(8000, 192)], 4096, 8192, &own, chunks(64, 8)).is_ok());
    }
}
