//! Random access on the GPU (`GpuReader`, `GpuArchive::read_ranges`): ranges of every sample
//! input under every sample setting come back as the original's bytes, the output poisoned
//! first; damaged blocks are reported with the block and reason the CPU reader gives.

#[allow(unused_imports)]
use super::*;
use aceapex::gpu::seek::RangeStatus;
use aceapex::{Error, GpuDecoder, Reader};

/// `n` ranges of `data` (a mix of single bytes, ranges inside one block, ranges over block
/// edges and a few long ones), seeded.
pub(crate) fn random_ranges(len: u64, block: u64, n: usize, seed: u64) -> Vec<(u64, u64)> {
    let mut r = aceapex::gpu::tokens::Rng::new(seed);
    let mut v = vec![(0, 1), (len - 1, 1), (0, len)];
    while v.len() < n {
        let off = r.below(len);
        let max = len - off;
        let want = match r.below(4) {
            0 => 1,
            1 => 1 + r.below(block),
            2 => block / 2 + r.below(2 * block),
            _ => 1 + r.below(8 * block),
        };
        v.push((off, want.min(max)));
    }
    v
}

/// `host` holds `ranges` of `data` back to back where `found` says Ok; a range not Ok names
/// one of its own blocks (of `block_size` bytes) that the dense kernel hands to the CPU
/// (`Status::Fallback`).
fn check_ranges(
    host: &[u8],
    data: &[u8],
    ranges: &[(u64, u64)],
    found: &[RangeStatus],
    block_size: u32,
    what: &str,
) {
    assert_eq!(found.len(), ranges.len(), "{what}: a status per range");
    let bs = block_size as u64;
    let mut at = 0usize;
    for (i, (&(off, len), st)) in ranges.iter().zip(found).enumerate() {
        match *st {
            RangeStatus::Ok => assert!(
                host[at..at + len as usize] == data[off as usize..(off + len) as usize],
                "{what}: range {i} ({off}+{len}) differs"
            ),
            RangeStatus::Bad { status, block } => {
                assert_eq!(
                    status,
                    aceapex::Status::Fallback,
                    "{what}: range {i} block {block}"
                );
                let block = block as u64;
                assert!(
                    block >= off / bs && block <= (off + len - 1) / bs,
                    "{what}: range {i} ({off}+{len}) names block {block}, not one of its own"
                );
            }
        }
        at += len as usize;
    }
}

/// `ranges` of `data` read from `ga` into `out`, poisoned first, and checked
/// ([`check_ranges`]); `what` names the read in a failure.
pub(crate) fn read_checked(
    g: &Gpu,
    ga: &decoder::GpuArchive,
    out: &mut cudarc::driver::CudaSlice<u8>,
    ranges: &[(u64, u64)],
    data: &[u8],
    block_size: u32,
    what: &str,
) {
    g.fill(out, 0xA5).unwrap();
    let found = ga
        .read_ranges(g, ranges, out)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let host = g.download(out).unwrap();
    check_ranges(&host, data, ranges, &found, block_size, what);
}

/// The plan of `ranges` for resident archive `ga`.
fn plan_for(ga: &decoder::GpuArchive, ranges: &[(u64, u64)]) -> aceapex::gpu::seek::Plan {
    aceapex::gpu::seek::plan(
        ranges,
        ga.block_size(),
        ga.original_size(),
        ga.own_blocks(),
        ga.seek_chunks(),
    )
    .unwrap()
}

#[test]
#[ignore = "needs an NVIDIA GPU; run with --ignored"]
pub(crate) fn seek_reads_every_range_bit_exact_against_the_original() {
    let g = gpu();
    let dec = GpuDecoder::open().unwrap();
    for (name, data) in sample_inputs() {
        for (block_size, min_match, opts) in sample_options() {
            let packed = compress_settings(&data, &opts, &|_| {}).unwrap();
            let a = Archive::parse(&packed).unwrap();
            let ga = decoder::GpuArchive::upload(&g, &a).unwrap();
            let ranges = random_ranges(data.len() as u64, block_size as u64, 300, 11);
            let total: u64 = ranges.iter().map(|r| r.1).sum();
            let mut out = g.alloc_filled(total as usize, 0xA5).unwrap();
            // the dense kernel beside the rANS stage, waiting for each block's hand-off, and
            // after it (the whole input among the ranges: the four-CTA entry point where the
            // blocks outnumber the two-CTA one's CTAs)
            for overlap in [true, false] {
                ga.set_overlap(overlap);
                let what = format!("{name} bs {block_size} mm {min_match} overlap {overlap}");
                read_checked(&g, &ga, &mut out, &ranges, &data, block_size, &what);
            }
            ga.set_overlap(true);
            // ranges alone: the gather cuts each into as many pieces as its length gives, a
            // CTA each (the whole input among them, a direct request of every block)
            for (i, r) in ranges.iter().enumerate().take(12) {
                let what = format!("{name} bs {block_size} mm {min_match}: range {i} alone");
                read_checked(&g, &ga, &mut out, &[*r], &data, block_size, &what);
            }
            // whole blocks (a direct request: the dense kernel writes the ranges and their
            // status words): up to 400 blocks in random order, a tenth of them twice, the
            // last block last, with and without the overlap; then blocks alone
            let bs = block_size as u64;
            let n = data.len() as u64;
            let nb = n.div_ceil(bs);
            let mut r = aceapex::gpu::tokens::Rng::new(nb);
            let mut blocks: Vec<u64> = (0..nb - 1).collect();
            for i in (1..blocks.len()).rev() {
                blocks.swap(i, r.below(i as u64 + 1) as usize);
            }
            blocks.truncate(400);
            for i in 0..blocks.len() / 10 {
                let b = blocks[i * 7 % blocks.len()];
                blocks.insert(r.below(blocks.len() as u64) as usize, b);
            }
            let mut tiles: Vec<(u64, u64)> = blocks.iter().map(|&b| (b * bs, bs)).collect();
            tiles.push(((nb - 1) * bs, n - (nb - 1) * bs));
            let p = plan_for(&ga, &tiles);
            assert!(
                p.direct,
                "{name} bs {block_size}: the tiles make a direct request"
            );
            let total: u64 = tiles.iter().map(|t| t.1).sum();
            let mut tiled = g.alloc_filled(total as usize, 0xA5).unwrap();
            for overlap in [true, false] {
                ga.set_overlap(overlap);
                let what = format!("{name} bs {block_size} mm {min_match} overlap {overlap}");
                read_checked(&g, &ga, &mut tiled, &tiles, &data, block_size, &what);
            }
            ga.set_overlap(true);
            // runs of one to three whole blocks, the input's last blocks last: a direct
            // request whose ranges' statuses come from their blocks'
            // (disjoint: every fifth block starts one, in an order of their own)
            let last = nb.saturating_sub(3);
            let mut runs: Vec<(u64, u64)> = (0..last.saturating_sub(3) / 5)
                .take(100)
                .map(|j| (5 * j * bs, (1 + j % 3) * bs))
                .collect();
            for i in (1..runs.len()).rev() {
                runs.swap(i, r.below(i as u64 + 1) as usize);
            }
            runs.push((last * bs, n - last * bs));
            let p = plan_for(&ga, &runs);
            assert!(
                p.direct && (nb < 2 || !p.run_blocks.is_empty()),
                "{name} bs {block_size}: runs of blocks make a direct request"
            );
            let total: u64 = runs.iter().map(|t| t.1).sum();
            let mut run_out = g.alloc_filled(total as usize, 0xA5).unwrap();
            let what = format!("{name} bs {block_size} mm {min_match} runs of blocks");
            read_checked(&g, &ga, &mut run_out, &runs, &data, block_size, &what);
            for (i, t) in tiles.iter().enumerate().take(8) {
                let what = format!("{name} bs {block_size} mm {min_match}: tile {i} alone");
                read_checked(&g, &ga, &mut tiled, &[*t], &data, block_size, &what);
            }
            // the public reader: the same ranges, the fallback ones read on the CPU
            let reader = dec.upload(&packed).unwrap();
            let got = reader.read_ranges_to_vec(&ranges[..50]).unwrap();
            let want: Vec<u8> = ranges[..50]
                .iter()
                .flat_map(|&(o, l)| data[o as usize..(o + l) as usize].iter().copied())
                .collect();
            assert!(
                got == want,
                "{name} bs {block_size} mm {min_match}: GpuReader differs"
            );
        }
    }
}

/// Damaged data sections: the GPU reader refuses the range with the block and status the CPU
/// reader names (or, for a damage the CPU finds nothing wrong with, agrees on the bytes).
/// 100 mutants per archive (`ACEAPEX_SEEK_MUTANTS` sets another count, e.g. fewer under
/// compute-sanitizer), 2,000 in all.
#[test]
#[ignore = "needs an NVIDIA GPU; run with --ignored"]
pub(crate) fn seek_reports_damaged_blocks_as_the_cpu_does() {
    let dec = GpuDecoder::open().unwrap();
    let mut r = aceapex::gpu::tokens::Rng::new(5);
    let inputs = sample_inputs();
    let mut refused = 0;
    let per: usize = std::env::var("ACEAPEX_SEEK_MUTANTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let mut tried = 0;
    for (name, data) in inputs.iter().take(4) {
        for (block_size, _, opts) in sample_options().into_iter().step_by(3) {
            let packed = compress_settings(data, &opts, &|_| {}).unwrap();
            // every block whole, in order: a direct request (the dense kernel writes the
            // ranges and their status words), which must fail or pass as the whole range does
            let bs = block_size as u64;
            let n = data.len() as u64;
            let tiles: Vec<(u64, u64)> = (0..n.div_ceil(bs))
                .map(|b| (b * bs, bs.min(n - b * bs)))
                .collect();
            for _ in 0..per {
                tried += 1;
                let mut bad = packed.clone();
                // a byte of the data section's second half (after the block table and tables)
                let at = bad.len() / 2 + r.below(bad.len() as u64 / 2 - 64) as usize;
                bad[at] ^= 1 << r.below(8);
                let Ok(cpu) = Reader::new(&bad) else { continue };
                let Ok(gpu) = dec.upload(&bad) else { continue };
                let whole = [(0u64, data.len() as u64)];
                let mut want = vec![0u8; data.len()];
                let c = cpu.read_range(0, &mut want);
                let g = gpu.read_ranges_to_vec(&whole);
                let t = gpu.read_ranges_to_vec(&tiles);
                match (c, g, t) {
                    (Ok(()), Ok(got), Ok(tiled)) => {
                        assert!(got == want, "{name}: both accept, bytes differ");
                        assert!(
                            tiled == want,
                            "{name}: both accept, the tiles' bytes differ"
                        );
                    }
                    (Err(Error::Decode(ce)), Err(Error::Decode(ge)), Err(Error::Decode(te))) => {
                        refused += 1;
                        assert_eq!(ce.to_string(), ge.to_string(), "{name}: at byte {at}");
                        assert_eq!(
                            ce.to_string(),
                            te.to_string(),
                            "{name}: tiles, at byte {at}"
                        );
                    }
                    (c, g, t) => panic!(
                        "{name}: byte {at}: CPU {c:?}, GPU {:?}, tiles {:?}",
                        g.map(|v| v.len()),
                        t.map(|v| v.len())
                    ),
                }
            }
        }
    }
    println!("{tried} mutated archives, {refused} refused on CPU and GPU alike");
    assert!(
        refused > tried / 10,
        "too few damaged archives were refused ({refused} of {tried})"
    );
}

/// Several shards of one archive on the one GPU (`shard::with_gpu_workers`: a thread and a
/// `GpuReader` per shard): random ranges across the cuts and the whole data come back as the
/// original, for 1, 2 and 3 shards cut by size and by FASTA sequence.
#[test]
#[ignore = "needs an NVIDIA GPU; run with --ignored"]
pub(crate) fn shards_on_one_gpu_read_the_original() {
    use aceapex::shard::{with_gpu_workers, ShardPlan};
    let mut r = aceapex::gpu::tokens::Rng::new(41);
    // a multi-sequence FASTA of about 2 MB
    let mut fasta = Vec::new();
    for s in 0..40 {
        fasta.extend_from_slice(format!(">seq{s}\n").as_bytes());
        let n = 20_000 + r.below(60_000) as usize;
        for i in 0..n {
            fasta.push(b"ACGT"[r.below(4) as usize]);
            if i % 60 == 59 {
                fasta.push(b'\n');
            }
        }
        fasta.push(b'\n');
    }
    let opts = aceapex::Options::default().with_target(aceapex::Target::Gpu);
    let packed = aceapex::compress(&fasta, &opts).unwrap();
    let reader = Reader::new(&packed).unwrap();
    let ranges = random_ranges(fasta.len() as u64, 16_384, 500, 42);
    let want: Vec<u8> = ranges
        .iter()
        .flat_map(|&(o, l)| fasta[o as usize..(o + l) as usize].iter().copied())
        .collect();
    for n in [1, 2, 3] {
        for plan in [
            ShardPlan::by_size(&reader, n),
            ShardPlan::by_fasta(&reader, n),
        ] {
            let (got, whole) = with_gpu_workers(&plan, &packed, |w| {
                (w.read_ranges(&ranges).unwrap(), w.decompress().unwrap())
            })
            .unwrap();
            assert!(got == want, "{n} shards: ranges differ");
            assert!(whole == fasta, "{n} shards: the whole data differs");
        }
    }
}

/// Without a GPU: the seek's rANS CTA (`seek_chunk_blocks` blocks of `halves` warps) of
/// every sample archive stays within the `.maxntid` of the entry point the upload picks (by
/// hand: 256 threads for the narrow packed and two-bit kernels, 768 for the solo one, 512
/// for the others), on GPUs of 132 and 16 SMs. The dna-like archive at 16 KiB blocks with
/// packed literals and wide slices takes the narrow packed kernel with pairs of warps:
/// chunks of 4 blocks, where 8 would launch 512 threads and the driver refuse them.
#[test]
pub(crate) fn seek_rans_ctas_fit_the_launch_bounds_of_the_sample_archives() {
    use aceapex::gpu::schedule::{rans_plan, RansEntry, RansFacts};
    use aceapex::gpu::seek::seek_chunk_blocks;
    let mut narrow_pairs = 0;
    for (name, data) in sample_inputs().into_iter().take(3) {
        for (block_size, _, opts) in sample_options() {
            let packed = compress_settings(&data, &opts, &|_| {}).unwrap();
            let a = Archive::parse(&packed).unwrap();
            let facts = RansFacts::of(&a);
            for sms in [132, 16] {
                let p = rans_plan(&facts, sms, &GpuTuning::default());
                let chunk = seek_chunk_blocks(p.entry, p.halves);
                let max_threads = match p.entry {
                    RansEntry::PackedNarrow | RansEntry::TwoBit => 256,
                    RansEntry::PackedSolo => 768,
                    _ => 512,
                };
                let threads = 32 * p.halves * chunk;
                assert!(
                    (1..=8).contains(&chunk) && threads <= max_threads,
                    "{name} bs {block_size} {sms} SMs: {:?} halves {}: {threads} threads",
                    p.entry,
                    p.halves
                );
                if p.entry == RansEntry::PackedNarrow && p.halves == 2 {
                    assert_eq!(chunk, 4, "{name} bs {block_size}");
                    narrow_pairs += 1;
                }
            }
        }
    }
    // (the case that needs chunks of fewer than 8 blocks is among the samples)
    assert!(
        narrow_pairs > 0,
        "no sample takes the narrow kernel with pairs of warps"
    );
}
