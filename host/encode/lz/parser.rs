//! The parser proper: hash-chain match finder, lazy evaluation, cost-aware acceptance,
//! dependency-level tracking and stream emission.

use std::cell::RefCell;
use std::ops::Range;

use aceapex_device::format::{CMD_RESET, MIN_MATCH_BASE, STREAM_COUNT};
use aceapex_device::lz::{write_offset, write_varint, History};

use super::cost::{CostModel, CostTuning, Prices, StatPrices, SCALE};
use super::finder::*;
use super::{BlockParse, ParseParams};

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

/// Levels from which (without a depth cap) blocks are parsed by the price-based optimal parser.
const OPT_LEVEL: u32 = 7;

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
    crate::encode::entropy::count(&mut hist_counts, &data[seg.clone()]);
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
    // each trial and pass parses the block with the chains as they were before it
    let inserted_to = f.next_insert;
    for (k, &t) in trials.iter().enumerate() {
        if k > 0 {
            f.rewind_inserts(inserted_to);
        }
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
        f.rewind_inserts(inserted_to);
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
/// (>= [`OPT_LEVEL`]): one at levels 8 and 9, which put ratio before encode time, none at
/// level 7.
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
