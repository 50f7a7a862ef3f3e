//! Line layouts (FORMAT.md §3.8, §4.6): blocks that leave the line ends of their lines out of
//! the match layer. FASTA of every shape round-trips through every CPU reader, the layouts
//! make genomes smaller, the GPU target writes none, and an archive whose layouts or record
//! are damaged is refused, never decoded wrong.

mod common;
use aceapex::device::format::{
    FileHeader, EXTENSION_TYPE_LINE_LAYOUT, STREAM_COMMANDS, STREAM_COUNT,
};
use aceapex::format::Archive;
use aceapex::{Options, Reader, SeekableArchive, Settings, Target};
use common::Rng;

/// A FASTA file: `seqs` sequences of the given lengths, lines of `width` bases ended by
/// `end`, a stretch of lower case and of `N` in each, repeats copied from earlier bases (so
/// that matches cross line ends at every phase), and the last line's end left out where
/// `last_end` is false.
fn fasta(r: &mut Rng, width: usize, end: &[u8], seqs: &[usize], last_end: bool) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, &len) in seqs.iter().enumerate() {
        out.extend_from_slice(format!(">chr{i} sample {width}").as_bytes());
        out.extend_from_slice(end);
        let mut bases: Vec<u8> = Vec::with_capacity(len);
        while bases.len() < len {
            if bases.len() > 500 && r.below(4) == 0 {
                let from = r.below(bases.len() as u64 - 300) as usize;
                let n = (r.range(20, 300) as usize).min(len - bases.len());
                for k in 0..n {
                    let b = bases[from + k];
                    bases.push(if r.below(50) == 0 {
                        b"ACGT"[r.below(4) as usize]
                    } else {
                        b
                    });
                }
            } else {
                bases.push(b"ACGT"[r.below(4) as usize]);
            }
        }
        if len > 2000 {
            bases[100..400].make_ascii_lowercase();
            bases[900..1200].fill(b'N');
        }
        for (k, line) in bases.chunks(width).enumerate() {
            out.extend_from_slice(line);
            let last = i + 1 == seqs.len() && (k + 1) * width >= len;
            if !last || last_end {
                out.extend_from_slice(end);
            }
        }
    }
    out
}

/// The shapes: line widths 50 to 100 and 7, `\n` and `\r\n`, one or many sequences, a
/// sequence whose length is a multiple of the width, no line end at the end, and a file
/// whose last block is its last line end alone.
fn shapes() -> Vec<(String, Vec<u8>)> {
    let mut r = Rng(0x11E5);
    let mut v = Vec::new();
    for (width, end) in [
        (60, &b"\n"[..]),
        (61, b"\n"),
        (70, b"\r\n"),
        (80, b"\n"),
        (100, b"\r\n"),
        (7, b"\n"),
    ] {
        let e = if end.len() == 2 { "crlf" } else { "lf" };
        v.push((
            format!("{width} {e} one"),
            fasta(&mut r, width, end, &[150_000], true),
        ));
        v.push((
            format!("{width} {e} many"),
            fasta(&mut r, width, end, &[30_000, 7, width * 300, 45_001], false),
        ));
    }
    // the last block is the last line end alone (16 KiB blocks): a 73-byte header line,
    // then 536 lines of 60 bases, 2 * 16384 + 1 bytes
    let mut d = format!(">{}\n", "x".repeat(71)).into_bytes();
    for _ in 0..536 {
        d.extend((0..60).map(|_| b"ACGT"[r.below(4) as usize]));
        d.push(b'\n');
    }
    assert_eq!(d.len(), 2 * 16384 + 1);
    v.push(("last block a line end".into(), d));
    v
}

fn has_record(archive: &[u8]) -> bool {
    Archive::parse(archive)
        .unwrap()
        .extensions()
        .any(|r| r.kind == EXTENSION_TYPE_LINE_LAYOUT)
}

/// Every shape, compressed with the defaults (16 and 4 KiB blocks), carries the record and
/// comes back whole, streamed, by random ranges with the reader and by the seekable reader.
#[test]
fn fasta_of_every_shape_round_trips() {
    let mut r = Rng(7);
    for (name, data) in shapes() {
        for bs in [16384u32, 4096] {
            let opts = Options::new().with_block_size(bs);
            let archive = aceapex::compress(&data, &opts).unwrap();
            assert!(has_record(&archive), "{name}: no line layout record");
            assert!(
                aceapex::decompress(&archive).unwrap() == data,
                "{name} {bs}"
            );
            let mut streamed = Vec::new();
            aceapex::decompress_to(&archive[..], &mut streamed).unwrap();
            assert!(streamed == data, "{name} {bs}: streamed");
            let reader = Reader::new(&archive).unwrap();
            let mut ranges = Vec::new();
            for _ in 0..200 {
                let off = r.below(data.len() as u64);
                let len = 1 + r.below((data.len() as u64 - off).min(40_000));
                let mut buf = vec![0xEEu8; len as usize];
                reader.read_range(off, &mut buf).unwrap();
                assert!(
                    buf == data[off as usize..(off + len) as usize],
                    "{name} {off}+{len}"
                );
                ranges.push((off, len));
            }
            let mut seek = SeekableArchive::open(std::io::Cursor::new(&archive[..])).unwrap();
            let mut got = Vec::new();
            seek.write_ranges(&ranges, &mut got).unwrap();
            let want: Vec<u8> = ranges
                .iter()
                .flat_map(|&(o, l)| data[o as usize..(o + l) as usize].iter().copied())
                .collect();
            assert!(got == want, "{name} {bs}: seekable reader");
        }
    }
}

/// The in-place decode of the GPU's lane kernel (`device::lines::decode_block`: the kept
/// bytes into the block's end, the line ends put back in place) gives every block of every
/// shape, into output poisoned first, and names the same status as the CPU decoder for a
/// block whose layout was overwritten.
#[test]
fn the_in_place_decode_gives_every_block() {
    use aceapex::device::format::STREAM_COUNT;
    use aceapex::device::lz::{BlockFrame, BlockStreams};
    let mut with_layout = 0;
    for (name, data) in shapes() {
        for bs in [16384u32, 4096] {
            let archive = aceapex::compress(&data, &Options::new().with_block_size(bs)).unwrap();
            let a = Archive::parse(&archive).unwrap();
            let mut bufs: [Vec<u8>; STREAM_COUNT] = Default::default();
            for b in 0..a.block_count() {
                aceapex::decode::decode_streams(&a, b, &mut bufs).unwrap();
                let start = b * bs as usize;
                let want = &data[start..(start + bs as usize).min(data.len())];
                let frame = BlockFrame {
                    dst_start: 0,
                    dst_end: want.len(),
                    src_floor: 0,
                    window: a.header().window,
                    match_base: a.header().match_base(),
                };
                let mut out = vec![0xEEu8; want.len()];
                let s = BlockStreams::from_slices(bufs.each_ref().map(|v| v.as_slice()));
                aceapex::device::lines::decode_block(s, &mut out, &frame, true).unwrap();
                assert!(out == want, "{name} {bs}: block {b}");
                if bufs[aceapex::device::format::STREAM_COMMANDS][0] != 0xFF {
                    with_layout += 1;
                    // a run count of 17, and a layout in an archive without the record
                    let mut broken = bufs.clone();
                    broken[aceapex::device::format::STREAM_COMMANDS][0] = 17;
                    let s = BlockStreams::from_slices(broken.each_ref().map(|v| v.as_slice()));
                    let got = aceapex::device::lines::decode_block(s, &mut out, &frame, true);
                    assert_eq!(got, Err(aceapex::device::status::Status::LineLayout));
                    let s = BlockStreams::from_slices(bufs.each_ref().map(|v| v.as_slice()));
                    let got = aceapex::device::lines::decode_block(s, &mut out, &frame, false);
                    assert_eq!(got, Err(aceapex::device::status::Status::NoLeadingReset));
                }
            }
        }
    }
    assert!(with_layout > 50, "{with_layout} blocks with a layout");
}

/// A short last block that holds line ends of a run (the input cut a few bytes into a
/// block, at every phase of its lines): its layout would make the command stream longer
/// than the block allows (FORMAT.md §3.1 rule 3), so it goes without one, and every cut
/// compresses to an archive that parses and comes back whole, under both targets and at two
/// block sizes.
#[test]
fn a_short_last_block_with_line_ends_round_trips() {
    let mut r = Rng(11);
    let body = fasta(&mut r, 60, b"\n", &[20_000], true);
    for (bs, target) in [
        (16384u32, Target::Size),
        (4096, Target::Gpu),
        (16384, Target::Gpu),
    ] {
        let opts = Options::new().with_block_size(bs).with_target(target);
        for shift in 0..61 {
            // the header longer by `shift` bytes moves the line ends by as much
            let mut full = b">".to_vec();
            full.extend(std::iter::repeat_n(b'x', shift));
            full.extend_from_slice(&body[1..]);
            let blocks = (full.len() as u32 - 100) / bs;
            for tail in 1..=8u32 {
                let data = &full[..(blocks * bs + tail) as usize];
                let what = format!("{bs} {target:?} shift {shift} tail {tail}");
                let archive = aceapex::compress(data, &opts).unwrap();
                Archive::parse(&archive).unwrap_or_else(|e| panic!("{what}: {e}"));
                assert!(aceapex::decompress(&archive).unwrap() == data, "{what}");
            }
        }
    }
}

/// Layouts make FASTA smaller: the same input and settings with and without them, at a
/// level of each parser, and the streaming encoder writes the same archive as the whole-input
/// one.
#[test]
fn layouts_make_fasta_smaller_and_stream_the_same() {
    let mut r = Rng(3);
    let data = fasta(&mut r, 60, b"\n", &[400_000, 90_000], true);
    for level in [1, 6, 9] {
        let on = Options::new().with_level(level).settings();
        assert!(on.line_layout);
        let off = Settings {
            line_layout: false,
            ..on.clone()
        };
        let a_on = aceapex::compress_settings(&data, &on, &|_| {}).unwrap();
        let a_off = aceapex::compress_settings(&data, &off, &|_| {}).unwrap();
        assert!(!has_record(&a_off));
        assert!(
            a_on.len() * 100 < a_off.len() * 98,
            "level {level}: {} with layouts, {} without",
            a_on.len(),
            a_off.len()
        );
        assert!(aceapex::decompress(&a_on).unwrap() == data);
    }
    let whole = aceapex::compress(&data, &Options::new()).unwrap();
    let mut streamed = Vec::new();
    aceapex::compress_to(&data[..], &mut streamed, &Options::new()).unwrap();
    assert!(streamed == whole, "streamed archive differs");
}

/// Inputs without runs of equal lines, the GPU target and a window across blocks get no
/// layout and no record.
#[test]
fn no_layout_where_none_is_wanted() {
    let mut r = Rng(5);
    let data = fasta(&mut r, 60, b"\n", &[100_000], true);
    let gpu = aceapex::compress(&data, &Options::new().with_target(Target::Gpu)).unwrap();
    assert!(!has_record(&gpu));
    let cross = aceapex::compress(&data, &Options::new().with_window(Some(65536))).unwrap();
    assert!(!has_record(&cross));
    assert!(aceapex::decompress(&cross).unwrap() == data);
    let ragged: Vec<u8> = (0..20_000u32)
        .flat_map(|i| {
            let mut l = vec![b'A' + (i % 26) as u8; 1 + (i as usize * 7) % 13];
            l.push(b'\n');
            l
        })
        .collect();
    assert!(!has_record(
        &aceapex::compress(&ragged, &Options::new()).unwrap()
    ));
}

/// The archive's sections: header, block table, table section, data section, extension area.
fn sections(archive: &[u8]) -> (FileHeader, [std::ops::Range<usize>; 4]) {
    let a = Archive::parse(archive).unwrap();
    let h = *a.header();
    let bt = 96..96 + a.entry_size() * a.block_count();
    let tables = bt.end..a.data_offset() as usize;
    let data = tables.end..tables.end + h.data_bytes as usize;
    let area = data.end..archive.len();
    (h, [bt, tables, data, area])
}

/// An archive with layouts but without the record (the area's first record removed and the
/// meta checksum recomputed) is refused by the whole-input decoder, the streaming decoder
/// and the reader.
#[test]
fn layouts_without_the_record_are_refused() {
    let mut r = Rng(9);
    let data = fasta(&mut r, 60, b"\n", &[100_000], true);
    let archive = aceapex::compress(&data, &Options::new()).unwrap();
    let (h, [bt, tables, d, area]) = sections(&archive);
    // the record is written first in the area: 8 bytes of header, no payload
    assert_eq!(
        u16::from_le_bytes([archive[area.start], archive[area.start + 1]]),
        EXTENSION_TYPE_LINE_LAYOUT
    );
    let without = aceapex::format::write::assemble(
        h,
        &archive[bt],
        &archive[tables],
        &archive[d],
        &archive[area.start + 8..],
    );
    assert!(!has_record(&without));
    assert!(aceapex::decompress(&without).is_err());
    let mut out = Vec::new();
    assert!(aceapex::decompress_to(&without[..], &mut out).is_err());
    let reader = Reader::new(&without).unwrap();
    let mut buf = vec![0u8; 1000];
    assert!(reader.read_range(0, &mut buf).is_err());
}

/// Damaged layouts fail closed: with the match streams stored raw (so that a layout's bytes
/// lie in the data section as written), every byte of the first blocks' layouts set to
/// other values gives an error or the original bytes, never other bytes.
#[test]
fn damaged_layouts_fail_closed() {
    let mut r = Rng(11);
    let data = fasta(&mut r, 61, b"\r\n", &[60_000], true);
    let opts = Settings {
        raw_match_streams: true,
        line_layout: true,
        level: 5,
        ..Settings::default()
    };
    let archive = aceapex::compress_settings(&data, &opts, &|_| {}).unwrap();
    let a = Archive::parse(&archive).unwrap();
    let (_, [.., d, _]) = sections(&archive);
    let mut at = d.start;
    let mut tried = 0;
    for (b, e) in a.entries().iter().enumerate().take(3) {
        let commands = at + e.stored_len[..STREAM_COMMANDS].iter().sum::<u32>() as usize;
        assert_eq!(
            e.lanes[STREAM_COMMANDS], 0,
            "block {b}: commands stored raw"
        );
        assert_ne!(archive[commands], 0xFF, "block {b} has a layout");
        // the layout: up to its leading reset
        let len = archive[commands..].iter().position(|&c| c == 0xFF).unwrap();
        for i in commands..commands + len {
            for v in [0x00, 0x01, 0x02, 0x11, 0x7F, 0x80, 0xFF, archive[i] ^ 1] {
                let mut bad = archive.clone();
                bad[i] = v;
                tried += 1;
                let block = a.block_range(b);
                let reader = Reader::new(&bad).unwrap();
                let mut buf = vec![0u8; (block.end - block.start) as usize];
                if reader.read_range(block.start, &mut buf).is_ok() {
                    assert!(buf == data[block.start as usize..block.end as usize]);
                }
                if let Ok(all) = aceapex::decompress(&bad) {
                    assert!(all == data);
                }
            }
        }
        at += e.stored_len.iter().take(STREAM_COUNT).sum::<u32>() as usize;
    }
    assert!(tried > 50);
}

/// The record's rules (FORMAT.md §3.8): a second record, one with a payload, one without the
/// must-understand flag and one in an archive whose window crosses blocks are refused; the record alone, on an archive without
/// layouts, is accepted.
#[test]
fn the_record_breaking_a_rule_is_refused() {
    use aceapex::device::format::EXTENSION_MUST_UNDERSTAND;
    use aceapex::format::{with_extensions, Extension};
    let record = |payload: &'static [u8]| Extension {
        kind: EXTENSION_TYPE_LINE_LAYOUT,
        flags: EXTENSION_MUST_UNDERSTAND,
        payload,
    };
    let data = b"no lines here, ".repeat(3000);
    let plain = aceapex::compress(&data, &Options::new()).unwrap();
    assert!(!has_record(&plain));
    let one = with_extensions(&plain, &[record(b"")]).unwrap();
    assert!(has_record(&one));
    assert!(aceapex::decompress(&one).unwrap() == data);
    let two = with_extensions(&one, &[record(b"")]).unwrap();
    assert!(Archive::parse(&two).is_err());
    let payload = with_extensions(&plain, &[record(b"x")]).unwrap();
    assert!(Archive::parse(&payload).is_err());
    let flagless = Extension {
        flags: 0,
        ..record(b"")
    };
    let flagless = with_extensions(&plain, &[flagless]).unwrap();
    assert!(Archive::parse(&flagless).is_err());
    let cross = aceapex::compress(&data, &Options::new().with_window(Some(65536))).unwrap();
    let cross = with_extensions(&cross, &[record(b"")]).unwrap();
    let err = Archive::parse(&cross).err().unwrap().to_string();
    assert!(err.contains("crosses blocks"), "{err}");
    for bad in [two, payload, flagless, cross] {
        let mut out = Vec::new();
        assert!(aceapex::decompress_to(&bad[..], &mut out).is_err());
    }
}
