//! `aceapex::SeekableArchive`: ranges of an archive read from a seekable source (a file), in
//! any order and of any length, equal to the original's bytes, reading only the stored bytes
//! of the blocks a range needs; damage, truncation and ranges outside the data as errors.

mod common;

use aceapex::{DecodeError, Error, FormatError, Options, SeekableArchive};
use common::{damage_block_middle, dna_with_repeats, Rng};
use std::io::{Cursor, Read, Seek, SeekFrom};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A seekable source that counts the bytes read from it.
struct Counting {
    inner: Cursor<Vec<u8>>,
    read: Arc<AtomicU64>,
}

impl Read for Counting {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

impl Seek for Counting {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        self.inner.seek(pos)
    }
}

fn ranges_of(archive: &[u8], ranges: &[(u64, u64)]) -> Result<Vec<u8>, Error> {
    let mut s = SeekableArchive::open(Cursor::new(archive.to_vec()))?;
    let mut out = Vec::new();
    let n = s.write_ranges(ranges, &mut out)?;
    assert_eq!(n, out.len() as u64);
    Ok(out)
}

fn want(data: &[u8], ranges: &[(u64, u64)]) -> Vec<u8> {
    ranges
        .iter()
        .flat_map(|&(o, l)| data[o as usize..(o + l) as usize].iter().copied())
        .collect()
}

#[test]
fn random_ranges_of_every_kind_of_archive_come_back() {
    let data = dna_with_repeats(3_500_000, 21);
    for (name, opts) in [
        ("default", Options::default()),
        ("4 KiB blocks", Options::new().with_block_size(4096)),
        (
            "cross-block window",
            Options::new()
                .with_block_size(4096)
                .with_window(Some(256 << 10)),
        ),
        ("level 1", Options::new().with_level(1)),
    ] {
        let archive = aceapex::compress(&data, &opts).unwrap();
        let size = data.len() as u64;
        let mut r = Rng(7);
        // small, block-sized, over a MiB (the batch path), the whole, empty, at the edges
        let mut ranges = vec![
            (0, 1),
            (size - 1, 1),
            (0, size),
            (size / 2, 0),
            (size - 1_500_000, 1_500_000),
            (16_384, 16_384),
            (16_383, 2),
        ];
        for _ in 0..40 {
            let len = [
                r.below(6_000),
                r.below(70_000),
                1_048_576 + r.below(200_000),
            ][r.below(3) as usize];
            let off = r.below(size - len + 1);
            ranges.push((off, len));
        }
        let got = ranges_of(&archive, &ranges).unwrap();
        assert!(got == want(&data, &ranges), "{name}: wrong bytes");
    }
}

/// A small range near the end of a large archive reads its metadata and the stored bytes of
/// its one block, not the data before it.
#[test]
fn a_small_range_reads_only_its_blocks() {
    let data = dna_with_repeats(8_000_000, 3);
    let archive = aceapex::compress(&data, &Options::default()).unwrap();
    let a = aceapex::format::Archive::parse(&archive).unwrap();
    let meta = a.data_offset() + (archive.len() as u64 - a.data_offset() - a.header().data_bytes);
    let read = Arc::new(AtomicU64::new(0));
    let source = Counting {
        inner: Cursor::new(archive.clone()),
        read: read.clone(),
    };
    let mut s = SeekableArchive::open(source).unwrap();
    assert_eq!(
        read.load(Ordering::Relaxed),
        meta,
        "open reads the metadata and the extension area"
    );
    let mut out = Vec::new();
    let off = 7_900_000;
    s.write_ranges(&[(off, 5_000)], &mut out).unwrap();
    assert!(out == data[off as usize..off as usize + 5_000]);
    let blocks = (off / 16_384) as usize..=((off + 4_999) / 16_384) as usize;
    let stored: u64 = blocks
        .map(|b| {
            let end = a
                .block_offsets()
                .get(b + 1)
                .copied()
                .unwrap_or(a.header().data_bytes);
            end - a.block_offsets()[b]
        })
        .sum();
    assert_eq!(
        read.load(Ordering::Relaxed) - meta,
        stored,
        "bytes read for the range"
    );
}

#[test]
fn a_damaged_block_is_named_and_ranges_outside_are_refused() {
    let data = dna_with_repeats(2_000_000, 5);
    let mut archive = aceapex::compress(&data, &Options::new().with_block_size(4096)).unwrap();
    damage_block_middle(&mut archive, 300);
    for range in [
        (300 * 4096 + 10, 100),
        (0, 2_000_000),
        (200 * 4096, 1_100_000),
    ] {
        match ranges_of(&archive, &[range]) {
            Err(Error::Decode(DecodeError::Block { block, .. })) => assert_eq!(block, 300),
            r => panic!("{range:?}: {:?}", r.map(|v| v.len())),
        }
    }
    // block 299 is intact
    assert!(ranges_of(&archive, &[(299 * 4096, 4096)]).unwrap() == data[299 * 4096..300 * 4096]);
    // after a failed read the archive says it must be opened again (not that a range that
    // lies inside the data lies outside it)
    let mut s = SeekableArchive::open(Cursor::new(archive.clone())).unwrap();
    assert!(s.write_ranges(&[(300 * 4096, 10)], Vec::new()).is_err());
    match s.write_ranges(&[(0, 10)], Vec::new()) {
        Err(Error::Read(e)) => assert!(e.to_string().contains("open it again"), "{e}"),
        r => panic!("after a failure: {r:?}"),
    }
    // every range is checked before anything is written
    let mut s = SeekableArchive::open(Cursor::new(archive)).unwrap();
    let mut out = Vec::new();
    let r = s.write_ranges(&[(0, 10), (1_999_990, 11)], &mut out);
    assert!(
        matches!(
            r,
            Err(Error::Decode(DecodeError::Region {
                offset: 1_999_990,
                length: 11,
                ..
            }))
        ),
        "{r:?}"
    );
    assert!(out.is_empty());
    let r = s.write_ranges(&[(u64::MAX, 2)], &mut out);
    assert!(
        matches!(r, Err(Error::Decode(DecodeError::Region { .. }))),
        "{r:?}"
    );
}

/// A source cut anywhere: an error at open (the metadata, or a size below the header's) or,
/// for a cut the open cannot see, none at all: every cut is seen at open.
#[test]
fn a_truncated_source_is_refused_at_open() {
    let data = dna_with_repeats(300_000, 9);
    let archive = aceapex::compress(&data, &Options::new().with_block_size(4096)).unwrap();
    let mut r = Rng(3);
    let mut cuts = vec![0, 4, 96, archive.len() - 1];
    cuts.extend((0..30).map(|_| r.below(archive.len() as u64) as usize));
    for cut in cuts {
        match SeekableArchive::open(Cursor::new(archive[..cut].to_vec())) {
            Err(Error::Format(_)) => {}
            Err(e) => panic!("cut at {cut}: {e}"),
            Ok(_) => panic!("cut at {cut}: opened"),
        }
    }
    assert!(matches!(
        SeekableArchive::open(Cursor::new(b"JUNK and more".to_vec())),
        Err(Error::Format(FormatError::BadMagic { .. }))
    ));
}

/// Damage in the metadata without a matching meta checksum is reported as the checksum
/// mismatch, as `aceapex::decompress` reports it (FORMAT.md §6: the checksum is checked
/// before the sections it covers are parsed), not as whichever field the damage broke.
#[test]
fn unsealed_metadata_damage_is_a_meta_checksum_mismatch() {
    let data = dna_with_repeats(60_000, 13);
    let archive = aceapex::compress(&data, &Options::new().with_block_size(4096)).unwrap();
    let data_offset = aceapex::format::Archive::parse(&archive)
        .unwrap()
        .data_offset() as usize;
    // every byte of the block table and the table section, and the extension area
    let mut positions: Vec<usize> = (96..data_offset).collect();
    positions.push(archive.len());
    for p in positions {
        let mut m = archive.clone();
        if p < m.len() {
            m[p] ^= 0x41;
        } else {
            m.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0]);
        }
        assert!(
            matches!(
                aceapex::decompress(&m),
                Err(Error::Format(FormatError::MetaChecksum))
            ),
            "byte {p}: the reference"
        );
        match SeekableArchive::open(Cursor::new(m)) {
            Err(Error::Format(FormatError::MetaChecksum)) => {}
            Err(e) => panic!("byte {p}: {e}"),
            Ok(_) => panic!("byte {p}: opened"),
        }
    }
}

/// Many small ranges in one block (sorted ranges of a BED file, say) read and decode that
/// block once, not once per range: the source is read for the block's stored bytes once.
#[test]
fn small_ranges_in_one_block_read_it_once() {
    let data = dna_with_repeats(4_300_000, 17);
    let opts = Options::new().with_block_size(4 << 20).with_level(1);
    let archive = aceapex::compress(&data, &opts).unwrap();
    let stored = {
        let a = aceapex::format::Archive::parse(&archive).unwrap();
        [
            a.block_offsets()[1],
            a.header().data_bytes - a.block_offsets()[1],
        ]
    };
    let read = Arc::new(AtomicU64::new(0));
    let source = Counting {
        inner: Cursor::new(archive),
        read: read.clone(),
    };
    let mut s = SeekableArchive::open(source).unwrap();
    let meta = read.load(Ordering::Relaxed);
    // 500 ranges in block 0, then 500 in block 1 (the last, shorter one), then block 0 again
    let mut ranges: Vec<(u64, u64)> = (0..500).map(|i| (i * 8_000 + 7, 1 + i % 50)).collect();
    ranges.extend((0..500).map(|i| (4_194_304 + i * 200, 1 + i % 9)));
    ranges.push((4_194_303, 1));
    let mut out = Vec::new();
    s.write_ranges(&ranges, &mut out).unwrap();
    assert!(out == want(&data, &ranges), "wrong bytes");
    assert_eq!(
        read.load(Ordering::Relaxed) - meta,
        2 * stored[0] + stored[1],
        "bytes read: each block's stored bytes once per run of ranges in it"
    );
}

/// A source shared with the test, which may change it after open, and that reads at most
/// `max_read` bytes a call, fails with Interrupted every third call and, past `fail_after`
/// bytes, with an error, or reports `end` as its length.
#[derive(Default)]
struct Shifty {
    data: Arc<std::sync::Mutex<Vec<u8>>>,
    pos: u64,
    max_read: usize,
    calls: usize,
    fail_after: Option<u64>,
    end: Option<u64>,
}

impl Read for Shifty {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.calls += 1;
        if self.calls.is_multiple_of(3) {
            return Err(std::io::ErrorKind::Interrupted.into());
        }
        if self.fail_after.is_some_and(|f| self.pos >= f) {
            return Err(std::io::Error::other("disk gone"));
        }
        let d = self.data.lock().unwrap();
        let p = (self.pos as usize).min(d.len());
        let n = (d.len() - p).min(buf.len()).min(self.max_read);
        buf[..n].copy_from_slice(&d[p..p + n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for Shifty {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        let len = self.data.lock().unwrap().len() as u64;
        self.pos = match to {
            SeekFrom::Start(p) => p,
            SeekFrom::End(o) => return Ok(self.end.unwrap_or(len.saturating_add_signed(o))),
            SeekFrom::Current(o) => self.pos.saturating_add_signed(o),
        };
        Ok(self.pos)
    }
}

/// Short and interrupted reads give the right bytes; a read error is [`Error::Read`]; a
/// source that reports a short length, or is truncated after open, is [`FormatError::Size`]
/// with its real length; one rewritten after open fails its block checksums; one that grew
/// still gives the right bytes.
#[test]
fn a_source_that_misbehaves_or_changes_gives_an_error_or_the_right_bytes() {
    let data = dna_with_repeats(1_500_000, 23);
    for opts in [
        Options::new().with_block_size(4096).with_level(1),
        Options::new()
            .with_block_size(4096)
            .with_window(Some(64 << 10))
            .with_level(1),
    ] {
        let archive = aceapex::compress(&data, &opts).unwrap();
        let n = archive.len() as u64;
        let ranges = [(10, 100), (1_499_000, 1_000), (100_000, 1_200_000)];
        let run = |src: Shifty, change: &dyn Fn(&mut Vec<u8>)| -> Result<Vec<u8>, Error> {
            let shared = src.data.clone();
            let mut s = SeekableArchive::open(src)?;
            change(&mut shared.lock().unwrap());
            let mut out = Vec::new();
            s.write_ranges(&ranges, &mut out)?;
            Ok(out)
        };
        let src = |max_read: usize| Shifty {
            data: Arc::new(std::sync::Mutex::new(archive.clone())),
            max_read,
            ..Default::default()
        };
        for max_read in [1, 7, usize::MAX] {
            let got = run(src(max_read), &|_| {}).unwrap();
            assert!(got == want(&data, &ranges), "reads of {max_read}");
        }
        let grown = run(src(usize::MAX), &|v| v.extend_from_slice(&[9; 100_000])).unwrap();
        assert!(grown == want(&data, &ranges), "grown");
        for fail_after in [0, 500, n / 2] {
            let r = run(
                Shifty {
                    fail_after: Some(fail_after),
                    ..src(usize::MAX)
                },
                &|_| {},
            );
            assert!(matches!(r, Err(Error::Read(_))), "{fail_after}: {r:?}");
        }
        let r = run(
            Shifty {
                end: Some(1_000),
                ..src(usize::MAX)
            },
            &|_| {},
        );
        assert!(
            matches!(r, Err(Error::Format(FormatError::Size { expected, got: 1_000 })) if expected <= n),
            "{r:?}"
        );
        for cut in [0, n / 2] {
            let r = run(src(usize::MAX), &|v| v.truncate(cut as usize));
            assert!(
                matches!(r, Err(Error::Format(FormatError::Size { expected, got })) if expected <= n && got == cut),
                "cut at {cut}: {r:?}"
            );
        }
        let r = run(src(usize::MAX), &|v| {
            let len = v.len();
            v[len / 2..].fill(0)
        });
        assert!(
            matches!(r, Err(Error::Decode(DecodeError::Block { .. }))),
            "{r:?}"
        );
    }
}

/// A ~1 MB archive declaring ~63 GB (15,000 empty entries of 4 MiB blocks): opening it
/// and asking for small, large and whole ranges costs a block, not the declared size; each
/// fails at the first block it needs, with nothing written.
#[test]
fn an_archive_declaring_gigabytes_fails_at_its_first_block() {
    let archive = common::huge_original_archive();
    let size = 15_000u64 << 22;
    for (range, block) in [
        ((0, 10), 0),
        ((size - 1, 1), 14_999),
        ((7_500 << 22, 1 << 30), 7_500),
        ((0, size), 0),
    ] {
        let mut s = SeekableArchive::open(Cursor::new(archive.clone())).unwrap();
        assert_eq!(s.len(), size);
        let mut out = Vec::new();
        match s.write_ranges(&[range], &mut out) {
            Err(Error::Decode(DecodeError::Block { block: b, .. })) => assert_eq!(b, block),
            r => panic!("{range:?}: {r:?}"),
        }
        assert!(out.is_empty(), "{range:?}");
    }
}

/// Single damage anywhere, with the meta checksum resealed over damaged metadata: the
/// whole range fails as `aceapex::decompress` fails (a format error, or the same damaged
/// block for damage in the data section) or both give the same bytes; small ranges give
/// an error or the original's bytes.
#[test]
fn damage_anywhere_fails_as_decompress_fails() {
    let data = dna_with_repeats(200_000, 29);
    let archive = aceapex::compress(&data, &Options::new().with_block_size(4096)).unwrap();
    let data_offset = aceapex::format::Archive::parse(&archive)
        .unwrap()
        .data_offset() as usize;
    let mut r = Rng(41);
    for i in 0..400 {
        let mut m = archive.clone();
        let p = [
            r.range(96, data_offset as u64 - 1),
            r.range(data_offset as u64, archive.len() as u64 - 1),
        ][i % 2] as usize;
        m[p] ^= 1 << r.below(8);
        if p < data_offset {
            common::reseal_packed(&mut m);
        }
        let reference = aceapex::decompress(&m);
        let whole = SeekableArchive::open(Cursor::new(m.clone())).and_then(|mut s| {
            let mut out = Vec::new();
            s.write_ranges(&[(0, data.len() as u64)], &mut out)?;
            Ok(out)
        });
        match (&reference, &whole) {
            (Ok(a), Ok(b)) => assert!(a == b, "byte {p}: different bytes"),
            (Err(Error::Format(_)), Err(Error::Format(_))) => {}
            (
                Err(Error::Decode(DecodeError::Block { block: a, .. })),
                Err(Error::Decode(DecodeError::Block { block: b, .. })),
            ) => assert!(p < data_offset || a == b, "byte {p}: block {a} / {b}"),
            (a, b) => panic!(
                "byte {p}: reference {a:?}, seekable {:?}",
                b.as_ref().map(|v| v.len())
            ),
        }
        if let Ok(mut s) = SeekableArchive::open(Cursor::new(m)) {
            let (off, len) = (r.below(190_000), r.below(10_000));
            let mut out = Vec::new();
            if s.write_ranges(&[(off, len)], &mut out).is_ok() {
                assert!(out == want(&data, &[(off, len)]), "byte {p}: wrong bytes");
            }
        }
    }
}
