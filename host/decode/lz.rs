//! Fast match-layer decoder of one block, output- and status-equivalent to
//! [`aceapex_device::lz::decode_block`] (the reference; FORMAT.md §4).
//!
//! Same commands and the same checks in the same order, so every malformed block fails with
//! the reference's [`Status`] (the common path tests several conditions at once and falls
//! back to the reference's checks, in its order, when any fails). What differs is how bytes
//! move and how the loop branches:
//!
//! - blocks with many commands (text, FASTQ) run a loop that puts a literal step before
//!   every match, 0 bytes long when no run comes first, so whether one does is not a branch;
//!   sparse blocks (DNA, protein) branch on each command's kind (`dense_commands`);
//! - varints are read branch-free apart from one error test, with BMI2 `pext` where it is
//!   fast (`fast_pext`), and the repeat history uses selects;
//! - the decoded streams carry [`STREAM_PAD`] readable bytes after their end ([`Padded`]), so
//!   literal runs copy in 16-byte chunks that may read past the run, and varints read a
//!   fixed window (a varint running past the stream end is still [`Status::BadVarint`]);
//! - when at least `len + WILD_COPY_MARGIN` bytes are left before the block's end, literal
//!   runs and matches write whole 16-byte (or 8-byte) chunks that may spill up to 31 bytes past
//!   `len` — bytes the following commands overwrite, and never past `frame.dst_end`, so
//!   nothing outside the block is touched; closer to the end the exact copies of the reference
//!   run instead (cold path);
//! - matches: distance >= 16 copies 16-byte chunks (each chunk reads only bytes written
//!   before it), 8..=15 copies 8-byte chunks, 1..=7 builds a 16-byte periodic pattern and
//!   stores it every `16 - 16 % dist` bytes (the largest multiple of the period in 16).

use crate::device::format::*;
use crate::device::lz::{copy_match, BlockFrame, History};
use crate::device::status::Status;

/// Readable bytes every decoded stream buffer carries past its logical end.
pub const STREAM_PAD: usize = 32;

/// Bytes that must remain between the end of a copy and the block's end for the chunked
/// (spilling) copies; the largest spill is 31 bytes (two 16-byte chunks for a 1-byte copy).
pub const WILD_COPY_MARGIN: usize = 32;

const _: () = assert!(STREAM_PAD >= WILD_COPY_MARGIN && STREAM_PAD >= VARINT_MAX_BYTES);

/// A decoded stream: `len` bytes of data followed by at least [`STREAM_PAD`] more readable
/// bytes (their values do not matter).
#[derive(Clone, Copy)]
pub struct Padded<'a> {
    bytes: &'a [u8],
    len: usize,
}

impl<'a> Padded<'a> {
    /// The first `len` bytes of `bytes` as a stream; `None` when `bytes` lacks the padding.
    pub fn new(bytes: &'a [u8], len: usize) -> Option<Padded<'a>> {
        (bytes.len() >= len.checked_add(STREAM_PAD)?).then_some(Padded { bytes, len })
    }

    /// The stream's bytes (without the padding).
    pub fn data(&self) -> &'a [u8] {
        &self.bytes[..self.len]
    }

    /// The stream without its first `n` bytes (at most its length), padded as before.
    pub fn skip(&self, n: usize) -> Padded<'a> {
        let n = n.min(self.len);
        Padded {
            bytes: &self.bytes[n..],
            len: self.len - n,
        }
    }
}

/// A block's decoded streams, padded.
#[derive(Clone, Copy)]
pub struct PaddedStreams<'a> {
    /// Literal bytes.
    pub literals: Padded<'a>,
    /// Length varints.
    pub lengths: Padded<'a>,
    /// First bytes of the distance varints.
    pub offsets: Padded<'a>,
    /// Command bytes.
    pub commands: Padded<'a>,
    /// Remaining bytes of the distance varints (FORMAT.md §4.2).
    pub offset_tails: Padded<'a>,
}

/// Reads one varint at `*pos` with the rules of [`aceapex_device::lz::read_varint`].
///
/// Branchless apart from the error check: an 8-byte window (it may reach into the padding)
/// is read as one word, the varint's length is the position of the first byte without a
/// continuation bit, and the 7-bit groups are gathered with shifts and masks. (Offsets are
/// one or two bytes in about equal numbers on text, so a branch on the length mispredicts
/// often.) Every malformed form is [`Status::BadVarint`], as in the reference: no
/// terminating byte among the first [`VARINT_MAX_BYTES`], a fifth byte above `0x0F`, or a
/// varint that ends past the stream's end. `*pos` only advances on success, so it never
/// exceeds `s.len`.
///
/// With `PEXT` the groups are gathered by one BMI2 `pext`; only [`decode_block_bmi2`]
/// instantiates it, and only on a CPU with BMI2 (see [`fast_pext`]).
#[inline(always)]
fn read_varint<const PEXT: bool>(s: &Padded<'_>, pos: &mut usize) -> Result<u32, Status> {
    // `*pos` never exceeds s.len (it only advances on success); the min makes that local
    let p = (*pos).min(s.len);
    let (v, used, bad) = varint_window::<PEXT, VARINT_MAX_BYTES>(s, p);
    if bad {
        return Err(Status::BadVarint);
    }
    *pos = p + used;
    Ok(v)
}

/// The varint of at most `MAX` bytes (`MAX` is 5, or 4 for an offset tail) at `p <= s.len`,
/// read from an 8-byte window: `(value, bytes used, malformed)`. Malformed: no terminating
/// byte among the first `MAX`, a `MAX`-th byte above `0x0F`, or an end past `s.len`.
#[inline(always)]
fn varint_window<const PEXT: bool, const MAX: usize>(
    s: &Padded<'_>,
    p: usize,
) -> (u32, usize, bool) {
    const { assert!((MAX == 4 || MAX == 5) && VARINT_MAX_BYTES == 5 && STREAM_PAD >= 8) };
    debug_assert!(p <= s.len);
    // SAFETY: p <= s.len and the buffer holds s.len + STREAM_PAD >= s.len + 8 bytes
    // (Padded::new), so the 8-byte window (possibly in the padding) is inside it.
    let w = u64::from_le(unsafe { s.bytes.as_ptr().add(p).cast::<u64>().read_unaligned() });
    // bit 7 of byte k (k < MAX) set in `stops` when byte k ends the varint
    let stops = !w & (0x80_8080_8080 >> (8 * (5 - MAX)));
    // the varint's bytes: all bits up to the lowest stop bit (everything when there is none)
    let x = w & (stops ^ stops.wrapping_sub(1));
    let used = (stops.trailing_zeros() as usize + 1) / 8; // 8 when no byte ends it in MAX
    let v = if PEXT {
        pext_groups(x)
    } else {
        (x & 0x7F)
            | ((x >> 1) & (0x7F << 7))
            | ((x >> 2) & (0x7F << 14))
            | ((x >> 3) & (0x7F << 21))
            | ((x >> 4) & (0x0F << 28))
    };
    // the last allowed byte (then the last, bit 7 clear) may only carry bits 0-3; `x` holds
    // it only when the varint is that long
    let bad = (stops == 0) | (x & (0x70 << (8 * (MAX - 1))) != 0) | (p + used > s.len);
    (v as u32, used, bad)
}

/// Reads one distance at `*head_pos` / `*tail_pos` with the rules of
/// [`aceapex_device::lz::read_offset`] (FORMAT.md §4.2): the first byte from the offset
/// stream, the rest (at most 4 bytes, when its bit 7 is set) from the offset-tail stream.
/// A branch on whether a tail follows (on text and DNA nine in ten distances have one; a
/// branch-free form that always read the tail window cost ~45 instructions per distance
/// against ~25, cachegrind on moby_dick), then one on whether the tail is one byte (every
/// distance below 2^14), which skips the general varint window.
#[inline(always)]
fn read_offset<const PEXT: bool>(
    s: &PaddedStreams<'_>,
    head_pos: &mut usize,
    tail_pos: &mut usize,
) -> Result<u32, Status> {
    let hp = *head_pos;
    if hp >= s.offsets.len {
        return Err(Status::BadVarint);
    }
    // SAFETY: hp < len <= the buffer's length (Padded::new).
    let h = unsafe { *s.offsets.bytes.get_unchecked(hp) };
    *head_pos = hp + 1;
    if h < 0x80 {
        return Ok(h as u32);
    }
    let p = *tail_pos;
    if p < s.offset_tails.len {
        // SAFETY: p < len <= the buffer's length (Padded::new).
        let t = unsafe { *s.offset_tails.bytes.get_unchecked(p) };
        if t < 0x80 {
            // a one-byte tail: every distance below 2^14, so nearly all of them with
            // blocks of up to 16 KiB
            *tail_pos = p + 1;
            return Ok((h & 0x7F) as u32 | (t as u32) << 7);
        }
    }
    // `*tail_pos` only advances on success, so it never passes the stream's length
    let p = p.min(s.offset_tails.len);
    let (t, used, bad) = varint_window::<PEXT, 4>(&s.offset_tails, p);
    if bad {
        return Err(Status::BadVarint);
    }
    *tail_pos = p + used;
    Ok((h & 0x7F) as u32 | t << 7)
}

/// The 7-bit groups of the (up to five) bytes of `x`, least significant first, by BMI2
/// `pext`. Only called with `PEXT = true`, i.e. from [`decode_block_bmi2`].
#[inline(always)]
fn pext_groups(x: u64) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: `PEXT = true` is only instantiated by decode_block_bmi2, which is only
        // called when the CPU has BMI2 (decode_block, fast_pext).
        unsafe { std::arch::x86_64::_pext_u64(x, 0x7F_7F7F_7F7F) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = x;
        unreachable!("PEXT is only used on x86-64")
    }
}

/// True when the CPU has BMI1 and BMI2 and its `pext` is fast: Intel, or AMD/Hygon from
/// family 0x19 (Zen 3) on; Zen 1 and Zen 2 run `pext` in microcode (tens to hundreds of
/// cycles), so they keep the shift-and-mask varint. Computed once.
#[cfg(target_arch = "x86_64")]
fn fast_pext() -> bool {
    static FAST: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *FAST.get_or_init(|| {
        if !(std::is_x86_feature_detected!("bmi1") && std::is_x86_feature_detected!("bmi2")) {
            return false;
        }
        use std::arch::x86_64::__cpuid;
        // leaf 0: vendor in ebx, edx, ecx; leaf 1: family in eax (cpuid is always safe to
        // call on x86-64)
        let v = __cpuid(0);
        let intel = (v.ebx, v.edx, v.ecx) == (0x756E_6547, 0x4965_6E69, 0x6C65_746E);
        let eax = __cpuid(1).eax;
        let base = (eax >> 8) & 0xF;
        let family = if base == 0xF {
            base + ((eax >> 20) & 0xFF)
        } else {
            base
        };
        intel || family >= 0x19
    })
}

/// The repeat history of [`History`], with a branchless repeat (a `match` on the slot
/// mispredicts: the slots follow the data).
#[derive(Clone, Copy)]
struct FastHistory([u32; 4]);

impl FastHistory {
    const RESET: FastHistory = FastHistory(History::RESET.0);

    #[inline(always)]
    fn push(&mut self, d: u32) {
        let h = self.0;
        self.0 = [d, h[0], h[1], h[2]];
    }

    /// Slot `i` (0..=3), by selects, not an indexed load: the history can then stay in
    /// registers.
    #[inline(always)]
    fn get(&self, i: usize) -> u32 {
        let h = self.0;
        if i >= 2 {
            if i >= 3 {
                h[3]
            } else {
                h[2]
            }
        } else if i >= 1 {
            h[1]
        } else {
            h[0]
        }
    }

    /// Slot `i` (0..=3) to the front, the others keeping their order: entry `j >= 1` becomes
    /// the old entry `j - 1` when `j <= i`, else stays.
    #[inline(always)]
    fn take(&mut self, i: usize) -> u32 {
        let h = self.0;
        let d = self.get(i);
        self.0 = [
            d,
            if i >= 1 { h[0] } else { h[1] },
            if i >= 2 { h[1] } else { h[2] },
            if i >= 3 { h[2] } else { h[3] },
        ];
        d
    }
}

/// The repeat history of [`FastHistory`] in two 64-bit words (entries 0 and 1 in `lo`, 2 and
/// 3 in `hi`, lower entry in the low half): two registers instead of four in the batch loop
/// of [`fast_batches`], where a new match (nine in ten commands on text) only pushes.
#[derive(Clone, Copy)]
struct PackedHistory {
    lo: u64,
    hi: u64,
}

impl PackedHistory {
    #[inline(always)]
    fn pack(h: FastHistory) -> PackedHistory {
        let [a, b, c, d] = h.0.map(u64::from);
        PackedHistory {
            lo: a | b << 32,
            hi: c | d << 32,
        }
    }

    #[inline(always)]
    fn unpack(self) -> FastHistory {
        FastHistory([
            self.lo as u32,
            (self.lo >> 32) as u32,
            self.hi as u32,
            (self.hi >> 32) as u32,
        ])
    }

    #[inline(always)]
    fn push(&mut self, d: u32) {
        self.hi = self.hi << 32 | self.lo >> 32;
        self.lo = self.lo << 32 | u64::from(d);
    }

    /// Slot `i` (0..=3).
    #[inline(always)]
    fn get(&self, i: usize) -> u32 {
        let word = if i >= 2 { self.hi } else { self.lo };
        (word >> (32 * (i & 1))) as u32
    }

    /// Slot `i` to the front ([`FastHistory::take`]).
    #[inline(always)]
    fn take(&mut self, i: usize) {
        let mut h = self.unpack();
        h.take(i);
        *self = PackedHistory::pack(h);
    }
}

/// Copies 16 bytes.
///
/// # Safety
/// `src` readable and `dst` writable for 16 bytes; the two ranges do not overlap.
#[inline(always)]
unsafe fn copy16(src: *const u8, dst: *mut u8) {
    // SAFETY: caller's contract.
    unsafe { std::ptr::copy_nonoverlapping(src, dst, 16) }
}

/// Copies `max(n, 32)` bytes rounded up to whole 16-byte chunks from `src` to `dst`, the
/// first two chunks unconditionally (most literal runs and matches are at most 32 bytes: no
/// loop branch), chunk by chunk in order.
///
/// # Safety
/// `src` readable and `dst` writable for `max(32, n.next_multiple_of(16))` bytes (at most
/// `n + 32`); each chunk's source does not overlap its destination (for a match: a
/// distance of at least 16), and every byte a chunk reads is final when the chunk is copied
/// (earlier chunks' bytes count as written).
#[inline(always)]
unsafe fn copy_chunks16(src: *const u8, dst: *mut u8, n: usize) {
    // SAFETY: caller's contract, chunk by chunk.
    unsafe {
        copy16(src, dst);
        copy16(src.add(16), dst.add(16));
        let mut k = 32;
        while k < n {
            copy16(src.add(k), dst.add(k));
            k += 16;
        }
    }
}

/// Copies 8 bytes.
///
/// # Safety
/// `src` readable and `dst` writable for 8 bytes; the two ranges do not overlap.
#[inline(always)]
unsafe fn copy8(src: *const u8, dst: *mut u8) {
    // SAFETY: caller's contract.
    unsafe {
        dst.cast::<u64>()
            .write_unaligned(src.cast::<u64>().read_unaligned())
    }
}

/// `REPLICATE[d]` repeats the low `d` bytes of a `u64` across all 8 bytes by multiplication.
const REPLICATE: [u64; 8] = {
    let mut t = [0u64; 8];
    let mut d = 1;
    while d < 8 {
        let mut k = 0;
        while k * d < 8 {
            t[d] |= 1u64 << (8 * k * d);
            k += 1;
        }
        d += 1;
    }
    t
};

/// Copies a match of `len` bytes at distance `dist` to `dst`, spilling up to 31 bytes.
///
/// # Safety
/// `dst - dist .. dst + len + WILD_COPY_MARGIN` lies in one allocation, valid for reads and
/// writes; `dist >= 1` and `len >= 1`.
#[inline(always)]
unsafe fn copy_match_wild(dst: *mut u8, dist: usize, len: usize) {
    // SAFETY (whole body): every write lies in [dst, dst + len + 31) and every read in
    // [dst - dist, dst + len + 31), inside the caller's range; each chunk reads only bytes
    // before the chunk it writes (dist >= chunk size), so chunk copies never overlap.
    unsafe {
        let src = dst.sub(dist);
        if dist >= 16 {
            copy_chunks16(src, dst, len);
        } else if dist >= 8 {
            let mut k = 0;
            loop {
                copy8(src.add(k), dst.add(k));
                k += 8;
                if k >= len {
                    break;
                }
            }
        } else {
            // the period: the low `dist` bytes of the 8 bytes at src (the rest may be stale)
            let head =
                u64::from_le(src.cast::<u64>().read_unaligned()) & ((1u64 << (8 * dist)) - 1);
            let lo = head.wrapping_mul(REPLICATE[dist]);
            // bytes 8..16 of the pattern start at phase 8 % dist
            let r = 8 % dist;
            let hi = (lo >> (8 * r)) | (lo << (8 * (dist - r)));
            let mut pat = [0u8; 16];
            pat[..8].copy_from_slice(&lo.to_le_bytes());
            pat[8..].copy_from_slice(&hi.to_le_bytes());
            let step = 16 - 16 % dist;
            let mut k = 0;
            loop {
                dst.add(k).cast::<[u8; 16]>().write_unaligned(pat);
                k += step;
                if k >= len {
                    break;
                }
            }
        }
    }
}

/// Copies a literal run of `n` bytes (0 allowed) from `lits` at `*lit_pos` to `out` at
/// `*cur` and advances both; fails like the reference ([`Status::LiteralsExhausted`], then
/// [`Status::OutputOverrun`]) without copying. Up to `cur + max(n, 32)` may be written when
/// at least `n + WILD_COPY_MARGIN` bytes are left before `end`.
#[inline(always)]
fn literal_step(
    lits: &Padded<'_>,
    out: &mut [u8],
    lit_pos: &mut usize,
    cur: &mut usize,
    end: usize,
    n: usize,
) -> Result<(), Status> {
    let (lp, c) = (*lit_pos, *cur);
    // one test on the common path; the reference's checks, in its order, otherwise
    if n <= lits.len - lp && n + WILD_COPY_MARGIN <= end - c && end <= out.len() {
        let src = lits.bytes.as_ptr();
        let dst = out.as_mut_ptr();
        // SAFETY: chunks read [lp, lp + max(n, 32)) of the literal buffer, which holds
        // lits.len + STREAM_PAD (32) bytes with lp + n <= lits.len; they write
        // [c, c + max(n, 32)) with c + n + WILD_COPY_MARGIN <= end <= out.len(). The literal
        // buffer and `out` are distinct allocations. (With n == 0 the 32 bytes written from
        // `c` on are overwritten by the match that follows: it reads only bytes before each
        // chunk it writes.)
        unsafe { copy_chunks16(src.add(lp), dst.add(c), n) }
    } else {
        if n > lits.len - lp {
            return Err(Status::LiteralsExhausted);
        }
        if n > end - c {
            return Err(Status::OutputOverrun);
        }
        out[c..c + n].copy_from_slice(&lits.bytes[lp..lp + n]);
    }
    *lit_pos = lp + n;
    *cur = c + n;
    Ok(())
}

/// Decodes one block's match layer into `out[frame.dst_start..frame.dst_end]`, like
/// [`aceapex_device::lz::decode_block`] (same output, same [`Status`] on every input).
///
/// Writes only inside `out[frame.dst_start..frame.dst_end]`; on error those bytes are
/// unspecified. Panics if the frame does not lie inside `out` (a caller bug, not bad input).
/// Chooses the command loop by the block's command density and the varint form by the CPU;
/// every choice gives the same result.
pub fn decode_block_fast(
    s: &PaddedStreams<'_>,
    out: &mut [u8],
    frame: &BlockFrame,
) -> Result<(), Status> {
    let seq = dense_commands(s, frame);
    #[cfg(target_arch = "x86_64")]
    if fast_pext() {
        // SAFETY: fast_pext checked that the CPU has BMI1 and BMI2.
        return unsafe { decode_block_bmi2(s, out, frame, seq) };
    }
    decode_block_loop::<false>(s, out, frame, seq)
}

/// [`decode_block_impl`] with the command loop chosen at run time (`seq`, see
/// [`dense_commands`]). `PEXT = true` only from [`decode_block_bmi2`].
#[inline(always)]
fn decode_block_loop<const PEXT: bool>(
    s: &PaddedStreams<'_>,
    out: &mut [u8],
    frame: &BlockFrame,
    seq: bool,
) -> Result<(), Status> {
    if seq {
        decode_block_impl::<PEXT, true>(s, out, frame)
    } else {
        decode_block_impl::<PEXT, false>(s, out, frame)
    }
}

/// Which command loop suits the block: true (literal step before every match, see
/// [`decode_block_impl`]) when it has at least one command per 32 bytes of output, as text
/// and FASTQ do (86-112 per KiB); DNA and protein (14-23 per KiB, long literal runs, many
/// repeats) run faster with a branch on the command kind. Either loop gives the same result
/// (and either takes the commands [`fast_batches`] leaves).
#[inline(always)]
fn dense_commands(s: &PaddedStreams<'_>, frame: &BlockFrame) -> bool {
    s.commands.len.saturating_mul(32) >= frame.dst_end.saturating_sub(frame.dst_start)
}

/// [`decode_block_fast`] compiled with BMI1/BMI2 (varints by `pext`).
///
/// # Safety
/// The CPU must support BMI1 and BMI2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "bmi1,bmi2")]
unsafe fn decode_block_bmi2(
    s: &PaddedStreams<'_>,
    out: &mut [u8],
    frame: &BlockFrame,
    seq: bool,
) -> Result<(), Status> {
    decode_block_loop::<true>(s, out, frame, seq)
}

/// [`decode_block_fast`] with a chosen command loop (`seq`, see [`dense_commands`]) and without
/// the `pext` varint (for tests: every loop on any block, and the path CPUs without a fast
/// `pext` take).
#[cfg(test)]
pub(crate) fn decode_block_portable(
    s: &PaddedStreams<'_>,
    out: &mut [u8],
    frame: &BlockFrame,
    seq: bool,
) -> Result<(), Status> {
    decode_block_loop::<false>(s, out, frame, seq)
}

/// Positions of a block decode between commands: the next command, the read positions in the
/// other streams, the output cursor and the repeat history.
#[derive(Clone, Copy)]
struct Cursors {
    cmd: usize,
    lit: usize,
    len: usize,
    off: usize,
    tail: usize,
    cur: usize,
    history: FastHistory,
}

/// The body of [`decode_block_fast`]; `PEXT` selects the varint form ([`read_varint`]), `SEQ`
/// the command loop of [`step`]. When every distance the window allows lies inside the
/// frame, batches of commands run through [`fast_batches`] (with either loop, as they pay on
/// DNA and protein too) and [`step`] takes only what a batch cannot (the
/// block's last commands, and commands a batch leaves to it).
#[inline(always)]
fn decode_block_impl<const PEXT: bool, const SEQ: bool>(
    s: &PaddedStreams<'_>,
    out: &mut [u8],
    frame: &BlockFrame,
) -> Result<(), Status> {
    assert!(
        frame.src_floor <= frame.dst_start
            && frame.dst_start <= frame.dst_end
            && frame.dst_end <= out.len(),
        "block frame outside the output buffer"
    );
    if s.commands.data().first() != Some(&CMD_RESET) {
        return Err(Status::NoLeadingReset);
    }
    let mut at = Cursors {
        cmd: 0,
        lit: 0,
        len: 0,
        off: 0,
        tail: 0,
        cur: frame.dst_start,
        history: FastHistory::RESET,
    };
    let ncmd = s.commands.len;
    // the batches test a distance only against the frame's floor: the window must not be
    // the tighter bound anywhere in the block; they exist for the bases a validated archive
    // has, 4 to 6, each with its base a constant (a runtime base slows the match layer
    // measurably); any other base, only reachable by a direct caller,
    // runs in `step` like the reference
    let mut fast = frame.window as usize >= frame.dst_end - frame.src_floor
        && (MIN_MATCH_BASE..=MATCH_BASE).contains(&frame.match_base);
    while at.cmd < ncmd {
        if fast {
            fast = match frame.match_base {
                4 => fast_batches::<4>(s, out, frame, &mut at),
                5 => fast_batches::<5>(s, out, frame, &mut at),
                _ => fast_batches::<6>(s, out, frame, &mut at),
            };
            if at.cmd == ncmd {
                break;
            }
        }
        step::<PEXT, SEQ>(s, out, frame, &mut at)?;
    }
    if at.cur != frame.dst_end
        || at.lit != s.literals.len
        || at.len != s.lengths.len
        || at.off != s.offsets.len
        || at.tail != s.offset_tails.len
    {
        return Err(Status::Trailing);
    }
    Ok(())
}

/// One step of the command loop with every check of the reference, in its order: with
/// `SEQ` an optional literal run and then (unless the stream ends or another run follows) a
/// match or reset, where a match without a run before it is handled as a run of 0 bytes, so
/// whether a run comes first (on text many matches follow a match) is not a branch; without
/// `SEQ` one command, with a branch on its kind. Requires `at.cmd < commands.len`.
#[inline(always)]
fn step<const PEXT: bool, const SEQ: bool>(
    s: &PaddedStreams<'_>,
    out: &mut [u8],
    frame: &BlockFrame,
    at: &mut Cursors,
) -> Result<(), Status> {
    let commands = s.commands.data();
    let end = frame.dst_end;
    let c = if SEQ {
        let c0 = commands[at.cmd];
        let is_lit = c0 < CMD_REPEAT;
        let n = std::hint::select_unpredictable(is_lit, c0 as usize + 1, 0);
        literal_step(&s.literals, out, &mut at.lit, &mut at.cur, end, n)?;
        at.cmd += is_lit as usize;
        if at.cmd == commands.len() {
            return Ok(());
        }
        let c = commands[at.cmd];
        if c < CMD_REPEAT {
            // another run right after a run (only after runs of 128)
            return Ok(());
        }
        c
    } else {
        let c = commands[at.cmd];
        if c < CMD_REPEAT {
            at.cmd += 1;
            return literal_step(
                &s.literals,
                out,
                &mut at.lit,
                &mut at.cur,
                end,
                c as usize + 1,
            );
        }
        c
    };
    at.cmd += 1;
    let base = frame.match_base;
    let (dist, len) = match c {
        0x80..=0xBF => {
            let nib = (c & 0x0F) as u32;
            // (checked: a direct caller's base may be anything; the reference checks too)
            let mut len = base.checked_add(nib).ok_or(Status::OutputOverrun)?;
            if nib == REPEAT_LEN_ESCAPE {
                let extra = read_varint::<PEXT>(&s.lengths, &mut at.len)?;
                len = len.checked_add(extra).ok_or(Status::OutputOverrun)?;
            }
            (at.history.take(((c >> 4) & 3) as usize), len)
        }
        0xC0..=0xFD => {
            let len = base
                .checked_add((c & 0x3F) as u32)
                .ok_or(Status::OutputOverrun)?;
            let dist = read_offset::<PEXT>(s, &mut at.off, &mut at.tail)?;
            at.history.push(dist);
            (dist, len)
        }
        CMD_MATCH_LONG => {
            let extra = read_varint::<PEXT>(&s.lengths, &mut at.len)?;
            let len = base.checked_add(extra).ok_or(Status::OutputOverrun)?;
            let dist = read_offset::<PEXT>(s, &mut at.off, &mut at.tail)?;
            at.history.push(dist);
            (dist, len)
        }
        _ => {
            at.history = FastHistory::RESET;
            return Ok(());
        }
    };
    let (d, l, cur) = (dist as usize, len as usize, at.cur);
    // The common path tests 1 <= dist <= min(window, cur - src_floor) and room for the
    // spilling copy at once; anything else takes the reference's checks in its order.
    if d.wrapping_sub(1) < (frame.window as usize).min(cur - frame.src_floor)
        && l + WILD_COPY_MARGIN <= end - cur
    {
        // SAFETY: cur + len + WILD_COPY_MARGIN <= end <= out.len(), 1 <= dist <= cur
        // (dist <= cur - src_floor), len >= match base >= 1.
        unsafe { copy_match_wild(out.as_mut_ptr().add(cur), d, l) };
    } else {
        // the checks of aceapex_device::lz::check_match, in its order
        if dist == 0 || dist > frame.window || d > cur - frame.src_floor {
            return Err(Status::BadDistance);
        }
        if l > end - cur {
            return Err(Status::OutputOverrun);
        }
        copy_match(out, cur - d, cur, l);
    }
    at.cur = cur + l;
    Ok(())
}

/// The most one pass of [`fast_batches`]' loop consumes: two commands (a literal run and a
/// match), a run of up to 128 literals, one distance byte from each distance stream, and
/// output for the run, a short match ([`MAX_SHORT_MATCH`]) and the spill of its copy.
const FAST_CMDS: usize = 2;
const FAST_LITS: usize = 128;
const FAST_OUT: usize = 128 + MAX_SHORT_MATCH as usize;

/// Runs the commands of the common kinds in batches without per-command stream checks; the
/// first time a batch meets anything else it stops before that command and returns true, so
/// that [`step`] (the checked loop) takes it; it returns false once too little of some stream
/// is left for a batch of one pass (then [`step`] finishes the block).
///
/// A batch of `k` passes starts only when every stream holds what `k` passes can consume
/// at most ([`FAST_CMDS`], [`FAST_LITS`], one byte of each distance stream, [`FAST_OUT`]
/// bytes of output plus [`WILD_COPY_MARGIN`] before the block end), so inside it no read
/// leaves a stream (with its [`STREAM_PAD`]), no write leaves the block, no literal run can
/// exhaust the literals and no command stream can end. Each pass: a literal run (0 bytes when
/// a match comes first, as in [`step`]) and then a new match of a short length whose
/// distance is one byte or a head and a one-byte tail (every distance below 2^14), or a
/// repeat without a length varint; a reset, a long match, a repeat with a varint, a longer
/// tail and a distance outside `1..=cur - src_floor` stop the batch before the match (or
/// reset), leaving the run done: [`step`] then starts at that command, reads a run of 0
/// bytes and does it with the reference's checks. The caller guarantees that the window
/// allows every distance up to `dst_end - src_floor`, so the floor is the only bound a
/// distance needs. (The tail budget ends the batches of a block early when its distances
/// are nearly all below 128 and so have few tails: correct, but such a block runs mostly
/// in [`step`]; a per-distance test instead measured slower on text.)
#[inline(always)]
fn fast_batches<const BASE: usize>(
    s: &PaddedStreams<'_>,
    out: &mut [u8],
    frame: &BlockFrame,
    at: &mut Cursors,
) -> bool {
    debug_assert!(frame.window as usize >= frame.dst_end - frame.src_floor);
    let base = out.as_mut_ptr();
    let (cmd0, lit0, head0, tail0) = (
        s.commands.bytes.as_ptr(),
        s.literals.bytes.as_ptr(),
        s.offsets.bytes.as_ptr(),
        s.offset_tails.bytes.as_ptr(),
    );
    // SAFETY (pointers): every position is at most its stream's length (or the frame's end,
    // inside `out`), so these pointers lie inside (or one past) their buffers.
    let (
        mut cp,
        mut lp,
        mut hp,
        mut tp,
        mut op,
        floor,
        cmd_end,
        lit_end,
        head_end,
        tail_end,
        dst_end,
    ) = unsafe {
        (
            cmd0.add(at.cmd),
            lit0.add(at.lit),
            head0.add(at.off),
            tail0.add(at.tail),
            base.add(at.cur),
            base.add(frame.src_floor) as *const u8,
            cmd0.add(s.commands.len),
            lit0.add(s.literals.len),
            head0.add(s.offsets.len),
            tail0.add(s.offset_tails.len),
            base.add(frame.dst_end) as *const u8,
        )
    };
    let mut history = PackedHistory::pack(at.history);
    let mut stopped = false;
    // the caller passes the frame's base as BASE, at most MATCH_BASE: a short match fits
    // FAST_OUT
    debug_assert!(frame.match_base as usize == BASE && BASE <= MATCH_BASE as usize);
    let mbase = BASE;
    // SAFETY (the whole loop): each pointer stays between its stream's start and end (the
    // frame's for `op`), so the differences below are exact; by the choice of k (see the
    // function's docs) each of the k passes of a batch reads at most 2 commands, 128
    // literals (+ 32 bytes of chunk overrun, inside the padding), one byte of each distance
    // stream, and writes at most FAST_OUT + WILD_COPY_MARGIN - 1 bytes from `op`, all before
    // dst_end <= out.len(); a match reads from `op - dist` with 1 <= dist <= op - floor
    // (tested below), inside `out`; the literal buffer and `out` are distinct allocations.
    unsafe {
        loop {
            let room = (dst_end.offset_from(op) as usize).saturating_sub(WILD_COPY_MARGIN);
            let k = (cmd_end.offset_from(cp) as usize / FAST_CMDS)
                .min(lit_end.offset_from(lp) as usize / FAST_LITS)
                .min(room / FAST_OUT)
                .min(head_end.offset_from(hp) as usize)
                .min(tail_end.offset_from(tp) as usize);
            if k == 0 {
                break;
            }
            let mut left = k;
            while left != 0 {
                left -= 1;
                // both command bytes a pass may use in one load (the second is read only
                // when the first is a run), so the next pass's address waits on one load
                let pair = cp.cast::<u16>().read_unaligned().to_le();
                let c0 = pair as u8;
                let is_lit = c0 < CMD_REPEAT;
                let n = std::hint::select_unpredictable(is_lit, c0 as usize + 1, 0);
                copy_chunks16(lp, op, n);
                lp = lp.add(n);
                op = op.add(n);
                cp = cp.add(is_lit as usize);
                let c = std::hint::select_unpredictable(is_lit, (pair >> 8) as u8, c0);
                if c < CMD_REPEAT {
                    // another run right after a run
                    continue;
                }
                let (d, l) = if c >= 0xC0 {
                    if c >= CMD_MATCH_LONG {
                        // a long match or a reset (the encoder writes one, first)
                        stopped = true;
                        break;
                    }
                    // the head, and (read unconditionally) the next tail byte: a tail is
                    // taken when the head's bit 7 is set, and must then be one byte
                    let h = *hp as u32;
                    let t = *tp as u32;
                    let tailed = h >> 7;
                    if h & t & 0x80 != 0 {
                        stopped = true;
                        break;
                    }
                    let d = (h & 0x7F) | ((t << 7) & tailed.wrapping_neg());
                    if (d as usize).wrapping_sub(1) >= op.offset_from(floor) as usize {
                        stopped = true;
                        break;
                    }
                    hp = hp.add(1);
                    tp = tp.add(tailed as usize);
                    history.push(d);
                    (d as usize, (c & 0x3F) as usize + mbase)
                } else {
                    let nib = (c & 0x0F) as u32;
                    let slot = ((c >> 4) & 3) as usize;
                    let d = history.get(slot);
                    if nib == REPEAT_LEN_ESCAPE
                        || (d as usize).wrapping_sub(1) >= op.offset_from(floor) as usize
                    {
                        stopped = true;
                        break;
                    }
                    history.take(slot);
                    (d as usize, nib as usize + mbase)
                };
                cp = cp.add(1);
                copy_match_wild(op, d, l);
                op = op.add(l);
            }
            if stopped {
                break;
            }
        }
        at.cmd = cp.offset_from(cmd0) as usize;
        at.lit = lp.offset_from(lit0) as usize;
        at.off = hp.offset_from(head0) as usize;
        at.tail = tp.offset_from(tail0) as usize;
        at.cur = op.offset_from(base) as usize;
    }
    at.history = history.unpack();
    stopped
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::tokens::Rng;

    #[test]
    fn varints_match_the_reference() {
        let mut r = Rng::new(0x1656_67B1_9E37_79F9);
        for _ in 0..200_000 {
            let len = r.below(9) as usize;
            // bytes biased towards continuation bits and the 5th-byte edge
            let bytes: Vec<u8> = (0..len)
                .map(|_| match r.below(4) {
                    0 => 0x80 | r.next_u64() as u8,
                    1 => r.below(0x20) as u8,
                    _ => r.next_u64() as u8,
                })
                .collect();
            let start = r.below(len as u64 + 1) as usize;
            let mut buf = bytes.clone();
            buf.extend((0..STREAM_PAD).map(|_| r.next_u64() as u8));
            let p = Padded::new(&buf, len).unwrap();
            let (mut a, mut b) = (start, start);
            let want = crate::device::lz::read_varint(&bytes, &mut a);
            let got = read_varint::<false>(&p, &mut b);
            assert_eq!(got, want, "{bytes:02x?} from {start}");
            if want.is_ok() {
                assert_eq!(a, b);
            }
            #[cfg(target_arch = "x86_64")]
            if fast_pext() {
                let mut c = start;
                // SAFETY: fast_pext checked BMI1/BMI2.
                let got = unsafe { read_varint_bmi2(&p, &mut c) };
                assert_eq!(got, want, "pext: {bytes:02x?} from {start}");
                if want.is_ok() {
                    assert_eq!(a, c);
                }
            }
        }
    }

    /// [`read_varint`] with `pext`.
    ///
    /// # Safety
    /// The CPU must support BMI1 and BMI2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "bmi1,bmi2")]
    unsafe fn read_varint_bmi2(s: &Padded<'_>, pos: &mut usize) -> Result<u32, Status> {
        read_varint::<true>(s, pos)
    }

    #[test]
    fn fast_history_matches_the_reference() {
        let mut r = Rng::new(7);
        let (mut h, mut f) = (History::RESET, FastHistory::RESET);
        for _ in 0..10_000 {
            if r.below(3) == 0 {
                let d = r.next_u64() as u32;
                h.push(d);
                f.push(d);
            } else {
                let i = r.below(4) as usize;
                assert_eq!(h.take(i), f.take(i));
            }
            assert_eq!(h.0, f.0);
        }
    }
}
