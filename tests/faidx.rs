//! `aceapex faidx` and the archive's FASTA index record (FORMAT.md §3.4, §3.5), end to end:
//!
//! - `golden_cases_through_archives`: every crafted FASTA of `tests/golden/fasta/cases`
//!   compressed by the binary, then `aceapex faidx` (one call per region, as the golden files
//!   were made) against samtools' committed stdout, stderr and exit status, and `--fai` against
//!   samtools' `.fai`; the inputs samtools refuses get no record and a clear error.
//! - the record: attached by `compress` to indexable FASTA only, left out where it would cost
//!   ratio, forced by `with_fasta_index`; hostile payloads (resealed) refused cleanly.
//! - `against_samtools_on_corpora` (ignored): the corpora's FASTA files compressed, thousands of
//!   random regions through `aceapex faidx -r` compared byte for byte with `samtools faidx -r`
//!   on the original (`cargo test --release --test faidx -- --ignored`).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use aceapex::device::format::EXTENSION_TYPE_FASTA_INDEX;
use aceapex::fasta::FastaIndex;
use aceapex::format::{with_extensions, Extension};
use aceapex::{Error, FormatError, Options, Reader};

const BIN: &str = env!("CARGO_BIN_EXE_aceapex");
const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/fasta/cases");

fn aceapex<S: AsRef<OsStr>>(args: &[S]) -> Output {
    Command::new(BIN)
        .args(args)
        .output()
        .expect("the binary runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Compresses `input` with the binary into `dir`; the archive's path.
fn compress_cli(dir: &Path, input: &Path) -> PathBuf {
    let out = dir.join(format!(
        "{}.acx",
        input.file_name().unwrap().to_str().unwrap()
    ));
    let o = aceapex(&[
        OsStr::new("compress"),
        OsStr::new("-q"),
        OsStr::new("-f"),
        input.as_os_str(),
        OsStr::new("-o"),
        out.as_os_str(),
    ]);
    assert!(
        o.status.success(),
        "compress {}: {}",
        input.display(),
        text(&o.stderr)
    );
    out
}

fn golden_inputs(ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(GOLDEN)
        .expect("tests/golden/fasta/cases")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().and_then(|e| e.to_str()) == Some(ext))
        .collect();
    v.sort();
    v
}

#[test]
fn golden_cases_through_archives() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut indexed, mut refused, mut regions_checked) = (0, 0, 0);
    for input in golden_inputs("fa") {
        let name = input.display().to_string();
        let data = std::fs::read(&input).unwrap();
        let archive = compress_cli(tmp.path(), &input);
        let bytes = std::fs::read(&archive).unwrap();
        assert_eq!(aceapex::decompress(&bytes).unwrap(), data, "{name}");
        let reader = Reader::new(&bytes).unwrap();
        let err_path = input.with_extension("err");
        if err_path.exists() {
            // samtools refuses it: no record, and faidx says why, with samtools' line
            assert!(reader.fasta_index().is_none(), "{name}: a record");
            let o = aceapex(&[OsStr::new("faidx"), archive.as_os_str(), OsStr::new("x")]);
            assert_eq!(o.status.code(), Some(1), "{name}");
            assert!(o.stdout.is_empty(), "{name}");
            let err = text(&o.stderr);
            assert!(
                err.contains("carries no FASTA index")
                    && err.contains("not FASTA that samtools can index")
                    && err.contains("aceapex decompress"),
                "{name}: {err}"
            );
            let sam = std::fs::read_to_string(&err_path).unwrap();
            if let Some((_, n)) = sam.lines().next().and_then(|l| l.rsplit_once("line ")) {
                assert!(
                    err.contains(&format!("line {}", n.trim())),
                    "{name}: {err} / {sam}"
                );
            }
            refused += 1;
            continue;
        }
        let fai = std::fs::read(input.with_extension("fai")).unwrap();
        let index = reader
            .fasta_index()
            .unwrap_or_else(|| panic!("{name}: no record"));
        assert_eq!(index.to_fai(), fai, "{name}: record");
        let o = aceapex(&[
            OsStr::new("faidx"),
            archive.as_os_str(),
            OsStr::new("--fai"),
        ]);
        assert!(o.status.success(), "{name}: {}", text(&o.stderr));
        assert_eq!(text(&o.stdout), text(&fai), "{name}: --fai");
        indexed += 1;
        let regions_text = std::fs::read(input.with_extension("regions")).unwrap();
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
            let (mut out, mut err, mut status) = (Vec::new(), Vec::new(), String::new());
            for r in &regions {
                let mut args = vec![OsStr::new("faidx"), archive.as_os_str()];
                if variant == "n7i" {
                    args.extend([OsStr::new("-n"), OsStr::new("7"), OsStr::new("-i")]);
                }
                args.push(OsStr::from_bytes(r));
                let o = aceapex(&args);
                out.extend_from_slice(&o.stdout);
                err.extend_from_slice(&o.stderr);
                status.push_str(&format!("{}\n", o.status.code().unwrap()));
            }
            assert_eq!(text(&out), text(&golden("stdout")), "{name} {variant}");
            assert_eq!(text(&err), text(&golden("stderr")), "{name} {variant}");
            assert_eq!(status.as_bytes(), golden("status"), "{name} {variant}");
            regions_checked += regions.len();
        }
    }
    assert!(
        indexed >= 10 && refused >= 8,
        "{indexed} indexed, {refused} refused"
    );
    assert!(regions_checked > 400, "{regions_checked} regions");
}

#[test]
fn region_file_then_arguments_in_one_run() {
    let tmp = tempfile::tempdir().unwrap();
    let input = Path::new(GOLDEN).join("basic.fa");
    let archive = compress_cli(tmp.path(), &input);
    let regions = tmp.path().join("regions.txt");
    // `\r\n` and a last line without its line feed, as htslib's kgetline reads them
    std::fs::write(&regions, b"chr2:2-3\r\nchr1:2-3\nchr1:25").unwrap();
    let o = aceapex(&[
        OsStr::new("faidx"),
        archive.as_os_str(),
        OsStr::new("-r"),
        regions.as_os_str(),
        OsStr::new("chr2:1-1"),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    // expected: samtools 1.16.1 `samtools faidx basic.fa -r regions.txt chr2:1-1`
    let want = golden_region_outputs(&["chr2:2-3", "chr1:2-3", "chr1:25", "chr2:1-1"]);
    assert_eq!(text(&o.stdout), want);
    // a region not found stops the run with status 1 unless -c
    std::fs::write(&regions, b"chr1:1-1\nnope\nchr1:2-3\n").unwrap();
    let args = |c: bool| {
        let mut a = vec![
            OsStr::new("faidx"),
            archive.as_os_str(),
            OsStr::new("-r"),
            regions.as_os_str(),
        ];
        if c {
            a.push(OsStr::new("-c"));
        }
        a
    };
    let o = aceapex(&args(false));
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        text(&o.stdout),
        format!("{}>nope\n", golden_region_outputs(&["chr1:1-1"]))
    );
    assert_eq!(
        text(&o.stderr),
        "[W::fai_get_val] Reference nope not found in FASTA file, returning empty sequence\n\
         [faidx] Failed to fetch sequence in nope\n"
    );
    let o = aceapex(&args(true));
    assert_eq!(o.status.code(), Some(0));
    assert!(text(&o.stdout).ends_with(&golden_region_outputs(&["chr1:2-3"])));
}

/// The golden stdout of the named regions of `basic.fa` (default variant), cut out of the
/// committed concatenation by header lines.
fn golden_region_outputs(names: &[&str]) -> String {
    let all = std::fs::read_to_string(Path::new(GOLDEN).join("basic.default.stdout")).unwrap();
    let mut blocks: Vec<(String, String)> = Vec::new();
    for line in all.split_inclusive('\n') {
        if let Some(h) = line.strip_prefix('>') {
            blocks.push((h.trim_end().to_string(), line.to_string()));
        } else if let Some(b) = blocks.last_mut() {
            b.1.push_str(line);
        }
    }
    names
        .iter()
        .map(|n| {
            blocks
                .iter()
                .find(|(h, _)| h == n)
                .unwrap_or_else(|| panic!("{n} not among basic.regions"))
                .1
                .clone()
        })
        .collect()
}

#[test]
fn bad_line_length_warns_as_samtools() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = compress_cli(tmp.path(), &Path::new(GOLDEN).join("basic.fa"));
    let o = aceapex(&[
        OsStr::new("faidx"),
        archive.as_os_str(),
        OsStr::new("-n"),
        OsStr::new("0"),
        OsStr::new("chr1:2-3"),
    ]);
    assert!(o.status.success());
    // samtools 1.16.1: the warning, then the default width
    assert_eq!(
        text(&o.stderr),
        "[faidx] bad line length '0', using default:60\n"
    );
    assert_eq!(text(&o.stdout), golden_region_outputs(&["chr1:2-3"]));
}

#[test]
fn compress_attaches_the_index_to_fasta_only() {
    let fasta = b">chr1 test\nACGTACGT\nACG\n>chr2\nTTTT\n".to_vec();
    let a = aceapex::compress(&fasta, &Options::default()).unwrap();
    let r = Reader::new(&a).unwrap();
    // samtools 1.16.1 faidx of the same bytes
    assert_eq!(
        r.fasta_index().unwrap().to_fai(),
        b"chr1\t11\t11\t8\t9\nchr2\t4\t30\t4\t5\n"
    );
    // the same archive without the records otherwise: the index (FORMAT.md §3.5) and the
    // sequence checksums (§3.6: 8 bytes and 48 a sequence), each after an 8-byte header
    let plain = aceapex::encode::compress(&fasta, &Options::default(), &|_| {}).unwrap();
    assert_eq!(
        a.len(),
        plain.len() + 8 + r.fasta_index().unwrap().to_bytes().len() + 8 + 8 + 48 * 2
    );
    for other in [
        &b"plain text\n"[..],
        b"@r1\nACGT\n+\nIIII\n",   // FASTQ: no index for now
        b">a\nACGT\nACGTAC\nAC\n", // ragged: samtools refuses
        b">a\r\nAC\r\n\rAC\r\n",   // a lone CR
        b"",
    ] {
        let a = aceapex::compress(other, &Options::default()).unwrap();
        let r = Reader::new(&a).unwrap();
        assert!(r.fasta_index().is_none(), "{:?}", text(other));
        assert_eq!(aceapex::decompress(&a).unwrap(), other);
    }
}

/// `info` says whether an archive carries the FASTA index, in text and JSON.
#[test]
fn info_names_the_fasta_index() {
    let dir = tempfile::tempdir().unwrap();
    let fasta = dir.path().join("two.fa");
    std::fs::write(&fasta, b">chr1 test\nACGTACGT\nACG\n>chr2\nTTTT\n").unwrap();
    let plain = dir.path().join("plain.txt");
    std::fs::write(&plain, b"plain text, not FASTA\n").unwrap();
    for (input, line, json) in [
        (
            &fasta,
            "FASTA index      2 sequences",
            "\"fasta_sequences\":2",
        ),
        (&plain, "FASTA index      none", "\"fasta_sequences\":null"),
    ] {
        let archive = compress_cli(dir.path(), input);
        let o = aceapex(&[OsStr::new("info"), archive.as_os_str()]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        assert!(
            text(&o.stdout).lines().any(|l| l.starts_with(line)),
            "{}",
            text(&o.stdout)
        );
        let o = aceapex(&[
            OsStr::new("info"),
            OsStr::new("--json"),
            archive.as_os_str(),
        ]);
        assert!(text(&o.stdout).contains(json), "{}", text(&o.stdout));
    }
}

#[test]
fn many_short_records_are_left_out_unless_asked() {
    // 3,000 records of 20 bases: an index of about 30 KiB for 90 KiB of input
    let mut fasta = Vec::new();
    for i in 0..3000 {
        fasta.extend_from_slice(
            format!(">protein_{i:05} some description\nMKVLAAGIVGLLLAVAQTRE\n").as_bytes(),
        );
    }
    let a = aceapex::compress(&fasta, &Options::default()).unwrap();
    assert!(Reader::new(&a).unwrap().fasta_index().is_none());
    let index = FastaIndex::build(&fasta).unwrap();
    assert!(index.to_bytes().len() > fasta.len() / 1024);
    let forced = aceapex::with_fasta_index(&a, &index).unwrap();
    let r = Reader::new(&forced).unwrap();
    assert_eq!(r.fasta_index(), Some(&index));
    assert_eq!(r.decompress().unwrap(), fasta);
    // a second record is refused when attaching, and when reading
    assert!(matches!(
        aceapex::with_fasta_index(&forced, &index),
        Err(Error::Format(FormatError::Extension { .. }))
    ));
    let twice = with_extensions(
        &forced,
        &[Extension {
            kind: EXTENSION_TYPE_FASTA_INDEX,
            flags: 0,
            payload: &index.to_bytes(),
        }],
    )
    .unwrap();
    let e = Reader::new(&twice).unwrap_err();
    assert!(e.to_string().contains("second FASTA index record"), "{e}");
    // a reader that skips the record still restores the data
    assert_eq!(aceapex::decompress(&twice).unwrap(), fasta);
}

/// The CLI's answer for an archive of `payload` as the record: exit status and stderr.
fn faidx_status(dir: &Path, archive: &[u8]) -> (Option<i32>, String) {
    let path = dir.join("hostile.acx");
    std::fs::write(&path, archive).unwrap();
    let o = aceapex(&[
        OsStr::new("faidx"),
        path.as_os_str(),
        OsStr::new("chr1:1-5"),
    ]);
    (o.status.code(), text(&o.stderr))
}

#[test]
fn hostile_index_records_are_clean_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let fasta = std::fs::read(Path::new(GOLDEN).join("basic.fa")).unwrap();
    let plain = aceapex::encode::compress(&fasta, &Options::default(), &|_| {}).unwrap();
    let good = FastaIndex::build(&fasta).unwrap().to_bytes();
    let seal = |payload: &[u8]| {
        with_extensions(
            &plain,
            &[Extension {
                kind: EXTENSION_TYPE_FASTA_INDEX,
                flags: 0,
                payload,
            }],
        )
        .unwrap()
    };
    // named damage: each must be refused at open with the record's offset, and by the CLI
    let mut cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty", Vec::new()),
        ("bad magic", [b"FAI\x02", &good[4..]].concat()),
        ("truncated", good[..good.len() - 1].to_vec()),
        ("trailing byte", [&good[..], b"\0"].concat()),
        ("unknown kind", [&good[..4], b"\x07", &good[5..]].concat()),
    ];
    // an offset past the original data: the first record's gap set to 2^40
    let mut far = good[..7].to_vec(); // magic, kind, reserved, count (one byte here)
    let count = good[6];
    assert!(count < 0x80);
    let name_len = good[7] as usize;
    far.extend_from_slice(&good[7..8 + name_len]); // name
    let mut p = 8 + name_len;
    let skip_varint = |p: &mut usize| {
        while good[*p] & 0x80 != 0 {
            *p += 1;
        }
        *p += 1;
    };
    let len_start = p;
    skip_varint(&mut p);
    far.extend_from_slice(&good[len_start..p]); // length
    skip_varint(&mut p); // the offset gap, replaced
    far.extend_from_slice(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x20]);
    far.extend_from_slice(&good[p..]);
    cases.push(("offset past the data", far));
    for (what, payload) in &cases {
        let a = seal(payload);
        match Reader::new(&a) {
            Err(Error::Format(FormatError::Extension { offset: 0, why })) => {
                assert!(why.contains("FASTA index record"), "{what}: {why}")
            }
            other => panic!("{what}: {other:?}"),
        }
        assert_eq!(aceapex::decompress(&a).unwrap(), fasta, "{what}");
        let (code, err) = faidx_status(tmp.path(), &a);
        assert_eq!(code, Some(1), "{what}: {err}");
        assert!(
            err.starts_with("aceapex: error: reading ") && err.contains("FASTA index record"),
            "{what}: {err}"
        );
    }
    // every byte of the payload set to a few values: refused at open, or read cleanly (the
    // library answers every region without a panic, whatever the index says)
    let mut opened = 0;
    for i in 0..good.len() {
        for v in [0x00u8, 0x01, 0x7f, 0x80, 0xff, good[i] ^ 0x20] {
            let mut payload = good.clone();
            payload[i] = v;
            let a = seal(&payload);
            let Ok(r) = Reader::new(&a) else { continue };
            opened += 1;
            let index = r.fasta_index().unwrap();
            let regions: Vec<String> = index
                .records()
                .iter()
                .flat_map(|rec| {
                    let n = rec.name_lossy();
                    [
                        n.to_string(),
                        format!("{n}:2-40"),
                        format!("{n}:1000000-2000000"),
                    ]
                })
                .collect();
            let (mut out, mut log) = (Vec::new(), Vec::new());
            let mut read = |o, b: &mut [u8]| r.read_at(o, b);
            let mut opts = aceapex::fasta::FaidxOptions::default();
            opts.continue_on_missing = true;
            aceapex::fasta::faidx(index, &regions, &opts, &mut read, &mut out, &mut log).unwrap();
        }
    }
    assert!(opened > 0);
}

#[test]
fn archive_of_non_fasta_explains_and_fastq_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let txt = tmp.path().join("notes.txt");
    std::fs::write(&txt, b"just some text\nnot a FASTA file\n").unwrap();
    let a = compress_cli(tmp.path(), &txt);
    let o = aceapex(&[OsStr::new("faidx"), a.as_os_str(), OsStr::new("--fai")]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        text(&o.stderr),
        format!(
            "aceapex: error: {} carries no FASTA index: its original is not FASTA that \
             samtools can index (format error, unexpected \"j\" at line 1); 'aceapex \
             decompress' or 'aceapex extract' restore its bytes\n",
            a.display()
        )
    );
    let fq = Path::new(GOLDEN).join("fastq_basic.fq");
    let a = compress_cli(tmp.path(), &fq);
    assert!(Reader::new(&std::fs::read(&a).unwrap())
        .unwrap()
        .fasta_index()
        .is_none());
    let o = aceapex(&[OsStr::new("faidx"), a.as_os_str(), OsStr::new("--fai")]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("FASTQ, not FASTA"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn archive_without_record_is_indexed_from_its_original() {
    // an archive written without the record (another writer, or the record left out):
    // faidx restores the original, indexes it and answers as samtools, with a note
    let tmp = tempfile::tempdir().unwrap();
    let fasta = std::fs::read(Path::new(GOLDEN).join("basic.fa")).unwrap();
    let plain = aceapex::encode::compress(&fasta, &Options::default(), &|_| {}).unwrap();
    let path = tmp.path().join("plain.acx");
    std::fs::write(&path, &plain).unwrap();
    let o = aceapex(&[
        OsStr::new("faidx"),
        path.as_os_str(),
        OsStr::new("chr1:2-3"),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), golden_region_outputs(&["chr1:2-3"]));
    assert!(text(&o.stderr).contains("carries no FASTA index"));
    let o = aceapex(&[
        OsStr::new("-q"),
        OsStr::new("faidx"),
        path.as_os_str(),
        OsStr::new("--fai"),
    ]);
    assert!(o.status.success());
    assert!(o.stderr.is_empty());
    assert_eq!(
        o.stdout,
        std::fs::read(Path::new(GOLDEN).join("basic.fai")).unwrap()
    );
}

/// SplitMix64 for the random regions.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) % n.max(1)
    }
}

fn random_region(rng: &mut Rng, index: &FastaIndex) -> String {
    let rec = &index.records()[rng.below(index.len() as u64) as usize];
    let name = String::from_utf8_lossy(&rec.name).into_owned();
    let len = rec.length;
    let beg = 1 + rng.below(len);
    let short = 1 + rng.below(6000);
    match rng.below(100) {
        0..=69 => format!("{name}:{beg}-{}", beg + short - 1),
        70..=79 => {
            let b = (len + 1).saturating_sub(rng.below(120)).max(1);
            format!("{name}:{b}-{}", b + rng.below(200))
        }
        80..=84 => format!("{name}:{}", (len + 1).saturating_sub(rng.below(500)).max(1)),
        85..=89 => format!("{{{name}}}:{beg}-{}", beg + short),
        90..=92 if len <= 200_000 => name,
        90..=92 => format!("{name}:-{short}"),
        93..=96 => format!("{name}:{}-{}", beg + 5, beg),
        _ => format!("no_such_sequence_{}:1-10", rng.below(1000)),
    }
}

#[test]
#[ignore = "needs samtools on PATH and the corpora (ACEAPEX_CORPORA, default corpora/); run with --release"]
fn against_samtools_on_corpora() {
    Command::new("samtools")
        .arg("--version")
        .output()
        .expect("samtools on PATH (apt-get install samtools)");
    let root = PathBuf::from(
        std::env::var("ACEAPEX_CORPORA")
            .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/corpora").to_string()),
    );
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join("dna"))
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    files.sort();
    files.push(root.join("protein/swissprot201401_GO_BPO.fasta"));
    let tmp = tempfile::tempdir().unwrap();
    let (mut total, mut done) = (0usize, 0);
    for path in files {
        let Ok(data) = std::fs::read(&path) else {
            eprintln!("missing: {}", path.display());
            continue;
        };
        let file = tmp.path().join(path.file_name().unwrap());
        std::os::unix::fs::symlink(std::fs::canonicalize(&path).unwrap(), &file).unwrap();
        let st = Command::new("samtools")
            .arg("faidx")
            .arg(&file)
            .status()
            .unwrap();
        assert!(st.success(), "samtools faidx {}", path.display());
        let fai = std::fs::read(format!("{}.fai", file.display())).unwrap();
        let archive = compress_cli(tmp.path(), &file);
        let bytes = std::fs::read(&archive).unwrap();
        let index = match Reader::new(&bytes).unwrap().fasta_index() {
            Some(i) => i.clone(),
            None => {
                // left out to keep the ratio (many records): attached on request
                let index = FastaIndex::build(&data).unwrap();
                let forced = aceapex::with_fasta_index(&bytes, &index).unwrap();
                std::fs::write(&archive, forced).unwrap();
                eprintln!("{}: index attached on request", path.display());
                index
            }
        };
        let o = aceapex(&[
            OsStr::new("faidx"),
            archive.as_os_str(),
            OsStr::new("--fai"),
        ]);
        assert!(o.stdout == fai, "{}: --fai differs", path.display());
        let mut rng = Rng(0xfa1d ^ data.len() as u64);
        let mut compared = 0;
        for batch in 0..4 {
            let regions: Vec<String> = (0..1000).map(|_| random_region(&mut rng, &index)).collect();
            let list = tmp.path().join("regions.txt");
            std::fs::write(&list, regions.join("\n") + "\n").unwrap();
            let mut extra: Vec<&str> = vec!["-c"];
            if batch == 1 {
                extra.extend(["-n", "70", "-i"]);
            } else if batch == 2 {
                extra.extend(["-n", "13"]);
            }
            let sam = Command::new("samtools")
                .arg("faidx")
                .arg(&file)
                .arg("-r")
                .arg(&list)
                .args(&extra)
                .output()
                .unwrap();
            let ours = Command::new(BIN)
                .arg("faidx")
                .arg(&archive)
                .arg("-r")
                .arg(&list)
                .args(&extra)
                .output()
                .unwrap();
            assert_eq!(ours.status.code(), sam.status.code(), "{}", path.display());
            assert!(
                ours.stdout == sam.stdout,
                "{} batch {batch}: stdout",
                path.display()
            );
            assert_eq!(
                text(&ours.stderr),
                text(&sam.stderr),
                "{} batch {batch}",
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
        done += 1;
    }
    assert!(done > 0, "no corpus file under {}", root.display());
    eprintln!("{done} files, {total} regions compared with samtools faidx -r");
}

#[test]
// field by field: `Options` is to be `#[non_exhaustive]` (no struct literal outside the crate)
#[allow(clippy::field_reassign_with_default)]
fn block_cache_reads_as_the_reader() {
    let data: Vec<u8> = (0..300_000u32)
        .map(|i| b"ACGTNacgt\n"[(i.wrapping_mul(2_654_435_761) >> 28) as usize % 10])
        .collect();
    for window in [None, Some(64 << 10)] {
        let mut opts = Options::default();
        opts.block_size = 4096;
        opts.window = window;
        let a = aceapex::compress(&data, &opts).unwrap();
        let r = Reader::new(&a).unwrap();
        // a budget of two blocks: reads evict and decode again
        let mut cache = aceapex::BlockCache::new(&r, 8192);
        let mut rng = Rng(window.unwrap_or(0) as u64 + 1);
        for _ in 0..300 {
            let off = rng.below(data.len() as u64 + 100);
            let len = rng.below(20_000) as usize;
            let mut got = vec![0u8; len];
            let n = cache.read_at(off, &mut got).unwrap();
            let want = &data[(off as usize).min(data.len())..][..n];
            assert_eq!(n, len.min(data.len().saturating_sub(off as usize)));
            assert!(&got[..n] == want, "offset {off} length {len}");
        }
    }
    // a damaged block is an error through the cache, not bytes
    let plain = aceapex::compress(&data, &Options::default()).unwrap();
    let mut bad = plain.clone();
    let at = bad.len() - 100;
    bad[at] ^= 0x10;
    let r = Reader::new(&bad).unwrap();
    let mut cache = aceapex::BlockCache::new(&r, 1 << 20);
    let mut buf = vec![0u8; data.len()];
    let e = cache.read_at(0, &mut buf).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidData);
}

/// A full disk on standard output is an error that says where (as `info`'s is), for regions
/// and for `--fai`; exit status 1.
#[test]
fn a_full_standard_output_is_named() {
    if !Path::new("/dev/full").exists() {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let fa = t.path().join("g.fa");
    let mut data = b">chr1\n".to_vec();
    for i in 0..3000 {
        data.extend((0..60).map(|k| b"ACGT"[(i * 7 + k * k) % 4]));
        data.push(b'\n');
    }
    std::fs::write(&fa, &data).unwrap();
    let archive = compress_cli(t.path(), &fa);
    for args in [vec!["chr1"], vec!["--fai"]] {
        let o = Command::new(BIN)
            .arg("faidx")
            .arg(&archive)
            .args(&args)
            .stdout(std::fs::File::create("/dev/full").unwrap())
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let e = text(&o.stderr);
        assert!(e.contains("writing to standard output: "), "{args:?}: {e}");
    }
}
