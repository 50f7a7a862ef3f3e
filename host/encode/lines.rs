//! The encoder's side of line layouts (FORMAT.md §4.6): which line ends of the input a
//! block leaves out of its match layer. A line end is left out where it ends one of at least
//! [`MIN_LINES`] consecutive lines of one length and one line end (a FASTA sequence's lines
//! but its last), so that a genome's matches and literals run over its bases as if it had no
//! line feeds; every other byte, headers and short last lines included, stays data. A batch
//! whose runs leave out less than one byte in [`MIN_SHARE`] gets no layouts.

use super::lz::{parse_segment_in_group, BlockParse, GroupStats};
use crate::device::lines::{BlockLines, LineRun, MAX_END_BYTES, MAX_LINE_RUNS};

/// Fewest consecutive lines of one length whose line ends a layout leaves out: fewer would
/// cost about as much in the layout as their line ends cost as literals.
pub const MIN_LINES: usize = 16;

/// Fewest bytes of line ends, as a share of a batch (one in this many), that make the
/// batch's layouts worth their bytes and the decoders' work of putting line ends back: a
/// genome's lines of up to about 150 bases, not a protein file's few long records.
pub const MIN_SHARE: usize = 160;

/// [`find_runs`] of `data` (one batch), or none where their line ends are fewer than one byte
/// in [`MIN_SHARE`].
pub fn layout_runs(data: &[u8]) -> Vec<TextRun> {
    let runs = find_runs(data);
    let removed: usize = runs.iter().map(|r| r.lines * r.end_len as usize).sum();
    match removed * MIN_SHARE >= data.len() {
        true => runs,
        false => Vec::new(),
    }
}

/// Lines of one length and line end, back to back in the input: the line ends the encoder
/// leaves out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextRun {
    /// Position of the first line's end (its first byte) in the batch.
    pub first_end: usize,
    /// Bytes of each line before its end (at least 1).
    pub line_len: u32,
    /// Bytes of the line end (1 for `\n`, 2 for `\r\n`).
    pub end_len: u32,
    /// Lines in the run.
    pub lines: usize,
}

impl TextRun {
    /// Position of line end `i` of the run.
    fn end_at(&self, i: usize) -> usize {
        self.first_end + i * (self.line_len + self.end_len) as usize
    }
}

/// The runs of at least [`MIN_LINES`] lines of one length in `data`, in order. A line is the
/// bytes up to and including a `\n`; its end is `\r\n` when a `\r` precedes the `\n` inside
/// the line and the line has a byte before it, else `\n`. The bytes after the last `\n`
/// are no line.
pub fn find_runs(data: &[u8]) -> Vec<TextRun> {
    let mut runs = Vec::new();
    // the run being grown: its first end, line length, end length and lines so far
    let mut cur: Option<TextRun> = None;
    let mut start = 0usize;
    let close = |cur: &mut Option<TextRun>, runs: &mut Vec<TextRun>| {
        if let Some(r) = cur.take() {
            if r.lines >= MIN_LINES {
                runs.push(r);
            }
        }
    };
    for nl in memchr::memchr_iter(b'\n', data) {
        let line = nl - start;
        let end_len = if line >= 2 && data[nl - 1] == b'\r' {
            2
        } else {
            1
        };
        let content = (line + 1 - end_len) as u32;
        let at = nl + 1 - end_len;
        match &mut cur {
            Some(r) if content >= 1 && r.line_len == content && r.end_len == end_len as u32 => {
                r.lines += 1
            }
            _ => {
                close(&mut cur, &mut runs);
                if content >= 1 && (content as u64) < 1 << 28 {
                    cur = Some(TextRun {
                        first_end: at,
                        line_len: content,
                        end_len: end_len as u32,
                        lines: 1,
                    });
                }
            }
        }
        start = nl + 1;
    }
    close(&mut cur, &mut runs);
    runs
}

/// The layout of the block `block` (positions in the batch) under `runs` ([`find_runs`] of
/// the batch): the line ends of the runs that lie wholly inside the block, as at most
/// [`MAX_LINE_RUNS`] line runs (those after are kept as data); `None` where it leaves out
/// none, or all but nothing of the block.
pub fn block_layout(runs: &[TextRun], block: std::ops::Range<usize>) -> Option<BlockLines> {
    let mut lines = BlockLines::default();
    let mut pos = block.start;
    let mut removed = 0usize;
    // the first run whose last line end reaches into the block
    let first =
        runs.partition_point(|r| r.end_at(r.lines - 1) + (r.end_len as usize) <= block.start);
    for r in &runs[first..] {
        if r.first_end >= block.end || lines.n as usize == MAX_LINE_RUNS {
            break;
        }
        let step = (r.line_len + r.end_len) as usize;
        // the first and last line ends of the run wholly inside the block
        let lo = if r.first_end >= pos {
            0
        } else {
            (pos - r.first_end).div_ceil(step)
        };
        let fits = |i: usize| r.end_at(i) + r.end_len as usize <= block.end;
        if lo >= r.lines || !fits(lo) {
            continue;
        }
        let hi = if fits(r.lines - 1) {
            r.lines - 1
        } else {
            (block.end - r.end_len as usize - r.first_end) / step
        };
        let mut end = [0u8; MAX_END_BYTES];
        end[..r.end_len as usize].copy_from_slice(&b"\r\n"[2 - r.end_len as usize..]);
        let run = LineRun {
            skip: (r.end_at(lo) - pos) as u32,
            line_len: r.line_len,
            lines: (hi - lo + 1) as u32,
            end_len: r.end_len,
            end,
        };
        lines.runs[lines.n as usize] = run;
        lines.n += 1;
        pos = r.end_at(lo) + run.span() as usize;
        removed += run.removed() as usize;
    }
    if lines.n == 0 || removed >= block.len() {
        return None;
    }
    lines.removed = removed as u32;
    Some(lines)
}

/// The kept bytes of `block` under `lines` (its bytes outside every line end), in order.
pub fn kept_bytes(block: &[u8], lines: &BlockLines) -> Vec<u8> {
    let mut kept = Vec::with_capacity(block.len() - lines.removed as usize);
    let mut at = 0usize;
    for r in lines.runs() {
        let mut gap = r.skip as usize;
        for _ in 0..r.lines {
            kept.extend_from_slice(&block[at..at + gap]);
            at += gap + r.end_len as usize;
            gap = r.line_len as usize;
        }
    }
    kept.extend_from_slice(&block[at..]);
    kept
}

impl super::Plan {
    /// The parse of the block `seg` of `batch` (independent blocks): of its kept bytes, its
    /// line layout written before the commands' leading reset, where `runs` (the batch's
    /// [`find_runs`]) leave some of its line ends out (FORMAT.md §4.6); else of its
    /// bytes.
    pub(super) fn parse_block(
        &self,
        batch: &[u8],
        seg: std::ops::Range<usize>,
        runs: &[TextRun],
        stats: &mut GroupStats,
    ) -> Vec<BlockParse> {
        let Some(layout) = block_layout(runs, seg.clone()) else {
            return parse_segment_in_group(batch, seg, self.bs, &self.params, stats);
        };
        let kept = kept_bytes(&batch[seg.clone()], &layout);
        let mut parses = parse_segment_in_group(&kept, 0..kept.len(), self.bs, &self.params, stats);
        debug_assert_eq!(parses.len(), 1);
        for p in &mut parses {
            let mut commands = Vec::with_capacity(p.commands.len() + 8 * layout.runs().len());
            crate::device::lines::write_layout(layout.runs(), &mut commands);
            commands.extend_from_slice(&p.commands);
            // a command stream is at most one byte longer than its block (FORMAT.md §3.1
            // rule 3): a short block (an input's last) whose layout does not fit goes without
            if commands.len() > seg.len() + 1 {
                return parse_segment_in_group(batch, seg, self.bs, &self.params, stats);
            }
            p.commands = commands;
            // (the block's own start: its sources lie in its kept bytes)
            p.lowest_source = seg.start;
        }
        self.used_lines
            .store(true, std::sync::atomic::Ordering::Relaxed);
        parses
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::lines::expand;

    fn fasta(line: usize, end: &[u8], seqs: &[usize]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut x = 7u64;
        for (i, &len) in seqs.iter().enumerate() {
            out.extend_from_slice(format!(">seq{i} test").as_bytes());
            out.extend_from_slice(end);
            for k in 0..len {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                out.push(b"ACGT"[(x >> 62) as usize]);
                if (k + 1) % line == 0 || k + 1 == len {
                    out.extend_from_slice(end);
                }
            }
        }
        out
    }

    /// Every block of FASTA files of several line widths and line ends, cut at several
    /// block sizes: the layout's kept bytes expand back to the block, and the line ends it
    /// leaves out are exactly the sequence lines' but the last of each sequence.
    #[test]
    fn layouts_expand_to_their_blocks() {
        for (line, end) in [(60, &b"\n"[..]), (61, b"\r\n"), (80, b"\n"), (7, b"\r\n")] {
            let data = fasta(line, end, &[10_000, 5, 3_000, line * 40, 1]);
            let runs = find_runs(&data);
            // by hand: the lines of `line` bases (a sequence's lines but a shorter last one;
            // the 5-base and 1-base sequences have none)
            let want: usize = [10_000, 3_000, line * 40]
                .iter()
                .map(|&n| n / line * end.len())
                .sum();
            for bs in [4096, 1000, 333] {
                let mut removed = 0;
                for s in (0..data.len()).step_by(bs) {
                    let block = s..(s + bs).min(data.len());
                    let Some(lines) = block_layout(&runs, block.clone()) else {
                        continue;
                    };
                    let kept = kept_bytes(&data[block.clone()], &lines);
                    let mut out = vec![0u8; block.len()];
                    expand(&lines, &kept, &mut out);
                    assert_eq!(out, &data[block.clone()], "line {line}, block {block:?}");
                    let mut written = Vec::new();
                    crate::device::lines::write_layout(lines.runs(), &mut written);
                    written.push(0xFF);
                    let (back, _) =
                        crate::device::lines::split_commands(&written, block.len() as u32, true)
                            .unwrap();
                    assert_eq!(back, lines);
                    removed += lines.removed as usize;
                }
                // a `\r\n` that a block's edge cuts stays data; a `\n` is never cut
                let edges = data.len() / bs;
                let cut = if end.len() == 2 { 2 * edges } else { 0 };
                assert!(
                    removed <= want && removed + cut >= want,
                    "{line} {bs}: {removed} {want}"
                );
            }
        }
    }

    #[test]
    fn short_runs_and_ragged_lines_stay_data() {
        let mut data = Vec::new();
        for i in 0..200 {
            data.extend_from_slice(&b"ACGTACGTACGT"[..1 + i % 12]);
            data.push(b'\n');
        }
        assert!(find_runs(&data).is_empty());
        let data = fasta(60, b"\n", &[60 * 15]);
        assert!(find_runs(&data).is_empty(), "15 lines, one run too few");
        let data = fasta(60, b"\n", &[60 * 17]);
        assert_eq!(find_runs(&data).len(), 1);
    }

    /// A protein file's few long records leave out too few bytes for layouts; a genome's
    /// lines of 100 and 150 bases enough, of 170 not.
    #[test]
    fn layouts_need_one_byte_in_160() {
        let mut seqs = vec![300; 400];
        seqs.push(60 * 20);
        let proteins = fasta(60, b"\n", &seqs);
        assert_eq!(find_runs(&proteins).len(), 1);
        assert!(layout_runs(&proteins).is_empty());
        for (line, kept) in [(100, true), (150, true), (170, false)] {
            let genome = fasta(line, b"\n", &[200_000]);
            assert_eq!(!layout_runs(&genome).is_empty(), kept, "{line}");
        }
    }
}
