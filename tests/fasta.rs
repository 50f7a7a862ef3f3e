//! The FASTA index and region output against samtools 1.16.1.
//!
//! - `golden_cases`: crafted inputs under `tests/golden/fasta/cases/` with the `.fai`, the
//!   refusal message or the per-region stdout, stderr and exit status that samtools wrote
//!   (`tests/golden/fasta/README.md` says how they were made). Needs no samtools.
//! - `against_samtools_on_corpora` (ignored): the real corpora, indexed by both and queried with
//!   thousands of random regions, compared byte for byte with a `samtools` on PATH.

use std::path::{Path, PathBuf};
use std::process::Command;

use aceapex::fasta::{faidx, FaidxOptions, FastaIndex, IndexError, MarkStrand, SeqFormat};

const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/fasta/cases");

fn reader(data: &[u8]) -> impl FnMut(u64, &mut [u8]) -> std::io::Result<usize> + '_ {
    move |off, buf| {
        let rest = &data[(off as usize).min(data.len())..];
        let n = buf.len().min(rest.len());
        buf[..n].copy_from_slice(&rest[..n]);
        Ok(n)
    }
}

/// Our output for `regions`, one samtools call per region: concatenated stdout and stderr,
/// and one exit status a line.
fn per_region(
    index: &FastaIndex,
    data: &[u8],
    regions: &[&[u8]],
    opts: &FaidxOptions,
) -> (Vec<u8>, Vec<u8>, String) {
    let (mut out, mut err, mut status) = (Vec::new(), Vec::new(), String::new());
    for r in regions {
        let rc = faidx(index, &[r], opts, &mut reader(data), &mut out, &mut err).unwrap();
        status.push_str(&format!("{rc}\n"));
    }
    (out, err, status)
}

/// The kind of refusal and the line that samtools' message names (`None` where it names
/// none), from its stderr.
fn samtools_refusal(stderr: &str) -> (&'static str, Option<u64>) {
    let first = stderr.lines().find(|l| l.starts_with("[E::")).unwrap_or("");
    let line = first
        .rsplit_once("line ")
        .and_then(|(_, n)| n.trim().parse().ok());
    let kinds = [
        ("Format error, unexpected", "unexpected"),
        ("carriage return", "cr"),
        ("Different line length", "different"),
        ("has no sequence", "last-entry"),
        ("Found '@' in a FASTA", "at-in-fasta"),
        ("Found '>' in a FASTQ", "gt-in-fastq"),
        ("empty line is not allowed in sequence", "empty-seq-line"),
        ("empty line is not allowed in quality", "empty-qual-line"),
        ("Quality line length too long", "qual-long-line"),
        ("Quality length longer", "qual-longer"),
        ("Quality line length too short", "qual-short-line"),
        ("expecting '+'", "plus"),
    ];
    for (text, kind) in kinds {
        if first.contains(text) {
            return (kind, line);
        }
    }
    ("silent", None)
}

fn our_refusal(e: &IndexError) -> (&'static str, Option<u64>) {
    use IndexError as E;
    match e {
        E::UnexpectedByte { line, .. } => ("unexpected", Some(*line)),
        E::CarriageReturn { line } => ("cr", Some(*line)),
        E::DifferentLineLength { line, .. } => ("different", Some(*line)),
        E::LastEntryNoSequence { line, .. } => ("last-entry", Some(*line)),
        E::FastqHeaderInFasta { line } => ("at-in-fasta", Some(*line)),
        E::FastaHeaderInFastq { line } => ("gt-in-fastq", Some(*line)),
        E::EmptyLineInSequence { line, .. } => ("empty-seq-line", Some(*line)),
        E::EmptyLineInQuality { line, .. } => ("empty-qual-line", Some(*line)),
        E::QualityLineTooLong { line, .. } => ("qual-long-line", Some(*line)),
        E::QualityLongerThanSequence { line, .. } => ("qual-longer", Some(*line)),
        E::QualityLineTooShort { line, .. } => ("qual-short-line", Some(*line)),
        E::ExpectedPlus { line, .. } => ("plus", Some(*line)),
        E::LastRecordEmpty { .. } | E::NoRecords => ("silent", None),
        other => panic!("unexpected refusal {other:?}"),
    }
}

fn options(fastq: bool, variant: &str) -> FaidxOptions {
    let mut o = FaidxOptions::default();
    if fastq {
        o.output = SeqFormat::Fastq;
    }
    if variant == "n7i" {
        o.line_length = 7;
        o.reverse_complement = true;
    }
    o
}

#[test]
fn golden_cases() {
    let mut inputs: Vec<PathBuf> = std::fs::read_dir(GOLDEN)
        .expect("tests/golden/fasta/cases")
        .map(|e| e.unwrap().path())
        .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("fa" | "fq")))
        .collect();
    inputs.sort();
    assert!(inputs.len() >= 30, "only {} golden inputs", inputs.len());
    let (mut indexed, mut refused, mut regions_checked) = (0, 0, 0);
    for input in &inputs {
        let data = std::fs::read(input).unwrap();
        let fastq = input.extension().unwrap() == "fq";
        let name = input.display().to_string();
        let err_path = input.with_extension("err");
        if err_path.exists() {
            let stderr = std::fs::read_to_string(&err_path).unwrap();
            let e = FastaIndex::build(&data).expect_err(&name);
            let ((kind, line), (sam_kind, sam_line)) = (our_refusal(&e), samtools_refusal(&stderr));
            assert_eq!(kind, sam_kind, "{name}: {e}");
            // Where samtools names a line ours is the same; where it names none, ours is extra.
            if sam_line.is_some() {
                assert_eq!(line, sam_line, "{name}: {e}");
            }
            refused += 1;
            continue;
        }
        let index = FastaIndex::build(&data).unwrap_or_else(|e| panic!("{name}: {e}"));
        let fai = std::fs::read(input.with_extension("fai")).unwrap();
        assert_eq!(index.to_fai(), fai, "{name}: .fai");
        assert_eq!(index.format() == SeqFormat::Fastq, fastq, "{name}");
        assert_eq!(
            FastaIndex::from_bytes(&index.to_bytes()).unwrap(),
            index,
            "{name}"
        );
        indexed += 1;
        let regions_text = std::fs::read(input.with_extension("regions")).unwrap();
        // One region a line; a line may be empty (the empty name is a region).
        let regions: Vec<&[u8]> = regions_text
            .strip_suffix(b"\n")
            .unwrap_or(&regions_text)
            .split(|&b| b == b'\n')
            .collect();
        for variant in ["default", "n7i"] {
            let golden = |what: &str| {
                let stem = input.file_stem().unwrap().to_str().unwrap();
                std::fs::read(Path::new(GOLDEN).join(format!("{stem}.{variant}.{what}"))).unwrap()
            };
            let (out, err, status) = per_region(&index, &data, &regions, &options(fastq, variant));
            assert_eq!(
                String::from_utf8_lossy(&out),
                String::from_utf8_lossy(&golden("stdout")),
                "{name} {variant}: stdout"
            );
            assert_eq!(
                String::from_utf8_lossy(&err),
                String::from_utf8_lossy(&golden("stderr")),
                "{name} {variant}: stderr"
            );
            assert_eq!(
                status.as_bytes(),
                golden("status"),
                "{name} {variant}: status"
            );
            regions_checked += regions.len();
        }
    }
    assert!(
        indexed >= 12 && refused >= 15,
        "{indexed} indexed, {refused} refused"
    );
    assert!(regions_checked > 500);
}

#[test]
fn empty_middle_record_is_dropped_with_a_warning() {
    let data = std::fs::read(Path::new(GOLDEN).join("empty_middle.fa")).unwrap();
    let (index, warnings) = FastaIndex::build_with_warnings(&data).unwrap();
    assert_eq!(index.len(), 3);
    assert!(index.get(b"empty").is_none());
    assert_eq!(warnings.len(), 1, "{warnings:?}");
}

#[test]
fn mark_strand_sign_and_custom() {
    let data = b">s\nACGTT\n";
    let index = FastaIndex::build(data).unwrap();
    let mut o = FaidxOptions::default();
    o.mark_strand = MarkStrand::Sign;
    let (mut out, mut err) = (Vec::new(), Vec::new());
    faidx(
        &index,
        &["s:2-3"],
        &o,
        &mut reader(data),
        &mut out,
        &mut err,
    )
    .unwrap();
    o.reverse_complement = true;
    o.mark_strand = MarkStrand::Custom(b"_f".to_vec(), b"_r".to_vec());
    faidx(
        &index,
        &["s:2-3"],
        &o,
        &mut reader(data),
        &mut out,
        &mut err,
    )
    .unwrap();
    // samtools faidx --mark-strand sign FILE s:2-3, then -i --mark-strand custom,_f,_r.
    assert_eq!(out, b">s:2-3(+)\nCG\n>s:2-3_r\nCG\n");
    assert!(err.is_empty());
}

/// The index bytes with any one byte changed, or cut short, are refused or decode to an index
/// that encodes back to exactly those bytes (one encoding per index): never a panic.
#[test]
fn serialised_index_mutations() {
    let data = std::fs::read(Path::new(GOLDEN).join("basic.fa")).unwrap();
    let fq = std::fs::read(Path::new(GOLDEN).join("fastq_basic.fq")).unwrap();
    let (mut refused, mut accepted) = (0, 0);
    for input in [&data, &fq] {
        let bytes = FastaIndex::build(input).unwrap().to_bytes();
        for cut in 0..bytes.len() {
            assert!(
                FastaIndex::from_bytes(&bytes[..cut]).is_err(),
                "cut at {cut}"
            );
        }
        for at in 0..bytes.len() {
            for v in [
                0u8,
                1,
                0x7f,
                0x80,
                0xff,
                bytes[at] ^ 1,
                bytes[at].wrapping_add(1),
            ] {
                let mut m = bytes.clone();
                m[at] = v;
                match FastaIndex::from_bytes(&m) {
                    Ok(i) => {
                        assert_eq!(i.to_bytes(), m, "byte {at} = {v}");
                        accepted += 1;
                    }
                    Err(_) => refused += 1,
                }
            }
        }
    }
    assert!(
        refused > 100 && accepted > 10,
        "{refused} refused, {accepted} accepted"
    );
}

/// A file shorter than its index says: samtools' message and exit status 1, even with `-c`
/// (samtools 1.16.1 on the same bytes: `tr2.fa` = the first 12 bytes, the `.fai` of the whole).
#[test]
fn file_shorter_than_index() {
    let whole = b">a\nACGTACGT\nACGTACGT\nACG\n>b\nGG\n";
    let index = FastaIndex::build(whole).unwrap();
    let mut opts = FaidxOptions::default();
    opts.continue_on_missing = true;
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let regions = ["a:2-5", "a", "b"];
    let rc = faidx(
        &index,
        &regions,
        &opts,
        &mut reader(&whole[..12]),
        &mut out,
        &mut err,
    );
    assert_eq!(rc.unwrap(), 1);
    assert_eq!(out, b">a:2-5\nCGTA\n>a\n");
    assert_eq!(
        String::from_utf8(err).unwrap(),
        "[E::fai_retrieve] Failed to retrieve block: unexpected end of file\n\
         [faidx] Failed to fetch sequence in a\n"
    );
}

/// A reader that returns one byte a call gives the same output.
#[test]
fn short_reads() {
    let data = std::fs::read(Path::new(GOLDEN).join("soft_masked.fa")).unwrap();
    let index = FastaIndex::build(&data).unwrap();
    let mut one = |off: u64, buf: &mut [u8]| -> std::io::Result<usize> {
        match (data.get(off as usize), buf.first_mut()) {
            (Some(&b), Some(slot)) => {
                *slot = b;
                Ok(1)
            }
            _ => Ok(0),
        }
    };
    let regions = ["Chr1", "Chr1:30-80", "Chr1:100-"];
    let opts = FaidxOptions::default();
    let (mut a, mut b, mut e) = (Vec::new(), Vec::new(), Vec::new());
    faidx(&index, &regions, &opts, &mut one, &mut a, &mut e).unwrap();
    faidx(&index, &regions, &opts, &mut reader(&data), &mut b, &mut e).unwrap();
    assert_eq!(a, b);
    assert!(a.len() > 150);
}

/// A record whose first line has no base (LINEBASES 0): samtools 1.16.1 indexes it (the
/// `.fai` below is its) and dies of a division by zero when asked for any region of it; here
/// an empty one is a zero-length sequence and one with bases fails to fetch.
#[test]
fn zero_line_bases() {
    let data = b">a\n \n>b\n\r\nA\nC\n";
    let index = FastaIndex::build(data).unwrap();
    assert_eq!(index.to_fai(), b"a\t0\t3\t0\t2\nb\t2\t8\t0\t2\n");
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let opts = FaidxOptions::default();
    assert_eq!(
        faidx(&index, &["a"], &opts, &mut reader(data), &mut out, &mut err).unwrap(),
        0
    );
    assert_eq!(
        faidx(&index, &["b"], &opts, &mut reader(data), &mut out, &mut err).unwrap(),
        1
    );
    assert_eq!(out, b">a\n>b\n");
    let err = String::from_utf8(err).unwrap();
    assert!(
        err.starts_with("[faidx] Zero length sequence: a\n[E::fai_retrieve]"),
        "{err}"
    );
    assert!(
        err.ends_with("[faidx] Failed to fetch sequence in b\n"),
        "{err}"
    );
}

/// A deterministic generator (splitmix64) for the random regions.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }
}

fn with_commas(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A random region of `index`: mostly short ranges anywhere, some across or past the end,
/// some open-ended near the end, some with commas or braces, whole short records, and a few
/// that samtools refuses (unknown name, start after end).
fn random_region(rng: &mut Rng, index: &FastaIndex) -> String {
    let rec = &index.records()[rng.below(index.len() as u64) as usize];
    let name = String::from_utf8_lossy(&rec.name).into_owned();
    let len = rec.length;
    let beg = 1 + rng.below(len.max(1));
    let short = 1 + rng.below(2000);
    match rng.below(100) {
        0..=59 => format!("{name}:{beg}-{}", beg + short - 1),
        60..=69 => {
            let b = (len + 1).saturating_sub(rng.below(120)).max(1) + rng.below(3);
            format!("{name}:{b}-{}", b + rng.below(200))
        }
        70..=74 => format!("{name}:{}", (len + 1).saturating_sub(rng.below(500)).max(1)),
        75..=79 => format!(
            "{name}:{}-",
            (len + 1).saturating_sub(rng.below(500)).max(1)
        ),
        80..=84 => format!("{name}:{}-{}", with_commas(beg), with_commas(beg + short)),
        85..=89 => format!("{{{name}}}:{beg}-{}", beg + short),
        90..=93 if len <= 200_000 => name,
        90..=93 => format!("{name}:-{short}"),
        94..=96 => format!("{name}:{}-{}", beg + 5, beg),
        _ => format!("no_such_sequence_{}:1-10", rng.below(1000)),
    }
}

/// The corpus files (whole): every genome, the protein file and the FASTQ files, each with
/// whether it is FASTQ.
fn corpus_files(root: &Path) -> Vec<(PathBuf, bool)> {
    let mut files = Vec::new();
    if let Ok(dir) = std::fs::read_dir(root.join("dna")) {
        let mut dna: Vec<PathBuf> = dir.map(|e| e.unwrap().path()).collect();
        dna.sort();
        files.extend(dna.into_iter().map(|p| (p, false)));
    }
    files.push((root.join("protein/swissprot201401_GO_BPO.fasta"), false));
    if let Ok(dir) = std::fs::read_dir(root.join("fastq")) {
        let mut fq: Vec<PathBuf> = dir.map(|e| e.unwrap().path()).collect();
        fq.sort();
        files.extend(fq.into_iter().map(|p| (p, true)));
    }
    files
}

#[test]
#[ignore = "needs samtools on PATH and the corpora (ACEAPEX_CORPORA, default corpora/): cargo test --release --test fasta -- --ignored"]
fn against_samtools_on_corpora() {
    let version = Command::new("samtools")
        .arg("--version")
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "samtools is missing ({e}): install it (apt-get install samtools) to run this test"
            )
        });
    let version = String::from_utf8_lossy(&version.stdout);
    eprintln!("{}", version.lines().take(2).collect::<Vec<_>>().join(", "));
    let root = PathBuf::from(
        std::env::var("ACEAPEX_CORPORA")
            .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/corpora").to_string()),
    );
    let tmp = tempfile::tempdir().unwrap();
    let mut total = 0usize;
    let mut files_done = 0;
    for (path, fastq) in corpus_files(&root) {
        let Ok(data) = std::fs::read(&path) else {
            eprintln!("missing: {}", path.display());
            continue;
        };
        // samtools writes FILE.fai next to FILE: index a link in a scratch folder.
        let file = tmp.path().join(path.file_name().unwrap());
        std::os::unix::fs::symlink(std::fs::canonicalize(&path).unwrap(), &file).unwrap();
        let tool = if fastq { "fqidx" } else { "faidx" };
        let st = Command::new("samtools")
            .arg(tool)
            .arg(&file)
            .status()
            .unwrap();
        assert!(st.success(), "samtools {tool} {}", path.display());
        let index = FastaIndex::build(&data).unwrap();
        let fai = std::fs::read(tmp.path().join(format!(
            "{}.fai",
            file.file_name().unwrap().to_str().unwrap()
        )))
        .unwrap();
        assert!(index.to_fai() == fai, "{}: .fai differs", path.display());
        assert_eq!(FastaIndex::from_bytes(&index.to_bytes()).unwrap(), index);
        let mut rng = Rng(0x5eed ^ data.len() as u64);
        let mut compared = 0;
        for batch in 0..10 {
            let regions: Vec<String> = (0..500).map(|_| random_region(&mut rng, &index)).collect();
            let mut opts = FaidxOptions::default();
            opts.continue_on_missing = true;
            if fastq {
                opts.output = SeqFormat::Fastq;
            }
            let mut args: Vec<String> = vec![tool.into(), "-c".into()];
            if batch % 3 == 1 {
                opts.line_length = 70;
                opts.reverse_complement = true;
                args.extend(["-n".into(), "70".into(), "-i".into()]);
            } else if batch % 3 == 2 {
                opts.line_length = 13;
                args.extend(["-n".into(), "13".into()]);
            }
            args.push(file.to_str().unwrap().into());
            args.extend(regions.iter().cloned());
            let sam = Command::new("samtools").args(&args).output().unwrap();
            let (mut out, mut err) = (Vec::new(), Vec::new());
            let rc = faidx(
                &index,
                &regions,
                &opts,
                &mut reader(&data),
                &mut out,
                &mut err,
            )
            .unwrap();
            assert_eq!(rc, sam.status.code().unwrap(), "{}: status", path.display());
            assert!(
                out == sam.stdout,
                "{} batch {batch}: stdout differs",
                path.display()
            );
            assert_eq!(
                String::from_utf8_lossy(&err),
                String::from_utf8_lossy(&sam.stderr),
                "{} batch {batch}: stderr",
                path.display()
            );
            compared += regions.len();
        }
        eprintln!(
            "{}: {} records, .fai identical, {compared} regions identical",
            path.display(),
            index.len()
        );
        total += compared;
        files_done += 1;
    }
    assert!(files_done > 0, "no corpus file under {}", root.display());
    eprintln!("{files_done} files, {total} regions compared with samtools");
}

/// Random small inputs over the bytes that steer samtools' indexer (`>`, `@`, `+`, bases,
/// `\n`, `\r`, space): the same acceptance, the same `.fai`, or the same refusal and line.
#[test]
#[ignore = "needs samtools on PATH: cargo test --release --test fasta -- --ignored"]
fn fuzz_indexer_against_samtools() {
    Command::new("samtools")
        .arg("--version")
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "samtools is missing ({e}): install it (apt-get install samtools) to run this test"
            )
        });
    let tmp = tempfile::tempdir().unwrap();
    let mut rng = Rng(0xfa57a);
    let (mut same_fai, mut same_refusal, mut regions, mut fasta_for_fastq) = (0, 0, 0, 0);
    const ALPHABET: &[u8] = b">>@+ACGTACGTACGTacgtN\n\n\n\n\r x";
    for case in 0..3000 {
        let fastq = case % 3 == 2;
        let mut data = Vec::new();
        let records = 1 + rng.below(4);
        for r in 0..records {
            data.push(if fastq { b'@' } else { b'>' });
            data.extend_from_slice(format!("r{}", rng.below(3 + r)).as_bytes());
            data.push(b'\n');
            let width = 1 + rng.below(8);
            let lines = rng.below(4);
            let mut seq_lines = Vec::new();
            for l in 0..lines {
                let w = if l + 1 == lines {
                    1 + rng.below(width)
                } else {
                    width
                };
                let line: Vec<u8> = (0..w).map(|_| b"ACGTN"[rng.below(5) as usize]).collect();
                seq_lines.push(line);
            }
            for line in &seq_lines {
                data.extend_from_slice(line);
                data.push(b'\n');
            }
            if fastq {
                data.extend_from_slice(b"+\n");
                for line in &seq_lines {
                    data.extend(std::iter::repeat_n(b'I', line.len()));
                    data.push(b'\n');
                }
            }
        }
        // Then a few random edits: insertions, deletions, replacements.
        for _ in 0..rng.below(4) {
            let at = rng.below(data.len() as u64 + 1) as usize;
            let b = ALPHABET[rng.below(ALPHABET.len() as u64) as usize];
            match rng.below(3) {
                0 => data.insert(at, b),
                1 if at < data.len() => {
                    data.remove(at);
                }
                _ if at < data.len() => data[at] = b,
                _ => {}
            }
        }
        let file = tmp
            .path()
            .join(format!("case{case}.{}", if fastq { "fq" } else { "fa" }));
        std::fs::write(&file, &data).unwrap();
        let tool = if fastq { "fqidx" } else { "faidx" };
        let sam = Command::new("samtools")
            .arg(tool)
            .arg(&file)
            .output()
            .unwrap();
        let ours = FastaIndex::build(&data);
        let shown = String::from_utf8_lossy(&data).into_owned();
        if sam.status.success() {
            let fai = std::fs::read(
                file.with_extension(format!("{}.fai", if fastq { "fq" } else { "fa" })),
            )
            .unwrap();
            let index =
                ours.unwrap_or_else(|e| panic!("{shown:?}: samtools indexes, we refuse: {e}"));
            assert!(index.to_fai() == fai, "{shown:?}: .fai differs");
            assert_eq!(FastaIndex::from_bytes(&index.to_bytes()).unwrap(), index);
            same_fai += 1;
            // Whole records and short ranges, where samtools can fetch (LINEBASES > 0).
            let names: Vec<String> = index
                .records()
                .iter()
                .filter(|r| r.line_bases > 0)
                .flat_map(|r| {
                    let n = String::from_utf8_lossy(&r.name).into_owned();
                    [n.clone(), format!("{n}:2-4"), format!("{n}:{}", r.length)]
                })
                .collect();
            if fastq && index.format() == SeqFormat::Fasta {
                // samtools fqidx indexes a FASTA file but refuses to load that index.
                let out = Command::new("samtools")
                    .arg(tool)
                    .arg(&file)
                    .arg("r0")
                    .output()
                    .unwrap();
                assert!(!out.status.success(), "{shown:?}");
                let mut opts = FaidxOptions::default();
                opts.output = SeqFormat::Fastq;
                let r = faidx(
                    &index,
                    &["r0"],
                    &opts,
                    &mut reader(&data),
                    &mut Vec::new(),
                    &mut Vec::new(),
                );
                assert_eq!(r.unwrap_err().kind(), std::io::ErrorKind::InvalidInput);
                fasta_for_fastq += 1;
                continue;
            }
            if names.is_empty() {
                continue;
            }
            let out = Command::new("samtools")
                .arg(tool)
                .arg("-c")
                .arg(&file)
                .args(&names)
                .output()
                .unwrap();
            let mut opts = FaidxOptions::default();
            opts.continue_on_missing = true;
            if fastq {
                opts.output = SeqFormat::Fastq;
            }
            let (mut o, mut e) = (Vec::new(), Vec::new());
            let rc = faidx(&index, &names, &opts, &mut reader(&data), &mut o, &mut e).unwrap();
            assert_eq!(
                Some(rc),
                out.status.code(),
                "{shown:?} {names:?} {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(o == out.stdout, "{shown:?}: stdout");
            assert_eq!(
                String::from_utf8_lossy(&e),
                String::from_utf8_lossy(&out.stderr),
                "{shown:?}"
            );
            regions += names.len();
        } else {
            let e = match ours {
                Ok(_) => panic!("{shown:?}: samtools refuses, we index"),
                Err(e) => e,
            };
            let stderr = String::from_utf8_lossy(&sam.stderr);
            let ((kind, line), (sam_kind, sam_line)) = (our_refusal(&e), samtools_refusal(&stderr));
            assert_eq!(kind, sam_kind, "{shown:?}: {e} / {stderr}");
            if sam_line.is_some() {
                assert_eq!(line, sam_line, "{shown:?}: {e} / {stderr}");
            }
            same_refusal += 1;
        }
    }
    eprintln!(
        "3000 random inputs: {same_fai} indexed identically ({regions} regions identical, \
         {fasta_for_fastq} FASTA inputs refused for FASTQ output by both), {same_refusal} \
         refused for the same reason"
    );
}
