//! The rANS stage's decode of packed literal tables (FORMAT.md §5.6) and context pairs
//! (§5.4): `decode_packed`.

#[allow(unused_imports)]
use super::*;

/// Decodes the rANS slices of block `b` selected by `sel` (bit `k` = stream `k`, whose
/// packed lane counts are `lanes_of`; at most 32 lanes together, each > 0, no earlier error,
/// with their lanes side by side in the warp, each slice's table from `staged` (see
/// [`decode_slices`]) or global memory. Returns `st` with each selected slice's status code.
///
/// Renormalisation words are handed out in lane order by a ballot and a population count
/// (FORMAT.md §5.4) and read straight from the archive (asking L2 for 256-byte fetches; the
/// symbols are stored without allocating L1 lines: with many warps per SM the step is bound
/// by L1 traffic), by predicated loads rather than a branch (some lane renormalises in
/// almost every step, so the branch would always diverge). Register windows of words,
/// shared-memory copies of a round's words and prefetches were measured slower or flat:
/// see docs/PERFORMANCE.md.
///
/// `CTX`: some selected slice has a context pair (FORMAT.md §5.4; each lane then picks its
/// table by its previous symbol); `PACK`: some selected slice holds packed literals (§5.6;
/// each of its symbols is expanded into its `w` literals through the expansion table).
/// `LATE`: a step issues its renormalisation word's load first and emits its symbol (an
/// unpacked symbol's byte store; a packed one's expansion load, and its byte stores where the
/// slice's words are not coalesced) while the load is in flight, then joins the word into
/// the state ([`merge_word`]); a packed step's two shuffles and word store wait for the
/// next step, where they run while that step's table entry loads; otherwise the stores come
/// first, as the 16-warp kernels keep them (under their register bound `LATE` spills more:
/// measured slower, see docs/PERFORMANCE.md).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) fn decode_packed<const CTX: bool, const PACK: bool, const LATE: bool>(
    src: &Sources,
    b: u64,
    lanes_of: u64,
    sel: u32,
    lane: u32,
    mut st: u64,
    staged: Staged,
    half: u32,
) -> u64 {
    let Staged {
        tables: staged,
        pairs: staged_pairs,
        expand: staged_expand,
    } = staged;
    // my slice among the packed ones
    let mut base = 0u32;
    let mut my = STREAM_COUNT;
    let mut my_base = 0u32;
    for i in 0..STREAM_COUNT {
        if sel & (1 << i) != 0 {
            // this warp's lanes of the slice: a wide slice's half (FORMAT.md §5.4)
            let l = byte_get(lanes_of, i)
                .saturating_sub(WARP_LANES as u32 * half)
                .min(WARP_LANES as u32);
            if my == STREAM_COUNT && lane >= base && lane < base + l {
                my = i;
                my_base = base;
            }
            base += l;
        }
    }
    let mine = my < STREAM_COUNT;
    let s = if mine {
        slice_info(src, b, my)
    } else {
        SliceInfo::EMPTY
    };
    let lanes = s.lanes;
    // the lanes this warp decodes, and the first one's index in the slice: all of a slice
    // but a wide one's (more than 32 lanes: its half `half`, FORMAT.md §5.4)
    let wide = lanes > WARP_LANES as u32;
    let first_lane = WARP_LANES as u32 * half;
    let own = lanes.saturating_sub(first_lane).min(WARP_LANES as u32);
    let n = s.n;
    let data = src.data;
    // SAFETY: dst_off + n <= dec_len (pre checks; 0 for an absent slice, never written).
    let dst = unsafe { src.decoded.add(s.dst_off as usize) };
    // SAFETY: a present slice's table index is < n_tables (slice_info), and so is a context
    // pair's second; else unused.
    let global = |t: u32| unsafe {
        src.tables
            .add(if t < src.n_tables { t } else { 0 } as usize)
    };
    let table = if mine {
        // SAFETY: the block's group's table for stream `my`, staged at slot `my`.
        unsafe { staged.add(my * PROB_SCALE as usize) as *const DecodeTable }
    } else {
        global(s.table)
    };
    // a context pair's second table (FORMAT.md §5.4), staged or global; `table` otherwise
    let table1 = match (s.ctx, if mine { staged_slot(my) } else { None }) {
        (c, _) if !is_context(c) => table,
        // SAFETY: the second table of the group's pair for stream `my`, staged at `slot`.
        (_, Some(slot)) if staged_pairs => unsafe {
            staged.add(slot * PROB_SCALE as usize) as *const DecodeTable
        },
        _ => global(s.table.wrapping_add(1)),
    };
    let ctx_bit = s.ctx.saturating_sub(1);
    // packed literals: the expansion table (staged or global) and the width, 1 otherwise
    let packed = PACK && s.ctx == TABLE_PACKED;
    let expand: *const u32 = if !packed {
        core::ptr::null()
    } else if !staged_expand.is_null() {
        staged_expand
    } else {
        global(s.table.wrapping_add(1)) as *const u32
    };
    let width = if packed {
        // SAFETY: the expansion table at table + 1 < n_tables.
        crate::rans::pack_width_of(unsafe { &*global(s.table.wrapping_add(1)) }) as u32
    } else {
        1
    };
    // symbols of the slice: ceil(decoded length / width)
    let m = if packed { n.div_ceil(width) } else { n };
    let mut prev = 0u32;
    let l = lane.wrapping_sub(my_base);
    // Packed literals in words: a step's `lanes` symbols are `width * lanes` consecutive
    // bytes, which the slice's lanes store as aligned 4-byte words when that is a whole
    // number of words (lanes % 4 == 0): lane l writes word l of the step, assembled from the
    // literals of the step's symbols `4l / width` (from byte `o` of them on) and
    // `(4l + 3) / width`, fetched from their lanes by two shuffles. (One byte store per
    // literal writes `width` times the L1 sectors per byte of the unpacked stage's single
    // coalesced byte store.)
    let coalesce = packed && lanes % 4 == 0 && own % 4 == 0;
    let word_lane = coalesce && l < width * own / 4;
    let (src0, src1, o) = if word_lane {
        let b = 4 * l;
        // b / width for width 2-4 without a division (b < 128; b * 171 >> 9 is b / 3 there)
        let div = |b: u32| match width {
            2 => b >> 1,
            4 => b >> 2,
            _ => (b * 171) >> 9,
        };
        let s0 = div(b);
        (my_base + s0, my_base + div(b + 3), b - s0 * width)
    } else {
        (lane, lane, 0)
    };
    let mask = if mine { lane_mask(own, my_base) } else { 0 };
    let below = (1u32 << lane) - 1;
    let mut x: u32 = RANS_L;
    let mut nwords = 0u32;
    let mut steps = 0u32;
    let active_slice = mine && lanes > 0 && s.table < src.n_tables;
    // the slice's word area, or the data section's start for a lane without a valid slice
    // (absent, failed its checks or without a table: a failed slice's `s.off` is unchecked,
    // so no pointer is formed from it; such a lane never takes a word)
    // a wide slice's first word area: its word count (FORMAT.md §5.4), else all words
    let mut first_words = 0u32;
    let mut area_bad = false;
    let mut words = data;
    if active_slice {
        // SAFETY: off + stored <= data_len and slice_head(lanes) <= stored (slice_info's
        // checks): the states (and a wide slice's word count) lie inside the data section.
        let head = unsafe { data.add(s.off as usize) };
        let total = (s.stored - slice_head(lanes) as u32) / 2;
        nwords = total;
        if wide {
            // SAFETY: as above (the 4 bytes after the states)
            first_words = unsafe { gb_u32(head, 4 * lanes as usize) };
            area_bad = first_words > total;
            nwords = if area_bad {
                0
            } else if half == 0 {
                first_words
            } else {
                total - first_words
            };
        }
        let area = slice_head(lanes)
            + if half == 1 && !area_bad {
                2 * first_words as u64
            } else {
                0
            };
        // SAFETY: this lane's word area lies inside the slice (area + 2 * nwords <= stored),
        // inside the data section (off + stored <= data_len).
        words = unsafe { data.add((s.off + area) as usize) };
        // SAFETY: lane first_lane + l < lanes: its 4 state bytes are among the 4 * lanes.
        x = unsafe { gb_u32(head, 4 * (first_lane + l) as usize) };
        steps = m.div_ceil(lanes);
    }
    let header_bad = ballot(active_slice && (x < RANS_L || area_bad));
    // the longest chain of the packed slices
    let mut max_steps = steps;
    let mut d = 16;
    while d >= 1 {
        max_steps = max_steps.max(shfl_xor(max_steps, d));
        d /= 2;
    }
    let mut wp: u32 = 0;
    let mut underflow = false;
    // u32 positions: a slice holds at most a block (< 2^32 bytes), and 32-bit arithmetic
    // keeps the step short
    let mut i = first_lane + l;
    // a symbol's stores: a packed symbol's literals (its expansion; byte stores unless the
    // slice's words are coalesced), else the symbol itself. Returns the expansion (0 unless
    // packed) for `store_words`.
    let emit = |sym: u8, i: u32| -> u32 {
        if !packed {
            // SAFETY: i < n inside the decoded slot, written by this lane alone.
            unsafe { global_store_no_l1(dst.add(i as usize), sym) };
            return 0;
        }
        // SAFETY: sym < 256 slots of the expansion table (staged or global).
        let lits = unsafe { *expand.add(sym as usize) };
        if !coalesce {
            let at = i * width;
            // a fixed trip count: four predicated stores, no loop
            for t in 0..MAX_PACK_WIDTH {
                if t < width && at + t < n {
                    // SAFETY: at + t < n inside the decoded slot, this lane's alone (symbol
                    // i's literals).
                    unsafe {
                        global_store_no_l1(dst.add((at + t) as usize), (lits >> (8 * t)) as u8)
                    };
                }
            }
        }
        lits
    };
    // a step's coalesced words of packed literals: every lane of the warp shuffles
    // (uniform); word lanes store their word
    let store_words = |lits: u32, i: u32| {
        let v0 = shfl(lits, src0);
        let v1 = shfl(lits, src1);
        // the step's first byte: its first symbol (i - l) times the width
        let at = i.wrapping_sub(l) * width + 4 * l;
        if word_lane && at < n {
            let word = if width == 4 {
                v0
            } else {
                (v0 >> (8 * o)) | (v1 << (8 * (width - o)))
            };
            // SAFETY: `at` is 4-aligned (the slot is 16-aligned, a step is width * lanes
            // bytes, a multiple of 4) and below n; the word's bytes past n (at most 3, zeros
            // or the next symbol's) fall in the slot's padding (`gpu::decoder` pads every
            // slot by `rans::KERNEL_SLOT_SLACK` bytes). Word l of the step is this lane's
            // alone.
            unsafe { global_store_no_l1_u32(dst.add(at as usize) as *mut u32, word) };
        }
    };
    // LATE packed steps: a step's expansion (loaded in the step) is shuffled and stored in
    // the next step, after that step's table load is issued, so that no step waits on its
    // own expansion load (`pend_*`: the lane's expansion and symbol index whose words are
    // still to store; warp-uniform `pending`, as `store_words` is a warp's shuffle)
    let mut pend_lits = 0u32;
    let mut pend_i = 0u32;
    let mut pending = false;
    for _ in 0..max_steps {
        let active = active_slice && i < m;
        let mut need = false;
        let mut sym = 0u8;
        let mut lits = 0u32;
        let mut e = 0u32;
        if active {
            let t = if CTX && (prev >> ctx_bit) & 1 != 0 {
                table1
            } else {
                table
            };
            // SAFETY: the table index was checked (active_slice), a pair's second too.
            e = crate::rans::slot_entry(unsafe { &*t }, x);
        }
        if PACK && LATE && pending {
            // the previous step's words, while the table entry's load is in flight
            store_words(pend_lits, pend_i);
        }
        if active {
            sym = crate::rans::apply_entry(e, &mut x);
            if CTX {
                prev = sym as u32;
            }
            if !LATE {
                lits = emit(sym, i);
            }
            need = x < RANS_L;
        }
        if PACK && !LATE {
            store_words(lits, i);
        }
        let m = ballot(need) & mask;
        // branch-free: every lane computes its word index, the loads are predicated
        let p = wp + (m & below).count_ones();
        let take = need && p < nwords;
        underflow |= need && !take;
        let q = if take { 2 * p as usize } else { 0 };
        // SAFETY: q = 2p with p < nwords (word p lies inside the slice's word area), or 0,
        // and a lane that takes no word reads nothing (the loads are under `take`).
        let (word_lo, word_hi) = if take {
            unsafe { global_word_l2_256(words.add(q)) }
        } else {
            (0, 0)
        };
        if LATE {
            // the symbol emitted while the word's load is in flight (a packed one's coalesced
            // words queued for the next step), the word joined into the state after it
            // ([`merge_word`])
            if active {
                lits = emit(sym, i);
            }
            if PACK {
                (pend_lits, pend_i, pending) = (lits, i, true);
            }
            if take {
                x = merge_word(x, word_lo, word_hi);
            }
        } else if take {
            x = (x << 16) | (word_hi as u32) << 8 | word_lo as u32;
        }
        wp += m.count_ones();
        i = i.wrapping_add(lanes);
    }
    if PACK && LATE && pending {
        store_words(pend_lits, pend_i);
    }
    let under = ballot(underflow);
    let trailer = ballot(active_slice && (x != RANS_L || wp != nwords));
    let mut kb = 0u32;
    for j in 0..STREAM_COUNT {
        if sel & (1 << j) == 0 {
            continue;
        }
        let kl = byte_get(lanes_of, j);
        let km = lane_mask(kl, kb);
        kb += kl;
        let code = if header_bad & km != 0 {
            Status::RansHeader
        } else if under & km != 0 {
            Status::RansUnderflow
        } else if trailer & km != 0 {
            Status::RansTrailer
        } else {
            Status::Ok
        };
        st = byte_set(st, j, code as u32);
    }
    st
}
