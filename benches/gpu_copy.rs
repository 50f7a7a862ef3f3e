//! Match-copy kernels on the GPU: logical bytes copied per second for one thread
//! per match, one warp per match with the period-aware fill, and one warp per match in
//! rounds of min(dist, 32) bytes. Device-resident: tokens and output stay on the GPU; each
//! iteration runs every dependency level's launch in order. Without a usable GPU it says so
//! and exits with status 1 (a benchmark that did not run is not a pass).
//!
//! Token lists: `tokens::Shape::realistic` (median match 7 bytes, about 60 % at level 0)
//! over 256 MiB of output; `ACEAPEX_COPY_MIB` changes the size.

use aceapex::gpu::launch::{self, CopyVariant};
use aceapex::gpu::tokens::{generate, Shape};
use aceapex::gpu::Gpu;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::time::Duration;

fn bench(c: &mut Criterion) {
    let g = Gpu::open().unwrap_or_else(|e| {
        eprintln!("gpu_copy: needs an NVIDIA GPU, not run: {e}");
        std::process::exit(1)
    });
    let mib: usize = std::env::var("ACEAPEX_COPY_MIB")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(256);
    // real token lists when an archive is given (ACEAPEX_COPY_ARCHIVE=path.acx), else synthetic
    let (source, ts) = match std::env::var("ACEAPEX_COPY_ARCHIVE") {
        Ok(p) => {
            let bytes = std::fs::read(&p).unwrap();
            let a = aceapex::Archive::parse(&bytes).unwrap();
            let original = aceapex::decode::decompress(&a).unwrap();
            (
                p,
                aceapex::gpu::tokens::from_archive(&a, &original).unwrap(),
            )
        }
        Err(_) => (
            "synthetic".to_string(),
            generate(0xC0FFEE, Shape::realistic(mib << 20)),
        ),
    };
    let mib = ts.expected.len() >> 20;
    let matches = ts.match_count();
    let level0 = ts.levels.first().map_or(0, Vec::len);
    let mut lens: Vec<u32> = ts.levels.iter().flatten().map(|t| t.len).collect();
    lens.sort_unstable();
    println!(
        "token list ({source}): {} MiB output, {} matches, median length {}, {:.1} % at level 0, {} levels, {:.1} MB of match bytes",
        mib,
        matches,
        lens[lens.len() / 2],
        100.0 * level0 as f64 / matches as f64,
        ts.levels.len(),
        ts.match_bytes() as f64 / 1e6
    );
    let mut out = g.alloc_filled(ts.expected.len(), 0).unwrap();
    let levels: Vec<_> = ts
        .levels
        .iter()
        .map(|l| (g.upload(bytemuck::cast_slice(l)).unwrap(), l.len() as u32))
        .collect();
    let mut status = g.stream().alloc_zeros::<u32>(1).unwrap();
    let mut grp = c.benchmark_group("match_copy");
    grp.throughput(Throughput::Bytes(ts.match_bytes()));
    grp.sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    for (name, v) in [
        ("thread_per_match", CopyVariant::ThreadPerMatch),
        ("warp_per_match_period_aware", CopyVariant::WarpPeriodAware),
        ("warp_per_match_rounds", CopyVariant::WarpRounds),
    ] {
        let mut run = || -> Result<(), aceapex::gpu::GpuError> {
            for (toks, n) in &levels {
                launch::match_copy(&g, v, &mut out, toks, *n, &mut status)?;
            }
            Ok(())
        };
        let per = g.time(5, &mut run).unwrap();
        println!(
            "SUMMARY match_copy {name}: {:.2} ms per pass, {:.1} GB/s of match bytes",
            per * 1e3,
            ts.match_bytes() as f64 / per / 1e9
        );
        grp.bench_function(name, |b| {
            b.iter_custom(|iters| {
                Duration::from_secs_f64(g.time(iters as u32, &mut run).unwrap() * iters as f64)
            })
        });
    }
    grp.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
