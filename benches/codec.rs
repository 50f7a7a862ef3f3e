//! CPU codec throughput on real corpora: encode (default level, one thread) and decode (one
//! thread, and all threads of the machine), in original bytes per second.
//!
//! Run: `cargo bench --bench codec` (a filter argument works as usual, e.g. `-- decode_1t`).
//! Each corpus is cut to its first [`INPUT_BYTES`] so the whole run stays within a few
//! minutes. Files come from `$ACEAPEX_BENCH_DIR` (default `corpora` in the repository root);
//! missing files are skipped with a note. Besides criterion's report, one `SUMMARY` line per
//! file gives the ratio and best-of-N throughputs measured outside criterion.
//! `ACEAPEX_BENCH_ONLY=<substring>` keeps only the corpus files whose path contains it.

use aceapex::decode;
use aceapex::encode::compress;
use aceapex::format::Archive;
use aceapex::Options;
use criterion::{BenchmarkId, Criterion, Throughput};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Corpus files, relative to the bench directory.
const FILES: &[&str] = aceapex::CPU_BENCH_FILES;

/// Bytes of each corpus used (its first 16 MB).
const INPUT_BYTES: usize = 16 << 20;

/// Best-of runs for the `SUMMARY` decode numbers.
const SUMMARY_DECODE_RUNS: usize = 5;

struct Case {
    name: String,
    input: Vec<u8>,
    archive: Vec<u8>,
    encode_s: f64,
}

fn bench_dir() -> PathBuf {
    match std::env::var_os("ACEAPEX_BENCH_DIR") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpora"),
    }
}

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("rayon pool")
}

fn mbps(bytes: usize, secs: f64) -> f64 {
    bytes as f64 / secs / 1e6
}

/// Decodes `archive` into `out` once; panics on a decode error (a bench must not lie).
fn decode_once(archive: &[u8], out: &mut [u8]) {
    let a = Archive::parse(archive).expect("archive parses");
    decode::decompress_into(&a, out, &|_| {}).expect("archive decodes");
}

fn best_decode_secs(p: &rayon::ThreadPool, archive: &[u8], out: &mut [u8]) -> f64 {
    (0..SUMMARY_DECODE_RUNS)
        .map(|_| {
            let t = Instant::now();
            p.install(|| decode_once(archive, out));
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn load_cases(one: &rayon::ThreadPool) -> Vec<Case> {
    let dir = bench_dir();
    let opts = Options::default();
    let only = std::env::var("ACEAPEX_BENCH_ONLY").ok();
    let mut cases = Vec::new();
    for f in FILES
        .iter()
        .filter(|f| only.as_deref().is_none_or(|o| f.contains(o)))
    {
        let path = dir.join(f);
        let mut input = match std::fs::read(&path) {
            Ok(d) => d,
            Err(e) => {
                println!("NOTE: skipping {} ({e})", path.display());
                continue;
            }
        };
        input.truncate(INPUT_BYTES);
        let t = Instant::now();
        let archive = one
            .install(|| compress(&input, &opts, &|_| {}))
            .expect("compress");
        let encode_s = t.elapsed().as_secs_f64();
        let name = f.rsplit('/').next().unwrap_or(f).to_string();
        cases.push(Case {
            name,
            input,
            archive,
            encode_s,
        });
    }
    cases
}

fn main() {
    let one = pool(1);
    let all_threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let all = pool(all_threads);
    let cases = load_cases(&one);

    // Correctness and the summary first: a fast but wrong decoder must not produce numbers.
    for c in &cases {
        let mut out = vec![0u8; c.input.len()];
        decode_once(&c.archive, &mut out);
        assert!(
            out == c.input,
            "{}: decoded bytes differ from the input",
            c.name
        );
        let d1 = best_decode_secs(&one, &c.archive, &mut out);
        let dn = best_decode_secs(&all, &c.archive, &mut out);
        println!(
            "SUMMARY {:<40} bytes={:>9} ratio={:>6.3} encode_1t={:>7.1} MB/s decode_1t={:>7.1} MB/s decode_{}t={:>7.1} MB/s",
            c.name,
            c.input.len(),
            c.input.len() as f64 / c.archive.len() as f64,
            mbps(c.input.len(), c.encode_s),
            mbps(c.input.len(), d1),
            all_threads,
            mbps(c.input.len(), dn),
        );
    }

    let mut crit = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();

    {
        let mut g = crit.benchmark_group("encode_1t");
        // one compression of 16 MB takes about a second: keep the sample count minimal
        g.sample_size(10)
            .measurement_time(Duration::from_secs(1))
            .warm_up_time(Duration::from_millis(1));
        for c in &cases {
            g.throughput(Throughput::Bytes(c.input.len() as u64));
            let opts = Options::default();
            g.bench_function(BenchmarkId::from_parameter(&c.name), |b| {
                b.iter(|| {
                    one.install(|| compress(&c.input, &opts, &|_| {}))
                        .expect("compress")
                })
            });
        }
        g.finish();
    }
    for (group, p) in [
        ("decode_1t".to_string(), &one),
        (format!("decode_{all_threads}t"), &all),
    ] {
        let mut g = crit.benchmark_group(group);
        for c in &cases {
            g.throughput(Throughput::Bytes(c.input.len() as u64));
            let mut out = vec![0u8; c.input.len()];
            g.bench_function(BenchmarkId::from_parameter(&c.name), |b| {
                b.iter(|| p.install(|| decode_once(&c.archive, &mut out)))
            });
        }
        g.finish();
    }
    crit.final_summary();
}
