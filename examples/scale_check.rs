//! The scale test of random access: an archive of a large synthetic genome (made by
//! `synth_genome`) read at positions spread over the whole file, every byte read compared with
//! the generator's own bytes for that range, and the latency per position printed as one
//! table, so that whether position changes the latency can be judged.
//!
//! Run: `cargo run --release --example scale_check -- ARCHIVE FASTA... [--seed 1]
//! [--device gpu|cpu] [--positions 64] [--span 1G] [--requests 200] [--tiles 1000]
//! [--windows 100000] [--reps 3]`. The FASTA files and seed must be those `synth_genome` was
//! given (its size is the archive's original size).
//!
//! - `--device gpu` (default): the archive is memory-mapped, uploaded once
//!   (`GpuArchive::upload`, what `GpuDecoder::upload` does; upload time and resident bytes are
//!   printed) and read from device memory into a device buffer; each read is one submission
//!   whose per-range status words (the device's XXH3-64 check of every block read) come back.
//!   Ranges in blocks the dense kernel cannot take (`Fallback`) are read on the CPU and
//!   counted apart, as `GpuReader::read_ranges` does.
//! - `--device cpu`: the CPU [`aceapex::Reader`] on the memory-mapped archive, one thread.
//!
//! At each of `--positions` places (the first at byte 0, the last ending at the end, evenly
//! spaced between) a span of `--span` bytes: (a) `--requests` requests of one aligned 16 KiB
//! tile at a random place in the span, each timed alone, wall clock around the read (the
//! bytes land in the output buffer; the copy back for the check is not timed): p50, p99;
//! (b) one request of `--tiles` random aligned 16 KiB tiles and one of `--windows` random
//! 8 KiB windows in the span, each the median of `--reps` runs (windows/s, GB/s of window
//! bytes; on the GPU also the windows' plan alone, the host's part of the request). Every
//! tile and window is copied back and compared with the generator's bytes.
//!
//! Prints a line per position (`GB` is the position's first byte in units of 10^9 bytes) and
//! totals; exits with status 1 on any mismatch, bad block status or read error, 2 on bad
//! usage or an archive that is not the generator's output.

#[allow(dead_code)]
#[path = "synth/genome.rs"]
mod genome;

// the command line's size parser, so that sizes read as `aceapex` reads them
#[allow(dead_code, unused_imports, unused_macros)]
#[path = "../host/cli/args.rs"]
mod args;

use aceapex::gpu::decoder::GpuArchive;
use aceapex::gpu::seek::RangeStatus;
use aceapex::gpu::tokens::Rng;
use aceapex::gpu::Gpu;
use aceapex::{Reader, Status};
use args::parse_size;
use genome::Synth;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::time::Instant;

const TILE: u64 = 16_384;
const WINDOW: u64 = 8_192;

/// What a read found for one range, before the bytes are compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Found {
    /// The reader says the range is right (every block verified).
    Ok,
    /// The GPU's dense kernel could not take a block; the range was read on the CPU.
    Fallback,
    /// A block of the range failed (status from the device, or the CPU reader's error).
    Bad(Status),
    /// The read failed without a block status (a driver or reader error).
    Error,
}

/// Where the reads go: the CPU reader, or the archive resident on the GPU.
enum Backend<'a> {
    Cpu,
    Gpu {
        gpu: &'a Gpu,
        ga: Box<GpuArchive>,
        out: cudarc::driver::CudaSlice<u8>,
    },
}

struct Check<'a> {
    reader: &'a Reader<'static>,
    backend: Backend<'a>,
    synth: &'a Synth,
    /// Host copy of the ranges' bytes, back to back.
    host: Vec<u8>,
    totals: Totals,
}

#[derive(Default)]
struct Totals {
    ranges: u64,
    bytes: u64,
    mismatched_ranges: u64,
    mismatched_bytes: u64,
    fallback: u64,
    bad: BTreeMap<String, u64>,
    errors: u64,
}

impl Check<'_> {
    /// The host's part of a GPU read of `ranges`: the median time of `reps` plans
    /// (`gpu::seek::plan`), in microseconds; 0 for the CPU.
    fn plan_us(&self, ranges: &[(u64, u64)], reps: usize) -> f64 {
        let Backend::Gpu { ga, .. } = &self.backend else {
            return 0.0;
        };
        let mut t: Vec<f64> = (0..reps.max(1))
            .map(|_| {
                let t = Instant::now();
                let p = aceapex::gpu::seek::plan(
                    ranges,
                    ga.block_size(),
                    ga.original_size(),
                    ga.own_blocks(),
                    ga.seek_chunks(),
                );
                std::hint::black_box(p).expect("ranges inside the archive");
                t.elapsed().as_secs_f64() * 1e6
            })
            .collect();
        quantile(&mut t, 0.5)
    }

    /// Reads `ranges` into the output (device buffer or `host`); returns the wall time in
    /// microseconds and what was found per range (the bytes are not yet in `host` for GPU).
    fn read(&mut self, ranges: &[(u64, u64)]) -> (f64, Vec<Found>) {
        match &mut self.backend {
            Backend::Cpu => {
                let mut bufs: Vec<(u64, &mut [u8])> = Vec::with_capacity(ranges.len());
                let mut rest = &mut self.host[..];
                for &(o, l) in ranges {
                    let (a, b) = rest.split_at_mut(l as usize);
                    bufs.push((o, a));
                    rest = b;
                }
                let t = Instant::now();
                let r = self.reader.read_ranges(&mut bufs);
                let us = t.elapsed().as_secs_f64() * 1e6;
                let found = match r {
                    Ok(()) => vec![Found::Ok; ranges.len()],
                    // find which ranges fail, one by one
                    Err(_) => bufs
                        .iter_mut()
                        .map(|(o, b)| match self.reader.read_range(*o, b) {
                            Ok(()) => Found::Ok,
                            Err(aceapex::Error::Decode(aceapex::DecodeError::Block {
                                status,
                                ..
                            })) => Found::Bad(status),
                            Err(_) => Found::Error,
                        })
                        .collect(),
                };
                (us, found)
            }
            Backend::Gpu { gpu, ga, out } => {
                let t = Instant::now();
                let r = ga.read_ranges(gpu, ranges, out);
                let us = t.elapsed().as_secs_f64() * 1e6;
                let found = match r {
                    Ok(st) => st
                        .iter()
                        .map(|s| match s {
                            RangeStatus::Ok => Found::Ok,
                            RangeStatus::Bad {
                                status: Status::Fallback,
                                ..
                            } => Found::Fallback,
                            RangeStatus::Bad { status, .. } => Found::Bad(*status),
                        })
                        .collect(),
                    Err(e) => {
                        eprintln!("scale_check: GPU read of {} ranges: {e}", ranges.len());
                        vec![Found::Error; ranges.len()]
                    }
                };
                (us, found)
            }
        }
    }

    /// Copies the ranges' bytes to `host` (GPU), reads the fallback ranges on the CPU, and
    /// compares every range with the generator's bytes; adds to the totals. Returns the
    /// number of ranges that were wrong or not read.
    fn verify(&mut self, ranges: &[(u64, u64)], found: &[Found]) -> u64 {
        let total: u64 = ranges.iter().map(|r| r.1).sum();
        if let Backend::Gpu { gpu, out, .. } = &self.backend {
            let copied = gpu
                .stream()
                .memcpy_dtoh(
                    &out.slice(..total as usize),
                    &mut self.host[..total as usize],
                )
                .map_err(|e| e.to_string())
                .and_then(|()| gpu.sync().map_err(|e| e.to_string()));
            if let Err(e) = copied {
                eprintln!("scale_check: copying {total} bytes back: {e}");
                self.totals.errors += ranges.len() as u64;
                return ranges.len() as u64;
            }
        }
        // each range's place in `host`
        let mut at = Vec::with_capacity(ranges.len());
        let mut a = 0usize;
        for r in ranges {
            at.push(a);
            a += r.1 as usize;
        }
        for ((&(o, l), f), &a) in ranges.iter().zip(found).zip(&at) {
            if *f == Found::Fallback
                && self
                    .reader
                    .read_range(o, &mut self.host[a..a + l as usize])
                    .is_err()
            {
                self.totals.errors += 1;
            }
        }
        let synth = self.synth;
        let host = &self.host;
        let diffs: Vec<u64> = ranges
            .par_iter()
            .zip(&at)
            .map_init(Vec::new, |want, (&(o, l), &a)| {
                want.resize(l as usize, 0);
                synth.bytes_at(o, want);
                let got = &host[a..a + l as usize];
                if got == &want[..] {
                    0
                } else {
                    got.iter().zip(want.iter()).filter(|(x, y)| x != y).count() as u64
                }
            })
            .collect();
        let mut wrong = 0;
        for (d, f) in diffs.iter().zip(found) {
            let t = &mut self.totals;
            t.ranges += 1;
            match f {
                Found::Ok => {}
                Found::Fallback => t.fallback += 1,
                Found::Bad(s) => *t.bad.entry(format!("{s:?}")).or_default() += 1,
                Found::Error => t.errors += 1,
            }
            if *d > 0 {
                t.mismatched_ranges += 1;
                t.mismatched_bytes += d;
            }
            if *d > 0 || matches!(f, Found::Bad(_) | Found::Error) {
                wrong += 1;
            }
        }
        self.totals.bytes += total;
        wrong
    }
}

/// One position's figures: tile p50 and p99 (us), the tile batch (us), windows per second.
struct Row {
    p50: f64,
    p99: f64,
    tiles_us: f64,
    wps: f64,
}

/// The value at quantile `q` of `t` (sorted here).
fn quantile(t: &mut [f64], q: f64) -> f64 {
    t.sort_by(f64::total_cmp);
    t[((t.len() - 1) as f64 * q).round() as usize]
}

fn usage(msg: &str) -> ! {
    eprintln!("scale_check: {msg}");
    eprintln!(
        "usage: scale_check ARCHIVE FASTA... [--seed 1] [--device gpu|cpu] [--positions 64] \
         [--span 1G] [--requests 200] [--tiles 1000] [--windows 100000] [--reps 3]"
    );
    std::process::exit(2)
}

fn main() {
    let mut seed = 1u64;
    let mut gpu_mode = true;
    let (mut positions, mut span, mut requests, mut tiles, mut windows, mut reps) = (
        64u64,
        1u64 << 30,
        200usize,
        1_000usize,
        100_000usize,
        3usize,
    );
    let mut files: Vec<String> = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .unwrap_or_else(|| usage(&format!("{name} needs a value")))
        };
        let mut count = |name: &str| -> u64 {
            value(name)
                .parse()
                .ok()
                .filter(|&n| n > 0)
                .unwrap_or_else(|| usage(&format!("{name} takes a positive integer")))
        };
        match a.as_str() {
            "--seed" => {
                seed = value("--seed")
                    .parse()
                    .unwrap_or_else(|_| usage("--seed takes an integer"))
            }
            "--device" => match value("--device").as_str() {
                "gpu" => gpu_mode = true,
                "cpu" => gpu_mode = false,
                d => usage(&format!("--device {d}: gpu or cpu")),
            },
            "--positions" => positions = count("--positions"),
            "--span" => span = parse_size(&value("--span")).unwrap_or_else(|e| usage(&e)),
            "--requests" => requests = count("--requests") as usize,
            "--tiles" => tiles = count("--tiles") as usize,
            "--windows" => windows = count("--windows") as usize,
            "--reps" => reps = count("--reps") as usize,
            _ if a.starts_with('-') => usage(&format!("unknown option {a}")),
            _ => files.push(a),
        }
    }
    if files.len() < 2 {
        usage("an archive and the source FASTA files are needed");
    }
    let t_all = Instant::now();
    let t = Instant::now();
    let reader = Reader::open(&files[0]).unwrap_or_else(|e| usage(&format!("{}: {e}", files[0])));
    let size = reader.len();
    let synth = Synth::from_files(&files[1..], size, seed).unwrap_or_else(|e| usage(&e));
    if synth.len() != size {
        usage(&format!(
            "{}: the original is {size} bytes, but synth_genome on these sources makes {} bytes \
             at that size: not its output",
            files[0],
            synth.len()
        ));
    }
    println!(
        "archive {}: {size} original bytes, {} blocks of {} bytes; opened and sources read in {:.2} s",
        files[0],
        reader.block_count(),
        reader.block_size(),
        t.elapsed().as_secs_f64()
    );
    let gpu_dev;
    let backend = if gpu_mode {
        gpu_dev = Gpu::open().unwrap_or_else(|e| {
            eprintln!("scale_check: no usable GPU: {e}");
            std::process::exit(1)
        });
        let t = Instant::now();
        let ga = match GpuArchive::upload(&gpu_dev, reader.archive()) {
            Ok(ga) => ga,
            Err(e) => {
                eprintln!("scale_check: upload failed: {e}");
                std::process::exit(1)
            }
        };
        let s = t.elapsed().as_secs_f64();
        println!(
            "device {}: uploaded in {s:.2} s, {} resident bytes ({:.2} GB/s of resident bytes)",
            gpu_dev.name(),
            ga.resident_bytes,
            ga.resident_bytes as f64 / s / 1e9
        );
        let need = (windows as u64 * WINDOW).max(tiles as u64 * TILE);
        let out = gpu_dev
            .alloc_filled(need as usize, 0xA5)
            .unwrap_or_else(|e| {
                eprintln!("scale_check: output buffer of {need} bytes: {e}");
                std::process::exit(1)
            });
        Backend::Gpu {
            gpu: &gpu_dev,
            ga: Box::new(ga),
            out,
        }
    } else {
        println!("device cpu: the Reader on the memory-mapped archive, one thread");
        Backend::Cpu
    };
    let host_len = (windows as u64 * WINDOW).max(tiles as u64 * TILE) as usize;
    let mut c = Check {
        reader: &reader,
        backend,
        synth: &synth,
        host: vec![0u8; host_len],
        totals: Totals::default(),
    };
    let span = span.min(size);
    // evenly spaced spans, the first at byte 0 and the last ending at the end (they overlap
    // when the spans add up to more than the data)
    let positions = if size > span { positions } else { 1 };
    let mut rng = Rng::new(0x9E37_79B9_7F4A_7C15);
    // warm-up: the request buffers grow to the largest request once, outside the timings
    {
        let w = WINDOW.min(size);
        let r: Vec<(u64, u64)> = (0..windows).map(|_| (rng.below(size - w + 1), w)).collect();
        let (_, f) = c.read(&r);
        c.verify(&r, &f);
    }
    println!(
        "{:>8} {:>11} {:>11} {:>13} {:>12} {:>9} {:>12} {:>9} {:>6}",
        "GB",
        "tile_p50_us",
        "tile_p99_us",
        "tiles1k_us",
        "Mwindows/s",
        "win_GB/s",
        "win_plan_us",
        "ranges",
        "wrong"
    );
    let mut rows = Vec::new();
    for k in 0..positions {
        let start = if positions == 1 {
            0
        } else {
            (size - span) * k / (positions - 1)
        };
        let tile_at = |rng: &mut Rng| {
            // an aligned tile whose start lies in the span (cut at the end of the data)
            let first = start.div_ceil(TILE);
            let last = ((start + span - 1) / TILE).max(first);
            let o = (first + rng.below(last - first + 1)) * TILE;
            let o = o.min((size - 1) / TILE * TILE);
            (o, TILE.min(size - o))
        };
        let (mut checked, mut wrong) = (0u64, 0u64);
        // (a) one tile per request
        let mut lat = Vec::with_capacity(requests);
        for _ in 0..requests {
            let r = [tile_at(&mut rng)];
            let (us, f) = c.read(&r);
            lat.push(us);
            wrong += c.verify(&r, &f);
            checked += 1;
        }
        let (p50, p99) = (quantile(&mut lat, 0.5), quantile(&mut lat, 0.99));
        // (b) a batch of tiles and a batch of windows, each the median of `reps` runs
        let batch = |c: &mut Check, r: &[(u64, u64)], wrong: &mut u64| {
            let mut t: Vec<f64> = Vec::new();
            let mut found = Vec::new();
            for _ in 0..reps {
                let (us, f) = c.read(r);
                t.push(us);
                found = f;
            }
            *wrong += c.verify(r, &found);
            quantile(&mut t, 0.5)
        };
        let r: Vec<(u64, u64)> = (0..tiles).map(|_| tile_at(&mut rng)).collect();
        let tiles_us = batch(&mut c, &r, &mut wrong);
        checked += r.len() as u64;
        let w = WINDOW.min(span);
        let r: Vec<(u64, u64)> = (0..windows)
            .map(|_| (start + rng.below(span - w + 1), w))
            .collect();
        let win_us = batch(&mut c, &r, &mut wrong);
        let plan_us = c.plan_us(&r, reps);
        checked += r.len() as u64;
        let wps = windows as f64 / (win_us * 1e-6);
        println!(
            "{:>8.3} {p50:>11.1} {p99:>11.1} {tiles_us:>13.1} {:>12.3} {:>9.2} {plan_us:>12.1} {checked:>9} {wrong:>6}",
            start as f64 / 1e9,
            wps / 1e6,
            wps * w as f64 / 1e9
        );
        rows.push(Row {
            p50,
            p99,
            tiles_us,
            wps,
        });
    }
    // the spread over positions: how flat the table is
    let spread = |f: &dyn Fn(&Row) -> f64, digits: usize| {
        let v: Vec<f64> = rows.iter().map(f).collect();
        let lo = v.iter().cloned().fold(f64::INFINITY, f64::min);
        let hi = v.iter().cloned().fold(0.0, f64::max);
        format!("{lo:.digits$}-{hi:.digits$}")
    };
    println!(
        "over {} positions: tile p50 {} us, tile p99 {} us, 1k tiles {} us, windows/s (M) {}",
        rows.len(),
        spread(&|r| r.p50, 1),
        spread(&|r| r.p99, 1),
        spread(&|r| r.tiles_us, 1),
        spread(&|r| r.wps / 1e6, 3)
    );
    let t = &c.totals;
    let bad: u64 = t.bad.values().sum();
    println!(
        "totals: ranges checked {}, bytes checked {}, mismatched ranges {}, mismatched bytes {}, \
         bad block status {} {:?}, read errors {}, CPU fallback ranges {}; {:.1} s",
        t.ranges,
        t.bytes,
        t.mismatched_ranges,
        t.mismatched_bytes,
        bad,
        t.bad,
        t.errors,
        t.fallback,
        t_all.elapsed().as_secs_f64()
    );
    if t.mismatched_ranges > 0 || bad > 0 || t.errors > 0 || t.ranges == 0 {
        println!("FAIL");
        std::process::exit(1);
    }
    println!("PASS");
}
