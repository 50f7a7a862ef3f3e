//! Wide slices in whole archives: encoder archives (raw match streams and wide lanes, levels
//! 1-7) with their lane counts, `W0` and word areas damaged, slices at small blocks, hand-made
//! archives with wide slices in every stream, resealed mutation, and real DNA.

use super::*;

fn version_of(b: &[u8]) -> u16 {
    (get_u32(b, H_VERSION) & 0xFFFF) as u16
}

/// Same archive (same version unless given), other entries / data.
fn rebuilt(p: &Parts, version: Option<u16>, entries: &[BlockEntry], data: &[u8]) -> Vec<u8> {
    let v = version.unwrap_or(version_of(&p.header));
    assemble(p, v, p.header[H_BASE], entries, &p.tables, data)
}

/// Byte range of block `b`'s stream `k` slice in the data section.
fn slice_range(entries: &[BlockEntry], b: usize, k: usize) -> std::ops::Range<usize> {
    let start: u64 = entries[..b]
        .iter()
        .flat_map(|e| e.stored_len)
        .map(|l| l as u64)
        .sum::<u64>()
        + entries[b].stored_len[..k]
            .iter()
            .map(|&l| l as u64)
            .sum::<u64>();
    start as usize..start as usize + entries[b].stored_len[k] as usize
}

/// The data section and entries with block `b`'s stream `k` slice replaced by `bytes`.
fn with_slice(
    data: &[u8],
    entries: &[BlockEntry],
    b: usize,
    k: usize,
    bytes: &[u8],
) -> (Vec<BlockEntry>, Vec<u8>) {
    let rg = slice_range(entries, b, k);
    let mut d = data[..rg.start].to_vec();
    d.extend_from_slice(bytes);
    d.extend_from_slice(&data[rg.end..]);
    let mut e = entries.to_vec();
    e[b].stored_len[k] = bytes.len() as u32;
    (e, d)
}

/// The reference's status of block `b` (Ok for a block that decodes and checks).
fn block_status(packed: &[u8], b: usize) -> Result<(), Status> {
    let a = Archive::parse(packed).unwrap();
    let mut out = vec![0u8; a.header().original_size as usize];
    // blocks before b first, for a cross-block archive's sources
    if a.cross_block() {
        for i in 0..b {
            let _ = aceapex::decode::decode_block_reference(&a, i, &mut out, 0);
        }
    }
    match aceapex::decode::decode_block_reference(&a, b, &mut out, 0) {
        Ok(()) => Ok(()),
        Err(DecodeError::Block { status, .. }) => Err(status),
        Err(e) => panic!("block {b}: {e:?}"),
    }
}

/// DNA-like data over `letters` (repeats copied now and then), soft-masked in runs when
/// `masked` (8 letters: two per packed symbol, where wide lanes pay at 16 KiB blocks).
fn dna(r: &mut Rng, n: usize, letters: &[u8], masked: bool) -> Vec<u8> {
    let mut d: Vec<u8> = Vec::with_capacity(n);
    let mut lower = false;
    while d.len() < n {
        if d.len() > 500 && r.below(10) == 0 {
            let back = r.range(1, d.len().min(60_000) as u64) as usize;
            let len = r.range(8, 300) as usize;
            let from = d.len() - back;
            for i in 0..len {
                let c = d[from + i % back];
                d.push(c);
            }
        } else {
            for _ in 0..r.range(1, 200) {
                if masked && r.below(300) == 0 {
                    lower = !lower;
                }
                let c = letters[r.below(letters.len() as u64) as usize];
                d.push(if lower { c.to_ascii_lowercase() } else { c });
            }
        }
    }
    d.truncate(n);
    d
}

/// An encoder archive with wide lanes (raw match streams: levels 1-7).
fn wide_archive(r: &mut Rng, round: usize) -> (Vec<u8>, Vec<u8>, Settings) {
    let bs = [16384u32, 65536, 16384, 32768][round % 4];
    let n = r.range(150_000, 400_000) as usize;
    let data = match round % 3 {
        0 => dna(r, n, b"ACGT", true),
        1 => dna(r, n, b"ACGTN", round.is_multiple_of(2)),
        _ => {
            let mut d = b">chr7 a header line {v7}\n".to_vec();
            d.extend(dna(r, n, b"ACGT\n", true));
            d
        }
    };
    let opts = Settings {
        block_size: bs,
        level: 1 + (round % 7) as u32,
        window: if round % 5 == 4 { Some(bs * 4) } else { None },
        min_match: [6u32, 4, 5][round % 3],
        context_tables: round.is_multiple_of(2),
        raw_match_streams: true,
        wide_lanes: true,
        ..Default::default()
    };
    let packed = aceapex::compress_settings(&data, &opts, &|_| {}).unwrap();
    (data, packed, opts)
}

/// (block, stream) of every wide slice.
fn wide_slices(entries: &[BlockEntry]) -> Vec<(usize, usize)> {
    let mut v = Vec::new();
    for (b, e) in entries.iter().enumerate() {
        for (k, &l) in e.lanes.iter().enumerate() {
            if l as usize > AREA_LANES {
                v.push((b, k));
            }
        }
    }
    v
}

/// Encoder archives with wide lanes (raw match streams, levels 1-7, 16-64 KiB blocks, some
/// cross-block): decode right through every path; relabelled to the pre-release versions
/// 2-8 refused naming the version, to 0, 9+ refused as unknown; lanes set to every count
/// 1..=64 (never wrong) and 65..=255 (refused naming the
/// lanes); `W0` and the words damaged with the status the text predicts; both halves at once.
#[test]
fn encoder_archives() {
    let mut r = Rng(0xC7_1000 + env("ATTACK_SEED", 0));
    let mut stats = [0usize; 3];
    let mut wide_total = 0;
    for round in 0..env("ATTACK_ENC_ROUNDS", 14) as usize {
        let (data, packed, opts) = wide_archive(&mut r, round);
        let what = |s: &str| format!("round {round} ({opts:?}): {s}");
        let (parsed, ok) = never_wrong_grouped(&packed, &data, &mut r, &what("as written"));
        assert!(parsed && ok, "{}", what("as written"));
        let p = parts(&packed);
        assert_eq!(version_of(&packed), 1);
        let wide = wide_slices(&p.entries);
        wide_total += wide.len();
        if wide.is_empty() {
            continue;
        }
        for &(b, k) in &wide {
            // §5.3 from the text: W0 and the areas fit the stored length
            let a = Archive::parse(&packed).unwrap();
            let s = a.slices(b)[k];
            let l = p.entries[b].lanes[k] as usize;
            let w = Wide::parse(s, l);
            assert_eq!(s.len(), 4 * l + 4 + 2 * w.total());
        }
        // version labels: the pre-release versions 2-8 refused by name; 0, 9+ unknown
        for v in 2u16..=8 {
            let bytes = assemble(&p, v, p.header[H_BASE], &p.entries, &p.tables, &p.data);
            assert_eq!(
                Archive::parse(&bytes).err(),
                Some(FormatError::PreReleaseVersion { got: v }),
                "{}",
                what(&format!("version {v}"))
            );
        }
        for v in [0u16, 9, 0x107, u16::MAX] {
            let bytes = assemble(&p, v, p.header[H_BASE], &p.entries, &p.tables, &p.data);
            assert!(
                matches!(Archive::parse(&bytes), Err(FormatError::Version { .. })),
                "{}",
                what(&format!("version {v}"))
            );
        }
        // lane counts: every rANS slice count 1..=64 on one block's wide slice, 65..=255
        // refused naming them (127 on the literals is a two-bit slice, FORMAT.md §5.7: never
        // wrong), and a narrow rANS slice made wide
        let (b, k) = r.pick(&wide);
        for l in 1..=255u8 {
            let mut e = p.entries.clone();
            e[b].lanes[k] = l;
            let bytes = rebuilt(&p, None, &e, &p.data);
            let w = what(&format!("block {b} stream {k} lanes -> {l}"));
            if l == LANES_TWO_BIT && k == STREAM_LITERALS {
                let (parsed, ok) = never_wrong_grouped(&bytes, &data, &mut r, &w);
                assert!(parsed, "{w}");
                stats[1 + ok as usize] += 1;
            } else if l == aceapex::device::format::LANES_TWO_BIT_RUNS && k == STREAM_LITERALS {
                // §5.8's lane count needs the type-3 record (§3.7), which these lack
                match Archive::parse(&bytes) {
                    Err(FormatError::BlockEntry { block, why }) => {
                        assert_eq!(block as usize, b, "{w}");
                        assert!(
                            why.contains("without the two-bit runs record"),
                            "{w}: {why}"
                        );
                    }
                    other => panic!("{w}: {:?}", other.err()),
                }
                stats[0] += 1;
            } else if l as usize > MOST_LANES {
                match Archive::parse(&bytes) {
                    Err(FormatError::BlockEntry { block, why }) => {
                        assert_eq!(block as usize, b, "{w}");
                        // (the entry reader's or the parser's "(at most 64, ...)")
                        let want = format!("stream {k} has {l} lanes (at most 64");
                        assert!(why.contains(&want), "{w}: {why}");
                    }
                    other => panic!("{w}: {:?}", other.err()),
                }
                stats[0] += 1;
            } else if l % 4 == 1 || l as usize > AREA_LANES {
                let (parsed, ok) = never_wrong_grouped(&bytes, &data, &mut r, &w);
                assert!(parsed, "{w}");
                stats[1 + ok as usize] += 1;
            }
        }
        let narrow: Vec<(usize, usize)> = (0..p.entries.len())
            .flat_map(|b| (0..STREAM_COUNT).map(move |k| (b, k)))
            .filter(|&(b, k)| (1..=32).contains(&p.entries[b].lanes[k]))
            .collect();
        for _ in 0..4.min(narrow.len()) {
            let (b, k) = r.pick(&narrow);
            let mut e = p.entries.clone();
            e[b].lanes[k] = r.range(33, 64) as u8;
            let bytes = rebuilt(&p, None, &e, &p.data);
            let w = what(&format!("narrow block {b} -> {} lanes", e[b].lanes[k]));
            let (parsed, ok) = never_wrong_grouped(&bytes, &data, &mut r, &w);
            assert!(parsed, "{w}");
            stats[1 + ok as usize] += 1;
        }
        // W0 and the words of a few wide slices: the status the text names
        let a = Archive::parse(&packed).unwrap();
        for _ in 0..env("ATTACK_DAMAGE", 12).div_ceil(6) {
            let (b, k) = r.pick(&wide);
            let lanes = p.entries[b].lanes[k] as usize;
            let w = Wide::parse(a.slices(b)[k], lanes);
            for v in wide_variants(&mut r, &w, lanes) {
                // the text's status for the slice; the block's as the first failing stream's
                // (every other stream of the block decodes, being untouched)
                let (e, d) = with_slice(&p.data, &p.entries, b, k, &v.slice);
                let bytes = rebuilt(&p, None, &e, &d);
                let wh = what(&format!("block {b} stream {k}: {}", v.name));
                let (parsed, ok) = never_wrong_grouped(&bytes, &data, &mut r, &wh);
                assert!(parsed, "{wh}");
                let st = block_status(&bytes, b);
                if let Some(want) = v.expect {
                    if want.is_err() {
                        assert_eq!(st, want, "{wh}");
                        assert!(!ok, "{wh}: decompress Ok");
                    } else {
                        assert!(ok && st.is_ok(), "{wh}: {st:?}");
                    }
                }
                if v.any_err {
                    assert!(st.is_err() && !ok, "{wh}");
                }
                stats[1 + ok as usize] += 1;
            }
        }
    }
    eprintln!(
        "encoder archives: {wide_total} wide slices; lanes/damage: {} refused, {} failed, \
         {} decoded",
        stats[0], stats[1], stats[2]
    );
    assert!(wide_total > 0, "no wide slices in the encoder archives");
}

/// Wide lanes at 4 KiB blocks: the encoder writes wide slices where they pay (text's literal
/// slices do, DNA's packed ones rarely), always as format 1, and the archive decodes; the
/// same inputs without wide lanes have no wide slice.
#[test]
fn wide_slices_at_small_blocks() {
    let mut r = Rng(0xC7_2000 + env("ATTACK_SEED", 0));
    let mut wide_small = 0;
    for round in 0..8usize {
        let n = r.range(40_000, 200_000) as usize;
        let data = match round % 4 {
            0 => dna(&mut r, n, b"ACGT", true),
            1 => crate::common::attack::text(&mut r, n),
            2 => dna(&mut r, n, b"ACGTN", false),
            _ => (0..n).map(|_| r.next() as u8).collect(),
        };
        let opts = Settings {
            block_size: 4096 << (round % 3),
            level: [1u32, 5, 9, 6][round % 4],
            min_match: [6u32, 4][round % 2],
            ..Default::default()
        };
        let packed = aceapex::compress_settings(&data, &opts, &|_| {}).unwrap();
        assert_eq!(version_of(&packed), 1);
        assert!(
            wide_slices(&parts(&packed).entries).is_empty(),
            "round {round}"
        );
        let short = Settings {
            block_size: 4096,
            level: 1 + round as u32 % 7,
            raw_match_streams: true,
            wide_lanes: true,
            ..Default::default()
        };
        let packed = aceapex::compress_settings(&data, &short, &|_| {}).unwrap();
        assert_eq!(version_of(&packed), 1);
        let p = parts(&packed);
        wide_small += wide_slices(&p.entries).len();
        let (parsed, ok) =
            never_wrong_grouped(&packed, &data, &mut r, &format!("round {round}: 4 KiB"));
        assert!(parsed && ok, "round {round}: 4 KiB blocks with wide lanes");
    }
    eprintln!("{wide_small} wide 4 KiB slices");
    assert!(wide_small > 0);
}

/// A source archive with tables on every stream (text, or soft-masked DNA with context pairs
/// or packed literals), rebuilt with each rANS slice re-coded by [`spec_encode`]
/// at a lane count drawn mostly from 33..=64 (where a context pair allows the new lanes),
/// raw slices kept. Returns the data, the archive and the number of wide slices per stream.
fn handmade(r: &mut Rng, round: usize) -> (Vec<u8>, Vec<u8>, [usize; STREAM_COUNT]) {
    let n = r.range(60_000, 200_000) as usize;
    let data = match round % 3 {
        0 => crate::common::attack::text(r, n),
        1 => dna(r, n, b"ACGT", true),
        _ => dna(r, n, b"ACGTN", false),
    };
    let opts = Settings {
        block_size: [4096u32, 16384, 8192][round % 3],
        level: [5u32, 9, 3, 6][round % 4],
        min_match: [6u32, 4][round % 2],
        window: if round % 4 == 3 { Some(65536) } else { None },
        ..Default::default()
    };
    let src = aceapex::compress_settings(&data, &opts, &|_| {}).unwrap();
    let a = Archive::parse(&src).unwrap();
    assert_eq!(aceapex::decode::decompress(&a).unwrap(), data);
    let p = parts(&src);
    let gb = a.header().group_blocks as usize;
    let mut entries = p.entries.clone();
    let mut out = Vec::new();
    let mut wide = [0usize; STREAM_COUNT];
    for b in 0..a.block_count() {
        let mut bufs: [Vec<u8>; STREAM_COUNT] = Default::default();
        aceapex::decode::decode_streams(&a, b, &mut bufs).unwrap();
        let slices = a.slices(b);
        for k in 0..STREAM_COUNT {
            let l0 = p.entries[b].lanes[k] as usize;
            if l0 == 0 {
                out.extend_from_slice(slices[k]);
                continue;
            }
            let rec = a.tables()[b / gb][k].as_ref().unwrap().record();
            let symbols = match &rec.alphabet {
                Some(al) => pack_spec(&bufs[k], al),
                None => bufs[k].clone(),
            };
            let spec = Spec::new(&rec.tables, rec.ctx_bit as u32);
            let mut tries = vec![
                r.range(33, 64) as usize,
                64,
                r.range(33, 64) as usize,
                r.range(1, 64) as usize,
            ];
            if r.below(6) == 0 {
                tries.insert(0, r.range(1, 32) as usize);
            }
            tries.push(l0);
            let l = tries
                .into_iter()
                .find(|&l| spec.codes(&symbols, l))
                .expect("the original lanes code");
            let bytes = spec_encode(&symbols, l, &spec);
            entries[b].lanes[k] = l as u8;
            entries[b].stored_len[k] = bytes.len() as u32;
            wide[k] += (l > AREA_LANES) as usize;
            out.extend_from_slice(&bytes);
        }
    }
    let base = a.header().match_base() as u8;
    let bytes = assemble(&p, 1, base, &entries, &p.tables, &out);
    (data, bytes, wide)
}

/// Hand-made archives with wide slices in every stream that has a table (several
/// per block, context pairs and packed literals among them, some cross-block): decode to the
/// original through every path; then damaged (lanes, `W0`, states, words, flips; resealed):
/// never wrong, fast == reference.
#[test]
fn handmade_wide_everywhere() {
    let mut r = Rng(0xC7_3000 + env("ATTACK_SEED", 0));
    let mut wide_per_stream = [0usize; STREAM_COUNT];
    let mut stats = [0usize; 2];
    for round in 0..env("ATTACK_HAND_ROUNDS", 8) as usize {
        let (data, bytes, wide) = handmade(&mut r, round);
        let what = format!("hand-made round {round}");
        let (parsed, ok) = never_wrong_grouped(&bytes, &data, &mut r, &what);
        assert!(parsed && ok, "{what}: does not decode");
        compare_archive(&bytes, &what);
        for k in 0..STREAM_COUNT {
            wide_per_stream[k] += wide[k];
        }
        let p = parts(&bytes);
        let a = Archive::parse(&bytes).unwrap();
        let ws = wide_slices(&p.entries);
        for it in 0..env("ATTACK_DAMAGE", 12) as usize {
            let mut e = p.entries.clone();
            let mut d = p.data.clone();
            for _ in 0..r.range(1, 2) {
                let Some((b, k)) = (!ws.is_empty()).then(|| r.pick(&ws)) else {
                    break;
                };
                let lanes = p.entries[b].lanes[k] as usize;
                let w = Wide::parse(a.slices(b)[k], lanes);
                match r.below(6) {
                    0 => e[b].lanes[k] = r.range(1, 64) as u8,
                    1 => {
                        let v = w.with_first(r.below(w.total() as u64 + 2) as u32);
                        (e, d) = with_slice(&d, &e, b, k, &v);
                    }
                    2 => {
                        let mut x = w.clone();
                        let j = r.below(lanes as u64) as usize;
                        x.states[j] = r.below(L as u64 * 2) as u32;
                        (e, d) = with_slice(&d, &e, b, k, &x.bytes());
                    }
                    3 => {
                        let vs = wide_variants(&mut r, &w, lanes);
                        let v = &vs[r.below(vs.len() as u64) as usize];
                        (e, d) = with_slice(&d, &e, b, k, &v.slice);
                    }
                    _ => {
                        let rg = slice_range(&e, b, k);
                        if !rg.is_empty() {
                            let i = rg.start + r.below(rg.len() as u64) as usize;
                            d[i] ^= 1 << r.below(8);
                        }
                    }
                }
            }
            let bad = rebuilt(&p, None, &e, &d);
            let (_, ok) = never_wrong_grouped(&bad, &data, &mut r, &format!("{what}, damage {it}"));
            stats[ok as usize] += 1;
        }
    }
    eprintln!(
        "hand-made: wide slices per stream {wide_per_stream:?}; damaged: {} failed, {} decoded",
        stats[0], stats[1]
    );
    assert!(
        wide_per_stream.iter().filter(|&&c| c > 0).count() >= 3,
        "wide slices in too few streams: {wide_per_stream:?}"
    );
}

/// Resealed random byte mutations of encoder and hand-made archives, aimed at the
/// wide slices (states, `W0`, words), the block table (lane bits), the version and anywhere:
/// no panic, never wrong.
#[test]
fn mutation_fuzz() {
    let mut r = Rng(0xC7_5000 + env("ATTACK_SEED", 0));
    let iters = env("ATTACK_FUZZ_ITERS", 1500) as usize;
    let mut archives = Vec::new();
    for round in 0..4 {
        let (data, b) = if round % 2 == 0 {
            let (d, b, _) = wide_archive(&mut r, round);
            (d, b)
        } else {
            let (d, b, _) = handmade(&mut r, round);
            (d, b)
        };
        let p = parts(&b);
        let ws = wide_slices(&p.entries);
        archives.push((data, b, p, ws));
    }
    let mut stats = [0usize; 3];
    for it in 0..iters {
        let (data, packed, p, ws) = &archives[it % archives.len()];
        let a = Archive::parse(packed).unwrap();
        let bt_end = HEADER_SIZE + a.block_count() * a.entry_size();
        let data_start = a.data_offset() as usize;
        let mut b = packed.clone();
        for _ in 0..r.range(1, 4) {
            let at = match r.below(8) {
                0..=3 if !ws.is_empty() => {
                    let (blk, k) = r.pick(ws);
                    let rg = slice_range(&p.entries, blk, k);
                    let lanes = p.entries[blk].lanes[k] as usize;
                    let off = match r.below(4) {
                        0 => r.below(4 * lanes as u64) as usize,
                        1 => 4 * lanes + r.below(4) as usize,
                        _ => r.below(rg.len() as u64) as usize,
                    };
                    data_start + rg.start + off.min(rg.len() - 1)
                }
                4 => r.range(HEADER_SIZE as u64, bt_end as u64 - 1) as usize,
                5 => H_VERSION,
                _ => r.below(b.len() as u64) as usize,
            };
            match r.below(5) {
                0 => b[at] ^= 1 << r.below(8),
                1 => b[at] = r.next() as u8,
                2 => b[at] = b[at].wrapping_add(1),
                3 => b[at] = b[at].wrapping_sub(1),
                _ => b[at] = r.pick(&[0u8, 6, 7, 32, 33, 64, 65, 0xFF]),
            }
        }
        crate::common::attack::fuzz_round(&mut b, it, "wide_slices", &mut stats, |b, what| {
            never_wrong_grouped(b, data, &mut Rng(it as u64), what).1
        });
    }
    eprintln!(
        "fuzz: {} failed cleanly, {} decoded, {} panics",
        stats[0], stats[1], stats[2]
    );
    assert_eq!(stats[2], 0, "panics");
    assert!(stats[0] > 0 && stats[1] > 0, "{stats:?}");
}

/// Real genomes (corpora/dna): the encoder's archives with raw match
/// streams and wide lanes at levels 1, 5, 6 and 7 (16 and 64 KiB blocks, once cross-block)
/// decode right through every path; then `W0`, lanes and words of their wide slices
/// damaged (never wrong, fast == reference, and the status the text names).
#[test]
#[ignore = "needs the corpora (ATTACK_CORPORA, default corpora/): cargo test --release --test corrupt -- --ignored real_"]
fn real_dna() {
    let dir = std::env::var("ATTACK_CORPORA").unwrap_or_else(|_| "corpora".into());
    let kib = env("ATTACK_KIB", 256) as usize;
    let damage = env("ATTACK_DAMAGE", 12) as usize;
    let mut r = Rng(0xC7_8000 + env("ATTACK_SEED", 0));
    let files = [
        "dna/E_coli_K12_MG1655_NC_000913.2.fa",
        "dna/TAIR10_chr1.fna",
        "dna/dm3_chr2R.fa",
        "dna/P_falciparum_genome.fa",
    ];
    let mut stats = [0usize; 3];
    let mut wide_archives = 0;
    let mut found = 0;
    for (i, f) in files.iter().enumerate() {
        let Ok(all) = std::fs::read(format!("{dir}/{f}")) else {
            panic!("{dir}/{f} not found: this test reads the corpora");
        };
        found += 1;
        for (j, level) in [1u32, 5, 6, 7].into_iter().enumerate() {
            let start = if j == 0 || all.len() <= kib << 10 {
                0
            } else {
                r.below((all.len() - (kib << 10)) as u64) as usize
            };
            let data = &all[start..(start + (kib << 10)).min(all.len())];
            let bs = if (i + j) % 3 == 2 { 65536 } else { 16384 };
            let opts = Settings {
                block_size: bs,
                level,
                raw_match_streams: true,
                wide_lanes: true,
                window: if (i + j) % 5 == 4 { Some(bs * 4) } else { None },
                ..Default::default()
            };
            let what = format!(
                "{f} at {start}, level {level}, bs {bs}, window {:?}",
                opts.window
            );
            let packed = aceapex::compress_settings(data, &opts, &|_| {}).unwrap();
            let (parsed, ok) = never_wrong_grouped(&packed, data, &mut r, &what);
            assert!(parsed && ok, "{what}: does not decode");
            let p = parts(&packed);
            let ws = wide_slices(&p.entries);
            assert_eq!(version_of(&packed), 1, "{what}");
            eprintln!(
                "{what}: version {}, {} bytes, {} of {} blocks wide",
                version_of(&packed),
                packed.len(),
                ws.len(),
                p.entries.len()
            );
            stats[0] += 1;
            if ws.is_empty() {
                continue;
            }
            wide_archives += 1;
            let a = Archive::parse(&packed).unwrap();
            for it in 0..damage {
                let (b, k) = r.pick(&ws);
                let lanes = p.entries[b].lanes[k] as usize;
                let w = Wide::parse(a.slices(b)[k], lanes);
                let (e, d, expect) = match it % 4 {
                    0 => {
                        let mut e = p.entries.clone();
                        e[b].lanes[k] = r.range(1, 64) as u8;
                        (e, p.data.clone(), None)
                    }
                    1 => {
                        let (e, d) = with_slice(
                            &p.data,
                            &p.entries,
                            b,
                            k,
                            &w.with_first(w.total() as u32 + 1),
                        );
                        (e, d, Some(HEADER))
                    }
                    2 => {
                        let vs = wide_variants(&mut r, &w, lanes);
                        let v = &vs[r.below(vs.len() as u64) as usize];
                        let (e, d) = with_slice(&p.data, &p.entries, b, k, &v.slice);
                        (e, d, v.expect)
                    }
                    _ => {
                        let mut d = p.data.clone();
                        let rg = slice_range(&p.entries, b, k);
                        let i = rg.start + r.below(rg.len() as u64) as usize;
                        d[i] ^= 1 << r.below(8);
                        (p.entries.clone(), d, None)
                    }
                };
                let bad = rebuilt(&p, None, &e, &d);
                let wh = format!("{what}: block {b} damage {it}");
                let (_, ok) = never_wrong_grouped(&bad, data, &mut r, &wh);
                if let Some(want) = expect {
                    assert_eq!(block_status(&bad, b), want, "{wh}");
                }
                stats[1 + ok as usize] += 1;
            }
        }
    }
    eprintln!(
        "real DNA: {} archives ({wide_archives} with wide slices); damaged: {} failed, {} decoded",
        stats[0], stats[1], stats[2]
    );
    if found > 0 {
        assert!(wide_archives > 0, "no real DNA archive went wide");
    }
}
