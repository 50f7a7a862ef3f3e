//! Damaged and hand-made input, self-contained blocks, the wavefront decoder's depth, the
//! dense pipe's hand-off stalls and wide slices: every decoder fails closed, with the CPU
//! decoder's status where it has one.

#[allow(unused_imports)]
use super::*;

#[path = "../first_rule/mod.rs"]
mod first_rule;

#[test]
#[ignore = "needs an NVIDIA GPU; run with --ignored"]
pub(crate) fn gpu_decoders_fail_closed_on_corrupt_data() {
    let g = gpu();
    let data: Vec<u8> = (0..200_000u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 27) as u8 ^ (i % 7) as u8)
        .collect();
    // every stream in rANS (the default), and raw match streams, whose blocks the dense
    // kernel parses from the archive's bytes before the rANS stage hands them over
    // (`device/src/dense/`, `early_match_streams`): a flip there reaches the parse first
    for opts in [
        Settings::default(),
        Settings {
            raw_match_streams: true,
            ..Default::default()
        },
    ] {
        let packed = compress_settings(&data, &opts, &|_| {}).unwrap();
        let data_start = Archive::parse(&packed).unwrap().data_offset() as usize;
        let mut r = aceapex::gpu::tokens::Rng::new(99);
        let mut failed = 0;
        for _ in 0..40 {
            let mut bad = packed.clone();
            let i = data_start + r.below((packed.len() - data_start) as u64) as usize;
            bad[i] ^= 1 << r.below(8);
            let a = Archive::parse(&bad).unwrap();
            failed += failures_of_flip(
                &g,
                &a,
                &data,
                &[
                    decoder::Decoder::Dense,
                    decoder::Decoder::Lane,
                    decoder::Decoder::Wavefront,
                    decoder::Decoder::DenseStages(STAGES_ALL | STAGE_SEQ_PARSE),
                ],
                i,
            );
        }
        // (a flip the decoders all catch is the usual case: the test must see some)
        assert!(failed > 0, "{opts:?}: no flip was caught");
    }
}

/// Decodes the damaged archive `a` (a flip at byte `at` of `data`'s archive) with each of
/// `decoders`: one that reports success must give `data`; returns how many failed.
pub(crate) fn failures_of_flip(
    g: &Gpu,
    a: &Archive<'_>,
    data: &[u8],
    decoders: &[decoder::Decoder],
    at: usize,
) -> usize {
    let mut failed = 0;
    for &d in decoders {
        match decoder::decompress_with(g, a, d) {
            Ok(out) => assert!(
                out == data,
                "flip at {at}: {d:?} reported success with wrong bytes"
            ),
            Err(_) => failed += 1,
        }
    }
    failed
}

/// Bit flips inside two-bit literal slices (FORMAT.md §5.7: the head, the exception values
/// and varints, the codes) fail closed on every GPU decoder: an error, or the original bytes.
/// Most flips are caught; a flip in a code under an exception changes nothing, so some decode.
#[test]
#[ignore = "needs an NVIDIA GPU; run with --ignored"]
pub(crate) fn two_bit_slices_fail_closed_on_corrupt_bytes() {
    let g = gpu();
    let samples = sample_inputs();
    let data = &samples.iter().find(|(n, _)| n == "fasta").unwrap().1[..300_000];
    for raw_match_streams in [true, false] {
        let opts = Settings {
            raw_match_streams,
            two_bit_runs: false,
            line_layout: false,
            two_bit: TwoBit::WithinLoss,
            ..Default::default()
        };
        let packed = compress_settings(data, &opts, &|_| {}).unwrap();
        let a = Archive::parse(&packed).unwrap();
        // the literal slices' ranges in the file
        let slices: Vec<(usize, usize)> = (0..a.entries().len())
            .filter(|&b| a.entries()[b].lanes[0] == LANES_TWO_BIT)
            .map(|b| {
                let at = a.data_offset() as usize + a.block_offsets()[b] as usize;
                (at, a.entries()[b].stored_len[0] as usize)
            })
            .collect();
        assert!(!slices.is_empty(), "no two-bit slice");
        let mut r = aceapex::gpu::tokens::Rng::new(5);
        let mut failed = 0;
        for t in 0..30 {
            let (at, len) = slices[r.below(slices.len() as u64) as usize];
            // the first 16 bytes (symbols, counts, values, first varints) as often as the rest
            let i = at
                + if t % 2 == 0 {
                    r.below(16.min(len) as u64) as usize
                } else {
                    r.below(len as u64) as usize
                };
            let mut bad = packed.clone();
            bad[i] ^= 1 << r.below(8);
            let a = Archive::parse(&bad).unwrap();
            failed += failures_of_flip(
                &g,
                &a,
                data,
                &[
                    // (with raw match streams the dense kernel expands the slices itself,
                    // `device/src/dense/` `expand_own_literals`; with the sequential parse the rANS
                    // stage does)
                    decoder::Decoder::Dense,
                    decoder::Decoder::DenseStages(STAGES_ALL | STAGE_SEQ_PARSE),
                    decoder::Decoder::Lane,
                    decoder::Decoder::Wavefront,
                ],
                i,
            );
            // the kernels' own verdict, block by block, without the host's checksum: the rule
            // the CPU reference names, or 0 where the CPU fails only the block's checksum
            // (a flip in a code changes a literal) or decodes it
            same_rule_as_the_cpu(&g, &a, i);
        }
        assert!(failed > 0, "raw {raw_match_streams}: no flip was caught");
    }
}

/// Decodes `ga` with the dense pipe into `out` (poisoned by the caller), its status words
/// first set to 0xDEAD so that a word nobody writes shows, and returns them.
fn dense_statuses(
    g: &Gpu,
    ga: &decoder::GpuArchive,
    out: &mut cudarc::driver::CudaSlice<u8>,
    status: &mut cudarc::driver::CudaSlice<u32>,
) -> Vec<u32> {
    g.stream()
        .memcpy_htod(&vec![0xDEAD_u32; status.len()], status)
        .unwrap();
    ga.decode_all_with(g, decoder::Decoder::Dense, out, status)
        .unwrap();
    g.stream().clone_dtoh(status).unwrap()
}

/// Decodes `a` (damaged at byte `at`) with the dense pipe into a poisoned output and status,
/// and checks each block's status word against the CPU reference decoder's verdict on that
/// block (`decode::decode_block_reference`): the same rule where it names one, 0 where it
/// decodes the block or fails only its checksum (which the GPU's host check catches).
pub(crate) fn same_rule_as_the_cpu(g: &Gpu, a: &Archive<'_>, at: usize) {
    use aceapex::device::status::Status;
    let ga = decoder::GpuArchive::upload(g, a).unwrap();
    let (mut out, mut status) = ga.output_buffers(g).unwrap();
    g.fill(&mut out, 0xA5).unwrap();
    let st = dense_statuses(g, &ga, &mut out, &mut status);
    for (b, &got) in st.iter().enumerate() {
        let r = a.block_range(b);
        let mut o = vec![0u8; (r.end - r.start) as usize];
        let want = match aceapex::decode::decode_block_reference(a, b, &mut o, r.start) {
            Ok(()) => 0,
            Err(aceapex::DecodeError::Block {
                status: Status::Checksum,
                ..
            }) => 0,
            Err(aceapex::DecodeError::Block { status, .. }) => status as u32,
            Err(e) => panic!("flip at {at}, block {b}: {e}"),
        };
        assert_eq!(got, want, "flip at {at}, block {b}: the GPU's status");
    }
}

/// The hand-made blocks of tests/first_rule/ (a broken length varint, and another rule
/// broken before the command that reads it, or none): the dense pipe (its parallel parse,
/// which turns the lengths into values before it parses, and its one-lane parse), the lane
/// kernel, the wavefront decoder and the seek each name the status FORMAT.md §4.5 gives,
/// which the CPU decoder gives too (tests/corrupt/match_layer.rs).
#[test]
#[ignore = "needs an NVIDIA GPU; run with --ignored"]
pub(crate) fn a_broken_length_varint_yields_to_the_first_rule_broken() {
    use aceapex::{DecodeError, Error};
    let g = gpu();
    let dec = aceapex::GpuDecoder::open().unwrap();
    let size = first_rule::ORIGINAL.len() as u64;
    for (what, archive, want) in first_rule::cases() {
        let a = Archive::parse(&archive).unwrap();
        for d in [
            decoder::Decoder::Dense,
            decoder::Decoder::DenseStages(STAGES_ALL | STAGE_SEQ_PARSE),
            decoder::Decoder::Lane,
            decoder::Decoder::Wavefront,
        ] {
            let ga = decoder::GpuArchive::upload(&g, &a).unwrap();
            let (mut out, mut status) = ga.output_buffers(&g).unwrap();
            let st = ga.decode_all_status(&g, d, &mut out, &mut status).unwrap();
            assert_eq!(st[0], want as u32, "{what}: {d:?}");
        }
        let reader = dec.upload(&archive).unwrap();
        match reader.read_ranges_to_vec(&[(0, size)]) {
            Err(Error::Decode(DecodeError::Block {
                block: 0, status, ..
            })) => assert_eq!(status, want, "{what}: seek"),
            other => panic!("{what}: seek: {:?}", other.map(|x| x.len())),
        }
    }
}

/// A two-bit slice whose first exception's gap is negative and whose second's brings the
/// gap back to 1 (FORMAT.md §5.7: exception 0 breaks `g >= 1`; exception 1 alone would pass
/// with the position -5): every decoder fails the block, and none stores the second
/// exception before its slot (the first block's literal slot begins the rANS stage's
/// scratch, so under compute-sanitizer such a store is an out-of-bounds write).
#[test]
#[ignore = "needs an NVIDIA GPU; run with --ignored"]
pub(crate) fn two_bit_negative_positions_fail_closed() {
    let g = gpu();
    let mut r = aceapex::gpu::tokens::Rng::new(21);
    let mut data: Vec<u8> = (0..32768).map(|_| b"ACGT"[r.below(4) as usize]).collect();
    data[3] = b'N';
    data[4] = b'N';
    let opts = Settings {
        raw_match_streams: true,
        two_bit_runs: false,
        line_layout: false,
        two_bit: TwoBit::WithinLoss,
        ..Default::default()
    };
    let mut packed = compress_settings(&data, &opts, &|_| {}).unwrap();
    let a = Archive::parse(&packed).unwrap();
    assert_eq!(a.entries()[0].lanes[0], LANES_TWO_BIT);
    let at = a.data_offset() as usize + a.block_offsets()[0] as usize;
    // x 2, u 1, the value N, then the exceptions at literals 3 (gap 4: zigzag(4) << 1 | new)
    // and 4 (gap 1: zigzag(-3) << 1)
    assert_eq!(packed[at + 4..at + 9], [2, 1, b'N', 17, 10]);
    // gap -5 (zigzag 9, new), then +6 (zigzag 12): gaps -5 and 1, positions -6 and -5
    packed[at + 7] = 9 << 1 | 1;
    packed[at + 8] = 12 << 1;
    let a = Archive::parse(&packed).unwrap();
    assert!(
        aceapex::decode::decompress(&a).is_err(),
        "the CPU decoded it"
    );
    for d in [
        decoder::Decoder::Dense,
        decoder::Decoder::Lane,
        decoder::Decoder::Wavefront,
    ] {
        let st = decoder::decompress_with(&g, &a, d);
        assert!(st.is_err(), "{d:?} decoded a slice with a negative gap");
    }
}

/// Without a GPU too: the blocks a dense decode leaves out of the rANS stage
/// (`device::own::own_slice`) are those with a two-bit literal slice and raw match
/// streams: every block of this upper-case FASTA (a line feed every 81 bytes and a rare
/// IUPAC code: ~200 exceptions a block, under `OWN_PRE_CAP`) compressed with both options,
/// none with either alone.
#[test]
pub(crate) fn self_contained_blocks_need_two_bit_literals_and_raw_match_streams() {
    let mut r = aceapex::gpu::tokens::Rng::new(8);
    let data: Vec<u8> = (0..200_000u32)
        .map(|i| match i {
            _ if i % 81 == 80 => b'\n',
            _ if r.below(20_000) == 0 => b'R',
            _ => b"ACGT"[r.below(4) as usize],
        })
        .collect();
    for (raw_match_streams, two_bit_literals) in [(true, true), (true, false), (false, true)] {
        let opts = Settings {
            raw_match_streams,
            two_bit_runs: false,
            line_layout: false,
            two_bit: if two_bit_literals {
                TwoBit::WithinLoss
            } else {
                TwoBit::Off
            },
            ..Default::default()
        };
        let packed = compress_settings(&data, &opts, &|_| {}).unwrap();
        let a = Archive::parse(&packed).unwrap();
        let n = (0..a.block_count())
            .filter(|&b| {
                let off = a.block_offsets()[b];
                aceapex::device::own::own_slice(&a.entries()[b], off, a.data().len() as u64)
                    .is_some()
            })
            .count();
        let want = if raw_match_streams && two_bit_literals {
            a.block_count()
        } else {
            0
        };
        assert_eq!(
            n, want,
            "raw {raw_match_streams} two-bit {two_bit_literals}"
        );
    }
}

/// Without a GPU too: a dense decode leaves out the lane kernel exactly where no block can be
/// handed back to it (`schedule::dense_leaves_no_fallback`): raw match streams whose blocks
/// each have at most `LENV_CAP` length varints and one tail byte (without bit 7) for each
/// offset byte with bit 7. FASTA of 80 bases a line (lines repeating) passes (its counts checked here from the
/// decoded streams); coded match streams never pass; and a block made by hand with one
/// length varint too many, a tail with bit 7, or a tail missing fails it, the same block at
/// exactly `LENV_CAP` varints passes.
#[test]
pub(crate) fn lane_kernel_left_out_only_where_no_block_falls_back() {
    use aceapex::device::dense_layout::LENV_CAP;
    let mut r = aceapex::gpu::tokens::Rng::new(12);
    // lines of 80 bases drawn from 50, so that matches reach back past 127 bytes (a distance
    // with a tail byte)
    let lines: Vec<Vec<u8>> = (0..50)
        .map(|_| (0..80).map(|_| b"ACGT"[r.below(4) as usize]).collect())
        .collect();
    let mut fasta = Vec::new();
    while fasta.len() < 400_000 {
        fasta.extend_from_slice(&lines[r.below(50) as usize]);
        fasta.push(b'\n');
    }
    let raw = Settings {
        raw_match_streams: true,
        ..Default::default()
    };
    let packed = compress_settings(&fasta, &raw, &|_| {}).unwrap();
    let a = Archive::parse(&packed).unwrap();
    for b in 0..a.block_count() {
        let mut bufs: [Vec<u8>; 5] = Default::default();
        aceapex::decode::decode_streams(&a, b, &mut bufs).unwrap();
        let lengths = bufs[1].iter().filter(|&&x| x & 0x80 == 0).count();
        let heads = bufs[2].iter().filter(|&&x| x & 0x80 != 0).count();
        assert!(lengths <= LENV_CAP, "block {b}: {lengths} length varints");
        assert!(
            heads == bufs[4].len() && bufs[4].iter().all(|&x| x & 0x80 == 0),
            "block {b}"
        );
    }
    assert!(
        schedule::dense_leaves_no_fallback(&a),
        "fasta, raw match streams"
    );
    let coded = compress_settings(&fasta, &Settings::default(), &|_| {}).unwrap();
    let coded = Archive::parse(&coded).unwrap();
    assert!(
        !schedule::dense_leaves_no_fallback(&coded),
        "coded match streams"
    );
    // block 1's lengths (stream 1) or tails (stream 4) replaced by hand
    let (heads, tails) = {
        let s = a.slices(1);
        (s[2].to_vec(), s[4].to_vec())
    };
    assert!(!tails.is_empty(), "block 1 has no offset tails");
    let mut bad_tail = tails.clone();
    bad_tail[0] |= 0x80;
    let short = tails[..tails.len() - 1].to_vec();
    for (what, k, bytes, want) in [
        ("LENV_CAP length varints", 1, vec![0u8; LENV_CAP], true),
        ("one length varint more", 1, vec![0u8; LENV_CAP + 1], false),
        ("a tail with bit 7", 4, bad_tail, false),
        ("a tail missing", 4, short, false),
    ] {
        let p = common::parts::parts(&packed);
        let mut entries = p.entries.clone();
        let mut data = Vec::new();
        for (b, entry) in entries.iter_mut().enumerate() {
            for (j, s) in a.slices(b).into_iter().enumerate() {
                if b == 1 && j == k {
                    data.extend_from_slice(&bytes);
                    entry.stored_len[j] = bytes.len() as u32;
                    entry.decoded_len[j] = bytes.len() as u32;
                } else {
                    data.extend_from_slice(s);
                }
            }
        }
        let base = a.header().match_base() as u8;
        let v = u16::from_le_bytes([packed[4], packed[5]]);
        let made = common::parts::assemble(&p, v, base, &entries, &p.tables, &data);
        let m = Archive::parse(&made).unwrap();
        assert_eq!(m.slices(1)[2], &heads[..], "{what}: the heads stay");
        assert_eq!(schedule::dense_leaves_no_fallback(&m), want, "{what}");
    }
}

/// Archives whose blocks alternate between upper-case FASTA (two-bit literals, which the
/// dense kernel decodes from the data section alone, `device::own::own_slice`) and text
/// (rANS literals, from the rANS stage), raw match streams throughout; and the same archive
/// with the text blocks' literals re-coded as two-bit slices (more exception bytes than
/// `OWN_PRE_CAP`: two-bit blocks that the rANS stage still decodes); and an archive of the
/// FASTA blocks alone (the dense kernel alone: no rANS stage, no lane kernel). The dense pipe
/// decodes each bit-exactly with the self-contained blocks left to the dense kernel and without,
/// overlapped or not, after poisoning the output and the rANS scratch (which the dense
/// kernel must not read for the self-contained blocks, and must for the others).
#[test]
#[ignore = "needs an NVIDIA GPU; run with --ignored"]
pub(crate) fn dense_pipe_decodes_mixed_self_contained_blocks() {
    let samples = sample_inputs();
    let text = &samples.iter().find(|(n, _)| n == "text-like").unwrap().1;
    let mut r = aceapex::gpu::tokens::Rng::new(31);
    // 60 blocks of 16 KiB: every third text, the others FASTA with 80 bases a line
    let mut data = Vec::new();
    let mut fasta_blocks = 0;
    for i in 0..60usize {
        if i % 3 == 2 {
            data.extend_from_slice(&text[i << 14..(i + 1) << 14]);
        } else {
            fasta_blocks += 1;
            data.extend((0..16384u32).map(|k| match k % 81 {
                80 => b'\n',
                _ => b"ACGT"[r.below(4) as usize],
            }));
        }
    }
    let opts = Settings {
        raw_match_streams: true,
        two_bit_runs: false,
        line_layout: false,
        two_bit: TwoBit::WithinLoss,
        ..Default::default()
    };
    let packed = compress_settings(&data, &opts, &|_| {}).unwrap();
    let forced = two_bit_everywhere(&packed);
    // and the FASTA blocks alone: every block self-contained, the dense kernel alone
    let fasta: Vec<u8> = (0..60usize)
        .filter(|i| i % 3 != 2)
        .flat_map(|i| data[i << 14..(i + 1) << 14].to_vec())
        .collect();
    let only = compress_settings(&fasta, &opts, &|_| {}).unwrap();
    let cases = [
        ("as written", &packed, &data, fasta_blocks, fasta_blocks),
        ("forced", &forced, &data, 60, fasta_blocks),
        ("FASTA alone", &only, &fasta, fasta_blocks, fasta_blocks),
    ];
    for &(what, packed, data, two_bit, fasta_blocks) in &cases {
        let a = Archive::parse(packed).unwrap();
        assert_eq!(
            &aceapex::decode::decompress(&a).unwrap(),
            data,
            "{what}: the CPU decoder"
        );
        let n_two_bit = a
            .entries()
            .iter()
            .filter(|e| e.lanes[0] == LANES_TWO_BIT)
            .count();
        assert_eq!(n_two_bit, two_bit, "{what}: two-bit blocks");
        // the FASTA blocks, and no text block (as two-bit slices too many exception bytes)
        let own = (0..a.block_count())
            .filter(|&b| {
                let off = a.block_offsets()[b];
                aceapex::device::own::own_slice(&a.entries()[b], off, a.data().len() as u64)
                    .is_some()
            })
            .count();
        assert_eq!(own, fasta_blocks, "{what}: self-contained blocks");
    }
    let g = gpu();
    for (what, packed, data, _, fasta_blocks) in cases {
        let a = Archive::parse(packed).unwrap();
        let ga = decoder::GpuArchive::upload(&g, &a).unwrap();
        assert_eq!(ga.self_contained_blocks() as usize, fasta_blocks, "{what}");
        // the path the decodes below take: blocks left to the dense kernel (which the
        // two-bit rANS entry point of these small archives allows), and the dense kernel
        // alone where every block is self-contained (raw match streams of FASTA: no block
        // the lane kernel would take)
        let alone = fasta_blocks == a.block_count();
        assert_eq!(ga.self_contained_path(&g), (true, alone), "{what}");
        dense_decodes_every_way(&g, &ga, &a, data, what);
    }
}

/// The dense decode of `ga` (archive `a` of `data`) with the self-contained path on and off,
/// overlapping the rANS stage and not: every status word `Ok` (status words and output
/// poisoned first) and the output `data`. `what` names the case in failures.
pub(crate) fn dense_decodes_every_way(
    g: &Gpu,
    ga: &decoder::GpuArchive,
    a: &Archive<'_>,
    data: &[u8],
    what: &str,
) {
    use aceapex::device::status::Status;
    let mut out = g.alloc_filled(data.len(), 0xA5).unwrap();
    let mut status = g.stream().alloc_zeros::<u32>(a.block_count()).unwrap();
    for (sc, overlap) in [(true, true), (false, true), (true, false), (false, false)] {
        ga.set_self_contained(sc);
        ga.set_overlap(overlap);
        ga.poison_scratch(g, 0x5A).unwrap();
        g.fill(&mut out, 0xA5).unwrap();
        let st = dense_statuses(g, ga, &mut out, &mut status);
        assert!(
            st.iter().all(|&s| s == Status::Ok as u32),
            "{what}, self-contained {sc} overlap {overlap}: statuses {:?}",
            st.iter().filter(|&&s| s != 0).take(4).collect::<Vec<_>>()
        );
        assert!(
            g.download(&out).unwrap()[..data.len()] == data[..],
            "{what}, self-contained {sc} overlap {overlap}: output differs"
        );
    }
    ga.set_self_contained(true);
    ga.set_overlap(true);
}

/// A copy of `packed` (raw match streams) with every block's literals stored as a two-bit
/// slice (`entropy::encode_two_bit`, whatever its size).
pub(crate) fn two_bit_everywhere(packed: &[u8]) -> Vec<u8> {
    let a = Archive::parse(packed).unwrap();
    let p = common::parts::parts(packed);
    let mut entries = p.entries.clone();
    let mut data = Vec::new();
    for (b, entry) in entries.iter_mut().enumerate() {
        let mut bufs: [Vec<u8>; 5] = Default::default();
        aceapex::decode::decode_streams(&a, b, &mut bufs).unwrap();
        for (k, s) in a.slices(b).into_iter().enumerate() {
            if k == 0 && entry.lanes[0] != LANES_TWO_BIT && !bufs[0].is_empty() {
                let len = aceapex::encode::entropy::encode_two_bit(&bufs[0], &mut data);
                entry.lanes[0] = LANES_TWO_BIT;
                entry.stored_len[0] = len as u32;
            } else {
                data.extend_from_slice(s);
            }
        }
    }
    let base = a.header().match_base() as u8;
    common::parts::assemble(&p, 1, base, &entries, &p.tables, &data)
}

#[test]
#[ignore = "needs an NVIDIA GPU; run with --ignored"]
pub(crate) fn dense_kernel_reports_the_same_rule_as_the_cpu_for_hand_made_bad_blocks() {
    // Dense-only statuses (no host checksum involved): raw slices built by hand.
    let g = gpu();
    use aceapex::device::status::Status;
    let data = b"hello hello hello hello, world".to_vec();
    let packed = compress_settings(&data, &Settings::default(), &|_| {}).unwrap();
    let a = Archive::parse(&packed).unwrap();
    let ga = decoder::GpuArchive::upload(&g, &a).unwrap();
    let mut out = g.alloc_filled(data.len(), 0xA5).unwrap();
    let mut status = g.stream().alloc_zeros::<u32>(1).unwrap();
    ga.decode_all_with(&g, decoder::Decoder::Dense, &mut out, &mut status)
        .unwrap();
    assert_eq!(
        g.stream().clone_dtoh(&status).unwrap()[0],
        Status::Ok as u32
    );
    assert_eq!(g.download(&out).unwrap(), data);
}

/// Cross-block archives (a window larger than the block): only the wavefront decoder takes
/// them; bit-exact against the original and the CPU decoder, and its measured dependency
/// depth equals the encoder's (block table `max_depth` + 1), two independent computations.
#[test]
#[ignore = "needs an NVIDIA GPU; run with --ignored"]
pub(crate) fn wavefront_decodes_cross_block_archives_and_measures_the_encoders_depth() {
    use aceapex::device::status::Status;
    let g = gpu();
    for (name, data) in sample_inputs() {
        let data = &data[..data.len().min(24 << 20)];
        for (block_size, window) in [
            (16384u32, None),
            (4096, Some(65536u32)),
            (16384, Some(1 << 20)),
        ] {
            let opts = Settings {
                block_size,
                window,
                ..Default::default()
            };
            let packed = compress_settings(data, &opts, &|_| {}).unwrap();
            let a = Archive::parse(&packed).unwrap();
            let what = format!("{name} bs {block_size} window {window:?}");
            if window.is_some() && data.len() > 2 * block_size as usize {
                assert!(a.cross_block(), "{what}: expected a cross-block archive");
            }
            let ga = decoder::GpuArchive::upload(&g, &a).unwrap();
            let mut out = g.alloc_filled(data.len(), 0xA5).unwrap();
            let mut status = g
                .stream()
                .alloc_zeros::<u32>(a.entries().len().max(1))
                .unwrap();
            ga.decode_all_with(&g, decoder::Decoder::Wavefront, &mut out, &mut status)
                .unwrap();
            let mut st = g.stream().clone_dtoh(&status).unwrap();
            let table = a.entries().iter().map(|e| e.max_depth).max().unwrap_or(0);
            if st.contains(&(Status::DepthHint as u32)) {
                // only an archive deeper than the first graph's waves may ask for more
                assert!(
                    table >= aceapex::gpu::wave::INITIAL_WAVES,
                    "{what}: DepthHint although the table's depth {table} fits the first graph"
                );
                assert!(
                    ga.grow_waves(&g).unwrap(),
                    "{what}: the measured depth is larger"
                );
                ga.decode_all_with(&g, decoder::Decoder::Wavefront, &mut out, &mut status)
                    .unwrap();
                st = g.stream().clone_dtoh(&status).unwrap();
            }
            decoder::check_status(&st[..a.entries().len()])
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let mut bytes = g.download(&out).unwrap();
            bytes.truncate(data.len());
            assert!(
                bytes == data,
                "{what}: wavefront output differs from the original"
            );
            let measured = ga.wavefront_levels(&g).unwrap().unwrap();
            let any_match = measured > 0;
            assert_eq!(
                measured,
                if any_match { table + 1 } else { 0 },
                "{what}: GPU-measured depth differs from the encoder's"
            );
            if a.cross_block() {
                assert!(
                    decoder::GpuArchive::upload(&g, &a)
                        .unwrap()
                        .decode_all_with(&g, decoder::Decoder::Dense, &mut out, &mut status)
                        .is_err(),
                    "{what}: the dense pipe must refuse a cross-block archive"
                );
            }
            let via_api = decoder::decompress(&g, &a).unwrap();
            assert!(
                via_api == aceapex::decode::decompress(&a).unwrap(),
                "{what}: differs from the CPU"
            );
        }
    }
}

/// A block table whose informative `max_depth` understates the real depth (FORMAT.md §3.1:
/// decoders must not rely on it): the wavefront reports `DepthHint`, and `decompress_with`
/// grows its waves to the measured depth and decodes bit-exactly.
#[test]
#[ignore = "needs an NVIDIA GPU; run with --ignored"]
pub(crate) fn wavefront_does_not_trust_the_max_depth_hint() {
    let g = gpu();
    use aceapex::device::status::Status;
    let data: Vec<u8> = (0..300_000u32)
        .map(|i| b"ACGT"[(i * i / 7 % 4) as usize] ^ (i % 5 == 0) as u8)
        .collect();
    for window in [None, Some(1u32 << 20)] {
        let opts = Settings {
            window,
            ..Default::default()
        };
        let packed = compress_settings(&data, &opts, &|_| {}).unwrap();
        let mut a = Archive::parse(&packed).unwrap();
        let real = a.entries().iter().map(|e| e.max_depth).max().unwrap();
        assert!(
            real >= 2,
            "test data must have chained matches (depth {real})"
        );
        for e in a.entries_mut() {
            e.max_depth = 0;
        }
        let ga = decoder::GpuArchive::upload(&g, &a).unwrap();
        let mut out = g.alloc_filled(data.len(), 0xA5).unwrap();
        let mut status = g.stream().alloc_zeros::<u32>(a.entries().len()).unwrap();
        ga.decode_all_with(&g, decoder::Decoder::Wavefront, &mut out, &mut status)
            .unwrap();
        let st = g.stream().clone_dtoh(&status).unwrap();
        assert!(
            st.contains(&(Status::DepthHint as u32)),
            "window {window:?}: a one-wave graph must report DepthHint"
        );
        assert!(ga.grow_waves(&g).unwrap(), "the measured depth is larger");
        ga.decode_all_with(&g, decoder::Decoder::Wavefront, &mut out, &mut status)
            .unwrap();
        let st = g.stream().clone_dtoh(&status).unwrap();
        decoder::check_status(&st).unwrap();
        let mut bytes = g.download(&out).unwrap();
        bytes.truncate(data.len());
        assert!(
            bytes == data,
            "window {window:?}: output after growing the waves"
        );
        assert_eq!(
            decoder::decompress_with(&g, &a, decoder::Decoder::Wavefront).unwrap(),
            data
        );
    }
}

/// One block of random commands in the match grammar (FORMAT.md §4) and the bytes they
/// produce, by the test's own model of the grammar: literal runs, new matches (distances
/// below 2^14), repeats of every history slot (`p_slot` in 1/256: how often a repeat takes
/// slot 1-3 rather than slot 0) and resets in mid-block. Returns (original bytes, raw
/// block).
pub(crate) fn random_command_block(
    r: &mut common::Rng,
    len: usize,
    p_slot: u64,
) -> (Vec<u8>, common::Blk) {
    let (mut out, mut lits, mut offs, mut cmds) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut hist = [1u32, 2, 4, 8];
    cmds.push(0xFF);
    while out.len() < len {
        let left = len - out.len();
        let pick = r.below(16);
        if left < 6 || out.is_empty() || pick < 5 {
            let n = (1 + r.below(12) as usize).min(left);
            cmds.push((n - 1) as u8);
            for _ in 0..n {
                let b = b"ACGT acgt\n"[r.below(10) as usize];
                lits.push(b);
                out.push(b);
            }
            continue;
        }
        let n = 6 + r.below(15).min(left as u64 - 6) as usize;
        let d = if pick < 10 {
            // a new match: distance below 2^14 and inside the output so far
            let d = 1 + r.below(out.len().min(16383) as u64) as u32;
            cmds.push(0xC0 + (n - 6) as u8);
            common::varint(d, &mut offs);
            hist = [d, hist[0], hist[1], hist[2]];
            d
        } else if pick < 15 {
            // a repeat: slot 1-3 with probability p_slot / 256, else slot 0
            let slot = if r.below(256) < p_slot {
                1 + r.below(3) as usize
            } else {
                0
            };
            if hist[slot] as usize > out.len() {
                continue;
            }
            cmds.push(0x80 | (slot as u8) << 4 | (n - 6) as u8);
            let d = hist[slot];
            for i in (0..slot).rev() {
                hist[i + 1] = hist[i];
            }
            hist[0] = d;
            d
        } else {
            cmds.push(0xFF);
            hist = [1, 2, 4, 8];
            continue;
        };
        for _ in 0..n {
            out.push(out[out.len() - d as usize]);
        }
    }
    (out, common::Blk::raw(&lits, &[], &offs, &cmds))
}

/// The dense kernel's repeat-history resolution (a map scan per 32-command step, or the
/// push-only shortcut in steps without slot 1-3 repeats) on blocks of random commands with
/// mid-block resets and every repeat slot, from all-shortcut to mostly-scan blocks: bit-exact
/// against the test's own model and the CPU decoder.
#[test]
#[ignore = "needs an NVIDIA GPU; run with --ignored"]
pub(crate) fn dense_kernel_resolves_repeat_history_like_the_grammar() {
    let mut r = common::Rng(0x5EED);
    let bs = 4096usize;
    let (mut original, mut blocks) = (Vec::new(), Vec::new());
    for i in 0..96 {
        let len = if i == 95 { 1000 } else { bs };
        let (o, b) = random_command_block(&mut r, len, [0, 0, 8, 64, 255][i % 5]);
        original.extend_from_slice(&o);
        blocks.push(b);
    }
    let packed = common::build(common::Hdr::new(0, bs as u32), &original, &blocks, None);
    let a = Archive::parse(&packed).unwrap();
    assert!(
        aceapex::decode::decompress(&a).unwrap() == original,
        "CPU decoder disagrees with the test's model of the grammar"
    );
    let g = gpu();
    for d in [
        decoder::Decoder::Dense,
        decoder::Decoder::DenseStages(STAGES_ALL | STAGE_SEQ_PARSE),
    ] {
        let out = decoder::decompress_with(&g, &a, d).unwrap_or_else(|e| panic!("{d:?}: {e}"));
        assert!(out == original, "{d:?}: output differs from the model");
    }
}

/// The dense pipe's two kernels overlapping (`device/src/handoff.rs`): the dense kernel waits
/// for each block's streams. With the rANS stage's scratch poisoned before every decode, a
/// dense CTA that read a block before its ready word would decode the poison; so every
/// decode, overlapping and not, repeated (each under a new epoch), must be bit-exact. The
/// archive has more blocks than the dense grid has CTAs, so CTAs take blocks by ticket in the
/// expected-finish order. Then a decode whose waits give up (a test hook hands the dense
/// kernel an epoch no word holds) must wait for the whole rANS grid instead: a second
/// longer, the same bytes, every status 0.
#[test]
#[ignore = "needs an NVIDIA GPU; run with --ignored"]
pub(crate) fn dense_pipe_waits_for_each_blocks_streams_and_recovers_from_a_stall() {
    let g = gpu();
    // DNA-like, with 40 KiB runs of N now and then (blocks of very different rANS chains)
    let blocks = g.sm_count() as usize * g.dense_ctas_per_sm() as usize + 200;
    let mut r = aceapex::gpu::tokens::Rng::new(23);
    let mut data = Vec::with_capacity(blocks << 14);
    while data.len() < blocks << 14 {
        if r.below(24) == 0 {
            data.extend(std::iter::repeat_n(b'N', 40 << 10));
        } else {
            data.extend((0..4096).map(|_| b"ACGT"[r.below(4) as usize]));
        }
    }
    data.truncate(blocks << 14);
    // default options (every stream in rANS), and raw match streams with wide lanes, whose
    // blocks the dense kernel parses before their hand-off where it takes one not yet handed
    // over (`device/src/dense/`, `early_match_streams`; which blocks, the timing decides). (The
    // stall hook's epoch is in no word, so its CTAs give up at the queue's epoch and wait
    // for the whole rANS grid before any block: no block is parsed early in that decode.)
    // And two-bit literals with raw match streams, whose blocks the dense kernel decodes
    // without the rANS stage (`device/src/dense/`, `self_contained`): never waited for, stall or not.
    for opts in [
        Settings::default(),
        Settings {
            raw_match_streams: true,
            wide_lanes: true,
            ..Default::default()
        },
        Settings {
            raw_match_streams: true,
            two_bit_runs: false,
            line_layout: false,
            two_bit: TwoBit::WithinLoss,
            ..Default::default()
        },
    ] {
        let packed = compress_settings(&data, &opts, &|_| {}).unwrap();
        let a = Archive::parse(&packed).unwrap();
        assert_eq!(a.block_count(), blocks, "more blocks than dense CTAs");
        decode_through_stalls(&g, &a, &data, opts.raw_match_streams);
    }
}

/// The body of [`dense_pipe_waits_for_each_blocks_streams_and_recovers_from_a_stall`] for
/// one archive of `data`; `raw_match_streams`: the archive's match streams are all raw
/// (checked in its block table).
pub(crate) fn decode_through_stalls(
    g: &Gpu,
    a: &Archive<'_>,
    data: &[u8],
    raw_match_streams: bool,
) {
    use aceapex::device::status::Status;
    let raw = a.entries().iter().all(|e| {
        e.lanes[1..]
            .iter()
            .all(|&l| l == aceapex::device::format::LANES_RAW)
    });
    assert_eq!(raw, raw_match_streams, "the match streams' slice modes");
    let blocks = a.block_count();
    let ga = decoder::GpuArchive::upload(g, a).unwrap();
    let mut out = g.alloc_filled(data.len(), 0xA5).unwrap();
    let mut status = g.stream().alloc_zeros::<u32>(blocks).unwrap();
    // one dense decode after poisoning the rANS scratch and the output; the status words
    let decode_poisoned = |out: &mut _, status: &mut _| {
        ga.poison_scratch(g, 0x5A).unwrap();
        g.fill(out, 0xA5).unwrap();
        ga.decode_all_with(g, decoder::Decoder::Dense, out, status)
            .unwrap();
        g.stream().clone_dtoh(status).unwrap()
    };
    let check = |what: &str, st: &[u32], out: &cudarc::driver::CudaSlice<u8>| {
        assert!(
            st.iter().all(|&s| s == Status::Ok as u32),
            "{what}: statuses {:?}",
            st.iter().filter(|&&s| s != 0).take(4).collect::<Vec<_>>()
        );
        assert!(
            g.download(out).unwrap()[..data.len()] == data[..],
            "{what}: output differs"
        );
    };
    for (round, overlap) in [true, true, false, true].into_iter().enumerate() {
        ga.set_overlap(overlap);
        let st = decode_poisoned(&mut out, &mut status);
        check(&format!("round {round} (overlap {overlap})"), &st, &out);
    }
    // a hand-off whose words never come: the grid wait instead, after the wait limit
    ga.stall_next_dense_decode();
    let t = std::time::Instant::now();
    let st = decode_poisoned(&mut out, &mut status);
    let waited = t.elapsed().as_nanos() as u64;
    check("given-up waits", &st, &out);
    if ga.overlaps(g) {
        assert!(
            waited >= aceapex::device::handoff::WAIT_LIMIT_NS,
            "the hook's decode should have waited out the limit ({waited} ns)"
        );
    }
}
/// A copy of `packed` (tables on every stream) with each rANS slice re-coded by the crate's
/// encoder at 33-64 lanes where the group's tables allow it (a context pair needs every symbol
/// in the table its new context picks, FORMAT.md §5.4), as a version-7 archive: wide slices
/// in every stream, several per block, context pairs and packed literals among them.
pub(crate) fn wide_everywhere(r: &mut common::Rng, packed: &[u8]) -> Vec<u8> {
    use aceapex::encode::entropy::{
        encode_context_slice, encode_slice_with, pack_literals, EncodeTable,
    };
    let a = Archive::parse(packed).unwrap();
    let p = common::parts::parts(packed);
    let gb = a.header().group_blocks as usize;
    let mut entries = p.entries.clone();
    let mut data = Vec::new();
    // `b` indexes the archive's blocks (slices, tables) as well as `entries`
    #[allow(clippy::needless_range_loop)]
    for b in 0..a.block_count() {
        let mut bufs: [Vec<u8>; 5] = Default::default();
        aceapex::decode::decode_streams(&a, b, &mut bufs).unwrap();
        for (k, s) in a.slices(b).into_iter().enumerate() {
            if entries[b].lanes[k] == 0 {
                data.extend_from_slice(s);
                continue;
            }
            let rec = a.tables()[b / gb][k].as_ref().unwrap().record();
            let syms = match &rec.alphabet {
                Some(al) => {
                    let mut v = Vec::new();
                    pack_literals(&bufs[k], al, &mut v);
                    v
                }
                None => bufs[k].clone(),
            };
            let bit = rec.ctx_bit as u32;
            let fits = |l: usize| {
                rec.tables.len() == 1
                    || (0..syms.len()).all(|i| {
                        let c = if i >= l { (syms[i - l] >> bit) & 1 } else { 0 };
                        rec.tables[c as usize].freq[syms[i] as usize] > 0
                    })
            };
            let Some(l) = [r.range(33, 64) as usize, 64, 33]
                .into_iter()
                .find(|&l| fits(l))
            else {
                data.extend_from_slice(s);
                continue;
            };
            let et: Vec<EncodeTable> = (rec.tables.iter())
                .map(|t| EncodeTable::new(t, &t.cumulative()))
                .collect();
            let mut out = Vec::new();
            if et.len() == 2 {
                encode_context_slice(&syms, l, [&et[0], &et[1]], bit, &mut out);
            } else {
                encode_slice_with(&syms, l, &et[0], &mut out);
            }
            entries[b].lanes[k] = l as u8;
            entries[b].stored_len[k] = out.len() as u32;
            data.extend_from_slice(&out);
        }
    }
    let base = a.header().match_base() as u8;
    common::parts::assemble(&p, 1, base, &entries, &p.tables, &data)
}

/// A damage of a wide slice of `lanes` lanes (FORMAT.md §5.3: `4 * lanes` bytes of states,
/// `W0`, then the `W0` words of lanes 0-31 and the words of the other lanes) and the status
/// §5.4 names for it: a `W0` past the words or a state below 65536 is `RansHeader`; an area
/// short of a word underflows (its lanes read the same words as before until the missing
/// one), an area with a word over fails the trailer, and an underflow comes before a trailer
/// failure whichever half has which. None when the slice lacks the words the damage needs.
pub(crate) fn damage_wide(
    s: &[u8],
    lanes: usize,
    how: usize,
) -> Option<(&'static str, Vec<u8>, u32)> {
    use aceapex::device::status::Status::{RansHeader, RansTrailer, RansUnderflow};
    let h = 4 * lanes + 4;
    let n0 = common::get_u32(s, 4 * lanes) as usize;
    let total = (s.len() - h) / 2;
    let n1 = total - n0;
    let set_w0 = |v: &mut Vec<u8>, w: u32| v[4 * lanes..h].copy_from_slice(&w.to_le_bytes());
    let end0 = h + 2 * n0;
    let mut v = s.to_vec();
    let (name, st) = match how {
        0 => {
            set_w0(&mut v, total as u32 + 1);
            ("W0 past the words", RansHeader)
        }
        1 => {
            set_w0(&mut v, u32::MAX);
            ("W0 u32::MAX", RansHeader)
        }
        2 => {
            // 2 * W0 wraps to 2 * n0 in 32 bits
            set_w0(&mut v, (1 << 31) + n0 as u32);
            ("W0 2^31 + n0", RansHeader)
        }
        3 => {
            v[12..16].copy_from_slice(&0x1234u32.to_le_bytes());
            ("state 3 below 65536 (first warp)", RansHeader)
        }
        4 => {
            v[4 * lanes - 4..4 * lanes].copy_from_slice(&65535u32.to_le_bytes());
            ("last state below 65536 (second warp)", RansHeader)
        }
        5 if n1 > 0 => {
            v.truncate(s.len() - 2);
            ("area 1 cut by a word", RansUnderflow)
        }
        6 if n0 > 0 => {
            v.drain(end0 - 2..end0);
            set_w0(&mut v, n0 as u32 - 1);
            ("area 0 cut by a word, W0 - 1", RansUnderflow)
        }
        7 => {
            v.extend_from_slice(&[0x5A, 0xA5]);
            ("a word over in area 1", RansTrailer)
        }
        8 => {
            v.splice(end0..end0, [0x5A, 0xA5]);
            set_w0(&mut v, n0 as u32 + 1);
            ("a word over in area 0, W0 + 1", RansTrailer)
        }
        9 if n0 > 0 => {
            v.drain(end0 - 2..end0);
            set_w0(&mut v, n0 as u32 - 1);
            v.extend_from_slice(&[0x5A, 0xA5]);
            ("both warps: area 0 short, area 1 over", RansUnderflow)
        }
        10 if n1 > 0 => {
            v.truncate(s.len() - 2);
            v.splice(end0..end0, [0x5A, 0xA5]);
            set_w0(&mut v, n0 as u32 + 1);
            ("both warps: area 0 over, area 1 short", RansUnderflow)
        }
        11 if n0 > 0 => {
            v.drain(end0 - 2..end0);
            set_w0(&mut v, n0 as u32 - 1);
            v[4 * lanes - 4..4 * lanes].copy_from_slice(&7u32.to_le_bytes());
            ("both warps: area 0 short, last state low", RansHeader)
        }
        12 => {
            v[..4].copy_from_slice(&0u32.to_le_bytes());
            v[4 * lanes - 4..4 * lanes].copy_from_slice(&1u32.to_le_bytes());
            ("both warps: states 0 and last low", RansHeader)
        }
        13 if n1 > 1 => {
            v.truncate(s.len() - 4);
            ("area 1 cut by two words", RansUnderflow)
        }
        _ => return None,
    };
    Some((name, v, st as u32))
}

/// Damaged wide slices (format version 7, FORMAT.md §5.3, §5.4: a slice of 33-64 lanes with two
/// word areas, decoded by a pair of warps in the GPU rANS stage): `W0` past the words (also
/// `2^31 + W0`, which wraps in 32 bits), states below 65536 in either warp's half, words cut
/// from or added to either area, both halves damaged at once, 64-lane slices relabelled 33-63
/// lanes, narrow slices made wide, several blocks damaged in one archive; on encoder archives
/// with raw match streams and wide lanes (packed literals, context pairs; one cross-block) and
/// a hand-made one with wide slices in every stream. Without a GPU: the damaged archives are
/// built and the CPU reference reports the status §5.4 names (fast path == reference). With
/// one: the dense pipe, the lane kernel and the wavefront decoder (only it on the cross-block
/// archive) each fail closed, never Ok, within the hand-off wait limit (a pair whose block is
/// never published would stall the dense kernel a second), every damaged block's status word
/// the CPU reference's and (independent blocks) every other block's 0; the undamaged archives
/// decode bit-exact.
#[test]
#[ignore = "needs an NVIDIA GPU; run with --ignored"]
pub(crate) fn gpu_decoders_fail_closed_on_damaged_wide_slices() {
    use aceapex::device::status::Status;
    let mut r = common::Rng(0x0DA7_A7E7);
    // soft-masked DNA, case in runs: 8 letters, two per packed symbol, so the literal slices
    // of 16 KiB blocks take 64 lanes (FORMAT.md §5.5)
    let mut dna = |n: usize| -> Vec<u8> {
        let mut lower = false;
        let mut d = Vec::with_capacity(n);
        while d.len() < n {
            if d.len() > 1000 && r.below(400) == 0 {
                let back = 1 + r.below(d.len().min(30_000) as u64) as usize;
                let from = d.len() - back;
                for i in 0..8 + r.below(200) as usize {
                    d.push(d[from + i % back]);
                }
                continue;
            }
            if r.below(200) == 0 {
                lower = !lower;
            }
            let b = b"ACGT"[r.below(4) as usize];
            d.push(if lower { b.to_ascii_lowercase() } else { b });
        }
        d.truncate(n);
        d
    };
    let wide = |block_size: u32, packed_literals: bool, window: Option<u32>| Settings {
        block_size,
        level: 6,
        packed_literals,
        window,
        raw_match_streams: true,
        wide_lanes: true,
        ..Settings::default()
    };
    let a_data = dna(600_000);
    let b_data = dna(400_000);
    let c_data = dna(500_000);
    let mut bases = vec![
        ("packed literals", a_data.clone(), {
            compress_settings(&a_data, &wide(16384, true, None), &|_| {}).unwrap()
        }),
        ("context pairs", b_data.clone(), {
            compress_settings(&b_data, &wide(16384, false, None), &|_| {}).unwrap()
        }),
        ("cross-block", c_data.clone(), {
            compress_settings(&c_data, &wide(16384, true, Some(65536)), &|_| {}).unwrap()
        }),
    ];
    // hand-made: text and soft-masked DNA with tables on every stream, re-coded wide
    let mut t = common::Rng(0x7E47);
    let text = common::attack::text(&mut t, 300_000);
    for (name, data) in [("hand-made text", text), ("hand-made DNA", dna(300_000))] {
        let src = compress_settings(&data, &Settings::default(), &|_| {}).unwrap();
        bases.push((name, data, wide_everywhere(&mut t, &src)));
    }
    // (name, archive, cross-block, damaged blocks with the status §5.4 names, if it does)
    type Case = (String, Vec<u8>, bool, Vec<(usize, Option<u32>)>);
    let mut cases: Vec<Case> = Vec::new();
    let mut wide_streams = [0usize; 5];
    for (i, (name, data, packed)) in bases.iter().enumerate() {
        let a = Archive::parse(packed).unwrap();
        assert_eq!(a.header().version, 1, "{name}");
        assert!(
            aceapex::decode::decompress(&a).unwrap() == *data,
            "{name}: CPU decode"
        );
        let cross = a.cross_block();
        assert_eq!(cross, *name == "cross-block", "{name}");
        let p = common::parts::parts(packed);
        let wide: Vec<(usize, usize)> = (0..a.block_count())
            .flat_map(|b| (0..5).map(move |k| (b, k)))
            .filter(|&(b, k)| p.entries[b].lanes[k] > 32)
            .collect();
        assert!(wide.len() >= 4, "{name}: {} wide slices", wide.len());
        for &(_, k) in &wide {
            wide_streams[k] += 1;
        }
        // the archive with slices replaced: ((block, stream), new bytes, new lanes)
        let rebuild = |changes: &[((usize, usize), Vec<u8>, u8)]| {
            let mut entries = p.entries.clone();
            let mut d = Vec::new();
            for (b, e) in entries.iter_mut().enumerate() {
                for (k, s) in a.slices(b).into_iter().enumerate() {
                    match changes.iter().find(|c| c.0 == (b, k)) {
                        Some((_, bytes, lanes)) => {
                            d.extend_from_slice(bytes);
                            e.stored_len[k] = bytes.len() as u32;
                            e.lanes[k] = *lanes;
                        }
                        None => d.extend_from_slice(s),
                    }
                }
            }
            common::parts::assemble(&p, 1, p.header[85], &entries, &p.tables, &d)
        };
        // each damage on a wide slice of its own, first block to last; the first four of
        // them (in different blocks) together in one archive too
        let mut multi = Vec::new();
        let mut multi_damaged = Vec::new();
        for how in 0..14 {
            let (b, k) = wide[how * (wide.len() - 1) / 13];
            let lanes = p.entries[b].lanes[k];
            let Some((what, bytes, st)) = damage_wide(a.slices(b)[k], lanes as usize, how) else {
                continue;
            };
            if multi.len() < 4 && !multi_damaged.iter().any(|x: &(usize, _)| x.0 == b) {
                multi.push(((b, k), bytes.clone(), lanes));
                multi_damaged.push((b, Some(st)));
            }
            let arch = rebuild(&[((b, k), bytes, lanes)]);
            let what = format!("{name}: block {b} stream {k} ({lanes} lanes): {what}");
            cases.push((what, arch, cross, vec![(b, Some(st))]));
        }
        let what = format!("{name}: {} blocks at once", multi.len());
        cases.push((what, rebuild(&multi), cross, multi_damaged));
        // wide slices read with fewer lanes, 33 or more (every count 33-63 on the first
        // archive's 64-lane slices, a few on the others): W0 is then the bytes of state `l`,
        // at least 65536, more than the slice's words (a block's slice holds fewer), a header
        // error
        let counts: Vec<u8> = if i == 0 {
            (33..=63).collect()
        } else {
            vec![33, 47, r.range(34, 62) as u8, 63]
        };
        for (j, l) in counts.into_iter().enumerate() {
            let fewer: Vec<(usize, usize)> = (wide.iter().copied())
                .filter(|&(b, k)| p.entries[b].lanes[k] > l)
                .collect();
            if fewer.is_empty() {
                continue;
            }
            let (b, k) = fewer[j * 7 % fewer.len()];
            let s = a.slices(b)[k];
            let lanes = p.entries[b].lanes[k];
            assert!(s.len() < 2 * 65536, "{name}: block {b}: {} bytes", s.len());
            let arch = rebuild(&[((b, k), s.to_vec(), l)]);
            let what = format!("{name}: block {b} stream {k}: {lanes} lanes read as {l}");
            let header = Some(Status::RansHeader as u32);
            cases.push((what, arch, cross, vec![(b, header)]));
        }
        // narrow rANS slices read as wide (the outcome left to the CPU reference)
        let narrow: Vec<(usize, usize)> = (0..a.block_count())
            .flat_map(|b| (0..5).map(move |k| (b, k)))
            .filter(|&(b, k)| (1..=32).contains(&p.entries[b].lanes[k]))
            .take(3)
            .collect();
        for (b, k) in narrow {
            let l = r.range(33, 64) as u8;
            let arch = rebuild(&[((b, k), a.slices(b)[k].to_vec(), l)]);
            let what = format!("{name}: block {b} stream {k}: narrow read as {l} lanes");
            cases.push((what, arch, cross, vec![(b, None)]));
        }
    }
    assert!(
        wide_streams.iter().filter(|&&c| c > 0).count() >= 3,
        "wide slices in too few streams: {wide_streams:?}"
    );
    // the CPU on every case: the named statuses, never Ok, fast path == reference
    let mut cpu_status = Vec::new();
    for (what, bytes, _, damaged) in &cases {
        let a = Archive::parse(bytes).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(
            aceapex::decode::decompress(&a).is_err(),
            "{what}: the CPU decoded it"
        );
        common::attack::compare_archive(bytes, what);
        let reference = common::attack::per_block(bytes, false);
        let st: Vec<u32> = (reference.iter())
            .map(|x| match x {
                Ok(_) => 0,
                Err(aceapex::DecodeError::Block { status, .. }) => *status as u32,
                Err(e) => panic!("{what}: {e:?}"),
            })
            .collect();
        for &(b, want) in damaged {
            if let Some(w) = want {
                assert_eq!(st[b], w, "{what}: the CPU's status for block {b}");
            }
            assert_ne!(st[b], 0, "{what}: block {b} decoded on the CPU");
        }
        cpu_status.push(st);
    }
    let named = cases
        .iter()
        .flat_map(|c| &c.3)
        .filter(|x| x.1.is_some())
        .count();
    let _ = writeln!(
        std::io::stderr(),
        "{} damaged wide-slice archives ({named} blocks with the status the format names), \
         wide slices per stream {wide_streams:?}: the CPU fails them closed",
        cases.len()
    );
    let g = gpu();
    // the undamaged archives, bit-exact
    for (name, data, packed) in &bases {
        let a = Archive::parse(packed).unwrap();
        let ds: &[decoder::Decoder] = if a.cross_block() {
            &[decoder::Decoder::Wavefront]
        } else {
            &[
                decoder::Decoder::Dense,
                decoder::Decoder::Lane,
                decoder::Decoder::Wavefront,
            ]
        };
        for &d in ds {
            let out =
                decoder::decompress_with(&g, &a, d).unwrap_or_else(|e| panic!("{name} {d:?}: {e}"));
            assert!(out == *data, "{name} {d:?}: output differs");
        }
    }
    let rans_rule = |s: u32| (1..=4).contains(&s);
    let mut slowest = 0u64;
    for ((what, bytes, cross, damaged), cpu) in cases.iter().zip(&cpu_status) {
        let a = Archive::parse(bytes).unwrap();
        let ds: &[decoder::Decoder] = if *cross {
            &[decoder::Decoder::Wavefront]
        } else {
            &[
                decoder::Decoder::Dense,
                decoder::Decoder::Lane,
                decoder::Decoder::Wavefront,
            ]
        };
        let first_bad = damaged.iter().map(|x| x.0).min().unwrap();
        for &d in ds {
            let ga = decoder::GpuArchive::upload(&g, &a).unwrap();
            let mut out = g
                .alloc_filled(a.header().original_size as usize, 0xA5)
                .unwrap();
            let mut status = g.stream().alloc_zeros::<u32>(a.block_count()).unwrap();
            let t0 = std::time::Instant::now();
            let st = ga
                .decode_all_status(&g, d, &mut out, &mut status)
                .unwrap_or_else(|e| panic!("{what} {d:?}: {e}"));
            let ns = t0.elapsed().as_nanos() as u64;
            slowest = slowest.max(ns);
            if d == decoder::Decoder::Dense && ga.overlaps(&g) {
                assert!(
                    ns < aceapex::device::handoff::WAIT_LIMIT_NS,
                    "{what}: the dense decode took {ns} ns (a block never published?)"
                );
            }
            for &(b, _) in damaged {
                // (a status the rANS stage does not check, e.g. a checksum, is the host's)
                if rans_rule(cpu[b]) {
                    assert_eq!(
                        (st[b], Status::from_u32(st[b])),
                        (cpu[b], Status::from_u32(cpu[b])),
                        "{what} {d:?}: block {b}'s status differs from the CPU's"
                    );
                }
            }
            for (b, &s) in st.iter().enumerate().take(a.block_count()) {
                let undamaged = !damaged.iter().any(|x| x.0 == b);
                if undamaged && (!cross || b < first_bad) {
                    assert_eq!(s, 0, "{what} {d:?}: undamaged block {b} failed");
                }
            }
            match decoder::decompress_with(&g, &a, d) {
                Ok(_) => panic!("{what} {d:?}: reported success on a damaged archive"),
                Err(e) => assert!(
                    matches!(e, aceapex::gpu::GpuError::Status(_)),
                    "{what} {d:?}: {e}"
                ),
            }
        }
    }
    let _ = writeln!(
        std::io::stderr(),
        "{} damaged wide-slice archives failed closed on the GPU (slowest decode {} us)",
        cases.len(),
        slowest / 1000
    );
}
