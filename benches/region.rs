//! CPU region reads, one thread, hot data: aceapex's `Reader` (16 KiB and 4 KiB blocks, every
//! block read verified by its checksum) beside seekable-style zstd (independent 16 KiB
//! frames with an offset index and frame checksums, levels 3 and 19) and htslib's
//! `faidx_fetch_seq` on the bgzip'd FASTA, on the same file and the same regions in one run.
//!
//! Run: `cargo bench --bench region` (a filter works as usual, e.g. `-- tile16k`). The FASTA
//! is `$ACEAPEX_REGION_FASTA`, default `dna/hs37_chrX_first70Mb.fa` under
//! `$ACEAPEX_BENCH_DIR` (default `corpora` in the repository root); missing, the bench says
//! so and stops. Requests, `REQUESTS` of each kind at random positions of the first sequence
//! (a fixed seed), cycled through by the iterations:
//! - `region5000`: 5,000 bytes at the byte offset of a random base (htslib: the 5,000 bases
//!   from that base, 5,000 bytes plus the line feeds among them);
//! - `tile16k`: 16,384 bytes at a random multiple of 16,384 (aceapex and zstd only).
//!
//! Criterion's time per iteration is the mean time of a request; its median over samples is
//! the p50 the report gives. Per-request quantiles (p99): `examples/region_latency.rs`.
//! htslib is loaded at run time (`libhts.so.3`); without it its column is skipped with a note.

#[path = "region/others.rs"]
mod others;

use criterion::{Criterion, Throughput};
use others::{Hts, Layout, ZstdSeekable};
use std::path::PathBuf;

/// Requests of each kind.
const REQUESTS: usize = 10_000;
const REGION: usize = 5_000;
const TILE: usize = 16_384;

fn fasta_path() -> PathBuf {
    if let Some(p) = std::env::var_os("ACEAPEX_REGION_FASTA") {
        return PathBuf::from(p);
    }
    let dir = match std::env::var_os("ACEAPEX_BENCH_DIR") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpora"),
    };
    dir.join("dna/hs37_chrX_first70Mb.fa")
}

/// A small xorshift generator (the same requests on every run).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

fn main() {
    let path = fasta_path();
    let Ok(data) = std::fs::read(&path) else {
        eprintln!(
            "region bench: {} not found; nothing measured",
            path.display()
        );
        return;
    };
    let layout = Layout::first(&data).expect("the file is FASTA that samtools indexes");
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    // random bases with 5,000 more after them, and random tiles
    let bases: Vec<u64> = (0..REQUESTS)
        .map(|_| rng.below(layout.length - REGION as u64 + 1))
        .collect();
    let regions: Vec<u64> = bases.iter().map(|&p| layout.byte_of(p)).collect();
    let size = data.len() as u64;
    let tiles: Vec<u64> = (0..REQUESTS)
        .map(|_| rng.below(size / TILE as u64) * TILE as u64)
        .collect();
    assert!(regions.iter().all(|&o| o + REGION as u64 <= size));

    let archives: Vec<(String, Vec<u8>)> = [16_384u32, 4_096]
        .iter()
        .map(|&bs| {
            let opts = aceapex::Options::default().with_block_size(bs);
            let name = format!("aceapex-{}k", bs >> 10);
            (name, aceapex::compress(&data, &opts).expect("compresses"))
        })
        .collect();
    let zstds: Vec<(String, ZstdSeekable)> = [3, 19]
        .iter()
        .map(|&l| {
            (
                format!("zstd{l}-seekable16k"),
                ZstdSeekable::new(&data, TILE, l),
            )
        })
        .collect();
    let dir = tempfile::tempdir().expect("temporary directory");
    let hts = match Hts::build(&data, dir.path(), &layout.name) {
        Ok(h) => Some(h),
        Err(e) => {
            eprintln!("region bench: htslib skipped: {e}");
            None
        }
    };
    for (name, a) in &archives {
        println!(
            "SIZE {name} {} bytes (ratio {:.3})",
            a.len(),
            size as f64 / a.len() as f64
        );
    }
    for (name, z) in &zstds {
        let n = z.compressed_len();
        println!(
            "SIZE {name} {n} bytes (ratio {:.3})",
            size as f64 / n as f64
        );
    }

    let mut c = Criterion::default().configure_from_args();
    let mut buf = vec![0u8; TILE];
    for (kind, offsets, len) in [("region5000", &regions, REGION), ("tile16k", &tiles, TILE)] {
        let mut g = c.benchmark_group(kind);
        g.throughput(Throughput::Bytes(len as u64));
        for (name, archive) in &archives {
            let reader = aceapex::Reader::new(archive).expect("archive parses");
            // every answer checked once against the original bytes (a bench must not lie)
            for &o in offsets.iter() {
                reader.read_range(o, &mut buf[..len]).expect("reads");
                assert!(
                    buf[..len] == data[o as usize..o as usize + len],
                    "{name} at {o}"
                );
            }
            let mut i = 0;
            g.bench_function(name.as_str(), |b| {
                b.iter(|| {
                    i = (i + 1) % offsets.len();
                    reader
                        .read_range(offsets[i], &mut buf[..len])
                        .expect("reads");
                })
            });
        }
        for (name, z) in &zstds {
            for &o in offsets.iter() {
                z.read_range(o, &mut buf[..len]);
                assert!(
                    buf[..len] == data[o as usize..o as usize + len],
                    "{name} at {o}"
                );
            }
            let mut i = 0;
            g.bench_function(name.as_str(), |b| {
                b.iter(|| {
                    i = (i + 1) % offsets.len();
                    z.read_range(offsets[i], &mut buf[..len]);
                })
            });
        }
        if let (Some(h), "region5000") = (&hts, kind) {
            let mut out = Vec::with_capacity(REGION);
            for (&p, &o) in bases.iter().zip(offsets.iter()).take(200) {
                h.fetch(p, REGION, &mut out);
                let want: Vec<u8> = data[o as usize..]
                    .iter()
                    .filter(|&&c| c != b'\n' && c != b'\r')
                    .take(REGION)
                    .copied()
                    .collect();
                assert!(out == want, "htslib at base {p}");
            }
            let mut i = 0;
            g.bench_function("htslib-faidx-bgzip", |b| {
                b.iter(|| {
                    i = (i + 1) % bases.len();
                    h.fetch(bases[i], REGION, &mut out);
                })
            });
        }
        g.finish();
    }
    c.final_summary();
}
