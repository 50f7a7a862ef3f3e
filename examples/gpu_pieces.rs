//! Output rate of the GPU decode in pieces (`GpuDecoder::decompress_to`, `gpu::pieces`)
//! against the PCIe copy rate measured in the same process.
//!
//!     cargo build --release --example gpu_pieces
//!     target/release/examples/gpu_pieces [--mib N] [--pieces N] [--runs N] [ARCHIVE.acx]
//!
//! Without an archive it makes one: `--mib` MiB (default 2048) of DNA-like lines with
//! repeats, compressed at level 1 with 16 KiB blocks (what it is, and its ratio, is printed).
//! It then prints, each the best of `--runs` (default 3):
//! - `copy h2d` / `copy d2h`: page-locked host <-> device copies of 256 MiB on one stream
//!   (the PCIe link's rate as this process sees it);
//! - `pieces`: the decode in pieces into a sink (upload, decode, download, every block and the
//!   content checksum verified on the host), original bytes per second of wall time, with
//!   the free-memory plan or `--pieces N`;
//! - `whole`: the whole-archive decode (`GpuDecoder::decompress`, output in host memory),
//!   where the device holds it, for the choice `decompress --device gpu` makes.
//!
//! A line `SUMMARY pieces ... GB/s, h2d ... GB/s, d2h ... GB/s` closes the report.

use aceapex::encode::{compress_settings, Settings};
use aceapex::gpu::pieces::PiecePlan;
use aceapex::GpuDecoder;
use std::time::Instant;

fn fail(msg: &str) -> ! {
    eprintln!("gpu_pieces: {msg}");
    std::process::exit(1)
}

/// `n` bytes of DNA-like lines with copies of earlier stretches (matches), seeded.
fn sample(n: usize) -> Vec<u8> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut v = Vec::with_capacity(n + 4096);
    while v.len() < n {
        let r = next();
        if r.is_multiple_of(3) && v.len() > 100_000 {
            let back = 1 + (r >> 8) as usize % 100_000;
            let len = 20 + (r >> 40) as usize % 2000;
            let at = v.len() - back;
            for j in 0..len {
                let b = v[at + j];
                v.push(b);
            }
        } else {
            for i in 0..60 {
                v.push(b"ACGT"[(r >> (i % 32 * 2)) as usize & 3]);
            }
            v.push(b'\n');
        }
    }
    v.truncate(n);
    v
}

/// The best of `runs` timings of `f`, in seconds.
fn best(runs: u32, mut f: impl FnMut()) -> f64 {
    (0..runs.max(1))
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut mib, mut pieces, mut runs, mut path) = (2048usize, None, 3u32, None);
    while let Some(a) = args.next() {
        let mut num = |what: &str| -> u64 {
            args.next()
                .and_then(|s| s.parse().ok())
                .unwrap_or_else(|| fail(&format!("{what} takes a number")))
        };
        match a.as_str() {
            "--mib" => mib = num("--mib") as usize,
            "--pieces" => pieces = Some(num("--pieces") as u32),
            "--runs" => runs = num("--runs") as u32,
            "-h" | "--help" => {
                println!("usage: gpu_pieces [--mib N] [--pieces N] [--runs N] [ARCHIVE.acx]");
                return;
            }
            _ if a.starts_with('-') => fail(&format!("unknown option {a}")),
            _ => path = Some(a),
        }
    }
    let dec = GpuDecoder::open().unwrap_or_else(|e| fail(&format!("needs a GPU: {e}")));
    let packed = match &path {
        Some(p) => std::fs::read(p).unwrap_or_else(|e| fail(&format!("{p}: {e}"))),
        None => {
            let data = sample(mib << 20);
            let opts = Settings {
                level: 1,
                ..Default::default()
            };
            let t = Instant::now();
            let packed = compress_settings(&data, &opts, &|_| {}).unwrap();
            println!(
                "archive: {} MiB of generated DNA-like lines, level 1, 16 KiB blocks -> {} MiB \
                 (ratio {:.2}, compressed in {:.1} s)",
                mib,
                packed.len() >> 20,
                data.len() as f64 / packed.len() as f64,
                t.elapsed().as_secs_f64()
            );
            packed
        }
    };
    let a = aceapex::Archive::parse(&packed).unwrap_or_else(|e| fail(&e.to_string()));
    let size = a.header().original_size;
    println!(
        "device: {}; archive {} bytes, original {} bytes",
        dec.name(),
        packed.len(),
        size
    );

    // the PCIe link: page-locked copies of 256 MiB each way on the decoder's stream
    let g = dec.gpu();
    let n = 256usize << 20;
    // SAFETY: the host buffer is written by the device copy (or ignored) before it is read
    let mut host = unsafe { g.context().alloc_pinned_with_flags::<u8>(n, 0) }
        .unwrap_or_else(|e| fail(&format!("page-locked memory: {e}")));
    let mut dev = g
        .alloc_filled(n, 0x5A)
        .unwrap_or_else(|e| fail(&e.to_string()));
    let s = g.stream();
    let d2h = best(runs + 1, || {
        s.memcpy_dtoh(&dev, &mut host).unwrap();
        s.synchronize().unwrap();
    });
    let h2d = best(runs + 1, || {
        s.memcpy_htod(&host, &mut dev).unwrap();
        s.synchronize().unwrap();
    });
    drop((host, dev));
    let gbs = |bytes: u64, secs: f64| bytes as f64 / secs / 1e9;
    println!(
        "copy h2d: {:.2} GB/s (256 MiB, page-locked)",
        gbs(n as u64, h2d)
    );
    println!(
        "copy d2h: {:.2} GB/s (256 MiB, page-locked)",
        gbs(n as u64, d2h)
    );

    let plan = pieces.map_or(PiecePlan::Auto, PiecePlan::Count);
    let mut stats = None;
    let secs = best(runs, || {
        let s = dec
            .decompress_to_with(&packed, std::io::sink(), plan)
            .unwrap_or_else(|e| fail(&format!("decode in pieces: {e}")));
        stats = Some(s);
    });
    let stats = stats.expect("one run at least");
    println!(
        "pieces: {:.2} GB/s of output ({:.3} s; {} pieces, largest {} MiB of output, ~{} MiB \
         of device memory each; {plan:?})",
        gbs(size, secs),
        secs,
        stats.pieces,
        stats.max_piece_output >> 20,
        stats.max_piece_device_bytes >> 20
    );
    let whole = (|| {
        let mut first = Some(dec.decompress(&packed)?);
        let secs = best(runs, || {
            let out = first.take().map_or_else(|| dec.decompress(&packed), Ok);
            drop(out.unwrap_or_else(|e| fail(&format!("whole decode: {e}"))));
        });
        Ok::<f64, aceapex::Error>(secs)
    })();
    match whole {
        Ok(secs) => println!(
            "whole: {:.2} GB/s of output ({secs:.3} s, output in host memory)",
            gbs(size, secs)
        ),
        Err(e) => println!("whole: not run ({e})"),
    }
    println!(
        "SUMMARY pieces {:.2} GB/s, h2d {:.2} GB/s, d2h {:.2} GB/s",
        gbs(size, secs),
        gbs(n as u64, h2d),
        gbs(n as u64, d2h)
    );
}
