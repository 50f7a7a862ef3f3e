//! LEB128 varints (FORMAT.md §4.2), as both the encoder and the decoder use them: the reader
//! and writer are the device crate's (shared with the kernels), the length is the encoder's
//! cost model's.

pub use crate::device::lz::{read_varint, write_varint};

/// Bytes of the LEB128 varint of `v` (1 to 5).
#[inline(always)]
pub fn varint_len(v: u32) -> i32 {
    1 + ((32 - v.leading_zeros()) as i32 - 1).max(0) / 7
}
