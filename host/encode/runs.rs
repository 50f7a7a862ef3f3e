//! The writer of two-bit literal slices with runs (FORMAT.md §5.8,
//! `device::two_bit::decode_runs` the reference decoder).

use crate::device::two_bit::{MAX_INTERVALS, MAX_RUNS, RUNS_HEAD_CAP};

fn put_varint(mut v: usize, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8 & 0x7F) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends the slice with runs of `lits` to `out` and returns its length, or `None` (and
/// `out` unchanged) where `lits` is empty or needs more than `MAX_RUNS` runs,
/// `MAX_INTERVALS` lower-case intervals or `RUNS_HEAD_CAP` bytes before the codes. The codes' four bytes are the four most frequent literals after case folding
/// (ties to the lower byte); every other literal is a run entry, each value's positions cut
/// greedily into arithmetic progressions; maximal stretches of lower-case letters are the
/// intervals, coded as their upper-case letters.
pub fn encode_two_bit_runs(lits: &[u8], out: &mut Vec<u8>) -> Option<usize> {
    let n = lits.len();
    if n == 0 || n >= 1 << 28 {
        return None;
    }
    let mut intervals: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while i < n {
        if lits[i].is_ascii_lowercase() {
            let s = i;
            while i < n && lits[i].is_ascii_lowercase() {
                i += 1;
            }
            intervals.push((s, i - s));
        } else {
            i += 1;
        }
    }
    if intervals.len() > MAX_INTERVALS {
        return None;
    }
    let mut hist = [0usize; 256];
    for &b in lits {
        hist[b.to_ascii_uppercase() as usize] += 1;
    }
    let mut order: Vec<usize> = (0..256).collect();
    order.sort_by_key(|&b| (std::cmp::Reverse(hist[b]), b));
    let sym: [u8; 4] = std::array::from_fn(|c| order[c] as u8);
    let code_of = |b: u8| sym.iter().position(|&s| s == b);
    // each value's positions, then cut into progressions (first, stride, count, value)
    let mut by_value: Vec<Vec<usize>> = vec![Vec::new(); 256];
    for (p, &b) in lits.iter().enumerate() {
        let f = b.to_ascii_uppercase();
        if code_of(f).is_none() {
            by_value[f as usize].push(p);
        }
    }
    let mut runs: Vec<(usize, usize, usize, u8)> = Vec::new();
    for (v, ps) in by_value.iter().enumerate().filter(|(_, ps)| !ps.is_empty()) {
        let mut k = 0;
        while k < ps.len() {
            if k + 1 == ps.len() {
                runs.push((ps[k], 1, 1, v as u8));
                break;
            }
            let stride = ps[k + 1] - ps[k];
            let mut j = k + 1;
            while j + 1 < ps.len() && ps[j + 1] - ps[j] == stride {
                j += 1;
            }
            runs.push((ps[k], stride, j - k + 1, v as u8));
            k = j + 1;
        }
        if runs.len() > MAX_RUNS {
            return None;
        }
    }
    runs.sort_unstable();
    let start = out.len();
    out.extend_from_slice(&sym);
    put_varint(runs.len(), out);
    put_varint(intervals.len(), out);
    out.extend(runs.iter().map(|r| r.3));
    let mut prev = 0;
    for &(first, stride, count, _) in &runs {
        put_varint(first - prev, out);
        put_varint(stride - 1, out);
        put_varint(count - 1, out);
        prev = first;
    }
    let mut end = 0;
    for &(s, len) in &intervals {
        put_varint(s - end, out);
        put_varint(len - 1, out);
        end = s + len;
    }
    if out.len() - start > RUNS_HEAD_CAP {
        out.truncate(start);
        return None;
    }
    // the codes of the literals outside every run, four to a byte, the first in the low bits
    let (mut byte, mut k) = (0u8, 0usize);
    for &b in lits {
        if let Some(c) = code_of(b.to_ascii_uppercase()) {
            byte |= (c as u8) << (2 * (k % 4));
            k += 1;
            if k % 4 == 0 {
                out.push(byte);
                byte = 0;
            }
        }
    }
    if k % 4 != 0 {
        out.push(byte);
    }
    Some(out.len() - start)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::two_bit::decode_runs;
    use crate::Status;

    fn round_trip(lits: &[u8]) -> Option<usize> {
        let mut s = Vec::new();
        let len = encode_two_bit_runs(lits, &mut s)?;
        assert_eq!(len, s.len());
        let mut back = vec![0xA5; lits.len()];
        decode_runs(&s, &mut back).unwrap();
        assert!(back == lits, "{:?}", String::from_utf8_lossy(lits));
        Some(len)
    }

    /// FASTA-like literals (60-base lines, an N run over line ends, a soft-masked stretch, a
    /// header), random bytes of small alphabets, and single literals come back exactly.
    #[test]
    fn slices_with_runs_restore_their_literals() {
        let mut r = crate::gpu::tokens::Rng::new(5);
        let mut fasta = b">chr1 test\n".to_vec();
        for line in 0..200 {
            for col in 0..60 {
                let b = match (line, col) {
                    (20..=30, _) => b'N',
                    (50..=60, _) => b"acgt"[r.below(4) as usize],
                    _ => b"ACGT"[r.below(4) as usize],
                };
                fasta.push(b);
            }
            fasta.push(b'\n');
        }
        let len = round_trip(&fasta).expect("few runs");
        // the codes of the non-exception literals plus a few dozen bytes of runs
        let bases = fasta.iter().filter(|b| b"ACGTacgt".contains(b)).count();
        assert!(len < bases / 4 + 200, "{len} bytes for {bases} bases");
        for n in [1usize, 2, 3, 4, 5, 7, 100] {
            for alphabet in [1u64, 4, 6, 20] {
                let lits: Vec<u8> = (0..n).map(|_| b'A' + r.below(alphabet) as u8).collect();
                if let Some(l) = round_trip(&lits) {
                    assert!(l >= 4 + 2 + n.div_ceil(4).min(1));
                }
            }
        }
    }

    /// An archive whose blocks take slices with runs (FASTA of 60-base lines, soft-masked
    /// stretches and N runs: a two-bit slice pays a byte per line feed there) carries the
    /// type-3 record, parses, and restores its input on the CPU; a second record is refused.
    #[test]
    fn archives_with_runs_restore_on_the_cpu() {
        use crate::device::format::{
            EXTENSION_MUST_UNDERSTAND, EXTENSION_TYPE_TWO_BIT_RUNS, LANES_TWO_BIT_RUNS,
        };
        let fasta = fasta(4_000, 9);
        let opts = runs_settings();
        let archive = crate::encode::compress_settings(&fasta, &opts, &|_| {}).unwrap();
        let a = crate::format::Archive::parse(&archive).unwrap();
        let with_runs = a
            .entries()
            .iter()
            .filter(|e| e.lanes[0] == LANES_TWO_BIT_RUNS)
            .count();
        assert!(
            with_runs * 10 >= a.entries().len() * 9,
            "{with_runs} of {}",
            a.entries().len()
        );
        assert_eq!(
            a.extensions()
                .filter(|x| x.kind == EXTENSION_TYPE_TWO_BIT_RUNS)
                .count(),
            1
        );
        assert!(crate::decode::decompress(&a).unwrap() == fasta);
        let twice = crate::format::with_extensions(
            &archive,
            &[crate::format::Extension {
                kind: EXTENSION_TYPE_TWO_BIT_RUNS,
                flags: EXTENSION_MUST_UNDERSTAND,
                payload: &[],
            }],
        )
        .unwrap();
        assert!(crate::format::Archive::parse(&twice).is_err());
    }

    /// `varint_ending_with` (the GPU's reading of a varint from its last byte) gives what
    /// `varint` reads from its first, for every length and the longer-than-four case.
    #[test]
    fn a_varint_read_from_its_end_is_the_varint() {
        use crate::device::two_bit::{varint, varint_ending_with};
        for v in [
            0u32,
            1,
            127,
            128,
            300,
            16_383,
            16_384,
            1 << 21,
            (1 << 28) - 1,
        ] {
            let mut s = vec![0x05u8];
            put_varint(v as usize, &mut s);
            let mut at = 1;
            assert_eq!(varint(&s, &mut at, s.len()), Ok(v));
            let end = s.len() - 1;
            // (s[0], before the varint, ends another)
            let b = std::array::from_fn(|i| if i <= end { s[end - i] as u32 } else { 0 });
            assert_eq!(varint_ending_with(b), (v, false), "{v}");
        }
        // five bytes: too long
        assert!(varint_ending_with([0x01, 0x80, 0x80, 0x80, 0x80]).1);
    }

    /// `open_gaps` (the GPU's placement of 16 codes among run positions) puts byte `k` at
    /// the `k`-th clear position of the mask, as the reference places codes, for every mask
    /// of a sample of random masks and every single- and two-bit mask.
    #[test]
    fn open_gaps_places_bytes_at_the_clear_positions() {
        use crate::device::two_bit::open_gaps;
        let v = u128::from_le_bytes(std::array::from_fn(|i| 0x10 + i as u8));
        let mut masks: Vec<u32> = (0..16).map(|p| 1 << p).collect();
        masks.extend((0..16).flat_map(|a| (a + 1..16).map(move |b| 1 << a | 1 << b)));
        let mut r = crate::gpu::tokens::Rng::new(5);
        masks.extend((0..2000).map(|_| r.next_u64() as u32 & 0xFFFF));
        masks.extend([0, 0xFFFF]);
        for m in masks {
            let got = open_gaps(v, m).to_le_bytes();
            let mut k = 0u8;
            for (p, &b) in got.iter().enumerate() {
                if m >> p & 1 == 0 {
                    assert_eq!(b, 0x10 + k, "mask {m:#06x}, position {p}");
                    k += 1;
                }
            }
        }
    }

    /// FORMAT.md §5.8's example, written by hand, decodes to its literals.
    #[test]
    fn the_format_example_decodes() {
        let slice = [
            0x41, 0x43, 0x47, 0x54, 0x01, 0x01, 0x0A, 0x04, 0x04, 0x01, 0x05, 0x03, 0xE4, 0xE4,
        ];
        let mut out = [0u8; 10];
        decode_runs(&slice, &mut out).unwrap();
        assert_eq!(&out, b"ACGT\nacgt\n");
    }

    /// A slice that breaks a rule is refused: runs overlapping or past the end, more than
    /// `MAX_RUNS` runs, intervals past the end, codes too short or too long, an empty output.
    #[test]
    fn broken_slices_are_refused() {
        let head = |runs: &[(usize, usize, usize, u8)], ivs: &[(usize, usize)], codes: usize| {
            let mut s = b"ACGT".to_vec();
            put_varint(runs.len(), &mut s);
            put_varint(ivs.len(), &mut s);
            s.extend(runs.iter().map(|r| r.3));
            for &(g, st, c, _) in runs {
                put_varint(g, &mut s);
                put_varint(st - 1, &mut s);
                put_varint(c - 1, &mut s);
            }
            for &(g, l) in ivs {
                put_varint(g, &mut s);
                put_varint(l - 1, &mut s);
            }
            s.extend(std::iter::repeat_n(0u8, codes));
            s
        };
        let dec = |s: &[u8], n: usize| decode_runs(s, &mut vec![0; n]);
        // 8 literals: a run of 3 at 0, 2, 4 leaves 5 codes (2 bytes)
        assert_eq!(dec(&head(&[(0, 2, 3, b'N')], &[], 2), 8), Ok(()));
        let mut out = vec![0; 8];
        decode_runs(&head(&[(0, 2, 3, b'N')], &[(1, 3)], 2), &mut out).unwrap();
        assert_eq!(&out, b"NanaNAAA", "run values lower-cased too");
        let bad = Err(Status::TwoBitSlice);
        assert_eq!(
            dec(&head(&[(0, 2, 3, b'N')], &[], 1), 8),
            bad,
            "codes short"
        );
        assert_eq!(dec(&head(&[(0, 2, 3, b'N')], &[], 3), 8), bad, "codes long");
        assert_eq!(
            dec(&head(&[(0, 2, 5, b'N')], &[], 1), 8),
            bad,
            "run past the end"
        );
        assert_eq!(
            dec(&head(&[(0, 2, 3, b'N'), (2, 1, 1, b'X')], &[], 1), 8),
            bad,
            "overlap"
        );
        assert_eq!(
            dec(&head(&[(8, 1, 1, b'N')], &[], 2), 8),
            bad,
            "first past the end"
        );
        assert_eq!(
            dec(&head(&[], &[(5, 4)], 2), 8),
            bad,
            "interval past the end"
        );
        let many: Vec<_> = (0..MAX_RUNS + 1)
            .map(|k| (usize::from(k > 0), 1, 1, b'N'))
            .collect();
        assert_eq!(
            dec(&head(&many, &[], 0), MAX_RUNS + 1),
            bad,
            "too many runs"
        );
        assert_eq!(dec(&head(&[], &[], 0), 0), bad, "no literals");
        assert_eq!(
            dec(&head(&[(0, 9, 1, b'N')], &[], 2), 8),
            bad,
            "a stride past n"
        );
        // intervals (gap 200, len 201) of four varint bytes each: 254 end the head at byte
        // 1,023, 255 at 1,027, past RUNS_HEAD_CAP
        let ivs = |c: usize| vec![(200usize, 201usize); c];
        assert_eq!(RUNS_HEAD_CAP, 1024);
        let n = |c: usize| 401 * c;
        assert_eq!(
            dec(&head(&[], &ivs(254), n(254).div_ceil(4)), n(254)),
            Ok(()),
            "a head of 1,023"
        );
        assert_eq!(
            dec(&head(&[], &ivs(255), n(255).div_ceil(4)), n(255)),
            bad,
            "a head of 1,027"
        );
    }
    /// Level 5 with raw match streams and slices with runs wherever two-bit slices stay.
    fn runs_settings() -> crate::encode::Settings {
        crate::encode::Settings {
            level: 5,
            raw_match_streams: true,
            two_bit: crate::encode::TwoBit::MostBlocks,
            two_bit_runs: true,
            ..Default::default()
        }
    }

    fn fasta(lines: usize, seed: u64) -> Vec<u8> {
        let mut r = crate::gpu::tokens::Rng::new(seed);
        let mut f = b">chrT test sequence\n".to_vec();
        for line in 0..lines {
            for _ in 0..60 {
                let b = b"ACGT"[r.below(4) as usize];
                f.push(match line % 97 {
                    0..=3 => b'N',
                    10..=20 => b.to_ascii_lowercase(),
                    _ => b,
                });
            }
            f.push(b'\n');
        }
        f
    }

    /// A `--target gpu` archive of slices with runs larger than a grid of 8-warp CTAs holds
    /// (4,000 blocks on 132 SMs) still gets the rANS entry point that leaves its
    /// self-contained blocks to the dense kernel (the others would hand every slice with
    /// runs to the lane kernel).
    #[test]
    fn large_archives_with_runs_leave_their_blocks_to_the_dense_kernel() {
        use crate::gpu::schedule::{leaves_self_contained, rans_plan, RansEntry, RansFacts};
        let data = fasta(270_000, 3);
        let opts = crate::Options::new()
            .with_target(crate::Target::Gpu)
            .with_block_size(4096);
        let archive = crate::compress(&data, &opts).unwrap();
        let a = crate::format::Archive::parse(&archive).unwrap();
        assert!(a.block_count() > 4000, "{} blocks", a.block_count());
        let own = (a.entries().iter().zip(a.block_offsets()))
            .filter(|(e, &off)| {
                crate::device::own::own_slice(e, off, a.data().len() as u64).is_some()
            })
            .count();
        assert!(own * 16 >= a.block_count() * 15, "{own} self-contained");
        let plan = rans_plan(&RansFacts::of(&a), 132, &crate::gpu::GpuTuning::default());
        assert_eq!(plan.entry, RansEntry::TwoBit);
        let stages = crate::device::dense_layout::STAGES_ALL;
        assert!(leaves_self_contained(own as u32, true, stages, plan.entry));
    }

    /// Without its type-3 record (meta checksum resealed), an archive whose first slice with
    /// runs is in block 1 is refused naming block 1, by the whole-archive parse and by the
    /// streaming decoder, which meets the record's absence at the end (FORMAT.md §3.7).
    #[test]
    fn a_missing_runs_record_names_the_first_block_that_needs_it() {
        use crate::device::format::{LANES_TWO_BIT_RUNS, META_CHECKSUM_OFFSET};
        let mut r = crate::gpu::tokens::Rng::new(1);
        let mut data: Vec<u8> = (0..16384).map(|_| r.below(256) as u8).collect();
        data.extend(fasta(20_000, 5));
        let opts = runs_settings();
        let archive = crate::encode::compress_settings(&data, &opts, &|_| {}).unwrap();
        let a = crate::format::Archive::parse(&archive).unwrap();
        let first = (a.entries().iter()).position(|e| e.lanes[0] == LANES_TWO_BIT_RUNS);
        assert_eq!(first, Some(1));
        // the type-3 record (8 bytes, empty) is the whole extension area
        assert_eq!(a.extensions().count(), 1);
        let mut bad = archive[..archive.len() - 8].to_vec();
        let mut x = xxhash_rust::xxh3::Xxh3::new();
        x.update(&bad[..META_CHECKSUM_OFFSET]);
        x.update(&bad[crate::format::HEADER_SIZE..a.data_offset() as usize]);
        let d = x.digest().to_le_bytes();
        bad[META_CHECKSUM_OFFSET..META_CHECKSUM_OFFSET + 8].copy_from_slice(&d);
        for e in [
            crate::format::Archive::parse(&bad)
                .err()
                .unwrap()
                .to_string(),
            crate::decompress_to(&bad[..], std::io::sink())
                .unwrap_err()
                .to_string(),
        ] {
            assert!(e.contains("entry 1") && e.contains("runs record"), "{e}");
        }
    }
}
