//! Blocks with a line layout (FORMAT.md §4.6) on the CPU: the layout split off the command
//! stream, the kept bytes match-decoded into a scratch buffer (the fast path, whose wild
//! copies write past the kept bytes' end), the line ends put back into the block's place; the
//! reference path decodes in place, as the GPU's lane kernel does. Every CPU path decodes a
//! block's match layer through this module.

use super::lz::{self, PaddedStreams, WILD_COPY_MARGIN};
use crate::device::format::CMD_RESET;
use crate::device::lines::{expand, split_commands, BlockLines};
use crate::device::lz::{BlockFrame, BlockStreams};
use crate::device::status::Status;
use crate::format::Archive;
use std::cell::RefCell;

thread_local! {
    /// A block's kept bytes, before its line ends are put back.
    static KEPT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// The layout at the start of block `b`'s command stream `commands` (FORMAT.md §4.6), for
/// the block `frame` places, and the commands after it; noted on `a` when there is one.
fn split<'s>(
    a: &Archive<'_>,
    b: usize,
    commands: &'s [u8],
    frame: &BlockFrame,
) -> Result<(BlockLines, &'s [u8]), Status> {
    let block_len = (frame.dst_end - frame.dst_start) as u32;
    let (lines, rest) = split_commands(commands, block_len, a.line_layouts)?;
    if lines.n > 0 {
        a.note_line_layout(b);
    }
    Ok((lines, rest))
}

/// The kept bytes' frame: the block's kept bytes alone at the start of a scratch buffer,
/// its own source floor (an archive with line layouts has independent blocks, §3.8).
fn kept_frame(frame: &BlockFrame, lines: &BlockLines) -> BlockFrame {
    let n = frame.dst_end - frame.dst_start - lines.removed as usize;
    BlockFrame {
        dst_start: 0,
        dst_end: n,
        src_floor: 0,
        ..*frame
    }
}

/// Runs `decode` on a scratch buffer of the kept bytes' frame, then puts the line ends back
/// into `out`'s block.
fn through_kept(
    lines: &BlockLines,
    out: &mut [u8],
    frame: &BlockFrame,
    decode: impl FnOnce(&mut [u8], &BlockFrame) -> Result<(), Status>,
) -> Result<(), Status> {
    let kf = kept_frame(frame, lines);
    KEPT.with(|k| {
        let mut kept = k.borrow_mut();
        // (grown, never cleared: the decoder writes every byte it is read back from)
        let need = kf.dst_end + WILD_COPY_MARGIN;
        if kept.len() < need {
            kept.resize(need, 0);
        }
        let kept = &mut kept[..need];
        decode(kept, &kf)?;
        expand(
            lines,
            &kept[..kf.dst_end],
            &mut out[frame.dst_start..frame.dst_end],
        );
        Ok(())
    })
}

/// [`lz::decode_block_fast`] of block `b` of `a` (its entropy-decoded streams `s`, placed in
/// `out` by `frame` as for the match layer alone), through its line layout where its command
/// stream begins with one (FORMAT.md §4.6); notes the layout on `a`.
///
/// Errors: as [`lz::decode_block_fast`], and [`Status::LineLayout`] /
/// [`Status::NoLeadingReset`] for a layout that breaks §4.6 or that the archive does not
/// allow.
pub fn decode_block_fast(
    a: &Archive<'_>,
    b: usize,
    s: &PaddedStreams<'_>,
    out: &mut [u8],
    frame: &BlockFrame,
) -> Result<(), Status> {
    let (lines, rest) = split(a, b, s.commands.data(), frame)?;
    if lines.n == 0 {
        return lz::decode_block_fast(s, out, frame);
    }
    let s = PaddedStreams {
        commands: s.commands.skip(s.commands.data().len() - rest.len()),
        ..*s
    };
    through_kept(&lines, out, frame, |kept, kf| {
        lz::decode_block_fast(&s, kept, kf)
    })
}

/// The reference decode of block `b` of `a`: `aceapex_device::lines::decode_block`, the GPU
/// lane kernel's (a line layout's kept bytes decoded into the block's end by
/// `aceapex_device::lz::decode_block`, its line ends then put back in place); notes the
/// layout on `a` where the block has one.
///
/// Errors: as [`decode_block_fast`].
pub fn decode_block_reference(
    a: &Archive<'_>,
    b: usize,
    s: BlockStreams<'_>,
    out: &mut [u8],
    frame: &BlockFrame,
) -> Result<(), Status> {
    crate::device::lines::decode_block(s, out, frame, a.line_layouts)?;
    // (decoded with a layout: a first command byte other than the reset)
    if s.commands.first() != Some(&CMD_RESET) {
        a.note_line_layout(b);
    }
    Ok(())
}
