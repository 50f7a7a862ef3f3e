//! Random access on the GPU, device-resident (the archive uploaded once; each request is
//! planned, uploaded, decoded, verified on the device and gathered into a device buffer;
//! the time is the host's, from the call to the status words back): one aligned 16 KiB tile
//! at the start, middle and end of the archive (p50, p99), and batches of 1 to 100,000
//! random 8 KiB and 16 KiB windows (median time, windows/s, GB/s of window bytes). The first
//! request of every kind is checked against the CPU reader, byte for byte.
//!
//! Archives: every `*.acx` in `ACEAPEX_BENCH_ARCHIVES`, else a generated DNA-like sample.
//! Without a usable GPU it says so and exits with status 1. Prints one line per figure and
//! a JSON line per archive. `ACEAPEX_BENCH_QUICK=1` runs fewer repetitions.

use aceapex::format::Archive;
use aceapex::gpu::decoder::GpuArchive;
use aceapex::gpu::seek::{plan, RangeStatus};
use aceapex::gpu::Gpu;
use aceapex::Reader;
use std::time::Instant;

/// Every `*.acx` of `ACEAPEX_BENCH_ARCHIVES` by name (as `gpu_decode.rs` reads them), else a
/// generated DNA-like sample compressed for the GPU.
fn archives() -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::env::var("ACEAPEX_BENCH_ARCHIVES")
        .map(|dir| {
            let mut p: Vec<_> = std::fs::read_dir(dir)
                .unwrap()
                .flatten()
                .map(|e| e.path())
                .collect();
            p.sort();
            p.into_iter()
                .filter(|p| p.extension().is_some_and(|e| e == "acx"))
                .map(|p| {
                    (
                        p.file_stem().unwrap().to_string_lossy().into_owned(),
                        std::fs::read(&p).unwrap(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    if v.is_empty() {
        let mut r = aceapex::gpu::tokens::Rng::new(3);
        let dna: Vec<u8> = (0..64 << 20)
            .map(|_| b"ACGT"[r.below(4) as usize])
            .collect();
        let opts = aceapex::Options::default().with_target(aceapex::Target::Gpu);
        v.push((
            "generated-dna".into(),
            aceapex::compress(&dna, &opts).unwrap(),
        ));
    }
    v
}

/// The `q` quantile of `t` (sorted in place), in microseconds.
fn quantile(t: &mut [f64], q: f64) -> f64 {
    t.sort_by(|a, b| a.partial_cmp(b).unwrap());
    t[((t.len() - 1) as f64 * q).round() as usize]
}

struct Bench<'a> {
    gpu: &'a Gpu,
    ga: GpuArchive,
    cpu: Reader<'a>,
    out: cudarc::driver::CudaSlice<u8>,
}

impl Bench<'_> {
    /// Times `reps` requests of `ranges` (microseconds each); the first checked on the CPU.
    fn time(&mut self, ranges: &[(u64, u64)], reps: usize) -> Vec<f64> {
        let st = self
            .ga
            .read_ranges(self.gpu, ranges, &mut self.out)
            .unwrap();
        let host = self.gpu.download(&self.out).unwrap();
        let mut at = 0usize;
        for (&(off, len), s) in ranges.iter().zip(&st) {
            let mut want = vec![0u8; len as usize];
            self.cpu.read_range(off, &mut want).unwrap();
            if *s == RangeStatus::Ok {
                assert!(
                    host[at..at + len as usize] == want[..],
                    "range {off}+{len} differs"
                );
            } else {
                assert!(
                    matches!(
                        s,
                        RangeStatus::Bad {
                            status: aceapex::Status::Fallback,
                            ..
                        }
                    ),
                    "{s:?}"
                );
            }
            at += len as usize;
        }
        (0..reps)
            .map(|_| {
                let t = Instant::now();
                self.ga
                    .read_ranges(self.gpu, ranges, &mut self.out)
                    .unwrap();
                t.elapsed().as_secs_f64() * 1e6
            })
            .collect()
    }

    /// Where the time of a request goes: the host's planning (median, microseconds) and the
    /// GPU's time per request with `reps` of them queued back to back (copies and kernels;
    /// microseconds, from events).
    fn split(&mut self, ranges: &[(u64, u64)], reps: usize) -> (f64, f64) {
        let mut t: Vec<f64> = (0..reps.max(3))
            .map(|_| {
                let t = Instant::now();
                let p = plan(
                    ranges,
                    self.ga.block_size(),
                    self.ga.original_size(),
                    self.ga.own_blocks(),
                    self.ga.seek_chunks(),
                );
                let _ = std::hint::black_box(p);
                t.elapsed().as_secs_f64() * 1e6
            })
            .collect();
        let host = quantile(&mut t, 0.5);
        let p = plan(
            ranges,
            self.ga.block_size(),
            self.ga.original_size(),
            self.ga.own_blocks(),
            self.ga.seek_chunks(),
        )
        .unwrap();
        self.gpu.sync().unwrap();
        let gpu = self
            .gpu
            .time(reps as u32, || {
                self.ga.submit_planned(self.gpu, &p, &mut self.out)
            })
            .unwrap();
        self.gpu.sync().unwrap();
        (host, gpu * 1e6)
    }
}

fn main() {
    let gpu = match Gpu::open() {
        Ok(g) => g,
        Err(e) => {
            eprintln!("gpu_seek: no usable GPU ({e}); nothing measured");
            std::process::exit(1);
        }
    };
    let quick = std::env::var_os("ACEAPEX_BENCH_QUICK").is_some();
    println!("gpu_seek on {}", gpu.name());
    for (name, bytes) in archives() {
        let a = Archive::parse(&bytes).unwrap();
        let ga = match GpuArchive::upload(&gpu, &a) {
            Ok(g) => g,
            Err(e) => {
                println!("{name}: not uploaded ({e})");
                continue;
            }
        };
        let cpu = Reader::new(&bytes).unwrap();
        let size = cpu.len();
        let bs = cpu.block_size() as u64;
        let out = gpu.alloc_filled(100_000 * 16_384, 0xA5).unwrap();
        let mut b = Bench {
            gpu: &gpu,
            ga,
            cpu,
            out,
        };
        let mut json = vec![format!(
            "\"archive\":\"{name}\",\"original_bytes\":{size},\"block_size\":{bs}"
        )];
        // one aligned 16 KiB tile
        let tile = 16_384u64.min(size);
        for (at, off) in [
            ("start", 0),
            ("middle", (size / 2) / tile * tile),
            ("end", (size - tile) / tile * tile),
        ] {
            let mut t = b.time(&[(off, tile)], if quick { 200 } else { 2_000 });
            let (p50, p99) = (quantile(&mut t, 0.5), quantile(&mut t, 0.99));
            let (host, dev) = b.split(&[(off, tile)], 200);
            println!("{name}: one 16 KiB tile at the {at}: p50 {p50:.1} us, p99 {p99:.1} us (plan {host:.1} us; GPU, queued back to back, {dev:.1} us)");
            json.push(format!(
                "\"tile_{at}_p50_us\":{p50:.2},\"tile_{at}_p99_us\":{p99:.2}"
            ));
        }
        let mut r = aceapex::gpu::tokens::Rng::new(17);
        for w in [8_192u64, 16_384] {
            if w > size {
                continue;
            }
            for n in [1usize, 10, 100, 1_000, 10_000, 100_000] {
                let ranges: Vec<(u64, u64)> = (0..n).map(|_| (r.below(size - w + 1), w)).collect();
                let reps = if quick { 5 } else { (20_000 / n).clamp(5, 500) };
                let mut t = b.time(&ranges, reps);
                let p50 = quantile(&mut t, 0.5);
                let per_s = n as f64 / (p50 * 1e-6);
                let gbs = per_s * w as f64 / 1e9;
                let (host, dev) = b.split(&ranges, reps.min(20));
                println!(
                    "{name}: {n} random {} KiB windows: {p50:.1} us, {:.2} M windows/s, {gbs:.1} GB/s (plan {host:.1} us; GPU, queued back to back, {dev:.1} us = {:.2} M windows/s)",
                    w / 1024,
                    per_s / 1e6,
                    n as f64 / dev / 1.0
                );
                json.push(format!(
                    "\"w{w}_n{n}_us\":{p50:.2},\"w{w}_n{n}_mwps\":{:.3}",
                    per_s / 1e6
                ));
            }
        }
        // 1,000 random aligned tiles in one request
        let ranges: Vec<(u64, u64)> = (0..1_000)
            .map(|_| (r.below(size / tile) * tile, tile))
            .collect();
        let mut t = b.time(&ranges, if quick { 10 } else { 200 });
        let p50 = quantile(&mut t, 0.5);
        println!("{name}: 1,000 random aligned 16 KiB tiles in one request: p50 {p50:.1} us");
        json.push(format!("\"tiles1000_p50_us\":{p50:.2}"));
        println!("{{{}}}", json.join(","));
    }
}
