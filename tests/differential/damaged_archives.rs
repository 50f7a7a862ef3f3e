//! Encoder archives (of the golden originals and of synthetic far repeats, with their entries
//! repacked at fixed offsets by `common::with_fixed_entries`) damaged in their five slices
//! (with damage aimed at the split distances: offsets = first varint bytes, offset tails = the
//! rest, FORMAT.md §4.2), their block entries and their table records, then decoded block by
//! block by the fast CPU decoder and the reference decoder: the parser rejects what it must,
//! the two decoders agree (status, and bytes when Ok), and nothing decodes Ok to bytes other
//! than the original. ATTACK_CASES (default 1500) and ATTACK_SEED scale and vary the run.

use aceapex::compress_settings;
use aceapex::decode::streams as cpu;
use aceapex::decode::{decode_block_at, decode_block_reference, decode_streams};
use aceapex::decode::{decompress, extract};
use aceapex::device::status::Status;
use aceapex::encode::entropy::{count, encode_slice, FreqTable};
use aceapex::encode::lz::{join_offsets, split_offsets};
use aceapex::format::Archive;
use aceapex::{DecodeError, Settings};
use std::collections::BTreeMap;
use xxhash_rust::xxh3::xxh3_64;

use crate::common::{get_u32, get_u64, Rng, ENTRY, HEADER, STREAMS as NS};

/// A block: `entry` in the [`ENTRY`] layout, but position-free: its checksum without the
/// position mix and, at offset 57, its lowest source block itself (the build converts both
/// for the block's index, FORMAT.md §3.1, §6).
#[derive(Clone)]
struct Blk {
    entry: [u8; ENTRY],
    slices: [Vec<u8>; NS],
    /// reference-decoded streams (for LZ-level damage)
    decoded: [Vec<u8>; NS],
}
impl Blk {
    fn decoded_len(&self, k: usize) -> u32 {
        get_u32(&self.entry, 28 + 4 * k)
    }
    fn set_decoded_len(&mut self, k: usize, v: u32) {
        self.entry[28 + 4 * k..32 + 4 * k].copy_from_slice(&v.to_le_bytes());
    }
    fn lanes(&self, k: usize) -> u8 {
        self.entry[48 + k]
    }
    fn set_lanes(&mut self, k: usize, v: u8) {
        self.entry[48 + k] = v;
    }
    fn set_lowest(&mut self, v: u32) {
        self.entry[57..61].copy_from_slice(&v.to_le_bytes());
    }
    fn lowest(&self) -> u32 {
        get_u32(&self.entry, 57)
    }
}

struct Source {
    name: String,
    header: [u8; HEADER],
    orig: Vec<u8>,
    bs: usize,
    group_blocks: usize,
    cross: bool,
    /// per group: the four table records (serialized) and the parsed tables
    tables: Vec<(Vec<u8>, [Option<FreqTable>; NS])>,
    /// per group: the five table records, one by one
    recs: Vec<[Vec<u8>; NS]>,
    blocks: Vec<Blk>,
    /// Distance varint byte counts of the undamaged blocks -> how many.
    varint_lens: BTreeMap<usize, usize>,
}

fn load(name: &str, data: Vec<u8>, opts: &Settings) -> Source {
    // fixed-offset entries, which the damage rebuilds field by field
    let packed =
        crate::common::with_fixed_entries(&compress_settings(&data, opts, &|_| {}).unwrap());
    let a = Archive::parse(&packed).unwrap();
    assert!(
        matches!(decompress(&a), Ok(ref v) if *v == data),
        "{name}: the undamaged archive decodes"
    );
    let bc = a.block_count();
    let gb = a.header().group_blocks as usize;
    let tb = get_u64(&packed, 48) as usize;
    let bt_end = HEADER + bc * ENTRY;
    let tsec = &packed[bt_end..bt_end + tb];
    let mut pos = 0;
    let mut tables = Vec::new();
    let mut recs = Vec::new();
    for _ in 0..a.header().group_count {
        let start = pos;
        let mut rec: [Vec<u8>; NS] = Default::default();
        let t: [Option<FreqTable>; NS] = std::array::from_fn(|k| {
            let p0 = pos;
            let t = FreqTable::deserialize(tsec, &mut pos).unwrap();
            rec[k] = tsec[p0..pos].to_vec();
            t
        });
        tables.push((tsec[start..pos].to_vec(), t));
        recs.push(rec);
    }
    let mut bufs: [Vec<u8>; NS] = Default::default();
    let mut blocks = Vec::new();
    for b in 0..bc {
        decode_streams(&a, b, &mut bufs).unwrap();
        let mut entry: [u8; ENTRY] = packed[HEADER + b * ENTRY..HEADER + (b + 1) * ENTRY]
            .try_into()
            .unwrap();
        let sum = get_u64(&entry, 0) ^ crate::common::position_mix(b as u32);
        entry[..8].copy_from_slice(&sum.to_le_bytes());
        let lowest = b as u32 - get_u32(&entry, 57);
        entry[57..61].copy_from_slice(&lowest.to_le_bytes());
        blocks.push(Blk {
            entry,
            slices: a.slices(b).map(|s| s.to_vec()),
            decoded: bufs.clone(),
        });
    }
    let mut varint_lens: BTreeMap<usize, usize> = BTreeMap::new();
    for b in &blocks {
        for l in distance_lens(&b.decoded[2], &b.decoded[4]) {
            *varint_lens.entry(l).or_default() += 1;
        }
    }
    Source {
        name: name.into(),
        header: packed[..HEADER].try_into().unwrap(),
        orig: data,
        bs: a.header().block_size as usize,
        group_blocks: gb,
        cross: a.cross_block(),
        tables,
        recs,
        blocks,
        varint_lens,
    }
}

/// The byte counts of the distance varints of a valid block (heads + their tails).
fn distance_lens(heads: &[u8], tails: &[u8]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut tp = 0;
    for &h in heads {
        let mut n = 1;
        if h & 0x80 != 0 {
            while tp < tails.len() {
                n += 1;
                tp += 1;
                if tails[tp - 1] & 0x80 == 0 {
                    break;
                }
            }
        }
        out.push(n);
    }
    out
}

/// A sub-archive: blocks `first..first + n` of one source (lowest source blocks rebased).
struct Sub<'s> {
    src: &'s Source,
    window: Option<u32>,
    first: usize,
    blocks: Vec<Blk>,
    /// replaces the table section (per-group records of the source otherwise)
    tables_override: Option<Vec<u8>>,
    /// bytes of the header set after assembly (before the checksum)
    header_patch: Vec<(usize, u8)>,
    /// Archive::parse must reject the result
    expect_reject: bool,
}

impl<'s> Sub<'s> {
    fn new(src: &'s Source, rng: &mut Rng) -> Sub<'s> {
        let bc = src.blocks.len();
        let (first, n) = if src.cross {
            // from block 0 (sources may reach back anywhere before)
            // (more blocks for small blocks: a 64 KiB window spans 16 blocks of 4 KiB)
            let most = if src.bs <= 4096 {
                24
            } else if src.blocks.len() <= 12 {
                12
            } else {
                8
            };
            (0, 1 + rng.below(most.min(bc as u64)) as usize)
        } else {
            // within one table group (blocks keep their tables), mostly 4-8 blocks
            let g = rng.below(bc.div_ceil(src.group_blocks) as u64) as usize;
            let gstart = g * src.group_blocks;
            let gend = (gstart + src.group_blocks).min(bc);
            let n = (1 + rng.below(8)).min((gend - gstart) as u64) as usize;
            let n = if rng.below(3) > 0 {
                n.max(4.min(gend - gstart))
            } else {
                n
            };
            let first = gstart + rng.below((gend - gstart - n + 1) as u64) as usize;
            (first, n)
        };
        let mut blocks: Vec<Blk> = src.blocks[first..first + n].to_vec();
        for b in blocks.iter_mut() {
            let l = b.lowest() - first as u32;
            b.set_lowest(l);
        }
        Sub {
            src,
            window: None,
            first,
            blocks,
            tables_override: None,
            header_patch: Vec::new(),
            expect_reject: false,
        }
    }

    fn orig(&self) -> &[u8] {
        let s = self.first * self.src.bs;
        let e = ((self.first + self.blocks.len()) * self.src.bs).min(self.src.orig.len());
        &self.src.orig[s..e]
    }

    fn group(&self) -> usize {
        self.first / self.src.group_blocks
    }

    fn table(&self, k: usize) -> Option<&FreqTable> {
        self.src.tables[self.group()].1[k].as_ref()
    }

    fn assemble(&self) -> Vec<u8> {
        let orig = self.orig();
        let mut h = self.src.header;
        if let Some(w) = self.window {
            h[36..40].copy_from_slice(&w.to_le_bytes());
        }
        let n = self.blocks.len();
        let gb = self.src.group_blocks;
        h[8..16].copy_from_slice(&(orig.len() as u64).to_le_bytes());
        h[20..24].copy_from_slice(&(n as u32).to_le_bytes());
        let groups = n.div_ceil(gb);
        h[28..32].copy_from_slice(&(groups as u32).to_le_bytes());
        let mut tables = Vec::new();
        for g in 0..groups {
            tables.extend_from_slice(&self.src.tables[self.group() + g].0);
        }
        if let Some(t) = &self.tables_override {
            tables = t.clone();
        }
        h[72..88].copy_from_slice(&crate::common::FIXED_ENTRY_BITS);
        h[85] = self.src.header[85];
        for &(i, v) in &self.header_patch {
            h[i] = v;
        }
        let mut bt = Vec::new();
        let mut data = Vec::new();
        for (j, b) in self.blocks.iter().enumerate() {
            let mut e = b.entry;
            let sum = get_u64(&e, 0) ^ crate::common::position_mix(j as u32);
            e[..8].copy_from_slice(&sum.to_le_bytes());
            let dist = (j as u32).wrapping_sub(b.lowest());
            e[57..61].copy_from_slice(&dist.to_le_bytes());
            for k in 0..NS {
                e[8 + 4 * k..12 + 4 * k].copy_from_slice(&(b.slices[k].len() as u32).to_le_bytes());
                data.extend_from_slice(&b.slices[k]);
            }
            bt.extend_from_slice(&e);
        }
        h[48..56].copy_from_slice(&(tables.len() as u64).to_le_bytes());
        h[56..64].copy_from_slice(&(data.len() as u64).to_le_bytes());
        h[64..72].copy_from_slice(&xxh3_64(orig).to_le_bytes());
        let mut covered = h[..88].to_vec();
        covered.extend_from_slice(&bt);
        covered.extend_from_slice(&tables);
        h[88..96].copy_from_slice(&xxh3_64(&covered).to_le_bytes());
        let mut out = h.to_vec();
        out.extend_from_slice(&bt);
        out.extend_from_slice(&tables);
        out.extend_from_slice(&data);
        out
    }
}
mod damage;
use damage::{damage, KINDS};

// ---------------------------------------------------------------------------------------
// comparison
// ---------------------------------------------------------------------------------------

fn st(x: &Result<(), DecodeError>) -> Option<Status> {
    match x {
        Ok(()) => None,
        Err(DecodeError::Block { status, .. }) => Some(*status),
        Err(e) => panic!("unexpected {e:?}"),
    }
}

#[derive(Default)]
struct Tally {
    cases: usize,
    parse_rejected: usize,
    all_ok: usize,
    statuses: BTreeMap<String, usize>,
}

/// Returns Err(description) on a disagreement.
fn check(
    bytes: &[u8],
    orig: &[u8],
    expect_reject: bool,
    rng: &mut Rng,
    tally: &mut Tally,
) -> Result<(), String> {
    let a = match Archive::parse(bytes) {
        Ok(a) => a,
        Err(_) => {
            tally.parse_rejected += 1;
            return Ok(());
        }
    };
    if expect_reject {
        return Err("Archive::parse accepted an archive it must reject".into());
    }
    let n = orig.len();
    let bc = a.block_count();
    let bs = a.header().block_size as usize;
    // 1. block by block, fast vs reference
    let mut fast = vec![0x5Au8; n];
    let mut refr = vec![0x5Au8; n];
    let mut first: Option<(usize, Status)> = None;
    let mut block_st = vec![None; bc];
    #[allow(clippy::needless_range_loop)] // b also names the block to both decoders
    for b in 0..bc {
        let f = decode_block_at(&a, b, &mut fast, 0);
        let r = decode_block_reference(&a, b, &mut refr, 0);
        let rg = a.block_range(b);
        let rg = rg.start as usize..rg.end as usize;
        if st(&f) != st(&r) {
            return Err(format!(
                "block {b}: decode_block_at {:?} reference {:?}",
                st(&f),
                st(&r)
            ));
        }
        if f.is_ok() && fast[rg.clone()] != refr[rg.clone()] {
            return Err(format!("block {b}: both ok but bytes differ"));
        }
        if f.is_ok() && refr[rg.clone()] != orig[rg.clone()] {
            return Err(format!(
                "block {b}: reference ok but bytes differ from original"
            ));
        }
        // keep later (cross-block) sources identical
        let (rs, re) = (rg.start, rg.end);
        fast[rs..re].copy_from_slice(&refr[rs..re]);
        block_st[b] = st(&r);
        if first.is_none() {
            if let Some(s) = st(&r) {
                first = Some((b, s));
            }
        }
        *tally.statuses.entry(format!("{:?}", st(&r))).or_default() += 1;
    }
    // 2. stream level: the group path and the single-block path vs the reference streams
    {
        let mut one = cpu::Scratch::default();
        let g = cpu::group_blocks(bs);
        let mut scratch: Vec<cpu::Scratch> = (0..g).map(|_| Default::default()).collect();
        let mut bufs: [Vec<u8>; NS] = Default::default();
        let mut first_b = 0;
        while first_b < bc {
            let m = g.min(bc - first_b);
            let stat = cpu::decode_streams_group(&a, first_b, &mut scratch[..m]);
            for j in 0..m {
                let b = first_b + j;
                let r = decode_streams(&a, b, &mut bufs);
                if stat[j] != r {
                    return Err(format!(
                        "block {b}: decode_streams_group {:?} reference streams {r:?}",
                        stat[j]
                    ));
                }
                match cpu::decode_streams(&a, b, &mut one) {
                    Ok(p) => {
                        if r.is_err() {
                            return Err(format!(
                                "block {b}: cpu::decode_streams ok, reference {r:?}"
                            ));
                        }
                        let got = [p.literals, p.lengths, p.offsets, p.commands, p.offset_tails];
                        for k in 0..NS {
                            if got[k].data() != &bufs[k][..] {
                                return Err(format!("block {b} stream {k}: single bytes differ"));
                            }
                        }
                    }
                    Err(e) => {
                        if r != Err(e) {
                            return Err(format!(
                                "block {b}: cpu::decode_streams {e:?}, reference {r:?}"
                            ));
                        }
                    }
                }
                if r.is_ok() {
                    let p = cpu::padded_streams(&a, b, &scratch[j]);
                    let got = [p.literals, p.lengths, p.offsets, p.commands, p.offset_tails];
                    for k in 0..NS {
                        if got[k].data() != &bufs[k][..] {
                            return Err(format!("block {b} stream {k}: group bytes differ"));
                        }
                    }
                }
            }
            first_b += m;
        }
    }
    // 3. decompress and extract on one thread: the first failing block, in order
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let d = pool.install(|| decompress(&a));
    match (&first, &d) {
        (None, Ok(v)) => {
            if v != orig {
                return Err("decompress ok but wrong bytes".into());
            }
        }
        (Some((b, s)), Err(DecodeError::Block { block, status, .. })) => {
            if *block as usize != *b || status != s {
                return Err(format!(
                    "decompress: block {block} {status:?}, reference first failure block {b} {s:?}"
                ));
            }
        }
        _ => {
            return Err(format!(
                "decompress {d:?} vs reference first failure {first:?}"
            ))
        }
    }
    // the global (multi-thread) pool: any failing block may be reported
    let d2 = decompress(&a);
    match (&first, &d2) {
        (None, Ok(v)) if v == orig => {}
        (Some(_), Err(DecodeError::Block { block, status, .. }))
            if block_st.get(*block as usize).copied().flatten() == Some(*status) => {}
        _ => {
            return Err(format!(
                "parallel decompress {d2:?} vs reference first failure {first:?}"
            ))
        }
    }
    if n > 0 {
        let off = rng.below(n as u64);
        let len = 1 + rng.below((n as u64 - off).min(3 * bs as u64));
        let x = pool.install(|| extract(&a, off, len));
        let lo = off as usize / bs;
        let hi = (off + len - 1) as usize / bs;
        // the blocks extract needs: lo..=hi plus their sources
        let mut lowest = lo;
        for e in &a.entries()[lo..=hi] {
            lowest = lowest.min(e.lowest_source_block as usize);
        }
        let lowest = if a.cross_block() {
            let mut l = lo;
            let mut b = hi;
            loop {
                l = l.min(a.entries()[b].lowest_source_block as usize);
                if b == 0 || b <= l {
                    break;
                }
                b -= 1;
            }
            l
        } else {
            lowest
        };
        let exp = (lowest..=hi).find_map(|b| block_st[b].map(|s| (b, s)));
        match (&exp, &x) {
            (None, Ok(v)) => {
                if v[..] != orig[off as usize..(off + len) as usize] {
                    return Err("extract ok but wrong bytes".into());
                }
            }
            (Some((b, s)), Err(DecodeError::Block { block, status, .. })) => {
                if *block as usize != *b || status != s {
                    return Err(format!(
                        "extract {off}+{len}: block {block} {status:?}, expected block {b} {s:?}"
                    ));
                }
            }
            _ => return Err(format!("extract {off}+{len}: {x:?} vs expected {exp:?}")),
        }
    }
    if first.is_none() {
        tally.all_ok += 1;
    }
    Ok(())
}

fn sources() -> Vec<Source> {
    let read = |p: &str| {
        std::fs::read(format!("{}/tests/golden/{p}", env!("CARGO_MANIFEST_DIR"))).unwrap()
    };
    // one table per stream (FORMAT.md §5.2 kind 1), the records the table damage rebuilds
    let def = Settings {
        context_tables: false,
        packed_literals: false,
        ..Default::default()
    };
    let small = Settings {
        block_size: 4096,
        ..def.clone()
    };
    let cross = Settings {
        window: Some(64 << 10),
        ..def.clone()
    };
    let cross4k = Settings {
        window: Some(64 << 10),
        block_size: 4096,
        ..def.clone()
    };
    let moby = read("moby_dick_64k.txt");
    let fq = read("records.csv");
    let dna = read("dna.fa");
    let far = {
        let mut r = Rng(0xFA4);
        let a: Vec<u8> = (0..48 << 10).map(|_| r.next() as u8).collect();
        let mut v = a.clone();
        v.extend(
            moby.iter()
                .cycle()
                .take((2 << 20) + 12345)
                .map(|&x| x ^ 0x20),
        );
        // a's 1 KiB pieces in another order: one far match each
        for i in 0..48 {
            let j = (i * 29) % 48;
            v.extend_from_slice(&a[j << 10..(j + 1) << 10]);
            v.extend(moby.iter().skip(i * 1000).take(300));
        }
        v
    };
    let blocks = |block_size: u32| Settings {
        block_size,
        ..def.clone()
    };
    vec![
        load("moby", moby.clone(), &def),
        load("records", fq.clone(), &def),
        load("dna", dna.clone(), &def),
        load("moby-4k", moby.clone(), &small),
        load("records-4k", fq.clone(), &small),
        load("moby-64k", moby.clone(), &blocks(64 << 10)),
        load("records-32k", fq.clone(), &blocks(32 << 10)),
        load("moby-cross", moby.clone(), &cross),
        load("dna-cross", dna.clone(), &cross),
        // `--window 64K` with 4 KiB blocks: distances up to 65536, so 2- and 3-byte varints
        // (1- and 2-byte tails) in valid data
        load("moby-cross-4k", moby.clone(), &cross4k),
        load("records-cross-4k", fq, &cross4k),
        load("dna-cross-4k", dna, &cross4k),
        // far repeats under a 4 MiB window: 4-byte distance varints (3-byte tails)
        load(
            "far-4m",
            far,
            &Settings {
                window: Some(4 << 20),
                block_size: 256 << 10,
                ..def.clone()
            },
        ),
    ]
}

#[test]
fn fast_and_reference_decoders_agree_on_damaged_archives() {
    let env = |k: &str, d: u64| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let cases = env("ATTACK_CASES", 1500) as usize;
    let seed = env("ATTACK_SEED", 0xA77AC4);
    let srcs = sources();
    // the sources hold distance varints of every length (1-4 bytes), so the damage aimed at
    // the split distances meets each tail length
    let mut lens: Vec<usize> = srcs
        .iter()
        .flat_map(|s| s.varint_lens.keys().copied())
        .collect();
    lens.sort_unstable();
    lens.dedup();
    assert_eq!(lens, [1, 2, 3, 4], "distance varint lengths in the sources");
    let mut per_kind: Vec<Tally> = (0..KINDS.len()).map(|_| Tally::default()).collect();
    let mut failures = Vec::new();
    for case in 0..cases {
        let mut rng = Rng(seed ^ (case as u64).wrapping_mul(0x2545_F491_4F6C_DD1D));
        let si = rng.below(srcs.len() as u64) as usize;
        let kind = rng.below(KINDS.len() as u64) as usize;
        let mut sub = Sub::new(&srcs[si], &mut rng);
        damage(&mut sub, &mut rng, kind);
        let bytes = sub.assemble();
        let orig = sub.orig().to_vec();
        let expect_reject = sub.expect_reject;
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            check(&bytes, &orig, expect_reject, &mut rng, &mut per_kind[kind])
        }));
        per_kind[kind].cases += 1;
        let msg = match r {
            Ok(Ok(())) => None,
            Ok(Err(m)) => Some(m),
            Err(p) => Some(format!(
                "PANIC {}",
                p.downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default()
            )),
        };
        if let Some(m) = msg {
            eprintln!(
                "FAIL case {case} src {} kind {}: {m}",
                srcs[si].name, KINDS[kind]
            );
            failures.push(case);
        }
    }
    assert!(failures.is_empty(), "failing cases {failures:?}");
    // every kind of damage ran, and the run saw both outcomes: archives the parser refuses
    // and damaged archives whose blocks still decode
    for (k, t) in per_kind.iter().enumerate() {
        assert!(t.cases > 0, "{} never ran", KINDS[k]);
    }
    let statuses: BTreeMap<&String, usize> =
        per_kind
            .iter()
            .flat_map(|t| t.statuses.iter())
            .fold(BTreeMap::new(), |mut m, (s, n)| {
                *m.entry(s).or_default() += n;
                m
            });
    assert!(
        per_kind.iter().any(|t| t.parse_rejected > 0),
        "{statuses:?}"
    );
    assert!(per_kind.iter().any(|t| t.all_ok > 0), "{statuses:?}");
    assert!(statuses.len() > 2, "block statuses seen: {statuses:?}");
}
