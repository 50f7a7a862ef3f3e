//! The parser proper: hash-chain match finder, lazy evaluation, cost-aware acceptance,
//! dependency-level tracking and stream emission.

use std::cell::RefCell;
use std::ops::Range;

use aceapex_device::format::{CMD_MATCH_LONG, CMD_MATCH_SHORT, CMD_REPEAT, CMD_RESET, MATCH_BASE};
use aceapex_device::lz::{write_varint, History};

use super::cost::{CostModel, CostTuning, SCALE};
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
}

fn level_cfg(level: u32) -> Cfg {
    let (chain, lazy, hash_bits, insert_all, nice, accel) = match level.clamp(1, 9) {
        1 => (2, 0, 14, false, 24, 4),
        2 => (4, 0, 15, false, 32, 5),
        3 => (6, 1, 16, true, 48, 0),
        4 => (12, 1, 16, true, 64, 0),
        5 => (24, 1, 17, true, 96, 0),
        6 => (48, 1, 17, true, 160, 0),
        7 => (96, 2, 18, true, 256, 0),
        8 => (256, 2, 18, true, 512, 0),
        _ => (1024, 2, 18, true, 2048, 0),
    };
    Cfg { chain, lazy, hash_bits, insert_all, nice, accel }
}

/// Buffers reused between calls on one thread.
#[derive(Default)]
struct Scratch {
    /// Hash heads: segment-relative position + 1, 0 = empty.
    head: Vec<u32>,
    /// Chain links, ring-indexed by segment-relative position.
    prev: Vec<u32>,
    /// Per-byte dependency value, ring-indexed: 0 for a literal byte, else 1 + the level of
    /// the match that wrote it. A match's level is the max over the bytes it reads.
    val: Vec<u32>,
    /// Prefix sums of literal costs over the current block.
    litsum: Vec<u32>,
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
    /// Estimated saving versus coding the bytes as literals (1/16 bits).
    gain: i32,
}

const NO_MATCH: Cand = Cand { len: 0, dist: 0, slot: 4, gain: 0 };

const HASH_MUL: u64 = 0x9E37_79B9_7F4A_7C15;

#[inline(always)]
fn read_u64(data: &[u8], p: usize) -> u64 {
    u64::from_le_bytes(data[p..p + 8].try_into().unwrap())
}

/// Length of the common prefix of `data[a..]` and `data[b..]`, at most `max`;
/// requires `a < b` and `b + max <= data.len()`.
#[inline(always)]
fn match_len(data: &[u8], a: usize, b: usize, max: usize) -> usize {
    let mut n = 0;
    while n + 8 <= max {
        let x = read_u64(data, a + n) ^ read_u64(data, b + n);
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

struct Finder<'a> {
    data: &'a [u8],
    /// `seg.start`.
    base: usize,
    /// `seg.end`.
    end: usize,
    head: &'a mut [u32],
    prev: &'a mut [u32],
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
}

impl<'a> Finder<'a> {
    #[inline(always)]
    fn hash(&self, p: usize) -> usize {
        ((read_u64(self.data, p) & self.hmask).wrapping_mul(HASH_MUL) >> self.hshift) as usize
    }

    /// Inserts every not yet inserted position below `p` (those that have 8 bytes left in
    /// the segment) into the chains.
    #[inline(always)]
    fn insert_upto(&mut self, p: usize) {
        let lim = p.min(self.end.saturating_sub(7));
        while self.next_insert < lim {
            let q = self.next_insert;
            let h = self.hash(q);
            let r = q - self.base;
            self.prev[r & self.rmask] = self.head[h];
            self.head[h] = (r + 1) as u32;
            self.next_insert += 1;
        }
        if self.next_insert < p {
            self.next_insert = p;
        }
    }

    /// Marks the pending literal bytes below `p` as literal-written (value 0).
    #[inline(always)]
    fn zero_vals_upto(&mut self, p: usize) {
        while self.val_upto < p {
            self.val[(self.val_upto - self.base) & self.rmask] = 0;
            self.val_upto += 1;
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
        let span = len.min(dist);
        let mut lvl = 0;
        for k in 0..span {
            lvl = lvl.max(self.val[(src + k - self.base) & self.rmask]);
        }
        lvl
    }

    /// Best candidate at `p` in block `[bs, be)` with history `hist` and literal-cost prefix
    /// sums `litsum` (indexed from `bs`).
    #[inline(always)]
    fn find(&mut self, p: usize, bs: usize, be: usize, hist: &History, litsum: &[u32]) -> Cand {
        let maxlen = be - p;
        let min_match = self.min_match as usize;
        if maxlen < min_match {
            return NO_MATCH;
        }
        let floor = if self.independent { bs } else { self.base };
        let lo = floor.max(p.saturating_sub(self.window));
        let lbase = litsum[p - bs];
        let lits = |len: usize| (litsum[p - bs + len] - lbase) as i32;
        let mut best = NO_MATCH;
        // longest (cap-clamped) length seen: later chain candidates must beat it
        let mut best_len = 0usize;

        // repeat distances first
        for i in 0..4 {
            let d = hist.0[i] as usize;
            if d == 0 || d > p - lo || hist.0[..i].contains(&(d as u32)) {
                continue;
            }
            let src = p - d;
            let raw = match_len(self.data, src, p, maxlen);
            if raw < min_match {
                continue;
            }
            let len = self.clamp_cap(src, d, raw);
            if len < min_match {
                continue;
            }
            best_len = best_len.max(len);
            let (cost, slot) = if self.rep_codes {
                (self.cm.rep_match(len as u32), i as u8)
            } else {
                if (len as u32) < self.cm.min_len_at(d as u32) {
                    continue;
                }
                (self.cm.new_match(len as u32, d as u32), 4)
            };
            let g = lits(len) - cost;
            if g > best.gain {
                best = Cand { len: len as u32, dist: d as u32, slot, gain: g };
            }
        }
        if best_len >= self.cfg.nice || best_len == maxlen || p + 8 > self.end {
            return best;
        }

        // hash chain
        let min_new = self.cm.new_min_len.max(self.min_match) as usize;
        let h = self.hash(p);
        let mut c = self.head[h] as usize;
        let mut steps = self.cfg.chain;
        while c != 0 {
            let cand = self.base + c - 1;
            if cand < lo {
                break;
            }
            // a useful candidate is longer than best_len and at least min_new
            let q = best_len.max(min_new - 1);
            if q >= maxlen {
                break;
            }
            if self.data[cand + q] == self.data[p + q] {
                let d = p - cand;
                let raw = match_len(self.data, cand, p, maxlen);
                if raw > q {
                    let len = self.clamp_cap(cand, d, raw);
                    if len > best_len {
                        best_len = len;
                        if len as u32 >= self.cm.min_len_at(d as u32) {
                            let g = lits(len) - self.cm.new_match(len as u32, d as u32);
                            if g > best.gain {
                                best = Cand { len: len as u32, dist: d as u32, slot: 4, gain: g };
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
            let nc = self.prev[(c - 1) & self.rmask] as usize;
            if nc >= c {
                break;
            }
            c = nc;
        }
        best
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
fn emit_match(out: &mut BlockParse, m: &Cand, hist: &mut History) {
    if m.slot < 4 {
        let i = m.slot;
        let l = m.len - MATCH_BASE;
        if l < 15 {
            out.commands.push(CMD_REPEAT | (i << 4) | l as u8);
        } else {
            out.commands.push(CMD_REPEAT | (i << 4) | 15);
            write_varint(m.len - 21, &mut out.lengths);
        }
        let d = hist.take(i as usize);
        debug_assert_eq!(d, m.dist);
    } else {
        let l = m.len - MATCH_BASE;
        if l <= 61 {
            out.commands.push(CMD_MATCH_SHORT + l as u8);
        } else {
            out.commands.push(CMD_MATCH_LONG);
            write_varint(l, &mut out.lengths);
        }
        write_varint(m.dist, &mut out.offsets);
        hist.push(m.dist);
    }
}

pub(super) fn parse(
    data: &[u8],
    seg: Range<usize>,
    block_size: usize,
    params: &ParseParams,
    tuning: &CostTuning,
) -> Vec<BlockParse> {
    assert!(seg.start <= seg.end && seg.end <= data.len(), "segment outside the data");
    assert!(block_size > 0, "block_size must be > 0");
    let n = seg.end - seg.start;
    assert!(n < u32::MAX as usize, "segment must be smaller than 4 GiB");
    if n == 0 {
        return Vec::new();
    }
    let cfg = level_cfg(params.level);
    let min_match = params.min_match.max(MATCH_BASE);
    let window = params.window as usize;

    let mut hist_counts = [0u64; 256];
    for &b in &data[seg.clone()] {
        hist_counts[b as usize] += 1;
    }
    let cm = CostModel::new(&hist_counts, min_match, tuning);

    SCRATCH.with(|s| {
        let mut s = s.borrow_mut();
        let Scratch { head, prev, val, litsum } = &mut *s;
        let ring = (window.saturating_add(64)).next_power_of_two().min(n.next_power_of_two()).max(64);
        if prev.len() < ring {
            prev.resize(ring, 0);
        }
        if val.len() < ring {
            val.resize(ring, 0);
        }
        let seg_bits = usize::BITS - n.leading_zeros();
        let hbits = cfg.hash_bits.min(seg_bits + 1).max(10);
        let hsize = 1usize << hbits;
        head.clear();
        head.resize(hsize, 0);
        let hash_len = min_match.max(cm.new_min_len).min(8);
        let hmask = if hash_len >= 8 { u64::MAX } else { (1u64 << (8 * hash_len)) - 1 };

        let mut f = Finder {
            data,
            base: seg.start,
            end: seg.end,
            head: &mut head[..],
            prev: &mut prev[..ring],
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
        };

        let nblocks = n.div_ceil(block_size);
        let mut blocks = Vec::with_capacity(nblocks);
        for bi in 0..nblocks {
            let bs = seg.start + bi * block_size;
            let be = (bs + block_size).min(seg.end);
            blocks.push(parse_block(&mut f, bs, be, litsum));
        }
        blocks
    })
}

fn parse_block(f: &mut Finder<'_>, bs: usize, be: usize, litsum: &mut Vec<u32>) -> BlockParse {
    let blen = be - bs;
    let mut out = BlockParse {
        literals: Vec::with_capacity(blen / 2 + 16),
        lengths: Vec::new(),
        offsets: Vec::with_capacity(blen / 32),
        commands: Vec::with_capacity(blen / 16 + 4),
        max_depth: 0,
        lowest_source: bs,
        matches: 0,
    };
    litsum.clear();
    litsum.reserve(blen + 1);
    let mut acc = 0u32;
    litsum.push(0);
    for &b in &f.data[bs..be] {
        acc += f.cm.lit[b as usize];
        litsum.push(acc);
    }
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
        f.insert_upto(pos);
        f.zero_vals_upto(pos);
        let mut m = f.find(pos, bs, be, &hist, litsum);
        if m.gain <= 0 {
            if accel > 0 {
                misses += 1;
                pos += 1 + (misses >> accel);
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
                    f.zero_vals_upto(q);
                    let m2 = f.find(q, bs, be, &hist, litsum);
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

        // commit literals [lit_start, mp) and the match at mp
        f.zero_vals_upto(mp);
        if mp > lit_start {
            emit_literals(&mut out, &f.data[lit_start..mp]);
        }
        let len = m.len as usize;
        let dist = m.dist as usize;
        let src = mp - dist;
        let lvl = f.level_of(src, dist, len);
        debug_assert!(f.cap == 0 || lvl < f.cap);
        for r in mp..mp + len {
            f.val[(r - f.base) & f.rmask] = lvl + 1;
        }
        f.val_upto = mp + len;
        out.max_depth = out.max_depth.max(lvl);
        out.lowest_source = out.lowest_source.min(src);
        out.matches += 1;
        emit_match(&mut out, &m, &mut hist);
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
