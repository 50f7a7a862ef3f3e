//! The CPU hostile-archive campaign (docs/RELIABILITY.md): mutated archives of real files,
//! their checksums recomputed, each of which must be rejected with a clean error or decode
//! to the bytes the checks demand.
//!
//! Run: `cargo run --release --example hostile_campaign -- [N] [SEED] [--seeds DIR]`
//! (N mutants, default 10,000; SEED default 1). The base archives are the golden archives
//! of tests/golden and archives made here of the golden originals and, where
//! `corpora/` (or `/work/corpora`) holds them, the first 256 KiB of the six benchmark
//! corpus files, under several option sets (levels, small blocks, cross-block windows,
//! raw match streams, wide lanes, two-bit literals).
//!
//! Each mutant is [`checks::mutate`]d from a base by a random script of up to 8 operations
//! anywhere in the archive or, for every other pair of mutants, of bytes of the data section
//! alone (which then pass the parse and reach the block layers). Half of them get only
//! their meta checksum recomputed (they reach the block layers; an `Ok` decode must equal
//! the base's original); the other half get their block and content checksums recomputed
//! from the reference decoder too ([`checks::reseal_blocks`]: a mutation that still decodes
//! is accepted, and every decode path must give the reference decoder's bytes). Either way
//! [`checks::check_archive`] runs the whole decode, `Reader` and four region reads. A panic
//! is counted, its archive written to the temporary directory, and the campaign goes on;
//! the exit status is 1 when any check panicked.
//!
//! `--seeds DIR` also writes the first 200 mutants that parse to `DIR` (a seed corpus for
//! the `decode` fuzz target).

#[path = "../fuzz/src/lib.rs"]
mod checks;

use checks::Cursor;
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;

/// SplitMix64, for the mutation scripts.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// Option sets (the 8 bytes [`checks::options_from`] reads) the corpus samples are
/// compressed under: defaults-like level 5, level 9 with short matches, level 6 with raw
/// match streams, wide lanes and two-bit literals, level 3 with 4 KiB blocks and a
/// cross-block window, level 2 raw with a depth cap.
const OPTION_SETS: &[[u8; 8]] = &[
    [4, 2, 0, 2, 0b0000_0111, 0, 0, 0],
    [8, 2, 0, 0, 0b0000_0111, 0, 0, 0],
    [5, 2, 0, 2, 0b0011_1111, 0, 0, 0],
    [2, 0, 3, 2, 0b0010_0111, 0, 1, 0],
    [1, 1, 0, 2, 0b0000_1001, 4, 0, 0],
];

const CORPUS_FILES: &[&str] = &[
    "dna/hs37_chrX_first70Mb.fa",
    "dna/TAIR10_chr1.fna",
    "text/gcide.txt",
    "text/moby_dick.txt",
    "fastq/mouse_RNAseq_top100k_1.fq",
    "protein/swissprot201401_GO_BPO.fasta",
];

/// Bytes of each corpus sample.
const SAMPLE: usize = 256 << 10;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let seeds_dir = args.iter().position(|a| a == "--seeds").map(|i| {
        let d = args.get(i + 1).cloned().expect("--seeds DIR");
        args.drain(i..i + 2);
        std::path::PathBuf::from(d)
    });
    let n: usize = args.first().map_or(10_000, |s| s.parse().expect("N"));
    let seed: u64 = args.get(1).map_or(1, |s| s.parse().expect("SEED"));

    // base archives with their originals
    let mut bases: Vec<(String, Vec<u8>, Vec<u8>)> = checks::bases()
        .iter()
        .enumerate()
        .map(|(i, (a, o))| (format!("golden#{i}"), a.clone(), o.to_vec()))
        .collect();
    let root = ["corpora", "/work/corpora"]
        .into_iter()
        .map(std::path::Path::new)
        .find(|p| p.is_dir());
    for f in CORPUS_FILES {
        let Some(data) = root.and_then(|r| std::fs::read(r.join(f)).ok()) else {
            eprintln!("{f}: not found, skipped");
            continue;
        };
        let data = data[..data.len().min(SAMPLE)].to_vec();
        for (k, set) in OPTION_SETS.iter().enumerate() {
            let o = checks::options_from(&mut Cursor(set));
            let a = aceapex::compress_settings(&data, &o, &|_| {}).expect("valid options compress");
            bases.push((format!("{f}#{k}"), a, data.clone()));
        }
    }
    eprintln!("{} base archives", bases.len());
    if let Some(d) = &seeds_dir {
        std::fs::create_dir_all(d).expect("seed directory");
    }

    // the panic hook stays quiet: panics are counted and saved
    std::panic::set_hook(Box::new(|_| {}));
    let mut r = Rng(seed);
    let mut outcome: BTreeMap<String, usize> = BTreeMap::new();
    let mut panics = 0usize;
    let mut seeds_written = 0usize;
    let t = Instant::now();
    for it in 0..n {
        let (name, base, original) = &bases[(r.next() % bases.len() as u64) as usize];
        let mut script: Vec<u8> = (0..64).map(|_| r.next() as u8).collect();
        let full = it % 2 == 1;
        let data_only = it / 2 % 2 == 1;
        if data_only {
            // up to 8 operations, each a byte of the data section XORed (operation 9,
            // section 3 of `checks::mutate`), so the mutant passes the parse
            for op in script[1..].chunks_mut(7) {
                op[0] = 9;
                if op.len() > 1 {
                    op[1] = 3;
                }
            }
        }
        let mut m = checks::mutate(base, &mut Cursor(&script));
        checks::reseal_meta(&mut m);
        let res = catch_unwind(AssertUnwindSafe(|| {
            let mut m = m.clone();
            let want = if full {
                checks::reseal_blocks(&mut m)
            } else {
                None
            };
            let ranges: Vec<u8> = (0..48).map(|k| script[k % 64] ^ k as u8).collect();
            checks::check_archive(&m, &mut Cursor(&ranges), (!full).then_some(&original[..]));
            (classify(&m, original, want.as_deref()), m)
        }));
        match res {
            Ok((class, m)) => {
                if let Some(d) = &seeds_dir {
                    if seeds_written < 200 && class != "parse error" {
                        std::fs::write(d.join(format!("mutant-{seed}-{it}.acx")), &m)
                            .expect("seed");
                        seeds_written += 1;
                    }
                }
                let key = format!(
                    "{}, {} / {class}",
                    if data_only {
                        "data section"
                    } else {
                        "anywhere"
                    },
                    if full {
                        "blocks resealed"
                    } else {
                        "meta resealed"
                    }
                );
                *outcome.entry(key).or_default() += 1;
            }
            Err(e) => {
                panics += 1;
                let msg = e
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                let path = std::env::temp_dir().join(format!("hostile-{seed}-{it}.acx"));
                std::fs::write(&path, &m).expect("save");
                eprintln!(
                    "PANIC {it} ({name}, full reseal {full}): {msg}; saved {}",
                    path.display()
                );
            }
        }
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "{n} mutants of {} bases, seed {seed}, {secs:.1} s",
        bases.len()
    );
    for (k, v) in &outcome {
        println!("  {k}: {v}");
    }
    println!("  panics (a check failed or the decoder panicked): {panics}");
    if panics > 0 {
        std::process::exit(1);
    }
}

/// The outcome of a mutant, for the tally: the error's kind (a format error, or a block's
/// status), or how it decoded.
fn classify(m: &[u8], original: &[u8], want: Option<&[u8]>) -> String {
    match aceapex::decompress(m) {
        Err(aceapex::Error::Format(_)) => "parse error".into(),
        Err(aceapex::Error::Decode(aceapex::DecodeError::Block { status, .. })) => {
            format!("block error: {status:?}")
        }
        Err(aceapex::Error::Decode(e)) => format!("decode error: {}", short(&e.to_string())),
        Err(e) => format!("other error: {}", short(&e.to_string())),
        Ok(out) if out == original => "decoded, the original's bytes".into(),
        Ok(out) if Some(&out[..]) == want => {
            "decoded, the reference decoder's (changed) bytes".into()
        }
        Ok(_) => "decoded, other bytes".into(),
    }
}

fn short(s: &str) -> String {
    s.split(':').next().unwrap_or(s).to_string()
}
