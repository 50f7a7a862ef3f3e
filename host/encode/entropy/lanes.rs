//! Lane counts of a block's slices (FORMAT.md §5.3): symbols per lane by level, the step-up
//! rules that bound a warp's decode chain, wide lanes, and when a slice stays raw.

use crate::device::format::*;

/// Number of interleaved lanes the encoder would give a slice of `n` symbols on its own: about
/// one lane per `per_lane` symbols ([`symbols_per_lane`] of the level), rounded down to a
/// count in [`LANE_COUNTS`] (at least 1, at most 32), except that 2-3 lanes' worth rounds up
/// to 4 (the CPU decoder decodes 4-lane slices two per AVX2 vector, 2-lane ones with scalar
/// code). Each lane costs about 3 bytes over the entropy (its final state, measured); more
/// lanes mean shorter dependency chains for the decoders. [`block_lanes`] then fits a block's
/// slices into one warp.
pub fn lanes_for(n: usize, per_lane: usize) -> usize {
    let want = match n / per_lane.max(1) {
        2 | 3 => 4,
        w => w,
    };
    LANE_COUNTS
        .iter()
        .rev()
        .copied()
        .find(|&l| l <= want)
        .unwrap_or(1)
}

/// Symbols per lane at the encoder's levels 1-7 (see [`symbols_per_lane`]).
pub const SYMBOLS_PER_LANE: usize = 256;

/// Fewest symbols per lane [`symbols_per_lane`] gives a block smaller than 16 KiB.
pub const MIN_SYMBOLS_PER_LANE: usize = 128;

/// Symbols per lane at encoder level `level` and block size `block_size` (bytes):
/// [`SYMBOLS_PER_LANE`] up to level 7, four times as many at level 8 and sixteen times at
/// level 9, the levels that put ratio before decode speed (fewer lane states for much longer
/// GPU rANS chains). Blocks below 16 KiB take proportionally fewer symbols per lane (at
/// least 128), so an 8 KiB block gets about the lanes of a 16 KiB one and chains half as
/// long: a GPU decodes one block per warp, and on a small archive the rANS stage waits on
/// its longest chain, which this shortens for a little ratio.
pub fn symbols_per_lane(level: u32, block_size: u32) -> usize {
    let per = match level {
        ..=7 => SYMBOLS_PER_LANE,
        8 => 4 * SYMBOLS_PER_LANE,
        _ => 16 * SYMBOLS_PER_LANE,
    };
    let full = aceapex_device::format::DEFAULT_BLOCK_SIZE as usize;
    if (block_size as usize) < full {
        (per * block_size as usize / full).max(MIN_SYMBOLS_PER_LANE)
    } else {
        per
    }
}

/// Lane counts the encoder uses: the ones the CPU decoder has wide kernels for (1-lane slices
/// several side by side, 4-lane ones two per AVX2 vector, 8-32 lanes in 8-lane vectors, the
/// last one half used for 12 and 20, and slices of 8-24 lanes two or more at a time) and
/// the GPU's packed-literal kernels store as aligned words (a multiple of 4). Any count
/// `1..=32` is valid format (FORMAT.md §5.3); these are an encoder choice. (Without AVX2,
/// the CPU decoder runs all of them as scalar rows.) 12 and 20 let a block's longest slice
/// step up where 16 would not fit beside the others. 28 is not among them: a DNA block's
/// 28-lane literal slice decodes alone on the CPU, where two 24-lane ones go together, which
/// costs the CPU decode more than it gains the GPU's.
pub const LANE_COUNTS: [usize; 8] = [1, 4, 8, 12, 16, 20, 24, 32];

/// Lane counts for the rANS slices of one block (`n[k]` symbols of stream `k`, `None` for a
/// slice that is stored raw or empty; the result is 0 there), with about `per_lane` symbols
/// per lane ([`symbols_per_lane`] of the level).
///
/// A GPU warp decodes a block's rANS slices side by side, one symbol per lane per step, so
/// its time is the largest `ceil(n[k] / lanes[k])` (the steps) when the lanes fit in 32
/// (`device/src/dense.rs`, `rans_decode_slices`), while every lane costs about 3 bytes of
/// archive (its final state). So: each slice starts at [`lanes_for`] (a slice of at most
/// [`ALWAYS_RAW_BYTES`], stored raw anyway, at 0); while the total is over 32, the slice with
/// the most lanes (the lowest stream on a tie) steps down to the next count of
/// [`LANE_COUNTS`]; then every slice takes the fewest lanes of [`LANE_COUNTS`] that keep its
/// steps within 1/8 over the block's largest. At levels 1-7 the longest chain then steps up
/// and may take two warp rounds ([`block_lanes_packed`]). Deterministic: depends on `n` and
/// `per_lane` alone.
pub fn block_lanes(n: [Option<usize>; STREAM_COUNT], per_lane: usize) -> [usize; STREAM_COUNT] {
    block_lanes_packed(n, per_lane, 1)
}

/// [`block_lanes`] for a block whose literal slice holds packed symbols of `literal_width` literals
/// each (FORMAT.md §5.6; `n[0]` counts symbols): its starting lane count is the one of its `n[0] *
/// literal_width` literals, so packing shortens the chains rather than trading lanes for them; the
/// steps are counted in symbols. With packed literals the longest chain is often a slice with few
/// lanes (DNA's command slice: ~270 symbols on one lane against ~200 steps of literals), so after
/// the trim to 1/8 over the longest, the slice with the longest chain steps up to the next lane
/// count while the warp has room, and the trim runs again, this time to the longest itself (each
/// lane ~3 bytes). The step-up runs for every block at `per_lane <= SYMBOLS_PER_LANE` (levels 1-7,
/// and 8-9 with blocks of 4 KiB or less: [`symbols_per_lane`]) too, while the longest chain is over
/// 1.5 times `per_lane` steps (a slice that got its lanes takes up to about twice): the first trim
/// can leave a warp half empty (a block of 7,181 literals, 1,243 offsets, 2,228 commands and 991
/// offset tails: 24 + 4 + 8 + 4 lanes are over 32, the literals step down twice, to 8, and the
/// tails' 991 steps on one lane become the archive's longest chain). Then, at `per_lane <= SYMBOLS_PER_LANE`,
/// if the chain is still long, [`two_round_lanes`], and last [`step_up_by_rounds`].
pub fn block_lanes_packed(
    n: [Option<usize>; STREAM_COUNT],
    per_lane: usize,
    literal_width: usize,
) -> [usize; STREAM_COUNT] {
    // decoded bytes per symbol of each stream
    let w = |k: usize| {
        if k == STREAM_LITERALS {
            literal_width.max(1)
        } else {
            1
        }
    };
    // a slice that [`store_slice`] stores raw whatever its lanes takes none of the warp's
    let n: [Option<usize>; STREAM_COUNT] =
        std::array::from_fn(|k| n[k].filter(|&n| n * w(k) > ALWAYS_RAW_BYTES));
    let mut lanes = std::array::from_fn(|k| n[k].map_or(0, |n| lanes_for(n * w(k), per_lane)));
    while lanes.iter().sum::<usize>() > WARP_LANES as usize {
        let (k, &most) = lanes
            .iter()
            .enumerate()
            .rev()
            .max_by_key(|&(_, &l)| l)
            .expect("five streams");
        match LANE_COUNTS.iter().rev().copied().find(|&l| l < most) {
            Some(l) => lanes[k] = l,
            None => break, // every slice at 1 lane: 5 <= 32, unreachable
        }
    }
    let steps = |n: usize, l: usize| n.div_ceil(l);
    // each slice down to the fewest lanes that keep its steps within 1/`slack` over the
    // longest (0: not over it)
    let trim = |lanes: &mut [usize; STREAM_COUNT], slack: usize| {
        let longest = (0..STREAM_COUNT)
            .filter_map(|k| n[k].map(|n| steps(n, lanes[k])))
            .max()
            .unwrap_or(0);
        let allowed = longest + longest.checked_div(slack).unwrap_or(0);
        for k in 0..STREAM_COUNT {
            if let Some(n) = n[k] {
                lanes[k] = LANE_COUNTS
                    .iter()
                    .copied()
                    .find(|&l| l >= lanes[k] || steps(n, l) <= allowed)
                    .unwrap_or(lanes[k]);
            }
        }
    };
    trim(&mut lanes, 8);
    if literal_width > 1 || per_lane <= SYMBOLS_PER_LANE {
        // the longest chain's slice up a lane count while the warp has room (unpacked: while
        // it is over 1.5 times `per_lane` steps), then trim again, not past the new longest
        // (with the slack of the first trim the slice just stepped up could step back down)
        while let Some((k, s)) = longest_slice(&n, &lanes) {
            if literal_width == 1 && 2 * s <= 3 * per_lane {
                break;
            }
            let total: usize = lanes.iter().sum();
            match LANE_COUNTS.iter().copied().find(|&l| l > lanes[k]) {
                Some(l) if total - lanes[k] + l <= WARP_LANES as usize => lanes[k] = l,
                _ => break,
            }
        }
        trim(&mut lanes, 0);
        if per_lane <= SYMBOLS_PER_LANE {
            if let Some(two) = two_round_lanes(&n, &lanes, per_lane) {
                lanes = two;
            }
            lanes = step_up_by_rounds(&n, lanes);
        }
    }
    lanes
}

/// Last stage of [`block_lanes_packed`] at `per_lane <= SYMBOLS_PER_LANE` (levels 1-7, and 8-9 with
/// blocks of 4 KiB or less): the longest chain's slice steps up lane counts even where the block's
/// lanes then exceed 32, judged by the GPU warp's rounds ([`aceapex_device::rans::warp_steps`]: a
/// slice that no longer fits waits for a second round, which for a short slice costs a few steps).
/// The step-up in [`block_lanes_packed`] stops at 32 lanes in all, so a slice of a few symbols
/// could keep the longest one from its next count: 5,284 literals on 16 lanes, 9 lengths on 1,
/// 1,467 offsets, 2,570 commands and 1,220 tails on 4 each, 643 steps (the commands'); with
/// the commands on 8 the lengths go to a second round: 367 + 9 = 376. Steps the longest slice up one count
/// at a time (the others as they are) until it has 32 lanes or the chain is within
/// [`STEP_UP_CHAIN`], and keeps each chain shorter than the best so far by at least
/// [`TWO_ROUND_STEPS_PER_LANE`] steps per lane it adds over that best; then each slice goes down to
/// the fewest lanes of [`LANE_COUNTS`] that keep that chain. (`warp_steps` does not keep context
/// and packed slices apart as the packed kernels do, so for a group with both the chain is an
/// estimate, as everywhere in the lane choice.) Deterministic.
fn step_up_by_rounds(
    n: &[Option<usize>; STREAM_COUNT],
    lanes: [usize; STREAM_COUNT],
) -> [usize; STREAM_COUNT] {
    let chain = |l: &[usize; STREAM_COUNT]| warp_chain(n, l);
    let total = |l: &[usize; STREAM_COUNT]| l.iter().sum::<usize>();
    let (mut best, mut best_chain) = (lanes, chain(&lanes));
    let mut cur = lanes;
    while chain(&cur) > STEP_UP_CHAIN {
        let Some((k, _)) = longest_slice(n, &cur) else {
            break;
        };
        match LANE_COUNTS.iter().copied().find(|&l| l > cur[k]) {
            Some(l) => cur[k] = l,
            None => break,
        }
        let c = chain(&cur);
        let added = total(&cur).saturating_sub(total(&best));
        if c + TWO_ROUND_STEPS_PER_LANE * added <= best_chain && c < best_chain {
            (best, best_chain) = (cur, c);
        }
    }
    if best == lanes {
        return lanes;
    }
    for k in 0..STREAM_COUNT {
        if n[k].is_none() {
            continue;
        }
        for &l in LANE_COUNTS.iter().filter(|&&l| l < best[k]) {
            let mut fewer = best;
            fewer[k] = l;
            if chain(&fewer) <= best_chain {
                best = fewer;
                break;
            }
        }
    }
    best
}

/// Steps of the GPU warp's rANS rounds on a block of `n[k]` symbols per stream (`None`: no
/// rANS slice) with `lanes[k]` lanes: [`aceapex_device::rans::warp_steps`], the kernel's
/// rounds, for the encoder's lane choice.
pub fn warp_chain(n: &[Option<usize>; STREAM_COUNT], lanes: &[usize; STREAM_COUNT]) -> usize {
    aceapex_device::rans::warp_steps(
        std::array::from_fn(|k| n[k].unwrap_or(0) as u32),
        std::array::from_fn(|k| lanes[k] as u32),
    ) as usize
}

/// The slice with the longest chain, `ceil(n / lanes)` steps (the lowest stream on a tie),
/// and its steps; `None` without a rANS slice.
fn longest_slice(
    n: &[Option<usize>; STREAM_COUNT],
    lanes: &[usize; STREAM_COUNT],
) -> Option<(usize, usize)> {
    (0..STREAM_COUNT)
        .filter_map(|k| n[k].map(|n| (k, n.div_ceil(lanes[k].max(1)))))
        .max_by_key(|&(k, s)| (s, std::cmp::Reverse(k)))
}

/// Bytes up to which a slice is always stored raw ([`super::store_slice`]): a rANS slice holds at
/// least one 4-byte lane state, and is taken only when shorter than the raw bytes. Such a
/// slice gets no lanes in [`block_lanes_packed`], so that it leaves the warp's room to the
/// others (a 2-byte length slice would otherwise keep the commands from 8 lanes).
pub const ALWAYS_RAW_BYTES: usize = 4;

/// Lanes for two rounds of the GPU warp instead of one, for a block whose one-round chain is
/// still over twice `per_lane` steps because its longest slice cannot step up within the
/// warp (an unpacked DNA block: 16,331 literals on 24 lanes and 140 commands on one lane, 25
/// lanes, 681 steps; 32 + 1 do not fit): that slice gets 32 lanes, a round of its own, and
/// every other slice the fewest lanes of [`LANE_COUNTS`] that keep it within `per_lane / 4`
/// steps, in a second round (511 + 35 = 546 steps for 11 lanes more, ~33 bytes). `None`
/// unless that is shorter by the kernel's rounds ([`aceapex_device::rans::warp_steps`]) by
/// [`TWO_ROUND_STEPS_PER_LANE`] steps per lane it adds, and the other slices fit in one
/// warp. Such blocks bound the GPU rANS stage of small DNA archives, whose blocks are all in
/// flight at once.
fn two_round_lanes(
    n: &[Option<usize>; STREAM_COUNT],
    lanes: &[usize; STREAM_COUNT],
    per_lane: usize,
) -> Option<[usize; STREAM_COUNT]> {
    let chain = |l: &[usize; STREAM_COUNT]| warp_chain(n, l);
    let now = chain(lanes);
    if now <= 2 * per_lane {
        return None;
    }
    let (k, _) = longest_slice(n, lanes)?;
    if lanes[k] >= WARP_LANES as usize {
        return None;
    }
    let quick = (per_lane / 4).max(1);
    let mut two = [0usize; STREAM_COUNT];
    two[k] = WARP_LANES as usize;
    for j in (0..STREAM_COUNT).filter(|&j| j != k) {
        if let Some(n) = n[j] {
            two[j] = LANE_COUNTS
                .iter()
                .copied()
                .find(|&l| n.div_ceil(l) <= quick)
                .unwrap_or(WARP_LANES as usize);
        }
    }
    let total: usize = two.iter().sum();
    let others = total - two[k];
    let then = chain(&two);
    let added = total.saturating_sub(lanes.iter().sum());
    let pays = then < now && now - then >= TWO_ROUND_STEPS_PER_LANE * added;
    (others <= WARP_LANES as usize && pays).then_some(two)
}

/// Lanes of a wide slice ([`wide_lanes`]; FORMAT.md §5.4): two GPU warps decode it
/// side by side, 32 lanes each, each lane taking its words from its warp's own word area.
pub const WIDE_LANES: usize = 2 * WARP_LANES as usize;

/// Steps of the GPU warp's chain that each lane [`wide_lanes`] adds must save: a quarter of
/// [`TWO_ROUND_STEPS_PER_LANE`], since wide lanes are asked for
/// (`Settings::wide_lanes`) by whoever puts GPU decode speed before a per cent or two
/// of size, and every block is then in flight at once, so the stage waits for the archive's
/// longest chain. A 32-lane slice goes wide from a chain of 64 steps (at 2, from 128, a few
/// blocks just under it would stay narrow beside wide ones and set the archive's chain).
pub const WIDE_STEPS_PER_LANE: usize = 1;

/// `Settings::wide_lanes`' last stage of the lane choice, after [`block_lanes_packed`], for
/// a block of `n[k]` symbols per stream (`None`: no rANS slice) with lanes `lanes`: the
/// longest slice takes [`WIDE_LANES`] lanes, a round of its own that the block's two GPU warps
/// share (FORMAT.md §5.4), and the other slices the lanes [`block_lanes_packed`] gives them
/// without it (`literal_width` as there), in rounds after it; taken where the GPU warp's
/// chain ([`warp_chain`]) is shorter by [`WIDE_STEPS_PER_LANE`] steps per lane it adds. A DNA
/// block with raw match streams: 7,984 packed literal symbols on 32 lanes, 250 steps, on 64
/// lanes 125. Deterministic.
pub fn wide_lanes(
    n: &[Option<usize>; STREAM_COUNT],
    lanes: [usize; STREAM_COUNT],
    per_lane: usize,
    literal_width: usize,
) -> [usize; STREAM_COUNT] {
    let now = warp_chain(n, &lanes);
    let Some((k, _)) = longest_slice(n, &lanes) else {
        return lanes;
    };
    // the other slices as the lane choice lays them out without slice k
    let mut others = *n;
    others[k] = None;
    let mut wide = block_lanes_packed(others, per_lane, literal_width);
    wide[k] = WIDE_LANES;
    let then = warp_chain(n, &wide);
    let added = (wide.iter().sum::<usize>()).saturating_sub(lanes.iter().sum());
    if then < now && now - then >= WIDE_STEPS_PER_LANE * added {
        wide
    } else {
        lanes
    }
}

/// Chain (GPU warp steps) above which [`step_up_by_rounds`] looks for more lanes: 3/4 of
/// [`SYMBOLS_PER_LANE`], whatever the block size (a block's rANS chain is the GPU rANS stage
/// of an archive whose blocks are all in flight at once).
pub const STEP_UP_CHAIN: usize = 3 * SYMBOLS_PER_LANE / 4;

/// Steps of the GPU warp's chain that each lane [`two_round_lanes`] or [`step_up_by_rounds`] adds
/// must save (a lane costs about 3 bytes of archive; also the exchange rate of
/// `encode::PACK_STEPS_PER_BYTE`): 12 for the unpacked DNA block there, 6.6 for a protein block
/// (15,227 literals on 24 lanes and 61 offsets, 296 commands, 50 tails on one: 636 steps; 32 + 1 +
/// 8 + 1 lanes, 537). At 4 the protein blocks take two rounds, and their 32-lane literal slices
/// also decode faster on the CPU than pairs of 24-lane ones (one slice in four AVX2 state vectors
/// rather than two in six, which spill).
pub const TWO_ROUND_STEPS_PER_LANE: usize = 4;
