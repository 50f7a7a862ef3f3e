//! Decode status codes shared by the CPU decoder and the kernels (FORMAT.md §7).
//!
//! Kernels cannot return errors, so every decoder reports one `u32` per block; `OK` is 0 and
//! every other value names the first rule the block broke.

/// A block's decode status; the discriminants are what kernels write per block.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// The block decoded and every rule held.
    Ok = 0,
    /// A rANS slice is shorter than its lane states, has an odd word area, or a state is below `RANS_L`.
    RansHeader = 1,
    /// A rANS slice ran out of renormalisation words.
    RansUnderflow = 2,
    /// A rANS slice left words unread or a lane did not end in its initial state.
    RansTrailer = 3,
    /// A raw slice's stored and decoded lengths differ, or a lane count is out of range.
    SliceMode = 4,
    /// The block's first command is not a reset (0xFF).
    NoLeadingReset = 5,
    /// A literal run reads past the end of the literal stream.
    LiteralsExhausted = 6,
    /// A varint is longer than 5 bytes, exceeds `u32`, or the length/offset stream ended inside one.
    BadVarint = 7,
    /// A match distance is 0, larger than the window, or reaches before the lowest source block.
    BadDistance = 8,
    /// A literal run or match writes past the block's end.
    OutputOverrun = 9,
    /// The commands ended before the block was full, or a stream has bytes left over.
    Trailing = 10,
    /// The block's XXH3-64 does not match the block table.
    Checksum = 11,
    /// A two-bit literal slice is malformed (FORMAT.md §5.7).
    TwoBitSlice = 12,
    /// A block's line layout is malformed, or the archive allows none (FORMAT.md §4.6).
    LineLayout = 13,
    /// Not an error: the block does not fit the dense kernel's shared-memory budget and is
    /// decoded by the lane-per-block kernel instead.
    Fallback = 100,
    /// Not a format error: a match's dependency level is above the wavefront decoder's wave
    /// count (taken from the block table's informative `max_depth`, FORMAT.md §3.1); the
    /// host decodes again with the level the parse measured.
    DepthHint = 101,
}

impl Status {
    /// Maps a kernel status word back to a [`Status`]; unknown values map to `None`.
    pub fn from_u32(v: u32) -> Option<Status> {
        use Status::*;
        Some(match v {
            0 => Ok,
            1 => RansHeader,
            2 => RansUnderflow,
            3 => RansTrailer,
            4 => SliceMode,
            5 => NoLeadingReset,
            6 => LiteralsExhausted,
            7 => BadVarint,
            8 => BadDistance,
            9 => OutputOverrun,
            10 => Trailing,
            11 => Checksum,
            12 => TwoBitSlice,
            13 => LineLayout,
            100 => Fallback,
            101 => DepthHint,
            _ => return None,
        })
    }

    /// One-line description for error messages.
    pub fn describe(self) -> &'static str {
        use Status::*;
        match self {
            Ok => "ok",
            RansHeader => "rANS slice header is malformed (short slice, odd word area, a wide slice's first word area past its end, or state below the lower bound)",
            RansUnderflow => "rANS slice ran out of renormalisation words",
            RansTrailer => "rANS slice has unread words or a lane did not return to its initial state",
            SliceMode => "slice mode is invalid (raw slice with stored != decoded length, or lane count out of range)",
            NoLeadingReset => "block does not start with a history reset command",
            LiteralsExhausted => "literal run reads past the end of the literal stream",
            BadVarint => "length/offset varint is malformed or truncated",
            BadDistance => "match distance is zero, beyond the window or before the lowest source block",
            OutputOverrun => "command writes past the end of the block",
            Trailing => "commands end before the block is full, or a stream has unread bytes",
            TwoBitSlice => "two-bit literal slice is malformed (short slice, bad varint, exception count, position or value)",
            LineLayout => "line layout is malformed (run count, varint, field out of range, or runs past the block's end)",
            Checksum => "block checksum mismatch (damaged, or a block from another position)",
            Fallback => "block needs the lane-per-block decoder (internal, not an error)",
            DepthHint => "a match's dependency level exceeds the wave count from the block table's max_depth hint (internal: the wavefront decoder retries with more waves)",
        }
    }
}
