//! Per-request latency of region reads on one thread: p50, p90, p99 and the worst of many
//! reads at random positions of hot data (already read once).
//!
//! Run: `cargo run --release --example region_latency -- FILE [FILE...]`.
//! - An archive (`.acx`): [`aceapex::Reader`] on the memory-mapped file.
//! - Any other file is taken as a FASTA file and every reader of `benches/region.rs` is built
//!   from it in memory and timed on the same requests: aceapex at 16 KiB and 4 KiB blocks,
//!   seekable-style zstd (16 KiB frames, levels 3 and 19) and htslib's `faidx_fetch_seq` on
//!   the bgzip'd file (`libhts.so.3` loaded at run time; skipped with a note when missing).
//!
//! Requests (a fixed seed): `region5000`, 5,000 bytes at a random offset (FASTA: the byte
//! offset of a random base of the first sequence; htslib reads the 5,000 bases from that
//! base), and `tile16k`, 16,384 bytes at a random multiple of 16,384 (not htslib);
//! `$ACEAPEX_REQUESTS` of each (default 20,000), after a warm-up pass over the same requests,
//! each answer of the warm-up checked against the original where the original is at hand.
//! Each request is timed alone with `Instant` (tens of nanoseconds of overhead; on a shared
//! machine the times a request spends descheduled land in the upper quantiles).
//! `ACEAPEX_BATCH=N` also times aceapex's regions through [`aceapex::Reader::read_ranges`]
//! in batches of N (the batch's time divided among its regions).
//!
//! Lines: `NAME kind=K n=N p50=us p90=us p99=us max=us mean=us`, and each reader's
//! compressed size (`NAME size=BYTES`).

#[path = "../benches/region/others.rs"]
mod others;

use others::{Hts, Layout, ZstdSeekable};
use std::time::Instant;

const REGION: usize = 5_000;
const TILE: usize = 16_384;

/// Microseconds since the first call (monotonic wall clock).
fn now_us() -> f64 {
    thread_local!(static START: Instant = Instant::now());
    START.with(|s| s.elapsed().as_secs_f64() * 1e6)
}

/// A small xorshift generator: the same requests on every run.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The value at quantile `q` of sorted `v`.
fn quantile(v: &[f64], q: f64) -> f64 {
    v[((v.len() - 1) as f64 * q).round() as usize]
}

fn report(name: &str, kind: &str, mut t: Vec<f64>) {
    t.sort_by(f64::total_cmp);
    let mean = t.iter().sum::<f64>() / t.len() as f64;
    println!(
        "{name} kind={kind} n={} p50={:.2}us p90={:.2}us p99={:.2}us max={:.2}us mean={:.2}us",
        t.len(),
        quantile(&t, 0.50),
        quantile(&t, 0.90),
        quantile(&t, 0.99),
        t[t.len() - 1],
        mean,
    );
}

/// Times `read(offset, buf)` over `offsets` (after a warm-up pass that checks each answer
/// with `check`) and reports the quantiles.
fn time_reads(
    name: &str,
    kind: &str,
    offsets: &[u64],
    len: usize,
    mut read: impl FnMut(u64, &mut [u8]),
    check: impl Fn(u64, &[u8]) -> bool,
) {
    let mut buf = vec![0u8; len];
    for &o in offsets {
        read(o, &mut buf);
        assert!(check(o, &buf), "{name} {kind}: wrong bytes at {o}");
    }
    let mut times = Vec::with_capacity(offsets.len());
    for &o in offsets {
        let t0 = now_us();
        read(o, &mut buf);
        times.push(now_us() - t0);
        std::hint::black_box(&buf);
    }
    report(name, kind, times);
}

/// Times `reader` on both request kinds (and batches of `batch` regions when above 1).
fn time_reader(
    name: &str,
    reader: &aceapex::Reader<'_>,
    regions: &[u64],
    tiles: &[u64],
    batch: usize,
    check: &dyn Fn(u64, &[u8]) -> bool,
) -> Result<(), aceapex::Error> {
    let read = |o, b: &mut [u8]| reader.read_range(o, b).expect("the archive reads");
    time_reads(name, "region5000", regions, REGION, read, check);
    if batch > 1 {
        let mut bufs = vec![vec![0u8; REGION]; batch];
        let mut times = Vec::with_capacity(regions.len());
        for chunk in regions.chunks(batch) {
            let mut ranges: Vec<(u64, &mut [u8])> = chunk
                .iter()
                .zip(bufs.iter_mut())
                .map(|(&o, b)| (o, &mut b[..]))
                .collect();
            let t0 = now_us();
            reader.read_ranges(&mut ranges)?;
            let per = (now_us() - t0) / chunk.len() as f64;
            times.extend(std::iter::repeat_n(per, chunk.len()));
        }
        report(name, &format!("region5000-batch{batch}"), times);
    }
    time_reads(name, "tile16k", tiles, TILE, read, check);
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    if paths.is_empty() {
        return Err("usage: region_latency FILE [FILE...] (archives .acx, or FASTA)".into());
    }
    let n = env_usize("ACEAPEX_REQUESTS", 20_000).max(1);
    let batch = env_usize("ACEAPEX_BATCH", 0);
    for path in &paths {
        let file_name = std::path::Path::new(path)
            .file_name()
            .map_or(path.clone(), |f| f.to_string_lossy().into_owned());
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        if path.ends_with(".acx") {
            let reader = aceapex::Reader::open(path)?;
            let size = reader.len();
            let regions: Vec<u64> = (0..n)
                .map(|_| rng.below(size.saturating_sub(REGION as u64) + 1))
                .collect();
            let tiles: Vec<u64> = (0..n)
                .map(|_| rng.below((size / TILE as u64).max(1)) * TILE as u64)
                .collect();
            let name = format!("{file_name} block={}", reader.block_size());
            time_reader(&name, &reader, &regions, &tiles, batch, &|_, _| true)?;
            continue;
        }
        let data = std::fs::read(path)?;
        let layout = Layout::first(&data)?;
        let bases: Vec<u64> = (0..n)
            .map(|_| rng.below(layout.length - REGION as u64 + 1))
            .collect();
        let regions: Vec<u64> = bases.iter().map(|&p| layout.byte_of(p)).collect();
        let size = data.len() as u64;
        let tiles: Vec<u64> = (0..n)
            .map(|_| rng.below(size / TILE as u64) * TILE as u64)
            .collect();
        let check = |o: u64, b: &[u8]| b == &data[o as usize..o as usize + b.len()];
        for bs in [16_384u32, 4_096] {
            let opts = aceapex::Options::default().with_block_size(bs);
            let archive = aceapex::compress(&data, &opts)?;
            let reader = aceapex::Reader::new(&archive)?;
            let name = format!("{file_name} aceapex-{}k", bs >> 10);
            println!("{name} size={} bytes", archive.len());
            time_reader(&name, &reader, &regions, &tiles, batch, &check)?;
        }
        for level in [3, 19] {
            let z = ZstdSeekable::new(&data, TILE, level);
            let name = format!("{file_name} zstd{level}-seekable16k");
            println!("{name} size={} bytes", z.compressed_len());
            for (kind, offsets, len) in
                [("region5000", &regions, REGION), ("tile16k", &tiles, TILE)]
            {
                time_reads(&name, kind, offsets, len, |o, b| z.read_range(o, b), check);
            }
        }
        let dir = tempfile::tempdir()?;
        match Hts::build(&data, dir.path(), &layout.name) {
            Ok(h) => {
                // the answer in bases: the bytes from the region's offset, line feeds left out
                let want = |o: u64| -> Vec<u8> {
                    data[o as usize..]
                        .iter()
                        .filter(|&&c| c != b'\n' && c != b'\r')
                        .take(REGION)
                        .copied()
                        .collect()
                };
                let mut out = Vec::with_capacity(REGION);
                for (&p, &o) in bases.iter().zip(&regions) {
                    h.fetch(p, REGION, &mut out);
                    assert!(out == want(o), "htslib: wrong bases at {p}");
                }
                let mut times = Vec::with_capacity(n);
                for &p in &bases {
                    let t0 = now_us();
                    h.fetch(p, REGION, &mut out);
                    times.push(now_us() - t0);
                }
                report(
                    &format!("{file_name} htslib-faidx-bgzip"),
                    "region5000",
                    times,
                );
            }
            Err(e) => eprintln!("region_latency: htslib skipped: {e}"),
        }
    }
    Ok(())
}
