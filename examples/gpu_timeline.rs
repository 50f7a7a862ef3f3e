//! Where one dense-pipe decode's time goes, block by block: the timeline marks of a trace
//! build (`device/src/trace.rs`).
//!
//! Build it with the trace kernels, in a target directory of its own (the binary embeds
//! them; the default kernels in `target/` stay as they are), and run it where the GPU is:
//!
//!     ACEAPEX_DEVICE_FEATURES=trace CARGO_TARGET_DIR=target-trace cargo build --release --example gpu_timeline
//!     target-trace/release/examples/gpu_timeline [--ptx FILE] ARCHIVE.acx...
//!
//! (`--ptx` = a trace build's PTX, `target-trace/release/build/aceapex/*/out/aceapex.ptx`,
//! gives a binary built without the trace kernels the same ones: `GpuTuning::ptx`.) Marks
//! cover an archive's first 4,096 blocks (`trace::TRACE_BLOCKS`); the report says how many
//! it traced.
//!
//! With `--tile`, the random-access path instead: for each archive, one 16 KiB tile at its
//! middle read through `GpuArchive::read_ranges` (2,000 times after half a second of reads:
//! p50 and p99 from the call to the status words back), the GPU's time per request with 200
//! queued back to back (events), a bare round trip of the same stream (a 64-byte upload and
//! download, no kernel), one launch of a one-thread kernel and its wait (no copies), and the
//! marks of the tile's block in one read, from the dense kernel's take to the gather's end.
//! With `--tiles N`, one request of N random aligned 16 KiB tiles instead (as
//! `benches/gpu_seek.rs`'s 1,000 tiles): its p50 and p99, the GPU's time per request queued
//! back to back, and the marks of every block it decoded, as for a full decode.
//!
//! For each archive: half a second of untimed decodes, then one decode between CUDA events
//! whose marks are read back. Printed, in microseconds from the earliest `rans_start`: each mark's
//! minimum, median, 90th percentile and maximum over the traced blocks, and the per-block
//! gaps between consecutive marks (staging, rANS chain, hand-off, stream load, parse, walk;
//! a block the dense kernel parsed before its hand-off sees `dense_ready` after
//! `dense_filled`, so its gaps around `dense_ready` are negative and the gap from
//! `dense_filled` to `dense_lits` holds its wait). Every decode's output is checked against
//! the archive's checksums.

use aceapex::device::trace::{
    DENSE_CODES, DENSE_DEFERRED, DENSE_END, DENSE_FILLED, DENSE_LITS, SLOT_NAMES, TRACE_BLOCKS,
    TRACE_SLOTS,
};
use aceapex::format::Archive;
use aceapex::gpu::decoder::{check_status, verify, GpuArchive};
use aceapex::gpu::{Gpu, GpuTuning};

const USAGE: &str = "usage: gpu_timeline [--ptx FILE] [--tile | --tiles N] ARCHIVE.acx...\n\
    Timeline marks of one dense-pipe decode per archive; needs a GPU and a binary built with\n\
    ACEAPEX_DEVICE_FEATURES=trace (it embeds the trace kernels; see the file's header), or\n\
    --ptx FILE naming such a build's PTX.\n\
    Marks cover the first 4,096 blocks of an archive. --tile: one 16 KiB tile's path instead;\n\
    --tiles N: a request of N random aligned 16 KiB tiles.";

fn fail(msg: &str) -> ! {
    eprintln!("gpu_timeline: {msg}");
    std::process::exit(1)
}

fn main() {
    let mut paths: Vec<String> = std::env::args().skip(1).collect();
    let mut tuning = GpuTuning::default();
    if let Some(i) = paths.iter().position(|p| p == "--ptx") {
        let Some(file) = paths.get(i + 1).cloned() else {
            fail("--ptx needs a file")
        };
        let ptx = std::fs::read_to_string(&file).unwrap_or_else(|e| fail(&format!("{file}: {e}")));
        tuning = tuning.with_ptx(Some(ptx));
        paths.drain(i..i + 2);
    }
    let tile = paths.iter().any(|p| p == "--tile");
    paths.retain(|p| p != "--tile");
    let mut tiles = 1usize;
    if let Some(i) = paths.iter().position(|p| p == "--tiles") {
        tiles = match paths.get(i + 1).map(|n| n.parse::<usize>()) {
            Some(Ok(n)) if n >= 1 => n,
            _ => fail("--tiles needs a count of at least 1"),
        };
        paths.drain(i..i + 2);
    }
    if paths.iter().any(|p| p == "-h" || p == "--help") {
        println!("{USAGE}");
        return;
    }
    if paths.is_empty() {
        eprintln!("{USAGE}");
        std::process::exit(2);
    }
    // every archive read and checked before any GPU work
    let archives: Vec<(String, Vec<u8>)> = paths
        .into_iter()
        .map(|p| match std::fs::read(&p) {
            Ok(b) => (p, b),
            Err(e) => fail(&format!("{p}: {e}")),
        })
        .collect();
    let parsed: Vec<(&str, Archive<'_>)> = archives
        .iter()
        .map(|(p, bytes)| match Archive::parse(bytes) {
            Ok(a) => (p.as_str(), a),
            Err(e) => fail(&format!("{p}: {e}")),
        })
        .collect();
    let g = Gpu::open_with(&tuning).unwrap_or_else(|e| fail(&format!("needs an NVIDIA GPU: {e}")));
    for (p, a) in &parsed {
        let r = if tiles > 1 {
            tiles_timeline(&g, p, a, tiles)
        } else if tile {
            tile_timeline(&g, p, a)
        } else {
            timeline(&g, p, a)
        };
        if let Err(e) = r {
            fail(&format!("{p}: {e}"));
        }
    }
}

/// Warms up, decodes `a` once between CUDA events, checks the output and prints its marks.
fn timeline(g: &Gpu, p: &str, a: &Archive<'_>) -> Result<(), aceapex::gpu::GpuError> {
    let size = a.header().original_size;
    let ga = GpuArchive::upload(g, a)?;
    let (mut out, mut status) = ga.output_buffers(g)?;
    // half a second of decodes first, so that the GPU's clocks are up as in a benchmark
    let warm = std::time::Instant::now();
    while warm.elapsed().as_secs_f64() < 0.5 {
        for _ in 0..20 {
            ga.decode_all(g, &mut out, &mut status)?;
        }
        g.sync()?;
    }
    g.clear_trace()?;
    let secs = g.time(1, || ga.decode_all(g, &mut out, &mut status))?;
    let st = g
        .stream()
        .clone_dtoh(&status)
        .map_err(|source| aceapex::gpu::GpuError::Driver {
            what: "downloading status",
            source,
        })?;
    check_status(&st)?;
    verify(a, &g.download(&out)?[..size as usize])?;
    let Some(marks) = g.trace_marks()? else {
        println!(
            "TIMELINE {p}: {size} bytes, decode {:.1} us between events ({:.1} GB/s); the loaded kernels have no trace marks (build with ACEAPEX_DEVICE_FEATURES=trace)",
            secs * 1e6,
            size as f64 / secs / 1e9
        );
        return Ok(());
    };
    let n = a.block_count().min(TRACE_BLOCKS);
    report(p, size, n, a.block_count(), secs, &marks);
    Ok(())
}

/// One 16 KiB tile at the middle of `a`, read through the seek: wall p50 and p99, the GPU's
/// time per request queued back to back, a bare round trip, one empty launch and its wait,
/// and the tile block's marks.
fn tile_timeline(g: &Gpu, p: &str, a: &Archive<'_>) -> Result<(), aceapex::gpu::GpuError> {
    let ga = GpuArchive::upload(g, a)?;
    let size = a.header().original_size;
    let bs = ga.block_size() as u64;
    let off = size / 2 / bs * bs;
    let len = bs.min(size - off).min(16_384);
    let mut out = g.alloc_filled(len as usize, 0xA5)?;
    let ranges = [(off, len)];
    let (wall, _, queued) = timed_reads(g, &ga, &ranges, &mut out, 2_000, 200)?;
    // a round trip with no kernel: what the copies and the wait cost alone
    let mut dev = g.alloc_filled(64, 0)?;
    let (up, mut down) = ([7u8; 64], [0u8; 64]);
    let bare = timed(2_000, || {
        let s = g.stream();
        s.memcpy_htod(&up, &mut dev)
            .and_then(|_| s.memcpy_dtoh(&dev, &mut down))
            .and_then(|_| s.synchronize())
            .map_err(|source| aceapex::gpu::GpuError::Driver {
                what: "a bare round trip",
                source,
            })
    })?;
    // one kernel launch and its wait, no copies: the floor of any request's round trip
    let mut word =
        g.stream()
            .clone_htod(&[0u32])
            .map_err(|source| aceapex::gpu::GpuError::Driver {
                what: "an empty launch's word",
                source,
            })?;
    let launch = timed(2_000, || {
        aceapex::gpu::launch::smoke_add_one(g, &mut word)?;
        g.sync()
    })?;
    g.clear_trace()?;
    read_ok(g, &ga, &ranges, &mut out)?;
    let b = (off / bs) as usize;
    println!(
        "TILE {p}: block {b} ({len} bytes at {off}), own {}: read p50 {:.1} us, p99 {:.1}; GPU queued back to back {queued:.1} us a request; bare round trip p50 {:.1} us; one kernel launch and wait p50 {:.1} us",
        ga.own_blocks().get(b).copied().unwrap_or(false),
        quantile(&wall, 0.5),
        quantile(&wall, 0.99),
        quantile(&bare, 0.5),
        quantile(&launch, 0.5),
    );
    let marks = match g.trace_marks()? {
        Some(m) if b < TRACE_BLOCKS => m,
        Some(_) => {
            println!("  block {b} is past the traced blocks");
            return Ok(());
        }
        None => {
            println!("  the loaded kernels have no trace marks (build with ACEAPEX_DEVICE_FEATURES=trace)");
            return Ok(());
        }
    };
    let row = &marks[b * TRACE_SLOTS..(b + 1) * TRACE_SLOTS];
    let t0 = row.iter().copied().filter(|&t| t != 0).min().unwrap_or(0);
    let mut v: Vec<(u64, &str)> = row
        .iter()
        .zip(SLOT_NAMES)
        .filter(|(&t, _)| t != 0)
        .map(|(&t, n)| (t, n))
        .collect();
    v.sort();
    let line: Vec<String> = v
        .iter()
        .map(|(t, n)| format!("{n} {:.2}", (t - t0) as f64 / 1e3))
        .collect();
    println!("  marks, us after the first: {}", line.join(", "));
    Ok(())
}

/// A request of `n` random aligned 16 KiB tiles of `a` (a fixed seed): wall p50 and p99 of
/// 200 reads, the GPU's time per request queued back to back, and the marks of its blocks.
fn tiles_timeline(
    g: &Gpu,
    p: &str,
    a: &Archive<'_>,
    n: usize,
) -> Result<(), aceapex::gpu::GpuError> {
    let ga = GpuArchive::upload(g, a)?;
    let size = a.header().original_size;
    let bs = ga.block_size() as u64;
    let tile = bs.min(16_384);
    let mut r = aceapex::gpu::tokens::Rng::new(17);
    let ranges: Vec<(u64, u64)> = (0..n)
        .map(|_| {
            let off = r.below(size / tile) * tile;
            (off, tile.min(size - off))
        })
        .collect();
    let total: u64 = ranges.iter().map(|r| r.1).sum();
    let mut out = g.alloc_filled(total as usize, 0xA5)?;
    let (wall, pl, queued) = timed_reads(g, &ga, &ranges, &mut out, 200, 50)?;
    g.clear_trace()?;
    read_ok(g, &ga, &ranges, &mut out)?;
    println!(
        "TILES {p}: {n} tiles, {} blocks ({} rANS chunks): read p50 {:.1} us, p99 {:.1}; GPU queued back to back {:.1} us a request",
        pl.n_order,
        pl.n_rans,
        quantile(&wall, 0.5),
        quantile(&wall, 0.99),
        queued
    );
    match g.trace_marks()? {
        Some(m) => report(
            p,
            total,
            a.block_count().min(TRACE_BLOCKS),
            a.block_count(),
            queued / 1e6,
            &m,
        ),
        None => println!(
            "  the loaded kernels have no trace marks (build with ACEAPEX_DEVICE_FEATURES=trace)"
        ),
    }
    Ok(())
}

/// A read of `ranges` into `out`, every range's blocks verified (panics otherwise).
fn read_ok(
    g: &Gpu,
    ga: &GpuArchive,
    ranges: &[(u64, u64)],
    out: &mut cudarc::driver::CudaSlice<u8>,
) -> Result<(), aceapex::gpu::GpuError> {
    let st = ga.read_ranges(g, ranges, out)?;
    assert!(
        st.iter().all(|s| *s == aceapex::gpu::seek::RangeStatus::Ok),
        "every range's blocks verified"
    );
    Ok(())
}

/// Half a second of reads of `ranges`, then `reads` timed ones: their wall times sorted
/// (microseconds), the request's plan, and the GPU's time per request with `queued` of them
/// queued back to back (microseconds).
fn timed_reads(
    g: &Gpu,
    ga: &GpuArchive,
    ranges: &[(u64, u64)],
    out: &mut cudarc::driver::CudaSlice<u8>,
    reads: usize,
    queued: u32,
) -> Result<(Vec<f64>, aceapex::gpu::seek::Plan, f64), aceapex::gpu::GpuError> {
    use std::time::Instant;
    let warm = Instant::now();
    while warm.elapsed().as_secs_f64() < 0.5 {
        read_ok(g, ga, ranges, out)?;
    }
    let wall = timed(reads, || read_ok(g, ga, ranges, &mut *out))?;
    let pl = aceapex::gpu::seek::plan(
        ranges,
        ga.block_size(),
        ga.original_size(),
        ga.own_blocks(),
        ga.seek_chunks(),
    )?;
    g.sync()?;
    let t = g.time(queued, || ga.submit_planned(g, &pl, &mut *out))?;
    Ok((wall, pl, t * 1e6))
}

/// `n` runs of `f`, each timed alone: their wall times in microseconds, sorted.
fn timed(
    n: usize,
    mut f: impl FnMut() -> Result<(), aceapex::gpu::GpuError>,
) -> Result<Vec<f64>, aceapex::gpu::GpuError> {
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        let t = std::time::Instant::now();
        f()?;
        v.push(t.elapsed().as_secs_f64() * 1e6);
    }
    v.sort_by(f64::total_cmp);
    Ok(v)
}

/// The `q` quantile (0..=1) of sorted `v`.
fn quantile(v: &[f64], q: f64) -> f64 {
    v[((v.len() - 1) as f64 * q).round() as usize]
}

fn report(p: &str, size: u64, n: usize, blocks: usize, secs: f64, marks: &[u64]) {
    let row = |b: usize| &marks[b * TRACE_SLOTS..(b + 1) * TRACE_SLOTS];
    // the first mark of any block (a rans_start, or a dense_take where the rANS stage had
    // nothing to do for the block: `device/src/dense/`, `self_contained`)
    let t0 = (0..n)
        .flat_map(|b| row(b).iter().copied())
        .filter(|&t| t != 0)
        .min()
        .unwrap_or(0);
    println!(
        "TIMELINE {p}: {size} bytes, {blocks} blocks ({n} traced), decode {:.1} us between events ({:.1} GB/s)",
        secs * 1e6,
        size as f64 / secs / 1e9
    );
    let us = |t: u64| (t as f64 - t0 as f64) / 1e3;
    let stats = |mut v: Vec<f64>| -> String {
        if v.is_empty() {
            return "none".into();
        }
        v.sort_by(f64::total_cmp);
        format!(
            "min {:7.2}  p50 {:7.2}  p90 {:7.2}  max {:7.2}  (n {})",
            v[0],
            quantile(&v, 0.5),
            quantile(&v, 0.9),
            v[v.len() - 1],
            v.len()
        )
    };
    println!("  marks, us after the first mark:");
    for (s, name) in SLOT_NAMES.iter().enumerate() {
        let v: Vec<f64> = (0..n)
            .map(|b| row(b)[s])
            .filter(|&t| t != 0)
            .map(us)
            .collect();
        println!("    {name:13} {}", stats(v));
    }
    println!("  per-block gaps, us:");
    // each slot after the one before, then the deferred long commands after the fill, and the
    // two-bit codes' slot between them and the literals (blocks the dense kernel decodes alone)
    let pairs = (1..=DENSE_END).map(|s| (s, s - 1)).chain([
        (DENSE_DEFERRED, DENSE_FILLED),
        (DENSE_CODES, DENSE_DEFERRED),
        (DENSE_LITS, DENSE_CODES),
    ]);
    for (s, r) in pairs {
        let v: Vec<f64> = (0..n)
            .filter(|&b| row(b)[s] != 0 && row(b)[r] != 0)
            .map(|b| (row(b)[s] as f64 - row(b)[r] as f64) / 1e3)
            .collect();
        println!(
            "    {:>13} - {:13} {}",
            SLOT_NAMES[s],
            SLOT_NAMES[r],
            stats(v)
        );
    }
    // the block that finished last, mark by mark
    if let Some(last) = (0..n).max_by_key(|&b| row(b)[DENSE_END]) {
        let r: Vec<String> = row(last)
            .iter()
            .map(|&t| {
                if t == 0 {
                    "-".into()
                } else {
                    format!("{:.2}", us(t))
                }
            })
            .collect();
        println!("  last block to finish: {last}: {}", r.join(" "));
    }
    // the timer's granularity: the smallest non-zero step between sorted marks
    let mut all: Vec<u64> = marks.iter().copied().filter(|&t| t != 0).collect();
    all.sort_unstable();
    let step = all
        .windows(2)
        .map(|w| w[1] - w[0])
        .filter(|&d| d != 0)
        .min();
    println!("  smallest step between marks: {step:?} ns");
}
