//! Shared-memory layout of the dense full-pipe kernel (`dense.rs`), shared with the host so
//! the launch asks for exactly the bytes the kernel uses.
//!
//! One CTA decodes one block at a time. Regions (bytes):
//! commands, then literals | length values (u32) | offset values (u16) | byte pointers
//! (u16) | control words. During the load the length, offset and offset-tail *bytes* live in
//! the pointer region, which the parse overwrites only after they became values. The
//! literals follow the commands in the command region ([`literals_fit`]: a block whose
//! commands and literals do not fit goes to the lane kernel), so the parse fill can put each
//! literal's byte into its pointer and the write stage reads no literal region; that and
//! 16-bit distances (below 2^14 in every block this kernel takes) keep a CTA small enough
//! for [`MIN_CTAS_PER_SM`] of them to share an SM.

/// Largest block the dense kernel decodes (pointers are 15-bit block positions).
pub const DENSE_MAX_BLOCK: u32 = 16384;
/// Literal bytes a block may have (a block of 16 KiB has at most 16 KiB of literals).
pub const LIT_CAP: usize = DENSE_MAX_BLOCK as usize;
/// Command bytes a block may have in the dense kernel (else it falls back).
pub const CMD_CAP: usize = 12288;
/// Length-stream varints a block may have.
pub const LENV_CAP: usize = 512;
/// Offset-stream varints (new matches) a block may have: what the shared memory of
/// [`MIN_CTAS_PER_SM`] CTAs per SM leaves (the assert below), 2048 before format v4, whose
/// 4- and 5-byte matches put up to ~2,400 new matches into a 16 KiB block of text
/// (moby_dick at level 9; PERFORMANCE.md, eleventh session).
pub const OFFV_CAP: usize = 2688;
/// Length-stream bytes (kept in the pointer region during the rANS stage).
pub const LENB_CAP: usize = 2048;
/// Offset-stream bytes, one per offset value (kept in the pointer region during the rANS
/// stage).
pub const OFFB_CAP: usize = OFFV_CAP;
/// Offset-tail bytes: in a block the dense kernel decodes every distance is below 2^14, so
/// each distance has at most one tail byte (kept in the pointer region during the rANS stage).
pub const TAILB_CAP: usize = OFFV_CAP;

/// Offset of the command region: the commands, then (16-byte aligned) the literals.
pub const CMD_OFF: usize = 0;
/// Bytes of the command region: a block's literals and, past them, room for the commands of
/// a block of literals alone (16 KiB in 128 runs of 128: 129 command bytes, 144 padded) and
/// a little more, what the shared memory of [`MIN_CTAS_PER_SM`] CTAs per SM leaves (the
/// assert below). The real corpora's blocks need at most 112 bytes past 16 KiB (E. coli,
/// level 6; PERFORMANCE.md fourteenth session).
pub const CMD_REGION: usize = max(CMD_CAP, LIT_CAP) + 176;
/// Offset of the length values (u32, 4-aligned).
pub const LENV_OFF: usize = CMD_OFF + CMD_REGION;

/// Offset of a block's literals in the command region: after its `ncmd` commands, 16-byte
/// aligned.
pub const fn literals_at(ncmd: usize) -> usize {
    ncmd.div_ceil(16) * 16
}

/// True when a block's `ncmd` commands and `nlit` literals (each padded to 16 bytes, as the
/// kernel loads them) fit the command region together. Every block of the real corpora
/// does (a command byte is a literal run or a match); a block that does not goes to the
/// lane kernel.
pub const fn literals_fit(ncmd: usize, nlit: usize) -> bool {
    ncmd <= CMD_CAP && nlit <= LIT_CAP && literals_at(ncmd) + nlit.div_ceil(16) * 16 <= CMD_REGION
}
/// Offset of the offset values (u16: every distance of a block this kernel takes is below
/// 2^14, a first byte and at most one tail byte).
pub const OFFV_OFF: usize = LENV_OFF + LENV_CAP * 4;
/// Offset of the byte-pointer region (u16 per output byte).
pub const PTR_OFF: usize = OFFV_OFF + OFFV_CAP * 2;
/// Offset of the control words (u32).
pub const CTRL_OFF: usize = PTR_OFF + DENSE_MAX_BLOCK as usize * 2;
/// Number of control words: 9 per block, 17 per warp (parse summaries and deferred long
/// commands, `dense.rs`).
pub const CTRL_WORDS: usize = 9 + 17 * (THREADS as usize / 32);
/// Dynamic shared memory per CTA.
pub const SMEM_BYTES: usize = CTRL_OFF + CTRL_WORDS * 4;
/// Threads per CTA.
pub const THREADS: u32 = 256;

const fn max(a: usize, b: usize) -> usize {
    if a > b {
        a
    } else {
        b
    }
}

const _: () = assert!(LENB_CAP + OFFB_CAP + TAILB_CAP <= DENSE_MAX_BLOCK as usize * 2);
const _: () = assert!(LIT_CAP.is_multiple_of(16) && CMD_CAP.is_multiple_of(16));
// the write stage's four-literal reads may touch the word after the command region
const _: () = assert!(LENV_OFF == CMD_OFF + CMD_REGION && SMEM_BYTES > LENV_OFF + 4);
// the per-lane fill stores two pointers at once (`dense::fill_lane`)
const _: () = assert!(PTR_OFF.is_multiple_of(4));
const _: () = assert!(
    LENB_CAP.is_multiple_of(16) && OFFB_CAP.is_multiple_of(16) && TAILB_CAP.is_multiple_of(16)
);
/// CTAs of the dense kernel an SM holds at once: the kernel's PTX entry carries
/// `.minnctapersm` with this value (build.rs), so ptxas keeps the registers at or below
/// 65536 / (THREADS * MIN_CTAS_PER_SM); the shared memory fits with the 1 KiB the driver
/// reserves per CTA out of the H100/H200's 228 KiB.
pub const MIN_CTAS_PER_SM: u32 = 4;

const _: () = assert!((SMEM_BYTES + 1024) * MIN_CTAS_PER_SM as usize <= 228 * 1024);

/// Stage bits for the stage-split benchmark: bit 0 runs the parse and pointer fill, bit 1
/// the resolve and output write. `STAGES_ALL` is the real decoder.
pub const STAGES_ALL: u32 = 3;
/// Stage bit 2: parse with one lane sequentially (`lz::walk_block`) instead of the whole
/// CTA in parallel; same pointers, same statuses (the parse comparison of issue 4).
pub const STAGE_SEQ_PARSE: u32 = 4;
