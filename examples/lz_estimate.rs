//! Estimates the compressed size of a file with the aceapex match layer plus static order-0
//! entropy coding (one table per stream per group of 64 blocks), and compares it with zstd
//! and lz4 compressing each block independently.
//!
//! ```text
//! cargo run --release --example lz_estimate -- FILE [--mb N] [--levels 1,5,9] [--block B]
//!     [--window W] [--no-rep] [--cap C] [--min-match M] [--no-ref] [--zstd19]
//! ```
//! Cost-model constants can be overridden through environment variables (tuning aid):
//! `LZ_CMD_NEW`, `LZ_CMD_REP`, `LZ_SPLIT`, `LZ_OFF_EXTRA`, `LZ_LEN_BYTE` (1/16 bits),
//! `LZ_LIT_SCALE` (percent), `LZ_LOW_BITS` (1/16 bits), `LZ_LOW_MIN`, `LZ_DIST_TABLE` (0/1).

use std::time::Instant;

use aceapex::encode::lz::{parse_segment_tuned, BlockParse, CostTuning, ParseParams};
use aceapex_device::lz::{decode_block, BlockFrame};
use rayon::prelude::*;

const GROUP_BLOCKS: usize = 64;
const BLOCK_OVERHEAD: f64 = 60.0;

/// `n * H0(bytes) / 8`.
fn h0_bytes(counts: &[u64; 256]) -> f64 {
    let n: u64 = counts.iter().sum();
    if n == 0 {
        return 0.0;
    }
    let nf = n as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| c as f64 * (nf / c as f64).log2())
        .sum::<f64>()
        / 8.0
}

/// Estimated coded size of the parse and the per-stream share.
fn estimate(blocks: &[BlockParse]) -> (f64, [f64; aceapex_device::format::STREAM_COUNT]) {
    let mut per = [0.0f64; aceapex_device::format::STREAM_COUNT];
    for g in blocks.chunks(GROUP_BLOCKS) {
        for (s, p) in per.iter_mut().enumerate() {
            let mut c = [0u64; 256];
            for b in g {
                for &x in b.stream_slices()[s] {
                    c[x as usize] += 1;
                }
            }
            *p += h0_bytes(&c);
        }
    }
    let total = per.iter().sum::<f64>() + BLOCK_OVERHEAD * blocks.len() as f64;
    (total, per)
}

/// Nanoseconds this thread has run on a CPU (Linux schedstat), if available.
fn thread_cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

fn env_i32(name: &str, d: i32) -> i32 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(d)
}

fn tuning_from_env() -> CostTuning {
    let d = CostTuning::default();
    CostTuning {
        cmd_new: env_i32("LZ_CMD_NEW", d.cmd_new),
        cmd_rep: env_i32("LZ_CMD_REP", d.cmd_rep),
        split: env_i32("LZ_SPLIT", d.split),
        off_extra: env_i32("LZ_OFF_EXTRA", d.off_extra),
        len_byte: env_i32("LZ_LEN_BYTE", d.len_byte),
        lit_scale: env_i32("LZ_LIT_SCALE", d.lit_scale),
        low_entropy_bits: env_i32("LZ_LOW_BITS", d.low_entropy_bits),
        low_entropy_min_len: env_i32("LZ_LOW_MIN", d.low_entropy_min_len as i32) as u32,
        dist_table: env_i32("LZ_DIST_TABLE", d.dist_table as i32) != 0,
        low_lit_scale: env_i32("LZ_LOW_LIT_SCALE", d.low_lit_scale),
        low_off_extra: env_i32("LZ_LOW_OFF_EXTRA", d.low_off_extra),
    }
}

/// Match-layer estimates per level for one file (see the module docs).
#[derive(clap::Parser)]
struct Args {
    /// The input file.
    file: String,
    /// MiB of the file to use.
    #[arg(long, default_value_t = 16)]
    mb: usize,
    /// Levels to measure, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,3,5,7,9")]
    levels: Vec<u32>,
    /// Block size in bytes.
    #[arg(long = "block", default_value_t = 16 << 10)]
    bs: usize,
    /// Window in bytes (default: the block size).
    #[arg(long)]
    window: Option<u32>,
    /// Depth cap (0 = none).
    #[arg(long, default_value_t = 0)]
    cap: u32,
    /// Shortest match.
    #[arg(long, default_value_t = 6)]
    min_match: u32,
    /// No repeat codes.
    #[arg(long)]
    no_rep: bool,
    /// Skip the reference comparison.
    #[arg(long)]
    no_ref: bool,
    /// Also measure zstd -19.
    #[arg(long)]
    zstd19: bool,
}

fn main() {
    let args = <Args as clap::Parser>::parse();
    let Args {
        file,
        mb,
        levels,
        bs,
        window,
        cap,
        min_match,
        ..
    } = args;
    let (rep, reference, zstd19) = (!args.no_rep, !args.no_ref, args.zstd19);
    let mut data = std::fs::read(&file).expect("read input");
    data.truncate(mb << 20);
    let n = data.len();
    let window = window.unwrap_or(bs as u32);
    let tuning = tuning_from_env();
    let name = std::path::Path::new(&file)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .to_string();
    println!("{name}: {n} bytes, block {bs}, window {window}, rep {rep}, cap {cap}, min_match {min_match}");

    for &level in &levels {
        let p = ParseParams {
            level,
            min_match,
            window,
            repeat_codes: rep,
            depth_cap: cap,
            depth_cap_method: Default::default(),
            raw_match_streams: false,
        };
        let t = Instant::now();
        let c0 = thread_cpu_ns();
        let blocks: Vec<BlockParse> = if window as usize <= bs {
            // one segment per block, single thread (speed per core)
            (0..n.div_ceil(bs))
                .flat_map(|b| {
                    parse_segment_tuned(&data, b * bs..((b + 1) * bs).min(n), bs, &p, &tuning)
                })
                .collect()
        } else {
            parse_segment_tuned(&data, 0..n, bs, &p, &tuning)
        };
        let secs = t.elapsed().as_secs_f64();
        let cpu_secs = match (c0, thread_cpu_ns()) {
            (Some(a), Some(b)) => (b - a) as f64 / 1e9,
            _ => secs,
        };
        // verify the round trip
        let mut out = vec![0u8; n];
        for (bi, b) in blocks.iter().enumerate() {
            let start = bi * bs;
            let frame = BlockFrame {
                dst_start: start,
                dst_end: (start + bs).min(n),
                src_floor: b.lowest_source / bs * bs,
                window,
                match_base: aceapex::encode::lz::match_base(min_match),
            };
            decode_block(b.streams(), &mut out, &frame).expect("decode");
        }
        assert!(out == data, "round trip mismatch");
        let (est, per) = estimate(&blocks);
        let matches: u64 = blocks.iter().map(|b| b.matches as u64).sum();
        let depth = blocks.iter().map(|b| b.max_depth).max().unwrap_or(0);
        println!(
            "  aceapex L{level}: ratio {:.4}  ({:.0} B; lit {:.0} len {:.0} off {:.0} cmd {:.0} tails {:.0})  {:.1} MB/s (cpu {:.1})  matches {matches} maxdepth {depth}",
            n as f64 / est,
            est,
            per[0],
            per[1],
            per[2],
            per[3],
            per[4],
            n as f64 / secs / 1e6,
            n as f64 / cpu_secs / 1e6
        );
    }

    if reference {
        let chunks: Vec<&[u8]> = data.chunks(bs).collect();
        let mut zl = vec![3];
        if zstd19 {
            zl.push(19);
        }
        for lvl in zl {
            let t = Instant::now();
            let total: usize = chunks
                .par_iter()
                .map(|c| zstd::bulk::compress(c, lvl).unwrap().len())
                .sum();
            println!(
                "  zstd-{lvl} blockwise: ratio {:.4} ({total} B) [{:.1}s, parallel]",
                n as f64 / total as f64,
                t.elapsed().as_secs_f64()
            );
        }
        let t = Instant::now();
        let c0 = thread_cpu_ns();
        let total: usize = chunks
            .iter()
            .map(|c| zstd::bulk::compress(c, 3).unwrap().len())
            .sum();
        let cpu = match (c0, thread_cpu_ns()) {
            (Some(a), Some(b)) => (b - a) as f64 / 1e9,
            _ => t.elapsed().as_secs_f64(),
        };
        println!(
            "  zstd-3 single thread: {:.1} MB/s (cpu {:.1}) ({total} B)",
            n as f64 / t.elapsed().as_secs_f64() / 1e6,
            n as f64 / cpu / 1e6
        );
        let total: usize = chunks
            .iter()
            .map(|c| lz4_flex::block::compress(c).len())
            .sum();
        println!(
            "  lz4 blockwise: ratio {:.4} ({total} B)",
            n as f64 / total as f64
        );
    }
}
