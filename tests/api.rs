//! The top-level API: `compress`, `decompress`, `Reader` and the one `Error` type, as a
//! library user calls them (no internal module).

use aceapex::{DecodeError, Error, FormatError, Options, Reader};

/// Three blocks and a bit at the default 16 KiB: a DNA-like alphabet with repeats.
fn sample() -> Vec<u8> {
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut v: Vec<u8> = (0..40_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            b"ACGT"[(x >> 60) as usize & 3]
        })
        .collect();
    v.extend_from_within(1_000..9_000);
    v
}

#[test]
fn round_trip_and_regions() {
    let data = sample();
    let archive = aceapex::compress(&data, &Options::default()).unwrap();
    assert!(archive.len() < data.len() / 3, "{} bytes", archive.len());
    assert!(aceapex::decompress(&archive).unwrap() == data);

    let reader = Reader::new(&archive).unwrap();
    assert_eq!(reader.len(), 48_000);
    assert!(!reader.is_empty());
    assert_eq!(reader.block_size(), 16_384);
    assert_eq!(reader.block_count(), 3);
    // within a block, across a block boundary, the last byte, the whole data, nothing
    for (offset, len) in [
        (5, 100),
        (16_000, 1_000),
        (47_999, 1),
        (0, 48_000),
        (48_000, 0),
    ] {
        let mut buf = vec![0xAAu8; len];
        reader.read_range(offset as u64, &mut buf).unwrap();
        assert!(buf == data[offset..offset + len], "{offset}+{len}");
    }
    assert!(reader.decompress().unwrap() == data);
}

#[test]
fn progress_adds_up_to_the_input() {
    let data = sample();
    let done = std::sync::atomic::AtomicU64::new(0);
    let with = aceapex::compress_with_progress(&data, &Options::default(), &|n| {
        done.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
    })
    .unwrap();
    assert_eq!(done.into_inner(), 48_000);
    assert!(with == aceapex::compress(&data, &Options::default()).unwrap());
}

#[test]
fn empty_input() {
    let archive = aceapex::compress(&[], &Options::default()).unwrap();
    assert_eq!(aceapex::decompress(&archive).unwrap(), Vec::<u8>::new());
    let reader = Reader::new(&archive).unwrap();
    assert!(reader.is_empty());
    reader.read_range(0, &mut []).unwrap();
}

#[test]
fn options_out_of_range() {
    let opts = Options::default().with_block_size(5_000);
    let e = aceapex::compress(b"abc", &opts).unwrap_err();
    assert!(
        matches!(e, Error::Options(aceapex::OptionsError::BlockSize(5_000))),
        "{e:?}"
    );
}

#[test]
fn not_an_archive_is_a_format_error() {
    let mut archive = aceapex::compress(&sample(), &Options::default()).unwrap();
    archive[..4].copy_from_slice(b"NOPE");
    let e = aceapex::decompress(&archive).unwrap_err();
    assert!(
        matches!(e, Error::Format(FormatError::BadMagic { got }) if got == *b"NOPE"),
        "{e:?}"
    );
    archive[..4].copy_from_slice(b"ACPX");
    let e = Reader::new(&archive[..10]).unwrap_err();
    assert!(
        matches!(e, Error::Format(FormatError::TooShort { got: 10, .. })),
        "{e:?}"
    );
}

#[test]
fn a_damaged_block_is_named() {
    let data = sample();
    let mut archive = aceapex::compress(&data, &Options::default()).unwrap();
    // the data section ends with the last block's slices
    let last = archive.len() - 1;
    archive[last] ^= 0x40;
    let e = aceapex::decompress(&archive).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Decode(DecodeError::Block {
                block: 2,
                start: 32_768,
                end: 48_000,
                ..
            })
        ),
        "{e:?}"
    );
    // a region in the intact first block still reads; one in the last does not
    let reader = Reader::new(&archive).unwrap();
    let mut buf = [0u8; 64];
    reader.read_range(100, &mut buf).unwrap();
    assert!(buf[..] == data[100..164]);
    let e = reader.read_range(40_000, &mut buf).unwrap_err();
    assert!(
        matches!(e, Error::Decode(DecodeError::Block { block: 2, .. })),
        "{e:?}"
    );
}

#[test]
fn a_region_past_the_end_is_an_error() {
    let archive = aceapex::compress(&sample(), &Options::default()).unwrap();
    let reader = Reader::new(&archive).unwrap();
    let e = reader.read_range(47_990, &mut [0u8; 11]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Decode(DecodeError::Region {
                offset: 47_990,
                length: 11,
                size: 48_000
            })
        ),
        "{e:?}"
    );
    assert!(reader.read_range(u64::MAX, &mut [0u8; 1]).is_err());
}

#[test]
fn open_maps_a_file() {
    let data = sample();
    let archive = aceapex::compress(&data, &Options::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.acx");
    std::fs::write(&path, &archive).unwrap();
    let reader = Reader::open(&path).unwrap();
    let mut buf = vec![0u8; 20_000];
    reader.read_range(10_000, &mut buf).unwrap();
    assert!(buf == data[10_000..30_000]);
    drop(reader);

    let e = Reader::open(dir.path().join("missing.acx")).unwrap_err();
    match &e {
        Error::Io { path: p, source } => {
            assert_eq!(*p, dir.path().join("missing.acx"));
            assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
        }
        e => panic!("{e:?}"),
    }
    let empty = dir.path().join("empty.acx");
    std::fs::write(&empty, b"").unwrap();
    let e = Reader::open(&empty).unwrap_err();
    assert!(
        matches!(e, Error::Format(FormatError::TooShort { got: 0, .. })),
        "{e:?}"
    );
}

/// The error's text names the cause (the source's text for the typed variants).
#[test]
fn errors_read_well() {
    let mut bad = vec![0u8; 200];
    bad[..4].copy_from_slice(b"NOPE");
    let e = aceapex::decompress(&bad).unwrap_err();
    assert!(e.to_string().starts_with("not an aceapex archive"), "{e}");
    let e = Reader::open("/nonexistent/x.acx").unwrap_err();
    assert_eq!(e.to_string(), "cannot read /nonexistent/x.acx");
    assert!(std::error::Error::source(&e).is_some());
}

/// A reader can be shared by threads (regions read in parallel) and errors can cross them.
#[test]
fn reader_and_error_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Reader<'static>>();
    send_sync::<Error>();
    let data = sample();
    let archive = aceapex::compress(&data, &Options::default()).unwrap();
    let reader = Reader::new(&archive).unwrap();
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let (reader, data) = (&reader, &data);
            s.spawn(move || {
                let mut buf = [0u8; 5_000];
                reader.read_range(t * 11_000, &mut buf).unwrap();
                let at = t as usize * 11_000;
                assert!(buf[..] == data[at..at + 5_000]);
            });
        }
    });
}
