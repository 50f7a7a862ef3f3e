//! Stage 3 of the dense kernel: every byte follows its pointer chain to its literal, and the
//! CTA writes the block with coalesced stores.

#[allow(unused_imports)]
use super::*;

/// Stage 3 in one pass, for any depth: every byte follows its pointer chain to the end and,
/// when it took a hop, stores the literal pointer it found back in its own slot, so a later
/// byte whose chain passes through it stops there. The CTA sweeps the block in increasing
/// position and every match pointer names a lower position, so most chains end at a byte
/// resolved a sweep step earlier. Concurrent readers of a slot see either its match pointer
/// or the literal pointer stored back: both lie on its chain, so the result is the same
/// either way. Every hop goes to a lower position (parse checks), so a chain ends within
/// `block_len` hops even in a hostile block.
///
/// A thread takes four bytes at a time: their pointers in one 8-byte load, their first hops
/// as four independent loads (so the four bytes wait on one shared-memory latency, not one
/// after another), deeper chains in a loop, the four
/// resolved pointers stored back in one 8-byte store when any of them hopped.
///
/// The stores race with other threads' loads by design, with plain accesses, and the generated
/// code loads each slot once into the register that is both tested and used. The racing
/// accesses differ in size: a thread stores its four slots back in one aligned 8-byte store
/// while others load single 16-bit slots. The PTX memory model does not define such
/// mixed-size races; the kernel relies on the hardware's: an aligned 8-byte shared-memory
/// store is one transaction, so a racing 16-bit load of one of its slots reads either the
/// old pointer or the new one, both on that slot's chain. (A vector access, which the model
/// takes element by element, comes out of LLVM as the same 64-bit access.)
/// `compute-sanitizer --tool racecheck` reports these loads and stores as hazards (the 8-byte
/// store back against the four first-hop loads and the four chain loops' loads, on every
/// block with matches), with the decode bit-exact; making every access of the chain volatile
/// makes the write stage several times slower. Only the first hop's loads are volatile, so
/// that LLVM keeps them unconditional. The device crate's `racecheck` feature builds this
/// stage without the races (`write_phased`), for the sanitizer's run
/// (scripts/gpu-sanitizer.sh), so that it reports only hazards of the rest of the kernel.
///
/// `LIT_RUNS` ([`decode_blocks_dense_sc`]'s): a word whose four pointers are consecutive
/// literal pointers (a literal run, most of a block of DNA) takes its four literals in one or
/// two aligned 4-byte loads of the literal region instead of four pointer hops and four
/// byte loads.
#[cfg_attr(feature = "racecheck", allow(unreachable_code, unused_variables))]
pub(super) fn write_memo<const LIT_RUNS: bool>(
    s: &Smem,
    out: *mut u8,
    start: u64,
    block_len: u32,
    tid: u32,
) {
    // the sanitizer build's race-free form (the device crate's `racecheck` feature)
    #[cfg(feature = "racecheck")]
    return write_phased(s, out, start, block_len, tid);
    let ptr = s.ptr();
    let lit = s.lit();
    let byte = |i: u32| -> u32 {
        // SAFETY: i < block_len pointers; a match pointer names a lower position.
        let mut v = unsafe { *ptr.add(i as usize) };
        let mut hops = 0u32;
        while v & 0x8000 == 0 {
            // SAFETY: as above.
            v = unsafe { *ptr.add(v as usize) };
            hops += 1;
        }
        if hops > 0 {
            // SAFETY: slot i of the pointer region; a literal pointer (see above).
            unsafe { *ptr.add(i as usize) = v };
        }
        // SAFETY: the parse wrote literal pointers only below the block's literal count
        // (<= LIT_CAP, loaded into the literal region).
        (unsafe { *lit.add((v & 0x7FFF) as usize) }) as u32
    };
    let words = block_len / 4;
    let mut q = tid;
    while q < words {
        // the word's four pointers in one load; their first hops as four independent loads
        // (a literal pointer's "hop" reads a pointer slot below DENSE_MAX_BLOCK, in the
        // region, and is discarded), so the four bytes wait on one shared-memory latency
        // each step instead of one after another
        // SAFETY: 4q + 3 < block_len pointers; the region is 16-aligned (PTR_OFF), so slot 4q
        // is 8-aligned.
        let p4 = unsafe { *(ptr.add(4 * q as usize) as *const u64) };
        let p0 = p4 & 0xFFFF;
        if LIT_RUNS && p0 & 0x8000 != 0 && p4 == p0 * 0x0001_0001_0001_0001 + 0x0003_0002_0001_0000
        {
            // literals i .. i + 4 (i + 3 < the block's literal count <= LIT_CAP: the parse
            // wrote literal pointers only below it, so no field carried into the next)
            let i = (p0 & 0x7FFF) as usize;
            let sh = 8 * (i & 3) as u32;
            let at = lit as *const u32;
            // SAFETY: word i / 4 of the literal region (16-aligned), and, when i is not
            // 4-aligned, the next one, which holds literal i + 3 < LIT_CAP.
            let w = unsafe {
                let lo = *at.add(i / 4);
                if sh == 0 {
                    lo
                } else {
                    lo >> sh | *at.add(i / 4 + 1) << (32 - sh)
                }
            };
            // SAFETY: as the store below.
            unsafe { *(out.add((start + 4 * q as u64) as usize) as *mut u32) = w };
            q += THREADS;
            continue;
        }
        let mut v = [
            p4 as u32 & 0xFFFF,
            (p4 >> 16) as u32 & 0xFFFF,
            (p4 >> 32) as u32 & 0xFFFF,
            (p4 >> 48) as u32,
        ];
        for x in v.iter_mut() {
            // a volatile load, so that LLVM keeps it unconditional (it sinks a plain one into
            // a branch per byte, which serialises the four)
            // SAFETY: (x & 0x7FFF) < DENSE_MAX_BLOCK pointer slots (a match pointer is below
            // block_len, a literal index below LIT_CAP, asserted below).
            const _: () = assert!(LIT_CAP <= DENSE_MAX_BLOCK as usize);
            let t = unsafe { ptr.add((*x & 0x7FFF) as usize).read_volatile() } as u32;
            if *x & 0x8000 == 0 {
                *x = t;
            }
        }
        if (v[0] & v[1] & v[2] & v[3]) & 0x8000 == 0 {
            for x in v.iter_mut() {
                while *x & 0x8000 == 0 {
                    // SAFETY: a match pointer names a lower position (parse checks).
                    *x = unsafe { *ptr.add(*x as usize) } as u32;
                }
            }
        }
        if p4 != (v[0] | v[1] << 16) as u64 | ((v[2] | v[3] << 16) as u64) << 32 {
            // SAFETY: the word's own four slots; each now a literal pointer on its chain.
            unsafe {
                *(ptr.add(4 * q as usize) as *mut u64) =
                    (v[0] | v[1] << 16) as u64 | ((v[2] | v[3] << 16) as u64) << 32
            };
        }
        // a literal pointer is 0x8000 + its index: the region's address less 0x8000 plus the
        // pointer (no mask; the offset folds into the load's immediate)
        let lit_x = lit.wrapping_sub(0x8000);
        let mut w: u32 = 0;
        for (j, x) in v.iter().enumerate() {
            // SAFETY: x is a literal pointer, 0x8000 + an index below the block's literal
            // count (see `byte`), so lit_x + x lies in the literal region.
            w |= (unsafe { *lit_x.wrapping_add(*x as usize) } as u32) << (8 * j);
        }
        // SAFETY: start is a multiple of the block size (>= 4 KiB), so start + 4q is 4-aligned
        // in the 256-byte aligned output; start + block_len <= out_len.
        unsafe { *(out.add((start + 4 * q as u64) as usize) as *mut u32) = w };
        q += THREADS;
    }
    let mut i = words * 4 + tid;
    while i < block_len {
        let b = byte(i) as u8;
        // SAFETY: start + i < start + block_len <= out_len.
        unsafe { *out.add((start + i as u64) as usize) = b };
        i += THREADS;
    }
}

/// Stage 3 for a block with a line layout (FORMAT.md §4.6), whose parse filled the slots of
/// its `block_len - removed` kept bytes: every kept byte's chain resolved to its literal
/// pointer and stored back ([`resolve_kept`]), then, after a barrier, every thread writes
/// four bytes of the block at a time, each found by `lines::locate` in the block's layout
/// table of `runs` runs (a line end's byte, or a kept byte's literal), with one 4-byte store.
/// A call, not inlined, so that the kernel's registers stay those of a block without a
/// layout; every thread of the CTA calls it (a barrier).
///
/// # Safety
/// The table of `runs` runs at [`Smem::line_table`] is the block's (`take_line_layout`), for
/// a block of `block_len` bytes at `out[start..]` (inside the output, `start` a multiple of
/// 4), `removed` of them line ends; the parse filled the kept bytes' slots.
#[inline(never)]
pub(super) unsafe fn write_lines(
    s: &Smem,
    out: *mut u8,
    start: u64,
    block_len: u32,
    removed: u32,
    runs: u32,
    tid: u32,
) {
    use crate::lines::locate;
    resolve_kept(s, block_len - removed, tid);
    sync();
    let ptr = s.ptr() as *const u16;
    let lit = s.lit() as *const u8;
    let table = s.line_table(runs) as *const u32;
    // SAFETY: i < runs * RUN_WORDS words of the table (locate's reads).
    let word = |i: usize| unsafe { *table.add(i) };
    // SAFETY (kept): k < the kept bytes, whose slots now hold literal pointers, 0x8000 + an
    // index below the block's literal count (in the literal region).
    let kept = |k: u32| unsafe { *lit.add((*ptr.add(k as usize) & 0x7FFF) as usize) } as u32;
    let byte = |o: u32| {
        let (end, v, _) = locate(word, runs, removed, o);
        if end {
            v
        } else {
            kept(v)
        }
    };
    let words = block_len / 4;
    let mut q = tid;
    while q < words {
        let o = 4 * q;
        let (end, k, left) = locate(word, runs, removed, o);
        let w = if !end && left >= 4 {
            // four kept bytes in a row (most words: a line end every line_len bytes)
            kept(k) | kept(k + 1) << 8 | kept(k + 2) << 16 | kept(k + 3) << 24
        } else {
            byte(o) | byte(o + 1) << 8 | byte(o + 2) << 16 | byte(o + 3) << 24
        };
        // SAFETY: start + o + 4 <= start + block_len, inside the output; 4-aligned.
        unsafe { *(out.add((start + o as u64) as usize) as *mut u32) = w };
        q += THREADS;
    }
    let mut o = words * 4 + tid;
    while o < block_len {
        // SAFETY: start + o < start + block_len, inside the output.
        unsafe { *out.add((start + o as u64) as usize) = byte(o) as u8 };
        o += THREADS;
    }
}

/// Resolves the pointer chain of each of the first `kept` slots to its literal pointer and
/// stores it back, as [`write_memo`] does while it writes (the same sweep and the same
/// racing stores of pointers on a slot's chain; in the `racecheck` build, in rounds with
/// barriers, without races).
fn resolve_kept(s: &Smem, kept: u32, tid: u32) {
    let ptr = s.ptr();
    let chase = |mut v: u16| {
        while v & 0x8000 == 0 {
            // SAFETY: a match pointer names a lower position (parse checks).
            v = unsafe { *ptr.add(v as usize) };
        }
        v
    };
    // the sanitizer build (the device crate's `racecheck` feature): in rounds, no races
    if cfg!(feature = "racecheck") {
        let mut base = 0u32;
        while base < kept {
            let i = base + tid;
            // SAFETY: slot i < kept, filled by the parse.
            let v = (i < kept).then(|| chase(unsafe { *ptr.add(i as usize) }));
            sync();
            if let Some(v) = v {
                // SAFETY: slot i is this thread's own in the round.
                unsafe { *ptr.add(i as usize) = v };
            }
            sync();
            base += THREADS;
        }
        return;
    }
    let words = kept / 4;
    let mut q = tid;
    while q < words {
        // SAFETY: slots 4q .. 4q + 4 < kept; the region is 16-aligned (PTR_OFF).
        let p4 = unsafe { *(ptr.add(4 * q as usize) as *const u64) };
        if p4 & 0x8000_8000_8000_8000 != 0x8000_8000_8000_8000 {
            let v = [0, 16, 32, 48].map(|sh| chase((p4 >> sh) as u16) as u64);
            // SAFETY: the word's own four slots; each now a literal pointer on its chain.
            unsafe {
                *(ptr.add(4 * q as usize) as *mut u64) = v[0] | v[1] << 16 | v[2] << 32 | v[3] << 48
            };
        }
        q += THREADS;
    }
    let mut i = words * 4 + tid;
    while i < kept {
        // SAFETY: slot i < kept; a literal pointer on its chain stored back.
        unsafe { *ptr.add(i as usize) = chase(*ptr.add(i as usize)) };
        i += THREADS;
    }
}

/// Stage 3 without [`write_memo`]'s racing accesses, in the device crate's `racecheck` build
/// (scripts/gpu-sanitizer.sh), so that `compute-sanitizer --tool racecheck` reports a hazard
/// only where the rest of the kernel has one: the block in rounds of `4 * THREADS` bytes; in
/// each round every thread follows the chains of its (up to) four bytes with loads alone,
/// then, after a barrier, stores their literal pointers back into its own slots and writes
/// the bytes, and a barrier orders those stores before the next round's loads. A chain
/// leaves its round in one hop (earlier rounds hold literal pointers), so it stays short as
/// in `write_memo`. The same bytes as `write_memo`, with two barriers per round: called by
/// every thread of the CTA (block-uniform `block_len`).
#[cfg(feature = "racecheck")]
fn write_phased(s: &Smem, out: *mut u8, start: u64, block_len: u32, tid: u32) {
    let ptr = s.ptr();
    let lit = s.lit();
    let mut base = 0u32;
    while base < block_len {
        let mut v = [0u16; 4];
        for (k, x) in v.iter_mut().enumerate() {
            let i = base + 4 * tid + k as u32;
            if i < block_len {
                // SAFETY: i < block_len pointer slots; a match pointer names a lower
                // position (parse checks), so every hop stays in the region and the chain
                // ends at a literal pointer.
                let mut p = unsafe { *ptr.add(i as usize) };
                while p & 0x8000 == 0 {
                    p = unsafe { *ptr.add(p as usize) };
                }
                *x = p;
            }
        }
        // every load of the round before any of its stores
        sync();
        for (k, &x) in v.iter().enumerate() {
            let i = base + 4 * tid + k as u32;
            if i < block_len {
                // SAFETY: slot i is this thread's own; x is a literal pointer, 0x8000 + an
                // index below the block's literal count (<= LIT_CAP, in the literal region);
                // start + i < start + block_len <= out_len.
                unsafe {
                    *ptr.add(i as usize) = x;
                    *out.add((start + i as u64) as usize) = *lit.add((x & 0x7FFF) as usize);
                }
            }
        }
        // the round's stores before the next round's loads
        sync();
        base += 4 * THREADS;
    }
}
