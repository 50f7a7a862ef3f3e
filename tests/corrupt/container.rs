//! The container (FORMAT.md §2, §3, §6, §7): header fields, block-table entries (fixed and
//! packed widths), table-section framing, the extension area, the metadata, block and content
//! checksums (block checksums bound to their position), truncation and byte flips anywhere;
//! and the reader's cost on hostile sizes (memory proportionate to the file, bounded parse
//! and rejection time, huge declared outputs refused before touching them).

use super::*;
use proptest::prelude::*;

/// Positive controls: the builder makes archives the decoder accepts, so the negative tests
/// below fail for the reason they name.
#[test]
fn hand_made_valid_archives_decode() {
    decodes_to(&Spec::one(ORIG20, good20()).build(), ORIG20);
    // a repeat after reset: slot 0 is distance 1 (history 1,2,4,8); 0x83 = slot 0, length 9
    decodes_to(
        &Spec::one(b"aaaaaaaaaa", Blk::raw(b"a", &[], &[], &[0xFF, 0x00, 0x83])).build(),
        b"aaaaaaaaaa",
    );
    // slot 3 is distance 8: 8 literals then a repeat of 6 from 8 back (0xB0 = slot 3, length 6)
    decodes_to(
        &Spec::one(
            b"ABCDEFGHABCDEF",
            Blk::raw(b"ABCDEFGH", &[], &[], &[0xFF, 0x07, 0xB0]),
        )
        .build(),
        b"ABCDEFGHABCDEF",
    );
    // escaped repeat length: 0x8F = slot 0, length 21 + varint(3) = 24
    decodes_to(
        &Spec::one(&[b'z'; 25], Blk::raw(b"z", &[3], &[], &[0xFF, 0x00, 0x8F])).build(),
        &[b'z'; 25],
    );
    // long match 0xFE: length 6 + varint(200) (2-byte varint), distance varint(1)
    let long = vec![b'q'; 207];
    decodes_to(
        &Spec::one(
            &long,
            Blk::raw(b"q", &[0xC8, 0x01], &[1], &[0xFF, 0x00, 0xFE]),
        )
        .build(),
        &long,
    );
    // a reset mid-block restores the history: new match distance 3, reset, repeat slot 1 = 2
    decodes_to(
        &Spec::one(
            b"xyzxyzxyzyzyzyzy",
            Blk::raw(b"xyz", &[], &[3], &[0xFF, 0x02, 0xC0, 0xFF, 0x91]),
        )
        .build(),
        b"xyzxyzxyzyzyzyzy",
    );
    // empty original: no blocks, no groups
    let empty = Spec {
        blocks: vec![],
        ..Spec::one(b"", good20())
    }
    .build();
    assert_eq!(empty.len(), HEADER);
    decodes_to(&empty, b"");
}

#[test]
fn wrong_block_checksum_is_detected() {
    let mut blk = good20();
    blk.checksum = Some(xxh3_64(ORIG20) ^ 1);
    assert_eq!(only_block_status(blk, ORIG20), Status::Checksum);
}

#[test]
fn flipped_data_byte_is_a_checksum_error() {
    // the literal 'X' stored as 'Z': the block decodes by the rules but to other bytes
    assert_eq!(
        only_block_status(Blk::raw(b"abcZY", &[], &[3], CMDS20), ORIG20),
        Status::Checksum
    );
    // and by flipping the byte in the finished archive (the data section is not under the
    // metadata checksum, so no reseal is needed)
    let mut a = Spec::one(ORIG20, good20()).build();
    let n = a.len();
    a[n - 7] ^= 0x20; // data = "abcXY" [] [3] [FF 02 C9 01]: 'X' -> 'x'
    assert_eq!(block_status(&a), (0, Status::Checksum));
}

#[test]
fn content_checksum_mismatch_is_detected() {
    let mut a = Spec::one(ORIG20, good20()).build();
    let c = get_u64(&a, H_CONTENT);
    put_u64(&mut a, H_CONTENT, c ^ 0x100);
    reseal(&mut a);
    let p = Archive::parse(&a).unwrap();
    assert_eq!(decompress(&p), Err(DecodeError::ContentChecksum));
    // a region that is the whole data is checked too (FORMAT.md §6); a shorter one checks
    // its blocks only, so it still succeeds with the right bytes
    assert_eq!(extract(&p, 0, 20), Err(DecodeError::ContentChecksum));
    assert_eq!(extract(&p, 0, 19).unwrap(), &ORIG20[..19]);
}

#[test]
fn region_outside_the_data_is_refused() {
    let a = Spec::one(ORIG20, good20()).build();
    let p = Archive::parse(&a).unwrap();
    assert_eq!(
        extract(&p, 21, 0),
        Err(DecodeError::Region {
            offset: 21,
            length: 0,
            size: 20
        })
    );
    assert_eq!(
        extract(&p, 10, 11),
        Err(DecodeError::Region {
            offset: 10,
            length: 11,
            size: 20
        })
    );
    assert_eq!(
        extract(&p, u64::MAX, 2),
        Err(DecodeError::Region {
            offset: u64::MAX,
            length: 2,
            size: 20
        })
    );
    assert_eq!(extract(&p, 20, 0).unwrap(), b"");
    assert_eq!(extract(&p, 5, 10).unwrap(), &ORIG20[5..15]);
}

#[test]
fn every_truncation_is_an_error() {
    let (_, packed) = small_archive();
    // a hand-made one too, which is short enough to test every length cheaply
    let hand = Spec::one(ORIG20, good20()).build();
    for a in [&packed, &hand] {
        let full = a.len() as u64;
        for len in 0..a.len() {
            let e = parse_err(&a[..len]);
            if len < HEADER {
                assert_eq!(
                    e,
                    FormatError::TooShort {
                        got: len as u64,
                        need: 96
                    }
                );
            } else {
                assert_eq!(
                    e,
                    FormatError::Size {
                        expected: full,
                        got: len as u64
                    },
                    "truncated to {len}"
                );
            }
        }
        // one byte too many is an extension area the meta checksum does not cover
        // (FORMAT.md §3.4, §6)
        let mut longer = a.clone();
        longer.push(0);
        assert_eq!(parse_err(&longer), FormatError::MetaChecksum);
    }
}

#[test]
fn bad_magic_is_refused() {
    let (_, mut a) = small_archive();
    a[0..4].copy_from_slice(b"ACPY");
    reseal(&mut a);
    assert_eq!(parse_err(&a), FormatError::BadMagic { got: *b"ACPY" });
    a[0..4].copy_from_slice(b"\0\0\0\0");
    assert_eq!(parse_err(&a), FormatError::BadMagic { got: [0; 4] });
    // a short file of another kind is not called a truncated archive: the magic comes first
    assert_eq!(
        parse_err(b"hello\n"),
        FormatError::BadMagic { got: *b"hell" }
    );
    // a gzip member's first bytes
    assert_eq!(
        parse_err(&[0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0]),
        FormatError::BadMagic {
            got: [0x1f, 0x8b, 0x08, 0x00]
        }
    );
}

#[test]
fn bad_version_is_refused() {
    let (_, mut a) = small_archive();
    // FORMAT.md §2: format 1 only; 2 to 8 are the pre-release versions, named as such
    for v in [0u16, 9, 0xFFFF] {
        put_u16(&mut a, H_VERSION, v);
        reseal(&mut a);
        assert_eq!(parse_err(&a), FormatError::Version { got: v });
    }
    for v in 2u16..=8 {
        put_u16(&mut a, H_VERSION, v);
        reseal(&mut a);
        assert_eq!(parse_err(&a), FormatError::PreReleaseVersion { got: v });
        let msg = parse_err(&a).to_string();
        assert!(
            msg.contains(&format!(
                "format version {v} is a pre-release version this build does not read"
            )) && msg.contains("re-compress the original"),
            "{msg}"
        );
    }
}

#[test]
fn unknown_flags_are_refused() {
    let (_, mut a) = small_archive();
    let f = u16::from_le_bytes([a[H_FLAGS], a[H_FLAGS + 1]]);
    for bit in 2..16 {
        put_u16(&mut a, H_FLAGS, f | 1 << bit);
        reseal(&mut a);
        assert_eq!(header_field(&a), "flags", "bit {bit}");
    }
}

#[test]
fn block_size_out_of_rules_is_refused() {
    let (_, mut a) = small_archive();
    for bs in [
        0u32,
        1,
        2048,
        4095,
        5000,
        12288,
        4097,
        8 << 20,
        1 << 31,
        u32::MAX,
    ] {
        put_u32(&mut a, H_BLOCK_SIZE, bs);
        reseal(&mut a);
        assert_eq!(header_field(&a), "block_size", "block size {bs}");
    }
    // a valid power of two that does not match the block count
    put_u32(&mut a, H_BLOCK_SIZE, 16384);
    reseal(&mut a);
    assert_eq!(header_field(&a), "block_count");
}

#[test]
fn inconsistent_block_count_is_refused() {
    let (_, a) = small_archive();
    let bc = get_u32(&a, H_BLOCK_COUNT);
    for v in [0, bc - 1, bc + 1, u32::MAX] {
        let mut b = a.clone();
        put_u32(&mut b, H_BLOCK_COUNT, v);
        reseal(&mut b);
        assert_eq!(header_field(&b), "block_count", "block_count {v}");
    }
}

#[test]
fn inconsistent_groups_are_refused() {
    let (_, a) = small_archive();
    let mut b = a.clone();
    put_u32(&mut b, H_GROUP_BLOCKS, 0);
    reseal(&mut b);
    assert_eq!(header_field(&b), "group_blocks");
    let mut b = a.clone();
    put_u32(&mut b, H_GROUP_COUNT, 2);
    reseal(&mut b);
    assert_eq!(header_field(&b), "group_count");
}

#[test]
fn bad_window_min_match_and_reserved_are_refused() {
    let (_, a) = small_archive();
    // (header bytes 72..88: entry widths 32 at most, then the base, then reserved zero)
    let cases: [(usize, u64, usize, &str); 5] = [
        (H_WINDOW, 0, 4, "window"),
        (H_WINDOW, 4097, 4, "window"), // larger than the block without the cross-block flag
        (H_MIN_MATCH, 5, 4, "min_match"),
        (H_RESERVED, 33, 1, "entry_bits"),
        (H_RESERVED + 14, 1, 1, "entry_bits"),
    ];
    for (off, v, width, field) in cases {
        let mut b = a.clone();
        match width {
            1 => b[off] = v as u8,
            4 => put_u32(&mut b, off, v as u32),
            _ => put_u64(&mut b, off, v),
        }
        reseal(&mut b);
        assert_eq!(header_field(&b), field);
    }
    // informational fields may hold anything
    let mut b = a.clone();
    put_u32(&mut b, H_DEPTH_CAP, 77);
    put_u32(&mut b, H_LEVEL, 1000);
    reseal(&mut b);
    assert!(Archive::parse(&b).is_ok());
}

#[test]
fn absurd_section_sizes_are_refused() {
    let (_, a) = small_archive();
    let len = a.len() as u64;
    // data_bytes so large that the sections' sum overflows u64
    let mut b = a.clone();
    put_u64(&mut b, H_DATA_BYTES, u64::MAX);
    reseal(&mut b);
    assert_eq!(header_field(&b), "data_bytes");
    // data_bytes huge but no overflow: the file is too short
    let mut b = a.clone();
    let db = get_u64(&b, H_DATA_BYTES);
    put_u64(&mut b, H_DATA_BYTES, 1 << 40);
    reseal(&mut b);
    assert_eq!(
        parse_err(&b),
        FormatError::Size {
            expected: len - db + (1 << 40),
            got: len
        }
    );
    // table_bytes huge
    let mut b = a.clone();
    put_u64(&mut b, H_TABLE_BYTES, u64::MAX - 50);
    reseal(&mut b);
    assert!(matches!(
        parse_err(&b),
        FormatError::Header {
            field: "data_bytes",
            ..
        } | FormatError::Size { .. }
    ));
    // table_bytes and data_bytes swapped between sections with the same sum: the file size
    // holds, the tables do not parse or the slices do not add up
    let mut b = a.clone();
    let tb = get_u64(&b, H_TABLE_BYTES);
    put_u64(&mut b, H_TABLE_BYTES, tb + 1);
    put_u64(&mut b, H_DATA_BYTES, db - 1);
    reseal(&mut b);
    assert!(matches!(
        parse_err(&b),
        FormatError::Table { .. }
            | FormatError::GroupTable { .. }
            | FormatError::Header {
                field: "data_bytes",
                ..
            }
    ));
}

#[test]
fn huge_original_size_with_consistent_block_count_is_refused() {
    let (_, a) = small_archive();
    // 2^40 bytes in 4 MiB blocks = 262144 blocks, 64 groups of 4096 blocks... the block table
    // alone would be 14 MiB: the file is far too short
    let mut b = a.clone();
    put_u64(&mut b, H_ORIGINAL, 1 << 40);
    put_u32(&mut b, H_BLOCK_SIZE, 4 << 20);
    put_u32(&mut b, H_BLOCK_COUNT, 1 << 18);
    put_u32(&mut b, H_GROUP_BLOCKS, 1);
    put_u32(&mut b, H_GROUP_COUNT, 1 << 18);
    reseal(&mut b);
    assert!(matches!(parse_err(&b), FormatError::Size { .. }));
    // u64::MAX bytes cannot be described by a u32 block count at all
    let mut b = a.clone();
    put_u64(&mut b, H_ORIGINAL, u64::MAX);
    reseal(&mut b);
    assert_eq!(header_field(&b), "block_count");
}

#[test]
fn original_size_shrunk_within_the_last_block_fails_cleanly() {
    // same block count, smaller last block: the entries no longer fit; must be an error
    // (format or block), never a panic or wrong bytes
    let (data, a) = small_archive();
    let n = data.len() as u64;
    for shrink in [1u64, 7, 100, (n % 4096) - 1] {
        let mut b = a.clone();
        put_u64(&mut b, H_ORIGINAL, n - shrink);
        reseal(&mut b);
        match Archive::parse(&b) {
            Err(FormatError::BlockEntry { .. }) => {}
            Err(e) => panic!("unexpected format error {e:?}"),
            Ok(p) => assert!(
                matches!(decompress(&p), Err(DecodeError::Block { .. })),
                "shrink {shrink}"
            ),
        }
    }
    // a tiny archive whose single 4 MiB block claims to be full: decodes to a block error
    let tiny = compress_settings(
        b"0123456789",
        &Settings {
            block_size: 4 << 20,
            packed_literals: false,
            ..Default::default()
        },
        &|_| {},
    )
    .unwrap();
    // fixed-offset entries: `reseal` knows their size
    let tiny = common::with_fixed_entries(&tiny);
    let mut b = tiny.clone();
    put_u64(&mut b, H_ORIGINAL, 4 << 20);
    reseal(&mut b);
    assert_eq!(block_status(&b), (0, Status::Trailing));
}

#[test]
fn meta_checksum_mismatch_is_detected() {
    let (_, a) = small_archive();
    // the checksum itself
    let mut b = a.clone();
    b[H_META] ^= 1;
    assert_eq!(parse_err(&b), FormatError::MetaChecksum);
    // an informational header field
    let mut b = a.clone();
    b[H_LEVEL] ^= 1;
    assert_eq!(parse_err(&b), FormatError::MetaChecksum);
    // a block checksum in the table
    let mut b = a.clone();
    b[entry(3) + E_CHECKSUM] ^= 1;
    assert_eq!(parse_err(&b), FormatError::MetaChecksum);
    // max_depth (not otherwise validated)
    let mut b = a.clone();
    b[entry(0) + E_MAX_DEPTH] ^= 1;
    assert_eq!(parse_err(&b), FormatError::MetaChecksum);
    // the last byte of the table section
    let bc = get_u32(&a, H_BLOCK_COUNT) as usize;
    let tb = get_u64(&a, H_TABLE_BYTES) as usize;
    let mut b = a.clone();
    b[HEADER + bc * ENTRY + tb - 1] ^= 1;
    assert_eq!(parse_err(&b), FormatError::MetaChecksum);
}

#[test]
fn block_entry_rules_are_enforced() {
    let (_, a) = small_archive();
    // reserved header bytes 86..88 (FORMAT.md §2)
    let mut b = a.clone();
    b[87] = 1;
    reseal(&mut b);
    assert_eq!(header_field(&b), "entry_bits");
    // a source before block 0 (distance 5 at block 4), and (no cross-block flag) a lowest
    // source block below the block's own index (distance 1)
    let mut b = a.clone();
    put_u32(&mut b, entry(4) + E_SOURCE, 5);
    reseal(&mut b);
    assert_eq!(entry_err_block(&b), 4);
    let mut b = a.clone();
    put_u32(&mut b, entry(4) + E_SOURCE, 1);
    reseal(&mut b);
    assert_eq!(entry_err_block(&b), 4);
    // lanes over 64, and the two-bit mark on a stream other than the literals
    for (k, lanes) in [(3usize, 65u8), (1, 127), (0, 128), (2, 255)] {
        let mut b = a.clone();
        b[entry(1) + E_LANES + k] = lanes;
        reseal(&mut b);
        assert_eq!(entry_err_block(&b), 1, "stream {k}, {lanes} lanes");
    }
    // a rANS slice re-marked raw: stored and decoded lengths then differ
    let (k, blk) = (0..get_u32(&a, H_BLOCK_COUNT) as usize)
        .flat_map(|i| (0..4).map(move |k| (k, i)))
        .find(|&(k, i)| {
            a[entry(i) + E_LANES + k] != 0
                && get_u32(&a, entry(i) + E_STORED + 4 * k)
                    != get_u32(&a, entry(i) + E_DECODED + 4 * k)
        })
        .expect("some rANS slice");
    let mut b = a.clone();
    b[entry(blk) + E_LANES + k] = 0;
    reseal(&mut b);
    assert_eq!(entry_err_block(&b), blk as u32);
    // decoded length over block + 1 (4097 for a 4 KiB block)
    let mut b = a.clone();
    put_u32(&mut b, entry(0) + E_DECODED, 4098);
    reseal(&mut b);
    assert_eq!(entry_err_block(&b), 0);
    // slice lengths that no longer add up to data_bytes (a stored byte moved to the
    // following block's slices keeps the file size)
    let mut b = a.clone();
    let s = get_u32(&b, entry(0) + E_STORED + 12);
    put_u32(&mut b, entry(0) + E_STORED + 12, s + 1);
    if b[entry(0) + E_LANES + 3] == 0 {
        let d = get_u32(&b, entry(0) + E_DECODED + 12);
        put_u32(&mut b, entry(0) + E_DECODED + 12, d + 1);
    }
    reseal(&mut b);
    assert_eq!(header_field(&b), "data_bytes");
}

fn check_flips(data: &[u8], packed: &[u8], step: usize) -> (usize, usize) {
    let p = Archive::parse(packed).unwrap();
    let data_start = p.data_offset() as usize;
    drop(p);
    let mut b = packed.to_vec();
    // metadata: any flip fails the parse
    for i in 0..data_start {
        let m = 1u8 << (i % 8);
        b[i] ^= m;
        assert!(
            Archive::parse(&b).is_err(),
            "flip of metadata byte {i} (mask {m:#x}) parsed"
        );
        b[i] ^= m;
    }
    // data section: Err or the exact original
    let (mut rejected, mut harmless) = (0, 0);
    for i in (data_start..b.len()).step_by(step) {
        let m = 1u8 << (i % 8);
        b[i] ^= m;
        let a = Archive::parse(&b).expect("data-section flips leave the metadata valid");
        match decompress(&a) {
            Err(DecodeError::Block { .. }) => rejected += 1,
            Err(e) => panic!("flip at {i}: unexpected error kind {e:?}"),
            Ok(out) => {
                assert!(
                    out == data,
                    "flip at {i} (mask {m:#x}) decoded Ok to wrong bytes"
                );
                harmless += 1;
            }
        }
        b[i] ^= m;
    }
    (rejected, harmless)
}

#[test]
fn every_single_byte_flip_of_the_data_section_is_caught() {
    let data = prose(100_000, 42);
    let packed = compress_settings(&data, &Settings::default(), &|_| {}).unwrap();
    let (rejected, harmless) = check_flips(&data, &packed, 1);
    // a flip can only be harmless in bits the decoder never reads; nearly all must be caught
    assert!(
        rejected > 0 && harmless * 100 < rejected,
        "rejected {rejected}, harmless {harmless}"
    );
}

#[test]
fn single_byte_flips_of_a_cross_block_archive_are_caught() {
    let data = prose(100_000, 43);
    let o = Settings {
        block_size: 4096,
        window: Some(32768),
        level: 7,
        ..Default::default()
    };
    let packed = compress_settings(&data, &o, &|_| {}).unwrap();
    assert!(Archive::parse(&packed).unwrap().cross_block());
    let (rejected, harmless) = check_flips(&data, &packed, 3);
    assert!(
        rejected > 0 && harmless * 100 < rejected,
        "rejected {rejected}, harmless {harmless}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// Random multi-byte damage anywhere, optionally re-sealed so it gets past the metadata
    /// checksum: parse, decompress and extract never panic, and whatever decodes Ok is exact.
    #[test]
    fn random_damage_never_panics_or_lies(
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..5),
        reseal_it in any::<bool>(),
        cross in any::<bool>(),
        region in (any::<prop::sample::Index>(), 0u64..20000),
    ) {
        use std::sync::OnceLock;
        static ARCHIVES: OnceLock<[(Vec<u8>, Vec<u8>); 2]> = OnceLock::new();
        let archives = ARCHIVES.get_or_init(|| {
            let data = prose(30_000, 9);
            let plain = compress_settings(&data, &Settings { block_size: 4096, ..Default::default() }, &|_| {}).unwrap();
            let cross = compress_settings(&data, &Settings { block_size: 4096, window: Some(16384), ..Default::default() }, &|_| {}).unwrap();
            [(data.clone(), plain), (data, cross)]
        });
        let (data, packed) = &archives[cross as usize];
        let mut b = packed.clone();
        for (at, x) in &edits {
            let i = at.index(b.len());
            b[i] ^= x | 1;
        }
        if reseal_it {
            reseal(&mut b);
        }
        if let Ok(a) = Archive::parse(&b) {
            if let Ok(out) = decompress(&a) {
                prop_assert!(out == *data, "damaged archive decoded Ok to other bytes");
            }
            let size = a.header().original_size;
            let off = region.0.index(size as usize + 1) as u64;
            let len = region.1.min(size - off);
            if let Ok(out) = extract(&a, off, len) {
                prop_assert!(off + len <= data.len() as u64, "extract Ok past the real data");
                prop_assert!(out == data[off as usize..(off + len) as usize], "extract Ok with other bytes");
            }
        }
    }
}

/// A 4 KiB-block archive with a 16 KiB window: its source distances need bits.
fn cross_archive_packed() -> (Vec<u8>, Vec<u8>) {
    let data = prose(40_000, 9);
    let packed = compress_settings(
        &data,
        &Settings {
            block_size: 4096,
            window: Some(16384),
            ..Default::default()
        },
        &|_| {},
    )
    .unwrap();
    (data, packed)
}

#[test]
fn packed_entries_read_by_the_format_text_match_the_parser() {
    for (data, a) in [small_archive_packed(), cross_archive_packed()] {
        decodes_to(&a, &data);
        let p = Archive::parse(&a).unwrap();
        assert_eq!(p.header().version, 1);
        let ours = common::packed_entries(&a);
        assert_eq!(ours.len(), p.entries().len());
        for (i, (o, e)) in ours.iter().zip(p.entries()).enumerate() {
            assert_eq!(o.checksum, e.checksum, "block {i}");
            assert_eq!(o.stored, e.stored_len, "block {i}");
            assert_eq!(o.decoded, e.decoded_len, "block {i}");
            assert_eq!(o.lanes, e.lanes, "block {i}");
            assert_eq!(o.depth, e.max_depth, "block {i}");
            assert_eq!(o.lowest, e.lowest_source_block, "block {i}");
        }
        // the widths are the smallest that hold the values (FORMAT.md §3.1, writer note)
        let w = common::packed_widths(&a);
        let need = |v: u32| 32 - v.leading_zeros();
        for k in 0..5 {
            assert_eq!(w[k], ours.iter().map(|e| need(e.stored[k])).max().unwrap());
            assert_eq!(
                w[5 + k],
                ours.iter().map(|e| need(e.decoded[k])).max().unwrap()
            );
        }
        assert_eq!(w[15], ours.iter().map(|e| need(e.depth)).max().unwrap());
        let far = ours
            .iter()
            .enumerate()
            .map(|(i, e)| i as u32 - e.lowest)
            .max();
        assert_eq!(w[16], need(far.unwrap()));
    }
    // the cross-block archive does read earlier blocks, so its source field is not empty
    let (_, a) = cross_archive_packed();
    assert!(common::packed_widths(&a)[16] > 0);
}

#[test]
fn packed_entry_widths_are_checked() {
    let (_, a) = small_archive_packed();
    // a width above 32
    let mut b = a.clone();
    b[common::H_ENTRY_BITS + 11] = 33;
    common::reseal_packed(&mut b);
    assert_eq!(header_field(&b), "entry_bits");
    // the match base byte (FORMAT.md §2), then the reserved bytes
    for at in 13..16 {
        let mut b = a.clone();
        b[common::H_ENTRY_BITS + at] = 1;
        common::reseal_packed(&mut b);
        let want = if at == 13 { "match_base" } else { "entry_bits" };
        assert_eq!(header_field(&b), want, "byte {at}");
    }
    // a wider field changes the entry size: the sections no longer add up to the file
    let mut b = a.clone();
    b[common::H_ENTRY_BITS] += 8;
    common::reseal_packed(&mut b);
    assert!(matches!(parse_err(&b), FormatError::Size { .. }));
    // the same archive with every field at its widest width is the same archive
    let wide = common::with_fixed_entries(&a);
    assert!(wide.len() > a.len());
    let (x, y) = (Archive::parse(&a).unwrap(), Archive::parse(&wide).unwrap());
    assert_eq!(x.entries(), y.entries());
}

#[test]
fn packed_fields_are_validated_like_fixed_offset_ones() {
    let (_, a) = small_archive_packed();
    let ents = common::packed_entries(&a);
    let (bi, k) = (0..ents.len())
        .flat_map(|i| (0..5).map(move |k| (i, k)))
        .find(|&(i, k)| ents[i].lanes[k] != 0 && ents[i].decoded[k] > 1)
        .expect("a rANS slice");
    // a rANS slice marked raw: its stored length differs from its decoded length
    let mut b = a.clone();
    common::packed_set(&mut b, bi, 10 + k, 0);
    common::reseal_packed(&mut b);
    assert_eq!(entry_err_block(&b), bi as u32);
    // one stored byte less: the slices no longer add up to the data section
    let mut b = a.clone();
    common::packed_set(&mut b, bi, k, ents[bi].stored[k] - 1);
    common::reseal_packed(&mut b);
    assert!(matches!(
        parse_err(&b),
        FormatError::Header {
            field: "data_bytes",
            ..
        }
    ));
    // one decoded symbol less: parses, and the block fails its rANS end check
    let mut b = a.clone();
    common::packed_set(&mut b, bi, 5 + k, ents[bi].decoded[k] - 1);
    common::reseal_packed(&mut b);
    let (block, _) = block_status(&b);
    assert_eq!(block, bi as u32);
}

#[test]
fn packed_source_distance_and_padding_are_checked() {
    let (data, a) = cross_archive_packed();
    let w = common::packed_widths(&a);
    // block 0 cannot read before itself
    let mut b = a.clone();
    common::packed_set(&mut b, 0, 16, 1);
    common::reseal_packed(&mut b);
    assert_eq!(entry_err_block(&b), 0);
    // a distance one beyond the block index
    let n = get_u32(&a, H_BLOCK_COUNT) as usize;
    let far = (1u32 << w[16]) - 1;
    let j = far as usize - 1;
    assert!(j < n, "{n} blocks, source width {}", w[16]);
    let mut b = a.clone();
    common::packed_set(&mut b, j, 16, far);
    common::reseal_packed(&mut b);
    assert_eq!(entry_err_block(&b), j as u32);
    // a distance of 0 everywhere is valid (a block may read only itself)
    let mut b = a.clone();
    for i in 0..n {
        common::packed_set(&mut b, i, 16, 0);
    }
    common::reseal_packed(&mut b);
    let p = Archive::parse(&b).expect("lowest = own index is valid");
    // but the decoder then finds sources outside the declared range or decodes right
    if let Ok(out) = decompress(&p) {
        assert_eq!(out, data);
    }
    // padding bits after the last field must be zero
    let used: u32 = w.iter().sum();
    assert_ne!(used % 8, 0, "this archive's entries end in padding bits");
    let size = common::packed_entry_size(&a);
    let mut b = a.clone();
    b[HEADER + 3 * size + size - 1] |= 0x80;
    common::reseal_packed(&mut b);
    assert_eq!(entry_err_block(&b), 3);
}

/// Every CPU read path fails a moved block with a checksum error naming it: the whole-file
/// decode (one of the moved blocks), an extract of one block's range, and an extract of a
/// range that covers it among others.
fn assert_moved_blocks_fail(b: &[u8], moved: &[u32], what: &str) {
    let a = Archive::parse(b).expect("a moved block keeps the container valid");
    match decompress(&a) {
        Err(DecodeError::Block {
            block,
            status: Status::Checksum,
            ..
        }) => assert!(
            moved.contains(&block),
            "{what}: decompress named block {block}"
        ),
        other => panic!("{what}: decompress gave {other:?}"),
    }
    for &m in moved {
        let start = m as u64 * 4096;
        for (off, len) in [(start, 4096u64), (start + 100, 10), (0, 6 * 4096)] {
            match extract(&a, off, len) {
                Err(DecodeError::Block {
                    block,
                    status: Status::Checksum,
                    ..
                }) => {
                    if len < 6 * 4096 {
                        assert_eq!(block, m, "{what}: extract {off}+{len}");
                    } else {
                        assert!(
                            moved.contains(&block),
                            "{what}: extract {off}+{len}: {block}"
                        );
                    }
                }
                other => panic!("{what}: extract {off}+{len} gave {other:?}"),
            }
        }
        let msg = extract(&a, start, 4096).unwrap_err().to_string();
        assert!(
            msg.contains(&format!("block {m} ")) && msg.contains("checksum"),
            "{what}: {msg}"
        );
    }
    // the blocks that did not move still extract
    for i in (0..6u32).filter(|i| !moved.contains(i)) {
        assert!(
            extract(&a, i as u64 * 4096, 4096).is_ok(),
            "{what}: block {i}"
        );
    }
}

#[test]
fn swapped_and_duplicated_blocks_fail_their_position_bound_checksums() {
    use crate::moved::{movable_archive, with_blocks_moved};
    for cross in [false, true] {
        let (data, a) = movable_archive(cross);
        // the identity order rebuilds the same archive (the helper moves nothing else)
        assert_eq!(with_blocks_moved(&a, &data, &[0, 1, 2, 3, 4, 5]), a);
        let swapped = with_blocks_moved(&a, &data, &[0, 1, 4, 3, 2, 5]);
        assert_moved_blocks_fail(&swapped, &[2, 4], &format!("swap 2, 4 (cross {cross})"));
        let duplicated = with_blocks_moved(&a, &data, &[0, 1, 2, 1, 4, 5]);
        assert_moved_blocks_fail(&duplicated, &[3], &format!("block 1 at 3 (cross {cross})"));
        let adjacent = with_blocks_moved(&a, &data, &[1, 0, 2, 3, 4, 5]);
        assert_moved_blocks_fail(&adjacent, &[0, 1], &format!("swap 0, 1 (cross {cross})"));
    }
}

/// `a` with `area` as its extension area, the meta checksum recomputed.
fn with_area(a: &[u8], area: &[u8]) -> Vec<u8> {
    let mut b = a.to_vec();
    b.extend_from_slice(area);
    common::reseal_packed(&mut b);
    b
}

/// One record's bytes as FORMAT.md §3.4 lays them out: type, flags, length, payload.
fn record(kind: u16, flags: u16, payload: &[u8]) -> Vec<u8> {
    let mut r = kind.to_le_bytes().to_vec();
    r.extend_from_slice(&flags.to_le_bytes());
    r.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    r.extend_from_slice(payload);
    r
}

fn extension_err(b: &[u8]) -> (u64, String) {
    match parse_err(b) {
        FormatError::Extension { offset, why } => (offset, why),
        e => panic!("expected an extension error, got {e:?}"),
    }
}

#[test]
fn unknown_extension_records_are_skipped() {
    let (data, a) = small_archive_packed();
    // the FASTA index type (assigned, not interpreted here) and an unassigned type, neither
    // must-understand, and an empty payload
    let mut area = record(1, 0, b"index bytes");
    area.extend(record(0x4242, 0, b""));
    area.extend(record(0xFFFF, 0, &[7; 300]));
    let b = with_area(&a, &area);
    decodes_to(&b, &data);
    let p = Archive::parse(&b).unwrap();
    let got: Vec<(u16, u16, usize)> = p
        .extensions()
        .map(|e| (e.kind, e.flags, e.payload.len()))
        .collect();
    assert_eq!(got, [(1, 0, 11), (0x4242, 0, 0), (0xFFFF, 0, 300)]);
    assert_eq!(p.extensions().next().unwrap().payload, b"index bytes");
    assert!(!p.extensions().any(|e| e.must_understand()));
    // the library writes the same bytes
    let records: Vec<aceapex::format::Extension> = p.extensions().collect();
    assert_eq!(aceapex::format::with_extensions(&a, &records).unwrap(), b);
    // and appends after the records already there
    let more = aceapex::format::with_extensions(&b, &records[..1]).unwrap();
    assert_eq!(Archive::parse(&more).unwrap().extensions().count(), 4);
    assert_eq!(&more[b.len()..], &area[..8 + 11]);
}

#[test]
fn extension_records_that_break_a_rule_are_refused() {
    let (_, a) = small_archive_packed();
    // must-understand, of a type this build does not know: refused naming the type
    for kind in [1u16, 2, 0x4242] {
        let b = with_area(&a, &record(kind, 1, b"x"));
        let (offset, why) = extension_err(&b);
        assert_eq!(offset, 0);
        assert!(
            why.contains(&format!("type {kind}")) && why.contains("must-understand"),
            "{why}"
        );
    }
    // the second record refused: its offset named
    let mut area = record(9, 0, b"abc");
    area.extend(record(10, 1, b""));
    assert_eq!(extension_err(&with_area(&a, &area)).0, 11);
    // type 0 is reserved
    let (_, why) = extension_err(&with_area(&a, &record(0, 0, b"")));
    assert!(why.contains("type 0"), "{why}");
    // reserved flag bits
    for flags in [2u16, 0x8000, 0xFFFE] {
        let (_, why) = extension_err(&with_area(&a, &record(5, flags, b"")));
        assert!(why.contains("reserved flag"), "{flags:#x}: {why}");
    }
    // a payload past the end, and a record header cut short
    let mut r = record(5, 0, b"abcdef");
    r.truncate(r.len() - 1);
    let (_, why) = extension_err(&with_area(&a, &r));
    assert!(why.contains("6-byte payload, 5 bytes are left"), "{why}");
    for cut in 1..8 {
        let (_, why) = extension_err(&with_area(&a, &record(5, 0, b"")[..cut]));
        assert!(why.contains("record header needs 8"), "{cut}: {why}");
    }
    // the area is under the meta checksum: bytes appended without resealing are refused
    let mut b = a.clone();
    b.extend_from_slice(&record(5, 0, b""));
    assert_eq!(parse_err(&b), FormatError::MetaChecksum);
    // the writer refuses what the reader would
    let bad = aceapex::format::Extension {
        kind: 0,
        flags: 0,
        payload: b"",
    };
    assert!(aceapex::format::with_extensions(&a, &[bad]).is_err());
    let bad = aceapex::format::Extension {
        kind: 5,
        flags: 1,
        payload: b"",
    };
    assert!(aceapex::format::with_extensions(&a, &[bad]).is_err());
}

#[test]
fn max_block_count_with_consistent_original_size_is_rejected_before_allocating() {
    // block_count = u32::MAX, original_size = u32::MAX * 4 MiB (consistent), 96-byte file.
    let mut h = Hdr::new((u32::MAX as u64) * MAX_BS as u64, MAX_BS);
    h.group_blocks = 1;
    let b = assemble(&h, &[], &[], &[]);
    let (r, peak) = peak_alloc(|| Archive::parse(&b).map(|_| ()));
    assert!(matches!(r, Err(FormatError::Size { .. })), "{r:?}");
    assert!(
        peak < 1 << 20,
        "parse allocated {peak} bytes for a 96-byte file"
    );
}

#[test]
fn group_blocks_u32_max_is_one_group() {
    let mut h = Hdr::new(0, 4096);
    h.group_blocks = u32::MAX;
    let orig = b"abcabcabcabcabcabcXY";
    let b = build(
        h,
        orig,
        &[Blk::raw(b"abcXY", &[], &[3], &[0xFF, 0x02, 0xC9, 0x01])],
        None,
    );
    assert_eq!(outcome(&b), None);
}

#[test]
fn section_sizes_near_u64_max_are_rejected() {
    for (tb, db) in [
        (u64::MAX, 0),
        (0, u64::MAX),
        (u64::MAX - 95, 0),
        (u64::MAX / 2, u64::MAX / 2 + 2),
        (1 << 63, 1 << 63),
        (u64::MAX - 96 - 56 + 1, 0),
    ] {
        let mut h = Hdr::new(1, 4096);
        h.table_bytes = Some(tb);
        h.data_bytes = Some(db);
        let e = Ent {
            decoded: [0, 0, 0, 0, 0],
            ..Default::default()
        };
        let b = assemble(&h, &e.bytes(0), &[0, 0, 0, 0, 0], &[]);
        let err = parse_err(&b);
        assert!(
            matches!(err, FormatError::Size { .. } | FormatError::Header { .. }),
            "{tb} {db}: {err:?}"
        );
    }
}

#[test]
fn extract_spanning_many_blocks_of_a_corrupt_independent_archive() {
    let bs = 4096usize;
    let nb = 40;
    let blocks_data: Vec<Vec<u8>> = (0..nb)
        .map(|b| (0..bs).map(|i| (i * 7 + b * 13) as u8).collect())
        .collect();
    let orig: Vec<u8> = blocks_data.concat();
    let mut blocks: Vec<Blk> = blocks_data.iter().map(|d| lit_block(d)).collect();
    // block 17: a literal byte flipped (checksum), block 29: match before block start
    blocks[17].slices[0][100] ^= 1;
    blocks[29] = copy_block(bs, 1, 29);
    let b = build(Hdr::new(0, bs as u32), &orig, &blocks, None);
    let a = Archive::parse(&b).unwrap();
    for (off, len) in [
        (0usize, 17 * bs),
        (18 * bs, 11 * bs),
        (30 * bs, 10 * bs),
        (5, 17 * bs - 5),
    ] {
        assert_eq!(
            extract(&a, off as u64, len as u64).unwrap(),
            &orig[off..off + len]
        );
    }
    for (off, len) in [
        (0usize, nb * bs),
        (17 * bs - 1, 2),
        (20 * bs, 10 * bs),
        (29 * bs + 4095, 1),
    ] {
        let r = extract(&a, off as u64, len as u64);
        match r {
            Err(DecodeError::Block {
                block: 17,
                status: Status::Checksum,
                ..
            })
            | Err(DecodeError::Block {
                block: 29,
                status: Status::BadDistance,
                ..
            }) => {}
            other => panic!("{off} {len}: {other:?}"),
        }
    }
    assert!(decompress(&a).is_err());
    // regions overflowing u64 or the size
    assert!(matches!(
        extract(&a, u64::MAX, 2),
        Err(DecodeError::Region { .. })
    ));
    assert!(matches!(
        extract(&a, 1, u64::MAX),
        Err(DecodeError::Region { .. })
    ));
    assert!(matches!(
        extract(&a, orig.len() as u64, 1),
        Err(DecodeError::Region { .. })
    ));
    assert_eq!(extract(&a, orig.len() as u64, 0).unwrap(), Vec::<u8>::new());
}

/// A ~1 MB archive of single-block groups, every group carrying four one-symbol tables
/// (35 bytes of file each); every block empty-ish. The reader expands each table record into
/// a 16 KiB decode table up front.
fn many_tables_archive(target: usize) -> Vec<u8> {
    let bs = 4096u32;
    let per_group = ENTRY + STREAMS * 35;
    let nb = target / per_group;
    let mut h = Hdr::new(nb as u64 * bs as u64, bs);
    h.group_blocks = 1;
    let bt: Vec<u8> = (0..nb)
        .flat_map(|i| {
            Ent {
                lowest: i as u32,
                ..Default::default()
            }
            .bytes(i as u32)
        })
        .collect();
    let rec = table_record(&[(0, 4096)]);
    assert_eq!(rec.len(), 35);
    let tables: Vec<u8> = (0..STREAMS * nb).flat_map(|_| rec.clone()).collect();
    assemble(&h, &bt, &tables, &[])
}

#[test]
fn parse_memory_is_proportionate_to_the_file() {
    let b = many_tables_archive(1 << 20);
    let t = Instant::now();
    parses_within_32x(&b);
    let dt = t.elapsed();
    assert!(dt < Duration::from_secs(1), "parse took {dt:?}");
}

/// Parses `b` and asserts the reader allocated at most 32 times its size at its peak;
/// returns the block count.
fn parses_within_32x(b: &[u8]) -> usize {
    let (r, peak) = peak_alloc(|| Archive::parse(b).map(|a| a.block_count()));
    eprintln!("parse of {} bytes: peak {} MB", b.len(), peak >> 20);
    assert!(
        peak <= 32 * b.len(),
        "parse of a {} byte archive allocated {} bytes ({}x)",
        b.len(),
        peak,
        peak / b.len()
    );
    r.expect("parses")
}

#[test]
fn parse_time_of_a_1mb_table_heavy_archive() {
    let b = many_tables_archive(1 << 20);
    let t = Instant::now();
    let a = Archive::parse(&b).unwrap();
    let dt = t.elapsed();
    eprintln!(
        "parse 1 MB table-heavy archive: {dt:?}, {} blocks",
        a.block_count()
    );
    assert!(dt < Duration::from_secs(2), "parse took {dt:?}");
    // and rejecting it (every block empty: NoLeadingReset) is quick
    let t = Instant::now();
    assert!(matches!(
        decompress(&a),
        Err(DecodeError::Block {
            status: Status::NoLeadingReset,
            ..
        })
    ));
    assert!(t.elapsed() < Duration::from_secs(2));
}

/// `nb` blocks of 4 MiB, every stream a one-symbol rANS slice of block + 1 symbols with a
/// 4-byte slice (state 65536): the most decode work per archive byte. Commands are all
/// resets, so every block ends in Trailing after decoding 5 x 4 MiB of symbols.
fn max_work_archive(nb: usize, cross: bool) -> Vec<u8> {
    let bs = MAX_BS;
    let mut h = Hdr::new(nb as u64 * bs as u64, bs);
    h.group_blocks = 1 << 20;
    if cross {
        h.flags = 2;
        h.window = u32::MAX;
    }
    let mut bt = Vec::new();
    for i in 0..nb {
        let e = Ent {
            stored: [4; 5],
            decoded: [bs + 1; 5],
            lanes: [1; 5],
            lowest: if cross { 0 } else { i as u32 },
            ..Default::default()
        };
        bt.extend_from_slice(&e.bytes(i as u32));
    }
    let mut tables = Vec::new();
    for sym in [b'x', 0, 1, 0xFF, 0x80] {
        tables.extend(table_record(&[(sym, 4096)]));
    }
    let data: Vec<u8> = (0..STREAMS * nb).flat_map(|_| L.to_le_bytes()).collect();
    assemble(&h, &bt, &tables, &data)
}

#[test]
fn worst_case_rejection_time() {
    for cross in [false, true] {
        let b = max_work_archive(64, cross);
        let a = Archive::parse(&b).unwrap();
        let t = Instant::now();
        let r = decompress(&a);
        let dt = t.elapsed();
        eprintln!(
            "max-work archive ({} bytes, 64 x 4 MiB, cross {cross}): rejected in {dt:?}",
            b.len()
        );
        assert!(
            matches!(
                r,
                Err(DecodeError::Block {
                    status: Status::Trailing,
                    ..
                })
            ),
            "{r:?}"
        );
        assert!(dt < Duration::from_secs(2), "took {dt:?}");
        let t = Instant::now();
        let r = extract(&a, 63 * MAX_BS as u64, 1);
        assert!(r.is_err());
        eprintln!("  extract of the last byte: {:?}", t.elapsed());
    }
}

#[test]
fn one_block_worst_case_decode_time() {
    // a valid 4 MiB block whose commands are 4 MiB - 1 resets... : reset, 4 MiB resets is not
    // possible with a full block, so: 2 MiB resets + one literal + a 4 MiB - 1 match
    let bs = MAX_BS as usize;
    let orig = vec![b'q'; bs];
    let n_resets = bs / 2;
    let cmds: Vec<u8> = std::iter::repeat_n(0xFF, n_resets)
        .chain([0x00, 0xFE])
        .collect();
    let mut lens = Vec::new();
    varint(bs as u32 - 1 - 6, &mut lens);
    let blk = Blk::raw(b"q", &lens, &[1], &cmds);
    let b = build(Hdr::new(0, bs as u32), &orig, &[blk], None);
    let a = Archive::parse(&b).unwrap();
    let t = Instant::now();
    assert_eq!(decompress(&a).unwrap().len(), bs);
    eprintln!("valid 4 MiB block with 2M resets: {:?}", t.elapsed());
}

#[test]
fn huge_original_size_info_and_extract_are_fine() {
    let b = huge_original_archive();
    let a = Archive::parse(&b).unwrap();
    let r = extract(&a, 1 << 35, 10);
    assert!(
        matches!(
            r,
            Err(DecodeError::Block {
                status: Status::NoLeadingReset,
                ..
            })
        ),
        "{r:?}"
    );
}

/// An archive of `n` blocks of `bs` bytes, one group per block (`group_blocks` 1), every
/// entry width 0 (8-byte entries: a checksum alone), every table absent, no data: the fewest
/// bytes per block and per group the format allows.
fn zero_width_archive(n: usize, bs: u32, group_blocks: u32) -> Vec<u8> {
    let mut h = Hdr::new(n as u64 * bs as u64, bs);
    h.group_blocks = group_blocks;
    let groups = n.div_ceil(group_blocks as usize);
    let mut b = assemble(&h, &vec![0u8; 8 * n], &vec![0u8; STREAMS * groups], &[]);
    b[72..85].fill(0);
    reseal_packed(&mut b);
    b
}

#[test]
fn zero_width_entries_parse_memory_is_proportionate_to_the_file() {
    // 13 bytes per group on disk (the reader must not hold kilobytes for each)
    let b = zero_width_archive(100_000, 4096, 1);
    assert_eq!(parses_within_32x(&b), 100_000);
}

#[test]
fn zero_width_entries_huge_declared_output_fails_without_touching_it() {
    // 2,000 blocks of 4 MiB (8 GiB declared) in 16 KB; block 0 has no commands. The output is
    // allocated zeroed by the allocator (or refused), never filled first (took 15 s and 8 GiB)
    let b = zero_width_archive(2000, MAX_BS, 64);
    assert!(b.len() < 20_000);
    let a = Archive::parse(&b).expect("parses");
    let t = Instant::now();
    let r = decompress(&a);
    let dt = t.elapsed();
    assert!(
        matches!(
            r,
            Err(DecodeError::Block {
                status: Status::NoLeadingReset,
                ..
            }) | Err(DecodeError::Alloc { .. })
        ),
        "{r:?}"
    );
    assert!(dt < Duration::from_secs(3), "took {dt:?}");
}
