//! Whole-archive GPU decode: device-resident (archive uploaded once, output left
//! in device memory; GB/s = original bytes / time) and end to end (upload, decode, download).
//!
//! Archives: every `*.acx` in `ACEAPEX_BENCH_ARCHIVES` (the GPU bundle carries archives of
//! the real corpora), else a generated DNA-like sample. Without a usable GPU it says so and
//! exits with status 1 (a benchmark that did not run is not a pass). Settings of this
//! benchmark (the library reads no environment variable; they map to [`GpuTuning`]):
//! `ACEAPEX_DEV_PTX=FILE` loads the kernels of another PTX build, `ACEAPEX_NO_OVERLAP=1`
//! runs the dense pipe's two kernels one after the other.
//! `ACEAPEX_BENCH_RANS_ONLY=1`: only the rANS stage is timed and nothing is verified, for
//! diagnostic kernel variants that decode wrongly on purpose.

use aceapex::device::dense_layout::STAGE_SEQ_PARSE;
use aceapex::format::Archive;
use aceapex::gpu::decoder::{check_status, Decoder, GpuArchive};
use aceapex::gpu::{Gpu, GpuError, GpuTuning};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::time::{Duration, Instant};

fn archives() -> Vec<(String, Vec<u8>)> {
    let mut v = Vec::new();
    if let Ok(dir) = std::env::var("ACEAPEX_BENCH_ARCHIVES") {
        let mut paths: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        paths.sort();
        for p in paths {
            if p.extension().is_some_and(|e| e == "acx") {
                v.push((
                    p.file_stem().unwrap().to_string_lossy().into_owned(),
                    std::fs::read(&p).unwrap(),
                ));
            }
        }
    }
    if v.is_empty() {
        let mut r = aceapex::gpu::tokens::Rng::new(3);
        let dna: Vec<u8> = (0..64 << 20)
            .map(|_| b"ACGT"[r.below(4) as usize])
            .collect();
        v.push((
            "generated-dna".into(),
            aceapex::compress(&dna, &Default::default()).unwrap(),
        ));
    }
    v
}

fn bench(c: &mut Criterion) {
    let mut tuning = GpuTuning::default();
    if let Some(p) = std::env::var_os("ACEAPEX_DEV_PTX") {
        let ptx = std::fs::read_to_string(&p)
            .unwrap_or_else(|e| panic!("ACEAPEX_DEV_PTX {}: {e}", p.to_string_lossy()));
        println!("gpu_decode: kernels from {}", p.to_string_lossy());
        tuning = tuning.with_ptx(Some(ptx));
    }
    if std::env::var_os("ACEAPEX_NO_OVERLAP").is_some() {
        tuning = tuning.with_overlap(false);
    }
    let g = Gpu::open_with(&tuning).unwrap_or_else(|e| {
        eprintln!("gpu_decode: needs an NVIDIA GPU, not run: {e}");
        std::process::exit(1)
    });
    // the dense pipe's kernels overlap on sm_90 unless ACEAPEX_NO_OVERLAP is set
    // (device/src/handoff.rs): said once, so that a log tells which was measured
    println!(
        "gpu_decode on {}: dense pipe kernels {}",
        g.name(),
        if g.overlap() {
            "overlapping (programmatic dependent launch)"
        } else {
            "one after the other"
        }
    );
    let mut grp = c.benchmark_group("gpu_decode");
    grp.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    // kernel experiments that break the decode on purpose (e.g. a rANS variant that reads
    // its renormalisation words from a fixed address, to bound what their latency costs):
    // time the rANS stage alone, without verifying anything
    let rans_only = std::env::var_os("ACEAPEX_BENCH_RANS_ONLY").is_some();
    for (name, bytes) in archives() {
        let a = Archive::parse(&bytes).unwrap();
        let size = a.header().original_size;
        let ga = GpuArchive::upload(&g, &a).unwrap();
        let (mut out, mut status) = ga.output_buffers(&g).unwrap();
        if rans_only {
            let mut t: Vec<f64> = (0..5)
                .map(|_| {
                    g.time(10, || {
                        ga.decode_all_with(&g, Decoder::RansOnly, &mut out, &mut status)
                    })
                    .unwrap()
                })
                .collect();
            t.sort_by(f64::total_cmp);
            println!(
                "SUMMARY rans_only {name}: median of 5 means of 10: {:.4} ms (min {:.4})",
                t[2] * 1e3,
                t[0] * 1e3
            );
            continue;
        }
        ga.decode_all(&g, &mut out, &mut status).unwrap();
        check_status(&g.stream().clone_dtoh(&status).unwrap()).unwrap();
        let back = g.download(&out).unwrap();
        aceapex::gpu::decoder::verify(&a, &back[..size as usize]).unwrap();
        // the wavefront's first call captures its graph: once untimed, then replays (not for
        // slices with runs, FORMAT.md §5.8, which it refuses)
        let has_wave = match ga.decode_all_status(&g, Decoder::Wavefront, &mut out, &mut status) {
            Ok(wave_st) => {
                check_status(&wave_st).unwrap();
                let back = g.download(&out).unwrap();
                aceapex::gpu::decoder::verify(&a, &back[..size as usize]).unwrap();
                true
            }
            Err(GpuError::Unsupported(_)) => false,
            Err(e) => panic!("{name}: the wavefront: {e}"),
        };
        let levels = ga.wavefront_levels(&g).unwrap().unwrap_or(0);
        let mut timed = |d: Decoder| {
            g.time(5, || ga.decode_all_with(&g, d, &mut out, &mut status))
                .unwrap()
        };
        let lane = timed(Decoder::Lane);
        let rans = timed(Decoder::RansOnly);
        let load = timed(Decoder::DenseStages(0));
        let parse = timed(Decoder::DenseStages(1));
        let parse_seq = timed(Decoder::DenseStages(1 | STAGE_SEQ_PARSE));
        let dense = timed(Decoder::Dense);
        let wave = if has_wave {
            timed(Decoder::Wavefront)
        } else {
            f64::NAN
        };
        // what the host takes to queue a dense decode (its launches), against the GPU's time
        // for one: where it is the longer, the GPU waits for the host between decodes and
        // `dense` above is the host's time
        g.stream().synchronize().unwrap();
        let t = Instant::now();
        let queued = 20;
        for _ in 0..queued {
            ga.decode_all(&g, &mut out, &mut status).unwrap();
        }
        let submit = t.elapsed().as_secs_f64() / queued as f64;
        g.stream().synchronize().unwrap();
        println!(
            "SUBMIT gpu_decode {name}: the host queues a dense decode in {:.1} us (GPU time per decode {:.1} us)",
            submit * 1e6,
            dense * 1e6
        );
        // the timing variants left partial output: decode once more and verify
        ga.decode_all(&g, &mut out, &mut status).unwrap();
        check_status(&g.stream().clone_dtoh(&status).unwrap()).unwrap();
        aceapex::gpu::decoder::verify(&a, &g.download(&out).unwrap()[..size as usize]).unwrap();
        let t = Instant::now();
        let e2e_runs = 3;
        for _ in 0..e2e_runs {
            aceapex::gpu::decoder::decompress(&g, &a).unwrap();
        }
        let e2e = t.elapsed().as_secs_f64() / e2e_runs as f64;
        let gbs = |t: f64| size as f64 / t / 1e9;
        println!(
            "SUMMARY gpu_decode {name}: {size} bytes, ratio {:.3}; device-resident dense {:.3} ms = {:.1} GB/s, lane {:.3} ms = {:.1} GB/s, wavefront ({levels} levels) {:.3} ms = {:.1} GB/s; stage split (dense): rANS {:.3} ms, +load/varints {:.3} ms, +parse/fill {:.3} ms, +resolve/write {:.3} ms; parse+fill parallel (whole CTA) {:.3} ms vs sequential (one lane) {:.3} ms; end-to-end dense (upload+decode+download+host verify) {:.1} ms = {:.2} GB/s",
            size as f64 / bytes.len() as f64,
            dense * 1e3,
            gbs(dense),
            lane * 1e3,
            gbs(lane),
            wave * 1e3,
            gbs(wave),
            rans * 1e3,
            (load - rans) * 1e3,
            (parse - load) * 1e3,
            (dense - parse) * 1e3,
            (parse - load) * 1e3,
            (parse_seq - load) * 1e3,
            e2e * 1e3,
            gbs(e2e)
        );
        grp.throughput(Throughput::Bytes(size));
        for (label, d) in [
            ("dense", Decoder::Dense),
            ("lane", Decoder::Lane),
            ("wavefront", Decoder::Wavefront),
        ] {
            if d == Decoder::Wavefront && !has_wave {
                continue;
            }
            grp.bench_function(format!("{label}/{name}"), |b| {
                b.iter_custom(|iters| {
                    Duration::from_secs_f64(
                        g.time(iters as u32, || {
                            ga.decode_all_with(&g, d, &mut out, &mut status)
                        })
                        .unwrap()
                            * iters as f64,
                    )
                })
            });
        }
    }
    grp.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
