//! Golden archives (tests/golden/README.md): committed format-1 archives decode to their
//! committed originals, and re-compressing an original with the same settings reproduces its
//! archive byte for byte. A failure here means the format or the encoder output changed; if
//! that was intended, regenerate the archives as the README says. The archives of the
//! pre-release versions (`tests/golden/pre-release/`) are refused, naming their version, and
//! hold the same coded streams as their format-1 counterparts.

use aceapex::decode::{decompress, extract};
use aceapex::encode::{compress_settings, Settings, TwoBit};
use aceapex::format::{self, Archive, Extension};
use aceapex::FormatError;
use std::path::PathBuf;
use xxhash_rust::xxh3::xxh3_64;

const ORIGINALS: [&str; 3] = ["moby_dick_64k.txt", "dna.fa", "records.csv"];

fn golden(name: &str) -> Vec<u8> {
    let p: PathBuf = [env!("CARGO_MANIFEST_DIR"), "tests", "golden", name]
        .iter()
        .collect();
    std::fs::read(&p).unwrap_or_else(|e| panic!("reading {}: {e}", p.display()))
}

/// Level 5, 16 KiB blocks, min match 6, without context tables and packed literals
/// (`--no-context --no-pack`), spelled out (not `Settings::default()`, so a changed
/// default also shows up here).
fn default_settings() -> Settings {
    Settings {
        level: 5,
        block_size: 16384,
        window: None,
        min_match: 6,
        repeat_codes: true,
        depth_cap: 0,
        depth_cap_method: aceapex::encode::lz::DepthCapMethod::Clamp,
        context_tables: false,
        packed_literals: false,
        raw_match_streams: false,
        wide_lanes: false,
        two_bit_runs: false,
        line_layout: false,
        two_bit: TwoBit::Off,
    }
}

fn cross_settings() -> Settings {
    Settings {
        window: Some(65536),
        block_size: 4096,
        ..default_settings()
    }
}

fn variants() -> Vec<(String, String, Settings)> {
    let mut v = Vec::new();
    for o in ORIGINALS {
        v.push((o.to_string(), format!("{o}.acx"), default_settings()));
        v.push((o.to_string(), format!("{o}.w64k-b4k.acx"), cross_settings()));
    }
    v
}

/// The archives with a match base below 6 (FORMAT.md §2): `-l 8 --min-match 4` of the text
/// and `-l 8 --min-match 5 --block-size 4K` of the records.
fn variants_base() -> Vec<(String, String, Settings)> {
    vec![
        (
            "moby_dick_64k.txt".into(),
            "moby_dick_64k.txt.l8-mm4.acx".into(),
            Settings {
                level: 8,
                min_match: 4,
                ..default_settings()
            },
        ),
        (
            "records.csv".into(),
            "records.csv.l8-mm5-b4k.acx".into(),
            Settings {
                level: 8,
                min_match: 5,
                block_size: 4096,
                ..default_settings()
            },
        ),
    ]
}

/// The archives with context tables (FORMAT.md §5.4): the DNA at level 5 and the text at
/// `-l 9 --min-match 4`.
fn variants_context() -> Vec<(String, String, Settings)> {
    let ctx = Settings {
        context_tables: true,
        ..default_settings()
    };
    vec![
        ("dna.fa".into(), "dna.fa.ctx.acx".into(), ctx.clone()),
        (
            "moby_dick_64k.txt".into(),
            "moby_dick_64k.txt.l9-mm4-ctx.acx".into(),
            Settings {
                level: 9,
                min_match: 4,
                ..ctx
            },
        ),
    ]
}

/// The archive with packed literal tables (FORMAT.md §5.6): a real genome sample at level 5.
fn variants_packed() -> Vec<(String, String, Settings)> {
    vec![(
        "ecoli_48k.fa".into(),
        "ecoli_48k.fa.acx".into(),
        Settings {
            context_tables: true,
            packed_literals: true,
            ..default_settings()
        },
    )]
}

/// Every committed format-1 archive (wide slices are covered by tests/corrupt/wide_slices/ and the
/// archive tests).
fn all_variants() -> Vec<(String, String, Settings)> {
    let mut v = variants();
    v.extend(variants_base());
    v.extend(variants_context());
    v.extend(variants_packed());
    v
}

#[test]
fn golden_archive_with_packed_literals() {
    for (orig, arc, opts) in variants_packed() {
        let archive = golden(&arc);
        let a = Archive::parse(&archive).unwrap_or_else(|e| panic!("{arc}: {e}"));
        assert_eq!(a.header().version, 1, "{arc}");
        // one group (48 KiB), its literals ACGT and newline: five letters, three per symbol
        assert_eq!(a.tables().len(), 1, "{arc}");
        let t = a.tables()[0][0].as_ref().expect("a literal table");
        assert!(t.is_packed(), "{arc}: literal table not packed");
        assert_eq!(a.literal_width(0), 3, "{arc}");
        assert_eq!(
            t.record().alphabet.as_deref(),
            Some(&b"\nACGT"[..]),
            "{arc}: alphabet"
        );
        // the same settings without packed literals: larger
        let plain = compress_settings(
            &golden(&orig),
            &Settings {
                packed_literals: false,
                ..opts
            },
            &|_| {},
        )
        .unwrap();
        assert!(plain.len() > archive.len(), "{arc}");
    }
}

#[test]
fn golden_archives_with_context_pairs() {
    for (_, arc, opts) in variants_context() {
        let archive = golden(&arc);
        let a = Archive::parse(&archive).unwrap_or_else(|e| panic!("{arc}: {e}"));
        assert_eq!(a.header().version, 1, "{arc}");
        assert_eq!(a.header().match_base(), opts.min_match.min(6), "{arc}");
        let pairs = a
            .tables()
            .iter()
            .flatten()
            .flatten()
            .filter(|t| t.has_context())
            .count();
        assert!(pairs > 0, "{arc}: no context pair");
        // the same settings without context tables: larger
        let plain = compress_settings(
            &golden(&arc.replace(".ctx.acx", "").replace(".l9-mm4-ctx.acx", "")),
            &Settings {
                context_tables: false,
                ..opts
            },
            &|_| {},
        )
        .unwrap();
        assert!(plain.len() > archive.len(), "{arc}");
    }
}

#[test]
fn golden_archives_declare_version_1_and_their_base() {
    for (_, arc, opts) in variants_base() {
        let archive = golden(&arc);
        let a = Archive::parse(&archive).unwrap_or_else(|e| panic!("{arc}: {e}"));
        assert_eq!(a.header().match_base(), opts.min_match, "{arc}");
        assert_eq!(archive[85] as u32, opts.min_match, "{arc}: header byte 85");
    }
    for (_, arc, _) in all_variants() {
        let a = golden(&arc);
        assert_eq!(u16::from_le_bytes([a[4], a[5]]), 1, "{arc}");
        assert_eq!(&a[86..88], &[0, 0], "{arc}: reserved header bytes");
    }
    for (_, arc, _) in variants() {
        assert_eq!(golden(&arc)[85], 6, "{arc}: header byte 85");
    }
}

/// FORMAT.md §6: block `i`'s stored checksum is its XXH3-64 XOR SplitMix64's first output for
/// state `i` (the constants written out from the spec), so entry 0 of a 16 KiB-block archive
/// stores XXH3(bytes 0..16384) ^ 0xE220A8397B1DCDAF.
#[test]
fn golden_block_checksums_are_bound_to_their_position() {
    let original = golden("dna.fa");
    let archive = golden("dna.fa.acx");
    let stored = u64::from_le_bytes(archive[96..104].try_into().unwrap());
    assert_eq!(stored, xxh3_64(&original[..16384]) ^ 0xE220_A839_7B1D_CDAF);
    let e = Archive::parse(&archive).unwrap().entry_size();
    let stored1 = u64::from_le_bytes(archive[96 + e..104 + e].try_into().unwrap());
    assert_eq!(
        stored1,
        xxh3_64(&original[16384..32768]) ^ 0x910A_2DEC_8902_5CC1
    );
}

/// `records.csv.ext.acx`: `records.csv.acx` with two extension records (FORMAT.md §3.4) of
/// unassigned types, neither must-understand: type 0x7001 with the payload `golden`, then
/// type 0x7002 with an empty payload. A reader skips them and decodes the archive; writing
/// the same records reproduces the file; the records' bytes are as §3.4 lays them out.
#[test]
fn golden_archive_with_extension_records() {
    let base = golden("records.csv.acx");
    let ext = golden("records.csv.ext.acx");
    let want = [
        Extension {
            kind: 0x7001,
            flags: 0,
            payload: b"golden",
        },
        Extension {
            kind: 0x7002,
            flags: 0,
            payload: b"",
        },
    ];
    assert_eq!(
        &ext[base.len()..],
        b"\x01\x70\x00\x00\x06\x00\x00\x00golden\x02\x70\x00\x00\x00\x00\x00\x00"
    );
    assert_eq!(
        &ext[..88],
        &base[..88],
        "header fields before the meta checksum"
    );
    assert_eq!(
        &ext[96..base.len()],
        &base[96..],
        "block table, tables and data"
    );
    let a = Archive::parse(&ext).unwrap();
    assert_eq!(a.extensions().collect::<Vec<_>>(), want);
    assert!(decompress(&a).unwrap() == golden("records.csv"));
    assert_eq!(format::with_extensions(&base, &want).unwrap(), ext);
    assert_eq!(Archive::parse(&base).unwrap().extensions().count(), 0);
}

#[test]
fn golden_originals_are_intact() {
    // sizes as committed (a truncated or re-encoded original would make the rest meaningless)
    assert_eq!(golden("moby_dick_64k.txt").len(), 65536);
    assert_eq!(golden("dna.fa").len(), 60000);
    assert_eq!(golden("records.csv").len(), 50000);
    assert!(golden("moby_dick_64k.txt").starts_with(b"CONTENTS"));
    assert!(golden("dna.fa").starts_with(b">golden_test_sequence"));
    assert!(golden("records.csv").starts_with(b"id,city,temp_c,count,flag\n"));
}

#[test]
fn golden_archives_decode_to_their_originals() {
    for (orig, arc, opts) in all_variants() {
        let original = golden(&orig);
        let archive = golden(&arc);
        let a = Archive::parse(&archive).unwrap_or_else(|e| panic!("{arc}: {e}"));
        assert_eq!(a.header().original_size, original.len() as u64, "{arc}");
        assert_eq!(a.header().block_size, opts.block_size, "{arc}");
        assert_eq!(
            a.header().window,
            opts.window.unwrap_or(opts.block_size),
            "{arc}"
        );
        assert_eq!(a.cross_block(), opts.window.is_some(), "{arc}");
        let out = decompress(&a).unwrap_or_else(|e| panic!("{arc}: {e}"));
        assert!(out == original, "{arc} does not decode to {orig}");
        for (off, len) in [
            (0u64, 1u64),
            (4000, 9000),
            (original.len() as u64 - 77, 77),
            (20000, 16385),
        ] {
            let got =
                extract(&a, off, len).unwrap_or_else(|e| panic!("{arc} extract {off}+{len}: {e}"));
            assert!(
                got == original[off as usize..(off + len) as usize],
                "{arc} extract {off}+{len}"
            );
        }
    }
}

#[test]
fn golden_archives_are_reproduced_byte_for_byte() {
    for (orig, arc, opts) in all_variants() {
        let original = golden(&orig);
        let archive = golden(&arc);
        let again = compress_settings(&original, &opts, &|_| {}).unwrap();
        if again != archive {
            let first = again
                .iter()
                .zip(&archive)
                .position(|(a, b)| a != b)
                .unwrap_or(again.len().min(archive.len()));
            panic!(
                "re-compressing {orig} no longer gives {arc} (sizes {} vs {} committed, first difference at byte {first}); \
                 if the format or encoder change is intended, regenerate as tests/golden/README.md says",
                again.len(),
                archive.len()
            );
        }
    }
}

/// The archives the encoder wrote before format 1 was frozen (FORMAT.md §2: versions 2 to
/// 8), in `tests/golden/pre-release/`, each with the version it declares: the format-1
/// archive of the same name in `tests/golden/`, then `.v2` for the version-2 one.
const PRE_RELEASE: [(&str, u16); 12] = [
    ("moby_dick_64k.txt.acx", 3),
    ("dna.fa.acx", 3),
    ("records.csv.acx", 3),
    ("moby_dick_64k.txt.w64k-b4k.acx", 3),
    ("dna.fa.w64k-b4k.acx", 3),
    ("records.csv.w64k-b4k.acx", 3),
    ("moby_dick_64k.txt.l8-mm4.acx", 4),
    ("records.csv.l8-mm5-b4k.acx", 4),
    ("dna.fa.ctx.acx", 5),
    ("moby_dick_64k.txt.l9-mm4-ctx.acx", 5),
    ("ecoli_48k.fa.acx", 6),
    ("moby_dick_64k.txt.v2.acx", 2),
];

#[test]
fn pre_release_archives_are_refused_naming_their_version() {
    for (arc, version) in PRE_RELEASE {
        let old = golden(&format!("pre-release/{arc}"));
        assert_eq!(u16::from_le_bytes([old[4], old[5]]), version, "{arc}");
        let err = Archive::parse(&old).err().expect("refused");
        assert_eq!(
            err,
            FormatError::PreReleaseVersion { got: version },
            "{arc}"
        );
        let msg = err.to_string();
        assert!(
            msg.contains(&format!(
                "format version {version} is a pre-release version"
            )) && msg.contains("re-compress the original"),
            "{arc}: {msg}"
        );
    }
}

/// Format 1 changed the container only: the pre-release archives of versions 3 to 6 hold the
/// same table and data sections, byte for byte, and block entries of the same size, as the
/// format-1 archives of the same settings.
#[test]
fn pre_release_archives_hold_the_same_coded_streams() {
    for (arc, version) in PRE_RELEASE {
        if version == 2 {
            continue;
        }
        let old = golden(&format!("pre-release/{arc}"));
        let new = golden(arc);
        assert_eq!(old.len(), new.len(), "{arc}");
        let tail = |b: &[u8]| {
            let t = u64::from_le_bytes(b[48..56].try_into().unwrap());
            let d = u64::from_le_bytes(b[56..64].try_into().unwrap());
            b.len() - (t + d) as usize
        };
        assert_eq!(tail(&old), tail(&new), "{arc}");
        assert!(
            old[tail(&old)..] == new[tail(&new)..],
            "{arc}: tables and data"
        );
        assert_eq!(&old[6..85], &new[6..85], "{arc}: header fields");
    }
}

/// FORMAT.md §9.1, Example A: the 33-byte input at the encoder's defaults is a 248-byte
/// archive (a group this small takes no packed literal table, whose table would cost more
/// than it saves: `archive::PACK_MIN_LITERALS`).
#[test]
fn worked_example_a_at_the_defaults() {
    let a = compress_settings(
        b"abcabcabcabcabc hello hello hello",
        &Settings::default(),
        &|_| {},
    )
    .unwrap();
    assert_eq!(a.len(), 248);
    assert_eq!(u16::from_le_bytes([a[4], a[5]]), 1);
}

/// Parses the hex dump lines of FORMAT.md §9 (`0000: 41 43 ...`, comments after the bytes).
fn from_dump(dump: &str) -> Vec<u8> {
    dump.lines()
        .filter_map(|l| l.trim().split_once(": "))
        .flat_map(|(_, rest)| {
            rest.split_whitespace()
                .take_while(|w| w.len() == 2 && w.bytes().all(|c| c.is_ascii_hexdigit()))
                .map(|w| u8::from_str_radix(w, 16).unwrap())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// FORMAT.md §9.3, Example C, the hand-made archive as printed there: it decodes to its
/// 540 bytes (`abc hello` and the period `abc`).
#[test]
fn worked_example_c_decodes() {
    let bytes = from_dump(
        "0000: 41 43 50 58 01 00 01 00 1c 02 00 00 00 00 00 00
         0010: 00 10 00 00 01 00 00 00 00 01 00 00 01 00 00 00
         0020: 06 00 00 00 00 10 00 00 00 00 00 00 00 00 00 00
         0030: 05 00 00 00 00 00 00 00 1d 00 00 00 00 00 00 00
         0040: 63 bf 8c ac 55 37 90 54 20 20 20 20 20 20 20 20
         0050: 20 20 08 20 20 06 00 00 a5 41 33 0b f8 3a b6 0d
         0060: cc 72 91 d7 6c 9f b0 b6 0a 00 00 00 04 00 00 00
         0070: 04 00 00 00 0a 00 00 00 01 00 00 00 0a 00 00 00
         0080: 04 00 00 00 04 00 00 00 0a 00 00 00 01 00 00 00
         0090: 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
         00a0: 00 00 61 62 63 20 68 65 6c 6c 6f 20 97 02 c2 01
         00b0: 03 06 22 ac ff 02 c6 05 c0 80 00 c0 af fe 02",
    );
    assert_eq!(bytes.len(), 191);
    let mut want = b"abcabcabcabcabc hello hello hello abcabc".to_vec();
    while want.len() < 540 {
        want.push(want[want.len() - 3]);
    }
    let a = Archive::parse(&bytes).unwrap();
    assert!(decompress(&a).unwrap() == want);
}

/// FORMAT.md §9.4, Example D: the empty input's archive, byte for byte as printed there.
#[test]
fn worked_example_d_is_the_empty_inputs_archive() {
    let want = from_dump(
        "0000: 41 43 50 58 01 00 01 00 00 00 00 00 00 00 00 00
         0010: 00 40 00 00 00 00 00 00 40 00 00 00 00 00 00 00
         0020: 06 00 00 00 00 40 00 00 00 00 00 00 05 00 00 00
         0030: 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
         0040: c2 94 d3 38 05 80 06 2d 00 00 00 00 00 00 00 00
         0050: 00 00 00 00 00 06 00 00 b7 24 71 ed 4a 59 57 36",
    );
    assert_eq!(want.len(), 96);
    assert_eq!(
        compress_settings(b"", &Settings::default(), &|_| {}).unwrap(),
        want
    );
}

/// Writes `tests/golden/records.csv.ext.acx` from `records.csv.acx` (tests/golden/README.md):
/// `cargo test --test golden -- --ignored write_extension_golden`.
#[test]
#[ignore = "writes a golden archive, when regenerating: cargo test --test golden -- --ignored write_extension_golden"]
fn write_extension_golden() {
    let base = golden("records.csv.acx");
    let ext = format::with_extensions(
        &base,
        &[
            Extension {
                kind: 0x7001,
                flags: 0,
                payload: b"golden",
            },
            Extension {
                kind: 0x7002,
                flags: 0,
                payload: b"",
            },
        ],
    )
    .unwrap();
    let p: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "tests",
        "golden",
        "records.csv.ext.acx",
    ]
    .iter()
    .collect();
    std::fs::write(p, ext).unwrap();
}
