//! The fast CPU block decoder used by [`crate::decode`] for every block.
//!
//! - [`super::rans`]: interleaved rANS slices with specialised, branchless loops (AVX2 for the
//!   multiples of 4 from 12 to 32 lanes and 64-lane wide slices when the CPU has it, scalar loops per lane count otherwise);
//! - [`super::lz`]: the match layer with chunked literal and match copies.
//!
//! Both give the same bytes and the same [`Status`] as the reference decoders of the device
//! crate ([`aceapex_device::rans::decode_slice`], [`aceapex_device::lz::decode_block`]) on
//! every input; `crate::decode::decode_block_reference` keeps the reference path reachable and
//! the tests below compare the two on valid, random and corrupted archives.

use super::{lz, rans};
use crate::device::format::*;
use crate::device::lz::BlockFrame;
use crate::device::status::Status;
use crate::format::Archive;
use lz::{Padded, PaddedStreams, STREAM_PAD};

/// Per-thread buffers of the four decoded streams, each with [`STREAM_PAD`] bytes of slack.
#[derive(Default)]
pub struct Scratch {
    bufs: [Vec<u8>; STREAM_COUNT],
}

/// Entropy-decodes the four streams of block `b` into `scratch`, in stream order and with the
/// statuses of `crate::decode::decode_streams`.
pub fn decode_streams<'s>(
    a: &Archive<'_>,
    b: usize,
    scratch: &'s mut Scratch,
) -> Result<PaddedStreams<'s>, Status> {
    decode_streams_with(a, b, scratch, false)
}

/// The decode tables of block `b`'s rANS slices, by stream (`None` for a raw or two-bit
/// slice; Archive::parse guarantees a table for every rANS slice).
fn rans_tables<'a>(
    a: &'a Archive<'_>,
    b: usize,
) -> [Option<crate::format::TableHandle<'a>>; STREAM_COUNT] {
    let e = &a.entries[b];
    std::array::from_fn(|k| {
        (e.lanes[k] != LANES_RAW && !is_two_bit(e.lanes[k]))
            .then(|| a.table(b, k))
            .flatten()
    })
}

/// [`decode_streams`]; with `cold_tables`, the decode tables of the block's rANS slices are
/// first pulled into the cache all at once ([`prefetch_slots`]).
fn decode_streams_with<'s>(
    a: &Archive<'_>,
    b: usize,
    scratch: &'s mut Scratch,
    cold_tables: bool,
) -> Result<PaddedStreams<'s>, Status> {
    let e = &a.entries[b];
    let slices = a.slices(b);
    // taken before any slice is decoded, so that their prefetches overlap
    let handles = rans_tables(a, b);
    if cold_tables {
        for (k, t) in handles.iter().enumerate() {
            // a slice whose lanes decode only a few symbols each misses a few times at most
            let chain = e.decoded_len[k] as usize / (e.lanes[k] as usize).max(1);
            if let Some(t) = t.as_ref().filter(|_| chain >= PREFETCH_MIN_CHAIN) {
                let t = t.get();
                t.tables.iter().for_each(|t| prefetch_slots(&t.slots));
                // (an expansion table's slots past the width are never read)
                if let Some(p) = t.pack {
                    prefetch_slots(&p.slots[..=PACK_WIDTH_SLOT]);
                }
            }
        }
    }
    for (k, buf) in scratch.bufs.iter_mut().enumerate() {
        let n = e.decoded_len[k] as usize;
        size_buffer(buf, n);
        let out = &mut buf[..n];
        match e.lanes[k] {
            LANES_RAW => {
                // Archive::parse checked stored == decoded for raw slices
                if slices[k].len() != n {
                    return Err(Status::SliceMode);
                }
                out.copy_from_slice(slices[k]);
            }
            // FORMAT.md §5.7 (Archive::parse allows it for the literals only)
            LANES_TWO_BIT => crate::device::two_bit::decode(slices[k], out)?,
            LANES_TWO_BIT_RUNS => crate::device::two_bit::decode_runs(slices[k], out)?,
            lanes => {
                let t = handles[k].as_ref().ok_or(Status::SliceMode)?;
                rans::decode_slice(slices[k], lanes as usize, t.get(), out)?;
            }
        }
    }
    let [l, ln, o, c, t] = &scratch.bufs;
    let pad = |buf: &'s Vec<u8>, k: usize| {
        Padded::new(buf, e.decoded_len[k] as usize).expect("buffer sized with padding above")
    };
    Ok(PaddedStreams {
        literals: pad(l, STREAM_LITERALS),
        lengths: pad(ln, STREAM_LENGTHS),
        offsets: pad(o, STREAM_OFFSETS),
        commands: pad(c, STREAM_COMMANDS),
        offset_tails: pad(t, STREAM_OFFSET_TAILS),
    })
}

/// Most blocks whose streams [`decode_streams_group`] entropy-decodes together.
pub const GROUP_BLOCKS: usize = 8;

/// Original bytes a group of blocks should not exceed (see [`group_blocks`]).
const GROUP_BYTES: usize = 128 << 10;

/// How many blocks of `block_size` bytes to decode as one group: up to [`GROUP_BLOCKS`] and
/// `GROUP_BYTES` of output. Small blocks have short slices whose chains gain from being
/// interleaved; large blocks have long slices and gain little, while a group's errors are
/// only reported once all its streams are decoded, so a corrupt archive of large blocks must
/// not make a thread decode several of them before it fails.
pub fn group_blocks(block_size: usize) -> usize {
    (GROUP_BYTES / block_size.max(1)).clamp(1, GROUP_BLOCKS)
}

/// Sizes a stream buffer for `n` decoded bytes (grow only: the decoder overwrites bytes
/// `0..n`, the rest is padding).
fn size_buffer(buf: &mut Vec<u8>, n: usize) {
    if buf.len() < n + STREAM_PAD {
        buf.resize(n + STREAM_PAD, 0);
    }
}

/// Sizes the stream buffers of `scratch` for block `b` (grow only, with [`STREAM_PAD`]).
fn size_buffers(e: &BlockEntry, scratch: &mut Scratch) {
    for (k, buf) in scratch.bufs.iter_mut().enumerate() {
        size_buffer(buf, e.decoded_len[k] as usize);
    }
}

/// Decodes stream `k` of block `b` into `buf[..decoded_len]` on its own (raw copy or rANS).
fn decode_one_stream(a: &Archive<'_>, b: usize, k: usize, buf: &mut [u8]) -> Result<(), Status> {
    let e = &a.entries[b];
    let n = e.decoded_len[k] as usize;
    let slice = a.slices(b)[k];
    let out = &mut buf[..n];
    match e.lanes[k] {
        LANES_RAW => {
            // Archive::parse checked stored == decoded for raw slices
            if slice.len() != n {
                return Err(Status::SliceMode);
            }
            out.copy_from_slice(slice);
            Ok(())
        }
        // FORMAT.md §5.7 (Archive::parse allows it for the literals only)
        LANES_TWO_BIT => crate::device::two_bit::decode(slice, out),
        LANES_TWO_BIT_RUNS => crate::device::two_bit::decode_runs(slice, out),
        lanes => {
            // Archive::parse guarantees a table for every rANS slice
            let t = a.table(b, k).ok_or(Status::SliceMode)?;
            rans::decode_slice(slice, lanes as usize, t.get(), out)
        }
    }
}

/// The padded streams of block `b` as decoded into `scratch`.
pub fn padded_streams<'s>(a: &Archive<'_>, b: usize, scratch: &'s Scratch) -> PaddedStreams<'s> {
    let e = &a.entries[b];
    let [l, ln, o, c, t] = &scratch.bufs;
    let pad = |buf: &'s Vec<u8>, k: usize| {
        Padded::new(buf, e.decoded_len[k] as usize).expect("buffer sized with padding")
    };
    PaddedStreams {
        literals: pad(l, STREAM_LITERALS),
        lengths: pad(ln, STREAM_LENGTHS),
        offsets: pad(o, STREAM_OFFSETS),
        commands: pad(c, STREAM_COMMANDS),
        offset_tails: pad(t, STREAM_OFFSET_TAILS),
    }
}

/// Entropy-decodes the four streams of blocks `first .. first + scratch.len()`, block
/// `first + j` into `scratch[j]`, and returns each block's outcome: exactly what `decode_streams`
/// returns for that block alone (the first failing stream's [`Status`] in stream order).
///
/// All rANS slices of the blocks are decoded together
/// ([`rans::SliceDecoder::fast_rows_together`]) so that the dependency chains of several
/// slices overlap; each slice's outcome is the one it has alone, so the blocks' are too.
pub fn decode_streams_group(
    a: &Archive<'_>,
    first: usize,
    scratch: &mut [Scratch],
) -> [Result<(), Status>; GROUP_BLOCKS] {
    assert!(scratch.len() <= GROUP_BLOCKS, "at most GROUP_BLOCKS blocks");
    let mut status = [[Ok(()); STREAM_COUNT]; GROUP_BLOCKS];
    // the rANS slices' tables first, held while their decoders run (`Archive::table`)
    let handles: [[Option<crate::format::TableHandle<'_>>; STREAM_COUNT]; GROUP_BLOCKS] =
        std::array::from_fn(|j| {
            if j < scratch.len() {
                rans_tables(a, first + j)
            } else {
                Default::default()
            }
        });
    let mut decs = Vec::with_capacity(GROUP_BLOCKS * STREAM_COUNT);
    let mut owner = [(0usize, 0usize); GROUP_BLOCKS * STREAM_COUNT];
    for (j, s) in scratch.iter_mut().enumerate() {
        let b = first + j;
        let e = &a.entries[b];
        size_buffers(e, s);
        for (k, buf) in s.bufs.iter_mut().enumerate() {
            let lanes = e.lanes[k];
            if lanes == LANES_RAW || is_two_bit(lanes) {
                status[j][k] = decode_one_stream(a, b, k, buf);
                continue;
            }
            // Archive::parse guarantees a table for every rANS slice
            let Some(t) = &handles[j][k] else {
                status[j][k] = Err(Status::SliceMode);
                continue;
            };
            let out = &mut buf[..e.decoded_len[k] as usize];
            match rans::SliceDecoder::new(a.slices(b)[k], lanes as usize, t.get(), out) {
                Ok(d) => {
                    owner[decs.len()] = (j, k);
                    decs.push(d);
                }
                Err(st) => status[j][k] = Err(st),
            }
        }
    }
    rans::SliceDecoder::fast_rows_together(&mut decs);
    for (i, mut d) in decs.into_iter().enumerate() {
        while d.fast_rows(usize::MAX) > 0 {}
        let (j, k) = owner[i];
        status[j][k] = d.finish();
    }
    status.map(|s| s.into_iter().find(|r| r.is_err()).unwrap_or(Ok(())))
}

/// Decoded bytes per lane from which a slice's tables are prefetched for a region read: a
/// shorter chain takes fewer misses than the 256 lines of a table cost to fetch.
const PREFETCH_MIN_CHAIN: usize = 16;

/// Asks for every cache line of `slots` at once. A region read decodes a block whose group's
/// tables are likely out of the cache (16 KiB a stream, one slot per rANS state), and a
/// slice of one or two lanes is one dependency chain: unprefetched, each of its symbols can
/// wait for a miss of its own, where the prefetches overlap.
#[inline]
fn prefetch_slots(slots: &[u32]) {
    #[cfg(target_arch = "x86_64")]
    for line in slots.chunks(16) {
        // SAFETY: a prefetch is a hint that never faults; the address lies in `slots`.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                line.as_ptr() as *const i8
            )
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = slots;
}

/// Entropy- and match-decodes block `b` into `out` as placed by `frame` (no checksum check).
/// `cold_tables`: the block is read alone (a region read), its decode tables likely out of
/// the cache, which are then prefetched first ([`prefetch_slots`]).
pub fn decode_archive_block(
    a: &Archive<'_>,
    b: usize,
    out: &mut [u8],
    frame: &BlockFrame,
    scratch: &mut Scratch,
    cold_tables: bool,
) -> Result<(), Status> {
    let streams = decode_streams_with(a, b, scratch, cold_tables)?;
    super::lines::decode_block_fast(a, b, &streams, out, frame)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::{decode_block_at, decode_block_reference};
    use crate::device::lz::{self as ref_lz, BlockStreams};
    use crate::encode::Settings;
    use crate::error::DecodeError;

    use crate::gpu::tokens::Rng;

    fn varint(v: u32, out: &mut Vec<u8>) {
        ref_lz::write_varint(v, out);
    }

    /// Random command/length/offset streams biased towards valid blocks whose sources reach
    /// at most `room` bytes before the block, at match base `base`; returns them and the
    /// block length they intend.
    fn random_streams(r: &mut Rng, room: usize, base: u32) -> ([Vec<u8>; 4], usize) {
        random_streams_of(r, room, 80, base)
    }

    /// A match base of FORMAT.md §2, 4 to 6, the default 6 half the time.
    fn random_base(r: &mut Rng) -> u32 {
        [4, 5, 6, 6][r.below(4) as usize]
    }

    /// [`random_streams`] with up to `max_steps` generator steps.
    fn random_streams_of(
        r: &mut Rng,
        room: usize,
        max_steps: u64,
        base: u32,
    ) -> ([Vec<u8>; 4], usize) {
        let mut lits = Vec::new();
        let mut lens = Vec::new();
        let mut offs = Vec::new();
        let mut cmds = Vec::new();
        let mut pos = 0usize;
        let mut hist = ref_lz::History::RESET;
        if r.below(20) != 0 {
            cmds.push(CMD_RESET);
        }
        for _ in 0..r.below(max_steps) {
            let reach = (pos + room) as u64;
            match r.below(10) {
                0..=3 => {
                    let n = r.below(128) as u8;
                    cmds.push(n);
                    for _ in 0..=n {
                        lits.push(r.next_u64() as u8);
                    }
                    pos += n as usize + 1;
                }
                4 | 5 => {
                    let c = 0x80 | r.below(64) as u8;
                    cmds.push(c);
                    let mut len = base + (c & 0x0F) as u32;
                    if c & 0x0F == 0x0F {
                        let extra = r.below(300) as u32;
                        varint(extra, &mut lens);
                        len += extra;
                    }
                    hist.take(((c >> 4) & 3) as usize);
                    pos += len as usize;
                }
                6 | 7 if reach > 0 => {
                    let c = 0xC0 + r.below(62) as u8;
                    cmds.push(c);
                    let far = if r.below(50) == 0 { 1 << 20 } else { 3000 };
                    let d = [r.below(8) + 1, r.below(40) + 1, r.below(far) + 1][r.below(3) as usize]
                        .min(reach) as u32;
                    // now and then one byte before the source floor
                    let d = if r.below(150) == 0 {
                        reach as u32 + 1
                    } else {
                        d
                    };
                    varint(d, &mut offs);
                    hist.push(d);
                    pos += (c & 0x3F) as usize + base as usize;
                }
                8 if reach > 0 => {
                    cmds.push(CMD_MATCH_LONG);
                    let extra = r.below(500) as u32;
                    varint(extra, &mut lens);
                    let d = (r.below(64) + 1).min(reach) as u32;
                    varint(d, &mut offs);
                    hist.push(d);
                    pos += (extra + base) as usize;
                }
                9 => {
                    cmds.push(CMD_RESET);
                    hist = ref_lz::History::RESET;
                }
                _ => {}
            }
        }
        let mut s = [lits, lens, offs, cmds];
        // occasional damage: truncation, extra bytes, flipped bits, huge varints
        for v in s.iter_mut() {
            match r.below(40) {
                0 if !v.is_empty() => {
                    let n = r.below(v.len() as u64) as usize;
                    v.truncate(n);
                }
                1 => v.push(r.next_u64() as u8),
                2 if !v.is_empty() => {
                    let i = r.below(v.len() as u64) as usize;
                    v[i] ^= 1 << r.below(8);
                }
                3 => v.extend_from_slice(&[0xFF, 0xFF, 0xFF, 0xFF, 0x0F]),
                _ => {}
            }
        }
        (s, pos)
    }

    #[test]
    fn fast_match_layer_matches_reference_on_random_blocks() {
        let mut r = Rng::new(0x2545_F491_4F6C_DD1D);
        let mut ok = 0;
        for _ in 0..30_000 {
            let total = 64 + r.below(12_000) as usize;
            let dst_start = r.below(total as u64 / 2) as usize;
            let src_floor = dst_start - r.below(dst_start as u64 + 1) as usize;
            let base = random_base(&mut r);
            let (s, intended) = random_streams(&mut r, dst_start - src_floor, base);
            let dst_end = if r.below(4) != 0 && dst_start + intended <= total {
                dst_start + intended
            } else {
                dst_start + r.below((total - dst_start) as u64 + 1) as usize
            };
            let window = [1 + r.below(8) as u32, 4096, u32::MAX, u32::MAX][r.below(4) as usize];
            let frame = BlockFrame {
                dst_start,
                dst_end,
                src_floor,
                window,
                match_base: base,
            };
            ok += fast_vs_reference_block(&mut r, &s, total, frame) as usize;
        }
        assert!(ok > 1000, "too few valid random blocks ({ok}) to mean much");
    }

    /// Long blocks (hundreds of commands, so that the fast batches of `lz::fast_batches`
    /// run and meet long matches, repeats with length varints, resets, distances of every
    /// length, bad distances and damaged streams mid-block, then hand over to the checked
    /// loop near the block's end), checked against the reference with frames of every kind.
    #[test]
    fn fast_batches_match_reference_on_long_blocks() {
        let mut r = Rng::new(0x5851_F42D_4C95_7F2D);
        let mut ok = 0;
        for _ in 0..3_000 {
            let room = [0, r.below(64), r.below(1 << 15)][r.below(3) as usize] as usize;
            let base = random_base(&mut r);
            let (s, intended) = random_streams_of(&mut r, room, 1500, base);
            let dst_start = room + r.below(100) as usize;
            let src_floor = dst_start - room;
            let dst_end = match r.below(6) {
                0 => dst_start + r.below(intended as u64 + 1) as usize,
                1 => dst_start + intended + 1 + r.below(40) as usize,
                _ => dst_start + intended,
            };
            let window =
                [u32::MAX, u32::MAX, 1 << 22, 1 + r.below(5000) as u32][r.below(4) as usize];
            let frame = BlockFrame {
                dst_start,
                dst_end,
                src_floor,
                window,
                match_base: base,
            };
            ok += fast_vs_reference_block(&mut r, &s, dst_end + 64, frame) as usize;
        }
        assert!(ok > 300, "too few valid long blocks ({ok}) to mean much");
    }

    /// Runs the fast and the reference match layer on the same streams and frame over the
    /// same random buffer of `total` bytes (offsets given as LEB128 varints, split by
    /// `lz::split_offsets`); checks status, bytes, and that nothing outside the block changed.
    /// Returns whether the block decoded.
    fn fast_vs_reference_block(
        r: &mut Rng,
        s4: &[Vec<u8>; 4],
        total: usize,
        frame: BlockFrame,
    ) -> bool {
        let init: Vec<u8> = (0..total).map(|_| r.next_u64() as u8).collect();
        let mut want = init.clone();
        let (heads, mut tails) = crate::encode::lz::split_offsets(&s4[STREAM_OFFSETS]);
        // now and then the last distance's tail is missing (the tail stream ends early)
        if r.below(8) == 0 {
            tails.pop();
        }
        let s: [Vec<u8>; STREAM_COUNT] =
            [s4[0].clone(), s4[1].clone(), heads, s4[3].clone(), tails];
        let rs = BlockStreams::from_slices(s.each_ref().map(|v| v.as_slice()));
        let r_ref = ref_lz::decode_block(rs, &mut want, &frame);
        // padding bytes with and without bit 7 (a tail byte read past the stream's end)
        let pad = if r.below(2) == 0 { 0x5A } else { 0x80 };
        let padded: Vec<Vec<u8>> = s
            .iter()
            .map(|v| [v.as_slice(), &[pad; STREAM_PAD]].concat())
            .collect();
        let p = |k: usize| Padded::new(&padded[k], s[k].len()).unwrap();
        let fs = PaddedStreams {
            literals: p(0),
            lengths: p(1),
            offsets: p(2),
            commands: p(3),
            offset_tails: p(4),
        };
        // the dispatched path (pext varints on this CPU when it has a fast pext, the loop
        // for the block's command density) and the portable one with either loop
        for variant in 0..3 {
            let mut got = init.clone();
            let r_fast = match variant {
                0 => lz::decode_block_fast(&fs, &mut got, &frame),
                v => lz::decode_block_portable(&fs, &mut got, &frame, v == 1),
            };
            assert_eq!(
                r_fast, r_ref,
                "status differs, frame {frame:?}, variant {variant}"
            );
            assert_eq!(got[..frame.dst_start], init[..frame.dst_start]);
            assert_eq!(got[frame.dst_end..], init[frame.dst_end..]);
            if r_ref.is_ok() {
                assert_eq!(got, want);
            }
        }
        r_ref.is_ok()
    }

    /// Text-like blocks (short runs, many matches right after matches, runs that are not
    /// there) whose end falls anywhere in the last commands, so the spilling fast path and
    /// the exact one meet at every distance from the block's end; some distances are hostile
    /// (0, beyond the window, before the source floor), some varints overlong or broken.
    #[test]
    fn fast_match_layer_matches_reference_near_the_end_and_on_bad_matches() {
        let mut r = Rng::new(0x3C6E_F372_FE94_F82B);
        let mut ok = 0;
        for _ in 0..40_000 {
            let room = r.below(48) as usize; // bytes between the source floor and the block
            let window = [u32::MAX, u32::MAX, 4096, 1 + r.below(40) as u32][r.below(4) as usize];
            let base = random_base(&mut r);
            let (mut lits, mut lens, mut offs, mut cmds) =
                (vec![], vec![], vec![], vec![CMD_RESET]);
            let mut pos = 0usize;
            for _ in 0..r.below(30) {
                if r.below(3) == 0 {
                    let n = [r.below(8), r.below(40), r.below(128)][r.below(3) as usize] as u8;
                    cmds.push(n);
                    lits.extend((0..=n).map(|_| r.next_u64() as u8));
                    pos += n as usize + 1;
                }
                let reach = (pos + room) as u64;
                if r.below(5) == 0 {
                    // a repeat, sometimes with a length varint
                    let c = 0x80 | r.below(64) as u8;
                    cmds.push(c);
                    let mut len = base as usize + (c & 0x0F) as usize;
                    if c & 0x0F == 0x0F {
                        let extra = r.below(100) as u32;
                        varint(extra, &mut lens);
                        len += extra as usize;
                    }
                    pos += len;
                    continue;
                }
                let d = match r.below(40) {
                    0 => 0,
                    1 => reach + 1,
                    2 => window as u64 + 1,
                    3..=5 => 1 + r.below(reach.clamp(1, 16)),
                    _ => 1 + r.below(reach.max(1)),
                } as u32;
                if r.below(200) == 0 {
                    offs.extend_from_slice(&[0x80 | r.below(128) as u8, 0x80, 0x80, 0x80, 0x1F]);
                } else if r.below(30) == 0 {
                    offs.extend_from_slice(&[0x80 | d as u8, 0x80, 0x00]); // overlong, valid
                } else {
                    varint(d, &mut offs);
                }
                if r.below(8) == 0 {
                    cmds.push(CMD_MATCH_LONG);
                    let extra = r.below(90) as u32;
                    varint(extra, &mut lens);
                    pos += (extra + base) as usize;
                } else {
                    let c = 0xC0 + r.below(62) as u8;
                    cmds.push(c);
                    pos += (c & 0x3F) as usize + base as usize;
                }
            }
            let dst_start = room + r.below(64) as usize;
            let cut = [0, r.below(pos.min(96) as u64 + 1) as usize][r.below(2) as usize];
            let dst_end = dst_start + pos - cut + [0, 0, 1, 2][r.below(4) as usize];
            let total = dst_end + r.below(40) as usize;
            let frame = BlockFrame {
                dst_start,
                dst_end,
                src_floor: dst_start - room,
                window,
                match_base: base,
            };
            ok += fast_vs_reference_block(&mut r, &[lits, lens, offs, cmds], total, frame) as usize;
        }
        assert!(ok > 2000, "too few valid blocks ({ok})");
    }

    fn block_statuses(packed: &[u8], fast: bool) -> Vec<Result<Vec<u8>, DecodeError>> {
        let a = Archive::parse(packed).expect("archive parses");
        // decode in order into one buffer (cross-block sources need the earlier blocks); a
        // failed block leaves its bytes as they are for the next one, on both paths alike
        let mut out = vec![0u8; a.header.original_size as usize];
        (0..a.block_count())
            .map(|b| {
                let r = if fast {
                    decode_block_at(&a, b, &mut out, 0)
                } else {
                    decode_block_reference(&a, b, &mut out, 0)
                };
                let range = a.block_range(b);
                r.map(|()| out[range.start as usize..range.end as usize].to_vec())
            })
            .collect()
    }

    /// The group path gives each block the streams and status of the one-block path.
    fn same_group_outcome(packed: &[u8]) {
        let a = Archive::parse(packed).expect("archive parses");
        let mut one = Scratch::default();
        let mut group: Vec<Scratch> = (0..GROUP_BLOCKS).map(|_| Scratch::default()).collect();
        for first in (0..a.block_count()).step_by(GROUP_BLOCKS) {
            let n = (a.block_count() - first).min(GROUP_BLOCKS);
            let st = decode_streams_group(&a, first, &mut group[..n]);
            for j in 0..n {
                let alone = decode_streams(&a, first + j, &mut one).map(|s| {
                    [s.literals, s.lengths, s.offsets, s.commands, s.offset_tails]
                        .map(|p| p.data().to_vec())
                });
                assert_eq!(
                    st[j],
                    alone.as_ref().map(|_| ()).map_err(|e| *e),
                    "block {}",
                    first + j
                );
                if let Ok(want) = alone {
                    let p = padded_streams(&a, first + j, &group[j]);
                    let got = [p.literals, p.lengths, p.offsets, p.commands, p.offset_tails]
                        .map(|p| p.data().to_vec());
                    assert!(got == want, "block {}: streams differ", first + j);
                }
            }
        }
    }

    fn same_outcome(packed: &[u8]) {
        same_group_outcome(packed);
        let fast = block_statuses(packed, true);
        let reference = block_statuses(packed, false);
        for (b, (f, r)) in fast.iter().zip(&reference).enumerate() {
            match (f, r) {
                (Ok(x), Ok(y)) => assert!(x == y, "block {b}: bytes differ"),
                (
                    Err(DecodeError::Block { status: sf, .. }),
                    Err(DecodeError::Block { status: sr, .. }),
                ) => {
                    assert_eq!(sf, sr, "block {b}: status differs")
                }
                _ => panic!("block {b}: fast {f:?} vs reference {r:?}"),
            }
        }
    }

    fn sample_data(r: &mut Rng, n: usize) -> Vec<u8> {
        let mut d = Vec::with_capacity(n);
        while d.len() < n {
            match r.below(4) {
                0 => d.extend((0..r.below(200)).map(|_| b"ACGT"[r.below(4) as usize])),
                1 if d.len() > 40 => {
                    let dist = 1 + r.below(d.len().min(20_000) as u64) as usize;
                    for _ in 0..6 + r.below(300) {
                        d.push(d[d.len() - dist]);
                    }
                }
                2 => d.extend(std::iter::repeat_n(b'N', r.below(100) as usize)),
                _ => d.extend((0..r.below(50)).map(|_| r.next_u64() as u8)),
            }
        }
        d.truncate(n);
        d
    }

    #[test]
    fn fast_block_decoder_matches_reference_on_archives_and_corruptions() {
        let mut r = Rng::new(0xD1B5_4A32_D192_ED03);
        for round in 0..6 {
            let n = 20_000 + r.below(60_000) as usize;
            let data = sample_data(&mut r, n);
            let opts = Settings {
                block_size: [4096, 16384][round % 2],
                window: [None, Some(40_000)][round / 2 % 2],
                level: [1, 5, 9][round % 3],
                ..Default::default()
            };
            let packed = crate::encode::compress_settings(&data, &opts, &|_| {}).unwrap();
            let fast = block_statuses(&packed, true);
            assert!(fast.iter().all(|b| b.is_ok()));
            let joined: Vec<u8> = fast.into_iter().flat_map(|b| b.unwrap()).collect();
            assert!(joined == data);
            let data_start = Archive::parse(&packed).unwrap().data_offset as usize;
            for _ in 0..40 {
                let mut bad = packed.clone();
                for _ in 0..1 + r.below(3) {
                    let i = data_start + r.below((bad.len() - data_start) as u64) as usize;
                    bad[i] ^= 1 << r.below(8);
                }
                same_outcome(&bad);
            }
        }
    }
}
