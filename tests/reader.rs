//! `Reader::read_range` and `Reader::read_ranges`: every answer compared with the original
//! bytes (the golden originals, never the decoder's own output), at every kind of range
//! (inside one block, across blocks, block-aligned, the short last block, the whole data),
//! in batches, from several threads at once, and on damaged archives.

use aceapex::{DecodeError, Error, Options, Reader};
use std::path::Path;

fn golden(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Real and FASTA-like text (E. coli, generated DNA, Moby-Dick, CSV): 220 KiB, so 14 blocks
/// of 16 KiB (the last one short) or 55 of 4 KiB.
fn sample() -> Vec<u8> {
    let mut v = golden("ecoli_48k.fa");
    v.extend(golden("dna.fa"));
    v.extend(golden("moby_dick_64k.txt"));
    v.extend(golden("records.csv"));
    v.truncate(220 << 10 | 123);
    v
}

/// A small xorshift generator (the same ranges on every run).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

/// Ranges of every kind over `size` bytes in blocks of `bs`, then random ones.
fn ranges(size: u64, bs: u64, rng: &mut Rng) -> Vec<(u64, usize)> {
    let mut v = vec![
        (0, 1),
        (0, bs as usize),
        (bs, bs as usize),
        (bs - 1, 2),
        (bs + 7, 5_000),
        (bs - 3, bs as usize + 6),
        (3 * bs, 2 * bs as usize + 1),
        (size - 1, 1),
        (size - 5_000, 5_000),
        (size / bs * bs, (size % bs) as usize),
        (0, size as usize),
        (size, 0),
        (17, 0),
    ];
    for _ in 0..300 {
        let len = [1, 100, 5_000, 16_384, 40_000][rng.below(5) as usize].min(size);
        v.push((rng.below(size - len + 1), len as usize));
    }
    v
}

fn check_reader(reader: &Reader<'_>, data: &[u8], rng: &mut Rng) {
    assert_eq!(reader.len(), data.len() as u64);
    let bs = u64::from(reader.block_size());
    let rs = ranges(data.len() as u64, bs, rng);
    for &(offset, len) in &rs {
        let mut buf = vec![0xA5u8; len];
        reader.read_range(offset, &mut buf).unwrap();
        let o = offset as usize;
        assert!(
            buf == data[o..o + len],
            "range {offset}+{len}, blocks of {bs}"
        );
    }
    // the same ranges as batches of several sizes, in the given (unsorted) order
    for batch in [1, 3, 16, rs.len()] {
        for chunk in rs.chunks(batch) {
            let mut bufs: Vec<Vec<u8>> = chunk.iter().map(|&(_, len)| vec![0x5Au8; len]).collect();
            let mut req: Vec<(u64, &mut [u8])> = chunk
                .iter()
                .zip(bufs.iter_mut())
                .map(|(&(o, _), b)| (o, &mut b[..]))
                .collect();
            reader.read_ranges(&mut req).unwrap();
            for (&(offset, len), buf) in chunk.iter().zip(&bufs) {
                let o = offset as usize;
                assert!(*buf == data[o..o + len], "batch {batch}: {offset}+{len}");
            }
        }
    }
}

#[test]
fn ranges_match_the_original_at_16k_and_4k_blocks() {
    let data = sample();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for bs in [16_384, 4_096] {
        let archive = aceapex::compress(&data, &Options::default().with_block_size(bs)).unwrap();
        let reader = Reader::new(&archive).unwrap();
        assert_eq!(reader.block_size(), bs);
        check_reader(&reader, &data, &mut rng);
    }
}

/// Archives whose window crosses blocks (FORMAT.md §3.3) read the blocks a range copies from.
#[test]
fn ranges_match_the_original_with_cross_block_windows() {
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    for name in ["dna.fa", "moby_dick_64k.txt", "records.csv"] {
        let data = golden(name);
        let archive = golden(&format!("{name}.w64k-b4k.acx"));
        let reader = Reader::new(&archive).unwrap();
        check_reader(&reader, &data, &mut rng);
    }
    let data = sample();
    let opts = Options::default()
        .with_block_size(4_096)
        .with_window(Some(100_000));
    let archive = aceapex::compress(&data, &opts).unwrap();
    check_reader(&Reader::new(&archive).unwrap(), &data, &mut rng);
}

#[test]
fn ranges_past_the_end_are_refused_before_any_decoding() {
    let data = sample();
    let archive = aceapex::compress(&data, &Options::default()).unwrap();
    let reader = Reader::new(&archive).unwrap();
    let size = data.len() as u64;
    for (offset, len) in [
        (size, 1),
        (size - 1, 2),
        (size + 1, 0),
        (u64::MAX, 2),
        (0, size as usize + 1),
    ] {
        let mut buf = vec![0u8; len];
        match reader.read_range(offset, &mut buf) {
            Err(Error::Decode(DecodeError::Region {
                offset: o,
                length: l,
                size: s,
            })) => {
                assert_eq!((o, l, s), (offset, len as u64, size))
            }
            other => panic!("{offset}+{len}: {other:?}"),
        }
    }
    // in a batch, the first bad range is named and no buffer is written
    let (mut a, mut b, mut c) = ([7u8; 10], [7u8; 10], [7u8; 10]);
    let e = reader
        .read_ranges(&mut [
            (0, &mut a[..]),
            (size - 5, &mut b[..]),
            (u64::MAX, &mut c[..]),
        ])
        .unwrap_err();
    assert!(
        matches!(e, Error::Decode(DecodeError::Region { offset, length: 10, .. }) if offset == size - 5),
        "{e:?}"
    );
    assert_eq!((a, b, c), ([7; 10], [7; 10], [7; 10]));
}

/// A damaged block fails the reads that need it, naming it; the other blocks still read.
#[test]
fn a_damaged_block_is_named_and_the_others_read() {
    let data = sample();
    let mut archive = aceapex::compress(&data, &Options::default().with_block_size(4_096)).unwrap();
    let (data_start, victim_start, victim_len) = {
        let a = aceapex::Archive::parse(&archive).unwrap();
        let b = 20;
        let off = a.data_offset() + a.block_offsets()[b];
        let len: u32 = a.entries()[b].stored_len.iter().sum();
        (a.data_offset(), off, len)
    };
    assert!(victim_start > data_start && victim_len > 8);
    // a flipped bit in the middle of block 20's slices
    archive[(victim_start + u64::from(victim_len) / 2) as usize] ^= 0x10;
    let reader = Reader::new(&archive).unwrap();
    let bs = 4_096u64;
    let mut buf = vec![0u8; 5_000];
    let e = reader.read_range(20 * bs + 100, &mut buf).unwrap_err();
    assert!(
        matches!(e, Error::Decode(DecodeError::Block { block: 20, .. })),
        "{e:?}"
    );
    let e = reader
        .read_range(19 * bs, &mut vec![0u8; 3 * bs as usize])
        .unwrap_err();
    assert!(
        matches!(e, Error::Decode(DecodeError::Block { block: 20, .. })),
        "{e:?}"
    );
    // blocks 19 and 21, next to it, whole
    let mut next = vec![0u8; 2 * bs as usize];
    for offset in [18 * bs, 21 * bs] {
        reader.read_range(offset, &mut next).unwrap();
        assert!(next == data[offset as usize..(offset + 2 * bs) as usize]);
    }
    for offset in [0, 14 * bs, 21 * bs, 30 * bs + 5] {
        reader.read_range(offset, &mut buf).unwrap();
        assert!(
            buf == data[offset as usize..offset as usize + 5_000],
            "{offset}"
        );
    }
    // a batch: the damaged block fails it whatever the ranges' order
    let (mut x, mut y) = (vec![0u8; 100], vec![0u8; 100]);
    let e = reader
        .read_ranges(&mut [(40 * bs, &mut x[..]), (20 * bs, &mut y[..])])
        .unwrap_err();
    assert!(
        matches!(e, Error::Decode(DecodeError::Block { block: 20, .. })),
        "{e:?}"
    );
}

#[test]
fn readers_are_shared_between_threads() {
    fn sync<T: Sync + Send>(_: &T) {}
    let data = sample();
    let archive = aceapex::compress(&data, &Options::default().with_block_size(4_096)).unwrap();
    let reader = Reader::new(&archive).unwrap();
    sync(&reader);
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let (reader, data) = (&reader, &data);
            s.spawn(move || {
                let mut rng = Rng(0x1234_5678 + t);
                let size = data.len() as u64;
                for i in 0..400 {
                    let len = 1 + rng.below(20_000).min(size - 1);
                    let offset = rng.below(size - len + 1);
                    let mut buf = vec![0u8; len as usize];
                    if i % 2 == 0 {
                        reader.read_range(offset, &mut buf).unwrap();
                    } else {
                        reader.read_ranges(&mut [(offset, &mut buf[..])]).unwrap();
                    }
                    let o = offset as usize;
                    assert!(
                        buf == data[o..o + len as usize],
                        "thread {t}: {offset}+{len}"
                    );
                }
            });
        }
    });
}

/// A file opened (memory-mapped) reads as the bytes it was made from.
#[test]
fn an_opened_file_reads_its_ranges() {
    let data = sample();
    let archive = aceapex::compress(&data, &Options::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sample.acx");
    std::fs::write(&path, &archive).unwrap();
    let reader = Reader::open(&path).unwrap();
    let mut rng = Rng(0xFEED_FACE_CAFE_BEEF);
    check_reader(&reader, &data, &mut rng);
}

/// Counts the heap allocations of the calling thread (the test threads run side by side).
struct Counting;

thread_local! {
    static ALLOCATIONS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

// SAFETY: every call is passed on to the system allocator unchanged; the count is a
// thread-local `Cell` of a `const` initialiser, which never allocates.
unsafe impl std::alloc::GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        // SAFETY: the caller's layout, passed on.
        unsafe { std::alloc::System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: `ptr` came from `alloc` above, i.e. from the system allocator.
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// Once a thread has read from an archive, reads allocate nothing: tables, stream buffers,
/// partly read blocks and a batch's bookkeeping are all kept from earlier reads.
#[test]
fn reads_allocate_nothing() {
    let data = sample();
    for bs in [16_384u32, 4_096] {
        let archive = aceapex::compress(&data, &Options::default().with_block_size(bs)).unwrap();
        let reader = Reader::new(&archive).unwrap();
        let mut buf = vec![0u8; 5 * bs as usize];
        let mut rng = Rng(0xA076_1D64_78BD_642F);
        let mut requests = Vec::new();
        for _ in 0..200 {
            let len = 1 + rng.below(4 * u64::from(bs) + 1) as usize;
            requests.push((rng.below(data.len() as u64 - len as u64 + 1), len));
        }
        // the first pass expands the tables and sizes the buffers
        for &(o, len) in &requests {
            reader.read_range(o, &mut buf[..len]).unwrap();
        }
        let before = ALLOCATIONS.with(|c| c.get());
        for &(o, len) in &requests {
            reader.read_range(o, &mut buf[..len]).unwrap();
        }
        let after = ALLOCATIONS.with(|c| c.get());
        assert_eq!(
            after - before,
            0,
            "allocations in 200 reads, blocks of {bs}"
        );
        for &(o, len) in &requests {
            reader.read_range(o, &mut buf[..len]).unwrap();
            assert!(buf[..len] == data[o as usize..o as usize + len]);
        }
    }
}
