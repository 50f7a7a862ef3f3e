//! The parser proper: hash-chain match finder, lazy evaluation, cost-aware acceptance,
//! dependency-level tracking and stream emission.

use std::cell::RefCell;
use std::ops::Range;

use aceapex_device::format::{CMD_RESET, MIN_MATCH_BASE, STREAM_COUNT};
use aceapex_device::lz::{write_offset, write_varint, History};

use super::cost::{CostModel, CostTuning, Prices, StatPrices, SCALE};
use super::{BlockParse, ParseParams};

/// Per-level search settings.
#[derive(Clone, Copy, Debug)]
struct Cfg {
    /// Most chain candidates examined per position.
    chain: u32,
    /// Lazy lookahead (0 = greedy, 1 or 2 positions).
    lazy: u32,
    /// log2 of the hash-head table (capped by the segment size).
    hash_bits: u32,
    /// Insert every position covered by a match into the chains.
    insert_all: bool,
    /// Stop searching once a match this long is found (also skips lazy evaluation).
    nice: usize,
    /// Search-skip acceleration after misses: step = 1 + misses >> accel (0 = off).
    accel: u32,
    /// Repeat-history slots tried per position (1..=4).
    reps: usize,
    /// Positions jumped over by the acceleration are not inserted into the chains.
    skip_insert: bool,
    /// Most chain candidates examined at the lazy positions.
    lazy_chain: u32,
}

/// Search settings per level. Levels 1-5 are the fast greedy/lazy finder: few chain steps,
/// only the first two positions of a match inserted, and positions jumped over in literal
/// stretches left out of the chains. Level 6 searches deeper and inserts every position.
/// Levels 7-9 (without a depth cap) parse each block several ways ([`trial_parses`]: a lazy
/// parse with level 6's search, then optimal parses under one to three cost models, with
/// these settings) and keep the smallest; 9 also searches deeper.
fn level_cfg(level: u32) -> Cfg {
    // chain, lazy, hash_bits, insert_all, nice, accel, reps, skip_insert, lazy_chain
    let c = |chain, lazy, hash_bits, insert_all, nice, accel, reps, skip_insert, lazy_chain| Cfg {
        chain,
        lazy,
        hash_bits,
        insert_all,
        nice,
        accel,
        reps,
        skip_insert,
        lazy_chain,
    };
    match level.clamp(1, 9) {
        1 => c(1, 0, 14, false, 24, 3, 2, true, 0),
        2 => c(2, 0, 14, false, 32, 3, 4, true, 0),
        3 => c(3, 1, 14, false, 48, 4, 4, true, 1),
        4 => c(4, 1, 14, false, 64, 4, 4, true, 1),
        5 => c(4, 1, 14, false, 64, 5, 4, true, 2),
        6 => c(48, 1, 17, true, 160, 0, 4, false, 48),
        7 => c(96, 2, 18, true, 256, 0, 4, false, 96),
        8 => c(96, 2, 18, true, 256, 0, 4, false, 96),
        _ => c(256, 2, 18, true, 512, 0, 4, false, 256),
    }
}

/// An entry of the hash-head and chain tables: a segment-relative position + 1 (0 = none).
/// `u16` for segments shorter than 64 KiB (the 16 KiB blocks of levels 1-5: half the cache
/// footprint), else `u32`.
trait ChainSlot: Copy + Default {
    /// The stored value.
    fn get(self) -> usize;
    /// Stores `v` (which fits: the segment length bounds it).
    fn new(v: usize) -> Self;
}

impl ChainSlot for u16 {
    #[inline(always)]
    fn get(self) -> usize {
        self as usize
    }
    #[inline(always)]
    fn new(v: usize) -> Self {
        v as u16
    }
}

impl ChainSlot for u32 {
    #[inline(always)]
    fn get(self) -> usize {
        self as usize
    }
    #[inline(always)]
    fn new(v: usize) -> Self {
        v as u32
    }
}

/// Buffers reused between calls on one thread.
#[derive(Default)]
struct Scratch {
    /// Hash heads: segment-relative position + 1, 0 = empty.
    head: Vec<u32>,
    /// Chain links, ring-indexed by segment-relative position.
    prev: Vec<u32>,
    /// `head` for segments shorter than 64 KiB.
    head16: Vec<u16>,
    /// `prev` for segments shorter than 64 KiB.
    prev16: Vec<u16>,
    /// Per-byte dependency value, ring-indexed: 0 for a literal byte, else 1 + the level of
    /// the match that wrote it. A match's level is the max over the bytes it reads.
    val: Vec<u32>,
    /// Prefix sums of literal costs over the current block.
    litsum: Vec<u32>,
    /// Buffers of the optimal parser.
    opt: OptBufs,
}

/// Per-position state of the optimal parser (levels >= OPT_LEVEL).
#[derive(Default)]
struct OptBufs {
    price: Vec<i32>,
    from: Vec<u32>,
    len: Vec<u32>,
    dist: Vec<u32>,
    hist: Vec<History>,
    cands: Vec<Cand>,
    steps: Vec<(u32, u32, u32)>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// A match candidate. `slot < 4` means a repeat code of that history slot.
#[derive(Clone, Copy, Debug)]
struct Cand {
    len: u32,
    dist: u32,
    slot: u8,
    /// Estimated saving versus coding the bytes as literals (1/16 bits); for the optimal
    /// parser's candidates: the shortest usable length.
    gain: i32,
}

const NO_MATCH: Cand = Cand {
    len: 0,
    dist: 0,
    slot: 4,
    gain: 0,
};

/// Levels from which (without a depth cap) blocks are parsed by the price-based optimal parser.
const OPT_LEVEL: u32 = 7;

const HASH_MUL: u64 = 0x9E37_79B9_7F4A_7C15;

#[inline(always)]
fn read_u64(data: &[u8], p: usize) -> u64 {
    u64::from_le_bytes(data[p..p + 8].try_into().unwrap())
}

/// The 8 bytes at `p` as a little-endian `u64`, without a bounds check.
///
/// # Safety
/// `p + 8 <= data.len()`.
#[inline(always)]
unsafe fn read_u64_unchecked(data: &[u8], p: usize) -> u64 {
    debug_assert!(p + 8 <= data.len());
    // SAFETY: the caller guarantees that `data[p..p + 8]` is in bounds; the read is unaligned.
    u64::from_le(unsafe { data.as_ptr().add(p).cast::<u64>().read_unaligned() })
}

/// The lowest position a match at `p` may read: `floor` (its block's or its segment's
/// start, [`Finder::source_floor`]), or `window` bytes back if that is higher.
#[inline(always)]
fn lowest_source(floor: usize, window: usize, p: usize) -> usize {
    floor.max(p.saturating_sub(window))
}

/// The largest distance of `hist` less one (a slot of distance 0, never written by a
/// decoder's history, wraps to the largest value): every slot is in reach of `p` when this
/// is below `p - lo`.
#[inline(always)]
fn hist_far(hist: &History) -> usize {
    let h = hist.0;
    (h[0].wrapping_sub(1).max(h[1].wrapping_sub(1)))
        .max(h[2].wrapping_sub(1).max(h[3].wrapping_sub(1))) as usize
}

/// Bit i set: repeat slot i of `hist` is in reach (`1 <= d <= p - lo`) and the first bytes
/// selected by `mm_mask` (the first `min(min_match, 8)`) at `p - d` match those of `cur`,
/// the 8 bytes at `p`. `all_in_reach`: `hist_far(hist) < p - lo`, known to the caller (the
/// usual case past a block's first bytes: no per-slot reach test, and `lo` is not needed).
/// Branch-free and unrolled over all four slots (the caller masks them to the level's
/// count): most positions have no repeat match at all.
///
/// # Safety
/// `lo() <= p`, `all_in_reach` as above, and `p + 8 <= data.len()`.
#[inline(always)]
unsafe fn rep_hits(
    data: &[u8],
    cur: u64,
    p: usize,
    all_in_reach: bool,
    lo: impl FnOnce() -> usize,
    hist: &History,
    mm_mask: u64,
) -> u32 {
    let cur = cur & mm_mask;
    let mut hits = 0u32;
    let h = hist.0;
    if all_in_reach {
        for (i, &d) in h.iter().enumerate() {
            // SAFETY: 1 <= d <= p - lo <= p (all_in_reach), and p + 8 <= data.len()
            let eq = unsafe { read_u64_unchecked(data, p - d as usize) } & mm_mask == cur;
            hits |= (eq as u32) << i;
        }
    } else {
        let span = p - lo();
        for (i, &d) in h.iter().enumerate() {
            let d = d as usize;
            let ok = d.wrapping_sub(1) < span;
            // an out-of-reach slot reads p itself (always equal) and is masked by `ok`
            let src = if ok { p - d } else { p };
            // SAFETY: src <= p and p + 8 <= data.len()
            let eq = unsafe { read_u64_unchecked(data, src) } & mm_mask == cur;
            hits |= ((ok & eq) as u32) << i;
        }
    }
    hits
}

/// Length of the common prefix of `data[a..]` and `data[b..]`, at most `max`;
/// requires `a < b` and `b + max <= data.len()` (panics otherwise).
#[inline(always)]
fn match_len(data: &[u8], a: usize, b: usize, max: usize) -> usize {
    // one check for the whole comparison instead of one per read
    assert!(a < b && b + max <= data.len());
    let mut n = 0;
    while n + 8 <= max {
        // SAFETY: a < b and b + n + 8 <= b + max <= data.len()
        let x = unsafe { read_u64_unchecked(data, a + n) ^ read_u64_unchecked(data, b + n) };
        if x != 0 {
            return n + (x.trailing_zeros() / 8) as usize;
        }
        n += 8;
    }
    while n < max && data[a + n] == data[b + n] {
        n += 1;
    }
    n
}

/// The match finder of one segment. Invariants (set up by `parse_blocks`, its only
/// constructor, and relied on by the unchecked accesses of `hash`, `head_at`, `set_head`,
/// `prev_at` and `set_prev`): `end <= data.len()`; `head.len() == 1 << (64 - hshift)`;
/// `prev.len() == rmask + 1`.
struct Finder<'a, S: ChainSlot> {
    data: &'a [u8],
    /// `seg.start`.
    base: usize,
    /// `seg.end`.
    end: usize,
    /// Hash heads, `1 << (64 - hshift)` of them.
    head: &'a mut [S],
    /// Chain links, ring-indexed (`rmask + 1` of them).
    prev: &'a mut [S],
    val: &'a mut [u32],
    /// Ring mask of `prev` and `val`.
    rmask: usize,
    hshift: u32,
    hmask: u64,
    /// Next position to insert into the chains.
    next_insert: usize,
    /// Positions below this have a valid `val`.
    val_upto: usize,
    cm: CostModel,
    cfg: Cfg,
    min_match: u32,
    window: usize,
    independent: bool,
    rep_codes: bool,
    cap: u32,
    /// Mask of the first `min(min_match, 8)` bytes of a little-endian `u64`.
    mm_mask: u64,
    /// Bit i set: repeat slot i is tried (the first `cfg.reps` slots).
    rep_mask: u32,
}

impl<'a, S: ChainSlot> Finder<'a, S> {
    /// The chain entry after `c` (1-based, 0 = end), or 0 when the chain does not go to an
    /// older entry (a ring slot reused since), which ends the walk.
    #[inline]
    fn older(&self, c: usize) -> usize {
        let nc = self.prev_at(c - 1).get();
        if nc >= c {
            0
        } else {
            nc
        }
    }

    /// The hash-head slot of the (masked) bytes at `p`: below `1 << hbits`, `head.len()`.
    ///
    /// # Safety
    /// `p + 8 <= self.end` (every caller: a position with 8 bytes left in the segment).
    #[inline(always)]
    unsafe fn hash(&self, p: usize) -> usize {
        debug_assert!(p + 8 <= self.end);
        // SAFETY: p + 8 <= end <= data.len() (the caller's contract).
        let v = unsafe { read_u64_unchecked(self.data, p) };
        ((v & self.hmask).wrapping_mul(HASH_MUL) >> self.hshift) as usize
    }

    /// Hash head `h` (`h` from [`Finder::hash`]: below `head.len()`, which is `1 << hbits`
    /// with `hshift = 64 - hbits`, as `parse_blocks` builds the finder).
    #[inline(always)]
    fn head_at(&self, h: usize) -> S {
        debug_assert!(h < self.head.len());
        // SAFETY: h < 1 << hbits == head.len() (the shift of `hash`; `chain_tables`).
        unsafe { *self.head.get_unchecked(h) }
    }

    /// Sets hash head `h` (as [`Finder::head_at`]).
    #[inline(always)]
    fn set_head(&mut self, h: usize, v: S) {
        debug_assert!(h < self.head.len());
        // SAFETY: as in head_at.
        unsafe { *self.head.get_unchecked_mut(h) = v };
    }

    /// The chain link of ring slot `r & rmask` (as [`Finder::set_prev`]).
    #[inline(always)]
    fn prev_at(&self, r: usize) -> S {
        let i = r & self.rmask;
        debug_assert!(i < self.prev.len());
        // SAFETY: i <= rmask == prev.len() - 1.
        unsafe { *self.prev.get_unchecked(i) }
    }

    /// Sets the chain link of ring slot `r & rmask` (`prev.len()` is `rmask + 1`, as
    /// `parse_blocks` builds the finder).
    #[inline(always)]
    fn set_prev(&mut self, r: usize, v: S) {
        let i = r & self.rmask;
        debug_assert!(i < self.prev.len());
        // SAFETY: i <= rmask == prev.len() - 1.
        unsafe { *self.prev.get_unchecked_mut(i) = v };
    }

    /// Inserts every not yet inserted position below `p` (those that have 8 bytes left in
    /// the segment) into the chains.
    #[inline(always)]
    fn insert_upto(&mut self, p: usize) {
        // the usual case at a literal position: `p` is already the next one to insert
        if self.next_insert < p {
            self.insert_below(p);
        }
    }

    /// [`Finder::insert_upto`]'s work when some position below `p` is not inserted yet.
    #[inline(never)]
    fn insert_below(&mut self, p: usize) {
        let lim = p.min(self.end.saturating_sub(7));
        while self.next_insert < lim {
            let q = self.next_insert;
            // SAFETY: q < lim <= end - 7, so q + 8 <= end.
            let h = unsafe { self.hash(q) };
            let r = q - self.base;
            self.set_prev(r, self.head_at(h));
            self.set_head(h, S::new(r + 1));
            self.next_insert += 1;
        }
        if self.next_insert < p {
            self.next_insert = p;
        }
    }

    /// The chain head for `p` (0 = empty chain); if `p` is the next position to insert,
    /// also inserts it, so that the hash and the head-table load (the likeliest cache miss
    /// of the finder) are paid once per position.
    ///
    /// # Safety
    /// `p + 8 <= self.end` (as [`Finder::hash`]).
    #[inline(always)]
    unsafe fn head_and_insert(&mut self, p: usize) -> usize {
        // SAFETY: the caller's contract.
        let h = unsafe { self.hash(p) };
        let c = self.head_at(h);
        if self.next_insert == p {
            let r = p - self.base;
            self.set_prev(r, c);
            self.set_head(h, S::new(r + 1));
            self.next_insert = p + 1;
        }
        c.get()
    }

    /// Branch-friendly pre-check that `data[a..a + k]` may equal `data[b..b + k]` (`a < b`,
    /// `b + k <= data.len()`): compares the 8 bytes ending at `k` (masked when `k < 8`).
    /// Exact for `k <= 8`; for longer `k` it checks only the last 8 bytes.
    #[inline(always)]
    fn prefix_eq(&self, a: usize, b: usize, k: usize) -> bool {
        if k >= 8 {
            read_u64(self.data, a + k - 8) == read_u64(self.data, b + k - 8)
        } else if b + 8 <= self.data.len() {
            let mask = (1u64 << (8 * k)) - 1;
            (read_u64(self.data, a) ^ read_u64(self.data, b)) & mask == 0
        } else {
            self.data[a..a + k] == self.data[b..b + k]
        }
    }

    /// The ring slots of absolute positions `[from, to)` (`to - from <= ring size`): one or
    /// two contiguous ranges of `val`.
    #[inline(always)]
    fn ring_ranges(&self, from: usize, to: usize) -> (Range<usize>, Range<usize>) {
        let a = (from - self.base) & self.rmask;
        let n = to - from;
        let ring = self.rmask + 1;
        if a + n <= ring {
            (a..a + n, 0..0)
        } else {
            (a..ring, 0..a + n - ring)
        }
    }

    /// Sets the dependency value of positions `[from, to)` to `v`.
    #[inline(always)]
    fn fill_vals(&mut self, from: usize, to: usize, v: u32) {
        if from < to {
            // every slot gets the same value: a range longer than the ring covers it all
            let from = to - (to - from).min(self.rmask + 1);
            let (r1, r2) = self.ring_ranges(from, to);
            self.val[r1].fill(v);
            // the second range is empty unless the positions wrap around the ring
            if !r2.is_empty() {
                self.val[r2].fill(v);
            }
        }
    }

    /// Marks the pending literal bytes below `p` as literal-written (value 0).
    #[inline(always)]
    fn zero_vals_upto(&mut self, p: usize) {
        if self.val_upto < p {
            self.fill_vals(self.val_upto, p, 0);
            self.val_upto = p;
        }
    }

    /// Longest prefix of a match (source `src`, distance `dist`, `len` bytes) whose level
    /// stays below the depth cap.
    #[inline(always)]
    fn clamp_cap(&self, src: usize, dist: usize, len: usize) -> usize {
        if self.cap == 0 {
            return len;
        }
        let span = len.min(dist);
        for k in 0..span {
            if self.val[(src + k - self.base) & self.rmask] >= self.cap {
                return k;
            }
        }
        len
    }

    /// Dependency level of a match reading the first period of `[src, src + len)`.
    #[inline(always)]
    fn level_of(&self, src: usize, dist: usize, len: usize) -> u32 {
        let (r1, r2) = self.ring_ranges(src, src + len.min(dist));
        let m1 = self.val[r1].iter().fold(0, |a, &v| a.max(v));
        self.val[r2].iter().fold(m1, |a, &v| a.max(v))
    }

    /// The floor of match sources for the block starting at `bs`: the block's start when
    /// blocks are independent (window within a block), else the segment's.
    #[inline(always)]
    fn source_floor(&self, bs: usize) -> usize {
        if self.independent {
            bs
        } else {
            self.base
        }
    }

    /// The lowest position a match at `p` in the block starting at `bs` may read
    /// ([`lowest_source`] with [`Finder::source_floor`] and the window).
    #[inline(always)]
    fn lowest_source(&self, bs: usize, p: usize) -> usize {
        lowest_source(self.source_floor(bs), self.window, p)
    }

    /// The first look at position `p` (inserting it if it is the next to insert): its chain
    /// head (0 = empty chain, as [`Finder::head_and_insert`]) and the repeat slots among the
    /// level's that match there ([`rep_hits`], with its `all_in_reach` and `lo`, the lowest
    /// source position allowed).
    ///
    /// # Safety
    /// As [`rep_hits`], and `p + 8 <= self.end`.
    #[inline(always)]
    unsafe fn probe(
        &mut self,
        p: usize,
        all_in_reach: bool,
        lo: impl FnOnce() -> usize,
        hist: &History,
    ) -> (usize, u32) {
        // the head load first: it is the likeliest cache miss
        // SAFETY: p + 8 <= end (the caller's contract).
        let head = unsafe { self.head_and_insert(p) };
        // SAFETY: the caller's contract, and p + 8 <= end <= data.len().
        let hits = unsafe {
            rep_hits(
                self.data,
                read_u64_unchecked(self.data, p),
                p,
                all_in_reach,
                lo,
                hist,
                self.mm_mask,
            )
        };
        (head, hits & self.rep_mask)
    }

    /// Skips the literal positions from `pos` at which [`Finder::find`] with a chain of
    /// `chain` steps returns nothing without looking further (no repeat slot matches, the
    /// chain is empty), as `parse_block`'s main loop would: each is inserted, then the
    /// acceleration of `cfg.accel` steps on (counting `misses`). Returns the first position
    /// where `find` has more to do, with its probes for [`Finder::find`] (chain head,
    /// repeat hits; the position inserted), or without probes a position where
    /// `pos + min_match > be` or a tail position (fewer than 8 bytes left in the segment).
    /// Without a depth cap only (with one, each position also settles the dependency values
    /// below it).
    #[inline(always)]
    fn skip_misses(
        &mut self,
        mut pos: usize,
        bs: usize,
        be: usize,
        hist: &History,
        chain: u32,
        misses: &mut usize,
    ) -> (usize, Option<(usize, u32)>) {
        debug_assert_eq!(self.cap, 0);
        let min_match = self.min_match as usize;
        let accel = self.cfg.accel;
        let floor = self.source_floor(bs);
        let window = self.window;
        // every repeat slot is in reach from here on (hist_far < pos - lo, where
        // lo = max(floor, pos - window): pos > floor + far and far < window)
        let far = hist_far(hist);
        let reach_from = if far < window {
            floor.saturating_add(far).saturating_add(1)
        } else {
            usize::MAX
        };
        // find's full path: pos + min_match <= be and pos + 8 <= end
        while pos + min_match <= be && pos + 8 <= self.end {
            self.insert_upto(pos);
            let lo = || lowest_source(floor, window, pos);
            // SAFETY: lo() <= pos (floor <= bs <= pos), all_in_reach as computed above, and
            // pos + 8 <= end (the loop's condition)
            let (head, hits) = unsafe { self.probe(pos, pos >= reach_from, lo, hist) };
            if hits != 0 || (head != 0 && chain != 0) {
                return (pos, Some((head, hits)));
            }
            // as parse_block's miss
            if accel > 0 {
                *misses += 1;
                pos += 1 + (*misses >> accel);
                if self.cfg.skip_insert {
                    self.next_insert = self.next_insert.max(pos);
                }
            } else {
                pos += 1;
            }
        }
        (pos, None)
    }

    /// Best candidate at `p` in block `[bs, be)` with history `hist` and literal-cost prefix
    /// sums `litsum` (indexed from `bs`). `probes`: the position's [`Finder::probe`] already
    /// taken ([`Finder::skip_misses`]: `p` a non-tail position with `p + min_match <= be`,
    /// inserted; its chain head and repeat hits), or `None` to take it here. The repeat
    /// candidates first (a slot repeating an earlier slot's distance finds the same match,
    /// which then does not beat the earlier one: no need to skip duplicates), then the hash
    /// chain.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn find(
        &mut self,
        p: usize,
        bs: usize,
        be: usize,
        hist: &History,
        litsum: &[u32],
        chain: u32,
        probes: Option<(usize, u32)>,
    ) -> Cand {
        let maxlen = be - p;
        let (head, mut hits) = match probes {
            Some(probes) => probes,
            None => {
                if maxlen < self.min_match as usize {
                    return NO_MATCH;
                }
                if p + 8 > self.end {
                    return self.find_tail(p, bs, be, hist, litsum);
                }
                let lo = self.lowest_source(bs, p);
                // SAFETY: lo <= p, all_in_reach as rep_hits defines it, and p + 8 <= end
                // (the tail positions returned above).
                let (head, hits) = unsafe { self.probe(p, hist_far(hist) < p - lo, || lo, hist) };
                // most literal positions end here: no repeat slot matches and the chain is
                // empty
                if hits == 0 && (head == 0 || chain == 0) {
                    return NO_MATCH;
                }
                (head, hits)
            }
        };
        let lo = self.lowest_source(bs, p);
        let data = self.data;
        // litsum holds be - bs + 1 prefix sums and every candidate's length is at most
        // maxlen = be - p, so both reads below are in bounds
        debug_assert_eq!(litsum.len(), be - bs + 1);
        // SAFETY: p - bs < be - bs + 1 == litsum.len().
        let lbase = unsafe { *litsum.get_unchecked(p - bs) };
        let lits = |len: usize| {
            debug_assert!(len <= maxlen);
            // SAFETY: len <= maxlen = be - p, so p - bs + len <= be - bs < litsum.len().
            (unsafe { *litsum.get_unchecked(p - bs + len) } - lbase) as i32
        };
        let mut best = NO_MATCH;
        // longest (cap-clamped) length seen: later chain candidates must beat it
        let mut best_len = 0usize;
        while hits != 0 {
            let i = hits.trailing_zeros() as usize;
            hits &= hits - 1;
            if let Some((len, cand)) =
                self.repeat_candidate(p, i, hist.0[i] as usize, maxlen, &lits)
            {
                best_len = best_len.max(len);
                if let Some(c) = cand.filter(|c| c.gain > best.gain) {
                    best = c;
                }
            }
        }
        if head == 0 || best_len >= self.cfg.nice || best_len == maxlen || chain == 0 {
            return best;
        }

        // hash chain
        let mut c = head;
        let mut steps = chain;
        while c != 0 {
            let cand = self.base + c - 1;
            if cand >= p {
                // only after a trial parse of this block (levels >= OPT_LEVEL), which left
                // its positions in the chains: skip them
                c = self.older(c);
                continue;
            }
            if cand < lo {
                break;
            }
            // a useful candidate is longer than best_len and long enough to pay off
            let d = p - cand;
            let need = self.cm.min_len_at(d as u32) as usize;
            let q = best_len.max(need - 1);
            if best_len >= maxlen {
                break;
            }
            if q < maxlen {
                // pre-check: the 8 bytes ending at q + 1 (masked to q + 1 when shorter)
                let k = q + 1;
                let off = k.max(8) - 8;
                let mask = u64::MAX >> (64 - 8 * k.min(8));
                // SAFETY: cand < p, and p + off + 8 = max(p + k, p + 8) <= max(be, end)
                // <= data.len()
                let x = unsafe {
                    read_u64_unchecked(data, cand + off) ^ read_u64_unchecked(data, p + off)
                };
                if x & mask == 0 {
                    let raw = match_len(data, cand, p, maxlen);
                    if raw > q {
                        let len = self.clamp_cap(cand, d, raw);
                        if len > best_len {
                            best_len = len;
                            if len as u32 >= self.cm.min_len_at(d as u32) {
                                let g = lits(len) - self.cm.new_match(len as u32, d as u32);
                                if g > best.gain {
                                    best = Cand {
                                        len: len as u32,
                                        dist: d as u32,
                                        slot: 4,
                                        gain: g,
                                    };
                                }
                            }
                            if len >= self.cfg.nice {
                                break;
                            }
                        }
                    }
                }
            }
            steps -= 1;
            if steps == 0 {
                break;
            }
            // the next older entry, or 0 (the loop's end) at a reused ring slot
            c = self.older(c);
        }
        best
    }

    /// [`Finder::find`] for the last 7 positions of the segment, which have no 8 bytes to
    /// hash: repeat distances only.
    #[cold]
    #[inline(never)]
    fn find_tail(&self, p: usize, bs: usize, be: usize, hist: &History, litsum: &[u32]) -> Cand {
        let maxlen = be - p;
        let min_match = self.min_match as usize;
        let lo = self.lowest_source(bs, p);
        let lbase = litsum[p - bs];
        let lits = |len: usize| (litsum[p - bs + len] - lbase) as i32;
        let mut best = NO_MATCH;
        let span = p - lo;
        for (i, &d) in hist.0.iter().enumerate().take(self.cfg.reps) {
            let d = d as usize;
            if d == 0 || d > span || !self.prefix_eq(p - d, p, min_match) {
                continue;
            }
            if let Some((_, Some(c))) = self.repeat_candidate(p, i, d, maxlen, &lits) {
                if c.gain > best.gain {
                    best = c;
                }
            }
        }
        best
    }

    /// Repeat slot `i` (distance `d`, in reach, its first bytes known to match) at `p`, for
    /// [`Finder::find`] and [`Finder::find_tail`]: `None` when its match, clamped to the depth
    /// cap, is shorter than the minimum match; else its length and its candidate, `None`
    /// when without repeat codes the distance is not worth sending at that length. `lits(n)`
    /// is the literal cost of the `n` bytes from `p`.
    #[inline(always)]
    fn repeat_candidate(
        &self,
        p: usize,
        i: usize,
        d: usize,
        maxlen: usize,
        lits: &impl Fn(usize) -> i32,
    ) -> Option<(usize, Option<Cand>)> {
        let min_match = self.min_match as usize;
        let src = p - d;
        let raw = match_len(self.data, src, p, maxlen);
        if raw < min_match {
            return None;
        }
        let len = self.clamp_cap(src, d, raw);
        if len < min_match {
            return None;
        }
        let (cost, slot) = if self.rep_codes {
            (self.cm.rep_match(len as u32), i as u8)
        } else {
            if (len as u32) < self.cm.min_len_at(d as u32) {
                return Some((len, None));
            }
            (self.cm.new_match(len as u32, d as u32), 4)
        };
        Some((
            len,
            Some(Cand {
                len: len as u32,
                dist: d as u32,
                slot,
                gain: lits(len) - cost,
            }),
        ))
    }
}

impl<'a, S: ChainSlot> Finder<'a, S> {
    /// All useful candidates at `p` for the optimal parser: repeat matches (slot < 4, or
    /// slot 4 when sent as new matches) then chain matches of strictly increasing length.
    /// `gain` holds the shortest length each candidate may be used at.
    fn find_all(&mut self, p: usize, bs: usize, be: usize, hist: &History, cands: &mut Vec<Cand>) {
        cands.clear();
        let maxlen = be - p;
        let min_match = self.min_match as usize;
        if maxlen < min_match {
            return;
        }
        let lo = self.lowest_source(bs, p);
        let mut best_len = 0usize;
        for i in 0..4 {
            let d = hist.0[i] as usize;
            if d == 0 || d > p - lo || hist.0[..i].contains(&(d as u32)) {
                continue;
            }
            let src = p - d;
            if !self.prefix_eq(src, p, min_match) {
                continue;
            }
            let len = match_len(self.data, src, p, maxlen);
            if len < min_match {
                continue;
            }
            if self.rep_codes {
                best_len = best_len.max(len);
                cands.push(Cand {
                    len: len as u32,
                    dist: d as u32,
                    slot: i as u8,
                    gain: min_match as i32,
                });
            } else {
                let m = self.cm.min_len_at(d as u32).max(min_match as u32);
                if len as u32 >= m {
                    cands.push(Cand {
                        len: len as u32,
                        dist: d as u32,
                        slot: 4,
                        gain: m as i32,
                    });
                }
            }
        }
        if best_len >= self.cfg.nice || best_len == maxlen || p + 8 > self.end {
            return;
        }
        // SAFETY: p + 8 <= end (checked above).
        let h = unsafe { self.hash(p) };
        let mut c = self.head_at(h).get();
        let mut steps = self.cfg.chain;
        while c != 0 {
            let cand = self.base + c - 1;
            if cand >= p {
                // inserted by an earlier trial parse of this block: skip
                c = self.older(c);
                continue;
            }
            if cand < lo {
                break;
            }
            let d = p - cand;
            let need = self.cm.min_len_at(d as u32) as usize;
            let q = best_len.max(need - 1);
            if best_len >= maxlen {
                break;
            }
            if q < maxlen && self.prefix_eq(cand, p, q + 1) {
                let len = match_len(self.data, cand, p, maxlen);
                if len > q {
                    let m = self.cm.min_len_at(d as u32).max((best_len + 1) as u32);
                    best_len = len;
                    if len as u32 >= m {
                        cands.push(Cand {
                            len: len as u32,
                            dist: d as u32,
                            slot: 4,
                            gain: m as i32,
                        });
                    }
                    if len >= self.cfg.nice {
                        break;
                    }
                }
            }
            steps -= 1;
            if steps == 0 {
                break;
            }
            // the next older entry, or 0 (the loop's end) at a reused ring slot
            c = self.older(c);
        }
    }
}

/// Appends literals `lits` as runs of at most 128.
fn emit_literals(out: &mut BlockParse, lits: &[u8]) {
    for chunk in lits.chunks(128) {
        out.commands.push((chunk.len() - 1) as u8);
        out.literals.extend_from_slice(chunk);
    }
}

/// Appends match `m` and updates the history.
fn emit_match(out: &mut BlockParse, m: &Cand, hist: &mut History, base: u32) {
    let slot = (m.slot < 4).then_some(m.slot as usize);
    let (c, extra) = super::match_code(slot, m.len, base);
    out.commands.push(c);
    if let Some(v) = extra {
        write_varint(v, &mut out.lengths);
    }
    match slot {
        Some(i) => {
            let d = hist.take(i);
            debug_assert_eq!(d, m.dist);
        }
        None => {
            write_offset(m.dist, &mut out.offsets, &mut out.offset_tails);
            hist.push(m.dist);
        }
    }
}

pub(super) fn parse(
    data: &[u8],
    seg: Range<usize>,
    block_size: usize,
    params: &ParseParams,
    tuning: &CostTuning,
    progress: &dyn Fn(u64),
    chooser: &mut Chooser,
) -> Vec<BlockParse> {
    assert!(
        seg.start <= seg.end && seg.end <= data.len(),
        "segment outside the data"
    );
    assert!(block_size > 0, "block_size must be > 0");
    let n = seg.end - seg.start;
    assert!(n < u32::MAX as usize, "segment must be smaller than 4 GiB");
    if n == 0 {
        return Vec::new();
    }
    let cfg = level_cfg(params.level);
    let min_match = params.min_match.max(MIN_MATCH_BASE);
    let window = params.window as usize;

    let mut hist_counts = [0u64; 256];
    crate::entropy::count(&mut hist_counts, &data[seg.clone()]);
    let cm = CostModel::new(&hist_counts, min_match, tuning);

    SCRATCH.with(|s| {
        let mut s = s.borrow_mut();
        let Scratch {
            head,
            prev,
            head16,
            prev16,
            val,
            litsum,
            opt,
        } = &mut *s;
        let trials = params.level >= OPT_LEVEL && params.depth_cap == 0;
        // trial parses insert a whole block ahead of the position searched: the ring then
        // also holds a block beyond the window, so those insertions overwrite no link in reach
        let ahead = if trials { block_size } else { 0 };
        let ring = (window.saturating_add(64).saturating_add(ahead))
            .next_power_of_two()
            .min(n.next_power_of_two())
            .max(64);
        if val.len() < ring {
            val.resize(ring, 0);
        }
        let seg_bits = usize::BITS - n.leading_zeros();
        // about one head per position keeps the table cache-resident on small segments
        // a window beyond one 16 KiB block spreads the chains over more positions
        let want_bits = if window > 1 << 14 {
            cfg.hash_bits.max(17)
        } else {
            cfg.hash_bits
        };
        let hbits = want_bits.min(seg_bits).max(10);
        let hsize = 1usize << hbits;
        // low-entropy data (DNA): no match shorter than ~8 can pay off, so hash 8 bytes
        let hash_len = if cm.avg_lit < 3 * SCALE {
            8
        } else {
            min_match.max(cm.new_min_len).min(8)
        };
        let hmask = if hash_len >= 8 {
            u64::MAX
        } else {
            (1u64 << (8 * hash_len)) - 1
        };
        let tables = Tables {
            ring,
            hbits,
            hmask,
            trials,
        };
        // the same parse over u16 or u32 chain tables (a macro: the two are different types)
        macro_rules! parse_with {
            ($head:expr, $prev:expr) => {{
                let (head, prev) = chain_tables($head, $prev, hsize, ring);
                parse_blocks(
                    data,
                    &seg,
                    block_size,
                    params,
                    tuning,
                    progress,
                    cfg,
                    cm,
                    &hist_counts,
                    min_match,
                    window,
                    &tables,
                    head,
                    prev,
                    val,
                    litsum,
                    opt,
                    chooser,
                )
            }};
        }
        // every stored entry is at most n (position + 1)
        if n <= u16::MAX as usize {
            parse_with!(head16, prev16)
        } else {
            parse_with!(head, prev)
        }
    })
}

/// Segment-wide table geometry of [`parse`].
struct Tables {
    /// Ring size of `prev` and `val` (a power of two).
    ring: usize,
    /// log2 of the hash-head table size.
    hbits: u32,
    /// Mask of the hashed bytes.
    hmask: u64,
    /// Blocks are parsed several ways ([`parse_block_best`]).
    trials: bool,
}

/// A cleared head table of `hsize` entries and a chain ring of `ring` entries (not cleared:
/// links are validated by [`Finder::older`]'s order check and the window).
fn chain_tables<'a, S: ChainSlot>(
    head: &'a mut Vec<S>,
    prev: &'a mut Vec<S>,
    hsize: usize,
    ring: usize,
) -> (&'a mut [S], &'a mut [S]) {
    if prev.len() < ring {
        prev.resize(ring, S::default());
    }
    head.clear();
    head.resize(hsize, S::default());
    (&mut head[..], &mut prev[..ring])
}

/// The block loop of [`parse`] over chain tables of entry type `S`.
#[allow(clippy::too_many_arguments)]
fn parse_blocks<S: ChainSlot>(
    data: &[u8],
    seg: &Range<usize>,
    block_size: usize,
    params: &ParseParams,
    tuning: &CostTuning,
    progress: &dyn Fn(u64),
    cfg: Cfg,
    cm: CostModel,
    hist_counts: &[u64; 256],
    min_match: u32,
    window: usize,
    tables: &Tables,
    head: &mut [S],
    prev: &mut [S],
    val: &mut [u32],
    litsum: &mut Vec<u32>,
    opt: &mut OptBufs,
    chooser: &mut Chooser,
) -> Vec<BlockParse> {
    let Tables {
        ring,
        hbits,
        hmask,
        trials,
    } = *tables;
    let n = seg.end - seg.start;
    let mut f = Finder {
        data,
        base: seg.start,
        end: seg.end,
        head,
        prev,
        val: &mut val[..ring],
        rmask: ring - 1,
        hshift: 64 - hbits,
        hmask,
        next_insert: seg.start,
        val_upto: seg.start,
        cm,
        cfg,
        min_match,
        window,
        independent: window <= block_size,
        rep_codes: params.repeat_codes,
        cap: params.depth_cap,
        mm_mask: if min_match >= 8 {
            u64::MAX
        } else {
            (1u64 << (8 * min_match)) - 1
        },
        rep_mask: (1u32 << cfg.reps.min(4)) - 1,
    };
    // the invariants of `Finder`'s unchecked accesses
    assert!(f.end <= data.len() && f.head.len() == 1 << hbits && f.prev.len() == ring);

    let nblocks = n.div_ceil(block_size);
    let mut blocks = Vec::with_capacity(nblocks);
    let mut alt = trials.then(|| {
        let mut t = tuning.clone();
        t.cmd_new += CONSERVATIVE_EXTRA;
        t.split += CONSERVATIVE_EXTRA;
        CostModel::new(hist_counts, min_match, &t)
    });
    let mut eager = trials.then(|| {
        let mut t = tuning.clone();
        t.cmd_new -= 2 * SCALE;
        t.split -= SCALE;
        CostModel::new(hist_counts, min_match, &t)
    });
    for bi in 0..nblocks {
        let bs = seg.start + bi * block_size;
        let be = (bs + block_size).min(seg.end);
        if trials {
            let trial = trial_parses(params.level);
            blocks.push(parse_block_best(
                &mut f,
                bs,
                be,
                trial,
                stat_passes(params.level),
                chooser,
                alt.as_mut().expect("built for trials"),
                eager.as_mut().expect("built for trials"),
                litsum,
                opt,
            ));
        } else {
            blocks.push(parse_block(&mut f, bs, be, litsum));
        }
        progress((be - bs) as u64);
    }
    blocks
}

/// Extra price (1/16 bits) of a new match's command and of a literal-run cut in the
/// conservative cost model of the third trial parse: it takes fewer, longer matches, which
/// wins where the default model underprices the commands (e.g. DNA, whose literal runs
/// otherwise code in a few bits).
const CONSERVATIVE_EXTRA: i32 = 4 * SCALE;

/// One way to parse a block at levels >= [`OPT_LEVEL`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Trial {
    /// The lazy parser with the level's search settings.
    Lazy,
    /// The price-based optimal parser with the default cost model.
    Opt,
    /// The optimal parser with the conservative cost model.
    OptConservative,
    /// The optimal parser with the eager cost model.
    OptEager,
}

/// The parses tried per block at `level` (>= [`OPT_LEVEL`]); the smallest by
/// [`Chooser::cost`] is kept.
fn trial_parses(level: u32) -> &'static [Trial] {
    if level >= 9 {
        &[
            Trial::Lazy,
            Trial::Opt,
            Trial::OptEager,
            Trial::OptConservative,
        ]
    } else if level >= 8 {
        &[Trial::Lazy, Trial::Opt, Trial::OptEager]
    } else {
        &[Trial::Lazy, Trial::Opt]
    }
}

/// Prices candidate parses of a block by their adaptive order-0 code length, continuing the
/// stream statistics of the blocks chosen before it in the segment (which approximates the
/// group's shared tables, FORMAT.md §5.1).
#[derive(Clone)]
pub(super) struct Chooser {
    counts: [[u32; 256]; STREAM_COUNT],
    totals: [u64; STREAM_COUNT],
}

impl Default for Chooser {
    fn default() -> Self {
        Chooser {
            counts: [[0; 256]; STREAM_COUNT],
            totals: [0; STREAM_COUNT],
        }
    }
}

impl Chooser {
    /// Estimated coded bits of `b`'s streams (Krichevsky-Trofimov estimator seeded with
    /// the counts so far). Deterministic on a given platform.
    fn cost(&self, b: &BlockParse) -> f64 {
        let mut bits = 0.0;
        let mut local = [0u32; 256];
        for (k, s) in b.stream_slices().into_iter().enumerate() {
            local.fill(0);
            let base = &self.counts[k];
            let mut t = self.totals[k] as f64 + 128.0;
            for &x in s {
                let c = base[x as usize] + local[x as usize];
                bits += (t / (c as f64 + 0.5)).log2();
                local[x as usize] += 1;
                t += 1.0;
            }
        }
        bits
    }

    /// Adds the chosen parse's streams to the statistics.
    fn add(&mut self, b: &BlockParse) {
        for (k, s) in b.stream_slices().into_iter().enumerate() {
            for &x in s {
                self.counts[k][x as usize] += 1;
            }
            self.totals[k] += s.len() as u64;
        }
    }
}

/// Parses block `[bs, be)` once per trial, from the same state, and keeps the smallest by
/// [`Chooser::cost`] (the first of equals). Every trial rewrites the dependency values of
/// the whole block; the kept trial's values are restored at the end. The chains keep every
/// position of the block after the first trial; later trials skip those ahead of them.
/// Then `passes` more optimal parses, each priced by [`StatPrices`] from the group's
/// statistics so far plus the streams of the best parse yet, compete the same way.
#[allow(clippy::too_many_arguments)]
fn parse_block_best<S: ChainSlot>(
    f: &mut Finder<'_, S>,
    bs: usize,
    be: usize,
    trials: &[Trial],
    passes: usize,
    chooser: &mut Chooser,
    alt: &mut super::cost::CostModel,
    eager: &mut super::cost::CostModel,
    litsum: &mut Vec<u32>,
    opt: &mut OptBufs,
) -> BlockParse {
    debug_assert_eq!(f.cap, 0);
    let mut best = Best {
        bs,
        be,
        parse: None,
        vals: Vec::new(),
        is_last: false,
    };
    for &t in trials {
        f.val_upto = bs;
        let b = match t {
            Trial::Lazy => {
                // level 6's search: a deeper one costs much time for little in a lazy parse
                let cfg = std::mem::replace(&mut f.cfg, level_cfg(6));
                let b = parse_block(f, bs, be, litsum);
                f.cfg = cfg;
                b
            }
            Trial::Opt => parse_block_opt(f, bs, be, opt, None),
            Trial::OptConservative => {
                std::mem::swap(&mut f.cm, alt);
                let b = parse_block_opt(f, bs, be, opt, None);
                std::mem::swap(&mut f.cm, alt);
                b
            }
            Trial::OptEager => {
                std::mem::swap(&mut f.cm, eager);
                let b = parse_block_opt(f, bs, be, opt, None);
                std::mem::swap(&mut f.cm, eager);
                b
            }
        };
        best.keep(f, chooser, b);
    }
    // re-parses priced by the streams of the best parse so far and of the blocks before
    for _ in 0..passes {
        let (b0, _) = best.parse.as_ref().expect("at least one trial");
        let mut seen = chooser.clone();
        seen.add(b0);
        let prices = StatPrices::new(&seen.counts, f.cm.match_base);
        f.val_upto = bs;
        let b = parse_block_opt(f, bs, be, opt, Some(&prices));
        best.keep(f, chooser, b);
    }
    if !best.is_last {
        let (r1, r2) = f.ring_ranges(bs, be);
        let n1 = r1.len();
        f.val[r1].copy_from_slice(&best.vals[..n1]);
        f.val[r2].copy_from_slice(&best.vals[n1..]);
    }
    f.val_upto = be;
    let (b, _) = best.parse.expect("at least one trial");
    chooser.add(&b);
    b
}

/// The smallest parse of block `[bs, be)` so far ([`Chooser::cost`]) and the block's
/// dependency values under it.
struct Best {
    bs: usize,
    be: usize,
    parse: Option<(BlockParse, f64)>,
    vals: Vec<u32>,
    /// The finder's current values are the kept parse's.
    is_last: bool,
}

impl Best {
    /// Keeps `b` (just parsed by `f`) when it prices below the parse kept so far.
    fn keep<S: ChainSlot>(&mut self, f: &Finder<'_, S>, chooser: &Chooser, b: BlockParse) {
        let cost = chooser.cost(&b);
        self.is_last = self.parse.as_ref().is_none_or(|(_, c)| cost < *c);
        if self.is_last {
            let (r1, r2) = f.ring_ranges(self.bs, self.be);
            self.vals.clear();
            self.vals.extend_from_slice(&f.val[r1]);
            self.vals.extend_from_slice(&f.val[r2]);
            self.parse = Some((b, cost));
        }
    }
}

/// Optimal re-parses per block priced by stream statistics ([`StatPrices`]) at `level`
/// (>= [`OPT_LEVEL`]): one at levels 8 and 9 (spamassassin at level 9: -0.23 % archive
/// bytes for +25 % time; PERFORMANCE.md, ninth session), none at level 7.
fn stat_passes(level: u32) -> usize {
    if level >= 8 {
        1
    } else {
        0
    }
}

/// Emits literals `[lit_start, mp)` and match `m` at `mp`: streams, history, dependency
/// values and block statistics.
fn commit<S: ChainSlot>(
    f: &mut Finder<'_, S>,
    out: &mut BlockParse,
    lit_start: usize,
    mp: usize,
    m: &Cand,
    hist: &mut History,
) {
    f.zero_vals_upto(mp);
    if mp > lit_start {
        emit_literals(out, &f.data[lit_start..mp]);
    }
    let len = m.len as usize;
    let dist = m.dist as usize;
    let src = mp - dist;
    let lvl = f.level_of(src, dist, len);
    debug_assert!(f.cap == 0 || lvl < f.cap);
    f.fill_vals(mp, mp + len, lvl + 1);
    f.val_upto = mp + len;
    out.max_depth = out.max_depth.max(lvl);
    out.lowest_source = out.lowest_source.min(src);
    out.matches += 1;
    emit_match(out, m, hist, f.cm.match_base);
}

fn new_block_parse(bs: usize, blen: usize) -> BlockParse {
    BlockParse {
        literals: Vec::with_capacity(blen / 2 + 16),
        lengths: Vec::new(),
        offsets: Vec::with_capacity(blen / 32),
        commands: Vec::with_capacity(blen / 16 + 4),
        offset_tails: Vec::with_capacity(blen / 32),
        max_depth: 0,
        lowest_source: bs,
        matches: 0,
    }
}

/// Price-based optimal parse of one block (no depth cap): a shortest path over positions
/// where literals cost their order-0 price and matches their estimated coded size, with the
/// repeat history carried along the best path to each position. The prices are the finder's
/// cost model, or `stats` (exact stream-symbol prices from an earlier parse).
fn parse_block_opt<S: ChainSlot>(
    f: &mut Finder<'_, S>,
    bs: usize,
    be: usize,
    o: &mut OptBufs,
    stats: Option<&StatPrices>,
) -> BlockParse {
    match stats {
        Some(p) => opt_parse(f, bs, be, o, p),
        None => {
            let cm = f.cm.clone();
            opt_parse(f, bs, be, o, &cm)
        }
    }
}

/// [`parse_block_opt`] under `prices`.
fn opt_parse<S: ChainSlot, P: Prices>(
    f: &mut Finder<'_, S>,
    bs: usize,
    be: usize,
    o: &mut OptBufs,
    prices: &P,
) -> BlockParse {
    const INF: i32 = i32::MAX / 2;
    let blen = be - bs;
    let mut out = new_block_parse(bs, blen);
    o.price.clear();
    o.price.resize(blen + 1, INF);
    o.from.clear();
    o.from.resize(blen + 1, 0);
    o.len.clear();
    o.len.resize(blen + 1, 0);
    o.dist.clear();
    o.dist.resize(blen + 1, 0);
    o.hist.clear();
    o.hist.resize(blen + 1, History::RESET);
    o.price[0] = 0;
    let min_match = f.min_match as usize;
    let run_start = prices.run_start();
    let nice = f.cfg.nice;
    let mut cands = std::mem::take(&mut o.cands);
    let mut skip_until = 0usize;
    for i in 0..blen {
        if i < skip_until {
            continue;
        }
        let pi = o.price[i];
        debug_assert!(pi < INF);
        // history after the best arrival at i
        let h = if i == 0 {
            History::RESET
        } else if o.len[i] == 0 {
            o.hist[i - 1]
        } else {
            let mut h = o.hist[o.from[i] as usize];
            let d = o.dist[i];
            match h.0.iter().position(|&x| x == d) {
                Some(s) if f.rep_codes => {
                    h.take(s);
                }
                _ => h.push(d),
            }
            h
        };
        o.hist[i] = h;
        // literal
        let p = bs + i;
        let lit_cost = prices.lit(f.data[p])
            + if i == 0 || o.len[i] != 0 {
                run_start
            } else {
                0
            };
        if pi + lit_cost < o.price[i + 1] {
            o.price[i + 1] = pi + lit_cost;
            o.from[i + 1] = i as u32;
            o.len[i + 1] = 0;
        }
        if i + min_match > blen {
            continue;
        }
        f.insert_upto(p);
        f.find_all(p, bs, be, &h, &mut cands);
        let mut longest = 0usize;
        for c in &cands {
            let (lmin, lmax) = (c.gain as usize, c.len as usize);
            longest = longest.max(lmax);
            let rep_slot = if f.rep_codes {
                h.0.iter().position(|&x| x == c.dist)
            } else {
                None
            };
            for l in lmin..=lmax {
                let cost = match rep_slot {
                    Some(s) => prices.rep_match(s, l as u32),
                    None => prices.new_match(l as u32, c.dist),
                };
                let t = i + l;
                if pi + cost < o.price[t] {
                    o.price[t] = pi + cost;
                    o.from[t] = i as u32;
                    o.len[t] = l as u32;
                    o.dist[t] = c.dist;
                }
            }
        }
        if longest >= nice {
            skip_until = i + longest;
        }
    }
    o.cands = cands;

    // backtrack
    o.steps.clear();
    let mut i = blen;
    while i > 0 {
        if o.len[i] == 0 {
            i -= 1;
        } else {
            let j = o.from[i] as usize;
            o.steps.push((j as u32, o.len[i], o.dist[i]));
            i = j;
        }
    }
    out.commands.push(CMD_RESET);
    let mut hist = History::RESET;
    let mut lit_start = bs;
    for k in (0..o.steps.len()).rev() {
        let (j, len, dist) = o.steps[k];
        let mp = bs + j as usize;
        let slot = match hist.0.iter().position(|&x| x == dist) {
            Some(s) if f.rep_codes => s as u8,
            _ => 4,
        };
        let m = Cand {
            len,
            dist,
            slot,
            gain: 0,
        };
        commit(f, &mut out, lit_start, mp, &m, &mut hist);
        lit_start = mp + len as usize;
    }
    f.insert_upto(be.saturating_sub(min_match - 1).max(bs));
    f.zero_vals_upto(be);
    if be > lit_start {
        emit_literals(&mut out, &f.data[lit_start..be]);
    }
    out
}

fn parse_block<S: ChainSlot>(
    f: &mut Finder<'_, S>,
    bs: usize,
    be: usize,
    litsum: &mut Vec<u32>,
) -> BlockParse {
    let blen = be - bs;
    let mut out = new_block_parse(bs, blen);
    litsum.clear();
    litsum.push(0);
    let mut acc = 0u32;
    let lit = &f.cm.lit;
    litsum.extend(f.data[bs..be].iter().map(|&b| {
        acc += lit[b as usize];
        acc
    }));
    let litsum = &litsum[..];

    out.commands.push(CMD_RESET);
    let mut hist = History::RESET;
    let min_match = f.min_match as usize;
    let lazy = f.cfg.lazy as usize;
    let nice = f.cfg.nice;
    let accel = f.cfg.accel;
    let mut pos = bs;
    let mut lit_start = bs;
    let mut misses = 0usize;

    while pos + min_match <= be {
        let mut probes = None;
        if f.cap == 0 {
            (pos, probes) = f.skip_misses(pos, bs, be, &hist, f.cfg.chain, &mut misses);
            if pos + min_match > be {
                break;
            }
        }
        if probes.is_none() {
            f.insert_upto(pos);
            if f.cap != 0 {
                // clamp_cap reads the values of sources below pos
                f.zero_vals_upto(pos);
            }
        }
        let mut m = f.find(pos, bs, be, &hist, litsum, f.cfg.chain, probes);
        if m.gain <= 0 {
            if accel > 0 {
                misses += 1;
                pos += 1 + (misses >> accel);
                if f.cfg.skip_insert {
                    // the skipped positions stay out of the chains
                    f.next_insert = f.next_insert.max(pos);
                }
            } else {
                pos += 1;
            }
            continue;
        }
        misses = 0;
        let mut mp = pos;
        // lazy evaluation: move to a later start while that gains more
        if lazy > 0 && (m.len as usize) < nice {
            'outer: loop {
                for k in 1..=lazy {
                    let q = mp + k;
                    if q + min_match > be {
                        break 'outer;
                    }
                    f.insert_upto(q);
                    if f.cap != 0 {
                        f.zero_vals_upto(q);
                    }
                    let m2 = f.find(q, bs, be, &hist, litsum, f.cfg.lazy_chain, None);
                    // skipping k bytes must pay for itself; the extra byte at k=2 must too
                    let bias = (k as i32 - 1) * SCALE;
                    if m2.gain > m.gain + bias {
                        m = m2;
                        mp = q;
                        if (m.len as usize) >= nice {
                            break 'outer;
                        }
                        continue 'outer;
                    }
                }
                break;
            }
        }

        // extend backwards over pending literals (recovers starts skipped by acceleration)
        let lo = f.lowest_source(bs, mp);
        let d = m.dist as usize;
        let found_at = mp;
        while mp > lit_start && mp - d > lo && f.data[mp - 1] == f.data[mp - 1 - d] {
            mp -= 1;
            m.len += 1;
        }
        if f.cap != 0 {
            // the extended match reads a different first period: give back the extension
            // byte by byte until its level is below the cap again (at `found_at` it was, by
            // clamp_cap), so a cap that cannot bind leaves the parse unchanged
            f.zero_vals_upto(mp);
            while mp < found_at && f.level_of(mp - d, d, m.len as usize) >= f.cap {
                mp += 1;
                m.len -= 1;
            }
        }
        // commit literals [lit_start, mp) and the match at mp
        commit(f, &mut out, lit_start, mp, &m, &mut hist);
        let len = m.len as usize;
        pos = mp + len;
        lit_start = pos;
        if f.cfg.insert_all {
            f.insert_upto(pos);
        } else {
            f.insert_upto((mp + 2).min(pos));
            f.next_insert = f.next_insert.max(pos - 1);
        }
    }
    f.zero_vals_upto(be);
    if be > lit_start {
        emit_literals(&mut out, &f.data[lit_start..be]);
    }
    out
}
