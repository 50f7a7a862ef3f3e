//! Stage 1 of the dense kernel: a block's match streams into shared memory (from the
//! decoded scratch, or early from the data section for raw slices and self-contained
//! blocks) and its varints turned into values.

#[allow(unused_imports)]
use super::*;

/// Where block `b`'s match streams begin in the data section when they are raw slices
/// inside it ([`crate::own::raw_match_streams_at`]; `e` is the block's entry, `offsets` the
/// blocks' data offsets, read only for a block whose streams are raw). Such a block's match
/// layer needs nothing from the rANS stage, so the dense kernel can load and parse it
/// before the block's hand-off (the rANS stage copies the same bytes into the decoded
/// scratch for the lane kernel).
///
/// # Safety
/// `offsets` holds more than `b` words.
#[inline(always)]
pub(super) unsafe fn early_match_streams(
    e: &BlockEntry,
    offsets: *const u64,
    b: u32,
    data_len: u64,
) -> Option<u64> {
    // SAFETY: the caller's contract.
    crate::own::raw_match_streams_at(e, || unsafe { *offsets.add(b as usize) }, data_len)
}

/// Whether block `b` (entry `e`) is one that [`decode_blocks_dense_sc`] decodes from the data
/// section alone, and where its literal slice then goes in shared memory
/// ([`crate::own::own_slice`], the one rule of the rANS stage, this kernel and the host).
///
/// # Safety
/// `offsets` holds more than `b` words.
#[inline(always)]
pub(super) unsafe fn self_contained(
    e: &BlockEntry,
    offsets: *const u64,
    b: u32,
    data_len: u64,
) -> Option<crate::own::OwnSlice> {
    if !matches!(e.lanes[STREAM_LITERALS], LANES_TWO_BIT | LANES_TWO_BIT_RUNS) {
        return None;
    }
    // SAFETY: the caller's contract.
    crate::own::own_slice(e, unsafe { *offsets.add(b as usize) }, data_len)
}

/// Copies the [`self_contained`] block's literal slice (`o`) from the data section `data` to
/// the end of the command region, in aligned 16-byte words, with the whole CTA (one or two
/// words a thread: one memory latency, beside the match streams' loads).
///
/// # Safety
/// `o` from `own_slice` for this block and `data_len`; `data` 16-aligned and readable up to
/// `data_len` rounded up to a multiple of 16 (the host's padded upload); the block's commands
/// end before `16 * o.dst16` (own_slice).
#[inline(always)]
pub(super) unsafe fn load_own_slice(s: &Smem, data: *const u8, o: &crate::own::OwnSlice, tid: u32) {
    // SAFETY: the words [dst16, dst16 + words) end at the command region's end (own_slice).
    let dst = unsafe { (s.cmd() as *mut u128).add(o.dst16 as usize) };
    // SAFETY: from16 is 16-aligned; from16 + 16 * words is the slice's end rounded up to 16,
    // at most data_len rounded up (own_slice put the slice inside the data section).
    let src = unsafe { data.add(o.from16 as usize) } as *const u128;
    let mut q = tid;
    while q < o.words {
        // SAFETY: q < words (above).
        unsafe { *dst.add(q as usize) = *src.add(q as usize) };
        q += THREADS;
    }
}

/// Copies block `e`'s raw match streams from the data section (`src`, the first byte of its
/// length slice: [`early_match_streams`]) into their stage-1 regions of shared memory, with
/// the whole CTA, four bytes per thread in flight (the four slices lie back to back, so the
/// loads are one coalesced range).
///
/// # Safety
/// `src` holds the four slices' `stored_len` bytes (each equal to its `decoded_len`), each
/// within its region's cap (the dense kernel's `fits`).
#[inline(always)]
pub(super) unsafe fn load_raw_match_streams(s: &Smem, src: *const u8, e: &BlockEntry, tid: u32) {
    const _: () = assert!(
        STREAM_LENGTHS == 1
            && STREAM_OFFSETS == 2
            && STREAM_COMMANDS == 3
            && STREAM_OFFSET_TAILS == 4
    );
    // the slices' ends in the range, and their regions (stage 1's layout)
    let n1 = e.decoded_len[STREAM_LENGTHS] as usize;
    let n2 = n1 + e.decoded_len[STREAM_OFFSETS] as usize;
    let n3 = n2 + e.decoded_len[STREAM_COMMANDS] as usize;
    let n4 = n3 + e.decoded_len[STREAM_OFFSET_TAILS] as usize;
    let dst = |q: usize| -> *mut u8 {
        let (region, before) = if q < n1 {
            (s.lenb(), 0)
        } else if q < n2 {
            (s.offb(), n1)
        } else if q < n3 {
            (s.cmd(), n2)
        } else {
            (s.tailb(), n3)
        };
        // SAFETY: q - before is below its stream's length, within its region's cap.
        unsafe { region.add(q - before) }
    };
    let t = THREADS as usize;
    let mut q = tid as usize;
    while q + 3 * t < n4 {
        // SAFETY (here and below): every index is below n4: inside `src` (the caller's
        // range) and, through `dst`, inside its stream's region.
        let v = unsafe {
            [
                gb(src, q),
                gb(src, q + t),
                gb(src, q + 2 * t),
                gb(src, q + 3 * t),
            ]
        };
        for (j, &x) in v.iter().enumerate() {
            unsafe { *dst(q + j * t) = x };
        }
        q += 4 * t;
    }
    while q < n4 {
        unsafe { *dst(q) = gb(src, q) };
        q += t;
    }
}

/// The byte range `[c0, c1)` of `n` varint bytes that chunk `part` of `parts` takes: equal
/// multiples of 32 bytes (one warp step each), the last chunk shorter or empty.
#[inline(always)]
pub(super) fn varint_chunk(n: usize, parts: usize, part: usize) -> (usize, usize) {
    let per = n.div_ceil(32 * parts) * 32;
    let c0 = core::cmp::min(part * per, n);
    (c0, core::cmp::min(c0 + per, n))
}

/// How many of the bytes `[c0, c1)` have bit 7 equal to `set`, by the warp: with `set`
/// false the varints ending there (continuation bit clear), with `set` true the offset
/// bytes whose distance has a tail.
#[inline(always)]
pub(super) fn count_bit7(bytes: *const u8, c0: usize, c1: usize, lane: u32, set: bool) -> u32 {
    let mut n = 0u32;
    let mut base = c0;
    while base < c1 {
        let i = base + lane as usize;
        // SAFETY: i < c1 <= the bytes of the region.
        let hit = i < c1 && (unsafe { *bytes.add(i) } & 0x80 != 0) == set;
        n += ballot(hit).count_ones();
        base += 32;
    }
    n
}

/// Distance values `[c0, c1)` from their first bytes at `heads` and one-byte tails at
/// `tails` (FORMAT.md §4.2): value `i` is `heads[i] & 0x7F`, plus, when `heads[i]` has bit
/// 7 set, `tails[t] << 7`, where `t` is `first` plus the heads with a tail in `[c0, i)`.
/// A tail byte with bit 7 set (a longer tail) or a tail index at or past `n_tails` gives
/// `Fallback`: the lane kernel's reference decoder then names the error.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(super) fn join_offsets(
    heads: *const u8,
    tails: *const u8,
    n_tails: usize,
    c0: usize,
    c1: usize,
    first: usize,
    vals: *mut u16,
    lane: u32,
) -> Status {
    let below = (1u32 << lane) - 1;
    let mut base = c0;
    let mut t = first;
    let mut bad = false;
    while base < c1 {
        let i = base + lane as usize;
        // SAFETY: i < c1 <= the block's offset bytes.
        let h = if i < c1 { unsafe { *heads.add(i) } } else { 0 };
        let cont = h & 0x80 != 0;
        let m = ballot(cont);
        let mut v = (h & 0x7F) as u32;
        if cont {
            let my = t + (m & below).count_ones() as usize;
            if my < n_tails {
                // SAFETY: my < n_tails tail bytes of the region.
                let tb = unsafe { *tails.add(my) };
                bad |= tb & 0x80 != 0;
                v |= (tb as u32) << 7;
            } else {
                bad = true;
            }
        }
        if i < c1 {
            // SAFETY: i < n_heads <= OFFV_CAP values (the block's `fits` check). v < 2^15
            // (a first byte's 7 bits and one tail byte); a tail byte with bit 7 set makes the
            // block Fallback below, so every value the parse uses is below 2^14.
            unsafe { *vals.add(i) = v as u16 };
        }
        t += m.count_ones() as usize;
        base += 32;
    }
    if ballot(bad) != 0 {
        return Status::Fallback;
    }
    Status::Ok
}

/// Turns the varints ending in bytes `[c0, c1)` of the `n` varint bytes at `bytes` into
/// values: the one ending at byte `i` is value number `first` + (varints ending in
/// `[c0, i)`), stored at `vals` (at most `cap`; more give `Fallback`). A varint may start in
/// an earlier chunk (the look-back reads the bytes before `c0`). Checks FORMAT.md §4.2 (at
/// most 5 bytes, fits u32, no cut-off varint at the end of the stream) but does not fail
/// the block on it: returns the status (`Fallback` or `Ok`) and the number of the first
/// value whose varint breaks a rule (a cut-off varint at the end: the number after the
/// last value), `u32::MAX` where none does. The values before it are the ones a sequential
/// reader gets; the parse reports `BadVarint` at the command that takes that value, as the
/// CPU decoder does (FORMAT.md §4.5 step 2), and not where an earlier rule breaks first or
/// no command takes it (§7: the first rule broken). Called by the whole warp.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(super) fn varints_to_values(
    bytes: *const u8,
    n: usize,
    c0: usize,
    c1: usize,
    first: usize,
    vals: *mut u32,
    cap: usize,
    lane: u32,
) -> (Status, u32) {
    let below = (1u32 << lane) - 1;
    let mut base = c0;
    let mut idx = first;
    // warp-uniform: the first broken varint's value number
    let mut first_bad = u32::MAX;
    let mut over = false;
    while base < c1 {
        let i = base + lane as usize;
        // SAFETY: i < c1 <= n bytes of the region.
        let byte = if i < c1 {
            unsafe { *bytes.add(i) }
        } else {
            0x80
        };
        let is_end = i < c1 && byte & 0x80 == 0;
        let m = ballot(is_end);
        let mut bad = false;
        if is_end {
            // look back over at most 4 continuation bytes
            let mut v: u32 = 0;
            let mut len = 1usize;
            while len <= 5 && i >= len && unsafe { *bytes.add(i - len) } & 0x80 != 0 {
                len += 1;
            }
            if len > 5 {
                bad = true;
            } else {
                for j in 0..len {
                    // SAFETY: i + 1 - len + j <= i < n.
                    let bj = unsafe { *bytes.add(i + 1 - len + j) };
                    if j == 4 && bj > 0x0F {
                        bad = true;
                    }
                    v |= ((bj & 0x7F) as u32) << (7 * j as u32);
                }
            }
            let my = idx + (m & below).count_ones() as usize;
            if my < cap {
                // SAFETY: my < cap values in the region.
                unsafe { *vals.add(my) = v };
            } else {
                over = true;
            }
        }
        let bads = ballot(bad);
        if first_bad == u32::MAX && bads != 0 {
            // the lowest broken lane's value number (lanes hold values in order)
            let j = bads.trailing_zeros();
            first_bad = (idx + (m & ((1u32 << j) - 1)).count_ones() as usize) as u32;
        }
        idx += m.count_ones() as usize;
        base += 32;
    }
    // the stream's last byte must end a varint (checked by the chunk holding it): the
    // cut-off varint is the value after the last one
    // SAFETY: n >= 1 and n - 1 < c1 <= n.
    if first_bad == u32::MAX
        && n > 0
        && c1 == n
        && c0 < n
        && unsafe { *bytes.add(n - 1) } & 0x80 != 0
    {
        first_bad = idx as u32;
    }
    if ballot(over) != 0 {
        // more values than the region holds (a valid block may have them): the lane
        // kernel decodes the block
        return (Status::Fallback, first_bad);
    }
    (Status::Ok, first_bad)
}
