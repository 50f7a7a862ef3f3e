//! The block generator of the differential and corrupt tests (tests/differential/,
//! tests/corrupt/):
//! five hand-made streams aimed at the CPU match layer's batch limits, at a given match
//! base (FORMAT.md §2), their mutation, and the direct check of the fast match layer
//! against the reference walker on exact-size buffers (so ASan sees overruns).

use super::{build, Blk, Hdr, Rng};
use aceapex::decode::lz::{self as fast_lz, Padded, PaddedStreams, STREAM_PAD};
use aceapex::decode::{decode_block_at, decode_block_reference};
use aceapex::device::format::*;
use aceapex::device::lz::{self as ref_lz, BlockFrame, BlockStreams};
use aceapex::format::Archive;
use aceapex::DecodeError;

pub fn exact(v: &[u8], pad_byte: u8) -> Box<[u8]> {
    let mut b = Vec::with_capacity(v.len() + STREAM_PAD);
    b.extend_from_slice(v);
    b.extend(std::iter::repeat_n(pad_byte, STREAM_PAD));
    b.into_boxed_slice()
}

pub type S5 = [Vec<u8>; STREAM_COUNT];

pub fn push_dist(r: &mut Rng, s: &mut S5, d: u32) {
    if d < 128 && r.below(20) != 0 {
        s[STREAM_OFFSETS].push(d as u8);
        return;
    }
    s[STREAM_OFFSETS].push(0x80 | (d & 0x7F) as u8);
    let mut t = d >> 7;
    loop {
        if t < 0x80 {
            if r.below(15) == 0 {
                s[STREAM_OFFSET_TAILS].extend_from_slice(&[0x80 | t as u8, 0]); // overlong
            } else {
                s[STREAM_OFFSET_TAILS].push(t as u8);
            }
            return;
        }
        s[STREAM_OFFSET_TAILS].push(0x80 | (t & 0x7F) as u8);
        t >>= 7;
    }
}

/// Commands aimed at the batch limits. `room`: bytes between the source floor and the block.
/// With `target`, stops near it and fills to exactly `target` bytes with literal runs.
/// `valid_only`: no distance outside the frame. Returns the streams and the intended length.
pub fn gen_block(
    r: &mut Rng,
    room: usize,
    steps: usize,
    target: Option<usize>,
    valid_only: bool,
    base: u32,
) -> (S5, usize) {
    let mut s: S5 = Default::default();
    s[STREAM_COMMANDS].push(CMD_RESET);
    let mut pos = 0usize;
    let mut hist = [1u32, 2, 4, 8];
    let w = [
        r.range(1, 6),
        r.range(1, 8),
        r.below(4),
        r.below(2),
        (r.below(4) == 0) as u64,
    ];
    let tot: u64 = w.iter().sum();
    let mut i = 0;
    loop {
        if let Some(t) = target {
            if pos + 400 > t {
                break;
            }
        } else if i >= steps {
            break;
        }
        i += 1;
        let reach = (pos + room) as u32;
        let mut x = r.below(tot);
        let mut kind = 0;
        while x >= w[kind] {
            x -= w[kind];
            kind += 1;
        }
        match kind {
            0 => {
                let n = r.pick(&[128u32, 128, 127, 1, 16, 17, 32, 33, 64]);
                let n = if r.below(3) == 0 {
                    r.range(1, 128) as u32
                } else {
                    n
                };
                s[STREAM_COMMANDS].push((n - 1) as u8);
                s[STREAM_LITERALS].extend((0..n).map(|_| r.next() as u8));
                pos += n as usize;
            }
            1 if reach > 0 => {
                let rb = r.below(62) as u8;
                let c = 0xC0 + r.pick(&[0u8, 61, 61, 10, 26, 27, rb]);
                let mut d = match r.below(16) {
                    0 => reach,
                    1 => reach + 1,
                    2 => 0,
                    3 => reach.min(r.range(1, 7) as u32),
                    4 => reach.min(r.range(8, 15) as u32),
                    5 => reach.min(16),
                    6 => reach.min(127),
                    7 => reach.min(128),
                    8 => reach.min(16383),
                    9 => reach.min(16384),
                    10 => reach.saturating_sub(r.below(3) as u32).max(1),
                    _ => r.range(1, reach as u64) as u32,
                };
                if valid_only {
                    d = d.clamp(1, reach);
                }
                push_dist(r, &mut s, d);
                s[STREAM_COMMANDS].push(c);
                hist = [d, hist[0], hist[1], hist[2]];
                pos += ((c & 0x3F) as u32 + base) as usize;
            }
            2 => {
                let slot = r.below(4) as usize;
                if valid_only && (hist[slot] == 0 || hist[slot] > reach) {
                    continue;
                }
                let rb = r.below(16) as u8;
                let nib = r.pick(&[0u8, 14, 15, rb]);
                s[STREAM_COMMANDS].push(0x80 | (slot as u8) << 4 | nib);
                let mut len = base + nib as u32;
                if nib == 15 {
                    let e = r.below(200) as u32;
                    ref_lz::write_varint(e, &mut s[STREAM_LENGTHS]);
                    len += e;
                }
                let d = hist[slot];
                for j in (1..=slot).rev() {
                    hist[j] = hist[j - 1];
                }
                hist[0] = d;
                pos += len as usize;
            }
            3 if reach > 0 => {
                let rb = r.below(300) as u32;
                let e = r.pick(&[0u32, 61, 62, rb]);
                ref_lz::write_varint(e, &mut s[STREAM_LENGTHS]);
                let d = r.range(1, reach as u64) as u32;
                push_dist(r, &mut s, d);
                s[STREAM_COMMANDS].push(CMD_MATCH_LONG);
                hist = [d, hist[0], hist[1], hist[2]];
                pos += (e + base) as usize;
            }
            4 => {
                s[STREAM_COMMANDS].push(CMD_RESET);
                hist = [1, 2, 4, 8];
            }
            _ => {}
        }
    }
    if let Some(t) = target {
        while pos < t {
            let n = (t - pos).min(128);
            s[STREAM_COMMANDS].push((n - 1) as u8);
            s[STREAM_LITERALS].extend((0..n).map(|_| r.next() as u8));
            pos += n;
        }
    }
    (s, pos)
}

pub fn mutate(r: &mut Rng, s: &mut S5) {
    for _ in 0..r.range(1, 2) {
        let k = r.below(STREAM_COUNT as u64) as usize;
        let v = &mut s[k];
        let n = v.len();
        match r.below(8) {
            0 if n > 0 => v.truncate(n - r.range(1, 3.min(n as u64)) as usize),
            1 => v.push(r.next() as u8),
            2 if n > 0 => {
                let i = n - 1 - r.below(n.min(8) as u64) as usize;
                v[i] ^= 1 << r.below(8);
            }
            3 if n > 0 => {
                let i = r.below(n as u64) as usize;
                v[i] ^= 0x80;
            }
            4 if n > 0 => {
                let i = r.below(n as u64) as usize;
                v[i] = r.next() as u8;
            }
            5 => v.push(0x80 | r.next() as u8),
            _ => {}
        }
    }
}

pub fn check_direct(r: &mut Rng, s: &S5, frame: BlockFrame, total: usize) -> bool {
    let init: Vec<u8> = (0..total).map(|_| r.next() as u8).collect();
    let mut want = init.clone();
    let rs = BlockStreams::from_slices(s.each_ref().map(|v| v.as_slice()));
    let r_ref = ref_lz::decode_block(rs, &mut want, &frame);
    let pad = r.pick(&[0u8, 0x80, 0xFF, 0x7F]);
    let padded: Vec<Box<[u8]>> = s.iter().map(|v| exact(v, pad)).collect();
    let p = |k: usize| Padded::new(&padded[k], s[k].len()).unwrap();
    let fs = PaddedStreams {
        literals: p(0),
        lengths: p(1),
        offsets: p(2),
        commands: p(3),
        offset_tails: p(4),
    };
    let mut got = init.clone().into_boxed_slice();
    let r_fast = fast_lz::decode_block_fast(&fs, &mut got, &frame);
    assert_eq!(
        r_fast, r_ref,
        "status differs, frame {frame:?}, streams {s:?}"
    );
    assert!(
        got[..frame.dst_start] == init[..frame.dst_start],
        "bytes below the block changed"
    );
    assert!(
        got[frame.dst_end..] == init[frame.dst_end..],
        "bytes past the block changed"
    );
    if r_ref.is_ok() {
        assert!(*got == *want, "bytes differ, frame {frame:?}");
    }
    r_ref.is_ok()
}

pub fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

pub fn per_block(packed: &[u8], fast: bool) -> Vec<Result<Vec<u8>, DecodeError>> {
    let a = Archive::parse(packed).expect("archive parses");
    let mut out = vec![0u8; a.header().original_size as usize];
    (0..a.block_count())
        .map(|b| {
            let r = if fast {
                decode_block_at(&a, b, &mut out, 0)
            } else {
                decode_block_reference(&a, b, &mut out, 0)
            };
            let range = a.block_range(b);
            r.map(|()| out[range.start as usize..range.end as usize].to_vec())
        })
        .collect()
}

pub fn text(r: &mut Rng, n: usize) -> Vec<u8> {
    const WORDS: &[&str] = &[
        "the ", "whale ", "Ahab ", "sea ", "and ", "of ", "ship, ", "a ", "white ", "Ishmael ",
        "harpoon ", "\n", "captain ", "to ", "in ", "that ", "his ", "it. ", "ACGT", "NNNN", "ab",
        "abcd", "abcde",
    ];
    let mut d = Vec::with_capacity(n);
    while d.len() < n {
        if r.below(40) == 0 {
            d.extend((0..r.below(60)).map(|_| r.next() as u8));
        } else {
            d.extend_from_slice(r.pick(WORDS).as_bytes());
        }
    }
    d.truncate(n);
    d
}

/// `iters` random blocks (up to `max_steps` generator steps, `mutate_pct` % of them
/// damaged), each generated at a base drawn from `bases` and decoded, fast path against
/// the reference, at that base or (`mixed`) at another drawn from `bases`.
pub fn direct(
    seed: u64,
    iters: usize,
    max_steps: u64,
    mutate_pct: u64,
    bases: &[u32],
    mixed: bool,
) {
    let mut r = Rng(seed);
    let mut ok = 0;
    for _ in 0..iters {
        let gen_base = r.pick(bases);
        // the base the frame claims: the generator's, or (mixed) any valid one
        let base = if mixed { r.pick(bases) } else { gen_base };
        let room = match r.below(6) {
            0 => 0,
            1 => r.below(4) as usize,
            2 => 32,
            3 => r.below(300) as usize,
            _ => r.below(40_000) as usize,
        };
        let steps = r.range(1, max_steps) as usize;
        let valid = mutate_pct < 100 && r.below(4) != 0;
        let (mut s, pos) = gen_block(&mut r, room, steps, None, valid, gen_base);
        if r.below(100) < mutate_pct {
            mutate(&mut r, &mut s);
        }
        let dst_start = room + r.pick(&[0usize, 0, 1, 7]);
        let src_floor = dst_start - room;
        let delta: i64 = match r.below(8) {
            3 => r.pick(&[-1i64, 1, 31, 32, 33, -31, -32, -33]),
            4 => r.below(200) as i64 - 100,
            _ => 0,
        };
        let dst_end = ((dst_start + pos) as i64 + delta).max(dst_start as i64) as usize;
        let span = (dst_end - src_floor) as u32;
        let window = match r.below(6) {
            0 => span,
            1 => span.saturating_sub(1).max(1),
            2 => span + 1,
            3 => r.range(1, span as u64 + 1) as u32,
            _ => u32::MAX,
        };
        let total = dst_end + r.pick(&[0usize, 0, 0, 1, 31, 32]);
        let frame = BlockFrame {
            dst_start,
            dst_end,
            src_floor,
            window,
            match_base: base,
        };
        ok += check_direct(&mut r, &s, frame, total) as usize;
    }
    eprintln!("seed {seed:#x}: {ok}/{iters} valid");
    if !mixed {
        let floor = if mutate_pct == 0 {
            iters / 4
        } else {
            iters / 400
        };
        assert!(ok > floor, "only {ok} of {iters} blocks valid");
    }
}

/// Builds an archive with fixed-offset entries (`build`) of `nb` blocks of `bs` bytes (the last `last` bytes
/// long) generated at match base `base`, cross-block when `cross` (window unbounded or
/// 4 blocks, lowest source block up to 3 back); blocks made valid with the reference
/// decoding them in order, then `mutate_blocks` of them damaged (checksums stay those of
/// the reference's output on the damaged streams when it succeeds). Returns the archive,
/// the reference's output and whether it decoded every block.
pub fn gen_archive(
    r: &mut Rng,
    bs: usize,
    nb: usize,
    last: usize,
    cross: bool,
    mutate_blocks: usize,
    base: u32,
) -> (Vec<u8>, Vec<u8>, bool) {
    let total = bs * (nb - 1) + last;
    let mut out = vec![0u8; total];
    let window = if cross {
        r.pick(&[u32::MAX, (bs * 4) as u32])
    } else {
        bs as u32
    };
    let mut blocks = Vec::new();
    let mut all_ok = true;
    for i in 0..nb {
        let len = if i + 1 == nb { last } else { bs };
        let lowest = if cross {
            i - r.below(i as u64 + 1).min(3) as usize
        } else {
            i
        };
        let room = if cross {
            ((i - lowest) * bs).min(window as usize)
        } else {
            0
        };
        let (mut s, _) = gen_block(r, room, 0, Some(len), true, base);
        if mutate_blocks > 0 && r.below(nb as u64) < mutate_blocks as u64 {
            mutate(r, &mut s);
        }
        let frame = BlockFrame {
            dst_start: i * bs,
            dst_end: i * bs + len,
            src_floor: lowest * bs,
            window,
            match_base: base,
        };
        let rs = BlockStreams::from_slices(s.each_ref().map(|v| v.as_slice()));
        all_ok &= ref_lz::decode_block(rs, &mut out, &frame).is_ok();
        blocks.push(Blk {
            slices: s,
            decoded: None,
            lanes: [0; 5],
            lowest: Some(lowest as u32),
            checksum: None,
        });
    }
    let mut h = Hdr::new(0, bs as u32);
    if cross {
        h.flags = 2;
        h.window = window;
    }
    (build(h, &out, &blocks, None), out, all_ok)
}

/// The whole archive `packed` against the reference's output `out` of [`gen_archive`]:
/// when the reference decoded every block (`all_ok`), `decompress` and three random
/// extracts equal it; otherwise `decompress` fails.
pub fn check_whole(r: &mut Rng, packed: &[u8], out: &[u8], all_ok: bool, what: &str) {
    let a = Archive::parse(packed).unwrap();
    let whole = aceapex::decode::decompress(&a);
    if all_ok {
        assert!(
            whole.as_deref().ok() == Some(out),
            "decompress: {:?} ({what})",
            whole.err()
        );
        let total = out.len() as u64;
        for _ in 0..3 {
            let off = r.below(total);
            let len = r.below(total - off + 1);
            let got = aceapex::decode::extract(&a, off, len).unwrap();
            assert!(got[..] == out[off as usize..(off + len) as usize]);
        }
    } else {
        assert!(
            whole.is_err(),
            "a block the reference rejects decoded Ok ({what})"
        );
    }
}

/// `ATTACK_ROUNDS` (default 60) archive cases of 1-19 blocks of 4-64 KiB, every other one
/// cross-block, some with damaged blocks: `case(r, bs, nb, last, cross, mutate_blocks)`.
pub fn small_archive_rounds(seed: u64, case: fn(&mut Rng, usize, usize, usize, bool, usize)) {
    let mut r = Rng(seed);
    for round in 0..env("ATTACK_ROUNDS", 60) {
        let bs = r.pick(&[4096usize, 4096, 16384, 65536]);
        let nb = r.range(1, 20) as usize;
        let rr = r.range(1, bs as u64) as usize;
        let last = r.pick(&[bs, bs, rr, 1024, 33, 195 + 32]);
        let cross = round % 2 == 1;
        let m = [0, 0, 1, 3][r.below(4) as usize];
        case(&mut r, bs, nb, last, cross, m);
    }
}

/// Every block of `packed` decoded by the fast and the reference path: same bytes or the
/// same status, up to the first failure when cross-block (a failed block's bytes are
/// unspecified, and later blocks may read them). `what` names the case in the messages.
pub fn compare_archive(packed: &[u8], what: &str) {
    let cross = Archive::parse(packed).unwrap().cross_block();
    let fast = per_block(packed, true);
    let reference = per_block(packed, false);
    for (b, (f, rf)) in fast.iter().zip(&reference).enumerate() {
        if cross && b > 0 && (fast[b - 1].is_err() || reference[b - 1].is_err()) {
            break;
        }
        match (f, rf) {
            (Ok(x), Ok(y)) => assert!(x == y, "block {b}: bytes differ ({what})"),
            (
                Err(DecodeError::Block { status: sf, .. }),
                Err(DecodeError::Block { status: sr, .. }),
            ) => assert_eq!(sf, sr, "block {b}: status differs ({what})"),
            _ => panic!("block {b}: fast {f:?} vs reference {rf:?} ({what})"),
        }
    }
}

/// Every decoder on `packed`: never Ok with bytes other than `data` (`decompress`, and
/// `extract` of three random ranges where the claimed size fits, which verifies block
/// checksums only); fast == reference block by block ([`compare_archive`]). `None` when the
/// archive does not parse, else whether `decompress` succeeded.
pub fn never_wrong(packed: &[u8], data: &[u8], r: &mut Rng, what: &str) -> Option<bool> {
    let a = Archive::parse(packed).ok()?;
    let whole = aceapex::decode::decompress(&a);
    if let Ok(out) = &whole {
        assert!(
            out[..] == data[..],
            "decompress Ok with wrong bytes ({what})"
        );
    }
    let size = a.header().original_size;
    for _ in 0..3 {
        let off = r.below(size + 1);
        let len = r.below(size - off + 1);
        if let Ok(got) = aceapex::decode::extract(&a, off, len) {
            if size == data.len() as u64 {
                assert!(
                    got[..] == data[off as usize..(off + len) as usize],
                    "extract({off}, {len}) Ok with wrong bytes ({what})"
                );
            }
        }
    }
    if size <= 64 << 20 {
        compare_archive(packed, what);
    }
    Some(whole.is_ok())
}

/// The reference rANS slice decoder (`aceapex::device::rans::decode_slice`),
/// `aceapex::decode::rans::decode_slice` and a `SliceDecoder` driven in random steps
/// (`fast_rows(k)`, then `finish`; the context rows hand each lane's previous symbol from
/// call to call) on one slice into exact-size buffers: same status, same bytes when Ok.
/// Returns the reference's outcome and bytes.
pub fn check_slice(
    r: &mut Rng,
    slice: &[u8],
    lanes: usize,
    t: aceapex::device::rans::SliceTables<'_>,
    n: usize,
    what: &dyn Fn() -> String,
) -> (Result<(), aceapex::device::status::Status>, Vec<u8>) {
    use aceapex::decode::rans::{self as fast, SliceDecoder};
    let mut want = vec![0xA5u8; n];
    let st_ref = aceapex::device::rans::decode_slice(slice, lanes, t, &mut want);
    let mut got = vec![0x5Au8; n];
    let st_fast = fast::decode_slice(slice, lanes, t, &mut got);
    assert_eq!(st_fast, st_ref, "decode_slice status differs: {}", what());
    if st_ref.is_ok() {
        assert!(got == want, "decode_slice bytes differ: {}", what());
    }
    let mut got2 = vec![0x33u8; n];
    let st_step = match SliceDecoder::new(slice, lanes, t, &mut got2) {
        Ok(mut d) => {
            loop {
                let k = r.pick(&[1usize, 1, 2, 3, 7, 64, usize::MAX]);
                if d.fast_rows(k) == 0 {
                    break;
                }
            }
            d.finish()
        }
        Err(e) => Err(e),
    };
    assert_eq!(st_step, st_ref, "stepwise status differs: {}", what());
    if st_ref.is_ok() {
        assert!(got2 == want, "stepwise bytes differ: {}", what());
    }
    (st_ref, want)
}

/// One round of a resealed-mutation fuzz: reseals the mutated archive `b` (its block entries
/// of the packed size of its header's widths, and its checksums),
/// runs `check` on it (`true`: it decoded) and counts the outcome in `stats`: failed
/// cleanly, decoded, panicked. A panicking archive is saved as `{tag}_fail_{it}.acx` in the
/// temporary directory for a reproducer.
pub fn fuzz_round(
    b: &mut [u8],
    it: usize,
    tag: &str,
    stats: &mut [usize; 3],
    check: impl FnOnce(&[u8], &str) -> bool,
) {
    use std::panic::{catch_unwind, AssertUnwindSafe};
    let bits: EntryBits = bytemuck::pod_read_unaligned(&b[72..88]);
    let es = aceapex::format::entry::packed_size(&bits);
    super::reseal_entries(b, es);
    let what = format!("fuzz iteration {it}");
    match catch_unwind(AssertUnwindSafe(|| check(b, &what))) {
        Ok(ok) => stats[ok as usize] += 1,
        Err(_) => {
            let path = std::env::temp_dir().join(format!("{tag}_fail_{it}.acx"));
            std::fs::write(&path, &*b).unwrap();
            stats[2] += 1;
            eprintln!("PANIC at {what}: saved {}", path.display());
        }
    }
}

/// Decodes the slices `(bytes, lanes, tables, decoded length)` side by side as a block's CPU
/// decoder does: a `SliceDecoder` each (a header error is that slice's outcome), half the
/// time some of them advanced a few rows alone first, then
/// `SliceDecoder::fast_rows_together`, then each finished in random steps. Returns each
/// slice's status and output buffer (0xEE where nothing was written).
#[allow(clippy::type_complexity)]
pub fn decode_together(
    r: &mut Rng,
    slices: &[(&[u8], usize, aceapex::device::rans::SliceTables<'_>, usize)],
) -> Vec<(Result<(), aceapex::device::status::Status>, Vec<u8>)> {
    use aceapex::decode::rans::SliceDecoder;
    let mut outs: Vec<Vec<u8>> = slices.iter().map(|s| vec![0xEEu8; s.3]).collect();
    let mut got = vec![None; slices.len()];
    let mut decs = Vec::new();
    let mut owner = Vec::new();
    for (i, (&(bytes, lanes, t, _), o)) in slices.iter().zip(outs.iter_mut()).enumerate() {
        match SliceDecoder::new(bytes, lanes, t, o) {
            Ok(d) => {
                decs.push(d);
                owner.push(i);
            }
            Err(st) => got[i] = Some(Err(st)),
        }
    }
    if r.below(2) == 0 {
        for d in decs.iter_mut() {
            if r.below(2) == 0 {
                d.fast_rows(r.range(1, 5) as usize);
            }
        }
    }
    SliceDecoder::fast_rows_together(&mut decs);
    for (mut d, i) in decs.into_iter().zip(owner) {
        while d.fast_rows(r.pick(&[1usize, 5, usize::MAX])) > 0 {}
        got[i] = Some(d.finish());
    }
    got.into_iter()
        .map(|g| g.expect("every slice has an outcome"))
        .zip(outs)
        .collect()
}

/// `a` distinct bytes, increasing: random, or the DNA letters first.
pub fn random_alphabet(r: &mut Rng, a: usize) -> Vec<u8> {
    let mut set = [false; 256];
    let mut out = Vec::new();
    if r.below(2) == 0 {
        for &c in b"ACGT\nNacgtn".iter().take(a) {
            set[c as usize] = true;
            out.push(c);
        }
    }
    while out.len() < a {
        let c = r.next() as u8;
        if !set[c as usize] {
            set[c as usize] = true;
            out.push(c);
        }
    }
    out.sort_unstable();
    out
}

/// Literals of `n` bytes over `alphabet`: skewed, in runs, or uniform.
pub fn gen_lits(r: &mut Rng, alphabet: &[u8], n: usize) -> Vec<u8> {
    let a = alphabet.len() as u64;
    match r.below(3) {
        0 => (0..n)
            .map(|_| alphabet[r.below(a).min(r.below(a)) as usize])
            .collect(),
        1 => {
            let mut d = Vec::with_capacity(n);
            while d.len() < n {
                let c = alphabet[r.below(a) as usize];
                for _ in 0..r.range(1, 30) {
                    d.push(c);
                }
            }
            d.truncate(n);
            d
        }
        _ => (0..n).map(|_| alphabet[r.below(a) as usize]).collect(),
    }
}

/// A table holding every symbol of `h` (which may be empty) and sometimes a few more, all
/// below `limit` (`a^w` for a packed table: one beyond it is refused, FORMAT.md §5.2).
pub fn table_below(
    r: &mut Rng,
    mut h: [u64; 256],
    limit: usize,
) -> aceapex::encode::entropy::FreqTable {
    if r.below(3) == 0 || h.iter().all(|&c| c == 0) {
        for _ in 0..r.range(1, 12) {
            h[r.below(limit as u64) as usize] += r.range(1, 5);
        }
    }
    aceapex::encode::entropy::FreqTable::from_histogram(&h).unwrap()
}

/// [`never_wrong`]: (parsed, decompress succeeded).
/// Also: the grouped fast path of `decompress` (`decode_streams_group`, slices of up to
/// eight blocks decoded together) reports, on one thread, the reference's first failing block
/// and status (archives without cross-block sources).
pub fn never_wrong_grouped(packed: &[u8], data: &[u8], r: &mut Rng, what: &str) -> (bool, bool) {
    let res = never_wrong(packed, data, r, what);
    if res.is_some() {
        group_path_agrees(packed, what);
    }
    (res.is_some(), res == Some(true))
}

/// `decompress` on a one-thread pool (groups and blocks in order) against the reference block
/// by block: the same first failing block and status, or both Ok.
pub fn group_path_agrees(packed: &[u8], what: &str) {
    let a = Archive::parse(packed).unwrap();
    if a.cross_block() || a.header().original_size > 64 << 20 {
        return;
    }
    let reference = per_block(packed, false);
    let first_bad = reference.iter().enumerate().find_map(|(b, x)| match x {
        Err(DecodeError::Block { status, .. }) => Some((b as u32, *status)),
        Err(e) => panic!("reference: {e:?} ({what})"),
        Ok(_) => None,
    });
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let got = pool.install(|| aceapex::decode::decompress(&a));
    match (got, first_bad) {
        (Ok(_), None) | (Err(DecodeError::ContentChecksum), None) => {}
        (Err(DecodeError::Block { block, status, .. }), Some((b, st))) => {
            assert_eq!(
                (block, status),
                (b, st),
                "grouped path vs reference ({what})"
            )
        }
        (got, want) => panic!(
            "grouped path {:?} vs reference first failure {want:?} ({what})",
            got.map(|v| v.len())
        ),
    }
}

/// The pack width of an alphabet of `a` letters, written out from FORMAT.md §5.6 (not from
/// the crate): the largest of 4, 3, 2 with `a^w <= 256`.
pub fn width(a: usize) -> usize {
    match a {
        1..=4 => 4,
        5 | 6 => 3,
        7..=16 => 2,
        _ => panic!("alphabet size {a}"),
    }
}

/// `a^w`: the packed symbols an alphabet of `a` letters may use.
pub fn combos(a: usize) -> usize {
    a.pow(width(a) as u32)
}
