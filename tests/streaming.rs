//! The streaming decoder (`aceapex::decompress_to`): the original back from any reader in
//! batches of every size, with and without cross-block windows; output written in order and
//! only for verified blocks; damage, truncation, appended bytes and failing I/O as errors (the
//! same ones as the whole-archive `decompress` where the two can tell).

mod common;

use aceapex::decode::stream::decompress_stream;
use aceapex::{DecodeError, Error, FormatError, Options};
use common::{damage_block_middle, dna_with_repeats, put_u64, reseal_packed, Rng};
use std::io::{Read, Write};

fn small_blocks() -> Options {
    Options::new().with_block_size(4096)
}

fn cross_block() -> Options {
    Options::new()
        .with_block_size(4096)
        .with_window(Some(64 << 10))
}

/// A window larger than a batch of the tests' smallest (one decoder group, 1 MiB): blocks
/// read from batches before the previous one.
fn wide_window() -> Options {
    Options::new()
        .with_block_size(4096)
        .with_window(Some(4 << 20))
}

/// A reader that hands out at most `step` bytes per call.
struct Trickle<'a> {
    bytes: &'a [u8],
    step: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.step).min(self.bytes.len());
        buf[..n].copy_from_slice(&self.bytes[..n]);
        self.bytes = &self.bytes[n..];
        Ok(n)
    }
}

fn stream(archive: &[u8], batch: Option<usize>) -> (Result<u64, Error>, Vec<u8>) {
    let mut out = Vec::new();
    let r = decompress_stream(archive, &mut out, &|_| {}, batch);
    (r, out)
}

#[test]
fn every_size_and_batch_comes_back() {
    let sizes = [
        0, 1, 240, 241, 1_023, 1_024, 1_025, 4_096, 4_097, 70_001, 300_000, 1_500_000,
    ];
    for (o, opts) in [
        ("default", Options::default()),
        ("4K blocks", small_blocks()),
        ("cross-block window", cross_block()),
        ("window over a batch", wide_window()),
    ] {
        for &n in &sizes {
            let d = dna_with_repeats(n, n as u64 + 7);
            let archive = aceapex::compress(&d, &opts).unwrap();
            if o != "default" && o != "4K blocks" && n > 100_000 {
                let a = aceapex::format::Archive::parse(&archive).unwrap();
                assert!(a.cross_block());
                assert!(
                    a.entries()
                        .iter()
                        .enumerate()
                        .any(|(i, e)| (e.lowest_source_block as usize) + 2 < i),
                    "no match reaches two blocks back"
                );
            }
            let mut out = Vec::new();
            assert_eq!(
                aceapex::decompress_to(&archive[..], &mut out).unwrap(),
                n as u64
            );
            assert!(out == d, "{o}, {n} bytes");
            // batches of one decoder group (the smallest), and a trickling reader
            let (r, out) = stream(&archive, Some(1));
            assert_eq!(r.unwrap(), n as u64, "{o}, {n} bytes, small batches");
            assert!(out == d, "{o}, {n} bytes, small batches");
            if n <= 300_000 {
                let mut out = Vec::new();
                let slow = Trickle {
                    bytes: &archive,
                    step: 7,
                };
                decompress_stream(slow, &mut out, &|_| {}, Some(1)).unwrap();
                assert!(out == d, "{o}, {n} bytes, 7-byte reads");
            }
        }
    }
}

/// A FASTA input's archive carries an extension record (its index): it is read, checked
/// and skipped.
#[test]
fn an_archive_with_an_extension_record_comes_back() {
    let mut fasta = Vec::new();
    for i in 0..40 {
        fasta.extend_from_slice(format!(">seq{i}\n").as_bytes());
        let d = dna_with_repeats(5_000 + i * 100, i as u64);
        for line in d.chunks(60) {
            fasta.extend_from_slice(line);
            fasta.push(b'\n');
        }
    }
    let archive = aceapex::compress(&fasta, &Options::default()).unwrap();
    let a = aceapex::format::Archive::parse(&archive).unwrap();
    assert!(a.extensions().count() > 0, "no FASTA index record");
    let (r, out) = stream(&archive, None);
    assert_eq!(r.unwrap(), fasta.len() as u64);
    assert!(out == fasta);
    // appended bytes (an extension area that does not parse, and a wrong meta checksum)
    let mut longer = archive.clone();
    longer.extend_from_slice(b"xyz");
    let (r, _) = stream(&longer, None);
    assert!(
        matches!(r, Err(Error::Format(FormatError::MetaChecksum))),
        "{r:?}"
    );
    assert_eq!(
        aceapex::decompress(&longer).unwrap_err().to_string(),
        r.unwrap_err().to_string()
    );
}

/// Output is written batch by batch: the first bytes leave before the archive is read to its
/// end.
#[test]
fn output_starts_before_the_archive_is_read() {
    let d = dna_with_repeats(3_000_000, 3);
    let archive = aceapex::compress(&d, &small_blocks()).unwrap();
    let read = std::sync::atomic::AtomicUsize::new(0);
    struct Counting<'a>(&'a [u8], &'a std::sync::atomic::AtomicUsize);
    impl Read for Counting<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.0.read(buf)?;
            self.1.fetch_add(n, std::sync::atomic::Ordering::SeqCst);
            Ok(n)
        }
    }
    struct FirstWrite<'a> {
        read: &'a std::sync::atomic::AtomicUsize,
        at: Option<usize>,
        out: Vec<u8>,
    }
    impl Write for FirstWrite<'_> {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.at
                .get_or_insert(self.read.load(std::sync::atomic::Ordering::SeqCst));
            self.out.extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut w = FirstWrite {
        read: &read,
        at: None,
        out: Vec::new(),
    };
    decompress_stream(Counting(&archive, &read), &mut w, &|_| {}, Some(1)).unwrap();
    assert!(w.out == d);
    let at = w.at.unwrap();
    assert!(
        at < archive.len() / 2,
        "first write after {at} of {} archive bytes",
        archive.len()
    );
}

/// A damaged block fails the decode; only whole batches before it were written, each a
/// prefix of the original.
#[test]
fn a_damaged_block_stops_the_output_before_it() {
    for opts in [small_blocks(), cross_block(), wide_window()] {
        let d = dna_with_repeats(3_000_000, 11);
        let mut archive = aceapex::compress(&d, &opts).unwrap();
        damage_block_middle(&mut archive, 600);
        let (r, out) = stream(&archive, Some(1));
        match r {
            Err(Error::Decode(DecodeError::Block { block, .. })) => assert_eq!(block, 600),
            r => panic!("{r:?}"),
        }
        assert!(out.len() <= 600 * 4096, "{} bytes written", out.len());
        assert!(
            out == d[..out.len()],
            "written bytes are not the original's"
        );
        assert!(aceapex::decompress(&archive).is_err());
    }
}

/// The content checksum is checked after the last block: every block is valid and written,
/// and the result is still an error.
#[test]
fn a_wrong_content_checksum_fails_at_the_end() {
    let d = dna_with_repeats(200_000, 5);
    let mut archive = aceapex::compress(&d, &small_blocks()).unwrap();
    let c = u64::from_le_bytes(archive[64..72].try_into().unwrap());
    put_u64(&mut archive, 64, c ^ 1);
    reseal_packed(&mut archive);
    let (r, out) = stream(&archive, Some(1));
    assert!(
        matches!(r, Err(Error::Decode(DecodeError::ContentChecksum))),
        "{r:?}"
    );
    assert!(out == d);
    assert!(matches!(
        aceapex::decompress(&archive),
        Err(Error::Decode(DecodeError::ContentChecksum))
    ));
}

/// An archive cut anywhere is the same error as for the whole-archive parse (a stream that
/// ends before its header, or before its data section ends), never a panic.
#[test]
fn truncation_anywhere_is_the_parse_error() {
    let d = dna_with_repeats(100_000, 9);
    for opts in [small_blocks(), cross_block()] {
        let archive = aceapex::compress(&d, &opts).unwrap();
        let mut r = Rng(1);
        let mut cuts = vec![0, 1, 3, 4, 5, 95, 96, 97, archive.len() - 1];
        cuts.extend((0..40).map(|_| r.below(archive.len() as u64) as usize));
        for cut in cuts {
            let (got, _) = stream(&archive[..cut], Some(1));
            let want = aceapex::decompress(&archive[..cut]).unwrap_err();
            assert_eq!(
                got.unwrap_err().to_string(),
                want.to_string(),
                "cut at {cut}"
            );
        }
        // junk that is not an archive: its magic
        let (got, _) = stream(b"JUNK and more", None);
        assert!(matches!(
            got,
            Err(Error::Format(FormatError::BadMagic { .. }))
        ));
    }
}

/// A byte changed anywhere: the stream is refused exactly when the whole-archive decode is,
/// and what it accepts is the original.
#[test]
fn mutants_are_refused_as_the_whole_decode_refuses_them() {
    let d = dna_with_repeats(120_000, 21);
    for opts in [small_blocks(), cross_block()] {
        let archive = aceapex::compress(&d, &opts).unwrap();
        let mut r = Rng(77);
        for _ in 0..300 {
            let mut m = archive.clone();
            let at = r.below(m.len() as u64) as usize;
            m[at] ^= 1 << r.below(8);
            let (got, out) = stream(&m, Some(1));
            let whole = aceapex::decompress(&m);
            assert_eq!(got.is_ok(), whole.is_ok(), "byte {at}: {got:?} / {whole:?}");
            if got.is_ok() {
                assert!(out == d, "byte {at}");
            }
        }
    }
}

/// I/O errors come back as `Error::Read` and `Error::Write` with their kind.
#[test]
fn io_errors_are_named() {
    let d = dna_with_repeats(200_000, 2);
    let archive = aceapex::compress(&d, &small_blocks()).unwrap();
    struct Closed;
    impl Write for Closed {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    match aceapex::decompress_to(&archive[..], Closed) {
        Err(Error::Write(e)) => assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe),
        r => panic!("{r:?}"),
    }
    struct Failing<'a>(&'a [u8]);
    impl Read for Failing<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.0.is_empty() {
                return Err(std::io::Error::other("device gone"));
            }
            self.0.read(buf)
        }
    }
    let mut out = Vec::new();
    match aceapex::decompress_to(Failing(&archive[..archive.len() / 2]), &mut out) {
        Err(Error::Read(e)) => assert_eq!(e.to_string(), "device gone"),
        r => panic!("{r:?}"),
    }
}

/// `compress` of standard input beyond the in-memory limit (64 MiB): streamed a batch at a
/// time, the archive byte for byte that of the same bytes compressed as a file, and it
/// restores them.
#[test]
fn compress_of_standard_input_is_the_archive_of_the_file() {
    use std::process::{Command, Stdio};
    let bin = env!("CARGO_BIN_EXE_aceapex");
    let dir = tempfile::tempdir().unwrap();
    let original = dna_with_repeats(70 << 20, 0x5EED);
    let file = dir.path().join("in.bin");
    std::fs::write(&file, &original).unwrap();
    let opts = ["-q", "-l", "1", "--min-match", "6", "-T", "2"];
    let from_file = dir.path().join("file.acx");
    let st = Command::new(bin)
        .arg("compress")
        .args(opts)
        .arg(&file)
        .arg("-o")
        .arg(&from_file)
        .status()
        .unwrap();
    assert!(st.success());
    let from_pipe = dir.path().join("pipe.acx");
    let mut child = Command::new(bin)
        .arg("compress")
        .args(opts)
        .args(["-", "-o"])
        .arg(&from_pipe)
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // in pieces, as a pipe delivers them
    for piece in original.chunks(1 << 20) {
        stdin.write_all(piece).unwrap();
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());
    let (a, b) = (
        std::fs::read(&from_file).unwrap(),
        std::fs::read(&from_pipe).unwrap(),
    );
    assert!(a == b, "the piped archive differs from the file's");
    assert!(aceapex::decompress(&b).unwrap() == original);
    // nothing left beside the output: the spool files are anonymous
    let mut names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    assert_eq!(names, ["file.acx", "in.bin", "pipe.acx"]);
}

/// The whole decode (`aceapex::decompress`, groups of blocks in parallel) names the lowest
/// damaged block whichever thread fails first: blocks 250 and 512 of 4 KiB blocks (groups of
/// 256) damaged, independent and cross-block archives, twenty decodes each.
#[test]
fn the_whole_decode_names_the_lowest_damaged_block() {
    for opts in [small_blocks(), cross_block()] {
        let d = dna_with_repeats(3_000_000, 13);
        let mut archive = aceapex::compress(&d, &opts).unwrap();
        for b in [512, 250] {
            damage_block_middle(&mut archive, b);
        }
        for _ in 0..20 {
            match aceapex::decompress(&archive) {
                Err(Error::Decode(DecodeError::Block { block, .. })) => assert_eq!(block, 250),
                r => panic!("{:?}", r.map(|v| v.len())),
            }
        }
    }
}
