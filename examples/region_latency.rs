//! Per-request latency of [`aceapex::Reader`] on one thread: p50, p99 and the worst of many
//! region reads at random positions of a hot (already read once, memory-mapped) archive.
//!
//! Run: `cargo run --release --example region_latency -- ARCHIVE [ARCHIVE...]`. For each
//! archive, two request kinds: 5,000-byte regions at random byte offsets, and aligned 16 KiB
//! tiles (offsets multiples of 16,384) at random positions; `$ACEAPEX_REQUESTS` requests of
//! each (default 20,000), after a warm-up pass over the same requests. Each request is
//! timed alone with `Instant` (tens of nanoseconds of overhead; on a shared machine the
//! times a request spends descheduled are in the upper quantiles). `ACEAPEX_BATCH=N` also times
//! the same regions through [`aceapex::Reader::read_ranges`] in batches of N (per region).
//!
//! Lines: `ARCHIVE block=B kind=K n=N p50=us p90=us p99=us max=us mean=us`.

use std::time::Instant;

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

fn report(name: &str, block: u32, kind: &str, mut t: Vec<f64>) {
    t.sort_by(f64::total_cmp);
    let mean = t.iter().sum::<f64>() / t.len() as f64;
    println!(
        "{name} block={block} kind={kind} n={} p50={:.2}us p90={:.2}us p99={:.2}us max={:.2}us mean={:.2}us",
        t.len(),
        quantile(&t, 0.50),
        quantile(&t, 0.90),
        quantile(&t, 0.99),
        t[t.len() - 1],
        mean,
    );
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    if paths.is_empty() {
        return Err("usage: region_latency ARCHIVE [ARCHIVE...]".into());
    }
    let n = env_usize("ACEAPEX_REQUESTS", 20_000).max(1);
    let batch = env_usize("ACEAPEX_BATCH", 0);
    for path in &paths {
        let reader = aceapex::Reader::open(path)?;
        let size = reader.len();
        let name = std::path::Path::new(path)
            .file_name()
            .map_or(path.clone(), |f| f.to_string_lossy().into_owned());
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        const REGION: u64 = 5_000;
        const TILE: u64 = 16_384;
        let regions: Vec<u64> = (0..n)
            .map(|_| rng.below(size.saturating_sub(REGION) + 1))
            .collect();
        let tiles: Vec<u64> = (0..n)
            .map(|_| rng.below((size / TILE).max(1)) * TILE)
            .collect();
        for (kind, offsets, len) in [("region5000", &regions, REGION), ("tile16k", &tiles, TILE)] {
            let len = len.min(size) as usize;
            let mut buf = vec![0u8; len];
            // warm-up: the archive's pages, the decode tables, the caches
            for &o in offsets.iter() {
                reader.read_range(o, &mut buf)?;
            }
            let mut times = Vec::with_capacity(offsets.len());
            for &o in offsets.iter() {
                let t0 = now_us();
                reader.read_range(o, &mut buf)?;
                times.push(now_us() - t0);
                std::hint::black_box(&buf);
            }
            report(&name, reader.block_size(), kind, times);
            if batch > 1 && kind == "region5000" {
                let mut bufs = vec![vec![0u8; len]; batch];
                let mut times = Vec::new();
                for chunk in offsets.chunks(batch) {
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
                report(
                    &name,
                    reader.block_size(),
                    &format!("region5000-batch{batch}"),
                    times,
                );
            }
        }
    }
    Ok(())
}
