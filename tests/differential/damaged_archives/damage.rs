//! The damage: twenty kinds, from bit flips anywhere to changes aimed at one field, stream
//! or table record, each applied to a copy of an undamaged source ([`super::Sub`]).

use super::*;
// ---------------------------------------------------------------------------------------
// damage
// ---------------------------------------------------------------------------------------

pub(super) const KINDS: [&str; 20] = [
    "bitflip",
    "byte_overwrite",
    "state_overwrite",
    "stored_truncate",
    "stored_extend",
    "decoded_len",
    "lane_swap",
    "lz_raw",
    "lz_rans",
    "reencode_lanes",
    "lz_rans_lanes",
    "multi_block_bitflip",
    "lz_tail",
    "frame_window_lowest",
    "tail_stream",
    "join_resplit",
    "offsets_tails_slices",
    "table5",
    "reserved",
    "lz_tail_split",
];

fn stream_pick(rng: &mut Rng) -> usize {
    // commands, offsets, offset tails, lengths mostly; literals sometimes
    rng.pick(&[3, 3, 3, 2, 2, 2, 4, 4, 4, 4, 1, 1, 0])
}

fn special_byte(rng: &mut Rng) -> u8 {
    if rng.below(2) == 0 {
        rng.next() as u8
    } else {
        rng.pick(&[
            0x00, 0xFF, 0xFE, 0xFD, 0xC0, 0xBF, 0x80, 0x8F, 0x7F, 0x01, 0x0F, 0x10,
        ])
    }
}

fn swap_lanes(rng: &mut Rng, l: u8) -> u8 {
    match l {
        4 => rng.pick(&[2, 8, 1, 3, 5, 16, 2, 8]),
        24 => rng.pick(&[16, 32, 8, 12, 23, 25, 16, 32]),
        16 => rng.pick(&[8, 24, 32, 4, 15, 17]),
        8 => rng.pick(&[4, 16, 2, 24, 7, 9]),
        2 => rng.pick(&[1, 4, 8, 3]),
        0 => rng.pick(&[4, 24, 1, 16]),
        _ => 1 + rng.below(32) as u8,
    }
}

/// Damages a decoded LZ-level stream (commands, offsets, lengths or literals).
fn damage_decoded(rng: &mut Rng, s: &mut Vec<u8>, k: usize) {
    let reps = 1 + rng.below(3);
    for _ in 0..reps {
        let n = s.len();
        match rng.below(9) {
            0 if n > 0 => {
                let i = rng.below(n as u64) as usize;
                s[i] ^= 1 << rng.below(8);
            }
            1 if n > 0 => {
                let i = rng.below(n as u64) as usize;
                s[i] = special_byte(rng);
            }
            2 if n > 0 => {
                let i = rng.below(n as u64) as usize;
                s.remove(i);
            }
            3 => {
                let i = rng.below(n as u64 + 1) as usize;
                let b = special_byte(rng);
                s.insert(i, b);
            }
            4 if n > 0 => {
                let cut = 1 + rng.below(8.min(n as u64)) as usize;
                s.truncate(n - cut);
            }
            5 => {
                for _ in 0..1 + rng.below(8) {
                    let b = special_byte(rng);
                    s.push(b);
                }
            }
            6 if n > 1 => {
                let i = rng.below(n as u64) as usize;
                let j = rng.below(n as u64) as usize;
                s.swap(i, j);
            }
            7 if n > 0 && k == 4 => {
                // plant a tail (the bytes after a first byte with bit 7 set)
                let i = rng.below(n as u64 + 1) as usize;
                let v = tail_pattern(rng);
                s.splice(i..i, v.iter().copied());
            }
            7 if n > 0 && (k == 1 || k == 2) => {
                // plant an overlong / huge / zero / 5-byte varint
                let i = rng.below(n as u64) as usize;
                let v: &[u8] = rng.pick(&[
                    &[0x80, 0x80, 0x80, 0x80, 0x80, 0x01][..],
                    &[0xFF, 0xFF, 0xFF, 0xFF, 0x0F],
                    &[0xFF, 0xFF, 0xFF, 0xFF, 0x1F],
                    &[0x00],
                    &[0x80, 0x00],
                    &[0x81, 0x80, 0x80, 0x80, 0x00],
                    &[0xFF, 0x7F],
                    &[0x80, 0x80, 0x04],
                ]);
                s.splice(i..i, v.iter().copied());
            }
            8 if n > 0 && k == 3 => {
                // rewrite a command into another kind
                let i = rng.below(n as u64) as usize;
                s[i] = rng.pick(&[0x00, 0x7F, 0x80, 0x8F, 0xBF, 0xC0, 0xFD, 0xFE, 0xFF])
                    | if rng.below(2) == 0 {
                        0
                    } else {
                        (rng.next() as u8) & 0x3F
                    };
            }
            _ => {
                if n > 0 {
                    let i = rng.below(n as u64) as usize;
                    s[i] = s[i].wrapping_add(1 + rng.below(3) as u8);
                }
            }
        }
    }
}

fn varints(s: &[u8]) -> Option<Vec<u32>> {
    let mut v = Vec::new();
    let mut pos = 0;
    while pos < s.len() {
        v.push(aceapex::device::lz::read_varint(s, &mut pos).ok()?);
    }
    Some(v)
}

/// The distances of a block's heads and tails, by the reference read_offset.
fn distances(heads: &[u8], tails: &[u8]) -> Option<Vec<u32>> {
    let (mut hp, mut tp) = (0, 0);
    let mut v = Vec::new();
    while hp < heads.len() {
        v.push(aceapex::device::lz::read_offset(heads, &mut hp, tails, &mut tp).ok()?);
    }
    (tp == tails.len()).then_some(v)
}

fn put_distances(v: &[u32]) -> (Vec<u8>, Vec<u8>) {
    let (mut h, mut t) = (Vec::new(), Vec::new());
    for &x in v {
        aceapex::device::lz::write_offset(x, &mut h, &mut t);
    }
    (h, t)
}

fn put_varints(v: &[u32]) -> Vec<u8> {
    let mut out = Vec::new();
    for &x in v {
        aceapex::device::lz::write_varint(x, &mut out);
    }
    out
}

/// Damage aimed at the end of the block: the last commands, the last length / offset
/// varints, the literal stream's length.
fn damage_tail(rng: &mut Rng, b: &Blk) -> Vec<(usize, Vec<u8>)> {
    let delta = |rng: &mut Rng| -> i64 {
        let d = 1 + rng.below(40) as i64;
        if rng.below(2) == 0 {
            d
        } else {
            -d
        }
    };
    loop {
        match rng.below(7) {
            0 => {
                let mut c = b.decoded[3].clone();
                if c.is_empty() {
                    continue;
                }
                let back = 1 + rng.below(8.min(c.len() as u64)) as usize;
                let i = c.len() - back;
                c[i] = if rng.below(2) == 0 {
                    special_byte(rng)
                } else {
                    (c[i] as i64 + delta(rng)).clamp(0, 255) as u8
                };
                return vec![(3, c)];
            }
            1 | 2 => {
                let k = if rng.below(2) == 0 { 1 } else { 2 };
                let Some(mut v) = (if k == 1 {
                    varints(&b.decoded[1])
                } else {
                    distances(&b.decoded[2], &b.decoded[4])
                }) else {
                    continue;
                };
                if v.is_empty() {
                    continue;
                }
                let back = 1 + rng.below(3.min(v.len() as u64)) as usize;
                let i = v.len() - back;
                v[i] = (v[i] as i64 + delta(rng)).clamp(0, u32::MAX as i64) as u32;
                if rng.below(4) == 0 {
                    v[i] = rng.pick(&[
                        0,
                        1,
                        127,
                        128,
                        16383,
                        16384,
                        16385,
                        65536,
                        65537,
                        1 << 21,
                        (1 << 28) - 1,
                        1 << 28,
                        u32::MAX,
                        u32::MAX - 5,
                    ]);
                }
                if k == 1 {
                    return vec![(1, put_varints(&v))];
                }
                let (h, t) = put_distances(&v);
                return vec![(2, h), (4, t)];
            }
            3 => {
                let mut l = b.decoded[0].clone();
                let d = delta(rng);
                if d < 0 {
                    l.truncate(l.len().saturating_sub((-d) as usize));
                } else {
                    l.extend((0..d).map(|_| rng.next() as u8));
                }
                return vec![(0, l)];
            }
            4 => {
                let mut c = b.decoded[3].clone();
                for _ in 0..1 + rng.below(3) {
                    let x = rng.pick(&[0x00, 0x1F, 0x7F, 0xC0, 0xC5, 0xFD, 0xFF, 0x80, 0x9F]);
                    c.push(x);
                }
                return vec![(3, c)];
            }
            5 => {
                let mut c = b.decoded[3].clone();
                let cut = (1 + rng.below(3) as usize).min(c.len());
                c.truncate(c.len() - cut);
                return vec![(3, c)];
            }
            _ => {
                // the last literal run one longer / shorter, literals adjusted to match
                let mut c = b.decoded[3].clone();
                let Some(i) = c.iter().rposition(|&x| x < 0x80) else {
                    continue;
                };
                let d = if rng.below(2) == 0 { 1i64 } else { -1 };
                let n = c[i] as i64 + d;
                if !(0..0x80).contains(&n) {
                    continue;
                }
                c[i] = n as u8;
                return vec![(3, c)];
            }
        }
    }
}

/// Stores `sym` in block `b` stream `k`: rANS with `lanes` under the group table if every
/// symbol is in it (and lanes > 0), else raw.
fn store(sub: &Sub, b: &mut Blk, k: usize, sym: &[u8], lanes: u8) {
    if lanes > 0 && !sym.is_empty() {
        if let Some(t) = sub.table(k) {
            let mut h = [0u64; 256];
            count(&mut h, sym);
            if t.cost_bits(&h).is_some() {
                let mut out = Vec::new();
                encode_slice(sym, lanes as usize, t, &t.cumulative(), &mut out);
                b.slices[k] = out;
                b.set_lanes(k, lanes);
                b.set_decoded_len(k, sym.len() as u32);
                return;
            }
        }
    }
    b.slices[k] = sym.to_vec();
    b.set_lanes(k, 0);
    b.set_decoded_len(k, sym.len() as u32);
}

/// The tail of one distance varint (the bytes after its first byte): valid ones of 1-4 bytes,
/// overlong ones, a 5th byte above 0x0F, 6- and 7-byte varints, an unterminated run.
fn tail_pattern(rng: &mut Rng) -> Vec<u8> {
    let v: &[u8] = rng.pick(&[
        &[0x01][..],
        &[0x00],
        &[0x7F],
        &[0x80, 0x01],
        &[0xFF, 0x7F],
        &[0x80, 0x00],
        &[0x80, 0x80, 0x01],
        &[0x80, 0x80, 0x00],
        &[0x80, 0x80, 0x80, 0x01],
        &[0x80, 0x80, 0x80, 0x00],
        &[0xFF, 0xFF, 0xFF, 0x0F],
        &[0x80, 0x80, 0x80, 0x0F],
        &[0x80, 0x80, 0x80, 0x10],
        &[0xFF, 0xFF, 0xFF, 0x1F],
        &[0x80, 0x80, 0x80, 0x7F],
        &[0x80, 0x80, 0x80, 0x80, 0x00],
        &[0x80, 0x80, 0x80, 0x80, 0x01],
        &[0xFF, 0xFF, 0xFF, 0x8F, 0x00],
        &[0x80, 0x80, 0x80, 0x80, 0x80, 0x01],
        &[0x80],
        &[0x80, 0x80],
        &[0xFF, 0xFF, 0xFF],
    ]);
    if rng.below(4) == 0 {
        // a random tail of 1-6 bytes, continuation bits on all but (maybe) the last
        let n = 1 + rng.below(6) as usize;
        let mut t: Vec<u8> = (0..n).map(|_| rng.next() as u8 | 0x80).collect();
        if rng.below(4) > 0 {
            t[n - 1] &= 0x7F;
        }
        return t;
    }
    v.to_vec()
}

/// The tail byte ranges of a block's distances: `(head index, tail range)` for each head with
/// bit 7 set (the range cut at the end of the tails).
fn tail_spans(heads: &[u8], tails: &[u8]) -> Vec<(usize, std::ops::Range<usize>)> {
    let mut out = Vec::new();
    let mut tp = 0;
    for (i, &h) in heads.iter().enumerate() {
        if h & 0x80 != 0 {
            let s = tp;
            while tp < tails.len() {
                tp += 1;
                if tails[tp - 1] & 0x80 == 0 {
                    break;
                }
            }
            out.push((i, s..tp));
        }
    }
    out
}

fn lane_pick(rng: &mut Rng) -> u8 {
    rng.pick(&[0, 0, 4, 4, 24, 1, 2, 3, 8, 16, 32])
}

/// Damage aimed at the split distances: the offset-tail stream, the split of the distances,
/// slice 2 vs slice 4, the fifth table record, reserved entry bytes.
fn damage_split_distances(sub: &mut Sub, rng: &mut Rng, kind: usize, bi: usize, mut b: Blk) {
    let heads = b.decoded[2].clone();
    let tails = b.decoded[4].clone();
    match kind {
        14 => {
            // LZ-level damage of the tails (and the heads they belong to)
            let (mut h, mut t) = (heads.clone(), tails.clone());
            let spans = tail_spans(&h, &t);
            for _ in 0..1 + rng.below(2) {
                match rng.below(12) {
                    0 => t.clear(),
                    1 if !t.is_empty() => {
                        let cut = (1 + rng.below(4) as usize).min(t.len());
                        if rng.below(3) == 0 {
                            let i = rng.below((t.len() - cut + 1) as u64) as usize;
                            t.drain(i..i + cut);
                        } else {
                            t.truncate(t.len() - cut);
                        }
                    }
                    2 => {
                        for _ in 0..1 + rng.below(4) {
                            let x = rng.pick(&[0x00, 0x01, 0x0F, 0x10, 0x7F, 0x80, 0x8F, 0xFF]);
                            t.push(x);
                        }
                    }
                    3 | 4 if !spans.is_empty() => {
                        // replace one distance's tail by a pattern
                        let (_, r) = spans[rng.below(spans.len() as u64) as usize].clone();
                        if r.end <= t.len() {
                            let p = tail_pattern(rng);
                            t.splice(r, p);
                        }
                    }
                    5 if !h.is_empty() => {
                        // a one-byte distance becomes multi-byte: head bit 7 set, tail inserted
                        let i = rng.below(h.len() as u64) as usize;
                        if h[i] & 0x80 == 0 {
                            // its tail goes where the tails of the heads after it start
                            let at = tail_spans(&h[..i], &t).last().map_or(0, |(_, r)| r.end);
                            h[i] |= 0x80;
                            let p = tail_pattern(rng);
                            if at <= t.len() {
                                t.splice(at..at, p);
                            }
                        }
                    }
                    6 if !h.is_empty() => {
                        // bit 7 set on a head, no tail added (the last head mostly)
                        let i = if rng.below(2) == 0 {
                            h.len() - 1
                        } else {
                            rng.below(h.len() as u64) as usize
                        };
                        h[i] |= 0x80;
                    }
                    7 if !spans.is_empty() => {
                        // bit 7 cleared on a head with a tail, the tail left in place
                        let (i, _) = spans[rng.below(spans.len() as u64) as usize].clone();
                        h[i] &= 0x7F;
                    }
                    8 if !t.is_empty() => {
                        // bit 7 set on the last tail byte or a random one
                        let i = if rng.below(2) == 0 {
                            t.len() - 1
                        } else {
                            rng.below(t.len() as u64) as usize
                        };
                        t[i] |= 0x80;
                    }
                    9 if !spans.is_empty() => {
                        // a distance loses its tail (head bit 7 cleared, tail removed)
                        let (i, r) = spans[rng.below(spans.len() as u64) as usize].clone();
                        if r.end <= t.len() {
                            h[i] &= 0x7F;
                            t.drain(r);
                        }
                    }
                    10 if !spans.is_empty() => {
                        // the last distance's tail removed, its head keeps bit 7
                        let (_, r) = spans.last().unwrap().clone();
                        if r.end <= t.len() {
                            t.drain(r);
                        }
                    }
                    _ if !t.is_empty() => {
                        let i = rng.below(t.len() as u64) as usize;
                        t[i] = special_byte(rng);
                    }
                    _ => t.push(special_byte(rng)),
                }
            }
            let nl = lane_pick(rng);
            store(sub, &mut b, 4, &t, nl);
            if h != heads {
                let nl = if rng.below(2) == 0 {
                    b.lanes(2)
                } else {
                    lane_pick(rng)
                };
                store(sub, &mut b, 2, &h, nl);
            }
        }
        15 => {
            // joined LEB128 distances damaged as one stream, split again
            let Some(mut j) = join_offsets(&heads, &tails) else {
                return;
            };
            damage_decoded(rng, &mut j, 2);
            let (h, t) = split_offsets(&j);
            let nl = lane_pick(rng);
            store(sub, &mut b, 2, &h, nl);
            let nl = lane_pick(rng);
            store(sub, &mut b, 4, &t, nl);
        }
        16 => {
            match rng.below(10) {
                0 => {
                    // slices (with their entry fields) of offsets and tails swapped
                    b.slices.swap(2, 4);
                    let (d2, d4) = (b.decoded_len(2), b.decoded_len(4));
                    b.set_decoded_len(2, d4);
                    b.set_decoded_len(4, d2);
                    let (l2, l4) = (b.lanes(2), b.lanes(4));
                    b.set_lanes(2, l4);
                    b.set_lanes(4, l2);
                }
                1 => {
                    // streams swapped at the LZ level, stored again
                    let (nl2, nl4) = (lane_pick(rng), lane_pick(rng));
                    store(sub, &mut b, 2, &tails, nl2);
                    store(sub, &mut b, 4, &heads, nl4);
                }
                2 => store(sub, &mut b, 4, &[], 0),
                3 => store(sub, &mut b, 2, &[], 0),
                4 => {
                    let nl = lane_pick(rng);
                    store(sub, &mut b, 4, &heads, nl);
                }
                5 => {
                    let nl = lane_pick(rng);
                    store(sub, &mut b, 2, &tails, nl);
                }
                6 => {
                    // zeroed bytes, the entry unchanged
                    let k = rng.pick(&[2, 4, 4]);
                    let s = &mut b.slices[k];
                    let n = s.len();
                    let (lo, hi) = if rng.below(2) == 0 {
                        (0, n)
                    } else {
                        let i = rng.below(n as u64 + 1) as usize;
                        (i, (i + 1 + rng.below(8) as usize).min(n))
                    };
                    s[lo..hi].fill(0);
                }
                7 => {
                    let nl = swap_lanes(rng, b.lanes(4));
                    b.set_lanes(4, nl);
                }
                8 => {
                    // decoded length of slice 4 changed (raw: the slice follows)
                    let d = b.decoded_len(4) as i64;
                    let nd = match rng.below(5) {
                        0 => d + 1,
                        1 => d - 1,
                        2 => d + rng.pick(&[2, 3, 4, 5, 8, 16]),
                        3 => d - rng.pick(&[2, 3, 4, 5, 8, 16]),
                        _ => rng.pick(&[0, 1, 2, sub.src.bs as i64 + 1]),
                    }
                    .max(0);
                    b.set_decoded_len(4, nd as u32);
                    if b.lanes(4) == 0 {
                        let fill = rng.pick(&[0x00, 0x01, 0x80, 0xFF]);
                        b.slices[4].resize(nd as usize, fill);
                    }
                }
                _ => {
                    // tails re-encoded with another lane count (valid)
                    let nl = rng.pick(&[1, 2, 3, 4, 5, 8, 12, 16, 24, 31, 32]);
                    store(sub, &mut b, 4, &tails, nl);
                }
            }
        }
        17 => {
            // the table section: the fifth record of a group missing, absent, garbage,
            // another stream's, or an extra record
            let groups = sub.blocks.len().div_ceil(sub.src.group_blocks);
            let g0 = sub.group();
            let mut recs: Vec<[Vec<u8>; NS]> = sub.src.recs[g0..g0 + groups].to_vec();
            let g = rng.below(groups as u64) as usize;
            let mut extra: Option<Vec<u8>> = None;
            match rng.below(8) {
                0 => recs[g][4].clear(),
                1 => recs[g][4] = vec![0],
                2 => {
                    let mut r = vec![rng.pick(&[1, 1, 2, 0xFF])];
                    let n = rng.below(48) as usize;
                    r.extend((0..n).map(|_| rng.next() as u8));
                    recs[g][4] = r;
                }
                3 => recs[g][4] = recs[g][2].clone(),
                4 => recs[g].swap(2, 4),
                5 => {
                    let r = &mut recs[g][4];
                    if r.len() > 1 {
                        let i = 1 + rng.below(r.len() as u64 - 1) as usize;
                        r[i] = special_byte(rng);
                    } else {
                        r[0] = 1;
                    }
                }
                6 => {
                    extra = Some(if rng.below(2) == 0 {
                        vec![0]
                    } else {
                        recs[g][4].clone()
                    })
                }
                _ => {
                    let r = &mut recs[g][4];
                    let cut = (1 + rng.below(4) as usize).min(r.len());
                    r.truncate(r.len() - cut);
                }
            }
            let mut t: Vec<u8> = recs
                .iter()
                .flat_map(|r| r.iter().flatten().copied())
                .collect();
            if let Some(e) = extra {
                t.extend(e);
            }
            sub.tables_override = Some(t);
        }
        18 => {
            // reserved header bytes (86..88), or an entry width above 32 (72..85, FORMAT.md §2)
            if rng.below(4) > 0 {
                let i = 86 + rng.below(2) as usize;
                sub.header_patch.push((i, 1 << rng.below(8)));
            } else {
                let i = 72 + rng.below(13) as usize;
                sub.header_patch.push((i, 33 + rng.below(200) as u8));
            }
            sub.expect_reject = true;
        }
        _ => {
            // 19: the end of the block's distances: left-over tails, a last head with no
            // tail, a last distance of another byte count
            let (mut h, mut t) = (heads.clone(), tails.clone());
            match rng.below(6) {
                0 => {
                    for _ in 0..1 + rng.below(3) {
                        let x = rng.pick(&[0x00, 0x01, 0x05, 0x7F, 0x0F]);
                        t.push(x);
                    }
                }
                1 if !h.is_empty() => {
                    let i = h.len() - 1;
                    h[i] |= 0x80;
                    if rng.below(2) == 0 {
                        t.push(0x80);
                    }
                }
                2 if !h.is_empty() => {
                    // the last distance's tail cut short
                    let spans = tail_spans(&h, &t);
                    if let Some((_, r)) = spans.last() {
                        let cut = 1 + rng.below(r.len() as u64) as usize;
                        t.truncate(r.end - cut);
                    } else {
                        t.push(0x80);
                    }
                }
                3 => {
                    // the last head removed, its tail left over
                    h.pop();
                }
                _ => {
                    let Some(mut v) = distances(&h, &t) else {
                        return;
                    };
                    if v.is_empty() {
                        return;
                    }
                    let back = 1 + rng.below(3.min(v.len() as u64)) as usize;
                    let i = v.len() - back;
                    v[i] = rng.pick(&[
                        0,
                        1,
                        127,
                        128,
                        255,
                        16383,
                        16384,
                        65535,
                        65536,
                        (1 << 21) - 1,
                        1 << 21,
                        (1 << 28) - 1,
                        1 << 28,
                        u32::MAX,
                    ]);
                    (h, t) = put_distances(&v);
                }
            }
            let nl = if rng.below(2) == 0 { 0 } else { 4 };
            store(sub, &mut b, 2, &h, nl);
            store(sub, &mut b, 4, &t, nl);
        }
    }
    sub.blocks[bi] = b;
}

pub(super) fn damage(sub: &mut Sub, rng: &mut Rng, kind: usize) {
    let n = sub.blocks.len();
    let count_blocks = if kind == 11 {
        2 + rng.below(n as u64) as usize
    } else {
        1
    };
    for _ in 0..count_blocks {
        let bi = rng.below(n as u64) as usize;
        let k = stream_pick(rng);
        let mut b = sub.blocks[bi].clone();
        let lanes = b.lanes(k) as usize;
        if kind == 13 {
            if sub.src.cross && rng.below(2) == 0 {
                let l = rng.below(bi as u64 + 1) as u32;
                b.set_lowest(l);
            } else {
                let bs = sub.src.bs as u32;
                let w = get_u32(&sub.src.header, 36);
                sub.window = Some(match rng.below(3) {
                    0 => rng.pick(&[
                        1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64, 255, 256, 4095, 4096,
                    ]),
                    1 => rng.pick(&[bs - 1, bs / 2, w - 1, w / 2 + 1]).max(1),
                    _ => 1 + rng.below(w as u64) as u32,
                });
            }
            sub.blocks[bi] = b;
            continue;
        }
        if kind == 12 {
            let nl = if rng.below(2) == 0 { 0 } else { 4 };
            for (kk, d) in damage_tail(rng, &b) {
                store(sub, &mut b, kk, &d, nl);
            }
            sub.blocks[bi] = b;
            continue;
        }
        if kind >= 14 {
            damage_split_distances(sub, rng, kind, bi, b);
            continue;
        }
        if (7..=10).contains(&kind) {
            match kind {
                7 | 8 | 10 => {
                    // LZ-level damage; stored raw (7), rANS with the block's lanes (8) or
                    // rANS with 4 / 24 / other lanes (10)
                    let mut d = b.decoded[k].clone();
                    damage_decoded(rng, &mut d, k);
                    let nl = match kind {
                        7 => 0,
                        8 => {
                            if lanes == 0 {
                                4
                            } else {
                                lanes as u8
                            }
                        }
                        _ => rng.pick(&[4, 4, 24, 24, 2, 8, 16, 32, 1]),
                    };
                    store(sub, &mut b, k, &d, nl);
                }
                9 => {
                    // valid re-encode with another lane count (every stream of the block)
                    for kk in 0..NS {
                        if rng.below(2) == 0 {
                            let d = b.decoded[kk].clone();
                            let nl = rng.pick(&[4, 4, 24, 24, 2, 8, 16, 32, 1, 3, 12]);
                            store(sub, &mut b, kk, &d, nl);
                        }
                    }
                }
                _ => unreachable!(),
            }
            sub.blocks[bi] = b;
            continue;
        }
        let s = &mut b.slices[k];
        match kind {
            0 | 11 if !s.is_empty() => {
                for _ in 0..1 + rng.below(4) {
                    let i = rng.below(s.len() as u64) as usize;
                    s[i] ^= 1 << rng.below(8);
                }
            }
            1 if !s.is_empty() => {
                for _ in 0..1 + rng.below(3) {
                    let i = rng.below(s.len() as u64) as usize;
                    s[i] = special_byte(rng);
                }
            }
            2 if !s.is_empty() => {
                // a lane state (or the first words after them)
                let head = (lanes * 4 + 8).min(s.len());
                let i = rng.below(head as u64) as usize;
                s[i] = special_byte(rng);
            }
            3 if !s.is_empty() => {
                let cut = rng.pick(&[1, 2, 2, 4, 6, 8, 16]).min(s.len());
                if rng.below(3) == 0 {
                    let i = rng.below((s.len() - cut + 1) as u64) as usize;
                    s.drain(i..i + cut);
                } else {
                    s.truncate(s.len() - cut);
                }
                if lanes == 0 {
                    let l = s.len() as u32;
                    b.set_decoded_len(k, l);
                }
            }
            4 => {
                let add = rng.pick(&[1, 2, 2, 4, 6, 8, 16]);
                let bytes: Vec<u8> = (0..add)
                    .map(|_| {
                        if rng.below(2) == 0 {
                            0
                        } else {
                            rng.next() as u8
                        }
                    })
                    .collect();
                if rng.below(3) == 0 {
                    let i = rng.below(s.len() as u64 + 1) as usize;
                    s.splice(i..i, bytes);
                } else {
                    s.extend_from_slice(&bytes);
                }
                if lanes == 0 {
                    let l = s.len() as u32;
                    b.set_decoded_len(k, l);
                }
            }
            5 => {
                let d = b.decoded_len(k) as i64;
                let nd = match rng.below(6) {
                    0 => d + 1,
                    1 => d - 1,
                    2 => d + rng.pick(&[2, 3, 4, 8, 16, 24, 32, 48]),
                    3 => d - rng.pick(&[2, 3, 4, 8, 16, 24, 32, 48]),
                    4 => rng.below(sub.src.bs as u64 + 2) as i64,
                    _ => rng.pick(&[0, 1, sub.src.bs as i64, sub.src.bs as i64 + 1]),
                }
                .max(0);
                b.set_decoded_len(k, nd as u32);
                if lanes == 0 {
                    // raw: resize the slice too (else the parser rejects it)
                    b.slices[k].resize(nd as usize, 0);
                }
            }
            6 => {
                let nl = swap_lanes(rng, lanes as u8);
                b.set_lanes(k, nl);
            }
            _ => {}
        }
        sub.blocks[bi] = b;
    }
    // sometimes combine with an LZ-level damage of another stream, rANS 4-lane
    if kind != 9 && rng.below(8) == 0 {
        let bi = rng.below(n as u64) as usize;
        let k = rng.pick(&[1, 2, 3]);
        let mut b = sub.blocks[bi].clone();
        let mut d = b.decoded[k].clone();
        damage_decoded(rng, &mut d, k);
        store(sub, &mut b, k, &d, 4);
        sub.blocks[bi] = b;
    }
}
