//! The streaming encoder (`aceapex::compress_to`, `encode::stream::compress_stream`): the
//! archive of an input read a batch at a time is byte for byte `aceapex::compress` of the
//! same bytes, under options that reach every batch and two-bit rule (raw match streams,
//! cross-block windows, larger blocks, a minimum match left to its trial), on the golden
//! originals, generated data and corpus slices when the corpora are present.

mod common;

use aceapex::encode::stream::{compress_stream, StreamConfig, StreamSummary};
use aceapex::format::Archive;
use aceapex::{Options, Target};
use common::{dna_with_repeats, Rng};
use std::io::Read;

/// A reader that hands out at most `step` bytes per call.
struct Trickle<'a> {
    bytes: &'a [u8],
    step: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = self.step.min(out.len()).min(self.bytes.len());
        out[..n].copy_from_slice(&self.bytes[..n]);
        self.bytes = &self.bytes[n..];
        Ok(n)
    }
}

/// `data` through the streaming encoder, streamed beyond `in_memory` bytes (raised to what
/// the options need), read `step` bytes at a time; with `min_match`, the caller's result of
/// the minimum match trial.
fn streamed(
    data: &[u8],
    opts: &Options,
    in_memory: usize,
    step: usize,
    min_match: Option<u32>,
) -> (StreamSummary, Vec<u8>) {
    let cfg = StreamConfig {
        in_memory_bytes: Some(in_memory),
        min_match,
        ..Default::default()
    };
    let mut out = Vec::new();
    let input = Trickle { bytes: data, step };
    let s = compress_stream(input, &mut out, opts, &cfg, &|_| {}).expect("streamed");
    assert_eq!(s.input_bytes, data.len() as u64);
    assert_eq!(s.archive_bytes, out.len() as u64);
    (s, out)
}

/// The option sets of the identity tests: the minimum match fixed where the target would
/// try both (the trial's sample depends on the input's length: see
/// `a_minimum_match_trial_on_the_first_bytes_still_restores`).
fn option_sets() -> Vec<(&'static str, Options)> {
    let b4k = Options::new().with_block_size(4096);
    vec![
        (
            "size l1",
            Options::new().with_level(1).with_min_match(Some(6)),
        ),
        ("size l6 b4k", b4k.clone().with_min_match(Some(4))),
        (
            "gpu l2 b4k",
            b4k.clone().with_level(2).with_target(Target::Gpu),
        ),
        (
            "window 64K b4k",
            b4k.clone()
                .with_level(3)
                .with_window(Some(64 << 10))
                .with_min_match(Some(6)),
        ),
        (
            "size l2 b64k",
            Options::new()
                .with_level(2)
                .with_block_size(64 << 10)
                .with_min_match(Some(6)),
        ),
    ]
}

/// Golden originals, generated DNA and text, and corpus slices where `/work/corpora` (or
/// `ACEAPEX_CORPORA`) holds them: several MB in all, beyond the smallest in-memory limit of
/// every option set but the GPU target's (8 MiB at 4 KiB blocks).
fn inputs() -> Vec<(String, Vec<u8>)> {
    let golden = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut v: Vec<(String, Vec<u8>)> = ["dna.fa", "moby_dick_64k.txt", "records.csv"]
        .iter()
        .map(|n| (n.to_string(), std::fs::read(golden.join(n)).unwrap()))
        .collect();
    // text and DNA together: two-bit slices in some blocks only
    let mut mixed = std::fs::read(golden.join("moby_dick_64k.txt"))
        .unwrap()
        .repeat(20);
    mixed.extend_from_slice(&dna_with_repeats(3 << 20, 7));
    v.push(("text+dna".into(), mixed));
    v.push(("dna 9 MiB".into(), dna_with_repeats(9 << 20, 3)));
    let corpora = std::env::var("ACEAPEX_CORPORA").unwrap_or_else(|_| "/work/corpora".into());
    for (name, len) in [("text/gcide.txt", 5 << 20), ("dna/dm3_chr2R.fa", 10 << 20)] {
        if let Ok(b) = std::fs::read(std::path::Path::new(&corpora).join(name)) {
            // from the middle: no FASTA header, whose records a stream leaves out
            let start = b.len() / 2 - len / 2;
            v.push((name.into(), b[start..start + len].to_vec()));
        }
    }
    v
}

#[test]
fn streamed_archives_are_the_bytes_of_compress() {
    let mut streamed_any = 0;
    for (name, data) in inputs() {
        for (what, opts) in option_sets() {
            let whole = aceapex::compress(&data, &opts).unwrap();
            let (s, out) = streamed(&data, &opts, 0, 100_003, None);
            if s.fasta_left_out {
                continue;
            }
            streamed_any += s.streamed as usize;
            assert!(out == whole, "{name}, {what}: the streamed archive differs");
        }
    }
    // the two generated inputs stream under every option set but the GPU target's, whose
    // floor (8 MiB at 4 KiB blocks) the 4.4 MB of text and DNA lie under: 9 without the
    // corpora, which add their slices; the golden originals lie under every floor
    assert!(streamed_any >= 9, "only {streamed_any} inputs streamed");
}

#[test]
fn a_minimum_match_trial_given_by_the_caller_gives_the_same_bytes() {
    let mut data = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/moby_dick_64k.txt"),
    )
    .unwrap()
    .repeat(40);
    data.extend_from_slice(&dna_with_repeats(1 << 20, 11));
    for opts in [
        Options::new().with_level(1),
        Options::new().with_level(8).with_target(Target::Gpu),
    ] {
        assert!(opts.tries_min_match());
        let whole = aceapex::compress(&data, &opts).unwrap();
        let m = aceapex::encode::default_min_match(&opts, &data);
        let (s, out) = streamed(&data, &opts, 0, 1 << 20, Some(m));
        assert!(s.streamed);
        assert!(out == whole);
    }
}

#[test]
fn a_minimum_match_trial_on_the_first_bytes_still_restores() {
    let mut data = dna_with_repeats(2 << 20, 5);
    data.extend_from_slice(
        &std::fs::read(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/moby_dick_64k.txt"),
        )
        .unwrap()
        .repeat(30),
    );
    let opts = Options::new().with_level(2);
    let (s, out) = streamed(&data, &opts, 0, 1 << 16, None);
    assert!(s.streamed);
    assert!(aceapex::decompress(&out).unwrap() == data);
}

#[test]
fn small_inputs_are_compressed_whole() {
    for n in [0usize, 1, 100, 70_000] {
        let data = dna_with_repeats(n.max(1), 9)[..n].to_vec();
        let opts = Options::new();
        let mut out = Vec::new();
        let s = aceapex::compress_to(&data[..], &mut out, &opts).unwrap();
        assert!(!s.streamed);
        assert_eq!(out, aceapex::compress(&data, &opts).unwrap());
    }
}

/// Plain FASTA of `records` sequences (some names repeated, which samtools indexes once),
/// wrapped at several widths with short last lines, soft-masked runs and N runs;
/// `line_end` ends every line.
fn fasta(records: usize, line_end: &[u8], seed: u64) -> Vec<u8> {
    let mut r = Rng(seed);
    let mut v = Vec::new();
    for i in 0..records {
        let name = format!(
            ">seq{} description {i}",
            i % records.saturating_sub(2).max(1)
        );
        v.extend_from_slice(name.as_bytes());
        v.extend_from_slice(line_end);
        let len = r.range(1, 400_000) as usize + if i == 0 { 300_000 } else { 0 };
        let mut seq = dna_with_repeats(len, seed + i as u64);
        let at = r.below(len as u64) as usize;
        let end = (at + 5_000).min(len);
        seq[at..end].make_ascii_lowercase();
        let at = r.below(len as u64) as usize;
        let end = (at + 3_000).min(len);
        seq[at..end].fill(b'N');
        let width = *[50usize, 60, 61, 80].get(r.below(4) as usize).unwrap();
        for line in seq.chunks(width) {
            v.extend_from_slice(line);
            v.extend_from_slice(line_end);
        }
    }
    v
}

/// Plain FASTA streamed gets the records of `compress` (index and checksums: the same
/// bytes); with carriage returns its data and block table are those of `compress`, its
/// records left out (and said so).
#[test]
fn a_streamed_fasta_input_gets_the_records_of_compress() {
    let opts = Options::new().with_level(1).with_min_match(Some(6));
    for (records, seed) in [(1, 1), (12, 2), (30, 3)] {
        let data = fasta(records, b"\n", seed);
        let whole = aceapex::compress(&data, &opts).unwrap();
        assert!(Archive::parse(&whole).unwrap().extensions().count() >= 1);
        // batches cut lines anywhere
        let (s, out) = streamed(&data, &opts, 0, 77_777, None);
        assert!(s.streamed && !s.fasta_left_out);
        assert!(
            out == whole,
            "{records} records: the streamed archive differs"
        );
    }
    let data = fasta(5, b"\r\n", 4);
    let whole = aceapex::compress(&data, &opts).unwrap();
    let (s, out) = streamed(&data, &opts, 0, 1 << 20, None);
    assert!(s.streamed && s.fasta_left_out);
    let (a, b) = (
        Archive::parse(&whole).unwrap(),
        Archive::parse(&out).unwrap(),
    );
    // the FASTA records (types 1 and 2) left out of the streamed archive, the line layout
    // record (type 4) in both
    let fasta_records = |x: &Archive<'_>| x.extensions().filter(|e| e.kind <= 2).count();
    assert!(fasta_records(&a) >= 1);
    assert_eq!(fasta_records(&b), 0);
    assert_eq!(b.extensions().count(), 1);
    assert!(a.data() == b.data());
    assert_eq!(a.entries(), b.entries());
    assert!(aceapex::decompress(&out).unwrap() == data);
}

/// Inputs at the edges of plain FASTA: not FASTA at all (records of neither), FASTA whose
/// index `compress` refuses (a blank line in a sequence), a last line without a line end
/// (records, as samtools): never records that differ from those of `compress`.
#[test]
fn fasta_outside_the_plain_form_never_gets_other_records() {
    let opts = Options::new().with_level(1).with_min_match(Some(6));
    let plain = fasta(8, b"\n", 9);
    let mut blank = plain.clone();
    let at = blank.len() / 2;
    let at = at + blank[at..].iter().position(|&b| b == b'\n').unwrap();
    blank.insert(at, b'\n');
    let mut no_end = plain.clone();
    no_end.pop();
    let mut not_fasta = b"@read\n".to_vec();
    not_fasta.extend_from_slice(&plain);
    for (what, data) in [
        ("blank", blank),
        ("no end", no_end),
        ("not fasta", not_fasta),
    ] {
        let whole = aceapex::compress(&data, &opts).unwrap();
        let (_, out) = streamed(&data, &opts, 0, 1 << 20, None);
        let (a, b) = (
            Archive::parse(&whole).unwrap(),
            Archive::parse(&out).unwrap(),
        );
        assert!(a.data() == b.data(), "{what}");
        // the stream's records, when it has any, are those of compress
        if b.extensions().count() > 0 || what == "no end" {
            assert!(out == whole, "{what}");
        }
    }
}

/// More than one batch (64 MiB of input): batches read while the previous one is coded,
/// a cross-block window's segments cut at the same places as in `compress`.
#[test]
fn several_batches_give_the_bytes_of_compress() {
    let data = dna_with_repeats(150 << 20, 21);
    for opts in [
        Options::new().with_level(1).with_min_match(Some(6)),
        Options::new()
            .with_level(1)
            .with_window(Some(1 << 20))
            .with_min_match(Some(6)),
    ] {
        let whole = aceapex::compress(&data, &opts).unwrap();
        let mut out = Vec::new();
        let s = aceapex::compress_to(
            Trickle {
                bytes: &data,
                step: 3 << 20,
            },
            &mut out,
            &opts,
        )
        .unwrap();
        assert!(s.streamed);
        assert!(out == whole);
    }
}

/// Under `--target gpu` two-bit literal slices stay only where all but a sixteenth of the
/// blocks with literals have one (FORMAT.md §5.7, §5.8; `encode::TWO_BIT_MAX_LEFT`): on text
/// followed by DNA the DNA blocks' slices are dropped at the end, and the stream codes their other slices again from the two-bit ones (packed
/// and not) rather than keeping them: the same bytes.
#[test]
fn dropped_two_bit_slices_are_coded_again_to_the_same_bytes() {
    use aceapex::device::format::{LANES_TWO_BIT, LANES_TWO_BIT_RUNS, STREAM_LITERALS};
    let golden = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut data = std::fs::read(golden.join("moby_dick_64k.txt"))
        .unwrap()
        .repeat(4);
    // and 1 MiB of words of random letters, so that more than a sixteenth of the blocks
    // with literals are text
    let mut x = 0x2545_F491u32;
    data.extend((0..1 << 20).map(|_| {
        x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        match x >> 27 {
            0..=3 => b' ',
            c => b'a' + c as u8 - 4,
        }
    }));
    data.extend_from_slice(&dna_with_repeats(12 << 20, 17));
    for opts in [
        Options::new()
            .with_level(2)
            .with_target(Target::Gpu)
            .with_block_size(4096),
        Options::new()
            .with_level(8)
            .with_target(Target::Gpu)
            .with_min_match(Some(6)),
    ] {
        let whole = aceapex::compress(&data, &opts).unwrap();
        let a = Archive::parse(&whole).unwrap();
        assert!(a.entries().iter().all(|e| {
            e.lanes[STREAM_LITERALS] != LANES_TWO_BIT
                && e.lanes[STREAM_LITERALS] != LANES_TWO_BIT_RUNS
        }));
        let (s, out) = streamed(&data, &opts, 0, 1 << 20, None);
        assert!(s.streamed);
        assert!(out == whole);
    }
}

/// A reader that fails after `ok` bytes, and a writer that always fails.
struct FailAfter {
    ok: usize,
}

impl Read for FailAfter {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.ok == 0 {
            return Err(std::io::Error::other("disk gone"));
        }
        let n = self.ok.min(out.len());
        out[..n].fill(b'A');
        self.ok -= n;
        Ok(n)
    }
}

struct Broken;

impl std::io::Write for Broken {
    fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
        Err(std::io::ErrorKind::BrokenPipe.into())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Failing I/O is named: the input's read (before and after streaming started) as
/// `Error::Io` on "the input", the output's write as `Error::Write` with its kind.
#[test]
fn failing_input_and_output_are_named() {
    let opts = Options::new().with_level(1).with_min_match(Some(6));
    for ok in [1000, 70 << 20] {
        let e = aceapex::compress_to(FailAfter { ok }, Vec::new(), &opts).unwrap_err();
        match e {
            aceapex::Error::Io { path, source } => {
                assert_eq!(path, std::path::Path::new("the input"));
                assert_eq!(source.to_string(), "disk gone");
            }
            e => panic!("{ok}: {e:?}"),
        }
    }
    for data in [vec![b'A'; 1000], dna_with_repeats(70 << 20, 2)] {
        let e = aceapex::compress_to(&data[..], Broken, &opts).unwrap_err();
        match e {
            aceapex::Error::Write(e) => assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe),
            e => panic!("{e:?}"),
        }
    }
}
