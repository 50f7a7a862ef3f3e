//! The dense kernel's entry points (`decode_blocks_dense`, `decode_blocks_dense_sc`), its
//! body (`dense_blocks`: per block, load, parse, write) and its block queue and hand-off waits.

#[allow(unused_imports)]
use super::*;

/// Defines an entry point of the dense kernel, `dense_blocks::<SC>`, with the one parameter
/// list of both (`crate::with_dense_params!`, which calls it; the host's
/// [`crate::params::DenseParams`]).
macro_rules! dense_entry {
    ($(#[$doc:meta])* $name:ident, $sc:literal, $seek:literal ; $($(#[$fdoc:meta])* $f:ident : $t:ty),* $(,)?) => {
        $(#[$doc])*
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $name($($f: $t),*) {
            // SAFETY: forwarded (the host's contract).
            unsafe { dense_blocks::<$sc, $seek>($($f),*) }
        }
    };
}

crate::with_dense_params!(
    dense_entry;
    /// Dense full-pipe decode of independent blocks, after `rans_decode_slices` (see module
    /// docs): `decoded` holds every slice's decoded bytes at
    /// `dec_offsets[STREAM_COUNT * block + stream]`; `stages` is `STAGES_ALL` to decode, fewer
    /// bits for timing. One status word per block; a block already marked bad by the rANS
    /// kernel keeps its status. `queue` is the archive's dense queue (`handoff::queue_words`),
    /// handed over by the rANS kernel before it, whose `dense_queue` it is, under `epoch`
    /// (`handoff.rs`: this kernel may run while that one still does, and waits for the
    /// queue's epoch and then for each block's ready word; epoch 0: no hand-off, the rANS grid
    /// complete before this one reads anything). CTA `c` decodes block `order[c]`,
    /// then blocks `order[grid + ticket]` (tickets from `queue[QUEUE_TICKET]++`) until they run
    /// out, so a CTA that drew cheap blocks takes more of them; `order` holds every block once,
    /// in the order the host expects the rANS stage to finish them
    /// (`gpu::schedule::dense_block_order`) or that order longest first
    /// (`gpu::schedule::dense_longest_first`), or is null: blocks in index order (the two kernels
    /// one after the other). `queue[QUEUE_FALLBACK]` counts the blocks left to the
    /// lane kernel (`Status::Fallback`). `match_base` is the archive's (FORMAT.md §2: 4 to 6,
    /// from a validated header). `data` (`data_len` bytes) is the archive's data section and
    /// `offsets` each block's offset in it (`n_blocks` words): a block whose match streams are
    /// raw slices and whose ready word does not hold the epoch yet when its CTA takes it is
    /// loaded from there and parsed before the wait (`early_match_streams`; not with stage bits
    /// `STAGE_SEQ_PARSE` or `STAGE_LATE_PARSE`).
    decode_blocks_dense,
    false,
    false
);
crate::with_dense_params!(
    dense_entry;
    /// [`decode_blocks_dense`] for an archive with blocks that it decodes from the data section
    /// alone ([`self_contained`]: two-bit literals, FORMAT.md §5.7, and raw match streams),
    /// which the rANS stage before it leaves untouched when the host asks it to
    /// (`leave_self_contained`, `gpu::schedule::leaves_self_contained`): such a block is never
    /// waited for; its match streams are loaded and parsed as an early block's
    /// (`early_match_streams`), then its literals expanded from its two-bit slice straight into
    /// the literal region ([`expand_own_literals`]), and its status is this kernel's alone. A
    /// second entry point so that the first's code (and its registers) stay without this.
    /// Not with stage bits `STAGE_SEQ_PARSE` or `STAGE_LATE_PARSE`, which read the decoded
    /// scratch: with them it decodes as [`decode_blocks_dense`], and the host lets the rANS stage
    /// decode every block.
    ///
    /// # Safety
    /// [`decode_blocks_dense`]'s contract.
    decode_blocks_dense_sc,
    true,
    false
);
crate::with_dense_params!(
    dense_entry;
    /// The random-access decoder's dense kernel ([`decode_blocks_dense_sc`] on a list of
    /// blocks): CTA `c` takes entries `c`, `c + grid`, ... of the `n_order` of `takes` (or
    /// of `order` where `takes` is null), each a position `p` in `order`, and writes block
    /// `order[p]` to its slot, `out[p * block_size..]` (`out_len >= n_order * block_size`),
    /// its status to `status[order[p]]`. The blocks that are not self-contained have their
    /// streams decoded by the rANS stage launched before it on the stream
    /// (`gpu::launch::seek`): with a non-zero `epoch` this kernel runs beside that stage and
    /// waits for each such block's ready word (`handoff.rs`; it takes no queue ticket and
    /// waits for no queue epoch, so a self-contained block waits for nothing), and its grid
    /// ends after the stage's; with epoch 0 it waits for the stage's grid first. Block
    /// lengths come from `original_size`. Each block written is then hashed by the CTA and
    /// gets `Status::Checksum` if its XXH3-64 is not its entry's (FORMAT.md §6).
    ///
    /// With `range_status` (a direct seek: every range whole blocks) the blocks go straight
    /// to the caller's buffer, order position `p` at `out[p * block_size..]`, with a status
    /// word pair per position; no gather follows.
    ///
    /// # Safety
    /// [`decode_blocks_dense`]'s contract, with `order` holding `n_order` block indices
    /// below `n_blocks`, each once (a direct seek's may recur: each recurrence decodes the
    /// block again, the same bytes and status), and `takes`, where not null, `n_order`
    /// positions, each once (a position past the order ends a CTA's blocks); with
    /// `range_status`, `2 * n_order` words there and the ranges' bytes inside `out_len`
    /// (every slot's block `block_size` long but the last one's).
    decode_blocks_seek,
    true,
    true
);
crate::with_dense_params!(
    dense_entry;
    /// [`decode_blocks_seek`] compiled for four CTAs an SM (`dense_layout::MIN_CTAS_PER_SM`,
    /// the full decode's), where that one is compiled for two
    /// (`dense_layout::SEEK_CTAS_PER_SM`): fewer registers a thread and a longer path for one
    /// block, twice the blocks at once for a request of many.
    ///
    /// # Safety
    /// [`decode_blocks_seek`]'s contract.
    decode_blocks_seek_batch,
    true,
    true
);

/// The body of the dense kernel's entry points; `SC`: blocks [`self_contained`] are decoded
/// from the data section alone ([`decode_blocks_dense_sc`]); `SEEK`: the random-access
/// decoder's form ([`decode_blocks_seek`]): CTA `c` decodes the blocks of takes `c`,
/// `c + grid`, ... of the `n_order` the host asks for (no queue ticket) and writes block
/// `order[p]` to `out[p * block_size..]` (its slot), `original_size` giving each block's
/// length (the other entries get `n_blocks` and `out_len` for these two).
///
/// # Safety
/// [`decode_blocks_dense`]'s contract; with `SEEK`, [`decode_blocks_seek`]'s.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn dense_blocks<const SC: bool, const SEEK: bool>(
    decoded: *const u8,
    dec_len: u64,
    dec_offsets: *const u64,
    data: *const u8,
    data_len: u64,
    offsets: *const u64,
    entries: *const BlockEntry,
    n_blocks: u32,
    block_size: u32,
    window: u32,
    match_base: u32,
    out: *mut u8,
    out_len: u64,
    status: *mut u32,
    stages: u32,
    queue: *mut u32,
    order: *const u32,
    epoch: u32,
    n_order: u32,
    original_size: u64,
    takes: *const u32,
    range_status: *mut u32,
    line_layouts: u32,
) {
    let s = Smem {
        // u128: the layout's 16-byte loads and stores need a 16-aligned base (`.align 16`)
        base: core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<u128>() as *mut u8,
    };
    // SAFETY: special registers.
    let (tid, cta, ncta) = unsafe { (_thread_idx_x(), _block_idx_x(), _grid_dim_x()) };
    let warp = tid / 32;
    let lane = tid % 32;
    // the lane kernel after this one may start its CTAs (it waits for this grid to complete)
    crate::handoff::launch_dependents();
    // the seek's first block, from the host's request, which no kernel writes: read before
    // any wait, so that its latency (across the bus for a small request) overlaps the rANS
    // stage's
    let first = if SEEK {
        seek_block(order, takes, cta, n_order)
    } else {
        (0, 0)
    };
    // whether the rANS grid is complete and its writes visible to this CTA (block-uniform):
    // at once with epoch 0 (no hand-off; the kernels one after the other, so the wait returns
    // at once), else once a wait for a hand-off word gave up and the CTA waited for the grid
    // instead (handoff.rs); then no word is waited for any more
    // (a seek's CTAs take no tickets: they wait for no queue epoch, only for their blocks'
    // ready words, so that a block decoded from the data section alone waits for nothing)
    let mut grid_done = epoch == 0;
    if grid_done {
        crate::handoff::wait_prerequisite_grids();
    } else if !SEEK {
        // the queue's ticket and fallback words zeroed by this decode's rANS stage
        if tid == 0 {
            // SAFETY: word QUEUE_EPOCH of the queue; a shared control word, read after the
            // barrier below and written again only in `next_block`, after the block's
            // first barrier.
            unsafe {
                *s.ctrl(C_NEXT) = crate::handoff::wait_for(queue.add(QUEUE_EPOCH), epoch) as u32
            };
        }
        sync();
        if ctrl_get(&s, C_NEXT) == 0 {
            crate::handoff::wait_prerequisite_grids();
            grid_done = true;
        }
    }
    // the seek's take index, and the block's place in the order (its slot)
    let mut pos = cta;
    let mut slot = first.1;
    // SAFETY: cta < grid <= n_blocks entries of the order (the host's launch); a seek checks
    // against its n_order entries.
    let mut b = if SEEK {
        first.0
    } else if order.is_null() {
        cta
    } else {
        unsafe { *order.add(cta as usize) }
    };
    while b < n_blocks {
        // the next block's ticket, taken now so that the atomic's round trip overlaps this
        // block's work (thread 0 first uses it in `next_block`)
        let ticket = if tid == 0 && !SEEK {
            take_ticket(queue)
        } else {
            0
        };
        // SAFETY: b < n_blocks; the host passes n_blocks entries.
        let e = unsafe { *entries.add(b as usize) };
        let start = b as u64 * block_size as u64;
        // (the full decode's output is the original: its `out_len`)
        let total = if SEEK { original_size } else { out_len };
        let block_len = if start < total {
            core::cmp::min(block_size as u64, total - start) as u32
        } else {
            0
        };
        // where the block goes: its place in the original, or its slot
        let out_start = if SEEK {
            slot as u64 * block_size as u64
        } else {
            start
        };
        let fits = block_size <= DENSE_MAX_BLOCK
            && block_len > 0
            && e.lowest_source_block == b
            && e.decoded_len[STREAM_LITERALS] as usize <= LIT_CAP
            && e.decoded_len[STREAM_COMMANDS] as usize <= CMD_CAP
            && e.decoded_len[STREAM_LENGTHS] as usize <= LENB_CAP
            && e.decoded_len[STREAM_OFFSETS] as usize <= OFFB_CAP
            && e.decoded_len[STREAM_OFFSET_TAILS] as usize <= TAILB_CAP;
        // A block whose match streams are all stored raw and whose hand-off has not come yet
        // is parsed first, from the archive's own bytes, while the rANS stage still decodes
        // its literals; only the literal load and the write wait for the hand-off
        // (`early_match_streams`). A block already handed over goes the usual way (its
        // streams from the scratch in one range of 16-byte loads, no wait after the parse).
        // Thread 0 decides, the others read its choice after the barrier below.
        if tid == 0 {
            crate::trace::mark(b as u64, crate::trace::DENSE_TAKE);
            // a block this kernel decodes alone: its data offset kept for stage 1 (one global
            // load less on the way to its copies)
            let own = SC
                && stages & (STAGE_SEQ_PARSE | STAGE_LATE_PARSE) == 0
                && matches!(e.lanes[STREAM_LITERALS], LANES_TWO_BIT | LANES_TWO_BIT_RUNS)
                && {
                    // SAFETY: b < n_blocks; the host passes n_blocks data offsets.
                    let off = unsafe { *offsets.add(b as usize) };
                    let own = crate::own::own_slice(&e, off, data_len).is_some();
                    if own {
                        // SAFETY: shared control words, read in stage 1 after the barrier
                        // below; the parse writes them only after stage 1's barrier.
                        unsafe {
                            *s.ctrl(C_OWN_OFF) = off as u32;
                            *s.ctrl(C_OWN_OFF + 1) = (off >> 32) as u32;
                        }
                    }
                    own
                };
            // SAFETY: as above.
            // (not a slice with runs, FORMAT.md §5.8, of a block not self-contained: the rANS
            // stage hands it back to the lane kernel, which the take then counts)
            let eligible = !own
                && !grid_done
                && fits
                && e.lanes[STREAM_LITERALS] != LANES_TWO_BIT_RUNS
                && stages & (STAGE_SEQ_PARSE | STAGE_LATE_PARSE) == 0
                && unsafe { early_match_streams(&e, offsets, b, data_len) }.is_some();
            // SAFETY: word QUEUE_READY + b < queue_words(n_blocks) of the queue.
            let word = unsafe { queue.add(QUEUE_READY + b as usize) };
            // the block's slices and status word from the rANS stage (handoff.rs), now or
            // (early) after the parse; the barrier below orders every thread's reads of them
            // after this wait
            let (early, ready) = if own {
                // nothing from the rANS stage, ever (it left the block to this kernel)
                (EARLY_OWN, true)
            } else if grid_done {
                (EARLY_NO, true)
            } else if eligible {
                // one look: a block already handed over goes the usual way
                let published = unsafe { crate::handoff::is_published(word, epoch) };
                (if published { EARLY_NO } else { EARLY_WAIT }, published)
            } else {
                (EARLY_NO, unsafe { crate::handoff::wait_for(word, epoch) })
            };
            // SAFETY: control words lie in shared memory.
            unsafe {
                *s.ctrl(C_READY) = ready as u32;
                *s.ctrl(C_EARLY) = early;
                *s.ctrl(C_STATUS) = 0;
                *s.ctrl(C_NLENV) = 0;
                *s.ctrl(C_NOFFV) = 0;
            }
        }
        sync();
        // (an own block is loaded and parsed as an early one, and never waits)
        let early = ctrl_get(&s, C_EARLY) != EARLY_NO;
        if !early {
            if tid == 0 {
                crate::trace::mark(b as u64, crate::trace::DENSE_READY);
            }
            grid_done = ready_or_grid(&s, grid_done);
        }
        // SAFETY: one status word per block, written by the rANS kernel before it published
        // the block (or before its grid completed: handoff.rs); not read before that.
        let prior = if early {
            0
        } else {
            unsafe { *status.add(b as usize) }
        };
        if prior != 0 || !fits {
            if tid == 0 && prior == 0 {
                let st = if block_len == 0
                    || e.lowest_source_block != b && block_size <= DENSE_MAX_BLOCK
                {
                    Status::BadDistance
                } else {
                    Status::Fallback
                };
                // SAFETY: one status word per block.
                unsafe { *status.add(b as usize) = st as u32 };
                count_fallback(queue, st as u32);
                direct_status(range_status, slot, st as u32, b);
            } else if tid == 0 {
                // (the rANS stage hands back a slice with runs it left undecoded)
                count_fallback(queue, prior);
                direct_status(range_status, slot, prior, b);
            }
            b = if SEEK {
                // every thread's reads of the control words (C_EARLY, C_READY) before thread
                // 0 rewrites them at the next block's take (the full decode's `next_block`
                // has this barrier)
                sync();
                pos += ncta;
                let (next, at) = seek_block(order, takes, pos, n_order);
                slot = at;
                next
            } else {
                next_block(&s, ticket, ncta, order, n_blocks, tid)
            };
            continue;
        }
        // ---- stage 1 (a block parsed before its hand-off: its raw match streams from the
        // data section instead, `load_raw_match_streams`, and the varints as below): the
        // whole CTA loads the block's decoded streams but the literals
        // (written by `rans_decode_slices` at 16-byte aligned offsets, padded to 16 bytes)
        // with 16-byte loads and stores, streams 1-4 as one range of 16-byte words (so a
        // thread's loads of different streams do not wait for each other's stores: one
        // memory latency per block where the streams are short); then the length and offset
        // warps turn varints into values. The literals are loaded after the parse, into the
        // command region.
        // per stream: its first word in the scratch and in shared memory (16-byte words),
        // and the end of its words in the combined range (the literals' 0: not in it)
        let mut src16 = [0u64; STREAM_COUNT];
        let mut dst16 = [0u64; STREAM_COUNT];
        let mut end16 = [0u64; STREAM_COUNT];
        let mut total16 = 0u64;
        for k in 0..STREAM_COUNT {
            // An integer offset, not a pointer per arm: LLVM turns a match over shared-memory
            // pointers into a .global table of shared addresses, which ptxas rejects.
            let region = match k {
                STREAM_LITERALS => usize::MAX,
                STREAM_LENGTHS => PTR_OFF,
                STREAM_OFFSETS => PTR_OFF + LENB_CAP,
                STREAM_OFFSET_TAILS => PTR_OFF + LENB_CAP + OFFB_CAP,
                _ => CMD_OFF,
            };
            let n16 = (e.decoded_len[k] as u64).div_ceil(16);
            // SAFETY: the host passes STREAM_COUNT offsets per block.
            let soff = unsafe { *dec_offsets.add(b as usize * STREAM_COUNT + k) };
            if soff % 16 != 0 || soff > dec_len || n16 * 16 > dec_len - soff {
                if tid == 0 {
                    set_status(&s, Status::SliceMode);
                }
            } else if region == usize::MAX {
                if tid == 0 {
                    // SAFETY: shared control words, read after the parse's barriers.
                    unsafe {
                        *s.ctrl(C_LIT_LO) = (soff / 16) as u32;
                        *s.ctrl(C_LIT_HI) = (soff / 16 >> 32) as u32;
                    }
                }
            } else if !early {
                src16[k] = soff / 16;
                dst16[k] = (region / 16) as u64;
                total16 += n16;
            }
            end16[k] = total16;
        }
        const _: () = assert!(STREAM_LITERALS == 0);
        let mut q = tid as u64;
        while q < total16 {
            // the stream holding combined word q: the last one whose predecessors end at
            // or before it (ends are non-decreasing; a stream that failed its check or is
            // empty adds no words)
            let (mut from, mut to, mut before) = (src16[1], dst16[1], 0u64);
            for j in 2..STREAM_COUNT {
                if q >= end16[j - 1] {
                    (from, to, before) = (src16[j], dst16[j], end16[j - 1]);
                }
            }
            let i = q - before;
            // SAFETY: word i is below its stream's n16 words: inside the decoded scratch
            // (checked above) and inside its 16-aligned layout region, whose cap is >=
            // round16(n) (fits check).
            unsafe {
                *(s.base as *mut u128).add((to + i) as usize) =
                    *(decoded as *const u128).add((from + i) as usize)
            };
            q += THREADS as u64;
        }
        if early {
            // an own block's data offset from the take
            let own_off = (SC && ctrl_get(&s, C_EARLY) == EARLY_OWN).then(|| {
                ctrl_get(&s, C_OWN_OFF) as u64 | (ctrl_get(&s, C_OWN_OFF + 1) as u64) << 32
            });
            // (the range again rather than held in registers from the take)
            let from = match own_off {
                Some(off) => crate::own::raw_match_streams_at(&e, || off, data_len),
                // SAFETY: b < n_blocks; the host passes n_blocks data offsets.
                None => unsafe { early_match_streams(&e, offsets, b, data_len) },
            };
            if let Some(from) = from {
                // SAFETY: raw_match_streams_at checked the four slices' one range of the
                // data section and that each is raw; `fits`, that each fits its region.
                unsafe { load_raw_match_streams(&s, data.add(from as usize), &e, tid) };
            }
            if let Some(off) = own_off {
                // the literal slice too, to the command region's end (own_slice: the same
                // answer as at the take, the same function of the same values)
                if let Some(o) = crate::own::own_slice(&e, off, data_len) {
                    if tid == 0 {
                        // the copy's place for stage 3, in the literals' control word (an own
                        // block's literals are not in the scratch; written after the stream
                        // loop's, by the same thread)
                        // SAFETY: a shared control word, read after the parse's barriers.
                        unsafe { *s.ctrl(C_LIT_LO) = o.at };
                    }
                    // SAFETY: o is this block's; the host's padded upload (contract).
                    unsafe { load_own_slice(&s, data, &o, tid) };
                }
            }
        }
        sync();
        if tid == 0 {
            crate::trace::mark(b as u64, crate::trace::DENSE_LOADED);
            // the line layout before the commands, if any (FORMAT.md §4.6): its table to the
            // pointer region's top, read by the write stage (the varint stage below uses the
            // region's bottom)
            take_line_layout(&s, &e, block_len, line_layouts != 0, stages);
        }
        // varints to values: the lengths by warp 0; the offsets by the other warps, each
        // taking a chunk of the offset bytes (one per value): it counts the values with a
        // tail byte in its chunk, then, after a barrier, joins each with its tail byte
        let n_heads = e.decoded_len[STREAM_OFFSETS] as usize;
        let n_tails = e.decoded_len[STREAM_OFFSET_TAILS] as usize;
        // warp w >= 1 takes chunk w - 1 of the offset bytes
        let (c0, c1) = if warp != 0 {
            varint_chunk(n_heads, WARPS - 1, warp as usize - 1)
        } else {
            (0, 0)
        };
        if warp != 0 {
            let with_tail = count_bit7(s.offb(), c0, c1, lane, true);
            if lane == 0 {
                // SAFETY: this warp's control word (W_LEN words are free until the parse).
                unsafe { *s.ctrl(W_LEN + warp as usize) = with_tail };
            }
        }
        sync();
        let st = if warp == 0 {
            let n = e.decoded_len[STREAM_LENGTHS] as usize;
            let ends = count_bit7(s.lenb(), 0, n, lane, false);
            let (st, broken) = varints_to_values(s.lenb(), n, 0, n, 0, s.lenv(), LENV_CAP, lane);
            if lane == 0 {
                // the values a command may take: all, or those before the first broken
                // varint, marked so that the parse names the rule the CPU decoder names
                // (BadVarint where a command takes it, else an earlier rule or Trailing)
                let w = if broken == u32::MAX {
                    ends
                } else {
                    broken | NLENV_BROKEN
                };
                // SAFETY: a shared control word.
                unsafe { *s.ctrl(C_NLENV) = w };
            }
            st
        } else {
            let mut before = 0usize;
            let mut total = 0usize;
            for w in 1..WARPS {
                let c = ctrl_get(&s, W_LEN + w) as usize;
                if w < warp as usize {
                    before += c;
                }
                total += c;
            }
            if warp == 1 && lane == 0 {
                // SAFETY: a shared control word.
                unsafe { *s.ctrl(C_NOFFV) = n_heads as u32 };
            }
            if total != n_tails {
                // some tail is longer than one byte (a distance >= 2^14, out of any window
                // this kernel decodes) or tail bytes are missing or left over: the
                // reference decoder names the error
                Status::Fallback
            } else {
                join_offsets(s.offb(), s.tailb(), n_tails, c0, c1, before, s.offv(), lane)
            }
        };
        if st != Status::Ok && lane == 0 {
            set_status(&s, st);
        }
        sync();
        // SAFETY: shared control word, written before the barrier.
        let mut st = unsafe { *s.ctrl(C_STATUS) };
        // a layout that failed names the block's status (the CPU decoders split the layout
        // off before they read a varint: FORMAT.md §4.6 step 1)
        let lines = ctrl_get(&s, C_LINES);
        if lines & LINES_FAILED != 0 {
            st = lines & !LINES_FAILED;
        }
        // the block's line-end bytes (0 without a layout, and where the layout failed): the
        // match layer decodes the other, kept, bytes
        let removed = ctrl_get(&s, C_REMOVED);
        let kept_len = block_len - removed;
        if tid == 0 {
            crate::trace::mark(b as u64, crate::trace::DENSE_VARINTS);
        }
        if st == 0 && stages & 1 != 0 {
            // ---- stage 2: parse and pointer fill (the whole CTA; with stage bit 2, one lane
            // parsing sequentially, for the parse comparison)
            let r = if stages & STAGE_SEQ_PARSE != 0 {
                if tid == 0 {
                    parse_fill_seq(
                        &s,
                        decoded,
                        dec_len,
                        dec_offsets,
                        b,
                        &e,
                        block_len,
                        window,
                        match_base,
                    )
                } else {
                    Status::Ok
                }
            } else {
                parse_fill(&s, &e, kept_len, window, match_base, warp, lane, b)
            };
            sync();
            if r != Status::Ok && tid == 0 {
                set_status(&s, r);
            }
            sync();
            st = unsafe { *s.ctrl(C_STATUS) };
        }
        if ctrl_get(&s, C_EARLY) == EARLY_WAIT {
            // the literals and the status come from the rANS stage: its hand-off now
            grid_done = await_block(&s, queue, b, epoch, grid_done, tid);
            // SAFETY: one status word per block, written by the rANS kernel before it
            // published the block (or before its grid completed), read after the wait.
            if unsafe { *status.add(b as usize) } != 0 {
                // the rANS stage's status stands, as for a block parsed after the hand-off:
                // nothing written, nothing counted (one way out of the loop body, not a
                // second `continue`: that one made the kernel spill)
                st = KEEP_RANS_STATUS;
            }
        }
        // an own block's literal slice is checked even where its parse failed: the CPU
        // decoder checks a block's slices before its commands, so a block broken in both
        // reports `TwoBitSlice` (FORMAT.md §7: the first rule broken); not after a
        // `Fallback`, whose block the lane kernel decodes and reports
        let own = SC && ctrl_get(&s, C_EARLY) == EARLY_OWN;
        let own_check = own && st != Status::Fallback as u32 && stages & 3 == 3;
        if (st == 0 || own_check) && stages & 3 == 3 {
            // ---- stage 3 (after the parse): each byte follows its pointer chain, memoised
            // (any depth; the table entry's depth hint is not used: FORMAT.md §3.1)
            let n16 = (e.decoded_len[STREAM_LITERALS] as u64).div_ceil(16);
            // the literals' place from stage 1, which checked it (else the status is
            // SliceMode and this stage does not run)
            let lit16 = ctrl_get(&s, C_LIT_LO) as u64 | (ctrl_get(&s, C_LIT_HI) as u64) << 32;
            if own {
                // SAFETY: the block is self_contained (checked at the take, and again, the
                // same function of the same values, in stage 1, which copied its slice to
                // the place it left in C_LIT_LO; own_slice's checks: the sizes
                // expand_own_literals asks for); the commands are dead after the parse's
                // barrier.
                let (at, stored, n) = (
                    ctrl_get(&s, C_LIT_LO),
                    e.stored_len[STREAM_LITERALS],
                    e.decoded_len[STREAM_LITERALS],
                );
                // (FORMAT.md §5.8 or §5.7, by the entry's lane count as own_slice read it)
                let fine = unsafe {
                    if e.lanes[STREAM_LITERALS] == LANES_TWO_BIT_RUNS {
                        expand_own_runs::<SEEK>(&s, at, stored, n, b, tid)
                    } else {
                        expand_own_literals::<SEEK>(&s, at, stored, n, b, tid)
                    }
                };
                if !fine {
                    st = Status::TwoBitSlice as u32;
                }
            } else {
                // SAFETY: [16 * lit16, 16 * (lit16 + n16)) lies inside the decoded scratch.
                let lit = unsafe { (decoded as *const u128).add(lit16 as usize) };
                // SAFETY: the commands are dead after the parse's barrier; the literal
                // region holds LIT_CAP >= round16(n) bytes (fits check), and `lit` n16 words.
                unsafe { copy16(s.lit() as *mut u128, lit, n16, tid, THREADS) };
                sync();
            }
            if tid == 0 {
                crate::trace::mark(b as u64, crate::trace::DENSE_LITS);
            }
            if st == 0 {
                if removed == 0 {
                    write_memo::<SC>(&s, out, out_start, block_len, tid);
                } else {
                    // SAFETY: take_line_layout wrote the table (C_LINES runs, above the kept
                    // bytes' slots) for this block of block_len bytes, C_REMOVED of them line
                    // ends; the parse filled the kept bytes' slots.
                    unsafe { write_lines(&s, out, out_start, block_len, removed, lines, tid) };
                }
                if SEEK {
                    // the seek verifies what it wrote (FORMAT.md §6; the full decode's host
                    // does): the write's stores visible to the CTA after the barrier
                    sync();
                    // SAFETY: the slot holds block_len <= DENSE_MAX_BLOCK bytes (fits), at a
                    // multiple of the block size; the layout's regions are dead after the
                    // write and its barrier.
                    let h = unsafe {
                        cta_block_hash(&s, out.add(out_start as usize), block_len as usize, tid)
                    };
                    if h != e.checksum {
                        st = Status::Checksum as u32;
                    }
                }
            }
        }
        if tid == 0 && st != KEEP_RANS_STATUS {
            crate::trace::mark(b as u64, crate::trace::DENSE_END);
            // SAFETY: one status word per block.
            unsafe { *status.add(b as usize) = st };
            count_fallback(queue, st);
            direct_status(range_status, slot, st, b);
        } else if tid == 0 {
            // SAFETY: one status word per block, the rANS stage's, read after the hand-off.
            direct_status(range_status, slot, unsafe { *status.add(b as usize) }, b);
        }
        b = if SEEK {
            // a block that failed before its write (or a stage-bit run without the write)
            // read control words (C_STATUS, C_EARLY, C_OWN_OFF) after its last barrier, and
            // thread 0 rewrites them at the next block's take: a barrier first (a block
            // written and hashed had one after those reads; st and stages are block-uniform)
            if st != 0 || stages & 3 != 3 {
                sync();
            }
            pos += ncta;
            let (next, at) = seek_block(order, takes, pos, n_order);
            slot = at;
            next
        } else {
            next_block(&s, ticket, ncta, order, n_blocks, tid)
        };
    }
    if SEEK && !grid_done {
        // the grid ends after the rANS stage's (whose chunks may hold blocks no CTA here
        // waited for), so that the gather and the next request's launches follow all of it
        crate::handoff::wait_prerequisite_grids();
    }
}

/// The seek's take `pos` of `n`: the block at the position `takes[pos]` of its block list
/// (`pos` itself where `takes` is null) and that position, its slot; `u32::MAX` past the
/// end (every thread reads the same words; the lists do not change during the launch). A
/// position not below `n` in `takes` also ends the CTA's blocks.
#[inline(always)]
pub(super) fn seek_block(order: *const u32, takes: *const u32, pos: u32, n: u32) -> (u32, u32) {
    if pos >= n {
        return (u32::MAX, u32::MAX);
    }
    // SAFETY: pos < n entries of each list (the host's launch).
    let slot = if takes.is_null() {
        pos
    } else {
        unsafe { *takes.add(pos as usize) }
    };
    if slot >= n {
        return (u32::MAX, u32::MAX);
    }
    // SAFETY: slot < n entries of the block list.
    (unsafe { *order.add(slot as usize) }, slot)
}

/// A direct seek's status words (`range_status` not null) for order position `slot`, which
/// holds block `b`: `st`, and `b` where `st` is not 0 (as `seek_gather` writes a range's).
/// Thread 0, once per block taken.
#[inline(always)]
pub(super) fn direct_status(range_status: *mut u32, slot: u32, st: u32, b: u32) {
    if !range_status.is_null() {
        // SAFETY: 2 * n_order words where not null (the host's contract), slot < n_order.
        unsafe {
            *range_status.add(2 * slot as usize) = st;
            *range_status.add(2 * slot as usize + 1) = if st != 0 { b } else { 0 };
        }
    }
}

/// A block's status in `decode_blocks_dense` that is no status: the rANS stage's stands (an
/// early-parsed block whose slices the stage found bad), the dense kernel writes none.
pub(super) const KEEP_RANS_STATUS: u32 = u32::MAX;

/// Thread 0 waits for block `b`'s hand-off word (`handoff.rs`) unless `grid_done`; after a
/// barrier every thread reads whether it came, and if thread 0 gave up the CTA waits for the
/// whole rANS grid instead, after which every block's streams and status are visible.
/// Returns the new `grid_done`. The barrier orders every thread's later reads of the block's
/// decoded streams and status word after the wait.
#[inline(always)]
pub(super) fn await_block(
    s: &Smem,
    queue: *mut u32,
    b: u32,
    epoch: u32,
    grid_done: bool,
    tid: u32,
) -> bool {
    if tid == 0 {
        // SAFETY: word QUEUE_READY + b < queue_words(n_blocks) of the queue.
        let ready = grid_done
            || unsafe { crate::handoff::wait_for(queue.add(QUEUE_READY + b as usize), epoch) };
        // SAFETY: a shared control word, read by every thread after the barrier below.
        unsafe { *s.ctrl(C_READY) = ready as u32 };
    }
    sync();
    if tid == 0 {
        crate::trace::mark(b as u64, crate::trace::DENSE_READY);
    }
    ready_or_grid(s, grid_done)
}

/// After thread 0's wait for a hand-off word and a barrier: if it gave up (`C_READY` 0), the
/// CTA waits for the whole rANS grid instead, after which every block's streams and status
/// are visible. Returns the new `grid_done`.
#[inline(always)]
pub(super) fn ready_or_grid(s: &Smem, grid_done: bool) -> bool {
    if ctrl_get(s, C_READY) == 0 {
        crate::handoff::wait_prerequisite_grids();
        return true;
    }
    grid_done
}

/// Counts a block left to the lane kernel (`st` = `Status::Fallback`) in word 1 of the
/// dense kernel's queue, which `decode_blocks_lane` reads first: with none it returns at
/// once (the host launches it after every dense decode).
#[inline(always)]
pub(super) fn count_fallback(queue: *mut u32, st: u32) {
    if st == Status::Fallback as u32 {
        // SAFETY: the queue holds handoff::queue_words(n_blocks) words
        // (`gpu::launch::decode_blocks_dense`); core
        // atomics work on global memory.
        unsafe {
            core::sync::atomic::AtomicU32::from_ptr(queue.add(QUEUE_FALLBACK))
                .fetch_add(1, core::sync::atomic::Ordering::Relaxed)
        };
    }
}

/// Copies `n16` 16-byte words from `src` to `dst` with the whole CTA of `threads` threads
/// (`tid` < `threads`), each thread issuing up to four loads before it stores them (named
/// values, not an array, so that they stay in registers): the dense kernel's literal load,
/// 16 KiB in one memory latency at 256 threads instead of four. The rANS stage's tables take
/// [`stage16`] instead.
///
/// # Safety
/// Both ranges hold `n16` words (`dst` shared, `src` global memory), 16-byte aligned.
#[inline(always)]
pub(super) unsafe fn copy16(dst: *mut u128, src: *const u128, n16: u64, tid: u32, threads: u32) {
    let t = threads as usize;
    let n = n16 as usize;
    let mut q = tid as usize;
    // SAFETY (every access below): the index is below n16, checked by its loop's or
    // branch's condition (q + 3t < n, q + t < n, q < n), within the caller's ranges.
    while q + 3 * t < n {
        let (a, b, c, d) = unsafe {
            (
                *src.add(q),
                *src.add(q + t),
                *src.add(q + 2 * t),
                *src.add(q + 3 * t),
            )
        };
        unsafe {
            *dst.add(q) = a;
            *dst.add(q + t) = b;
            *dst.add(q + 2 * t) = c;
            *dst.add(q + 3 * t) = d;
        }
        q += 4 * t;
    }
    // at most three words are left: one pair, then one
    if q + t < n {
        let (a, b) = unsafe { (*src.add(q), *src.add(q + t)) };
        unsafe {
            *dst.add(q) = a;
            *dst.add(q + t) = b;
        }
        q += 2 * t;
    }
    if q < n {
        unsafe { *dst.add(q) = *src.add(q) };
    }
}

/// Starts copying `n16` 16-byte words from `src` (global memory) to `dst` (shared memory)
/// with the whole CTA of `threads` threads (`tid` < `threads`), word `tid + i * threads` by
/// thread `tid`, as asynchronous copies (`cp.async.cg.shared.global`, sm_80 and later): they
/// hold no data registers, so a thread issues all of its copies of every table a CTA stages
/// before it waits (as many in flight as the memory system takes), where a load-then-store
/// copy waits one memory latency per round of loads (which made table staging a large part
/// of the rANS stage's stalls on small blocks). The words are in `dst` only after
/// [`stage_wait`], and visible to the
/// other threads after a barrier that follows it.
///
/// # Safety
/// Both ranges hold `n16` words (`dst` in the kernel's shared memory, `src` global memory; a
/// generic address of either, which the asm converts or, for global memory, uses as is, as in
/// [`global_word_l2_256`]), 16-byte aligned. A barrier separates every earlier access to
/// `dst` from the copies; every thread that calls this calls [`stage_wait`] before the next
/// barrier, and nothing reads or writes `dst` until that barrier; the destinations of copies
/// in flight together do not overlap (their order is not defined).
#[inline(always)]
pub(super) unsafe fn stage16(dst: *mut u128, src: *const u128, n16: u64, tid: u32, threads: u32) {
    let mut q = tid as u64;
    while q < n16 {
        // SAFETY: q < n16 (the caller's ranges); the asm copies the one 16-byte word.
        unsafe {
            core::arch::asm!(
                "{{ .reg .u64 s;",
                "cvta.to.shared.u64 s, {d};",
                "cp.async.cg.shared.global [s], [{g}], 16; }}",
                d = in(reg64) dst.add(q as usize),
                g = in(reg64) src.add(q as usize),
                options(nostack, preserves_flags)
            )
        };
        q += threads as u64;
    }
}

/// Waits until this thread's [`stage16`] copies are in shared memory (`cp.async.wait_all`).
#[inline(always)]
pub(super) fn stage_wait() {
    // SAFETY: waits on this thread's own asynchronous copies; touches no other state.
    unsafe { core::arch::asm!("cp.async.wait_all;", options(nostack, preserves_flags)) };
}

/// A ticket from the block queue (thread 0 of a CTA, once per block it decodes).
#[inline(always)]
pub(super) fn take_ticket(queue: *mut u32) -> u32 {
    // SAFETY: `queue` is the launch's dense queue (its ticket word, zeroed by the rANS stage
    // before it published the epoch this CTA waited for); core atomics work on global memory.
    unsafe {
        core::sync::atomic::AtomicU32::from_ptr(queue.add(QUEUE_TICKET))
            .fetch_add(1, core::sync::atomic::Ordering::Relaxed)
    }
}

/// The CTA's next block, entry `ncta + ticket` of the dense order (thread 0's
/// [`take_ticket`]; `order` holds `n_blocks` entries): thread 0 puts it in a control word and
/// after a barrier every thread reads it (`u32::MAX` past the order's end, where the caller's
/// loop ends).
#[inline(always)]
pub(super) fn next_block(
    s: &Smem,
    ticket: u32,
    ncta: u32,
    order: *const u32,
    n_blocks: u32,
    tid: u32,
) -> u32 {
    if tid == 0 {
        let i = ncta.checked_add(ticket).unwrap_or(u32::MAX);
        // SAFETY: i < n_blocks entries of the order.
        let b = if i >= n_blocks {
            u32::MAX
        } else if order.is_null() {
            i
        } else {
            unsafe { *order.add(i as usize) }
        };
        // SAFETY: a shared control word; read by all threads after the barrier below and
        // not written again before the next block's barriers.
        unsafe { *s.ctrl(C_NEXT) = b };
    }
    sync();
    ctrl_get(s, C_NEXT)
}

/// Thread 0, after stage 1's load: where block `b`'s command stream (`e`'s, in the command
/// region) begins with a line layout (FORMAT.md §4.6) and the archive allows them
/// (`layouts`), reads it (`lines::split_commands`, the CPU decoders' reader), writes its
/// table to the pointer region's top ([`Smem::line_table`]) and the runs and line-end bytes
/// to `C_LINES` and `C_REMOVED`, and overwrites the layout's bytes with resets, so that the
/// parse reads the commands after it as the block's (resets change no output and the history
/// they set is the one the first command, a reset, sets anyway). Where the layout breaks a
/// rule, `C_LINES` gets [`LINES_FAILED`] and the block's status (`LineLayout`, or
/// `NoLeadingReset` where no reset follows it), which the varint stage's does not replace
/// (nothing is read where stage 1 already failed a stream); the same
/// with `Fallback` where the table would overlap the kept bytes' slots (a layout of many
/// runs of few line ends, which no encoder that saves bytes writes) or with
/// `STAGE_SEQ_PARSE`, whose parse reads the scratch. A command stream that begins with a
/// byte other than a reset in an archive without the record is left to the parse, which
/// names it `NoLeadingReset`. A call, not inlined, so that the kernel's registers stay those
/// of a block without a layout.
#[inline(never)]
fn take_line_layout(s: &Smem, e: &BlockEntry, block_len: u32, layouts: bool, stages: u32) {
    use crate::lines::{split_commands, table_run, RUN_WORDS};
    // SAFETY: shared control words, read after the barriers that follow stage 1.
    unsafe {
        *s.ctrl(C_LINES) = 0;
        *s.ctrl(C_REMOVED) = 0;
    }
    // a stream that failed its load (its status set by this thread in stage 1) stands: the
    // CPU decoders check the slices before they read a layout
    if ctrl_get(s, C_STATUS) != 0 {
        return;
    }
    let ncmd = e.decoded_len[STREAM_COMMANDS] as usize;
    // SAFETY: ncmd <= CMD_CAP bytes of the command region (the take's `fits`), loaded.
    let commands = unsafe { core::slice::from_raw_parts(s.cmd() as *const u8, ncmd) };
    if !layouts || commands.first().is_none_or(|&c| c == CMD_RESET) {
        return;
    }
    let (lines, rest) = match split_commands(commands, block_len, true) {
        Ok(x) => x,
        Err(st) => return failed(s, st),
    };
    if rest.first() != Some(&CMD_RESET) {
        return failed(s, Status::NoLeadingReset);
    }
    let skip = ncmd - rest.len();
    if !line_table_fits(block_len - lines.removed, lines.n) || stages & STAGE_SEQ_PARSE != 0 {
        return failed(s, Status::Fallback);
    }
    let table = s.line_table(lines.n);
    for k in 0..lines.n as usize {
        for (j, w) in table_run(&lines, k).into_iter().enumerate() {
            // SAFETY: word k * RUN_WORDS + j of the table's line_table_bytes(n) bytes.
            unsafe { *table.add(k * RUN_WORDS + j) = w };
        }
    }
    for i in 0..skip {
        // SAFETY: i < ncmd bytes of the command region.
        unsafe { *s.cmd().add(i) = CMD_RESET };
    }
    // SAFETY: shared control words (above).
    unsafe {
        *s.ctrl(C_LINES) = lines.n;
        *s.ctrl(C_REMOVED) = lines.removed;
    }
}

/// `C_LINES` with this bit: the block's layout failed, with the status in the low bits.
pub(super) const LINES_FAILED: u32 = 1 << 31;

/// [`take_line_layout`]'s failure: `st` to `C_LINES` (thread 0).
fn failed(s: &Smem, st: Status) {
    // SAFETY: a shared control word, read after the barriers that follow stage 1.
    unsafe { *s.ctrl(C_LINES) = LINES_FAILED | st as u32 };
}
