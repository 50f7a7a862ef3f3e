//! The match base (4..=6, header byte 85, FORMAT.md §2): the CPU fast match layer
//! (host/cpu/lz.rs) against the reference walker (device/src/lz.rs) at every base, hand-made
//! archives, encoder archives relabelled to other bases and to pre-release versions, and
//! resealed random mutation of real archives. Nothing may panic, and nothing may decode Ok
//! to bytes other than the original. Env: ATTACK_SEED, ATTACK_ITERS, ATTACK_FUZZ_ITERS.

use crate::common::{build, put_u16, put_u32, Rng};
use aceapex::device::format::*;
use aceapex::device::lz::BlockFrame;
use aceapex::format::Archive;
use aceapex::{FormatError, Settings};
use std::panic::{catch_unwind, AssertUnwindSafe};

const H_VERSION: usize = 4;
const H_MIN_MATCH: usize = 32;
const H_BASE: usize = 85;

const HEADER_SIZE: usize = 96;

use crate::common::attack::*;

// ---------------------------------------------------------------------------------------
// direct: fast vs reference, streams generated at one base and decoded at another
// ---------------------------------------------------------------------------------------

#[test]
fn direct_valid_short_blocks() {
    let n = env("ATTACK_ITERS", 40_000) as usize;
    direct(
        0xB4_0001 + env("ATTACK_SEED", 0),
        n,
        60,
        0,
        &[4, 5, 6],
        false,
    );
}

#[test]
fn direct_valid_long_blocks() {
    let n = env("ATTACK_ITERS", 40_000) as usize / 10;
    direct(
        0xB4_0002 + env("ATTACK_SEED", 0),
        n,
        3000,
        0,
        &[4, 5, 6],
        false,
    );
}

#[test]
fn direct_mutated_blocks() {
    let n = env("ATTACK_ITERS", 40_000) as usize;
    direct(
        0xB4_0003 + env("ATTACK_SEED", 0),
        n,
        400,
        100,
        &[4, 5, 6],
        false,
    );
}

#[test]
fn direct_wrong_base() {
    let n = env("ATTACK_ITERS", 40_000) as usize;
    direct(
        0xB4_0004 + env("ATTACK_SEED", 0),
        n,
        400,
        0,
        &[4, 5, 6],
        true,
    );
}

// ---------------------------------------------------------------------------------------
// archives: version conversion and relabelling
// ---------------------------------------------------------------------------------------

/// Re-encodes any parsable archive with header version `version`, header byte 85 = `byte85`
/// and minimum match `min_match`, entries packed in their tightest widths; meta checksum
/// resealed.
fn relabel(a: &[u8], version: u16, byte85: u8, min_match: u32) -> Vec<u8> {
    let arc = Archive::parse(a).expect("source archive parses");
    let rest = HEADER_SIZE + arc.block_count() * arc.entry_size();
    let mut out = a[..HEADER_SIZE].to_vec();
    put_u16(&mut out, H_VERSION, version);
    put_u32(&mut out, H_MIN_MATCH, min_match);
    let mut table = Vec::new();
    let mut bits = aceapex::format::entry::bits_for(arc.entries());
    bits.match_base = byte85;
    out[72..88].copy_from_slice(bytemuck::bytes_of(&bits));
    aceapex::format::entry::pack(arc.entries(), &bits, &mut table);
    let entry_size = aceapex::format::entry::packed_size(&bits);
    out.extend_from_slice(&table);
    out.extend_from_slice(&a[rest..]);
    crate::common::reseal_entries(&mut out, entry_size);
    out
}

fn set_base(a: &[u8], base: u32) -> Vec<u8> {
    relabel(a, 1, base as u8, base)
}

/// [`crate::common::attack::never_wrong`]; false also when the archive does not parse.
fn never_wrong(packed: &[u8], data: &[u8], r: &mut Rng, what: &str) -> bool {
    crate::common::attack::never_wrong(packed, data, r, what).unwrap_or(false)
}

/// Generated archives ([`gen_archive`] at base `b`), labelled with base `b`: decode
/// ([`check_whole`]); then labelled with each other base: never wrong, paths agree.
fn archive_case(r: &mut Rng, bs: usize, nb: usize, last: usize, cross: bool, mutate_blocks: usize) {
    let base = r.range(4, 6) as u32;
    let (plain, out, all_ok) = gen_archive(r, bs, nb, last, cross, mutate_blocks, base);
    let packed = set_base(&plain, base);
    let what = format!("bs {bs}, cross {cross}, base {base}");
    compare_archive(&packed, &what);
    assert_eq!(Archive::parse(&packed).unwrap().header().match_base(), base);
    check_whole(r, &packed, &out, all_ok, &what);
    for other in 4..=6u32 {
        if other != base {
            let b = set_base(&plain, other);
            never_wrong(&b, &out, r, &format!("{what} relabelled {other}"));
        }
    }
}

#[test]
fn archives_small_blocks() {
    small_archive_rounds(0xB4_1000 + env("ATTACK_SEED", 0), archive_case);
}

#[test]
fn archives_4mib_blocks() {
    let mut r = Rng(0xB4_2000 + env("ATTACK_SEED", 0));
    for round in 0..env("ATTACK_BIG_ROUNDS", 2) {
        let bs = 4 << 20;
        let rr = r.range(1, bs as u64) as usize;
        let last = r.pick(&[bs, rr]);
        archive_case(
            &mut r,
            bs,
            1 + (round as usize % 2),
            last,
            round % 2 == 1,
            0,
        );
    }
}

// ---------------------------------------------------------------------------------------
// encoder archives
// ---------------------------------------------------------------------------------------

fn encoder_archive(r: &mut Rng, round: usize) -> (Vec<u8>, Vec<u8>, Settings) {
    let bs = [4096u32, 16384, 65536][round % 3];
    let cross = round / 3 % 2 == 1;
    let n = r.range(20_000, 150_000) as usize;
    let data = text(r, n);
    let opts = Settings {
        block_size: bs,
        window: if cross { Some(bs * 4) } else { None },
        level: [1, 5, 8, 9][round % 4],
        min_match: [4, 5, 4, 5, 7][round % 5],
        ..Default::default()
    };
    let packed = aceapex::compress_settings(&data, &opts, &|_| {}).unwrap();
    (data, packed, opts)
}

/// Encoder archives relabelled to every (version, byte 85, minimum match) combination: only
/// format 1 with a base of 4 to 6 and a minimum match at least the base parses; the
/// pre-release versions are refused by name.
#[test]
fn encoder_relabelled() {
    let mut r = Rng(0xB4_3000 + env("ATTACK_SEED", 0));
    let mut stats = [0usize; 3];
    for round in 0..env("ATTACK_ENC_ROUNDS", 10) as usize {
        let (data, packed, opts) = encoder_archive(&mut r, round);
        let a = Archive::parse(&packed).unwrap();
        let base = opts.min_match.min(6);
        assert_eq!(a.header().match_base(), base);
        assert_eq!(aceapex::decode::decompress(&a).unwrap(), data);
        for version in [1u16, 3, 4] {
            for byte85 in [0u8, 3, 4, 5, 6, 7, 0x80, 0xFF] {
                for mm in [3u32, 4, 5, 6, opts.min_match, u32::MAX] {
                    let b = relabel(&packed, version, byte85, mm);
                    let what = format!("round {round}: v{version} byte85 {byte85} mm {mm}");
                    let parsed = Archive::parse(&b);
                    let claimed = byte85 as u32;
                    let expect_ok = version == 1 && (4..=6).contains(&byte85) && mm >= claimed;
                    match &parsed {
                        Ok(_) => assert!(expect_ok, "{what}: parsed"),
                        Err(FormatError::PreReleaseVersion { got }) => {
                            assert_eq!(*got, version, "{what}");
                            assert_ne!(version, 1, "{what}");
                            stats[0] += 1;
                            continue;
                        }
                        Err(FormatError::Header { field, .. }) => {
                            assert!(!expect_ok, "{what}: refused {field}");
                            stats[0] += 1;
                            continue;
                        }
                        Err(e) => panic!("{what}: {e:?}"),
                    }
                    let ok = never_wrong(&b, &data, &mut r, &what);
                    if claimed == base {
                        assert!(ok, "{what}: same base but fails");
                    }
                    stats[1 + ok as usize] += 1;
                }
            }
        }
    }
    eprintln!(
        "refused {}, decode failed {}, decoded {}",
        stats[0], stats[1], stats[2]
    );
}

/// Resealed random byte mutations of encoder archives: no panic, never wrong.
#[test]
fn encoder_mutation_fuzz() {
    let mut r = Rng(0xB4_4000 + env("ATTACK_SEED", 0));
    let iters = env("ATTACK_FUZZ_ITERS", 3000) as usize;
    let mut stats = [0usize; 3];
    let mut archives = Vec::new();
    for round in 0..6 {
        archives.push(encoder_archive(&mut r, round));
    }
    for it in 0..iters {
        let (data, packed, _) = &archives[it % archives.len()];
        let a = Archive::parse(packed).unwrap();
        let bt_end = HEADER_SIZE + a.block_count() * a.entry_size();
        let tables_end = bt_end + a.header().table_bytes as usize;
        let mut b = packed.clone();
        for _ in 0..r.range(1, 4) {
            let at = match r.below(5) {
                0 => r.below(88) as usize,
                1 => r.range(72, 87) as usize,
                2 => r.range(HEADER_SIZE as u64, bt_end as u64 - 1) as usize,
                3 if tables_end > bt_end => r.range(bt_end as u64, tables_end as u64 - 1) as usize,
                _ => r.range(tables_end as u64, b.len() as u64 - 1) as usize,
            };
            match r.below(4) {
                0 => b[at] ^= 1 << r.below(8),
                1 => b[at] = r.next() as u8,
                2 => b[at] = b[at].wrapping_add(1),
                _ => b[at] = b[at].wrapping_sub(1),
            }
        }
        if r.below(4) == 0 {
            b[H_BASE] = r.range(3, 7) as u8;
        }
        let bits: EntryBits = bytemuck::pod_read_unaligned(&b[72..88]);
        let es = aceapex::format::entry::packed_size(&bits);
        crate::common::reseal_entries(&mut b, es);
        let what = format!("fuzz iteration {it}");
        let res = catch_unwind(AssertUnwindSafe(|| {
            never_wrong(&b, data, &mut Rng(it as u64), &what)
        }));
        match res {
            Ok(ok) => stats[ok as usize] += 1,
            Err(_) => {
                let path = std::env::temp_dir().join(format!("match_base_fail_{it}.acx"));
                std::fs::write(&path, &b).unwrap();
                stats[2] += 1;
                eprintln!("PANIC at {what}: saved {}", path.display());
            }
        }
    }
    eprintln!(
        "fuzz: {} failed cleanly, {} decoded, {} panics",
        stats[0], stats[1], stats[2]
    );
    assert_eq!(stats[2], 0, "panics");
}

/// Encoder archives re-stored raw at their base, match-layer streams damaged: fast ==
/// reference, never wrong.
#[test]
fn encoder_streams_damaged() {
    let mut r = Rng(0xB4_5000 + env("ATTACK_SEED", 0));
    for round in 0..env("ATTACK_ENC_ROUNDS", 10) as usize {
        let (data, packed, opts) = encoder_archive(&mut r, round);
        let base = opts.min_match.min(6);
        let (h, blocks) = super::restore_raw(&packed);
        let raw = set_base(&build(h.clone(), &data, &blocks, None), base);
        assert_eq!(
            aceapex::decode::decompress(&Archive::parse(&raw).unwrap()).unwrap(),
            data
        );
        for _ in 0..40 {
            let mut bl = blocks.clone();
            for _ in 0..r.range(1, 3) {
                let b = r.below(bl.len() as u64) as usize;
                mutate(&mut r, &mut bl[b].slices);
            }
            let bad = set_base(&build(h.clone(), &data, &bl, None), base);
            never_wrong(
                &bad,
                &data,
                &mut r,
                &format!("round {round} damaged streams"),
            );
        }
    }
}

/// Out-of-contract frames through the public block API (`cpu::lz::decode_block` with a
/// `BlockFrame::match_base` no validated archive has, up to one whose length codes overflow
/// 32 bits): the fast path still agrees with the reference, status and bytes (a batch path must
/// not clamp a base above 6, nor sum `base + code` unchecked).
#[test]
fn direct_invalid_bases() {
    let mut r = Rng(0xB4_7000);
    for base in [0u32, 1, 2, 3, 7, 8, 64, 255, u32::MAX - 2] {
        let mut bad = 0;
        for _ in 0..2000 {
            let (s, pos) = gen_block(&mut r, 0, 200, None, true, base.clamp(1, 300));
            let frame = BlockFrame {
                dst_start: 0,
                dst_end: pos,
                src_floor: 0,
                window: u32::MAX,
                match_base: base,
            };
            if catch_unwind(AssertUnwindSafe(|| {
                check_direct(&mut Rng(1), &s, frame, pos + 32)
            }))
            .is_err()
            {
                bad += 1;
            }
        }
        assert_eq!(bad, 0, "base {base}: {bad}/2000 disagree");
    }
}
