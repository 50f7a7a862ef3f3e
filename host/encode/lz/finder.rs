//! The hash-chain match finder of one segment: chain insertion, match and repeat-offset
//! candidates, and the per-level search settings.

use aceapex_device::lz::History;

use std::ops::Range;

use super::cost::CostModel;

/// Per-level search settings.
#[derive(Clone, Copy, Debug)]
pub(super) struct Cfg {
    /// Most chain candidates examined per position.
    pub(super) chain: u32,
    /// Lazy lookahead (0 = greedy, 1 or 2 positions).
    pub(super) lazy: u32,
    /// log2 of the hash-head table (capped by the segment size).
    pub(super) hash_bits: u32,
    /// Insert every position covered by a match into the chains.
    pub(super) insert_all: bool,
    /// Stop searching once a match this long is found (also skips lazy evaluation).
    pub(super) nice: usize,
    /// Search-skip acceleration after misses: step = 1 + misses >> accel (0 = off).
    pub(super) accel: u32,
    /// Repeat-history slots tried per position (1..=4).
    pub(super) reps: usize,
    /// Positions jumped over by the acceleration are not inserted into the chains.
    pub(super) skip_insert: bool,
    /// Most chain candidates examined at the lazy positions.
    pub(super) lazy_chain: u32,
}

/// Search settings per level. Levels 1-5 are the fast greedy/lazy finder: few chain steps,
/// only the first two positions of a match inserted, and positions jumped over in literal
/// stretches left out of the chains. Level 6 searches deeper and inserts every position.
/// Levels 7-9 (without a depth cap) parse each block several ways ([`trial_parses`]: a lazy
/// parse with level 6's search, then optimal parses under one to three cost models, with
/// these settings) and keep the smallest; 9 also searches deeper.
pub(super) fn level_cfg(level: u32) -> Cfg {
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
pub(super) trait ChainSlot: Copy + Default {
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

/// A match candidate. `slot < 4` means a repeat code of that history slot.
#[derive(Clone, Copy, Debug)]
pub(super) struct Cand {
    pub(super) len: u32,
    pub(super) dist: u32,
    pub(super) slot: u8,
    /// Estimated saving versus coding the bytes as literals (1/16 bits); for the optimal
    /// parser's candidates: the shortest usable length.
    pub(super) gain: i32,
}

pub(super) const NO_MATCH: Cand = Cand {
    len: 0,
    dist: 0,
    slot: 4,
    gain: 0,
};

pub(super) const HASH_MUL: u64 = 0x9E37_79B9_7F4A_7C15;

#[inline(always)]
pub(super) fn read_u64(data: &[u8], p: usize) -> u64 {
    u64::from_le_bytes(data[p..p + 8].try_into().unwrap())
}

/// The 8 bytes at `p` as a little-endian `u64`, without a bounds check.
///
/// # Safety
/// `p + 8 <= data.len()`.
#[inline(always)]
pub(super) unsafe fn read_u64_unchecked(data: &[u8], p: usize) -> u64 {
    debug_assert!(p + 8 <= data.len());
    // SAFETY: the caller guarantees that `data[p..p + 8]` is in bounds; the read is unaligned.
    u64::from_le(unsafe { data.as_ptr().add(p).cast::<u64>().read_unaligned() })
}

/// The lowest position a match at `p` may read: `floor` (its block's or its segment's
/// start, [`Finder::source_floor`]), or `window` bytes back if that is higher.
#[inline(always)]
pub(super) fn lowest_source(floor: usize, window: usize, p: usize) -> usize {
    floor.max(p.saturating_sub(window))
}

/// The largest distance of `hist` less one (a slot of distance 0, never written by a
/// decoder's history, wraps to the largest value): every slot is in reach of `p` when this
/// is below `p - lo`.
#[inline(always)]
pub(super) fn hist_far(hist: &History) -> usize {
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
pub(super) unsafe fn rep_hits(
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
pub(super) fn match_len(data: &[u8], a: usize, b: usize, max: usize) -> usize {
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
pub(super) struct Finder<'a, S: ChainSlot> {
    pub(super) data: &'a [u8],
    /// `seg.start`.
    pub(super) base: usize,
    /// `seg.end`.
    pub(super) end: usize,
    /// Hash heads, `1 << (64 - hshift)` of them.
    pub(super) head: &'a mut [S],
    /// Chain links, ring-indexed (`rmask + 1` of them).
    pub(super) prev: &'a mut [S],
    pub(super) val: &'a mut [u32],
    /// Ring mask of `prev` and `val`.
    pub(super) rmask: usize,
    pub(super) hshift: u32,
    pub(super) hmask: u64,
    /// Next position to insert into the chains.
    pub(super) next_insert: usize,
    /// Positions below this have a valid `val`.
    pub(super) val_upto: usize,
    pub(super) cm: CostModel,
    pub(super) cfg: Cfg,
    pub(super) min_match: u32,
    pub(super) window: usize,
    pub(super) independent: bool,
    pub(super) rep_codes: bool,
    pub(super) cap: u32,
    /// Mask of the first `min(min_match, 8)` bytes of a little-endian `u64`.
    pub(super) mm_mask: u64,
    /// Bit i set: repeat slot i is tried (the first `cfg.reps` slots).
    pub(super) rep_mask: u32,
}

impl<'a, S: ChainSlot> Finder<'a, S> {
    /// The chain entry after `c` (1-based, 0 = end), or 0 when the chain does not go to an
    /// older entry (a ring slot reused since), which ends the walk.
    #[inline]
    pub(super) fn older(&self, c: usize) -> usize {
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
    pub(super) unsafe fn hash(&self, p: usize) -> usize {
        debug_assert!(p + 8 <= self.end);
        // SAFETY: p + 8 <= end <= data.len() (the caller's contract).
        let v = unsafe { read_u64_unchecked(self.data, p) };
        ((v & self.hmask).wrapping_mul(HASH_MUL) >> self.hshift) as usize
    }

    /// Hash head `h` (`h` from [`Finder::hash`]: below `head.len()`, which is `1 << hbits`
    /// with `hshift = 64 - hbits`, as `parse_blocks` builds the finder).
    #[inline(always)]
    pub(super) fn head_at(&self, h: usize) -> S {
        debug_assert!(h < self.head.len());
        // SAFETY: h < 1 << hbits == head.len() (the shift of `hash`; `chain_tables`).
        unsafe { *self.head.get_unchecked(h) }
    }

    /// Sets hash head `h` (as [`Finder::head_at`]).
    #[inline(always)]
    pub(super) fn set_head(&mut self, h: usize, v: S) {
        debug_assert!(h < self.head.len());
        // SAFETY: as in head_at.
        unsafe { *self.head.get_unchecked_mut(h) = v };
    }

    /// The chain link of ring slot `r & rmask` (as [`Finder::set_prev`]).
    #[inline(always)]
    pub(super) fn prev_at(&self, r: usize) -> S {
        let i = r & self.rmask;
        debug_assert!(i < self.prev.len());
        // SAFETY: i <= rmask == prev.len() - 1.
        unsafe { *self.prev.get_unchecked(i) }
    }

    /// Sets the chain link of ring slot `r & rmask` (`prev.len()` is `rmask + 1`, as
    /// `parse_blocks` builds the finder).
    #[inline(always)]
    pub(super) fn set_prev(&mut self, r: usize, v: S) {
        let i = r & self.rmask;
        debug_assert!(i < self.prev.len());
        // SAFETY: i <= rmask == prev.len() - 1.
        unsafe { *self.prev.get_unchecked_mut(i) = v };
    }

    /// Inserts every not yet inserted position below `p` (those that have 8 bytes left in
    /// the segment) into the chains.
    #[inline(always)]
    pub(super) fn insert_upto(&mut self, p: usize) {
        // the usual case at a literal position: `p` is already the next one to insert
        if self.next_insert < p {
            self.insert_below(p);
        }
    }

    /// [`Finder::insert_upto`]'s work when some position below `p` is not inserted yet.
    #[inline(never)]
    pub(super) fn insert_below(&mut self, p: usize) {
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

    /// Takes the chains back to before position `to` (at most `next_insert`) was inserted:
    /// every hash head again names the newest position below `to` with its hash, so that a
    /// later trial parse of the same block walks the positions before it, as the first trial
    /// did, instead of stepping over every position of the block after it that has the same
    /// hash (which took time quadratic in the block's length on repetitive data). The links
    /// of the positions taken back get the same values when they are inserted again, so the
    /// parses find the same candidates. Does nothing where those positions span more than
    /// the ring (their links may be overwritten).
    pub(super) fn rewind_inserts(&mut self, to: usize) {
        let hi = self.next_insert.min(self.end.saturating_sub(7));
        if self.next_insert <= to || hi.saturating_sub(to) > self.rmask + 1 {
            return;
        }
        for q in (to..hi).rev() {
            // SAFETY: q < hi <= end - 7, so q + 8 <= end.
            let h = unsafe { self.hash(q) };
            let r = q - self.base;
            // only a position that was inserted heads its chain here (the later ones are
            // taken back already); a skipped one leaves the head as it is
            if self.head_at(h).get() == r + 1 {
                self.set_head(h, self.prev_at(r));
            }
        }
        self.next_insert = to;
    }

    /// The chain head for `p` (0 = empty chain); if `p` is the next position to insert,
    /// also inserts it, so that the hash and the head-table load (the likeliest cache miss
    /// of the finder) are paid once per position.
    ///
    /// # Safety
    /// `p + 8 <= self.end` (as [`Finder::hash`]).
    #[inline(always)]
    pub(super) unsafe fn head_and_insert(&mut self, p: usize) -> usize {
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
    pub(super) fn prefix_eq(&self, a: usize, b: usize, k: usize) -> bool {
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
    pub(super) fn ring_ranges(&self, from: usize, to: usize) -> (Range<usize>, Range<usize>) {
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
    pub(super) fn fill_vals(&mut self, from: usize, to: usize, v: u32) {
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
    pub(super) fn zero_vals_upto(&mut self, p: usize) {
        if self.val_upto < p {
            self.fill_vals(self.val_upto, p, 0);
            self.val_upto = p;
        }
    }

    /// Longest prefix of a match (source `src`, distance `dist`, `len` bytes) whose level
    /// stays below the depth cap.
    #[inline(always)]
    pub(super) fn clamp_cap(&self, src: usize, dist: usize, len: usize) -> usize {
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

    /// The match at `p` from `src` (distance `dist`, at most `max` bytes) and its length
    /// clamped by the depth cap ([`Finder::clamp_cap`]), measured in doubling steps of at
    /// least `need` bytes so that a match the cap cuts short is not measured to the end of
    /// the block. Returns `(raw, len)`: `raw` is the match length or, where the cap cut the
    /// match, a bound of at least `need` it reaches; `len` is exactly
    /// `clamp_cap(src, dist, match length)`.
    #[inline(always)]
    fn capped_match(
        &self,
        src: usize,
        p: usize,
        dist: usize,
        max: usize,
        need: usize,
    ) -> (usize, usize) {
        if self.cap == 0 {
            let raw = match_len(self.data, src, p, max);
            return (raw, raw);
        }
        let mut bound = need.max(64).min(max);
        loop {
            let raw = match_len(self.data, src, p, bound);
            let len = self.clamp_cap(src, dist, raw);
            if raw < bound || bound == max || len < raw {
                return (raw, len);
            }
            bound = bound.saturating_mul(2).min(max);
        }
    }

    /// Dependency level of a match reading the first period of `[src, src + len)`.
    #[inline(always)]
    pub(super) fn level_of(&self, src: usize, dist: usize, len: usize) -> u32 {
        let (r1, r2) = self.ring_ranges(src, src + len.min(dist));
        let m1 = self.val[r1].iter().fold(0, |a, &v| a.max(v));
        self.val[r2].iter().fold(m1, |a, &v| a.max(v))
    }

    /// The floor of match sources for the block starting at `bs`: the block's start when
    /// blocks are independent (window within a block), else the segment's.
    #[inline(always)]
    pub(super) fn source_floor(&self, bs: usize) -> usize {
        if self.independent {
            bs
        } else {
            self.base
        }
    }

    /// The lowest position a match at `p` in the block starting at `bs` may read
    /// ([`lowest_source`] with [`Finder::source_floor`] and the window).
    #[inline(always)]
    pub(super) fn lowest_source(&self, bs: usize, p: usize) -> usize {
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
    pub(super) unsafe fn probe(
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
    pub(super) fn skip_misses(
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
    pub(super) fn find(
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
                    let (raw, len) = self.capped_match(cand, p, d, maxlen, q + 1);
                    if raw > q && len > best_len {
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
    pub(super) fn find_tail(
        &self,
        p: usize,
        bs: usize,
        be: usize,
        hist: &History,
        litsum: &[u32],
    ) -> Cand {
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
    pub(super) fn repeat_candidate(
        &self,
        p: usize,
        i: usize,
        d: usize,
        maxlen: usize,
        lits: &impl Fn(usize) -> i32,
    ) -> Option<(usize, Option<Cand>)> {
        let min_match = self.min_match as usize;
        let src = p - d;
        let (raw, len) = self.capped_match(src, p, d, maxlen, min_match);
        if raw < min_match {
            return None;
        }
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
    pub(super) fn find_all(
        &mut self,
        p: usize,
        bs: usize,
        be: usize,
        hist: &History,
        cands: &mut Vec<Cand>,
    ) {
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
