//! Interleaved static rANS, decode side (FORMAT.md §5), shared by the CPU decoder and kernels.
//!
//! A slice coded with `lanes` lanes stores `lanes` little-endian `u32` states, then 16-bit
//! little-endian renormalisation words. Symbol `i` belongs to lane `i % lanes`; decoding walks
//! `i = 0..n` in order and a lane whose state drops below [`RANS_L`] takes the next word. So
//! one warp decodes a slice with lane `j` on thread `j`, taking words in lane order.

use crate::format::{DecodeTable, MAX_LANES, PROB_BITS, PROB_SCALE, RANS_L, STREAM_COUNT};
use crate::status::Status;

/// Most warps per CTA of the GPU rANS stage (`rans_decode_slices` in `dense.rs`): each warp
/// decodes one block per round, and a CTA's blocks of a round are consecutive, so they
/// share a table group unless the group size is not a multiple of the warp count
/// (PERFORMANCE.md, seventh session). The host takes 8, or 16 for archives whose blocks
/// would need a second round of 8-warp CTAs (`gpu::launch::rans_warps_per_cta`).
pub const KERNEL_MAX_WARPS: u32 = 16;

/// CTAs of the GPU rANS stage one SM holds: [`KERNEL_SMEM_BYTES`] of shared memory each.
pub const KERNEL_CTAS_PER_SM: u32 = 2;

/// Dynamic shared memory of the GPU rANS stage: the decode table of each stream of the
/// round's table group, staged once per round (80 KiB; two CTAs per SM).
pub const KERNEL_SMEM_BYTES: usize = STREAM_COUNT * core::mem::size_of::<DecodeTable>();

/// One rANS decode step on `x`: returns the symbol and updates `x` (before renormalisation).
#[inline(always)]
pub fn step(table: &DecodeTable, x: &mut u32) -> u8 {
    let e = table.slots[(*x & (PROB_SCALE - 1)) as usize];
    let freq = ((e >> 8) & 0xFFF) + 1;
    *x = freq * (*x >> PROB_BITS) + (e >> 20);
    e as u8
}

/// Reads `lanes` initial states from the front of `slice`; returns them and the word area.
///
/// Errors: [`Status::RansHeader`] when the slice is too short, the word area has odd length,
/// or a state is below [`RANS_L`]; [`Status::SliceMode`] when `lanes` is not `1..=MAX_LANES`.
#[inline]
pub fn read_states(
    slice: &[u8],
    lanes: usize,
) -> Result<([u32; MAX_LANES as usize], &[u8]), Status> {
    if lanes == 0 || lanes > MAX_LANES as usize {
        return Err(Status::SliceMode);
    }
    let head = lanes * 4;
    if slice.len() < head || !(slice.len() - head).is_multiple_of(2) {
        return Err(Status::RansHeader);
    }
    let mut states = [0u32; MAX_LANES as usize];
    for (j, s) in states.iter_mut().enumerate().take(lanes) {
        let b = &slice[j * 4..j * 4 + 4];
        *s = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        if *s < RANS_L {
            return Err(Status::RansHeader);
        }
    }
    Ok((states, &slice[head..]))
}

/// Decodes a whole rANS slice into `out` (its length is the decoded length).
///
/// Fails closed: every word must be consumed and every lane must end in state [`RANS_L`],
/// which the encoder starts from, so most corruptions are caught even in a raw-looking stream.
pub fn decode_slice(
    slice: &[u8],
    lanes: usize,
    table: &DecodeTable,
    out: &mut [u8],
) -> Result<(), Status> {
    let (mut states, words) = read_states(slice, lanes)?;
    let nwords = words.len() / 2;
    let mut wp = 0usize;
    let mut chunks = out.chunks_mut(lanes);
    for chunk in &mut chunks {
        for (x, o) in states.iter_mut().zip(chunk.iter_mut()) {
            *o = step(table, x);
            if *x < RANS_L {
                if wp >= nwords {
                    return Err(Status::RansUnderflow);
                }
                let w = u16::from_le_bytes([words[2 * wp], words[2 * wp + 1]]) as u32;
                *x = (*x << 16) | w;
                wp += 1;
            }
        }
    }
    if wp != nwords || states[..lanes].iter().any(|&x| x != RANS_L) {
        return Err(Status::RansTrailer);
    }
    Ok(())
}
