//! Packed literals in whole archives: encoder archives relabelled, hand-made archives, the
//! record rules, resealed mutation, and the encoder on small alphabets, FASTA headers, edge
//! inputs and real DNA.

use super::*;

/// Encoder archives: valid through every path; pre-release version labels refused; the kind-3
/// record moved to every other stream position; every alphabet size byte 0..=255;
/// alphabets swapped, repeated, relabelled; bodies with a symbol at `a^w`; kind 3 read as
/// kind 1; a kind-1 literal record read as kind 3; decoded lengths and lanes of packed
/// slices changed. Never wrong, fast == reference, and the refusals named.
#[test]
fn encoder_relabelled() {
    let mut r = Rng(0xC6_1000 + env("ATTACK_SEED", 0));
    let mut stats = [0usize; 3];
    let mut kind3_seen = 0;
    for round in 0..env("ATTACK_ENC_ROUNDS", 24) as usize {
        let (data, packed, opts) = encoder_archive(&mut r, round);
        let a = Archive::parse(&packed).unwrap();
        assert_eq!(
            aceapex::decode::decompress(&a).unwrap(),
            data,
            "round {round}"
        );
        compare_archive(&packed, "encoder archive");
        let version = a.header().version;
        let base = a.header().match_base() as u8;
        let p = parts(&packed);
        let recs = records(&p.tables);
        let k3: Vec<&Rec> = recs.iter().filter(|x| x.kind == 3).collect();
        assert_eq!(version, 1);
        for rec in &k3 {
            assert_eq!(rec.stream, STREAM_LITERALS);
        }
        kind3_seen += k3.len();
        let what = |s: &str| format!("round {round} (v{version}, {opts:?}): {s}");
        assert_eq!(with_tables(&p, version, base, &p.tables), packed);

        // every version label: format 1 only, the pre-release versions refused by name
        for v in 1u16..=8 {
            let b = with_tables(&p, v, base, &p.tables);
            if v == 1 {
                let (parsed, ok) = never_wrong_grouped(&b, &data, &mut r, &what("v1"));
                assert!(parsed && ok, "{}", what("v1"));
            } else {
                assert_eq!(
                    Archive::parse(&b).err(),
                    Some(FormatError::PreReleaseVersion { got: v }),
                    "{}",
                    what(&format!("v{v}"))
                );
                stats[0] += 1;
            }
        }

        for rec in k3.iter().take(3) {
            let g0 = recs.iter().position(|x| x.start == rec.start).unwrap();
            let asz = rec.alpha.len();
            let rec_bytes = p.tables[rec.start..rec.end].to_vec();
            // moved to every other stream of its group (swapped with that record)
            for k in 1..STREAM_COUNT {
                let other = &recs[g0 + k];
                let mut t = p.tables[..rec.start].to_vec();
                t.extend_from_slice(&p.tables[other.start..other.end]);
                t.extend_from_slice(&p.tables[rec.end..other.start]);
                t.extend_from_slice(&rec_bytes);
                t.extend_from_slice(&p.tables[other.end..]);
                let w = table_err(&with_tables(&p, 1, base, &t), &what(&format!("to {k}")));
                assert!(w.contains("other than literals"), "{}", what(w));
                // and the kind-3 record added in place of stream k's (literals keep theirs)
                let t = replace_record(&p.tables, other, &rec_bytes);
                let w = table_err(&with_tables(&p, 1, base, &t), &what(&format!("dup {k}")));
                assert!(w.contains("other than literals"), "{}", what(w));
                stats[0] += 2;
            }
            // every alphabet size byte
            for nb in 0..=255u8 {
                let mut t = p.tables.clone();
                t[rec.start + 1] = nb;
                let b = with_tables(&p, 1, base, &t);
                let w = what(&format!("alphabet size {asz} -> {nb}"));
                match Archive::parse(&b) {
                    Err(FormatError::GroupTable { what: m, .. }) => {
                        if nb == 0 || nb > 16 {
                            assert!(m.contains("alphabet size"), "{w}: {m}");
                        }
                        stats[0] += 1;
                    }
                    Err(e) => panic!("{w}: {e:?}"),
                    Ok(_) => {
                        assert!((1..=16).contains(&nb), "{w}: parsed");
                        let (_, ok) = never_wrong_grouped(&b, &data, &mut r, &w);
                        stats[1 + ok as usize] += 1;
                    }
                }
            }
            // alphabets out of order (any two letters swapped) or repeated
            if asz >= 2 {
                for _ in 0..4 {
                    let i = rec.alpha.start + r.below(asz as u64) as usize;
                    let j = rec.alpha.start + r.below(asz as u64) as usize;
                    let mut t = p.tables.clone();
                    if i == j {
                        let k = if i > rec.alpha.start { i - 1 } else { i + 1 };
                        t[i] = t[k];
                    } else {
                        t.swap(i, j);
                    }
                    let b = with_tables(&p, 1, base, &t);
                    let m = table_err(&b, &what("unsorted"));
                    assert!(m.contains("increasing"), "{}", what(m));
                    stats[0] += 1;
                }
            }
            // relabelled alphabets (still increasing): never wrong
            for _ in 0..6 {
                let mut t = p.tables.clone();
                let al = random_alphabet(&mut r, asz);
                t[rec.alpha.clone()].copy_from_slice(&al);
                let b = with_tables(&p, 1, base, &t);
                let (parsed, ok) = never_wrong_grouped(&b, &data, &mut r, &what("relabelled"));
                assert!(parsed);
                stats[1 + ok as usize] += 1;
            }
            // a symbol at a^w (or beyond): refused; one unit moved from the largest symbol
            let ft = freq_of(&p.tables[rec.bodies[0].clone()]);
            let lim = combos(asz);
            if lim < 256 {
                for target in [lim, lim + 1, 255].into_iter().filter(|&s| s < 256) {
                    let mut f = ft.freq;
                    let big = (0..256).max_by_key(|&s| f[s]).unwrap();
                    if f[big] < 2 {
                        continue;
                    }
                    f[big] -= 1;
                    f[target] += 1;
                    let t2 = FreqTable { freq: f };
                    let t = replace_record(
                        &p.tables,
                        rec,
                        &kind3(asz as u8, &p.tables[rec.alpha.clone()], &t2),
                    );
                    let m = table_err(&with_tables(&p, 1, base, &t), &what("beyond a^w"));
                    assert!(m.contains("beyond"), "{}", what(m));
                    stats[0] += 1;
                }
            }
            // read as kind 1 (the alphabet dropped): never wrong
            let mut one = vec![1u8];
            one.extend_from_slice(&p.tables[rec.bodies[0].clone()]);
            {
                let b = with_tables(&p, 1, base, &replace_record(&p.tables, rec, &one));
                let (parsed, ok) = never_wrong_grouped(&b, &data, &mut r, &what("kind 3 as 1"));
                assert!(parsed);
                stats[1 + ok as usize] += 1;
            }
            // the same record with an alphabet one letter longer (maybe another width)
            if asz < 16 {
                let mut al = p.tables[rec.alpha.clone()].to_vec();
                let extra = (0..=255u8).find(|x| !al.contains(x)).unwrap();
                al.push(extra);
                al.sort_unstable();
                let t2 = ft.clone();
                if t2.freq[combos(asz + 1).min(256)..].iter().all(|&f| f == 0) {
                    let t = replace_record(&p.tables, rec, &kind3(al.len() as u8, &al, &t2));
                    let b = with_tables(&p, 1, base, &t);
                    let (parsed, ok) =
                        never_wrong_grouped(&b, &data, &mut r, &what("alphabet + 1"));
                    assert!(parsed);
                    stats[1 + ok as usize] += 1;
                }
            }
        }

        // kind-1 literal records read as kind 3 (alphabet: the first letters of the table)
        for rec in recs.iter().filter(|x| x.kind == 1 && x.stream == 0).take(3) {
            let ft = freq_of(&p.tables[rec.bodies[0].clone()]);
            let top = (0..256).rev().find(|&s| ft.freq[s] > 0).unwrap();
            if let Some(asz) = (1..=16usize).find(|&a| combos(a) > top) {
                let al = random_alphabet(&mut r, asz);
                let t = replace_record(&p.tables, rec, &kind3(asz as u8, &al, &ft));
                let b = with_tables(&p, 1, base, &t);
                let (parsed, ok) = never_wrong_grouped(&b, &data, &mut r, &what("kind 1 as 3"));
                assert!(parsed);
                stats[1 + ok as usize] += 1;
            }
        }

        // packed slices: decoded lengths +- up to 2w, lanes 1..=32, raw <-> rANS
        let gb = a.header().group_blocks as usize;
        let packed_blocks: Vec<usize> = (0..p.entries.len())
            .filter(|&b| {
                a.tables()[b / gb][STREAM_LITERALS]
                    .as_ref()
                    .is_some_and(|t| t.is_packed())
                    && p.entries[b].lanes[STREAM_LITERALS] != 0
            })
            .collect();
        for it in 0..env("ATTACK_DAMAGE", 24) as usize {
            if packed_blocks.is_empty() {
                break;
            }
            let b = r.pick(&packed_blocks);
            let mut e = p.entries.clone();
            let mut d = p.data.clone();
            let w = a.literal_width(b);
            match it % 4 {
                0 => {
                    let delta = r.range(1, 2 * w as u64) as i64 * r.pick(&[-1i64, 1]);
                    let dl = &mut e[b].decoded_len[0];
                    *dl = (*dl as i64 + delta).max(0) as u32;
                }
                1 => e[b].lanes[0] = r.range(1, 32) as u8,
                2 => {
                    // read as raw: stored must equal decoded (a parse error otherwise)
                    e[b].lanes[0] = 0;
                    e[b].decoded_len[0] = e[b].stored_len[0];
                }
                _ => {
                    // the slice's last word flipped (the last symbols, with the padding)
                    let off = a.block_offsets()[b] as usize + e[b].stored_len[0] as usize;
                    if off >= 2 && e[b].stored_len[0] >= 2 {
                        d[off - 1 - r.below(2) as usize] ^= 1 << r.below(8);
                    }
                }
            }
            let bad = rebuilt(&p, &e, &p.tables, &d);
            let (_, ok) = never_wrong_grouped(&bad, &data, &mut r, &what(&format!("damage {it}")));
            stats[1 + ok as usize] += 1;
        }
    }
    eprintln!(
        "kind-3 records {kind3_seen}; refused {}, decode failed {}, decoded {}",
        stats[0], stats[1], stats[2]
    );
    assert!(kind3_seen > 0, "no packed records in the encoder archives");
}

/// Hand-made archives with packed literals (unused alphabet letters, nonzero padding digits, raw literal
/// slices in packed groups, any lane counts, small groups): decode to the original through
/// every path; then damaged slices, entries, alphabets and table bytes, resealed: never
/// wrong, fast == reference.
#[test]
fn handmade_archives() {
    let mut r = Rng(0xC6_3000 + env("ATTACK_SEED", 0));
    let mut stats = [0usize; 2];
    let mut k3 = 0;
    for round in 0..env("ATTACK_ROUNDS", 150) as usize / 5 {
        let (data, packed, _) = encoder_archive(&mut r, round);
        let o = Hand {
            group_blocks: r.pick(&[1u32, 2, 3, 8, 64]),
            pack_pct: r.pick(&[70u64, 100]),
            raw_pct: r.pick(&[0u64, 10, 40]),
            pad_pct: r.pick(&[0u64, 50, 100]),
            ctx_pct: r.pick(&[0u64, 30]),
            extra: r.below(2) == 0,
        };
        let b = handmade(&mut r, &packed, o);
        let what = format!("round {round}, {o:?}");
        let a = Archive::parse(&b).expect("hand-made archive parses");
        let p = parts(&b);
        let recs = records(&p.tables);
        k3 += recs.iter().filter(|x| x.kind == 3).count();
        match aceapex::decode::decompress(&a) {
            Ok(out) => assert!(out == data, "hand-made decodes wrong ({what})"),
            Err(e) => panic!("hand-made archive fails: {e:?} ({what})"),
        }
        compare_archive(&b, &what);
        let (parsed, ok) = never_wrong_grouped(&b, &data, &mut r, &what);
        assert!(parsed && ok, "{what}");
        for it in 0..env("ATTACK_DAMAGE", 24) as usize {
            let mut t = p.tables.clone();
            let mut entries = p.entries.clone();
            let mut d = p.data.clone();
            for _ in 0..r.range(1, 3) {
                let bi = r.below(entries.len() as u64) as usize;
                match r.below(7) {
                    0 if !d.is_empty() => {
                        let i = r.below(d.len() as u64) as usize;
                        d[i] ^= 1 << r.below(8);
                    }
                    1 => {
                        let k3r: Vec<&Rec> = recs.iter().filter(|x| x.kind == 3).collect();
                        if !k3r.is_empty() {
                            let rec = r.pick(&k3r);
                            let al = random_alphabet(&mut r, rec.alpha.len());
                            t[rec.alpha.clone()].copy_from_slice(&al);
                        }
                    }
                    2 if entries[bi].lanes[0] != 0 => {
                        entries[bi].lanes[0] = r.range(1, 32) as u8;
                    }
                    3 if entries[bi].lanes[0] != 0 => {
                        let dl = &mut entries[bi].decoded_len[0];
                        *dl = dl.saturating_add_signed(r.range(0, 8) as i32 - 4);
                    }
                    4 => {
                        // the alphabet size byte of a kind-3 record
                        let k3r: Vec<&Rec> = recs.iter().filter(|x| x.kind == 3).collect();
                        if !k3r.is_empty() {
                            let rec = r.pick(&k3r);
                            t[rec.start + 1] = r.range(1, 16) as u8;
                        }
                    }
                    5 => {
                        if !t.is_empty() {
                            let i = r.below(t.len() as u64) as usize;
                            t[i] = t[i].wrapping_add(1);
                        }
                    }
                    _ => {
                        // a packed slice shortened by its last word, lanes kept
                        let off = a.block_offsets()[bi] as usize;
                        if entries[bi].lanes[0] != 0 && entries[bi].stored_len[0] >= 2 {
                            let sl = entries[bi].stored_len[0] as usize;
                            d.drain(off + sl - 2..off + sl);
                            entries[bi].stored_len[0] -= 2;
                        }
                    }
                }
            }
            let bad = rebuilt(&p, &entries, &t, &d);
            let (_, ok) = never_wrong_grouped(&bad, &data, &mut r, &format!("{what}, damage {it}"));
            stats[ok as usize] += 1;
        }
    }
    eprintln!(
        "hand-made: {k3} kind-3 records; damaged: {} failed, {} decoded",
        stats[0], stats[1]
    );
    assert!(k3 > 0);
}

/// Kind-3 records in every stream position (0-4), and every alphabet
/// size byte 0..=255 with an increasing, an unsorted and a repeated alphabet, and a body
/// with a symbol at `a^w` for every size: the reader accepts exactly what §5.2 allows.
#[test]
fn record_rules() {
    let mut r = Rng(0xC6_4000 + env("ATTACK_SEED", 0));
    // source: a small DNA archive, rebuilt by hand with one group per block and packing
    let (data, b) = packed_groups_archive(&mut r, 3 * 4096 + 100, 5, 50, false);
    let a = Archive::parse(&b).unwrap();
    assert_eq!(aceapex::decode::decompress(&a).unwrap(), data);
    let p = parts(&b);
    let recs = records(&p.tables);
    let base = p.header[H_BASE];
    let rec = recs
        .iter()
        .find(|x| x.kind == 3)
        .expect("a kind-3 record")
        .clone();
    let rec_bytes = p.tables[rec.start..rec.end].to_vec();
    let g0 = recs.iter().position(|x| x.start == rec.start).unwrap();
    // every stream position
    for k in 0..STREAM_COUNT {
        let t = replace_record(&p.tables, &recs[g0 + k], &rec_bytes);
        let bb = with_tables(&p, 1, base, &t);
        let w = format!("kind 3 at stream {k}");
        if k == 0 {
            never_wrong_grouped(&bb, &data, &mut r, &w);
        } else {
            let m = table_err(&bb, &w);
            assert!(m.contains("other than literals"), "{w}: {m}");
        }
    }
    // every alphabet size byte with 0..=255 letters of a body over its symbols
    let mut parsed = 0;
    for n in 0..=255usize {
        let sizes = [n, n.saturating_sub(1), (n + 1).min(255)];
        for shape in 0..3 {
            let mut al: Vec<u8> = random_alphabet(&mut r, n.min(256));
            match shape {
                1 if n >= 2 => al.swap(0, n - 1),
                2 if n >= 2 => al[1] = al[0],
                _ => {}
            }
            let lim = if (1..=16).contains(&n) { combos(n) } else { 4 };
            let t = table_below(&mut r, [0; 256], lim);
            let bad_shape = shape != 0 && n >= 2;
            for &declared in &sizes {
                let recb = kind3(declared as u8, &al, &t);
                let tt = replace_record(&p.tables, &rec, &recb);
                let bb = with_tables(&p, 1, base, &tt);
                let w = format!("{n} letters, shape {shape}, declared {declared}");
                let res = Archive::parse(&bb);
                let ok_rule = declared == n && (1..=16).contains(&n) && !bad_shape;
                match res {
                    Ok(_) => {
                        assert!(
                            ok_rule || declared != n,
                            "{w}: parsed a record §5.2 forbids"
                        );
                        parsed += 1;
                        never_wrong_grouped(&bb, &data, &mut r, &w);
                    }
                    Err(FormatError::GroupTable { what, .. }) => {
                        assert!(!ok_rule, "{w}: refused a valid record: {what}");
                        if declared == n && (n == 0 || n > 16) {
                            assert!(what.contains("alphabet size"), "{w}: {what}");
                        } else if declared == n && bad_shape {
                            assert!(what.contains("increasing"), "{w}: {what}");
                        }
                    }
                    Err(e) => panic!("{w}: {e:?}"),
                }
            }
        }
    }
    // every size: a symbol at a^w (and the last one, 255) refused, a^w - 1 accepted
    for n in 1..=16usize {
        let al = random_alphabet(&mut r, n);
        let lim = combos(n);
        for s in [lim - 1, lim, 255] {
            if s >= 256 {
                continue;
            }
            let mut h = [0u64; 256];
            h[0] = 1000;
            h[s] += 1;
            let t = FreqTable::from_histogram(&h).unwrap();
            let tt = replace_record(&p.tables, &rec, &kind3(n as u8, &al, &t));
            let bb = with_tables(&p, 1, base, &tt);
            let w = format!("{n} letters, symbol {s} of {lim}");
            if s < lim {
                assert!(Archive::parse(&bb).is_ok(), "{w}");
                never_wrong_grouped(&bb, &data, &mut r, &w);
            } else {
                let m = table_err(&bb, &w);
                assert!(m.contains("beyond"), "{w}: {m}");
            }
        }
    }
    // the section ends inside a kind-3 record: every cut refused (§5.1)
    for cut in 1..rec.end - rec.start {
        let t = p.tables[..rec.start + cut].to_vec();
        let bb = with_tables(&p, 1, base, &t);
        assert!(Archive::parse(&bb).is_err(), "cut {cut}");
    }
    eprintln!("record rules: {parsed} odd records parsed");
}

/// Resealed random byte mutations of encoder and hand-made archives with packed literals, aimed at kind-3
/// records (kind, size, alphabet, body), the block table and the packed slices: no panic,
/// never wrong.
#[test]
fn mutation_fuzz() {
    let mut r = Rng(0xC6_5000 + env("ATTACK_SEED", 0));
    let iters = env("ATTACK_FUZZ_ITERS", 3000) as usize;
    let mut archives = Vec::new();
    for round in 0..4 {
        let (data, packed, _) = encoder_archive(&mut r, round);
        let b = if round % 2 == 1 {
            let o = Hand {
                group_blocks: r.pick(&[1u32, 3]),
                pack_pct: 100,
                raw_pct: 10,
                pad_pct: 50,
                ctx_pct: 20,
                extra: true,
            };
            handmade(&mut r, &packed, o)
        } else {
            packed
        };
        let p = parts(&b);
        let recs = records(&p.tables);
        archives.push((data, b, recs));
    }
    let mut stats = [0usize; 3];
    for it in 0..iters {
        let (data, packed, recs) = &archives[it % archives.len()];
        let a = Archive::parse(packed).unwrap();
        let bt_end = HEADER_SIZE + a.block_count() * a.entry_size();
        let tables_end = bt_end + a.header().table_bytes as usize;
        let mut b = packed.clone();
        let k3: Vec<&Rec> = recs.iter().filter(|x| x.kind == 3).collect();
        for _ in 0..r.range(1, 4) {
            let rec = if !k3.is_empty() && r.below(3) != 0 {
                r.pick(&k3)
            } else {
                &recs[r.below(recs.len() as u64) as usize]
            };
            let at = match r.below(9) {
                0 => bt_end + rec.start,
                1 if rec.kind == 3 => bt_end + rec.start + 1,
                2 | 3 if rec.kind == 3 && !rec.alpha.is_empty() => {
                    bt_end + r.range(rec.alpha.start as u64, rec.alpha.end as u64 - 1) as usize
                }
                4 if !rec.bodies.is_empty() => {
                    let bd = &rec.bodies[0];
                    bt_end + r.range(bd.start as u64, bd.end as u64 - 1) as usize
                }
                5 => r.range(HEADER_SIZE as u64, bt_end as u64 - 1) as usize,
                6 if b.len() > tables_end => {
                    r.range(tables_end as u64, b.len() as u64 - 1) as usize
                }
                7 => H_VERSION,
                _ => r.range(bt_end as u64, tables_end as u64 - 1) as usize,
            };
            match r.below(5) {
                0 => b[at] ^= 1 << r.below(8),
                1 => b[at] = r.next() as u8,
                2 => b[at] = b[at].wrapping_add(1),
                3 => b[at] = b[at].wrapping_sub(1),
                _ => b[at] = r.below(18) as u8,
            }
        }
        crate::common::attack::fuzz_round(&mut b, it, "packed_literals", &mut stats, |b, what| {
            never_wrong_grouped(b, data, &mut Rng(it as u64), what).1
        });
    }
    eprintln!(
        "fuzz: {} failed cleanly, {} decoded, {} panics",
        stats[0], stats[1], stats[2]
    );
    assert_eq!(stats[2], 0, "panics");
}

/// Random inputs of 1-16 letters (and 17-20 letters with the extra ones in a few blocks
/// only, or in many) at every level 1-9, block sizes 4-64 KiB, context tables on and off,
/// cross-block windows: bit-exact round trips; packed records where the letters fit.
#[test]
fn encoder_small_alphabets_roundtrip() {
    let mut r = Rng(0xC6_6000 + env("ATTACK_SEED", 0));
    let scale = env("ATTACK_ENC_SCALE", 1) as usize;
    // archives [without, with] a packed literal record
    let mut versions = [0usize; 2];
    let has_k3 = |b: &[u8]| {
        let a = Archive::parse(b).unwrap();
        a.tables().iter().flatten().flatten().any(|t| t.is_packed()) as usize
    };
    let mut cases = 0;
    // raw literal slices in packed groups: [letters all inside the alphabet, some outside]
    let mut raw_in_packed = [0usize; 2];
    for letters in 1..=20usize {
        for level in 1..=9u32 {
            let bs = r.pick(&[4096u32, 8192, 16384, 65536]);
            let n = r.range(1, 60_000 * scale as u64) as usize;
            let base_letters = letters.min(16);
            let al = letters_for(&mut r, letters);
            let main: Vec<u8> = al[..base_letters].to_vec();
            let mut data = small_alphabet_data(&mut r, n, &main);
            // letters beyond 16: in few blocks (at most 1/8: packed, those blocks raw) or
            // in many (unpacked)
            let few = r.below(3) != 0;
            if letters > 16 {
                let nb = n.div_ceil(bs as usize);
                let blocks = if few {
                    (nb / 8).max(if nb >= 8 { 1 } else { 0 })
                } else {
                    nb
                };
                for _ in 0..blocks.max(1) {
                    let b = r.below(nb as u64) as usize;
                    let at = (b * bs as usize + r.below(bs as u64) as usize).min(n - 1);
                    for (j, &x) in al[16..].iter().enumerate() {
                        if at + j < n {
                            data[at + j] = x;
                        }
                    }
                }
            }
            let opts = Settings {
                block_size: bs,
                level,
                window: if r.below(4) == 0 { Some(bs * 4) } else { None },
                min_match: r.pick(&[4u32, 5, 6]),
                context_tables: r.below(2) == 0,
                repeat_codes: r.below(4) != 0,
                depth_cap: r.pick(&[0u32, 0, 0, 1, 3]),
                ..Default::default()
            };
            let what = format!("{letters} letters (few {few}), n {n}");
            let packed = roundtrip(&mut r, &data, &opts, &what);
            versions[has_k3(&packed)] += 1;
            cases += 1;
            // packed groups with raw literal slices (blocks with letters outside the alphabet)
            let a = Archive::parse(&packed).unwrap();
            let gb = a.header().group_blocks as usize;
            for (b, e) in a.entries().iter().enumerate() {
                let t = a.tables()[b / gb][STREAM_LITERALS].as_ref();
                if t.is_some_and(|t| t.is_packed()) && e.lanes[0] == 0 && e.decoded_len[0] > 0 {
                    let lits = &block_streams_one(&a, b)[STREAM_LITERALS];
                    let al = t.unwrap().record().alphabet.unwrap();
                    raw_in_packed[lits.iter().any(|x| !al.contains(x)) as usize] += 1;
                }
            }
        }
    }
    // one input over several groups (1 MiB each at 4 KiB blocks): alphabets change per group
    let mut data = Vec::new();
    for k in [2usize, 16, 5, 17] {
        let al = letters_for(&mut r, k);
        data.extend(small_alphabet_data(&mut r, 600_000, &al));
    }
    let opts = Settings {
        block_size: 4096,
        level: 1,
        ..Default::default()
    };
    let packed = roundtrip(&mut r, &data, &opts, "several groups");
    versions[has_k3(&packed)] += 1;
    eprintln!(
        "{} round trips; [unpacked, packed] {versions:?}; raw literal slices in packed groups \
         (inside, outside the alphabet) {raw_in_packed:?}",
        cases + 1
    );
    assert!(versions[1] > 0);
}

/// FASTA-like inputs: DNA (4-11 letters) with header lines of 20+ distinct letters in a few
/// blocks (at most 1/8 of a group's: the encoder may pack the group and store those blocks'
/// literals raw), at every level, block sizes 4-64 KiB, context tables on and off: bit-exact
/// round trips, and the raw literal slices of packed groups are seen.
#[test]
fn encoder_fasta_headers() {
    let mut r = Rng(0xC6_6100 + env("ATTACK_SEED", 0));
    let scale = env("ATTACK_ENC_SCALE", 1) as usize;
    let mut raw_outside = 0;
    let mut packed_archives = 0;
    let mut cases = 0;
    for round in 0..env("ATTACK_ENC_ROUNDS", 24) as usize / 2 {
        for level in [1u32, 3, 5, 7, 8, 9] {
            let bs = r.pick(&[4096u32, 4096, 8192, 16384, 65536]);
            let lo = (20 * bs as u64).min(300_000);
            let mut n = r.range(lo, (40 * bs as u64).min(600_000) * scale as u64) as usize;
            let mut bs = bs;
            if level <= 3 && round % 4 == 0 {
                // a whole group of 4 KiB blocks (1 MiB) and more: one raw block costs the
                // group little, so the encoder packs it
                bs = 4096;
                n = r.range(1 << 20, (3 << 19) * scale as u64) as usize;
            }
            let seq: &[u8] = r.pick(&[&b"ACGT"[..], b"ACGT\n", b"ACGTN\n", b"ACGTacgt\nNn"]);
            let mut data = small_alphabet_data(&mut r, n, seq);
            let nb = n.div_ceil(bs as usize);
            let heads = r.range(0, (nb / 8).clamp(1, 3) as u64) as usize;
            for _ in 0..heads {
                let h = format!(
                    ">seq{} [organism=Test {}] {{len={}}} |x|y|z| #{}\n",
                    r.next() % 1000,
                    round,
                    r.next(),
                    r.next()
                );
                let at = r.below((n - h.len()) as u64) as usize;
                data[at..at + h.len()].copy_from_slice(h.as_bytes());
            }
            let opts = Settings {
                block_size: bs,
                level,
                min_match: r.pick(&[4u32, 6]),
                context_tables: r.below(2) == 0,
                window: if r.below(4) == 0 { Some(bs * 8) } else { None },
                ..Default::default()
            };
            let what = format!("round {round}, FASTA headers {heads} in {nb} blocks");
            let packed = roundtrip(&mut r, &data, &opts, &what);
            cases += 1;
            let a = Archive::parse(&packed).unwrap();
            let gb = a.header().group_blocks as usize;
            let mut any = false;
            for (b, e) in a.entries().iter().enumerate() {
                let Some(t) = a.tables()[b / gb][STREAM_LITERALS].as_ref() else {
                    continue;
                };
                if !t.is_packed() {
                    continue;
                }
                any = true;
                if e.lanes[0] == 0 {
                    let lits = &block_streams_one(&a, b)[STREAM_LITERALS];
                    let al = t.record().alphabet.unwrap();
                    raw_outside += lits.iter().any(|x| !al.contains(x)) as usize;
                }
            }
            packed_archives += any as usize;
        }
    }
    eprintln!(
        "{cases} FASTA-like round trips, {packed_archives} with packed groups, \
         {raw_outside} raw literal slices with letters outside their group's alphabet"
    );
}

/// Edge inputs: a single repeated letter (alphabet size 1, width 4: every symbol 0, the
/// table one symbol at 4096), two letters alternating, every block a different letter,
/// inputs a few bytes long, literal counts 1-3 past a multiple of the width.
#[test]
fn encoder_edge_inputs() {
    let mut r = Rng(0xC6_7000 + env("ATTACK_SEED", 0));
    let mut inputs: Vec<Vec<u8>> = vec![
        vec![b'A'; 100_000],
        b"AC".repeat(30_000),
        (0..70_000u32)
            .map(|i| b"ACGT"[(i / 4096 % 4) as usize])
            .collect(),
        (0..70_000u32).map(|i| (i / 4096) as u8).collect(),
    ];
    for n in 1..=40usize {
        inputs.push(small_alphabet_data(&mut r, n, b"ACGTN"));
    }
    for n in [4095usize, 4096, 4097, 8191, 12289] {
        inputs.push(small_alphabet_data(&mut r, n, b"AC"));
        let mut d: Vec<u8> = (0..n)
            .map(|_| b"ACGTacgtNn\n"[r.below(11) as usize])
            .collect();
        d[0] = b'>';
        inputs.push(d);
    }
    for (i, data) in inputs.iter().enumerate() {
        for level in [1u32, 5, 9] {
            let opts = Settings {
                block_size: 4096,
                level,
                context_tables: i % 2 == 0,
                ..Default::default()
            };
            roundtrip(
                &mut r,
                data,
                &opts,
                &format!("edge input {i} ({} bytes)", data.len()),
            );
        }
    }
}

/// Real genomes (corpora/dna): the encoder's archives at levels 1, 5
/// and 9, block sizes 4-64 KiB, context tables on and off, decode right through every path,
/// then survive relabelled alphabets, decoded lengths and lanes of packed slices changed,
/// and flips in the data (never wrong, fast == reference).
#[test]
#[ignore = "needs the corpora (ATTACK_CORPORA, default corpora/): cargo test --release --test corrupt -- --ignored real_"]
fn real_dna() {
    let dir = std::env::var("ATTACK_CORPORA").unwrap_or_else(|_| "corpora".into());
    let kib = env("ATTACK_KIB", 192) as usize;
    let damage = env("ATTACK_DAMAGE", 24) as usize / 2;
    let mut r = Rng(0xC6_8000 + env("ATTACK_SEED", 0));
    let files = [
        "dna/E_coli_K12_MG1655_NC_000913.2.fa",
        "dna/TAIR10_chr1.fna",
        "dna/dm3_chr2R.fa",
    ];
    let mut stats = [0usize; 3];
    let mut packed_archives = 0;
    for (i, f) in files.iter().enumerate() {
        let Ok(all) = std::fs::read(format!("{dir}/{f}")) else {
            panic!("{dir}/{f} not found: this test reads the corpora");
        };
        let combos: Vec<(u32, u32, bool)> = [1u32, 5, 9]
            .into_iter()
            .flat_map(|l| [4096u32, 16384, 65536].map(move |bs| (l, bs)))
            .flat_map(|(l, bs)| [true, false].map(move |c| (l, bs, c)))
            .collect();
        for (j, &(level, bs, ctx)) in combos.iter().enumerate() {
            // the file's start (its FASTA header) now and then, else a stretch from inside
            let start = if j % 7 == 0 || all.len() <= kib << 10 {
                0
            } else {
                r.below((all.len() - (kib << 10)) as u64) as usize
            };
            let data = &all[start..(start + (kib << 10)).min(all.len())];
            let opts = Settings {
                block_size: bs,
                level,
                min_match: if level == 9 { 4 } else { r.pick(&[5u32, 6]) },
                context_tables: ctx,
                window: if (i + j) % 5 == 0 { Some(bs * 4) } else { None },
                ..Default::default()
            };
            let what = format!("{f} at {start}, {opts:?}");
            let packed = roundtrip(&mut r, data, &opts, &what);
            let a = Archive::parse(&packed).unwrap();
            let p = parts(&packed);
            let recs = records(&p.tables);
            let k3: Vec<&Rec> = recs.iter().filter(|x| x.kind == 3).collect();
            packed_archives += !k3.is_empty() as usize;
            eprintln!(
                "{what}: version {}, {} bytes, {} kind-3 records (alphabet {:?})",
                a.header().version,
                packed.len(),
                k3.len(),
                k3.first()
                    .map(|x| String::from_utf8_lossy(&p.tables[x.alpha.clone()]).into_owned())
            );
            stats[0] += 1;
            let gb = a.header().group_blocks as usize;
            let packed_blocks: Vec<usize> = (0..p.entries.len())
                .filter(|&b| {
                    a.tables()[b / gb][0]
                        .as_ref()
                        .is_some_and(|t| t.is_packed())
                        && p.entries[b].lanes[0] != 0
                })
                .collect();
            for it in 0..damage {
                let mut t = p.tables.clone();
                let mut e = p.entries.clone();
                let mut d = p.data.clone();
                match it % 4 {
                    0 if !k3.is_empty() => {
                        // two letters of the alphabet exchanged for others, still increasing
                        let rec = r.pick(&k3);
                        let al = random_alphabet(&mut r, rec.alpha.len());
                        t[rec.alpha.clone()].copy_from_slice(&al);
                    }
                    1 if !packed_blocks.is_empty() => {
                        let b = r.pick(&packed_blocks);
                        let dl = &mut e[b].decoded_len[0];
                        *dl = dl.saturating_add_signed(r.range(0, 6) as i32 - 3);
                    }
                    2 if !packed_blocks.is_empty() => {
                        let b = r.pick(&packed_blocks);
                        e[b].lanes[0] = r.range(1, 32) as u8;
                    }
                    _ => {
                        let i = r.below(d.len() as u64) as usize;
                        d[i] ^= 1 << r.below(8);
                    }
                }
                let bad = rebuilt(&p, &e, &t, &d);
                let (_, ok) =
                    never_wrong_grouped(&bad, data, &mut r, &format!("{what}: damage {it}"));
                stats[1 + ok as usize] += 1;
            }
        }
    }
    eprintln!(
        "real DNA: {} archives ({packed_archives} with packed groups); damaged: {} failed, {} decoded",
        stats[0], stats[1], stats[2]
    );
}

/// Many one-block groups, each with a kind-3 record: parse and decode; the decoder's
/// failure on a relabelled alphabet is a block error (never Ok).
#[test]
fn many_packed_groups() {
    let mut r = Rng(0xC6_9000 + env("ATTACK_SEED", 0));
    let groups = env("ATTACK_GROUPS", 200) as usize;
    let (data, b) = packed_groups_archive(&mut r, groups * 4096, 1, 100, true);
    let a = Archive::parse(&b).unwrap();
    assert_eq!(a.header().group_count as usize, groups);
    assert_eq!(aceapex::decode::decompress(&a).unwrap(), data);
    // the last group's alphabet relabelled
    let p = parts(&b);
    let recs = records(&p.tables);
    let rec = recs.iter().rev().find(|x| x.kind == 3).unwrap();
    let mut t = p.tables.clone();
    for x in t[rec.alpha.clone()].iter_mut() {
        *x = x.wrapping_add(1);
    }
    if t[rec.alpha.clone()].windows(2).all(|w| w[0] < w[1]) {
        let bad = rebuilt(&p, &p.entries, &t, &p.data);
        let a = Archive::parse(&bad).unwrap();
        match aceapex::decode::decompress(&a) {
            Err(DecodeError::Block { .. }) | Err(DecodeError::ContentChecksum) => {}
            other => panic!("relabelled alphabet: {:?}", other.map(|v| v.len())),
        }
    }
}
