//! Writes a synthetic genome of any size, made of real ones, as FASTA to standard output:
//! the records of the source FASTA files concatenated and repeated, every repeat after the
//! first with point mutations (about one substitution per 1,024 bases, placed by a keyed
//! hash so that any byte range can be regenerated alone), headers `>rep{r}_{name}`, each
//! record at its source's line width. The layout is described in `examples/synth/genome.rs`;
//! `scale_check` regenerates any range of it to check an archive of it.
//!
//! Run: `cargo run --release --example synth_genome -- [--size 50G] [--seed 1] [-j THREADS]
//! [-o FILE] FASTA...` (`--size`: at most this many bytes, cut at a line end; suffixes K, M,
//! G, T binary, KB, MB, GB, TB decimal; `-j`: threads making the bytes, default all cores;
//! `--info`: print the size and repeat layout instead of the bytes).
//!
//! Errors (a message and exit status 2): a source that cannot be read or holds no sequence,
//! a bad option; a write error (a closed pipe included) ends it with status 1.

#[allow(dead_code)]
#[path = "synth/genome.rs"]
mod genome;

// the command line's size parser, so that sizes read as `aceapex` reads them
#[allow(dead_code, unused_imports, unused_macros)]
#[path = "../host/cli/args.rs"]
mod args;

use args::parse_size;
use genome::Synth;
use std::io::Write;
use std::time::Instant;

/// Bytes each thread makes at a time.
const CHUNK: usize = 8 << 20;

fn usage(msg: &str) -> ! {
    eprintln!("synth_genome: {msg}");
    eprintln!(
        "usage: synth_genome [--size 50G] [--seed 1] [-j THREADS] [-o FILE] [--info] FASTA..."
    );
    std::process::exit(2)
}

fn main() {
    let mut size = 50u64 << 30;
    let mut seed = 1u64;
    let mut threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut out: Option<String> = None;
    let mut info = false;
    let mut sources: Vec<String> = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .unwrap_or_else(|| usage(&format!("{name} needs a value")))
        };
        match a.as_str() {
            "--size" => size = parse_size(&value("--size")).unwrap_or_else(|e| usage(&e)),
            "--seed" => {
                seed = value("--seed")
                    .parse()
                    .unwrap_or_else(|_| usage("--seed takes an integer"))
            }
            "-j" | "--threads" => {
                threads = value("-j")
                    .parse()
                    .ok()
                    .filter(|&n| n > 0)
                    .unwrap_or_else(|| usage("-j takes a positive integer"))
            }
            "-o" | "--output" => out = Some(value("-o")),
            "--info" => info = true,
            "-h" | "--help" => {
                println!("usage: synth_genome [--size 50G] [--seed 1] [-j THREADS] [-o FILE] [--info] FASTA...");
                return;
            }
            _ if a.starts_with('-') && a != "-" => usage(&format!("unknown option {a}")),
            _ => sources.push(a),
        }
    }
    if sources.is_empty() {
        usage("no source FASTA file");
    }
    let synth = Synth::from_files(&sources, size, seed).unwrap_or_else(|e| usage(&e));
    if info {
        println!(
            "bytes={} records={} repeat_bytes={} seed={seed}",
            synth.len(),
            synth.records(),
            synth.repeat_bytes()
        );
        return;
    }
    let t = Instant::now();
    let result = match &out {
        Some(path) => std::fs::File::create(path)
            .and_then(|f| synth.write_to(&mut std::io::BufWriter::new(f), threads, CHUNK)),
        None => synth.write_to(&mut std::io::stdout().lock(), threads, CHUNK),
    };
    if let Err(e) = result {
        eprintln!("synth_genome: writing: {e}");
        std::process::exit(1);
    }
    let s = t.elapsed().as_secs_f64();
    let _ = writeln!(
        std::io::stderr(),
        "synth_genome: {} bytes in {s:.2} s ({:.0} MB/s, {threads} threads)",
        synth.len(),
        synth.len() as f64 / s / 1e6
    );
}
