//! `aceapex::shard`: one archive read through 1, 2, 3 and 7 CPU shards. Every answer is
//! compared with the original bytes (the golden files and a generated multi-sequence FASTA
//! whose sequence positions the generator records), at random ranges, ranges across every
//! shard edge and the whole data; the FASTA plan is checked against the generator's
//! sequence positions; a damaged block fails exactly the ranges that touch it.

use aceapex::shard::{with_workers, Serve, ShardPlan, ShardRead, ShardedReader};
use aceapex::{DecodeError, Error, Options, Reader};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// A CPU shard reader that checks what it is asked for: pieces that are not empty and lie
/// inside its shard's bytes (the routing's promise); it counts the bytes it reads.
struct Checked<'a> {
    reader: Reader<'a>,
    bytes: std::ops::Range<u64>,
    read: AtomicU64,
}

impl ShardRead for Checked<'_> {
    fn read_pieces(&self, pieces: &mut [(u64, &mut [u8])]) -> Result<(), Error> {
        for (offset, buf) in pieces.iter() {
            let end = offset + buf.len() as u64;
            assert!(!buf.is_empty(), "an empty piece at {offset}");
            assert!(
                self.bytes.start <= *offset && end <= self.bytes.end,
                "piece {offset}..{end} outside the shard's {:?}",
                self.bytes
            );
            self.read.fetch_add(buf.len() as u64, Ordering::Relaxed);
        }
        self.reader.read_pieces(pieces)
    }
}

fn golden(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The golden originals back to back (E. coli, generated DNA, Moby-Dick, CSV): 220 KiB.
fn golden_sample() -> Vec<u8> {
    let mut v = golden("ecoli_48k.fa");
    v.extend(golden("dna.fa"));
    v.extend(golden("moby_dick_64k.txt"));
    v.extend(golden("records.csv"));
    v
}

/// A small xorshift generator (the same data and ranges on every run).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

/// A FASTA file of `count` sequences of `lens` bases (a random length in it) in lines of 60, with the byte
/// range of each sequence's bases (first base to one past the last, line ends inside
/// included), as the generator wrote them.
fn fasta(
    count: usize,
    lens: std::ops::Range<u64>,
    seed: u64,
) -> (Vec<u8>, Vec<std::ops::Range<u64>>) {
    let mut rng = Rng(seed);
    let (mut out, mut seqs) = (Vec::new(), Vec::new());
    for i in 0..count {
        out.extend_from_slice(format!(">seq{i} generated sequence {i}\n").as_bytes());
        let len = lens.start + rng.below(lens.end - lens.start);
        let start = out.len() as u64;
        for j in 0..len {
            out.push(b"ACGT"[rng.below(4) as usize]);
            if j % 60 == 59 && j + 1 < len {
                out.push(b'\n');
            }
        }
        seqs.push(start..out.len() as u64);
        out.push(b'\n');
    }
    (out, seqs)
}

/// Ranges over `size` bytes: both sides of every cut in `cuts`, the whole data, empty ones,
/// then `random` random ones of up to 1, 100, 10,000 or 200,000 bytes.
fn ranges(size: u64, cuts: &[u64], random: usize, rng: &mut Rng) -> Vec<(u64, u64)> {
    let mut v = vec![(0, size), (0, 0), (size, 0), (size - 1, 1), (0, 1)];
    for &c in cuts {
        for (back, fwd) in [(1, 1), (1, 0), (0, 1), (5_000, 5_000), (1, size - c)] {
            let start = c.saturating_sub(back);
            v.push((start, (c + fwd).min(size) - start));
        }
    }
    for _ in 0..random {
        let max = [1, 100, 10_000, 200_000][rng.below(4) as usize];
        let offset = rng.below(size);
        let len = (1 + rng.below(max)).min(size - offset);
        v.push((offset, len));
    }
    v
}

/// The shards' byte ranges tile the data in order, and their blocks cover them.
fn check_tiling(plan: &ShardPlan, bs: u64) {
    let shards = plan.shards();
    assert_eq!(shards[0].bytes.start, 0);
    assert_eq!(shards.last().unwrap().bytes.end, plan.len());
    for w in shards.windows(2) {
        assert_eq!(w[0].bytes.end, w[1].bytes.start);
    }
    for s in shards {
        assert!(s.bytes.start < s.bytes.end, "{s:?}");
        assert_eq!(s.blocks.start as u64, s.bytes.start / bs, "{s:?}");
        assert_eq!(s.blocks.end as u64, s.bytes.end.div_ceil(bs), "{s:?}");
    }
}

/// Reads `data`'s archive through `plan`'s CPU shards: every range of a batch, the batches
/// of 1 and of 50 ranges, the whole data, compared with `data`.
fn read_everything(data: &[u8], archive: &[u8], plan: ShardPlan, rng: &mut Rng) {
    let n = plan.shards().len();
    let cuts: Vec<u64> = plan.shards()[1..].iter().map(|s| s.bytes.start).collect();
    let sharded = ShardedReader::new(plan, |_, s| {
        Ok(Checked {
            reader: Reader::new(archive)?,
            bytes: s.bytes.clone(),
            read: AtomicU64::new(0),
        })
    })
    .unwrap();
    let all = ranges(data.len() as u64, &cuts, 2_000, rng);
    let expected = |batch: &[(u64, u64)]| -> Vec<u8> {
        batch
            .iter()
            .flat_map(|&(o, l)| data[o as usize..(o + l) as usize].iter().copied())
            .collect()
    };
    for batch in all.chunks(50).chain(all[..60].chunks(1)) {
        let got = sharded.read_ranges(batch).unwrap();
        assert!(got == expected(batch), "{n} shards, batch {batch:?}");
        let in_turn = sharded.read_ranges_in_turn(batch).unwrap();
        assert!(in_turn == got, "{n} shards in turn, batch {batch:?}");
    }
    assert!(sharded.decompress().unwrap() == data, "{n} shards, whole");
    // every shard read its own share of the whole data
    for (k, s) in sharded.plan().shards().iter().enumerate() {
        let before = sharded.shard(k).unwrap().read.load(Ordering::Relaxed);
        sharded.decompress().unwrap();
        let after = sharded.shard(k).unwrap().read.load(Ordering::Relaxed);
        assert_eq!(
            after - before,
            s.bytes.end - s.bytes.start,
            "{n} shards, shard {k}"
        );
    }
}

#[test]
fn sharded_reads_equal_the_original_for_1_2_3_and_7_shards() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (generated, _) = fasta(400, 1..15_000, 7);
    assert!(generated.len() > 2_500_000, "{}", generated.len());
    for (data, bs) in [(golden_sample(), 4_096u64), (generated, 65_536)] {
        let options = Options::default().with_block_size(bs as u32);
        let archive = aceapex::compress(&data, &options).unwrap();
        let reader = Reader::new(&archive).unwrap();
        for n in [1, 2, 3, 7] {
            for plan in [
                ShardPlan::by_size(&reader, n),
                ShardPlan::by_fasta(&reader, n),
            ] {
                check_tiling(&plan, bs);
                read_everything(&data, &archive, plan, &mut rng);
            }
        }
    }
}

/// Size cuts: block-aligned, `n` shards within one block of an even share each.
#[test]
fn size_plans_cut_at_blocks_into_even_shards() {
    let data = golden_sample();
    let archive = aceapex::compress(&data, &Options::default().with_block_size(4_096)).unwrap();
    let reader = Reader::new(&archive).unwrap();
    let len = data.len() as u64;
    assert_eq!(reader.block_count() as u64, len.div_ceil(4_096));
    for n in [1u64, 2, 3, 7] {
        let plan = ShardPlan::by_size(&reader, n as usize);
        assert_eq!(plan.shards().len() as u64, n);
        check_tiling(&plan, 4_096);
        for s in &plan.shards()[..n as usize - 1] {
            assert_eq!(s.bytes.end % 4_096, 0, "{s:?}");
        }
        for s in plan.shards() {
            let size = s.bytes.end - s.bytes.start;
            assert!(size.abs_diff(len / n) <= 4_096, "{n}: {s:?}");
        }
    }
    // more shards than blocks: one block each
    let small = &data[..10_000];
    let archive = aceapex::compress(small, &Options::default().with_block_size(4_096)).unwrap();
    let plan = ShardPlan::by_size(&Reader::new(&archive).unwrap(), 7);
    let bytes: Vec<_> = plan.shards().iter().map(|s| s.bytes.clone()).collect();
    assert_eq!(bytes, [0..4_096, 4_096..8_192, 8_192..10_000]);
    // empty data: one empty shard that reads empty ranges
    let archive = aceapex::compress(b"", &Options::default()).unwrap();
    let plan = ShardPlan::by_size(&Reader::new(&archive).unwrap(), 3);
    assert_eq!(plan.shards().len(), 1);
    let sharded = ShardedReader::new(plan, |_, _| Reader::new(&archive)).unwrap();
    assert_eq!(sharded.read_ranges(&[(0, 0)]).unwrap(), b"");
    assert_eq!(sharded.decompress().unwrap(), b"");
}

/// FASTA cuts: at sequence starts, so every sequence (here all shorter than a quarter of a
/// shard) lies in one shard; the shards stay within half a share of even.
#[test]
fn fasta_plans_put_every_sequence_in_one_shard() {
    let (data, seqs) = fasta(300, 1..20_000, 11);
    let archive = aceapex::compress(&data, &Options::default().with_block_size(65_536)).unwrap();
    let reader = Reader::new(&archive).unwrap();
    let index = reader
        .fasta_index()
        .expect("a FASTA input carries its index");
    assert_eq!(index.len(), seqs.len());
    let len = data.len() as u64;
    for n in [2u64, 3, 7] {
        let plan = ShardPlan::by_fasta(&reader, n as usize);
        assert_eq!(plan.shards().len() as u64, n);
        check_tiling(&plan, 65_536);
        for s in &plan.shards()[1..] {
            assert!(
                seqs.iter().any(|q| q.start == s.bytes.start),
                "{n}: cut {} is no sequence start",
                s.bytes.start
            );
        }
        for q in &seqs {
            let (a, b) = (plan.owner(q.start), plan.owner(q.end - 1));
            assert_eq!(a, b, "{n}: sequence {q:?} spans shards {a} and {b}");
        }
        for s in plan.shards() {
            let size = s.bytes.end - s.bytes.start;
            assert!(size.abs_diff(len / n) <= len / (2 * n), "{n}: {s:?}");
        }
        // a size plan cuts through sequences (block boundaries fall inside them)
        let by_size = ShardPlan::by_size(&reader, n as usize);
        let split = seqs
            .iter()
            .filter(|q| by_size.owner(q.start) != by_size.owner(q.end - 1))
            .count();
        assert!(split > 0, "{n}");
    }
    // one sequence longer than every shard: the size cuts
    let (long, seqs) = fasta(1, 2_000_000..2_000_001, 3);
    assert_eq!(seqs[0].end - seqs[0].start, 2_000_000 + 33_333);
    let archive = aceapex::compress(&long, &Options::default().with_block_size(65_536)).unwrap();
    let reader = Reader::new(&archive).unwrap();
    assert!(reader.fasta_index().is_some());
    assert_eq!(
        ShardPlan::by_fasta(&reader, 3),
        ShardPlan::by_size(&reader, 3)
    );
    // text without an index: the size cuts
    let text = golden("moby_dick_64k.txt");
    let archive = aceapex::compress(&text, &Options::default().with_block_size(4_096)).unwrap();
    let reader = Reader::new(&archive).unwrap();
    assert!(reader.fasta_index().is_none());
    assert_eq!(
        ShardPlan::by_fasta(&reader, 3),
        ShardPlan::by_size(&reader, 3)
    );
}

/// A damaged block in shard `k` fails exactly the ranges that touch it, naming the block;
/// the rest read the original; a batch fails as the one-archive reader fails it.
#[test]
fn a_damaged_block_fails_exactly_the_ranges_that_touch_it() {
    let data = golden_sample();
    let bs = 4_096u64;
    let clean = aceapex::compress(&data, &Options::default().with_block_size(bs as u32)).unwrap();
    let plan = ShardPlan::by_size(&Reader::new(&clean).unwrap(), 3);
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    // a block inside shard 1, and the first block of shard 2 (at a cut)
    let inside = plan.shards()[1].blocks.start + 3;
    let edge = plan.shards()[2].blocks.start;
    for victim in [inside, edge] {
        let mut archive = clean.clone();
        let (at, len) = {
            let a = aceapex::Archive::parse(&archive).unwrap();
            let len: u32 = a.entries()[victim].stored_len.iter().sum();
            (a.data_offset() + a.block_offsets()[victim], u64::from(len))
        };
        assert!(len > 8);
        archive[(at + len / 2) as usize] ^= 0x10;
        let whole = Reader::new(&archive).unwrap();
        let sharded = ShardedReader::new(plan.clone(), |_, _| Reader::new(&archive)).unwrap();
        let damaged = victim as u64 * bs..(victim as u64 + 1) * bs;
        let cuts: Vec<u64> = plan.shards()[1..].iter().map(|s| s.bytes.start).collect();
        let all = ranges(data.len() as u64, &cuts, 2_000, &mut rng);
        let mut failed = 0;
        for &(o, l) in &all {
            let touches = l > 0 && o < damaged.end && damaged.start < o + l;
            match sharded.read_ranges(&[(o, l)]) {
                Ok(bytes) => {
                    assert!(!touches, "{o}+{l} read through block {victim}");
                    assert!(bytes == data[o as usize..(o + l) as usize], "{o}+{l}");
                }
                Err(e) => {
                    assert!(touches, "{o}+{l}: {e}");
                    assert!(
                        matches!(e, Error::Decode(DecodeError::Block { block, start, .. })
                            if block as usize == victim && start == damaged.start),
                        "{o}+{l}: {e:?}"
                    );
                    failed += 1;
                }
            }
        }
        assert!(failed > 20, "{failed}");
        // batches: the one-archive reader's error for the same batch
        for batch in all.chunks(40) {
            let mut bufs: Vec<Vec<u8>> = batch.iter().map(|r| vec![0; r.1 as usize]).collect();
            let mut pieces: Vec<(u64, &mut [u8])> = batch
                .iter()
                .zip(bufs.iter_mut())
                .map(|(r, b)| (r.0, &mut b[..]))
                .collect();
            let one = whole.read_ranges(&mut pieces).map_err(|e| e.to_string());
            let many = sharded
                .read_ranges(batch)
                .map(|_| ())
                .map_err(|e| e.to_string());
            assert_eq!(one, many, "{batch:?}");
        }
    }
}

/// A range past the end is named, and nothing is read.
#[test]
fn a_range_past_the_end_is_named() {
    let data = golden_sample();
    let archive = aceapex::compress(&data, &Options::default().with_block_size(4_096)).unwrap();
    let plan = ShardPlan::by_size(&Reader::new(&archive).unwrap(), 2);
    let sharded = ShardedReader::new(plan, |_, _| Reader::new(&archive)).unwrap();
    let size = data.len() as u64;
    let e = sharded
        .read_ranges(&[(0, 10), (size - 5, 6), (size + 1, 0)])
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::Decode(DecodeError::Region { offset, length: 6, size: s })
                if offset == size - 5 && s == size
        ),
        "{e:?}"
    );
    let e = sharded.read_ranges(&[(u64::MAX, 2)]).unwrap_err();
    assert!(
        matches!(e, Error::Decode(DecodeError::Region { .. })),
        "{e:?}"
    );
}

/// A shard reader that cannot be opened fails the construction with its error.
#[test]
fn an_open_error_is_returned() {
    let data = golden_sample();
    let archive = aceapex::compress(&data, &Options::default().with_block_size(4_096)).unwrap();
    let plan = ShardPlan::by_size(&Reader::new(&archive).unwrap(), 3);
    let e = ShardedReader::new(plan, |k, _| {
        Reader::new(if k == 2 { &archive[..10] } else { &archive })
    })
    .unwrap_err();
    assert!(matches!(e, Error::Format(_)), "{e:?}");
}

/// A shard reader that cannot leave its thread, as a GPU reader cannot (the marker makes it
/// neither `Send` nor `Sync`).
struct ThreadBound<'a> {
    reader: Reader<'a>,
    _bound: std::marker::PhantomData<*const ()>,
}

impl ShardRead for ThreadBound<'_> {
    fn read_pieces(&self, pieces: &mut [(u64, &mut [u8])]) -> Result<(), Error> {
        self.reader.read_pieces(pieces)
    }
}

/// Worker threads, each with a reader made and kept on it: the same bytes as the original,
/// the one-archive reader's errors, an open error returned before any work.
#[test]
fn workers_with_thread_bound_readers_read_the_original() {
    let data = golden_sample();
    let size = data.len() as u64;
    let clean = aceapex::compress(&data, &Options::default().with_block_size(4_096)).unwrap();
    let reader = Reader::new(&clean).unwrap();
    let mut rng = Rng(0x1234_5678_9abc_def1);
    for n in [1, 2, 3, 7] {
        let plan = ShardPlan::by_size(&reader, n);
        let cuts: Vec<u64> = plan.shards()[1..].iter().map(|s| s.bytes.start).collect();
        let all = ranges(size, &cuts, 1_000, &mut rng);
        let open = |_: usize, _: &aceapex::shard::Shard, serve: Serve<'_>| {
            serve(&ThreadBound {
                reader: Reader::new(&clean)?,
                _bound: std::marker::PhantomData,
            })
        };
        with_workers(&plan, open, |workers| {
            for batch in all.chunks(50).chain(all[..30].chunks(1)) {
                let expected: Vec<u8> = batch
                    .iter()
                    .flat_map(|&(o, l)| data[o as usize..(o + l) as usize].iter().copied())
                    .collect();
                assert!(
                    workers.read_ranges(batch).unwrap() == expected,
                    "{n}: {batch:?}"
                );
            }
            assert!(workers.decompress().unwrap() == data, "{n}");
            let e = workers.read_ranges(&[(size, 1)]).unwrap_err();
            assert!(
                matches!(e, Error::Decode(DecodeError::Region { .. })),
                "{e:?}"
            );
        })
        .unwrap();
    }
    // a damaged block: the error the one-archive reader gives
    let plan = ShardPlan::by_size(&reader, 3);
    let victim = plan.shards()[2].blocks.start + 1;
    let mut archive = clean.clone();
    {
        let a = aceapex::Archive::parse(&clean).unwrap();
        let len: u32 = a.entries()[victim].stored_len.iter().sum();
        let at = a.data_offset() + a.block_offsets()[victim] + u64::from(len) / 2;
        archive[at as usize] ^= 0x10;
    }
    let open = |_: usize, _: &aceapex::shard::Shard, serve: Serve<'_>| {
        serve(&ThreadBound {
            reader: Reader::new(&archive)?,
            _bound: std::marker::PhantomData,
        })
    };
    let bs = 4_096u64;
    with_workers(&plan, open, |workers| {
        let e = workers
            .read_ranges(&[(0, 100), (victim as u64 * bs + 10, 20_000)])
            .unwrap_err();
        assert!(
            matches!(e, Error::Decode(DecodeError::Block { block, .. }) if block as usize == victim),
            "{e:?}"
        );
        let fine = workers.read_ranges(&[(0, 100), (bs, 5_000)]).unwrap();
        assert!(fine[..100] == data[..100] && fine[100..] == data[bs as usize..bs as usize + 5_000]);
    })
    .unwrap();
    // an open that fails: its error, and the work never runs
    let ran = std::sync::atomic::AtomicBool::new(false);
    let e = with_workers(
        &plan,
        |k, _, serve| {
            let bytes = if k == 1 { &clean[..10] } else { &clean[..] };
            serve(&ThreadBound {
                reader: Reader::new(bytes)?,
                _bound: std::marker::PhantomData,
            })
        },
        |_| ran.store(true, Ordering::Relaxed),
    )
    .unwrap_err();
    assert!(matches!(e, Error::Format(_)), "{e:?}");
    assert!(!ran.load(Ordering::Relaxed));
}
