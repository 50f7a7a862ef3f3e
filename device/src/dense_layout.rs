//! Shared-memory layout of the dense full-pipe kernel (`dense/`), shared with the host so
//! the launch asks for exactly the bytes the kernel uses.
//!
//! One CTA decodes one block at a time. Regions (bytes):
//! commands, later literals | length values (u32) | offset values (u16) | byte pointers
//! (u16) | control words. During the load the length, offset and offset-tail *bytes* live in
//! the pointer region, which the parse overwrites only after they became values. The parse
//! reads the commands and the write stage the literals, so the literals are loaded into the
//! command region after the parse; that and 16-bit distances (below 2^14 in every block this
//! kernel takes) keep a CTA small enough for [`MIN_CTAS_PER_SM`] of them to share an SM.
//! A block the dense kernel decodes alone (`own.rs`) has its two-bit literal slice copied to
//! the end of the command region during the load, which the parse leaves alone.
//! A block with a line layout (FORMAT.md §4.6) keeps its layout table
//! (`lines::table_run`, [`line_table_bytes`] bytes) at the top of the pointer region, above
//! the slots of its kept bytes, from the load to the write.

/// Bytes of the layout table of a block with `runs` line runs, at the pointer region's top:
/// five words a run (`lines::RUN_WORDS`, which asserts it).
pub const fn line_table_bytes(runs: usize) -> usize {
    runs * 5 * 4
}

/// Whether the layout table of `runs` runs lies above every pointer slot the parse writes
/// for `kept` kept bytes (their slots, the fill's stores rounded up to 8 slots); else the
/// dense kernel hands the block to the lane kernel (`Status::Fallback`). Every layout of
/// at least 10 line-end bytes a run fits at any block size.
pub const fn line_table_fits(kept: u32, runs: u32) -> bool {
    2 * (kept as usize).next_multiple_of(8)
        <= 2 * DENSE_MAX_BLOCK as usize - line_table_bytes(runs as usize)
}

/// Largest block the dense kernel decodes (pointers are 15-bit block positions).
pub const DENSE_MAX_BLOCK: u32 = 16384;
/// Literal bytes a block may have (a block of 16 KiB has at most 16 KiB of literals).
pub const LIT_CAP: usize = DENSE_MAX_BLOCK as usize;
/// Command bytes a block may have in the dense kernel (else it falls back).
pub const CMD_CAP: usize = 12288;
/// Length-stream varints a block may have.
pub const LENV_CAP: usize = 512;
/// Offset-stream varints (new matches) a block may have: what the shared memory of
/// [`MIN_CTAS_PER_SM`] CTAs per SM leaves (the assert below): a minimum match of 4 puts up
/// to ~2,400 new matches into a 16 KiB block of text (moby_dick at level 9).
pub const OFFV_CAP: usize = 2688;
/// Length-stream bytes (kept in the pointer region during the rANS stage).
pub const LENB_CAP: usize = 2048;
/// Offset-stream bytes, one per offset value (kept in the pointer region during the rANS
/// stage).
pub const OFFB_CAP: usize = OFFV_CAP;
/// Offset-tail bytes: in a block the dense kernel decodes every distance is below 2^14, so
/// each distance has at most one tail byte (kept in the pointer region during the rANS stage).
pub const TAILB_CAP: usize = OFFV_CAP;

/// Offset of the command region, which holds the literals after the parse.
pub const CMD_OFF: usize = 0;
/// Bytes of the command region (the literal region after the parse).
pub const CMD_REGION: usize = max(CMD_CAP, LIT_CAP);
/// Offset of the literal region (the command region, reused).
pub const LIT_OFF: usize = CMD_OFF;
/// Offset of the length values (u32, 4-aligned).
pub const LENV_OFF: usize = CMD_OFF + CMD_REGION;
/// Offset of the offset values (u16: every distance of a block this kernel takes is below
/// 2^14, a first byte and at most one tail byte).
pub const OFFV_OFF: usize = LENV_OFF + LENV_CAP * 4;
/// Offset of the byte-pointer region (u16 per output byte).
pub const PTR_OFF: usize = OFFV_OFF + OFFV_CAP * 2;
/// Offset of the control words (u32).
pub const CTRL_OFF: usize = PTR_OFF + DENSE_MAX_BLOCK as usize * 2;
/// Number of control words: 11 per block, 17 per warp (parse summaries and deferred long
/// commands, `dense/`).
pub const CTRL_WORDS: usize = 11 + 17 * (THREADS as usize / 32);
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
const _: () = assert!(CMD_REGION.is_multiple_of(16));
const _: () = assert!(LIT_CAP.is_multiple_of(16) && CMD_CAP.is_multiple_of(16));
// the per-lane fill stores up to eight pointers at once (`dense::fill_lane`)
const _: () = assert!(PTR_OFF.is_multiple_of(16));
const _: () = assert!(
    LENB_CAP.is_multiple_of(16) && OFFB_CAP.is_multiple_of(16) && TAILB_CAP.is_multiple_of(16)
);
/// CTAs of the dense kernel an SM holds at once: the kernel's PTX entry carries
/// `.minnctapersm` with this value (build.rs), so ptxas keeps the registers at or below
/// 65536 / (THREADS * MIN_CTAS_PER_SM); the shared memory fits with the 1 KiB the driver
/// reserves per CTA out of the H100/H200's 228 KiB.
pub const MIN_CTAS_PER_SM: u32 = 4;

const _: () = assert!((SMEM_BYTES + 1024) * MIN_CTAS_PER_SM as usize <= 228 * 1024);

/// CTAs of the random-access kernel (`decode_blocks_seek`) an SM must hold at once: with
/// two, ptxas gives it the registers it needs without spilling, which shortens the path of
/// a lone block (a one-tile read) and loses nothing on batches (measured on an H100: one tile
/// a few microseconds faster, 100,000 windows a batch as fast or faster).
pub const SEEK_CTAS_PER_SM: u32 = 2;

/// Stage bits for the stage-split benchmark: bit 0 runs the parse and pointer fill, bit 1
/// the resolve and output write. `STAGES_ALL` is the real decoder.
pub const STAGES_ALL: u32 = 3;
/// Stage bit 2: parse with one lane sequentially (`lz::walk_block`) instead of the whole
/// CTA in parallel; same pointers, same statuses (to measure what the parallel parse gains).
pub const STAGE_SEQ_PARSE: u32 = 4;
/// Stage bit 3: parse every block after its hand-off from the rANS stage, also where its
/// match streams are raw and could be parsed before it (`dense/`, `early_match_streams`),
/// for A/B measurements of the early parse (`Decoder::DenseStages(STAGES_ALL | STAGE_LATE_PARSE)`).
pub const STAGE_LATE_PARSE: u32 = 8;
