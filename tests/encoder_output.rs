//! The encoder's output under the public options, pinned: for small inputs and each target,
//! the XXH3-64 and length of the archive that `encode::compress` writes (the container
//! without the extension records that `aceapex::compress` adds). The golden archives
//! (tests/golden.rs) pin the codings one by one through `Settings`; these pin the choices the
//! options make on top of them (the minimum-match trial, two-bit literal slices kept or
//! reverted, wide slices and the repack of the longest groups), so that a change meant only
//! to speed the encoder up shows here if it changed a byte. If an output change is intended,
//! the failure message lists the new values.

use aceapex::encode::compress;
use aceapex::{decompress, Options, Target};
use std::path::PathBuf;
use xxhash_rust::xxh3::xxh3_64;

fn golden(name: &str) -> Vec<u8> {
    let p: PathBuf = [env!("CARGO_MANIFEST_DIR"), "tests", "golden", name]
        .iter()
        .collect();
    std::fs::read(&p).unwrap_or_else(|e| panic!("reading {}: {e}", p.display()))
}

/// A 3 MiB single-sequence FASTA file (three table groups, 192 blocks of 16 KiB, within the
/// wide-slice limit): upper-case bases with mutated repeats in the first 2 MiB, then
/// soft-masked (lower-case) stretches, an N run, 60 bases a line. Its own xorshift, so that the
/// bytes never change with the crate.
fn synthetic_genome() -> Vec<u8> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let n = 3_000_000usize;
    let mut seq: Vec<u8> = Vec::with_capacity(n);
    while seq.len() < n {
        let r = next();
        if seq.len() > 10_000 && r % 8 == 0 {
            // a repeat of 50-550 bases from earlier, one base in 32 changed
            let len = 50 + (r >> 8) as usize % 500;
            let from = (r >> 20) as usize % (seq.len() - len);
            for i in 0..len {
                let b = seq[from + i];
                seq.push(match next() % 32 {
                    0 => b"ACGT"[(next() % 4) as usize],
                    _ => b,
                });
            }
        } else {
            seq.extend((0..40).map(|_| b"ACGT"[(next() % 4) as usize]));
        }
    }
    seq.truncate(n);
    seq[1_500_000..1_502_000].fill(b'N');
    for (i, b) in seq.iter_mut().enumerate().skip(2 << 20) {
        if (i / 5000) % 3 == 1 {
            b.make_ascii_lowercase();
        }
    }
    let mut data = b">chrT synthetic test sequence\n".to_vec();
    for line in seq.chunks(60) {
        data.extend_from_slice(line);
        data.push(b'\n');
    }
    data
}

/// (input, options label, XXH3-64 of the archive, archive length), for every input and the
/// options of [`options`].
const PINNED: &[(&str, &str, u64, usize)] = &[
    ("ecoli_48k.fa", "default", 0xd50b8ba66d0dda37, 12880),
    ("ecoli_48k.fa", "gpu", 0x7fc8d7a4044f2539, 12870),
    ("ecoli_48k.fa", "l5", 0x51e4bd708b206563, 12684),
    ("ecoli_48k.fa", "l1-gpu", 0x3bd88f2f043e627e, 12865),
    ("dna.fa", "default", 0xccfec89a2923a15e, 18522),
    ("dna.fa", "gpu", 0x06e204717ab45f05, 17750),
    ("dna.fa", "l5", 0xb9d2d6c7e0507b91, 18487),
    ("dna.fa", "l1-gpu", 0xf90d22cfc64f7415, 16705),
    ("moby_dick_64k.txt", "default", 0x274289a70edff66f, 30681),
    ("moby_dick_64k.txt", "gpu", 0x161e8799f788a80f, 34930),
    ("moby_dick_64k.txt", "l5", 0x3c4ba8c996eb1eed, 31397),
    ("moby_dick_64k.txt", "l1-gpu", 0x47b7cc7610e88ae4, 36635),
    ("records.csv", "default", 0xd35b15be4c3fbdd3, 16669),
    ("records.csv", "gpu", 0x5427cf501216a9bb, 20918),
    ("records.csv", "l5", 0xe827304208292be4, 17020),
    ("records.csv", "l1-gpu", 0x4d91d2c77b375dc8, 23030),
    ("synthetic_genome", "default", 0x263395d973c3c346, 773847),
    ("synthetic_genome", "gpu", 0xff4d70bd9b8ad400, 800217),
    ("synthetic_genome", "l5", 0xe790c53767855dcc, 767951),
    ("synthetic_genome", "l1-gpu", 0x847853a936b92830, 790420),
];

fn options() -> Vec<(&'static str, Options)> {
    vec![
        ("default", Options::new()),
        ("gpu", Options::new().with_target(Target::Gpu)),
        ("l5", Options::new().with_level(5)),
        (
            "l1-gpu",
            Options::new().with_level(1).with_target(Target::Gpu),
        ),
    ]
}

#[test]
fn encoder_output_is_pinned() {
    let inputs: Vec<(&str, Vec<u8>)> = vec![
        ("ecoli_48k.fa", golden("ecoli_48k.fa")),
        ("dna.fa", golden("dna.fa")),
        ("moby_dick_64k.txt", golden("moby_dick_64k.txt")),
        ("records.csv", golden("records.csv")),
        ("synthetic_genome", synthetic_genome()),
    ];
    let mut got = Vec::new();
    for (name, data) in &inputs {
        for (label, opts) in options() {
            let a = compress(data, &opts, &|_| {}).unwrap();
            assert!(decompress(&a).unwrap() == *data, "{name} {label}");
            got.push((*name, label, xxh3_64(&a), a.len()));
        }
    }
    let want: Vec<(&str, &str, u64, usize)> = PINNED.to_vec();
    if got != want {
        let lines: String = (got.iter())
            .map(|(n, l, h, len)| format!("    (\"{n}\", \"{l}\", 0x{h:016x}, {len}),\n"))
            .collect();
        panic!("the encoder's output changed; now:\n{lines}");
    }
}
