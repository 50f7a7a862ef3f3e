//! Prints the compression-ratio table of the ACEAPEX papers (Table VI) for a set of files:
//! lz4, zstd level 3, brotli quality 9 and zstd level 19, each compressing independent blocks
//! (default 16 KiB, no sharing between blocks), against aceapex's own archive (whole archive
//! counted: header, block table, frequency tables and block data). Every aceapex archive is
//! decoded again and checked against the input.
//!
//! ```text
//! cargo run --release --example ratio_table -- PATH... [--block-size 16K] [--level 6]
//!     [--gpu] [--max-mb N] [--json]
//! ```
//! A directory argument is walked recursively; hidden files and directories (name starting
//! with `.`) are skipped. Ratio = original bytes / compressed bytes (higher is better);
//! `ours/zstd-3` and `ours/zstd-19` are ratio quotients (above 1: ours compresses better).
//! `--max-mb N` uses only the first N MiB (N * 2^20 bytes) of each file.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use rayon::prelude::*;

/// The ratio table of the papers (see the module docs).
#[derive(clap::Parser)]
struct Args {
    /// Files or directories (walked recursively, hidden entries skipped).
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Block size for every codec: bytes or with K/KiB/M/MiB.
    #[arg(long, value_parser = parse_size, default_value = "16K")]
    block_size: usize,
    /// aceapex level.
    #[arg(long, default_value_t = aceapex::Options::default().level)]
    level: u32,
    /// aceapex with `Target::Gpu` (default `Target::Size`).
    #[arg(long)]
    gpu: bool,
    /// Use only the first N MiB of each file.
    #[arg(long = "max-mb", value_name = "N", value_parser = parse_max_mb)]
    max_bytes: Option<usize>,
    /// Print JSON instead of the table.
    #[arg(long)]
    json: bool,
}

/// `--max-mb N`: a positive number of MiB (fractions allowed), as bytes.
fn parse_max_mb(v: &str) -> Result<usize, String> {
    let mb: f64 = v.parse().map_err(|_| format!("invalid --max-mb '{v}'"))?;
    if mb.is_nan() || mb <= 0.0 {
        return Err(format!("--max-mb must be positive, got '{v}'"));
    }
    Ok((mb * (1u64 << 20) as f64) as usize)
}

/// Parses `16384`, `16K`, `16KiB`, `1M`, `1MiB` (binary units).
fn parse_size(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    let (num, mult) = if let Some(n) = lower.strip_suffix("kib").or(lower.strip_suffix('k')) {
        (n.to_string(), 1usize << 10)
    } else if let Some(n) = lower.strip_suffix("mib").or(lower.strip_suffix('m')) {
        (n.to_string(), 1usize << 20)
    } else {
        (lower.clone(), 1usize)
    };
    let v: usize = num
        .trim()
        .parse()
        .map_err(|_| format!("invalid size '{s}'"))?;
    v.checked_mul(mult)
        .filter(|&x| x > 0)
        .ok_or_else(|| format!("invalid size '{s}'"))
}

fn is_hidden(p: &Path) -> bool {
    p.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with('.') && n != "." && n != "..")
}

/// Regular files under `dir`, recursively, sorted, hidden entries skipped.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| !is_hidden(p))
        .collect();
    entries.sort();
    for p in entries {
        let md = std::fs::metadata(&p)?;
        if md.is_dir() {
            walk(&p, out)?;
        } else if md.is_file() {
            out.push(p);
        }
    }
    Ok(())
}

/// Reads at most `max` bytes from the start of a file.
fn read_prefix(p: &Path, max: Option<usize>) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    match max {
        None => std::fs::read(p),
        Some(m) => {
            let mut buf = Vec::new();
            std::fs::File::open(p)?
                .take(m as u64)
                .read_to_end(&mut buf)?;
            Ok(buf)
        }
    }
}

/// Sum of the compressed sizes of every `bs`-byte block compressed on its own.
fn blockwise(data: &[u8], bs: usize, f: impl Fn(&[u8]) -> usize + Sync) -> usize {
    data.par_chunks(bs).map(&f).sum()
}

fn lz4_size(c: &[u8]) -> usize {
    lz4_flex::block::compress(c).len()
}

fn zstd_size(c: &[u8], level: i32) -> usize {
    zstd::bulk::compress(c, level)
        .expect("zstd compression failed")
        .len()
}

/// Brotli quality 9, window 2^22 (the block is far smaller, so the whole block is in reach).
fn brotli_size(c: &[u8]) -> usize {
    let params = brotli::enc::BrotliEncoderParams {
        quality: 9,
        lgwin: 22,
        size_hint: c.len(),
        ..Default::default()
    };
    let mut out = Vec::with_capacity(c.len() + 64);
    brotli::BrotliCompress(&mut &c[..], &mut out, &params).expect("brotli compression failed");
    out.len()
}

/// The brotli crate's quality-9 hasher (H9) allocates and zeroes a 32 MiB table per call,
/// i.e. per 16 KiB block. glibc serves such requests with fresh mmaps, so every block pays
/// for ~8k page faults; keeping freed memory in the heap instead makes brotli ~2x faster.
/// Only speed changes, never a compressed size.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn tune_malloc() {
    extern "C" {
        fn mallopt(param: i32, value: i32) -> i32;
    }
    const M_TRIM_THRESHOLD: i32 = -1;
    const M_TOP_PAD: i32 = -2;
    const M_MMAP_MAX: i32 = -4;
    // SAFETY: mallopt only changes glibc allocator tuning; called before any threads start.
    unsafe {
        mallopt(M_MMAP_MAX, 0);
        mallopt(M_TRIM_THRESHOLD, i32::MAX);
        mallopt(M_TOP_PAD, 64 << 20);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn tune_malloc() {}

const CODECS: [&str; 5] = ["lz4", "zstd-3", "brotli-9", "zstd-19", "ours"];

struct Row {
    name: String,
    original: usize,
    /// Compressed bytes per codec, in `CODECS` order.
    sizes: [usize; 5],
    /// Seconds per codec, in `CODECS` order.
    secs: [f64; 5],
    roundtrip_ok: bool,
    roundtrip_err: Option<String>,
}

fn ratio(orig: usize, comp: usize) -> f64 {
    if comp == 0 {
        0.0
    } else {
        orig as f64 / comp as f64
    }
}

fn json_str(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for ch in s.chars() {
        match ch {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            '\t' => o.push_str("\\t"),
            c if (c as u32) < 0x20 => o.push_str(&format!("\\u{:04x}", c as u32)),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

fn row_json(r: &Row, args: &Args) -> String {
    let mut s = format!(
        "{{\"file\":{},\"bytes\":{},\"block_size\":{},\"level\":{}",
        json_str(&r.name),
        r.original,
        args.block_size,
        args.level
    );
    for (i, c) in CODECS.iter().enumerate() {
        let key = c.replace('-', "");
        s.push_str(&format!(
            ",\"{key}_bytes\":{},\"{key}_ratio\":{:.4},\"{key}_secs\":{:.3}",
            r.sizes[i],
            ratio(r.original, r.sizes[i]),
            r.secs[i]
        ));
    }
    let ours = ratio(r.original, r.sizes[4]);
    s.push_str(&format!(
        ",\"ours_over_zstd3\":{:.4},\"ours_over_zstd19\":{:.4},\"roundtrip_ok\":{}",
        ours / ratio(r.original, r.sizes[1]),
        ours / ratio(r.original, r.sizes[3]),
        r.roundtrip_ok
    ));
    if let Some(e) = &r.roundtrip_err {
        s.push_str(&format!(",\"roundtrip_error\":{}", json_str(e)));
    }
    s.push('}');
    s
}

fn measure(name: String, data: &[u8], args: &Args) -> Result<Row, String> {
    let bs = args.block_size;
    let mut sizes = [0usize; 5];
    let mut secs = [0f64; 5];
    let timed = |f: &dyn Fn() -> usize| {
        let t = Instant::now();
        let n = f();
        (n, t.elapsed().as_secs_f64())
    };
    (sizes[0], secs[0]) = timed(&|| blockwise(data, bs, lz4_size));
    (sizes[1], secs[1]) = timed(&|| blockwise(data, bs, |c| zstd_size(c, 3)));
    (sizes[2], secs[2]) = timed(&|| blockwise(data, bs, brotli_size));
    (sizes[3], secs[3]) = timed(&|| blockwise(data, bs, |c| zstd_size(c, 19)));

    // the level's choice of minimum match (the time includes its trial on a sample)
    let opts = options(args)
        .with_block_size(u32::try_from(bs).map_err(|_| format!("block size {bs} too large"))?);
    let t = Instant::now();
    let archive = aceapex::compress(data, &opts).map_err(|e| e.to_string())?;
    secs[4] = t.elapsed().as_secs_f64();
    sizes[4] = archive.len();

    let (roundtrip_ok, roundtrip_err) = match aceapex::Archive::parse(&archive) {
        Err(e) => (false, Some(format!("parse: {e}"))),
        Ok(a) => match aceapex::decode::decompress(&a) {
            Err(e) => (false, Some(format!("decode: {e}"))),
            Ok(out) if out == data => (true, None),
            Ok(out) => (
                false,
                Some(format!(
                    "output differs ({} bytes decoded, {} expected)",
                    out.len(),
                    data.len()
                )),
            ),
        },
    };
    Ok(Row {
        name,
        original: data.len(),
        sizes,
        secs,
        roundtrip_ok,
        roundtrip_err,
    })
}

/// aceapex's options of `args` (block size aside).
fn options(args: &Args) -> aceapex::Options {
    let target = match args.gpu {
        true => aceapex::Target::Gpu,
        false => aceapex::Target::Size,
    };
    aceapex::Options::new()
        .with_level(args.level)
        .with_target(target)
}

fn main() {
    tune_malloc();
    let args = <Args as clap::Parser>::parse();
    // Options check up front, so a bad --level/--block-size fails before any work.
    if let Err(e) = options(&args)
        .with_block_size(args.block_size.min(u32::MAX as usize) as u32)
        .validate()
    {
        eprintln!("invalid options: {e}");
        std::process::exit(2);
    }

    // (display name, path)
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    for p in &args.paths {
        if p.is_dir() {
            let mut found = Vec::new();
            if let Err(e) = walk(p, &mut found) {
                eprintln!("{}: {e}", p.display());
                std::process::exit(1);
            }
            for f in found {
                let name = f
                    .strip_prefix(p)
                    .map(|r| r.display().to_string())
                    .unwrap_or_else(|_| f.display().to_string());
                files.push((name, f));
            }
        } else if p.is_file() {
            files.push((p.display().to_string(), p.clone()));
        } else {
            eprintln!("{}: not a file or directory", p.display());
            std::process::exit(1);
        }
    }
    if files.is_empty() {
        eprintln!("no files found");
        std::process::exit(1);
    }

    let t_all = Instant::now();
    let name_w = files
        .iter()
        .map(|(n, _)| n.len())
        .max()
        .unwrap_or(4)
        .clamp(20, 48);
    if !args.json {
        println!(
            "block size {} B (independent blocks), aceapex level {}, {}; ratio = original / compressed",
            args.block_size,
            args.level,
            match args.max_bytes {
                Some(m) => format!("first {:.1} MiB of each file", m as f64 / (1u64 << 20) as f64),
                None => "whole files".to_string(),
            }
        );
        println!(
            "{:<name_w$} {:>8} {:>7} {:>7} {:>8} {:>7} {:>7} {:>11} {:>12} {:>4}",
            "file",
            "MiB",
            "lz4",
            "zstd-3",
            "brotli-9",
            "zstd-19",
            "ours",
            "ours/zstd-3",
            "ours/zstd-19",
            "rt"
        );
    }

    let mut rows: Vec<Row> = Vec::new();
    let mut failed = 0usize; // files that could not be read or compressed
    let mut rt_failed = 0usize; // archives that did not decode back to the input
    for (name, path) in &files {
        let data = match read_prefix(path, args.max_bytes) {
            Ok(d) => d,
            Err(e) => {
                eprintln!("{}: {e}", path.display());
                failed += 1;
                continue;
            }
        };
        if data.is_empty() {
            eprintln!("{name}: empty, skipped");
            continue;
        }
        let row = match measure(name.clone(), &data, &args) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("{name}: aceapex compress failed: {e}");
                failed += 1;
                continue;
            }
        };
        if !row.roundtrip_ok {
            eprintln!(
                "{name}: ROUND-TRIP FAILED: {}",
                row.roundtrip_err.as_deref().unwrap_or("?")
            );
            rt_failed += 1;
        }
        if args.json {
            println!("{}", row_json(&row, &args));
        } else {
            let r: Vec<f64> = row.sizes.iter().map(|&s| ratio(row.original, s)).collect();
            let chars: Vec<char> = name.chars().collect();
            let shown = if chars.len() > name_w {
                let tail: String = chars[chars.len() - (name_w - 1)..].iter().collect();
                format!("~{tail}")
            } else {
                name.clone()
            };
            println!(
                "{:<name_w$} {:>8.2} {:>7.3} {:>7.3} {:>8.3} {:>7.3} {:>7.3} {:>11.3} {:>12.3} {:>4}",
                shown,
                row.original as f64 / (1u64 << 20) as f64,
                r[0],
                r[1],
                r[2],
                r[3],
                r[4],
                r[4] / r[1],
                r[4] / r[3],
                if row.roundtrip_ok { "ok" } else { "FAIL" }
            );
        }
        std::io::stdout().flush().ok();
        rows.push(row);
    }

    let n = rows.len();
    let beats3 = rows.iter().filter(|r| r.sizes[4] < r.sizes[1]).count();
    let beats19 = rows.iter().filter(|r| r.sizes[4] < r.sizes[3]).count();
    let total_orig: usize = rows.iter().map(|r| r.original).sum();
    let mut total = [0usize; 5];
    let mut total_secs = [0f64; 5];
    for r in &rows {
        for i in 0..5 {
            total[i] += r.sizes[i];
            total_secs[i] += r.secs[i];
        }
    }
    let tr: Vec<f64> = total.iter().map(|&s| ratio(total_orig, s)).collect();
    let elapsed = t_all.elapsed().as_secs_f64();
    if args.json {
        let mut s = format!(
            "{{\"summary\":true,\"files\":{n},\"bytes\":{total_orig},\"ours_beats_zstd3\":{beats3},\"ours_beats_zstd19\":{beats19},\"roundtrip_failures\":{rt_failed},\"errors\":{failed}"
        );
        for (i, c) in CODECS.iter().enumerate() {
            let key = c.replace('-', "");
            s.push_str(&format!(
                ",\"{key}_bytes\":{},\"{key}_ratio\":{:.4},\"{key}_secs\":{:.3}",
                total[i], tr[i], total_secs[i]
            ));
        }
        s.push_str(&format!(",\"elapsed_secs\":{elapsed:.3}}}"));
        println!("{s}");
    } else if n > 0 {
        println!(
            "{:<name_w$} {:>8.2} {:>7.3} {:>7.3} {:>8.3} {:>7.3} {:>7.3} {:>11.3} {:>12.3}",
            "TOTAL (sum of bytes)",
            total_orig as f64 / (1u64 << 20) as f64,
            tr[0],
            tr[1],
            tr[2],
            tr[3],
            tr[4],
            tr[4] / tr[1],
            tr[4] / tr[3],
        );
        println!(
            "compression time (s): lz4 {:.1}, zstd-3 {:.1}, brotli-9 {:.1}, zstd-19 {:.1}, ours {:.1}; wall {:.1} s",
            total_secs[0], total_secs[1], total_secs[2], total_secs[3], total_secs[4], elapsed
        );
        println!(
            "ours beats zstd-3 on {beats3}/{n} files, zstd-19 on {beats19}/{n} files; round-trip {}",
            if rt_failed == 0 { "ok on every file".to_string() } else { format!("FAILED on {rt_failed} file(s)") }
        );
        if failed > 0 {
            println!("{failed} file(s) could not be read or compressed (see stderr)");
        }
    }
    if failed > 0 || rt_failed > 0 {
        std::process::exit(1);
    }
}
