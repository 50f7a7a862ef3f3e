//! Line layouts (FORMAT.md §4.6): the line ends a block's match layer leaves out and the
//! decoder puts back, so that matches and literals see a genome's bases without its line
//! feeds. The layout is a prefix of the block's command stream, before its leading reset.
//!
//! A layout is a list of *line runs*. Run `k` is `lines` line ends of `end_len` bytes each
//! (the bytes `end`), the first `skip` kept bytes after the previous run's last line end
//! (or after the block's start), each next one `line_len` kept bytes after the one before.
//! The block's *kept* bytes, its bytes outside every line end, are what the match layer
//! decodes (FORMAT.md §4.5 with the kept bytes as the block).

use crate::lz::write_varint;
use crate::status::Status;

/// Most line runs in one block's layout (FORMAT.md §4.6), so that a decoder, and a GPU
/// CTA, holds a layout in a fixed space.
pub const MAX_LINE_RUNS: usize = 16;

/// Most bytes of one line end (`\r\n` is two).
pub const MAX_END_BYTES: usize = 2;

/// One line run of a block's layout (FORMAT.md §4.6).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LineRun {
    /// Kept bytes from the end of the previous run (or the block's start) to its first line
    /// end.
    pub skip: u32,
    /// Kept bytes between two of its line ends (at least 1).
    pub line_len: u32,
    /// Line ends in the run (at least 1).
    pub lines: u32,
    /// Bytes of one line end, 1 to [`MAX_END_BYTES`].
    pub end_len: u32,
    /// The line end's bytes (`end[..end_len]`).
    pub end: [u8; MAX_END_BYTES],
}

impl LineRun {
    /// Bytes from the run's first line end to the end of its last: `(lines - 1) * (line_len
    /// + end_len) + end_len`, in 64 bits (no overflow for 28-bit fields).
    pub fn span(&self) -> u64 {
        (self.lines as u64 - 1) * (self.line_len as u64 + self.end_len as u64) + self.end_len as u64
    }

    /// Bytes of line ends in the run.
    pub fn removed(&self) -> u64 {
        self.lines as u64 * self.end_len as u64
    }
}

/// A block's line layout (FORMAT.md §4.6), as parsed from its command stream.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockLines {
    /// The runs, `runs[..n]`.
    pub runs: [LineRun; MAX_LINE_RUNS],
    /// Number of runs (0: the block has no layout).
    pub n: u32,
    /// Bytes of the block in line ends: the block's length less its kept bytes.
    pub removed: u32,
}

impl BlockLines {
    /// The runs.
    pub fn runs(&self) -> &[LineRun] {
        &self.runs[..self.n as usize]
    }
}

/// Reads a layout varint at `s[*at..]`: the two-bit slices' varint (LEB128 of at most
/// [`MAX_VARINT_BYTES`](crate::two_bit::MAX_VARINT_BYTES) bytes, FORMAT.md §5.7), its errors
/// [`Status::LineLayout`].
fn varint(s: &[u8], at: &mut usize) -> Result<u32, Status> {
    crate::two_bit::varint(s, at, s.len()).map_err(|_| Status::LineLayout)
}

/// Splits a block's command stream into its line layout and its commands (FORMAT.md §4.6):
/// a stream that begins with `0xFF` (a reset) has no layout; otherwise it begins with one,
/// and `layouts` says whether the archive allows them (its extension area has a type-4
/// record, §3.8). `block_len` is the block's length in bytes.
///
/// Errors: [`Status::NoLeadingReset`] for an empty stream, or a layout where the archive
/// allows none; [`Status::LineLayout`] for a layout that breaks a rule of §4.6 (a run count
/// byte of 0 or above [`MAX_LINE_RUNS`], a varint longer than 4 bytes or past the stream's end,
/// a field out of range, runs reaching past the block's end or leaving it no kept byte).
pub fn split_commands(
    commands: &[u8],
    block_len: u32,
    layouts: bool,
) -> Result<(BlockLines, &[u8]), Status> {
    let mut lines = BlockLines::default();
    match commands.first() {
        None => return Err(Status::NoLeadingReset),
        Some(&0xFF) => return Ok((lines, commands)),
        Some(_) if !layouts => return Err(Status::NoLeadingReset),
        Some(_) => {}
    }
    // the run count: one byte, 1 to MAX_LINE_RUNS (never 0xFF, a reset)
    let n = commands[0] as u32;
    if n == 0 || n as usize > MAX_LINE_RUNS {
        return Err(Status::LineLayout);
    }
    let mut at = 1usize;
    let mut pos = 0u64;
    let mut removed = 0u64;
    for run in lines.runs.iter_mut().take(n as usize) {
        let skip = varint(commands, &mut at)?;
        let end_len = varint(commands, &mut at)?;
        if end_len == 0 || end_len as usize > MAX_END_BYTES {
            return Err(Status::LineLayout);
        }
        let mut end = [0u8; MAX_END_BYTES];
        for e in end.iter_mut().take(end_len as usize) {
            *e = *commands.get(at).ok_or(Status::LineLayout)?;
            at += 1;
        }
        let line_len = varint(commands, &mut at)?;
        let count = varint(commands, &mut at)?;
        if line_len == 0 || count == 0 {
            return Err(Status::LineLayout);
        }
        *run = LineRun {
            skip,
            line_len,
            lines: count,
            end_len,
            end,
        };
        pos += skip as u64 + run.span();
        removed += run.removed();
        if pos > block_len as u64 {
            return Err(Status::LineLayout);
        }
    }
    // every block keeps a byte (the match layer then has a block to decode)
    if removed >= block_len as u64 {
        return Err(Status::LineLayout);
    }
    lines.n = n;
    lines.removed = removed as u32;
    Ok((lines, &commands[at..]))
}

/// Writes the layout `runs` (1 to [`MAX_LINE_RUNS`], fields below 2^28) as a command-stream
/// prefix (FORMAT.md §4.6).
pub fn write_layout(runs: &[LineRun], out: &mut impl Extend<u8>) {
    out.extend(core::iter::once(runs.len() as u8));
    for r in runs {
        write_varint(r.skip, out);
        write_varint(r.end_len, out);
        out.extend(r.end[..r.end_len as usize].iter().copied());
        write_varint(r.line_len, out);
        write_varint(r.lines, out);
    }
}

/// Puts the line ends of `lines` back: `kept` is the block's kept bytes (its length less
/// `lines.removed`), `block` the block's bytes to write (FORMAT.md §4.6). The two do not
/// overlap. `lines` is as [`split_commands`] returned it for a block of `block.len()` bytes
/// and `kept.len() == block.len() - lines.removed` (else this panics).
pub fn expand(lines: &BlockLines, kept: &[u8], block: &mut [u8]) {
    assert_eq!(kept.len() + lines.removed as usize, block.len());
    let (mut rd, mut wr) = (0usize, 0usize);
    for r in lines.runs() {
        let e = r.end_len as usize;
        let end = &r.end[..e];
        let mut gap = r.skip as usize;
        for _ in 0..r.lines {
            block[wr..wr + gap].copy_from_slice(&kept[rd..rd + gap]);
            rd += gap;
            wr += gap;
            block[wr..wr + e].copy_from_slice(end);
            wr += e;
            gap = r.line_len as usize;
        }
    }
    block[wr..].copy_from_slice(&kept[rd..]);
}

/// Puts the line ends of `lines` back in place: `block` holds the block's kept bytes at
/// `block[lines.removed..]` and gets the whole block (FORMAT.md §4.6), front to back (every
/// write lands at or before the kept byte it takes, which is then already read). `lines` is
/// as [`split_commands`] returned it for a block of `block.len()` bytes (else this panics).
pub fn expand_in_place(lines: &BlockLines, block: &mut [u8]) {
    let (mut rd, mut wr) = (lines.removed as usize, 0usize);
    for r in lines.runs() {
        let e = r.end_len as usize;
        let mut gap = r.skip as usize;
        for _ in 0..r.lines {
            block.copy_within(rd..rd + gap, wr);
            rd += gap;
            wr += gap;
            block[wr..wr + e].copy_from_slice(&r.end[..e]);
            wr += e;
            gap = r.line_len as usize;
        }
    }
    debug_assert_eq!(rd - wr, 0);
}

/// [`crate::lz::decode_block`] of a block whose command stream may begin with a line layout
/// (FORMAT.md §4.6; `layouts`: the archive has the type-4 record, §3.8): the kept bytes are
/// decoded into the end of `out[frame.dst_start..frame.dst_end]`, then the line ends put
/// back in place ([`expand_in_place`]). For decoders without a scratch buffer (the GPU's
/// lane-per-block kernel). `frame.src_floor` must be `frame.dst_start` (independent blocks).
///
/// Errors: as [`crate::lz::decode_block`], and as [`split_commands`].
pub fn decode_block(
    s: crate::lz::BlockStreams<'_>,
    out: &mut [u8],
    frame: &crate::lz::BlockFrame,
    layouts: bool,
) -> Result<(), Status> {
    let block_len = (frame.dst_end - frame.dst_start) as u32;
    let (lines, commands) = split_commands(s.commands, block_len, layouts)?;
    if lines.n == 0 {
        return crate::lz::decode_block(s, out, frame);
    }
    let kept = crate::lz::BlockFrame {
        dst_start: frame.dst_start + lines.removed as usize,
        src_floor: frame.dst_start + lines.removed as usize,
        ..*frame
    };
    let s = crate::lz::BlockStreams { commands, ..s };
    crate::lz::decode_block(s, out, &kept)?;
    expand_in_place(&lines, &mut out[frame.dst_start..frame.dst_end]);
    Ok(())
}

/// Words a line run takes in a [layout table](table_run).
pub const RUN_WORDS: usize = 5;
const _: () = assert!(crate::dense_layout::line_table_bytes(1) == RUN_WORDS * 4);

/// Line run `k` of `lines` as the five words of a layout table, the form in which a GPU CTA
/// keeps a layout (in shared memory) to find each block position's byte with [`locate`]:
/// the block position of its first line end `f`, its period `line_len + end_len` (saturated:
/// a run of one line end never uses it), its end `e` (one past its last line end), its line
/// end (`end_len | end[0] << 8 | end[1] << 16`) and the line-end bytes of the runs before it.
pub fn table_run(lines: &BlockLines, k: usize) -> [u32; RUN_WORDS] {
    let (mut end, mut before) = (0u64, 0u64);
    for r in &lines.runs()[..k] {
        end += r.skip as u64 + r.span();
        before += r.removed();
    }
    let r = &lines.runs[k];
    let f = end + r.skip as u64;
    [
        f as u32,
        r.line_len.saturating_add(r.end_len),
        (f + r.span()) as u32,
        r.end_len | (r.end[0] as u32) << 8 | (r.end[1] as u32) << 16,
        before as u32,
    ]
}

/// Where the byte at block position `o` of a block with a layout comes from (FORMAT.md
/// §4.6), from its layout table: `word(i)` reads word `i` of `n` runs' [`table_run`]s, and
/// `removed` is the layout's line-end bytes. Returns `(true, byte, 0)` for a line end's
/// byte, else `(false, k, left)`: kept byte `k`, which starts `left` consecutive kept bytes
/// (to the next line end; `u32::MAX` after the last). One division for a position inside a
/// run; the runs before it are passed over.
#[inline(always)]
pub fn locate(word: impl Fn(usize) -> u32, n: u32, removed: u32, o: u32) -> (bool, u32, u32) {
    let mut k = 0usize;
    while k < n as usize {
        let w = k * RUN_WORDS;
        let (f, e) = (word(w), word(w + 2));
        if o < f {
            return (false, o - word(w + 4), f - o);
        }
        if o < e {
            let (p, end) = (word(w + 1), word(w + 3));
            let rel = o - f;
            let q = rel / p;
            let r = rel - q * p;
            let el = end & 0xFF;
            if r < el {
                return (true, end >> (8 + 8 * r) & 0xFF, 0);
            }
            return (false, o - word(w + 4) - (q + 1) * el, p - r);
        }
        k += 1;
    }
    (false, o - removed, u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    extern crate std;
    use std::vec;
    use std::vec::Vec;

    fn run(skip: u32, end: &[u8], line_len: u32, lines: u32) -> LineRun {
        let mut e = [0u8; MAX_END_BYTES];
        e[..end.len()].copy_from_slice(end);
        LineRun {
            skip,
            line_len,
            lines,
            end_len: end.len() as u32,
            end: e,
        }
    }

    /// The format's example (FORMAT.md §4.6): the 19-byte block `ACG\nTACG\nTACG\r\nTT\nA`
    /// as written by hand: two runs, the first of two line feeds (skip 3, lines of 4), the
    /// second one CR LF (skip 4), and the line feed before the last byte kept.
    #[test]
    fn the_format_example_splits_and_expands() {
        let block = b"ACG\nTACG\nTACG\r\nTT\nA";
        let stream = [
            0x02, // two runs
            0x03, 0x01, 0x0A, 0x04, 0x02, // skip 3, end "\n", lines of 4, 2 line ends
            0x04, 0x02, 0x0D, 0x0A, 0x01, 0x01, // skip 4, end "\r\n", (line_len 1), 1 end
            0xFF, 0x11,
        ];
        let (lines, rest) = split_commands(&stream, block.len() as u32, true).unwrap();
        assert_eq!(rest, &[0xFF, 0x11]);
        assert_eq!(lines.runs(), &[run(3, b"\n", 4, 2), run(4, b"\r\n", 1, 1)]);
        assert_eq!(lines.removed, 4);
        let kept = b"ACGTACGTACGTT\nA";
        let mut out = [0u8; 19];
        expand(&lines, kept, &mut out);
        assert_eq!(&out, block);
        let mut written = Vec::new();
        write_layout(lines.runs(), &mut written);
        assert_eq!(written, stream[..12]);
    }

    /// Blocks with random layouts (runs of every shape the rules allow): `expand`,
    /// `expand_in_place` and `locate` over a table of `table_run`s all give the bytes the
    /// layout describes, built here position by position from the rules of §4.6.
    #[test]
    fn expand_in_place_and_locate_agree_with_the_rules() {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut rnd = |m: u32| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % m as u64) as u32
        };
        for _ in 0..2000 {
            let n = 1 + rnd(MAX_LINE_RUNS as u32);
            let mut runs = Vec::new();
            for _ in 0..n {
                let end: &[u8] = match rnd(3) {
                    0 => b"\n",
                    1 => b"\r\n",
                    _ => b"\x00",
                };
                runs.push(run(rnd(5), end, 1 + rnd(9), 1 + rnd(6)));
            }
            // the block by the rules: line end positions, then the kept bytes in order
            let mut is_end = Vec::new();
            for r in &runs {
                is_end.extend(core::iter::repeat_n(None, r.skip as usize));
                for i in 0..r.lines {
                    if i > 0 {
                        is_end.extend(core::iter::repeat_n(None, r.line_len as usize));
                    }
                    is_end.extend(r.end[..r.end_len as usize].iter().map(|&b| Some(b)));
                }
            }
            is_end.extend(core::iter::repeat_n(None, 1 + rnd(7) as usize));
            let mut block = Vec::new();
            let mut kept = Vec::new();
            for x in &is_end {
                match x {
                    Some(b) => block.push(*b),
                    None => {
                        let k = 0x41 + rnd(26) as u8;
                        kept.push(k);
                        block.push(k);
                    }
                }
            }
            let mut stream = Vec::new();
            write_layout(&runs, &mut stream);
            stream.push(0xFF);
            let (lines, rest) = split_commands(&stream, block.len() as u32, true).unwrap();
            assert_eq!(rest, &[0xFF]);
            assert_eq!(lines.removed as usize, block.len() - kept.len());
            let mut out = vec![0xEEu8; block.len()];
            expand(&lines, &kept, &mut out);
            assert_eq!(out, block);
            let mut inplace = vec![0xEEu8; block.len()];
            inplace[lines.removed as usize..].copy_from_slice(&kept);
            expand_in_place(&lines, &mut inplace);
            assert_eq!(inplace, block);
            let table: Vec<u32> = (0..n as usize).flat_map(|k| table_run(&lines, k)).collect();
            let mut next_end = block.len();
            for o in (0..block.len()).rev() {
                let (end, v, left) = locate(|i| table[i], n, lines.removed, o as u32);
                match is_end[o] {
                    Some(b) => {
                        assert_eq!((end, v), (true, b as u32), "{o}");
                        next_end = o;
                    }
                    None => {
                        assert!(!end, "{o}");
                        assert_eq!(kept[v as usize], block[o], "{o}");
                        let to_end = (next_end - o) as u32;
                        if next_end < block.len() {
                            assert_eq!(left, to_end, "{o}");
                        } else {
                            assert!(left >= to_end, "{o}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn a_reset_first_is_no_layout_and_a_layout_needs_the_record() {
        let (lines, rest) = split_commands(&[0xFF, 0x00], 10, false).unwrap();
        assert_eq!((lines.n, rest.len()), (0, 2));
        assert_eq!(split_commands(&[], 10, true), Err(Status::NoLeadingReset));
        let one = [0x01, 0x00, 0x01, 0x0A, 0x01, 0x01, 0xFF];
        assert_eq!(split_commands(&one, 10, false), Err(Status::NoLeadingReset));
        let (lines, rest) = split_commands(&one, 10, true).unwrap();
        assert_eq!(
            (lines.runs(), lines.removed, rest),
            (&[run(0, b"\n", 1, 1)][..], 1, &[0xFF][..])
        );
    }

    #[test]
    fn broken_layouts_are_refused() {
        let bad: &[&[u8]] = &[
            &[0x00, 0xFF],                               // no runs
            &[0x11, 0xFF],                               // 17 runs
            &[0x01, 0x00, 0x00, 0x01, 0x01, 0xFF],       // end of 0 bytes
            &[0x01, 0x00, 0x03, 0x0A, 0x0A, 0x0A, 0x01], // end of 3 bytes
            &[0x01, 0x00, 0x01, 0x0A, 0x00, 0x01, 0xFF], // line_len 0
            &[0x01, 0x00, 0x01, 0x0A, 0x01, 0x00, 0xFF], // no line ends
            &[0x01, 0x00, 0x01, 0x0A, 0x01],             // cut short
            &[0x01, 0x80, 0x80, 0x80, 0x80, 0x01],       // a 5-byte varint
            &[0x81, 0x00, 0x00, 0x01, 0x0A, 0x01, 0x01], // the run count as a varint
            &[0x01, 0x0A, 0x01, 0x0A, 0x01, 0x01, 0xFF], // past the block's end (10 bytes)
            &[0x01, 0x00, 0x01, 0x0A, 0x01, 0x0A, 0xFF], // ten line ends of one kept byte
        ];
        for (i, s) in bad.iter().enumerate() {
            assert_eq!(
                split_commands(s, 10, true).map(|_| ()),
                Err(Status::LineLayout),
                "{i}"
            );
        }
        // five line ends of one kept byte each: half the block, allowed
        let half = [0x01, 0x00, 0x01, 0x0A, 0x01, 0x05, 0xFF];
        assert_eq!(split_commands(&half, 10, true).unwrap().0.removed, 5);
        // the last line end on the block's last byte, one kept byte before it
        let last = [0x01, 0x09, 0x01, 0x0A, 0x01, 0x01, 0xFF];
        assert_eq!(split_commands(&last, 10, true).unwrap().0.removed, 1);
        // every byte a line end: refused (no kept byte)
        assert_eq!(
            split_commands(&[0x01, 0x00, 0x01, 0x0A, 0x01, 0x01, 0xFF], 1, true).map(|_| ()),
            Err(Status::LineLayout)
        );
    }
}
