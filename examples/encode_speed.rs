//! Single-thread encode speed per file: the whole `compress` (match layer, entropy coding,
//! checksums) under `Target::Size`, the same under `Target::Gpu` (alternated with it),
//! and the match layer alone, in thread CPU time (robust against other processes
//! on a shared machine), plus the archive ratio. Every archive is decoded and compared.
//!
//! ```text
//! cargo run --release --example encode_speed -- [FILE...] [--mb 16] [--levels 6] [--runs 3]
//! ```
//! Without files it uses the six files of `benches/codec.rs` under `corpora/`. Each number is
//! the best of `--runs` runs (CPU time of the one worker thread, from
//! `/proc/thread-self/schedstat`; wall time where that is unavailable).

use std::time::Instant;

use aceapex::encode::compress;
use aceapex::encode::lz::{parse_segment, ParseParams};
use aceapex::format::Archive;
use aceapex::{decode, Options, Target};

/// Nanoseconds this thread has run on a CPU (Linux schedstat), if available.
fn thread_cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

/// Seconds `f` takes on the current thread (CPU time if available, else wall time).
fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let c0 = thread_cpu_ns();
    let t = Instant::now();
    let r = f();
    let wall = t.elapsed().as_secs_f64();
    let s = match (c0, thread_cpu_ns()) {
        (Some(a), Some(b)) => (b - a) as f64 / 1e9,
        _ => wall,
    };
    (r, s)
}

/// Single-thread encode speed per file (see the module docs).
#[derive(clap::Parser)]
struct Args {
    /// Files to compress (default: the CPU benchmark files under `corpora/`).
    files: Vec<String>,
    /// MiB of each file to use.
    #[arg(long, default_value_t = 16)]
    mb: usize,
    /// Levels to measure, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "6")]
    levels: Vec<u32>,
    /// Runs per measurement (the best is reported).
    #[arg(long, default_value_t = 3)]
    runs: usize,
}

fn main() {
    let Args {
        mut files,
        mb,
        levels,
        runs,
    } = <Args as clap::Parser>::parse();
    if files.is_empty() {
        files = aceapex::CPU_BENCH_FILES
            .iter()
            .map(|s| format!("corpora/{s}"))
            .collect();
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("rayon pool");
    println!("first {mb} MiB per file, 1 thread, best of {runs} (thread CPU time)");
    for f in &files {
        let mut data = match std::fs::read(f) {
            Ok(d) => d,
            Err(e) => {
                println!("NOTE: skipping {f} ({e})");
                continue;
            }
        };
        data.truncate(mb << 20);
        let n = data.len();
        let name = std::path::Path::new(f)
            .file_name()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_default();
        for &level in &levels {
            let opts = Options::new().with_level(level);
            // the same for the GPU, alternated with it
            let plain = opts.clone().with_target(Target::Gpu);
            let params = ParseParams::with_level(level);
            let bs = opts.block_size as usize;
            let mut best_full = f64::INFINITY;
            let mut best_plain = f64::INFINITY;
            let mut best_parse = f64::INFINITY;
            let mut archive = Vec::new();
            for _ in 0..runs {
                let (a, s) = pool.install(|| timed(|| compress(&data, &opts, &|_| {})));
                archive = a.expect("compress");
                best_full = best_full.min(s);
                let (_, s) = pool.install(|| timed(|| compress(&data, &plain, &|_| {})));
                best_plain = best_plain.min(s);
                let (_, s) = pool.install(|| {
                    timed(|| {
                        let mut m = 0u64;
                        for b in (0..n).step_by(bs) {
                            for p in parse_segment(&data, b..(b + bs).min(n), bs, &params) {
                                m += p.matches as u64;
                            }
                        }
                        m
                    })
                });
                best_parse = best_parse.min(s);
            }
            let mut out = vec![0u8; n];
            let a = Archive::parse(&archive).expect("archive parses");
            decode::decompress_into(&a, &mut out, &|_| {}).expect("archive decodes");
            assert!(out == data, "{name}: round trip mismatch");
            println!(
                "{name:<40} L{level} bytes={n:>9} archive={:>9} ratio={:>6.3} encode={:>6.1} MB/s (target gpu {:>6.1}) parse={:>6.1} MB/s",
                archive.len(),
                n as f64 / archive.len() as f64,
                n as f64 / best_full / 1e6,
                n as f64 / best_plain / 1e6,
                n as f64 / best_parse / 1e6,
            );
        }
    }
}
