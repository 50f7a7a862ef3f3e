//! The match layer (FORMAT.md §4): command grammar, varints, repeat history, and a sequential
//! reference decoder of one block shared by the CPU decoder and the lane-per-block kernels.

use crate::format::*;
use crate::status::Status;

/// Streams of one block after entropy decoding.
#[derive(Clone, Copy)]
pub struct BlockStreams<'a> {
    /// Literal bytes, consumed in order by literal runs.
    pub literals: &'a [u8],
    /// LEB128 varints: match lengths minus the match base (0xFE) or minus the base + 15
    /// (escaped repeats).
    pub lengths: &'a [u8],
    /// The first byte of each new match's distance varint (FORMAT.md §4.2).
    pub offsets: &'a [u8],
    /// Command bytes.
    pub commands: &'a [u8],
    /// The remaining bytes of the distance varints whose first byte has bit 7 set, in order.
    pub offset_tails: &'a [u8],
}

impl<'a> BlockStreams<'a> {
    /// The streams from an array in `STREAM_*` order (FORMAT.md §1).
    #[inline(always)]
    pub fn from_slices(s: [&'a [u8]; STREAM_COUNT]) -> Self {
        BlockStreams {
            literals: s[STREAM_LITERALS],
            lengths: s[STREAM_LENGTHS],
            offsets: s[STREAM_OFFSETS],
            commands: s[STREAM_COMMANDS],
            offset_tails: s[STREAM_OFFSET_TAILS],
        }
    }
}

/// Where a block's bytes go and what its matches may read.
///
/// Positions are indices into the output slice given to [`decode_block`]; `dst_start` is where
/// the block's first byte goes, `dst_end` one past its last, and `src_floor` the lowest index a
/// match source may reach (the start of the block's lowest source block).
#[derive(Clone, Copy, Debug)]
pub struct BlockFrame {
    /// Output index of the block's first byte.
    pub dst_start: usize,
    /// Output index one past the block's last byte.
    pub dst_end: usize,
    /// Lowest output index a match may read.
    pub src_floor: usize,
    /// Largest distance allowed (header `window`).
    pub window: u32,
    /// The archive's match base (FORMAT.md §2, [`FileHeader::match_base`]): length codes
    /// are relative to it. 4, 5 or 6 in a validated archive.
    pub match_base: u32,
}

/// Reads one LEB128 varint of at most 5 bytes that fits a `u32` (FORMAT.md §4.2).
#[inline(always)]
pub fn read_varint(buf: &[u8], pos: &mut usize) -> Result<u32, Status> {
    read_varint_rest(buf, pos, 0, 0)
}

/// Reads a varint whose first `shift / 7` bytes were already read into `v` (with bit 7 set
/// on the last of them) from `buf` at `*pos`; the rules of [`read_varint`] count all bytes.
#[inline(always)]
fn read_varint_rest(
    buf: &[u8],
    pos: &mut usize,
    mut v: u32,
    mut shift: u32,
) -> Result<u32, Status> {
    loop {
        let Some(&b) = buf.get(*pos) else {
            return Err(Status::BadVarint);
        };
        *pos += 1;
        if shift == 28 && b > 0x0F {
            // the fifth byte may only carry the top 4 bits and no continuation
            return Err(Status::BadVarint);
        }
        v |= ((b & 0x7F) as u32) << shift;
        if b & 0x80 == 0 {
            return Ok(v);
        }
        shift += 7;
    }
}

/// Reads one distance (FORMAT.md §4.2): the varint's first byte from `heads` at
/// `*head_pos`, and, when its bit 7 is set, its remaining bytes from `tails` at `*tail_pos`.
/// The rules of [`read_varint`] apply to the whole varint (at most 5 bytes in all).
#[inline(always)]
pub fn read_offset(
    heads: &[u8],
    head_pos: &mut usize,
    tails: &[u8],
    tail_pos: &mut usize,
) -> Result<u32, Status> {
    let Some(&h) = heads.get(*head_pos) else {
        return Err(Status::BadVarint);
    };
    *head_pos += 1;
    if h & 0x80 == 0 {
        return Ok(h as u32);
    }
    read_varint_rest(tails, tail_pos, (h & 0x7F) as u32, 7)
}

/// Appends `v` as a LEB128 varint (encoder side).
#[inline]
pub fn write_varint(v: u32, out: &mut impl Extend<u8>) {
    // the usual case, one byte
    if v < 0x80 {
        out.extend([v as u8]);
        return;
    }
    let mut v = v;
    let mut bytes = [0u8; VARINT_MAX_BYTES];
    let mut n = 0;
    loop {
        let b = (v & 0x7F) as u8;
        v >>= 7;
        if v == 0 {
            bytes[n] = b;
            n += 1;
            break;
        }
        bytes[n] = b | 0x80;
        n += 1;
    }
    out.extend(bytes[..n].iter().copied());
}

/// Appends distance `d` (encoder side, FORMAT.md §4.2): its varint's first byte to `heads`,
/// the rest to `tails`.
#[inline]
pub fn write_offset(d: u32, heads: &mut impl Extend<u8>, tails: &mut impl Extend<u8>) {
    if d < 0x80 {
        heads.extend([d as u8]);
    } else {
        heads.extend([(d as u8) | 0x80]);
        write_varint(d >> 7, tails);
    }
}

/// The 4-entry repeat-distance history (FORMAT.md §4.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct History(pub [u32; 4]);

impl History {
    /// The state after a reset command.
    pub const RESET: History = History(HISTORY_RESET);

    /// A new match with distance `d`: shift and put `d` in front.
    #[inline(always)]
    pub fn push(&mut self, d: u32) {
        self.0 = [d, self.0[0], self.0[1], self.0[2]];
    }

    /// A repeat of slot `i`: returns the distance and moves it to the front.
    #[inline(always)]
    pub fn take(&mut self, i: usize) -> u32 {
        let h = self.0;
        let d = h[i & 3];
        self.0 = match i & 3 {
            0 => h,
            1 => [h[1], h[0], h[2], h[3]],
            2 => [h[2], h[0], h[1], h[3]],
            _ => [h[3], h[0], h[1], h[2]],
        };
        d
    }
}

/// A decoded command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// `n` literals (1..=128).
    Literals(u32),
    /// A match of `len` bytes at distance `dist`.
    Match {
        /// Backward distance in bytes.
        dist: u32,
        /// Length in bytes (>= the match base).
        len: u32,
    },
    /// History reset.
    Reset,
}

/// Sequential command cursor over one block's streams: yields resolved commands.
pub struct Parser<'a> {
    s: BlockStreams<'a>,
    /// Next command byte.
    pub cmd_pos: usize,
    /// Next length-stream byte.
    pub len_pos: usize,
    /// Next offset-stream byte.
    pub off_pos: usize,
    /// Next offset-tail byte.
    pub tail_pos: usize,
    /// Repeat history.
    pub history: History,
    /// Match base (FORMAT.md §4.1).
    base: u32,
}

impl<'a> Parser<'a> {
    /// A parser at the start of a block whose archive has match base `base`.
    pub fn new(s: BlockStreams<'a>, base: u32) -> Self {
        Parser {
            s,
            base,
            cmd_pos: 0,
            len_pos: 0,
            off_pos: 0,
            tail_pos: 0,
            history: History::RESET,
        }
    }

    /// Next command, `Ok(None)` at the end of the command stream.
    #[inline(always)]
    pub fn next_command(&mut self) -> Result<Option<Command>, Status> {
        let Some(&c) = self.s.commands.get(self.cmd_pos) else {
            return Ok(None);
        };
        self.cmd_pos += 1;
        Ok(Some(match c {
            0x00..=0x7F => Command::Literals(c as u32 + 1),
            0x80..=0xBF => {
                let slot = ((c >> 4) & 3) as usize;
                let nib = (c & 0x0F) as u32;
                // checked: a frame's base is 4-6 from a validated archive, anything from a
                // direct caller
                let mut len = self.base.checked_add(nib).ok_or(Status::OutputOverrun)?;
                if nib == REPEAT_LEN_ESCAPE {
                    let extra = read_varint(self.s.lengths, &mut self.len_pos)?;
                    len = len.checked_add(extra).ok_or(Status::OutputOverrun)?;
                }
                Command::Match {
                    dist: self.history.take(slot),
                    len,
                }
            }
            0xC0..=0xFD => {
                let len = self
                    .base
                    .checked_add((c & 0x3F) as u32)
                    .ok_or(Status::OutputOverrun)?;
                Command::Match {
                    dist: self.new_distance()?,
                    len,
                }
            }
            CMD_MATCH_LONG => {
                let extra = read_varint(self.s.lengths, &mut self.len_pos)?;
                let len = self.base.checked_add(extra).ok_or(Status::OutputOverrun)?;
                Command::Match {
                    dist: self.new_distance()?,
                    len,
                }
            }
            _ => {
                self.history = History::RESET;
                Command::Reset
            }
        }))
    }

    /// A new match's distance (FORMAT.md §4.2), pushed onto the history (§4.3).
    #[inline(always)]
    fn new_distance(&mut self) -> Result<u32, Status> {
        let dist = read_offset(
            self.s.offsets,
            &mut self.off_pos,
            self.s.offset_tails,
            &mut self.tail_pos,
        )?;
        self.history.push(dist);
        Ok(dist)
    }

    /// True when the length, offset and offset-tail streams were consumed exactly.
    pub fn streams_consumed(&self) -> bool {
        self.len_pos == self.s.lengths.len()
            && self.off_pos == self.s.offsets.len()
            && self.tail_pos == self.s.offset_tails.len()
    }
}

/// Checks a match against the frame (FORMAT.md §4.4) and returns its source index.
#[inline(always)]
pub fn check_match(
    frame: &BlockFrame,
    cursor: usize,
    dist: u32,
    len: u32,
) -> Result<usize, Status> {
    if dist == 0 || dist > frame.window || (dist as usize) > cursor - frame.src_floor {
        return Err(Status::BadDistance);
    }
    if len as usize > frame.dst_end - cursor {
        return Err(Status::OutputOverrun);
    }
    Ok(cursor - dist as usize)
}

/// Copies a match forward byte by byte semantics: with `dist < len` the first `dist` bytes
/// repeat as a period (`out[dst + k] = out[src + k % dist]`).
#[inline(always)]
pub fn copy_match(out: &mut [u8], src: usize, dst: usize, len: usize) {
    let dist = dst - src;
    if dist >= len {
        out.copy_within(src..src + len, dst);
    } else if dist == 1 {
        let b = out[src];
        out[dst..dst + len].fill(b);
    } else {
        // period fill by doubling: each copy_within is non-overlapping
        let mut done = 0;
        let mut chunk = dist;
        while done < len {
            let n = chunk.min(len - done);
            out.copy_within(src..src + n, dst + done);
            done += n;
            chunk = dist * ((dst + done - src) / dist);
        }
    }
}

/// What a block walk does with each validated command (see [`walk_block`]).
///
/// Positions are indices of the frame's output space (absolute for cross-block frames).
pub trait BlockSink {
    /// `n` literals from `literals[lit_pos..]` go to `cursor..cursor + n` (already checked
    /// against the literal stream and the block end).
    fn literals(&mut self, cursor: usize, lit_pos: usize, n: usize) -> Result<(), Status>;
    /// A match of `len` bytes from `src = cursor - dist` goes to `cursor` (already checked by
    /// [`check_match`]).
    fn copy(&mut self, cursor: usize, src: usize, dist: u32, len: usize) -> Result<(), Status>;
}

/// Walks one block's commands in order, enforcing every rule of FORMAT.md §4.4-§4.5 (leading
/// reset, literal stream bounds, distances against the frame, block end, streams consumed
/// exactly), and hands each command to `sink`. The one place these rules live: the
/// sequential decoder ([`decode_block`]) and the wavefront parse share it.
#[inline(always)]
pub fn walk_block<S: BlockSink>(
    s: BlockStreams<'_>,
    frame: &BlockFrame,
    sink: &mut S,
) -> Result<(), Status> {
    if s.commands.first() != Some(&CMD_RESET) {
        return Err(Status::NoLeadingReset);
    }
    let mut p = Parser::new(s, frame.match_base);
    let mut cursor = frame.dst_start;
    let mut lit_pos = 0usize;
    while let Some(cmd) = p.next_command()? {
        match cmd {
            Command::Literals(n) => {
                let n = n as usize;
                if n > s.literals.len() - lit_pos {
                    return Err(Status::LiteralsExhausted);
                }
                if n > frame.dst_end - cursor {
                    return Err(Status::OutputOverrun);
                }
                sink.literals(cursor, lit_pos, n)?;
                lit_pos += n;
                cursor += n;
            }
            Command::Match { dist, len } => {
                let src = check_match(frame, cursor, dist, len)?;
                sink.copy(cursor, src, dist, len as usize)?;
                cursor += len as usize;
            }
            Command::Reset => {}
        }
    }
    if cursor != frame.dst_end || lit_pos != s.literals.len() || !p.streams_consumed() {
        return Err(Status::Trailing);
    }
    Ok(())
}

/// The sink of the sequential decoder: literals and matches copied into the output.
struct CopySink<'a, 'b> {
    out: &'a mut [u8],
    literals: &'b [u8],
}

impl BlockSink for CopySink<'_, '_> {
    #[inline(always)]
    fn literals(&mut self, cursor: usize, lit_pos: usize, n: usize) -> Result<(), Status> {
        self.out[cursor..cursor + n].copy_from_slice(&self.literals[lit_pos..lit_pos + n]);
        Ok(())
    }
    #[inline(always)]
    fn copy(&mut self, cursor: usize, src: usize, _dist: u32, len: usize) -> Result<(), Status> {
        copy_match(self.out, src, cursor, len);
        Ok(())
    }
}

/// Decodes one block's match layer into `out[frame.dst_start..frame.dst_end]`.
///
/// Bytes below `dst_start` down to `src_floor` must already hold decoded output. Fails
/// closed on every rule of FORMAT.md §4; on error the block's bytes are unspecified.
pub fn decode_block(s: BlockStreams<'_>, out: &mut [u8], frame: &BlockFrame) -> Result<(), Status> {
    walk_block(
        s,
        frame,
        &mut CopySink {
            out,
            literals: s.literals,
        },
    )
}
