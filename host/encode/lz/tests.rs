//! Round-trip and invariant tests of the match parser against the reference decoder.

use super::*;
use aceapex_device::format::{CMD_RESET, MATCH_BASE, MIN_MATCH_BASE};
use aceapex_device::lz::{decode_block, BlockFrame, Command, Parser};

/// Deterministic xorshift generator.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn random_data(n: usize, seed: u64) -> Vec<u8> {
    let mut r = Rng(seed | 1);
    (0..n).map(|_| r.next() as u8).collect()
}

/// Runs of periodic patterns, period 1..=160, separated by random bytes.
fn repetitive_data(n: usize, seed: u64) -> Vec<u8> {
    let mut r = Rng(seed | 1);
    let mut v = Vec::with_capacity(n);
    while v.len() < n {
        let period = 1 + r.below(160) as usize;
        let pat: Vec<u8> = (0..period).map(|_| r.below(6) as u8 + b'a').collect();
        let run = r.below(600) as usize + 1;
        for k in 0..run {
            v.push(pat[k % period]);
        }
        for _ in 0..r.below(20) {
            v.push(r.next() as u8);
        }
    }
    v.truncate(n);
    v
}

/// ACGT lines of 60 with copies (with point mutations) of earlier stretches.
fn dna_data(n: usize, seed: u64) -> Vec<u8> {
    let mut r = Rng(seed | 1);
    let mut seq: Vec<u8> = Vec::with_capacity(n);
    while seq.len() < n {
        if seq.len() > 1000 && r.below(4) == 0 {
            let len = 20 + r.below(400) as usize;
            let start = r.below((seq.len() - len.min(seq.len() - 1)) as u64) as usize;
            for k in 0..len {
                let b = seq[start + k.min(seq.len() - start - 1)];
                seq.push(if r.below(50) == 0 {
                    b"ACGT"[r.below(4) as usize]
                } else {
                    b
                });
            }
        } else {
            for _ in 0..r.below(300) {
                seq.push(b"ACGT"[r.below(4) as usize]);
            }
            if r.below(10) == 0 {
                seq.extend(std::iter::repeat_n(b'N', r.below(200) as usize));
            }
        }
    }
    let mut out = Vec::with_capacity(n + n / 60);
    for (i, &b) in seq.iter().enumerate() {
        if i > 0 && i % 60 == 0 {
            out.push(b'\n');
        }
        out.push(b);
    }
    out.truncate(n);
    out
}

/// Words drawn with a skewed distribution from a small vocabulary.
fn text_data(n: usize, seed: u64) -> Vec<u8> {
    let mut r = Rng(seed | 1);
    let vocab: Vec<Vec<u8>> = (0..300)
        .map(|_| {
            let l = 2 + r.below(9) as usize;
            (0..l).map(|_| b'a' + r.below(26) as u8).collect()
        })
        .collect();
    let mut v = Vec::with_capacity(n + 16);
    while v.len() < n {
        let a = r.below(300);
        let idx = (a * a / 300) as usize;
        v.extend_from_slice(&vocab[idx]);
        v.push(if r.below(12) == 0 { b'\n' } else { b' ' });
    }
    v.truncate(n);
    v
}

/// Everything one block's recheck found.
struct Recheck {
    max_level: u32,
    matches: u32,
    lowest_source: usize,
}

/// Decodes all blocks of a segment parse with the reference decoder and checks every
/// invariant; `vals` are per-byte dependency values (0 literal, else 1 + writer level)
/// recomputed independently from the commands.
fn check_parse(
    data: &[u8],
    seg: std::ops::Range<usize>,
    bs: usize,
    p: &ParseParams,
    blocks: &[BlockParse],
) {
    let n = seg.len();
    assert_eq!(blocks.len(), n.div_ceil(bs), "block count");
    let mut out = vec![0u8; n];
    let mut vals = vec![0u32; n];
    let independent = p.window as usize <= bs;
    let min_match = p.min_match.max(MIN_MATCH_BASE);
    // FORMAT.md §2: the base is the minimum match, at most 6
    let base = min_match.min(MATCH_BASE);
    for (bi, b) in blocks.iter().enumerate() {
        let start = bi * bs;
        let end = (start + bs).min(n);
        assert_eq!(b.commands.first(), Some(&CMD_RESET), "leading reset");
        assert_eq!(
            b.commands.iter().filter(|&&c| c == CMD_RESET).count(),
            1,
            "exactly one reset"
        );
        if !p.repeat_codes {
            assert!(
                b.commands.iter().all(|&c| !(0x80..=0xBF).contains(&c)),
                "repeat code with --no-rep"
            );
        }
        assert!(b.lowest_source >= seg.start, "source before segment");
        let low = b.lowest_source - seg.start;
        if independent {
            assert!(low >= start, "source before own block in independent mode");
        }
        let frame = BlockFrame {
            dst_start: start,
            dst_end: end,
            src_floor: low / bs * bs,
            window: p.window,
            match_base: base,
        };
        decode_block(b.streams(), &mut out, &frame).expect("decode");
        assert_eq!(
            &out[start..end],
            &data[seg.start + start..seg.start + end],
            "block {bi} bytes"
        );

        // independent recomputation of levels and statistics
        let mut parser = Parser::new(b.streams(), base);
        let mut cur = start;
        let mut r = Recheck {
            max_level: 0,
            matches: 0,
            lowest_source: start,
        };
        while let Some(cmd) = parser.next_command().unwrap() {
            match cmd {
                Command::Literals(k) => {
                    for v in &mut vals[cur..cur + k as usize] {
                        *v = 0;
                    }
                    cur += k as usize;
                }
                Command::Match { dist, len } => {
                    let (d, l) = (dist as usize, len as usize);
                    assert!(len >= min_match, "match shorter than min_match: {len}");
                    assert!(
                        dist >= 1 && dist <= p.window,
                        "distance {dist} outside window"
                    );
                    let src = cur - d;
                    let lvl = vals[src..src + l.min(d)].iter().copied().max().unwrap();
                    if p.depth_cap > 0 {
                        assert!(lvl < p.depth_cap, "level {lvl} >= cap {}", p.depth_cap);
                    }
                    for v in &mut vals[cur..cur + l] {
                        *v = lvl + 1;
                    }
                    r.max_level = r.max_level.max(lvl);
                    r.matches += 1;
                    r.lowest_source = r.lowest_source.min(src);
                    cur += l;
                }
                Command::Reset => {}
            }
        }
        assert_eq!(cur, end);
        assert_eq!(r.max_level, b.max_depth, "max_depth");
        assert_eq!(r.matches, b.matches, "match count");
        assert_eq!(
            r.lowest_source + seg.start,
            b.lowest_source,
            "lowest_source"
        );
    }
}

fn run(data: &[u8], seg: std::ops::Range<usize>, bs: usize, p: &ParseParams) -> Vec<BlockParse> {
    let blocks = parse_segment(data, seg.clone(), bs, p);
    check_parse(data, seg, bs, p, &blocks);
    blocks
}

type Gen = fn(usize, u64) -> Vec<u8>;

fn generators() -> Vec<(&'static str, Gen)> {
    vec![
        ("random", random_data as Gen),
        ("repetitive", repetitive_data),
        ("dna", dna_data),
        ("text", text_data),
    ]
}

#[test]
fn empty_segment_gives_no_block() {
    let p = ParseParams::default();
    assert!(parse_segment(&[], 0..0, 4096, &p).is_empty());
    assert!(parse_segment(b"abc", 1..1, 4096, &p).is_empty());
}

#[test]
fn roundtrip_sizes_levels_windows() {
    let bs = 4096;
    let sizes = [1, 5, 6, 7, bs - 1, bs, bs + 1, 3 * bs + 123];
    for (name, gen) in generators() {
        for &size in &sizes {
            let data = gen(size, size as u64 * 31 + 7);
            for level in 1..=9 {
                for rep in [true, false] {
                    for window in [bs as u32, (bs / 3) as u32, 4 * bs as u32, u32::MAX] {
                        let p = ParseParams {
                            level,
                            min_match: 6,
                            window,
                            repeat_codes: rep,
                            depth_cap: 0,
                            depth_cap_method: DepthCapMethod::Clamp,
                            // the raw-stream prices too (levels 1-7 take them)
                            raw_match_streams: level % 2 == 0 && level <= 7,
                        };
                        let blocks = parse_segment(&data, 0..size, bs, &p);
                        check_parse(&data, 0..size, bs, &p, &blocks);
                        let _ = name;
                    }
                }
            }
        }
    }
}

#[test]
fn compresses_redundant_data() {
    let bs = 16 << 10;
    for (name, gen) in generators() {
        if name == "random" {
            continue;
        }
        let data = gen(4 * bs, 99);
        let p = ParseParams {
            window: bs as u32,
            ..Default::default()
        };
        let blocks = run(&data, 0..data.len(), bs, &p);
        let lits: usize = blocks.iter().map(|b| b.literals.len()).sum();
        let matches: u32 = blocks.iter().map(|b| b.matches).sum();
        assert!(matches > 0, "{name}: no match found");
        assert!(
            lits < data.len() * 9 / 10,
            "{name}: {lits} literals of {}",
            data.len()
        );
    }
    // random data: literals only (a match would cost more than it saves)
    let data = random_data(3 * bs, 5);
    let blocks = run(&data, 0..data.len(), bs, &ParseParams::default());
    let lits: usize = blocks.iter().map(|b| b.literals.len()).sum();
    assert!(lits > data.len() * 99 / 100);
}

#[test]
fn long_runs_use_long_codes() {
    // a single byte repeated: long repeat/new matches with length varints
    let bs = 16 << 10;
    let data = vec![b'N'; 3 * bs + 17];
    for rep in [true, false] {
        let p = ParseParams {
            repeat_codes: rep,
            ..Default::default()
        };
        let blocks = run(&data, 0..data.len(), bs, &p);
        for b in &blocks[..3] {
            assert!(
                b.matches <= 2,
                "a run should be one or two matches, got {}",
                b.matches
            );
            assert!(!b.lengths.is_empty(), "long match without a length varint");
        }
        assert!(blocks[3].matches <= 1);
    }
}

#[test]
fn segment_in_the_middle_never_reads_before_start() {
    let bs = 4096;
    let data = repetitive_data(10 * bs, 3);
    for window in [bs as u32, 3 * bs as u32, u32::MAX] {
        for level in [1, 5, 9] {
            let p = ParseParams {
                level,
                window,
                ..Default::default()
            };
            // the segment starts mid-data with the same content right before it
            let blocks = run(&data, 3 * bs + 100..9 * bs + 7, bs, &p);
            for b in &blocks {
                assert!(b.lowest_source >= 3 * bs + 100);
            }
        }
    }
}

#[test]
fn cross_block_window_reads_earlier_blocks() {
    let bs = 4096;
    // block 1 repeats block 0 exactly
    let first = text_data(bs, 11);
    let mut data = first.clone();
    data.extend_from_slice(&first);
    let p = ParseParams {
        window: 2 * bs as u32,
        level: 5,
        ..Default::default()
    };
    let blocks = run(&data, 0..data.len(), bs, &p);
    assert!(
        blocks[1].lowest_source < bs,
        "block 1 should copy from block 0"
    );
    assert!(blocks[1].literals.len() < 64);
    // independent window: never
    let p = ParseParams {
        window: bs as u32,
        ..p
    };
    let blocks = run(&data, 0..data.len(), bs, &p);
    assert!(blocks[1].lowest_source >= bs);
}

#[test]
fn min_match_respected() {
    let bs = 4096;
    for mm in [7, 9, 16, 40] {
        for (_, gen) in generators() {
            let data = gen(3 * bs + 5, mm as u64);
            for level in [1, 3, 5, 9] {
                for rep in [true, false] {
                    let p = ParseParams {
                        level,
                        min_match: mm,
                        repeat_codes: rep,
                        ..Default::default()
                    };
                    run(&data, 0..data.len(), bs, &p);
                }
            }
        }
    }
}

#[test]
fn depth_caps() {
    let bs = 4096;
    for cap in [1, 2, 3, 5] {
        for (_, gen) in generators() {
            let data = gen(4 * bs + 77, cap as u64 + 100);
            for level in [1, 5, 9] {
                for window in [bs as u32, u32::MAX] {
                    for rep in [true, false] {
                        let p = ParseParams {
                            level,
                            window,
                            repeat_codes: rep,
                            depth_cap: cap,
                            depth_cap_method: DepthCapMethod::Clamp,
                            min_match: 6,
                            raw_match_streams: false,
                        };
                        let blocks = run(&data, 0..data.len(), bs, &p);
                        for b in &blocks {
                            assert!(b.max_depth < cap);
                        }
                    }
                }
            }
        }
    }
    // without a cap, repetitive data builds deep chains; with cap 1 all matches read literals
    let data = repetitive_data(8 * bs, 1);
    let p = ParseParams {
        window: u32::MAX,
        ..Default::default()
    };
    let deep = run(&data, 0..data.len(), bs, &p);
    assert!(deep.iter().map(|b| b.max_depth).max().unwrap() > 0);
    let flat = run(&data, 0..data.len(), bs, &ParseParams { depth_cap: 1, ..p });
    assert!(flat.iter().all(|b| b.max_depth == 0));
    assert!(flat.iter().map(|b| b.matches).sum::<u32>() > 0);
}

#[test]
fn deterministic() {
    let bs = 16 << 10;
    let mut data = text_data(5 * bs, 42);
    data.extend(dna_data(3 * bs, 43));
    for level in [1, 5, 9] {
        let p = ParseParams {
            level,
            window: 1 << 20,
            ..Default::default()
        };
        let a = parse_segment(&data, 0..data.len(), bs, &p);
        // disturb the thread-local scratch with an unrelated parse in between
        let _ = parse_segment(&random_data(bs, 1), 0..bs, 4096, &ParseParams::default());
        let b = parse_segment(&data, 0..data.len(), bs, &p);
        assert_eq!(a, b);
        // and on another thread with a fresh scratch
        let d2 = data.clone();
        let p2 = p.clone();
        let c = std::thread::spawn(move || parse_segment(&d2, 0..d2.len(), bs, &p2))
            .join()
            .unwrap();
        assert_eq!(a, c);
    }
}

#[test]
fn offsets_split_and_join_by_hand() {
    // distances 3, 300 and 16384 as LEB128: 03 | AC 02 | 80 80 01 (FORMAT.md §4.2)
    let leb = [0x03, 0xAC, 0x02, 0x80, 0x80, 0x01];
    let (heads, tails) = super::split_offsets(&leb);
    assert_eq!(heads, [0x03, 0xAC, 0x80]);
    assert_eq!(tails, [0x02, 0x80, 0x01]);
    assert_eq!(
        super::join_offsets(&heads, &tails).as_deref(),
        Some(&leb[..])
    );
    // a tail cut off, a tail missing, a tail byte left over
    assert_eq!(super::join_offsets(&heads, &tails[..2]), None);
    assert_eq!(super::join_offsets(&[0x83], &[]), None);
    assert_eq!(super::join_offsets(&[0x03], &[0x01]), None);
    // what the encoder writes is what the split gives
    let (mut h, mut t) = (Vec::new(), Vec::new());
    for d in [3u32, 300, 16384] {
        aceapex_device::lz::write_offset(d, &mut h, &mut t);
    }
    assert_eq!((h, t), (heads, tails));
}
