//! Single-thread CPU decode speed per corpus file, by thread CPU time (robust on a shared
//! machine), with a split into stages.
//!
//! Run: `cargo run --release --example decode_speed -- [FILES...]` (default: the six files of
//! `benches/codec.rs` under `corpora/`). Each file is cut to its first 16 MiB, compressed
//! with the default options (16 KiB blocks; `ACEAPEX_LEVEL` and `ACEAPEX_MIN_MATCH`
//! override the level and the minimum match, which defaults to the level's choice;
//! `ACEAPEX_TARGET=gpu` compresses for `Target::Gpu`, `ACEAPEX_LINE_LAYOUT=0` without line
//! layouts) and
//! decoded on one thread `RUNS` times
//! (`$ACEAPEX_RUNS` overrides, e.g. 1 under valgrind; `ACEAPEX_TOTAL_ONLY=1` measures only
//! `total`, so that a valgrind count is two whole decodes: the check decode and one run);
//! the best run counts. Archives are cached in `target/decode-speed-cache/` keyed by file
//! name, size and `$ACEAPEX_CACHE_TAG` (change the tag, or delete the folder, after changing
//! the encoder).
//!
//! Lines: `FILE ratio=R total=MB/s streams=MB/s lz=MB/s xxh3=MB/s`, where `total` is
//! `decode::decompress_into` on a one-thread pool (everything the CLI does, content checksum
//! included) and the stage columns time the stages alone over all blocks (rANS + raw copies
//! of the four streams; the match layer on already decoded streams; one XXH3-64 pass over
//! the output with [`decode::checksum`], which the decoder makes once per byte).
//!
//! `ACEAPEX_STREAM_STATS=1` adds per stream: symbols per output byte, time per symbol and the
//! lane counts used; `ACEAPEX_LIT_AB=1` adds the slices of each of the first four streams
//! alone, decoded one by one against decoded together in groups
//! ([`decode::rans::SliceDecoder::fast_rows_together`]).

use aceapex::decode;
use aceapex::decode::streams;
use aceapex::device::lz::BlockFrame;
use aceapex::encode::compress;
use aceapex::format::Archive;
use aceapex::{Options, Target};
use std::path::PathBuf;

const INPUT_BYTES: usize = 16 << 20;
const RUNS: usize = 15;

/// Runs per measurement: [`RUNS`], or `$ACEAPEX_RUNS` (e.g. 1 under valgrind).
fn runs() -> usize {
    std::env::var("ACEAPEX_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(RUNS)
        .max(1)
}

const FILES: &[&str] = aceapex::CPU_BENCH_FILES;

#[repr(C)]
struct Timespec {
    tv_sec: i64,
    tv_nsec: i64,
}

extern "C" {
    fn clock_gettime(clk: i32, tp: *mut Timespec) -> i32;
}

/// CPU time of the calling thread in seconds (Linux `CLOCK_THREAD_CPUTIME_ID`).
fn thread_cpu() -> f64 {
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut t = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid, writable timespec (two i64 on x86-64 Linux) for the call.
    let rc = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut t) };
    assert_eq!(rc, 0, "clock_gettime");
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// Best of `RUNS` thread-CPU times of `f`.
fn best(mut f: impl FnMut()) -> f64 {
    (0..runs())
        .map(|_| {
            let t = thread_cpu();
            f();
            thread_cpu() - t
        })
        .fold(f64::INFINITY, f64::min)
}

fn archive_for(path: &std::path::Path, input: &[u8]) -> Vec<u8> {
    let tag = std::env::var("ACEAPEX_CACHE_TAG").unwrap_or_default();
    let env_u32 = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<u32>().ok());
    let level = env_u32("ACEAPEX_LEVEL").unwrap_or(aceapex::Options::default().level);
    // `Target::Size` unless ACEAPEX_TARGET is `gpu`
    let gpu = std::env::var("ACEAPEX_TARGET").is_ok_and(|t| t == "gpu");
    let target = if gpu { Target::Gpu } else { Target::Size };
    let opts = Options::new().with_level(level).with_target(target);
    // ACEAPEX_LINE_LAYOUT=0: without line layouts (FORMAT.md §4.6), which `size` writes
    let no_lines = std::env::var("ACEAPEX_LINE_LAYOUT").is_ok_and(|v| v == "0");
    let min_match = env_u32("ACEAPEX_MIN_MATCH")
        .unwrap_or_else(|| aceapex::encode::default_min_match(&opts, input));
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/decode-speed-cache");
    let name = path.file_name().unwrap().to_string_lossy();
    let cached = dir.join(format!(
        "{name}.{}.l{level}-mm{min_match}{}{}.{tag}.acx",
        input.len(),
        if gpu { "-gpu" } else { "" },
        if no_lines { "-nolines" } else { "" },
    ));
    if let Ok(a) = std::fs::read(&cached) {
        return a;
    }
    let opts = opts.with_min_match(Some(min_match));
    let a = match no_lines {
        false => compress(input, &opts, &|_| {}).expect("compress"),
        true => {
            let s = aceapex::Settings {
                line_layout: false,
                ..opts.settings()
            };
            aceapex::compress_settings(input, &s, &|_| {}).expect("compress")
        }
    };
    std::fs::create_dir_all(&dir).ok();
    std::fs::write(&cached, &a).ok();
    a
}

fn main() {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let files: Vec<PathBuf> = if args.is_empty() {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpora");
        FILES.iter().map(|f| dir.join(f)).collect()
    } else {
        args
    };
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("pool");
    for path in &files {
        let Ok(mut input) = std::fs::read(path) else {
            println!("skip {}", path.display());
            continue;
        };
        input.truncate(INPUT_BYTES);
        let packed = archive_for(path, &input);
        let a = Archive::parse(&packed).expect("parse");
        let mut out = vec![0u8; input.len()];
        decode::decompress_into(&a, &mut out, &|_| {}).expect("decode");
        assert!(out == input, "{}: wrong bytes", path.display());

        let n = input.len() as f64;
        let bs = a.header().block_size as usize;
        let blocks = a.block_count();
        let (total, streams, lz, hash) = one.install(|| {
            let total = best(|| decode::decompress_into(&a, &mut out, &|_| {}).unwrap());
            if std::env::var_os("ACEAPEX_TOTAL_ONLY").is_some() {
                return (total, f64::NAN, f64::NAN, f64::NAN);
            }
            let mut scratch = streams::Scratch::default();
            let mut group: Vec<streams::Scratch> =
                (0..streams::GROUP_BLOCKS).map(|_| Default::default()).collect();
            let streams = best(|| {
                for first in (0..blocks).step_by(streams::GROUP_BLOCKS) {
                    let n = (blocks - first).min(streams::GROUP_BLOCKS);
                    let st = streams::decode_streams_group(&a, first, &mut group[..n]);
                    assert!(st.iter().all(|s| s.is_ok()));
                }
            });
            // the match layer alone: streams of every block decoded up front
            let all: Vec<Vec<Vec<u8>>> = (0..blocks)
                .map(|b| {
                    let s = streams::decode_streams(&a, b, &mut scratch).unwrap();
                    [s.literals, s.lengths, s.offsets, s.commands, s.offset_tails]
                        .iter()
                        .map(|p| {
                            let mut v = p.data().to_vec();
                            v.resize(v.len() + decode::lz::STREAM_PAD, 0);
                            v
                        })
                        .collect()
                })
                .collect();
            let lz = best(|| {
                for (b, s) in all.iter().enumerate() {
                    let e = a.entries()[b];
                    let p =
                        |k: usize| decode::lz::Padded::new(&s[k], e.decoded_len[k] as usize).unwrap();
                    let ps = decode::lz::PaddedStreams {
                        literals: p(0),
                        lengths: p(1),
                        offsets: p(2),
                        commands: p(3),
                        offset_tails: p(4),
                    };
                    let chunk = &mut out[b * bs..((b + 1) * bs).min(input.len())];
                    let frame = BlockFrame {
                        dst_start: 0,
                        dst_end: chunk.len(),
                        src_floor: 0,
                        window: a.header().window,
                        match_base: a.header().match_base(),
                    };
                    decode::lines::decode_block_fast(&a, b, &ps, chunk, &frame).unwrap();
                }
            });
            for k in (0..4usize).filter(|_| std::env::var_os("ACEAPEX_LIT_AB").is_some()) {
                // the slices of stream k only: one by one vs. together in groups
                let mut bufs: Vec<Vec<u8>> = (0..blocks).map(|_| vec![0u8; bs + 64]).collect();
                let (mut single, mut together) = (f64::INFINITY, f64::INFINITY);
                // the tables expanded once, outside the timed loops
                let tables: Vec<_> = (0..blocks).map(|b| a.table(b, k)).collect();
                for _ in 0..3 {
                    single = single.min(best(|| {
                        for b in 0..blocks {
                            let e = a.entries()[b];
                            let o = &mut bufs[b][..e.decoded_len[k] as usize];
                            if e.lanes[k] != 0 && e.lanes[k] != aceapex::device::format::LANES_TWO_BIT {
                                decode::rans::decode_slice(
                                    a.slices(b)[k],
                                    e.lanes[k] as usize,
                                    tables[b].as_ref().unwrap().get(),
                                    o,
                                )
                                .unwrap();
                            }
                        }
                    }));
                    together = together.min(best(|| {
                        for (g, chunk) in bufs.chunks_mut(streams::GROUP_BLOCKS).enumerate() {
                            let mut decs = Vec::new();
                            for (j, buf) in chunk.iter_mut().enumerate() {
                                let b = g * streams::GROUP_BLOCKS + j;
                                let e = a.entries()[b];
                                if e.lanes[k] != 0 && e.lanes[k] != aceapex::device::format::LANES_TWO_BIT {
                                    decs.push(
                                        decode::rans::SliceDecoder::new(
                                            a.slices(b)[k],
                                            e.lanes[k] as usize,
                                            tables[b].as_ref().unwrap().get(),
                                            &mut buf[..e.decoded_len[k] as usize],
                                        )
                                        .unwrap(),
                                    );
                                }
                            }
                            decode::rans::SliceDecoder::fast_rows_together(&mut decs);
                            for mut d in decs {
                                while d.fast_rows(usize::MAX) > 0 {}
                                d.finish().unwrap();
                            }
                        }
                    }));
                }
                println!(
                    "  stream {k}: single {:.3} ns/B, together {:.3} ns/B",
                    single * 1e9 / n,
                    together * 1e9 / n
                );
            }
            // per stream: symbols, lane histogram and time of its slices alone
            if std::env::var_os("ACEAPEX_STREAM_STATS").is_some() {
                // command mix: literal runs (and how many exceed 32 bytes), repeats, new
                // matches (short/long), and how often a match follows a match directly
                let (mut lit, mut lit32, mut rep, mut short, mut long, mut mm) =
                    (0usize, 0usize, 0usize, 0usize, 0usize, 0usize);
                for s in &all {
                    let mut prev_match = false;
                    for &c in &s[3][..s[3].len() - decode::lz::STREAM_PAD] {
                        let is_match = (0x80..0xFF).contains(&c);
                        mm += (is_match && prev_match) as usize;
                        match c {
                            0..=0x7F => {
                                lit += 1;
                                lit32 += (c >= 32) as usize;
                            }
                            0x80..=0xBF => rep += 1,
                            0xC0..=0xFD => short += 1,
                            0xFE => long += 1,
                            _ => {}
                        }
                        prev_match = is_match;
                    }
                }
                // 32-command steps (the dense kernel's unit): with no repeat, with repeats
                // of history slot 0 only, with a repeat of slot 1-3
                let (mut st_none, mut st_rep0, mut st_hi) = (0usize, 0usize, 0usize);
                for s in &all {
                    for step in s[3][..s[3].len() - decode::lz::STREAM_PAD].chunks(32) {
                        let reps = step.iter().filter(|&&c| (0x80..0xC0).contains(&c));
                        let hi = reps.clone().any(|&c| (c >> 4) & 3 != 0);
                        if hi {
                            st_hi += 1;
                        } else if reps.count() > 0 {
                            st_rep0 += 1;
                        } else {
                            st_none += 1;
                        }
                    }
                }
                let steps = (st_none + st_rep0 + st_hi).max(1) as f64;
                println!(
                    "  32-command steps: {:.1} % without repeats, {:.1} % with slot-0 repeats only, {:.1} % with a slot 1-3 repeat",
                    st_none as f64 * 100.0 / steps,
                    st_rep0 as f64 * 100.0 / steps,
                    st_hi as f64 * 100.0 / steps
                );
                let m = (rep + short + long).max(1) as f64;
                println!(
                    "  commands per KiB out: {:.1}; literal runs {lit} ({:.1} % > 32 B), repeats {:.1} %, new short {:.1} %, long {:.1} % of matches; match after match {:.1} % of matches",
                    (lit as f64 + m) * 1024.0 / n,
                    lit32 as f64 * 100.0 / lit.max(1) as f64,
                    rep as f64 * 100.0 / m,
                    short as f64 * 100.0 / m,
                    long as f64 * 100.0 / m,
                    mm as f64 * 100.0 / m,
                );
                for k in 0..4 {
                    let mut syms = 0usize;
                    let mut lanes = [0usize; 34];
                    let mut bufo = vec![0u8; bs + 64];
                    for e in a.entries() {
                        syms += e.decoded_len[k] as usize;
                        lanes[(e.lanes[k] as usize).min(33)] += 1;
                    }
                    let t = best(|| {
                        for b in 0..blocks {
                            let e = a.entries()[b];
                            let sl = a.slices(b)[k];
                            let o = &mut bufo[..e.decoded_len[k] as usize];
                            if e.lanes[k] == 0 {
                                o.copy_from_slice(sl);
                            } else if e.lanes[k] == aceapex::device::format::LANES_TWO_BIT {
                                aceapex::device::two_bit::decode(sl, o).unwrap();
                            } else {
                                decode::rans::decode_slice(
                                    sl,
                                    e.lanes[k] as usize,
                                    a.table(b, k).unwrap().get(),
                                    o,
                                )
                                .unwrap();
                            }
                        }
                    });
                    let l: Vec<String> = lanes
                        .iter()
                        .enumerate()
                        .filter(|(_, &c)| c > 0)
                        .map(|(i, c)| format!("{i}:{c}"))
                        .collect();
                    println!(
                        "  stream {k}: {:.3} sym/byte, {:.2} ns/sym, {:.3} ns/out-byte, lanes {}",
                        syms as f64 / n,
                        t * 1e9 / syms.max(1) as f64,
                        t * 1e9 / n,
                        l.join(" ")
                    );
                }
            }
            let hash = best(|| {
                std::hint::black_box(decode::checksum::xxh3_64(&out));
            });
            (total, streams, lz, hash)
        });
        let mb = |s: f64| n / s / 1e6;
        println!(
            "{:<40} ratio={:.3} total={:7.1} streams={:7.1} lz={:7.1} xxh3={:7.1} MB/s",
            path.file_name().unwrap().to_string_lossy(),
            n / packed.len() as f64,
            mb(total),
            mb(streams),
            mb(lz),
            mb(hash)
        );
    }
}
