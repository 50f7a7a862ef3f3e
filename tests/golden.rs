//! Golden archives (tests/golden/README.md): committed archives decode to their committed
//! originals, and re-compressing an original with the same settings reproduces its archive
//! byte for byte. A failure here means the format or the encoder output changed; if that was
//! intended, regenerate the archives as the README says.

use aceapex::archive::Archive;
use aceapex::{compress_settings, decompress, extract, Settings, TwoBit};
use std::path::PathBuf;

const ORIGINALS: [&str; 3] = ["moby_dick_64k.txt", "dna.fa", "records.csv"];

fn golden(name: &str) -> Vec<u8> {
    let p: PathBuf = [env!("CARGO_MANIFEST_DIR"), "tests", "golden", name]
        .iter()
        .collect();
    std::fs::read(&p).unwrap_or_else(|e| panic!("reading {}: {e}", p.display()))
}

/// The CLI's defaults of before version 5, spelled out (not `Settings::default()`, so a
/// changed default also shows up here): the version-3 and version-4 archives are made
/// without context tables and packed literals (`--no-context --no-pack`).
fn default_settings() -> Settings {
    Settings {
        level: 5,
        block_size: 16384,
        window: None,
        min_match: 6,
        repeat_codes: true,
        depth_cap: 0,
        context_tables: false,
        packed_literals: false,
        raw_match_streams: false,
        wide_lanes: false,
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

/// The version-4 archives (match base below 6, FORMAT.md §2): `-l 8 --min-match 4` of the
/// text and `-l 8 --min-match 5 --block-size 4K` of the records.
fn variants_v4() -> Vec<(String, String, Settings)> {
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

/// The version-5 archives (context tables, FORMAT.md §5.4): the DNA at the CLI's defaults
/// and the text at `-l 9 --min-match 4`.
fn variants_v5() -> Vec<(String, String, Settings)> {
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

/// The version-6 archive (packed literal tables, FORMAT.md §5.6): a real genome sample at the
/// CLI's defaults.
fn variants_v6() -> Vec<(String, String, Settings)> {
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

/// Every committed archive of the current encoder, versions 3 to 6 (version 7, wide slices,
/// is covered by tests/attack_v7.rs and the archive tests).
fn all_variants() -> Vec<(String, String, Settings)> {
    let mut v = variants();
    v.extend(variants_v4());
    v.extend(variants_v5());
    v.extend(variants_v6());
    v
}

#[test]
fn version_6_golden_archive_has_packed_literals() {
    for (orig, arc, opts) in variants_v6() {
        let archive = golden(&arc);
        let a = Archive::parse(&archive).unwrap_or_else(|e| panic!("{arc}: {e}"));
        assert_eq!(a.header.version, 6, "{arc}");
        // one group (48 KiB), its literals ACGT and newline: five letters, three per symbol
        assert_eq!(a.tables.len(), 1, "{arc}");
        let t = a.tables[0][0].as_ref().expect("a literal table");
        assert!(t.is_packed(), "{arc}: literal table not packed");
        assert_eq!(a.literal_width(0), 3, "{arc}");
        assert_eq!(
            t.record().alphabet.as_deref(),
            Some(&b"\nACGT"[..]),
            "{arc}: alphabet"
        );
        // the same settings without packed literals: an older version, larger
        let plain = compress_settings(
            &golden(&orig),
            &Settings {
                packed_literals: false,
                ..opts
            },
            &|_| {},
        )
        .unwrap();
        assert!(plain[4] < 6 && plain.len() > archive.len(), "{arc}");
    }
}

#[test]
fn version_5_golden_archives_have_context_pairs() {
    for (_, arc, opts) in variants_v5() {
        let archive = golden(&arc);
        let a = Archive::parse(&archive).unwrap_or_else(|e| panic!("{arc}: {e}"));
        assert_eq!(a.header.version, 5, "{arc}");
        assert_eq!(a.header.match_base(), opts.min_match.min(6), "{arc}");
        let pairs = a
            .tables
            .iter()
            .flatten()
            .flatten()
            .filter(|t| t.has_context())
            .count();
        assert!(pairs > 0, "{arc}: no context pair");
        // the same settings without context tables: an older version, larger
        let plain = compress_settings(
            &golden(&arc.replace(".ctx.acx", "").replace(".l9-mm4-ctx.acx", "")),
            &Settings {
                context_tables: false,
                ..opts
            },
            &|_| {},
        )
        .unwrap();
        assert!(plain[4] < 5 && plain.len() > archive.len(), "{arc}");
    }
}

#[test]
fn version_4_golden_archives_declare_their_base() {
    for (_, arc, opts) in variants_v4() {
        let archive = golden(&arc);
        let a = Archive::parse(&archive).unwrap_or_else(|e| panic!("{arc}: {e}"));
        assert_eq!(a.header.version, 4, "{arc}");
        assert_eq!(a.header.match_base(), opts.min_match, "{arc}");
        assert_eq!(archive[85] as u32, opts.min_match, "{arc}: header byte 85");
    }
    for (_, arc, _) in variants() {
        let a = golden(&arc);
        assert_eq!(u16::from_le_bytes([a[4], a[5]]), 3, "{arc}");
        assert_eq!(a[85], 0, "{arc}: header byte 85");
    }
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
        assert_eq!(a.header.original_size, original.len() as u64, "{arc}");
        assert_eq!(a.header.block_size, opts.block_size, "{arc}");
        assert_eq!(
            a.header.window,
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

/// The version-2 archives of these originals (FORMAT.md §10: 64-byte block entries), made by
/// the encoder before version 3, in `tests/golden/v2/`.
fn golden_v2(name: &str) -> Vec<u8> {
    golden(&format!("v2/{name}"))
}

#[test]
fn version_2_archives_still_decode() {
    for (orig, arc, _) in variants() {
        let original = golden(&orig);
        let old = golden_v2(&arc);
        let a = Archive::parse(&old).unwrap_or_else(|e| panic!("v2/{arc}: {e}"));
        assert_eq!(a.header.version, 2, "v2/{arc}");
        let out = decompress(&a).unwrap_or_else(|e| panic!("v2/{arc}: {e}"));
        assert!(out == original, "v2/{arc} does not decode to {orig}");
    }
}

#[test]
fn version_3_differs_from_version_2_only_in_the_block_table() {
    // level 5 at 16 KiB blocks parses and codes as it did when the version-2 archives were
    // made, so the packed entries must expand to the same entries and the tables and data
    // must be the same bytes (4 KiB blocks now get more rANS lanes, `symbols_per_lane`)
    for (orig, arc, opts) in variants() {
        if opts.block_size < 16384 {
            continue;
        }
        // the version-3 archive as the encoder made it then: `v3/` where its output has
        // changed since (lane counts: records.csv.acx in the fifteenth session, dna.fa.acx and
        // moby_dick_64k.txt.acx in the twenty-second), else the current
        let pinned = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/golden/v3")
            .join(&arc);
        let new = if pinned.exists() {
            golden(&format!("v3/{arc}"))
        } else {
            golden(&arc)
        };
        let old = golden_v2(&arc);
        let (a3, a2) = (Archive::parse(&new).unwrap(), Archive::parse(&old).unwrap());
        assert_eq!(a3.header.version, 3, "{arc}");
        let out = decompress(&a3).unwrap_or_else(|e| panic!("{arc} (version 3): {e}"));
        assert!(
            out == golden(&orig),
            "{arc} (version 3) does not decode to {orig}"
        );
        assert_eq!(a3.entries, a2.entries, "{arc}: entries");
        assert_eq!(a3.data, a2.data, "{arc}: data section");
        let t3 = &new[new.len() - a3.data.len() - a3.header.table_bytes as usize..];
        let t2 = &old[old.len() - a2.data.len() - a2.header.table_bytes as usize..];
        assert_eq!(t3, t2, "{arc}: tables and data");
        // a version-2 entry is 64 bytes; the packed ones must be smaller here
        let bt3 = new.len() - 96 - t3.len();
        let bt2 = old.len() - 96 - t2.len();
        assert_eq!(bt2, 64 * a2.entries.len(), "{arc}");
        assert!(
            bt3 < bt2 / 2,
            "{arc}: packed block table {bt3} bytes, v2 {bt2}"
        );
    }
}

/// FORMAT.md §9.1, Example A: the 33-byte input at the encoder's defaults is a 248-byte
/// version-3 archive (a group this small takes no packed literal table, whose table would
/// cost more than it saves: `archive::PACK_MIN_LITERALS`).
#[test]
fn worked_example_a_at_the_defaults() {
    let a = compress_settings(
        b"abcabcabcabcabc hello hello hello",
        &Settings::default(),
        &|_| {},
    )
    .unwrap();
    assert_eq!(a.len(), 248);
    assert_eq!(u16::from_le_bytes([a[4], a[5]]), 3);
}
