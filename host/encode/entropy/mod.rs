//! Entropy layer, encoder side (FORMAT.md §5): table choice, lane counts, the interleaved rANS
//! slice encoder, packed and two-bit literals. The tables themselves and their serialisation
//! are in [`crate::format::tables`].

mod choice;
mod lanes;
mod packed;
mod rans;
mod two_bit;

pub use crate::format::tables::*;
pub use choice::*;
pub use lanes::*;
pub use packed::*;
pub use rans::*;
pub use two_bit::*;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::format::*;

    /// The floor of a two-bit slice: exact without exceptions (4 codes, two one-byte varints,
    /// 100 bytes of codes), never above the encoding with them.
    #[test]
    fn two_bit_floor_is_a_lower_bound() {
        let dna = b"ACGT".repeat(100);
        assert_eq!(two_bit_len_floor(&dna), 106);
        assert_eq!(encode_two_bit(&dna, &mut Vec::new()), 106);
        let text = b"It is a truth universally acknowledged, that a single man".repeat(20);
        let floor = two_bit_len_floor(&text);
        assert!(floor <= encode_two_bit(&text, &mut Vec::new()));
        assert!(floor > text.len() / 2, "{floor}");
    }
    use crate::device::rans::{decode_slice, SliceTables};

    fn roundtrip(data: &[u8]) {
        let mut h = [0u64; 256];
        count(&mut h, data);
        let t = FreqTable::from_histogram(&h).unwrap();
        assert_eq!(t.freq.iter().sum::<u32>(), PROB_SCALE);
        let cum = t.cumulative();
        let dt = t.decode_table();
        for lanes in [1, 2, 5, 16, 32] {
            let mut enc = Vec::new();
            encode_slice(data, lanes, &t, &cum, &mut enc);
            let mut out = vec![0xAAu8; data.len()];
            decode_slice(&enc, lanes, SliceTables::single(&dt), &mut out).unwrap();
            assert_eq!(out, data, "lanes {lanes}");
        }
    }

    #[test]
    fn rans_roundtrips() {
        let mut seed = 0x1234_5678_9abc_def0u64;
        let mut rnd = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        roundtrip(b"a");
        roundtrip(&[7u8; 1000]);
        let skewed: Vec<u8> = (0..20000)
            .map(|_| (rnd() % 100).min(rnd() % 7) as u8)
            .collect();
        roundtrip(&skewed);
        let uniform: Vec<u8> = (0..5000).map(|_| rnd() as u8).collect();
        roundtrip(&uniform);
        let dna: Vec<u8> = (0..16384).map(|_| b"ACGT"[(rnd() % 4) as usize]).collect();
        roundtrip(&dna);
    }

    #[test]
    fn corrupt_slice_fails_closed() {
        let data: Vec<u8> = (0..4000u32).map(|i| (i * 7 % 13) as u8).collect();
        let mut h = [0u64; 256];
        count(&mut h, &data);
        let t = FreqTable::from_histogram(&h).unwrap();
        let mut enc = Vec::new();
        encode_slice(&data, 4, &t, &t.cumulative(), &mut enc);
        let dt = t.decode_table();
        let mut detected = 0;
        for i in 0..enc.len() {
            let mut bad = enc.clone();
            bad[i] ^= 0x10;
            let mut out = vec![0u8; data.len()];
            if decode_slice(&bad, 4, SliceTables::single(&dt), &mut out).is_err() || out != data {
                detected += 1;
            }
        }
        // every flip changes the output or is rejected; rejection is what the trailer check buys
        assert_eq!(detected, enc.len());
    }

    #[test]
    fn table_serialization_roundtrips_and_rejects_bad_sums() {
        let mut h = [0u64; 256];
        count(&mut h, b"hello world, hello table");
        let t = FreqTable::from_histogram(&h).unwrap();
        let mut buf = Vec::new();
        t.serialize(&mut buf);
        let mut pos = 0;
        assert_eq!(FreqTable::deserialize(&buf, &mut pos).unwrap(), Some(t));
        assert_eq!(pos, buf.len());
        let last = buf.len() - 1;
        buf[last] ^= 1;
        assert!(FreqTable::deserialize(&buf, &mut 0).is_err());
        assert!(FreqTable::deserialize(&buf[..10], &mut 0).is_err());
    }

    #[test]
    fn lane_counts_per_slice() {
        // one lane per 256 symbols, rounded down to 1, 2, 4, 8, 16, 24 or 32
        assert_eq!(lanes_for(0, SYMBOLS_PER_LANE), 1);
        assert_eq!(lanes_for(511, SYMBOLS_PER_LANE), 1);
        // 2-3 lanes' worth rounds up to 4
        assert_eq!(lanes_for(600, SYMBOLS_PER_LANE), 4);
        assert_eq!(lanes_for(1000, SYMBOLS_PER_LANE), 4);
        assert_eq!(lanes_for(1500, SYMBOLS_PER_LANE), 4);
        assert_eq!(lanes_for(5000, SYMBOLS_PER_LANE), 16);
        assert_eq!(lanes_for(7000, SYMBOLS_PER_LANE), 24);
        assert_eq!(lanes_for(16384, SYMBOLS_PER_LANE), 32);
        assert_eq!(lanes_for(1 << 30, SYMBOLS_PER_LANE), 32);
    }

    #[test]
    fn levels_8_and_9_use_fewer_lanes() {
        assert_eq!(symbols_per_lane(5, 16384), 256);
        assert_eq!(symbols_per_lane(7, 1 << 20), 256);
        assert_eq!(symbols_per_lane(8, 16384), 1024);
        assert_eq!(symbols_per_lane(9, 16384), 4096);
        // smaller blocks: proportionally fewer symbols per lane, at least 128
        assert_eq!(symbols_per_lane(5, 8192), 128);
        assert_eq!(symbols_per_lane(5, 4096), 128);
        assert_eq!(symbols_per_lane(9, 4096), 1024);
        // a text-like block: 8585 literals, 1000 offsets, 1950 commands, 800 tails (at level
        // 5-7 the lengths go to a second round: `block_lanes_fit_one_warp_and_balance_steps`)
        let n = [Some(8585), Some(30), Some(1000), Some(1950), Some(800)];
        assert_eq!(block_lanes(n, SYMBOLS_PER_LANE), [20, 1, 4, 4, 4]);
        // every slice but the literals gets one lane; the 1950 commands are then the longest
        // chain, and the literals need only 4 lanes to stay within 1/8 of it (2147 steps)
        assert_eq!(block_lanes(n, 1024), [4, 1, 1, 1, 1]);
        // 8585 / 4096 -> 2 lanes' worth, rounded up to 4
        assert_eq!(block_lanes(n, 4096), [4, 1, 1, 1, 1]);
        // a DNA-like block: 15,000 literals -> 14 lanes' worth, 12 at level 8 (1250 steps), 4
        // at level 9
        let dna = [Some(15000), Some(30), Some(230), Some(230), Some(200)];
        assert_eq!(block_lanes(dna, 1024), [12, 1, 1, 1, 1]);
        assert_eq!(block_lanes(dna, 4096), [4, 1, 1, 1, 1]);
    }

    #[test]
    fn literal_alphabet_leaves_out_a_few_wide_blocks() {
        // a FASTA group: a header block of many letters, then 15 blocks of ACGT and newlines
        let header: &[u8] = b">chr1 Homo sapiens, GRCh37 primary assembly\nACGTN";
        let dna: &[u8] = b"ACGTACGTNNNN\nACGT";
        let mut blocks = vec![header];
        blocks.extend(std::iter::repeat_n(dna, 15));
        let (alphabet, raw) = literal_alphabet(blocks.iter().copied(), 16).unwrap();
        assert_eq!(alphabet, b"\nACGNT");
        assert_eq!(raw, [[true].as_slice(), &[false; 15]].concat());
        // two wide blocks of 16 are 1/8: packing; three are more: none
        let mut two = vec![header, header];
        two.extend(std::iter::repeat_n(dna, 14));
        assert!(literal_alphabet(two.iter().copied(), 16).is_some());
        let mut three = vec![header, header, header];
        three.extend(std::iter::repeat_n(dna, 13));
        assert!(literal_alphabet(three.iter().copied(), 16).is_none());
        // 17 letters spread over every block: none
        let text: &[u8] = b"Call me Ishmael. Some years ago - never mind how long";
        assert!(literal_alphabet(std::iter::repeat_n(text, 8), 16).is_none());
        // a block of 16 letters but one outside the 16 most common: raw
        let rare: &[u8] = b"ACGTZ";
        let mut r = vec![rare];
        r.extend(std::iter::repeat_n(b"ACGTBDEFHIJKLMOP".as_slice(), 8));
        let (alphabet, raw) = literal_alphabet(r.iter().copied(), 16).unwrap();
        assert_eq!(alphabet.len(), 16);
        assert!(!alphabet.contains(&b'Z'));
        assert!(raw[0]);
        assert!(raw[1..].iter().all(|&x| !x));
        // a short FASTA header (ce2's ">chrX"): within 16 letters, so the whole group packs
        // two letters a symbol; at most 6 letters, three a symbol with the header block raw
        let short: &[u8] = b">chrX\nACGT";
        let dna: &[u8] = b"ACGTTGCA\nACGT";
        let mut fasta = vec![short];
        fasta.extend(std::iter::repeat_n(dna, 15));
        let (alphabet, raw) = literal_alphabet(fasta.iter().copied(), 16).unwrap();
        assert_eq!(alphabet, b"\n>ACGTXchr");
        assert!(raw.iter().all(|&x| !x));
        let (alphabet, raw) = literal_alphabet(fasta.iter().copied(), 6).unwrap();
        assert_eq!(alphabet, b"\n>ACGT");
        assert_eq!(raw, [[true].as_slice(), &[false; 15]].concat());
        // at most 4: every block has five letters, so none
        assert!(literal_alphabet(fasta.iter().copied(), 4).is_none());
    }

    #[test]
    fn packed_literal_blocks_give_the_longest_chain_more_lanes() {
        // hs37-like block at level 5-7: 14,400 literals, three per symbol (4,800 symbols),
        // 268 commands. Lanes from the literals' count: 32 -> 24 to fit (28 in all); the
        // commands' 268 steps on one lane are then the longest chain, so they step up to 4
        // (31 lanes); the literals' 200 steps are next, and 32 lanes would not fit
        let n = [Some(4800), Some(10), Some(100), Some(268), Some(60)];
        assert_eq!(block_lanes_packed(n, SYMBOLS_PER_LANE, 3), [24, 1, 1, 4, 1]);
        // the same block unpacked: 24 + 1 + 1 + 1 + 1 lanes, the literals' 600 steps the
        // longest, and 32 would not fit; two rounds (`two_round_lanes`): the literals on 32
        // (450 steps), then the others within 64 steps each, 1 + 4 + 8 + 1 lanes (the tails'
        // 60 steps the longest): 510 steps, 90 fewer for 18 lanes more (5 per lane)
        let unpacked = [Some(14400), Some(10), Some(100), Some(268), Some(60)];
        assert_eq!(block_lanes(unpacked, SYMBOLS_PER_LANE), [32, 1, 4, 8, 1]);
        assert_eq!(
            block_lanes_packed(unpacked, SYMBOLS_PER_LANE, 1),
            [32, 1, 4, 8, 1]
        );
    }

    #[test]
    fn fast_levels_give_a_half_empty_warp_to_the_longest_chain() {
        // dm3 block 153 at level 6: 7,181 literals, 5 lengths, 1,243 offsets, 2,228 commands,
        // 991 offset tails. Lanes 24 + 1 + 4 + 8 + 4 are over 32: the literals step down to
        // 20, 16, then 12 (29 in all); the trim leaves the commands on 4 (557 steps,
        // within 1/8 of the literals' 599). Steps up: literals to 16 (449); the commands' 557
        // are then the longest, and 8 lanes do not fit in one warp round: 16 + 1 + 4 + 4 + 4
        let n = [Some(7181), Some(5), Some(1243), Some(2228), Some(991)];
        // `step_up_by_rounds`: the commands on 8 anyway, 33 lanes; the kernel's first round
        // takes the largest four (16 + 8 + 4 + 4: 449, 279, 311, 248 steps), the lengths'
        // 5 steps wait for a second: 454 steps, 103 fewer for 4 lanes
        for (lanes, steps) in [([16, 1, 4, 4, 4], 557), ([16, 1, 4, 8, 4], 449 + 5)] {
            let symbols = [7181, 5, 1243, 2228, 991];
            assert_eq!(aceapex_device::rans::warp_steps(symbols, lanes), steps);
        }
        assert_eq!(block_lanes(n, SYMBOLS_PER_LANE), [16, 1, 4, 8, 4]);
        // dm3 block 111 (`step_up_by_rounds`' case): 20 + 1 + 4 + 8 + 4 lanes step down to
        // 12 + 1 + 4 + 8 + 4 (the literals' 441 steps); with the literals on 16 the first
        // round is 16 + 8 + 4 + 4 (331, 322, 367, 305 steps) and the lengths' 9 the second:
        // 376
        let dm3 = [Some(5284), Some(9), Some(1467), Some(2570), Some(1220)];
        assert_eq!(block_lanes(dm3, SYMBOLS_PER_LANE), [16, 1, 4, 8, 4]);
        // refused: dm3 block 36, context-pair literals on 24 lanes (585 steps) and commands,
        // offsets and tails on one each; the best of two rounds, 32 lanes (439 steps) then
        // 8 + 4 + 4 (63), is 502 steps, 83 fewer for 21 lanes more, under 4 per lane; the
        // literals on 32 with the others in a second round, 942
        let refused = [Some(14023), None, Some(174), Some(503), Some(129)];
        let symbols = [14023, 0, 174, 503, 129];
        assert_eq!(
            aceapex_device::rans::warp_steps(symbols, [32, 0, 4, 8, 4]),
            439 + 63
        );
        // two warps sharing the rounds: the literals' round on one, the 8 + 4 + 4 on the other
        assert_eq!(
            aceapex_device::rans::warp_part_steps(symbols, [32, 0, 4, 8, 4], 2),
            [439, 63, 0, 0, 0]
        );
        assert_eq!(block_lanes(refused, SYMBOLS_PER_LANE), [24, 0, 1, 1, 1]);
        // at level 8 (1,024 symbols per lane) no step-up: ratio first
        assert_eq!(block_lanes(n, 1024), [4, 1, 1, 4, 1]);
    }

    #[test]
    fn fast_levels_fill_a_text_blocks_warp() {
        // brown block 434 at level 6: 4,452 literals, no lengths, 1,277 offsets, 1,988
        // commands, 1,168 tails. Start 16 + 4 + 4 + 4 (lanes_for), the trim to 1/8 over the
        // commands' 497 steps puts the literals on 8 (557 steps, the longest). Steps up:
        // literals to 12 (371), commands to 8 (249); then (`step_up_by_rounds`) the literals
        // to 16 (279): 32 lanes, the offsets' 320 the longest, 51 steps fewer for 4 lanes;
        // every further step (a second round) saves less than 4 steps per lane
        let n = [Some(4452), None, Some(1277), Some(1988), Some(1168)];
        assert_eq!(block_lanes(n, SYMBOLS_PER_LANE), [16, 0, 4, 8, 4]);
        // a chain within 1.5 times per_lane takes no lanes in the first step-up (ratio
        // first): 1,500 literals on 4 lanes (lanes_for), 375 steps; over 3/4 of per_lane,
        // `step_up_by_rounds` takes the literals to 8 (300 steps, the offsets'; 75 fewer for
        // 4 lanes) and the offsets to 4 (188, the literals'; 112 fewer for 3 lanes)
        assert_eq!(
            block_lanes(
                [Some(1500), None, Some(300), Some(600), None],
                SYMBOLS_PER_LANE
            ),
            [8, 0, 4, 4, 0]
        );
        // one over it steps up at once: 2,000 literals, 500 steps on 4 lanes, 250 on 8; then
        // the offsets to 4 (250, 50 fewer for 3 lanes) and the literals to 12 (167)
        assert_eq!(
            block_lanes(
                [Some(2000), None, Some(300), Some(600), None],
                SYMBOLS_PER_LANE
            ),
            [12, 0, 4, 4, 0]
        );
    }

    #[test]
    fn fast_levels_give_an_unpacked_dna_block_two_rounds() {
        // E. coli block 10 at level 6 (the FASTA header keeps its group unpacked): 16,331
        // literals and 140 commands. One round: 24 + 1 lanes, ceil(16331 / 24) = 681 steps;
        // two: 32 lanes (511 steps), then the commands on 4 (35): 546, for 11 lanes
        let n = [Some(16331), None, None, Some(140), None];
        assert_eq!(block_lanes(n, SYMBOLS_PER_LANE), [32, 0, 0, 4, 0]);
        let symbols = [16331, 0, 0, 140, 0];
        assert_eq!(
            aceapex_device::rans::warp_steps(symbols, [24, 0, 0, 1, 0]),
            681
        );
        assert_eq!(
            aceapex_device::rans::warp_steps(symbols, [32, 0, 0, 4, 0]),
            511 + 35
        );
        // at level 8 (1,024 symbols per lane: 16331 / 1024 = 15, 12 lanes): one round, ratio
        // first
        assert_eq!(block_lanes(n, 1024), [12, 0, 0, 1, 0]);
        // rounds of the kernel: largest first while they fit; 16 + 8 + 8 fill the first,
        // the 4-lane slice waits for the second: max(100, 50, 25) + 10
        assert_eq!(
            aceapex_device::rans::warp_steps([1600, 400, 200, 40, 0], [16, 8, 8, 4, 0]),
            110
        );
    }

    #[test]
    fn block_lanes_fit_one_warp_and_balance_steps() {
        // DNA-like block: 15,000 literals, 230 commands and offsets, 200 offset tails:
        // literals 32 -> 24 to fit in one round (625 steps); at level 6 two rounds then take
        // 32 (469) and 1 + 4 + 4 + 4 (58): 527 steps, 98 fewer for 17 lanes more; at level 8
        // (1,024 symbols per lane) one round of 12 + 1 + 1 + 1 + 1, ratio first
        let n = [Some(15000), Some(30), Some(230), Some(230), Some(200)];
        assert_eq!(block_lanes(n, SYMBOLS_PER_LANE), [32, 1, 4, 4, 4]);
        assert_eq!(block_lanes(n, 1024), [12, 1, 1, 1, 1]);
        // text-like: 8585 literals (32 -> 24 -> 20 -> 16 to fit: 537 steps, the
        // longest), 1000 offsets, 1950 commands and 800 tails at 4 lanes each (250, 488 and
        // 200 steps; one lane would take 1000, 1950 and 800, over 1/8 above 537); then
        // (`step_up_by_rounds`) the literals on 20, the first round 20 + 4 + 4 + 4 (430,
        // 250, 488, 200 steps) and the lengths' 30 the second: 518, 19 fewer for 4 lanes
        assert_eq!(
            block_lanes(
                [Some(8585), Some(30), Some(1000), Some(1950), Some(800)],
                SYMBOLS_PER_LANE
            ),
            [20, 1, 4, 4, 4]
        );
        // raw or empty slices take no lanes
        assert_eq!(
            block_lanes([None, None, Some(600), None, None], SYMBOLS_PER_LANE),
            [0, 0, 4, 0, 0]
        );
        // a lone large slice keeps its lanes
        assert_eq!(
            block_lanes([Some(16384), None, None, None, None], SYMBOLS_PER_LANE),
            [32, 0, 0, 0, 0]
        );
        // balancing: 2000 literals at 4 lanes take 500 steps, so 2100 offsets need only 4
        // lanes (525 steps, within 1/8) instead of 8; at level 6 the step-up then takes both
        // to 8 (263 and 250 steps: 525 and 500 are over 1.5 * 256), and `step_up_by_rounds`
        // both to 12 (175 and 167: 88 fewer for 8 lanes; the offsets alone on 12 would save
        // 13 for 4)
        assert_eq!(
            block_lanes([Some(2000), None, Some(2100), None, None], SYMBOLS_PER_LANE),
            [12, 0, 12, 0, 0]
        );
        // per_lane 1024 (level 8, no step-up): 2000 literals on 1 lane, so the offsets take
        // 1 lane too (2100 steps, within 1/8 of 2000) rather than lanes_for's 4
        assert_eq!(
            block_lanes([Some(2000), None, Some(2100), None, None], 1024),
            [1, 0, 1, 0, 0]
        );
    }

    /// FORMAT.md §5.7 worked by hand: `AACCGGTT\n` has four symbols of two each (in byte
    /// order A, C, G, T) and one exception, the line feed at 8 (gap 9 after -1, so the varint
    /// is zigzag(9 - 0) << 1 | new = 37).
    #[test]
    fn two_bit_slice_matches_the_format_by_hand() {
        let lits = b"AACCGGTT\n";
        let want = [
            b'A', b'C', b'G', b'T', // symbols
            1, 1,     // x, u
            b'\n', // the value
            37,    // the exception's varint
            0x50, 0xFA, 0x00, // codes: 0 0 1 1, 2 2 3 3, (0)
        ];
        let mut out = vec![9u8];
        assert_eq!(encode_two_bit(lits, &mut out), want.len());
        assert_eq!(&out[1..], &want);
        let mut back = [0u8; 9];
        crate::device::two_bit::decode(&want, &mut back).unwrap();
        assert_eq!(&back, lits);
    }

    #[test]
    fn two_bit_slices_round_trip() {
        let mut r = crate::gpu::tokens::Rng::new(11);
        let mut cases: Vec<Vec<u8>> = vec![
            b"A".to_vec(),
            b"N".to_vec(),
            b"\nACGT\n".to_vec(),
            b"ACGTNNNNNNNN".to_vec(),
            (0..1000u32).map(|i| (i % 251) as u8).collect(),
        ];
        // exceptions far apart (gaps past 2^14, a 3-byte varint) and next to each other
        let mut far = vec![b'A'; 300_000];
        far[0] = b'N';
        far[20_000] = b'N';
        far[20_001] = b'R';
        far[299_999] = b'\n';
        cases.push(far);
        for n in 1..40 {
            for alphabet in [&b"ACGT"[..], b"ACGT\n", b"ACGTNacgtn\n", b"AC"] {
                cases.push(
                    (0..n)
                        .map(|_| alphabet[r.below(alphabet.len() as u64) as usize])
                        .collect(),
                );
            }
        }
        for lits in cases {
            let mut slice = Vec::new();
            let len = encode_two_bit(&lits, &mut slice);
            assert_eq!(len, slice.len());
            let mut back = vec![0u8; lits.len()];
            crate::device::two_bit::decode(&slice, &mut back).unwrap();
            assert_eq!(back, lits);
        }
    }

    /// Broken rules of FORMAT.md §5.7 fail with `TwoBitSlice`, and no slice panics the
    /// decoder: every prefix, every bit flip of a few slices, and hand-made heads.
    #[test]
    fn two_bit_decoder_fails_closed() {
        use crate::device::status::Status;
        use crate::device::two_bit::decode;
        let bad = Err(Status::TwoBitSlice);
        let lits = b"ACGTTGCA\nACGGT\nNNA";
        let mut slice = Vec::new();
        encode_two_bit(lits, &mut slice);
        let mut out = vec![0u8; lits.len()];
        for cut in 0..slice.len() {
            assert_eq!(decode(&slice[..cut], &mut out), bad, "prefix {cut}");
        }
        // one byte too many: the varints no longer end where the codes begin
        let mut long = slice.clone();
        long.insert(7, 0);
        assert_eq!(decode(&long, &mut out), bad);
        for i in 0..slice.len() {
            for bit in 0..8 {
                let mut s = slice.clone();
                s[i] ^= 1 << bit;
                let mut o = vec![0u8; lits.len()];
                // no panic; either an error or some n bytes
                let _ = decode(&s, &mut o);
            }
        }
        // hand-made heads for 4 literals (one code byte): symbols, x, u, values, varints
        let head = |rest: &[u8]| [&b"ACGT"[..], rest, &[0u8]].concat();
        let mut o = [0u8; 4];
        assert_eq!(decode(&head(&[0, 0]), &mut o), Ok(()));
        assert_eq!(o, *b"AAAA");
        // x > n
        assert_eq!(decode(&head(&[5, 0]), &mut o), bad);
        // u > x
        assert_eq!(decode(&head(&[1, 2, 1, 2, 3]), &mut o), bad);
        // a first exception that is not new
        assert_eq!(decode(&head(&[1, 0, 2 << 1]), &mut o), bad);
        // gap 0: zigzag(0) with new, the first exception at -1 + 0
        assert_eq!(decode(&head(&[1, 1, b'N', 1]), &mut o), bad);
        // position past n: gap 5 (zigzag 10)
        assert_eq!(decode(&head(&[1, 1, b'N', 10 << 1 | 1]), &mut o), bad);
        // gap 4: the last literal
        assert_eq!(decode(&head(&[1, 1, b'N', 8 << 1 | 1]), &mut o), Ok(()));
        assert_eq!(o, *b"AAAN");
        // a value left unused, and a varint of five bytes
        assert_eq!(decode(&head(&[1, 2, b'N', b'R', 8 << 1 | 1]), &mut o), bad);
        assert_eq!(
            decode(&head(&[1, 1, b'N', 0x81, 0x80, 0x80, 0x80, 0]), &mut o),
            bad
        );
        // no literals
        assert_eq!(decode(&head(&[0, 0]), &mut []), bad);
    }
}
