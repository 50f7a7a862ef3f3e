//! The measurement commands end to end: `analyze` on hand-made archives whose measures are
//! computed by hand here, and on encoder archives against what the encoder recorded
//! (`info`'s block depths, `--no-rep`, `--depth-cap`); `diff-blocks`; `reproduce --quick`.

mod common;

use common::cli::*;
use common::{build, Blk, Hdr};
use std::path::Path;

/// `analyze --json [--blocks] FILE` in `d`, parsed.
fn analyze(d: &Path, file: &str, blocks: bool) -> serde_json::Value {
    let mut args = vec!["analyze", "--json", file];
    if blocks {
        args.push("--blocks");
    }
    let o = run(d, &args);
    ok(&o);
    serde_json::from_slice(&o.stdout).expect("analyze prints one JSON object")
}

fn u(v: &serde_json::Value, key: &str) -> u64 {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} is a number in {v}"))
}

/// One block of a 3-byte period: three literals, then one long match at distance 3 over the
/// remaining 2,997 bytes (a periodic fill). By hand: one literal run and one match; the match
/// reads only literals (level 0, one wave); its length needs a varint (a chained command), so
/// the one dependency-free run is the literal run; period 3; its bytes 3..3000 touch sectors
/// 0..=93 (94) and lines 0..=23 (24).
#[test]
fn analyze_a_periodic_fill() {
    let t = tmp();
    let d = t.path();
    let original = b"ABC".repeat(1000);
    // reset, 3 literals, long new match: length 2997 - 6 = 2991 = 0xAF 0x17, distance 3
    let blk = Blk::raw(b"ABC", &[0xAF, 0x17], &[3], &[0xFF, 0x02, 0xFE]);
    let archive = build(Hdr::new(0, 4096), &original, &[blk], None);
    std::fs::write(d.join("p.acx"), &archive).unwrap();
    // the archive is valid: it decodes to the original
    ok(&run(d, &["decompress", "p.acx", "-o", "p.out"]));
    assert_eq!(std::fs::read(d.join("p.out")).unwrap(), original);

    let r = analyze(d, "p.acx", true);
    let tot = &r["total"];
    assert_eq!(u(tot, "commands"), 2);
    assert_eq!(u(tot, "literal_runs"), 1);
    assert_eq!(u(tot, "literal_bytes"), 3);
    assert_eq!(u(tot, "matches"), 1);
    assert_eq!(u(tot, "match_bytes"), 2997);
    assert_eq!(u(tot, "repeat_matches"), 0);
    assert_eq!(u(tot, "extended_lengths"), 1);
    assert_eq!(u(tot, "chained"), 1);
    assert_eq!(tot["free_runs"]["count"], 1);
    assert_eq!(tot["free_runs"]["p50"], 1);
    assert_eq!(u(tot, "max_depth"), 0);
    assert_eq!(u(tot, "waves"), 1);
    assert_eq!(tot["depth_histogram"], serde_json::json!([1]));
    assert_eq!(u(tot, "critical_path"), 2997);
    assert_eq!(u(tot, "overlapping"), 1);
    for p in ["p50", "p90", "p99", "max"] {
        assert_eq!(tot["periods"][p], 3, "period {p}");
    }
    assert_eq!(u(tot, "sectors"), 94);
    assert_eq!(u(tot, "lines"), 24);
    let eff = tot["sector_efficiency"].as_f64().unwrap();
    assert!((eff - 2997.0 / (94.0 * 32.0)).abs() < 1e-6, "{eff}");
    // the one block repeats the total
    assert_eq!(r["blocks"][0]["critical_path"], 2997);
}

/// A chain: eight literals, two new matches at distance 8 and a repeat of it, each of 8
/// bytes. By hand: the first match reads literals (level 0), the second the first's bytes
/// (level 1), the repeat the second's (level 2): three waves, a critical path of 24 bytes;
/// the repeat is the one chained command, after a dependency-free run of three commands; no
/// self-overlap (distance = length); all three writes lie in sector 0 (3 sectors, 24 of 96
/// bytes).
#[test]
fn analyze_a_dependency_chain() {
    let t = tmp();
    let d = t.path();
    let original = b"ABCDEFGH".repeat(4);
    // reset, 8 literals, new match len 8 (0xC0 + 2) twice, repeat slot 0 len 8 (0x80 + 2)
    let blk = Blk::raw(b"ABCDEFGH", &[], &[8, 8], &[0xFF, 0x07, 0xC2, 0xC2, 0x82]);
    let archive = build(Hdr::new(0, 4096), &original, &[blk], None);
    std::fs::write(d.join("c.acx"), &archive).unwrap();
    ok(&run(d, &["decompress", "c.acx", "-o", "c.out"]));
    assert_eq!(std::fs::read(d.join("c.out")).unwrap(), original);

    let tot = analyze(d, "c.acx", false)["total"].clone();
    assert_eq!(tot["depth_histogram"], serde_json::json!([1, 1, 1]));
    assert_eq!(u(&tot, "max_depth"), 2);
    assert_eq!(u(&tot, "waves"), 3);
    assert_eq!(tot["longest_per_level"], serde_json::json!([8, 8, 8]));
    assert_eq!(u(&tot, "critical_path"), 24);
    assert_eq!(u(&tot, "repeat_matches"), 1);
    assert_eq!(u(&tot, "chained"), 1);
    assert_eq!(tot["free_runs"]["count"], 1);
    assert_eq!(tot["free_runs"]["max"], 3);
    assert_eq!(u(&tot, "overlapping"), 0);
    assert_eq!(tot["distances"]["p50"], 8);
    assert_eq!(u(&tot, "sectors"), 3);
    assert_eq!(u(&tot, "lines"), 3);
    assert_eq!(tot["sector_efficiency"].as_f64().unwrap(), 0.25);
    // a damaged command stream is an error naming the block, not a panic
    let bad = Blk::raw(b"ABCDEFGH", &[], &[9, 8], &[0xFF, 0x07, 0xC2, 0xC2, 0x82]);
    std::fs::write(
        d.join("bad.acx"),
        build(Hdr::new(0, 4096), &original, &[bad], None),
    )
    .unwrap();
    let e = fails(&run(d, &["analyze", "bad.acx"]));
    assert!(e.contains("block 0"), "{e}");
}

/// On encoder archives, the deepest level `analyze` finds in each block is the `max_depth`
/// the encoder recorded in the block table (computed by the encoder's own dependency
/// tracking), for every golden archive, independent and cross-block.
#[test]
fn analyze_agrees_with_the_block_table() {
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut n = 0;
    for e in std::fs::read_dir(&golden).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "acx") {
            continue;
        }
        let name = p.to_str().unwrap();
        let r = analyze(&golden, name, true);
        let bytes = std::fs::read(&p).unwrap();
        let a = aceapex::format::Archive::parse(&bytes).unwrap();
        let blocks = r["blocks"].as_array().unwrap();
        assert_eq!(blocks.len(), a.entries().len());
        for (b, e) in blocks.iter().zip(a.entries()) {
            assert_eq!(
                u(b, "max_depth"),
                e.max_depth as u64,
                "{name} block {}",
                b["block"]
            );
        }
        n += 1;
    }
    assert!(n >= 5, "golden archives found: {n}");
}

/// `--no-rep` leaves no repeat command and `--depth-cap L` no match at level L or above, as
/// `analyze` measures them; without the cap the same input goes deeper.
#[test]
fn analyze_confirms_no_rep_and_the_depth_cap() {
    let t = tmp();
    let d = t.path();
    let text = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/moby_dick_64k.txt");
    std::fs::copy(&text, d.join("m.txt")).unwrap();
    ok(&run(d, &["compress", "m.txt", "-o", "plain.acx"]));
    ok(&run(
        d,
        &["compress", "--no-rep", "m.txt", "-o", "norep.acx"],
    ));
    ok(&run(
        d,
        &["compress", "--depth-cap", "4", "m.txt", "-o", "cap4.acx"],
    ));
    let plain = analyze(d, "plain.acx", false)["total"].clone();
    let norep = analyze(d, "norep.acx", false)["total"].clone();
    let cap = analyze(d, "cap4.acx", false)["total"].clone();
    assert!(u(&plain, "repeat_matches") > 0);
    assert_eq!(u(&norep, "repeat_matches"), 0);
    assert!(
        u(&plain, "max_depth") >= 4,
        "the input goes deeper than the cap"
    );
    assert!(u(&cap, "max_depth") < 4);
    assert!(u(&cap, "waves") <= 4);
}

/// `diff-blocks`: an archive against itself differs nowhere; two levels of one input differ
/// in their streams; other originals and other block sizes are refused with a clear error.
#[test]
fn diff_blocks_compares_archives_of_one_input() {
    let t = tmp();
    let d = t.path();
    let data = sample(100_000);
    std::fs::write(d.join("x"), &data).unwrap();
    std::fs::write(d.join("y"), &data[1..]).unwrap();
    ok(&run(d, &["compress", "-l", "1", "x", "-o", "x1.acx"]));
    ok(&run(d, &["compress", "-l", "6", "x", "-o", "x6.acx"]));
    ok(&run(
        d,
        &["compress", "--block-size", "32K", "x", "-o", "x32.acx"],
    ));
    ok(&run(d, &["compress", "y", "-o", "y.acx"]));
    let json = |a: &str, b: &str| -> serde_json::Value {
        let o = run(d, &["diff-blocks", "--json", a, b]);
        ok(&o);
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let same = json("x6.acx", "x6.acx");
    assert_eq!(same["blocks"], 7);
    assert_eq!(same["decoded_differ"], 0);
    assert_eq!(same["stored_differ"], 0);
    let levels = json("x1.acx", "x6.acx");
    assert!(levels["decoded_differ"].as_u64().unwrap() > 0);
    assert_eq!(
        levels["decoded_blocks"].as_array().unwrap().len() as u64,
        levels["decoded_differ"].as_u64().unwrap()
    );
    let e = fails(&run(d, &["diff-blocks", "x6.acx", "y.acx"]));
    assert!(e.contains("different originals"), "{e}");
    let e = fails(&run(d, &["diff-blocks", "x6.acx", "x32.acx"]));
    assert!(e.contains("different block sizes"), "{e}");
}

/// Both ways of enforcing a depth cap (the parser's clamp, the command line's; the paper's
/// forced literals to a fixed point, `reproduce`'s) keep every match below the cap, as
/// `analyze` measures it, and decode to the original; the uncapped archive goes deeper.
#[test]
fn both_depth_cap_methods_respect_the_cap() {
    use aceapex::encode::lz::DepthCapMethod;
    let data =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/moby_dick_64k.txt"))
            .unwrap();
    let depth = |s: &aceapex::Settings| {
        let packed = aceapex::compress_settings(&data, s, &|_| {}).unwrap();
        assert!(aceapex::decompress(&packed).unwrap() == data);
        let a = aceapex::format::Archive::parse(&packed).unwrap();
        let m = aceapex::study::analyze(&a, true).unwrap();
        // the block table's depths agree with the measured ones
        for (b, e) in m.blocks.iter().zip(a.entries()) {
            assert_eq!(b.max_depth(), e.max_depth);
        }
        m.total.max_depth()
    };
    assert!(depth(&aceapex::Settings::default()) >= 8);
    for cap in [1, 3, 8] {
        for method in [DepthCapMethod::Clamp, DepthCapMethod::FixedPoint] {
            let s = aceapex::Settings {
                depth_cap: cap,
                depth_cap_method: method,
                ..Default::default()
            };
            assert!(depth(&s) < cap, "cap {cap}, {method:?}");
        }
    }
}

/// `reproduce --quick` on the golden files: one JSON document whose every record has the
/// nine fields with their types, a level of R, M or E and a verdict; the GPU claims, not
/// asked for, are "not run" with the reason, never a pass; every CPU claim is there for every
/// file; the properties our code must have (level R) pass.
#[test]
fn reproduce_quick_writes_a_record_per_claim() {
    let t = tmp();
    let d = t.path();
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let o = run(
        d,
        &[
            "reproduce",
            "--quick",
            "--corpus",
            golden.to_str().unwrap(),
            "-o",
            "r.json",
        ],
    );
    ok(&o);
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("r.json")).unwrap()).unwrap();
    assert_eq!(doc["quick"], true);
    let files: Vec<&str> = (doc["files"].as_array().unwrap().iter())
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    // the four largest golden originals (archives and small files left out)
    assert_eq!(files.len(), 4, "{files:?}");
    assert!(files.iter().any(|f| f.ends_with("moby_dick_64k.txt")));
    assert!(files.iter().all(|f| !f.ends_with(".acx")));
    let records = doc["records"].as_array().unwrap();
    let cpu_ids = [
        "depth_cap.ratio_cost.fixed_point",
        "depth_cap.ratio_cost.clamp",
        "depth_cap.waves",
        "depth_cap.block_diff",
        "depth_cap.ratio_curve",
        "no_rep.ratio_cost",
        "no_rep.chained_share",
        "no_rep.free_run",
        "min_match.curve",
        "matches.lengths",
        "matches.self_overlap",
        "copy.write_efficiency",
        "cpu.region_read_16k",
        "cpu.bench_noise",
        "cpu.seek",
        "table_vi",
    ];
    let gpu_ids = [
        "gpu.parse_share",
        "gpu.scan_parser_speedup",
        "gpu.period_fill_speedup",
        "gpu.coalesced_write_ratio",
        "gpu.wavefront_vs_depth_cap",
        "gpu.bench_noise",
        "gpu.seek",
    ];
    assert_eq!(records.len(), files.len() * (cpu_ids.len() + gpu_ids.len()));
    for r in records {
        for key in [
            "id",
            "level",
            "tolerance",
            "verdict",
            "command",
            "corpus",
            "note",
        ] {
            assert!(r[key].is_string(), "{key} is a string in {r}");
        }
        assert!(
            r.get("expected").is_some() && r.get("measured").is_some(),
            "{r}"
        );
        assert!(
            ["R", "M", "E"].contains(&r["level"].as_str().unwrap()),
            "{r}"
        );
        let v = r["verdict"].as_str().unwrap();
        assert!(["pass", "fail", "measured", "not run"].contains(&v), "{r}");
        let id = r["id"].as_str().unwrap();
        if gpu_ids.contains(&id) {
            assert_eq!(v, "not run", "{r}");
            assert!(r["measured"].is_null());
            assert!(!r["note"].as_str().unwrap().is_empty(), "a reason: {r}");
        } else {
            assert!(cpu_ids.contains(&id), "unknown claim {id}");
            assert_ne!(v, "not run", "{r}");
            assert!(!r["measured"].is_null(), "{r}");
        }
        if r["level"] == "R" {
            assert_eq!(v, "pass", "a property of our code: {r}");
        }
    }
    for f in &files {
        for id in cpu_ids {
            assert!(
                records.iter().any(|r| r["corpus"] == *f && r["id"] == id),
                "{id} on {f}"
            );
        }
    }
    // the waves under the paper's cap: at most 17 by both methods
    let w = records
        .iter()
        .find(|r| r["id"] == "depth_cap.waves")
        .unwrap();
    assert!(w["measured"]["clamp"].as_u64().unwrap() <= 17);
    assert!(w["measured"]["fixed_point"].as_u64().unwrap() <= 17);
    for f in &files {
        let of = |id: &str| {
            records
                .iter()
                .find(|r| r["corpus"] == *f && r["id"] == id)
                .unwrap()
        };
        check_bench_noise(of("cpu.bench_noise"), 5);
        check_cpu_seek(of("cpu.seek"), 200);
    }
    // the four charts next to the JSON, each one SVG document with a line or bar per file
    for chart in [
        "ratio_vs_L",
        "depth_histogram",
        "match_length_cdf",
        "table_vi",
    ] {
        let svg = std::fs::read_to_string(d.join(format!("r.{chart}.svg"))).unwrap();
        assert!(
            svg.starts_with("<svg ") && svg.trim_end().ends_with("</svg>"),
            "{chart}"
        );
        let marks = svg.matches("<polyline").count() + svg.matches("<rect x=").count();
        assert!(marks >= files.len(), "{chart}: {marks} marks");
        assert!(svg.contains("moby_dick_64k.txt"), "{chart} names the files");
    }
    // an empty corpus is an error, not an empty result
    std::fs::create_dir(d.join("empty")).unwrap();
    let e = fails(&run(d, &["reproduce", "--corpus", "empty", "-o", "e.json"]));
    assert!(e.contains("no corpus file"), "{e}");
    assert!(!d.join("e.json").exists());
}

/// `reproduce --gpu` where no GPU opens (no driver, no device, or a build without kernels):
/// every GPU claim is "not run" with the reason; where one opens, each has a measurement
/// and a pass or fail. Never a pass without a measurement.
#[test]
fn reproduce_gpu_claims_are_measured_or_not_run() {
    let t = tmp();
    let d = t.path();
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let o = run(
        d,
        &[
            "reproduce",
            "--quick",
            "--gpu",
            "--corpus",
            golden.to_str().unwrap(),
            "-o",
            "g.json",
        ],
    );
    ok(&o);
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("g.json")).unwrap()).unwrap();
    let gpu: Vec<&serde_json::Value> = (doc["records"].as_array().unwrap().iter())
        .filter(|r| r["id"].as_str().unwrap().starts_with("gpu."))
        .collect();
    assert_eq!(gpu.len(), 4 * 7);
    for r in gpu {
        match r["verdict"].as_str().unwrap() {
            "not run" => {
                assert!(r["measured"].is_null(), "{r}");
                assert!(r["note"].as_str().unwrap().contains("GPU"), "{r}");
            }
            "pass" | "fail" | "measured" => {
                assert!(!r["measured"].is_null(), "{r}");
                match r["id"].as_str().unwrap() {
                    "gpu.bench_noise" => check_bench_noise(r, 5),
                    "gpu.seek" => check_gpu_seek(r),
                    _ => assert_ne!(r["verdict"], "measured", "{r}"),
                }
            }
            v => panic!("verdict {v} in {r}"),
        }
    }
}

fn f(v: &serde_json::Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} is a number in {v}"))
}

/// A bench-noise record: no rule (the paper gives no spread), so "measured"; `runs` timings
/// whose median, minimum, maximum, coefficient of variation and range are recomputed here
/// from the listed timings.
fn check_bench_noise(r: &serde_json::Value, runs: usize) {
    assert_eq!(r["level"], "M", "{r}");
    assert!(r["expected"].as_str().unwrap().contains("no figure"), "{r}");
    assert!(r["tolerance"].as_str().unwrap().starts_with("none"), "{r}");
    assert_eq!(r["verdict"], "measured", "no rule, no pass: {r}");
    let m = &r["measured"];
    assert_eq!(u(m, "runs") as usize, runs, "{r}");
    let mut t: Vec<f64> = (m["timings_ms"].as_array().unwrap().iter())
        .map(|x| x.as_f64().unwrap())
        .collect();
    assert_eq!(t.len(), runs);
    assert!(t.iter().all(|&x| x > 0.0), "{r}");
    t.sort_by(f64::total_cmp);
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-5 * b.abs().max(1.0);
    assert!(close(f(m, "min_ms"), t[0]), "{r}");
    assert!(close(f(m, "max_ms"), t[runs - 1]), "{r}");
    assert!(close(f(m, "median_ms"), t[runs / 2]), "{r}");
    let mean = t.iter().sum::<f64>() / runs as f64;
    let sd = (t.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / runs as f64).sqrt();
    assert!((f(m, "cv_percent") - 100.0 * sd / mean).abs() < 1e-2, "{r}");
    assert!(
        (f(m, "range_percent") - 100.0 * (t[runs - 1] / t[0] - 1.0)).abs() < 1e-2,
        "{r}"
    );
    assert!(f(m, "median_gb_per_s") > 0.0, "{r}");
}

/// Quantiles of one kind of request: `requests` of `bytes`, in order p50 <= p90 <= p99 <= max.
fn check_latency(l: &serde_json::Value, requests: u64, bytes: u64) {
    assert_eq!(u(l, "requests"), requests, "{l}");
    assert_eq!(u(l, "bytes"), bytes, "{l}");
    let q: Vec<f64> = ["p50_us", "p90_us", "p99_us", "max_us"]
        .iter()
        .map(|k| f(l, k))
        .collect();
    assert!(q[0] > 0.0 && q.windows(2).all(|w| w[0] <= w[1]), "{l}");
}

/// A CPU seek record: 16 KiB tiles and 5,000-byte regions, judged against the reference's
/// CPU reader (p50 of a region <= 41.8 us, of a tile <= 80 us, taken from `expected`).
fn check_cpu_seek(r: &serde_json::Value, requests: u64) {
    assert_eq!(r["level"], "M", "{r}");
    let m = &r["measured"];
    check_latency(&m["tile16k"], requests, 16_384);
    check_latency(&m["region5000"], requests, 5_000);
    assert_eq!(u(m, "block_size"), 16_384, "the default blocks: {r}");
    let e = &r["expected"];
    let want_region = f(&e["region5000_us"], "p50");
    assert_eq!(want_region, 41.8);
    let want_tile = e["tile16k_us"][1].as_f64().unwrap();
    assert_eq!(want_tile, 80.0);
    let ok =
        f(&m["region5000"], "p50_us") <= want_region && f(&m["tile16k"], "p50_us") <= want_tile;
    assert_eq!(r["verdict"], if ok { "pass" } else { "fail" }, "{r}");
}

/// A GPU seek record (only where a GPU ran): tile quantiles, and the batch rate recomputed
/// from the batch's size and time; the verdict against ACEAPEX's 777 us and 1.3 M windows/s.
fn check_gpu_seek(r: &serde_json::Value) {
    let m = &r["measured"];
    check_latency(&m["tile16k"], u(&m["tile16k"], "requests"), 16_384);
    assert_eq!(u(m, "window_bytes"), 8_192);
    let rate = u(m, "batch_windows") as f64 / (f(m, "batch_ms") / 1e3);
    assert!((f(m, "windows_per_s") - rate).abs() <= 1e-3 * rate, "{r}");
    let ok = f(&m["tile16k"], "p50_us") < 777.0 && f(m, "windows_per_s") >= 1.3e6;
    assert_eq!(r["verdict"], if ok { "pass" } else { "fail" }, "{r}");
}
