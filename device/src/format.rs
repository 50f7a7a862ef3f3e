//! Format structures and constants of format 1 shared by the encoder, the host decoders and
//! the kernels.
//!
//! Normative description: `docs/FORMAT.md`. Every struct here is `#[repr(C)]` +
//! [`bytemuck::Pod`], little-endian on disk, and has a compile-time size check, so the bytes in
//! an archive, the host structs and the kernel parameters are one definition.

use bytemuck::{Pod, Zeroable};

/// File magic, FORMAT.md §2 ("ACPX").
pub const MAGIC: [u8; 4] = *b"ACPX";
/// The format version this crate reads and writes, FORMAT.md §2: format 1, frozen. Versions 2
/// to 8 were pre-release versions; a reader refuses them (and any other value) naming it.
pub const FORMAT_VERSION: u16 = 1;
/// Highest pre-release format version (FORMAT.md §2): versions 2 to this one were written by
/// development builds before format 1 was frozen, and no reader of format 1 accepts them.
pub const LAST_PRE_RELEASE_VERSION: u16 = 8;

/// Index of the literal stream in per-stream arrays (FORMAT.md §3).
pub const STREAM_LITERALS: usize = 0;
/// Index of the length stream (varints) in per-stream arrays.
pub const STREAM_LENGTHS: usize = 1;
/// Index of the offset stream in per-stream arrays: the first byte of each distance's varint
/// (FORMAT.md §4.2).
pub const STREAM_OFFSETS: usize = 2;
/// Index of the command stream in per-stream arrays.
pub const STREAM_COMMANDS: usize = 3;
/// Index of the offset-tail stream: the remaining bytes of the distance varints whose first
/// byte has the continuation bit set (FORMAT.md §4.2).
pub const STREAM_OFFSET_TAILS: usize = 4;
/// Number of streams per block.
pub const STREAM_COUNT: usize = 5;
/// The streams' names, in index order (for messages and reports).
pub const STREAM_NAMES: [&str; STREAM_COUNT] =
    ["literals", "lengths", "offsets", "commands", "offset tails"];

/// Smallest allowed block size in bytes (FORMAT.md §2).
pub const MIN_BLOCK_SIZE: u32 = 4 << 10;
/// Largest allowed block size in bytes (FORMAT.md §2).
pub const MAX_BLOCK_SIZE: u32 = 4 << 20;
/// Default block size in bytes.
pub const DEFAULT_BLOCK_SIZE: u32 = 16 << 10;

/// The default match base: the length of the shortest match the command bytes code, to
/// which length codes are relative (FORMAT.md §2, §4.1). Also the largest base allowed.
pub const MATCH_BASE: u32 = 6;
/// The smallest match base an archive may declare (FORMAT.md §2).
pub const MIN_MATCH_BASE: u32 = 4;
/// Most bytes a LEB128 varint of the length or offset stream may take (FORMAT.md §4).
pub const VARINT_MAX_BYTES: usize = 5;
/// Repeat-distance history after a reset command (FORMAT.md §4).
pub const HISTORY_RESET: [u32; 4] = [1, 2, 4, 8];

/// Command byte of a history reset (FORMAT.md §4).
pub const CMD_RESET: u8 = 0xFF;
/// Command byte of a new match whose length is a varint of the length stream.
pub const CMD_MATCH_LONG: u8 = 0xFE;
/// First command byte of a new match with the length in the command (0xC0..=0xFD).
pub const CMD_MATCH_SHORT: u8 = 0xC0;
/// First command byte of a repeat match (0x80..=0xBF).
pub const CMD_REPEAT: u8 = 0x80;
/// Longest literal run one command carries.
pub const MAX_LITERAL_RUN: usize = 128;
/// Length codes of a short new-match command (0xC0..=0xFD): lengths `base..=base + 61`.
pub const SHORT_MATCH_CODES: u32 = 62;
/// Longest length a short new-match command carries at any base (0xFD at base
/// [`MATCH_BASE`]).
pub const MAX_SHORT_MATCH: u32 = MATCH_BASE + SHORT_MATCH_CODES - 1;
/// Repeat length nibble that means "add a varint from the length stream".
pub const REPEAT_LEN_ESCAPE: u32 = 15;

/// rANS probability resolution: frequencies sum to `1 << PROB_BITS` (FORMAT.md §5).
pub const PROB_BITS: u32 = 12;
/// Sum of a frequency table.
pub const PROB_SCALE: u32 = 1 << PROB_BITS;
/// Lower bound of a normalised rANS state; states live in `[RANS_L, 2^32)` (FORMAT.md §5).
pub const RANS_L: u32 = 1 << 16;
/// Most interleaved lanes a slice may use (FORMAT.md §3.1, §5.3): two per thread of one GPU
/// warp.
pub const MAX_LANES: u8 = 64;
/// The lanes of one round of the GPU warp (one per thread, `device/src/dense.rs`): a slice of
/// more lanes (a *wide* slice, FORMAT.md §5.3) decodes in a round of its own, two lanes per
/// thread.
pub const WARP_LANES: u8 = 32;
/// Lane count that marks a slice stored raw.
pub const LANES_RAW: u8 = 0;
/// Lane count that marks a two-bit literal slice (FORMAT.md §5.7): only
/// the literal stream may have it; it is no rANS slice and needs no table.
pub const LANES_TWO_BIT: u8 = 127;
/// Lane count that marks a two-bit literal slice with runs (FORMAT.md §5.8,
/// `two_bit::decode_runs`): the literal stream only, in an archive with an
/// [`EXTENSION_TYPE_TWO_BIT_RUNS`] record (§3.7).
pub const LANES_TWO_BIT_RUNS: u8 = 126;

/// Whether lane count `lanes` marks a two-bit literal slice, with or without runs
/// (FORMAT.md §5.7, §5.8): no rANS slice, no table.
#[inline(always)]
pub const fn is_two_bit(lanes: u8) -> bool {
    lanes == LANES_TWO_BIT || lanes == LANES_TWO_BIT_RUNS
}

/// Header flag: the encoder used repeat codes (informational).
pub const FLAG_REPEAT_CODES: u16 = 1 << 0;
/// Header flag: match sources may lie in earlier blocks (window larger than a block).
pub const FLAG_CROSS_BLOCK: u16 = 1 << 1;
/// Flags format 1 defines; the other bits are reserved and a reader rejects an archive with
/// any of them set (FORMAT.md §2).
pub const KNOWN_FLAGS: u16 = FLAG_REPEAT_CODES | FLAG_CROSS_BLOCK;

/// Fixed-size file header at offset 0 (FORMAT.md §2). 96 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
pub struct FileHeader {
    /// [`MAGIC`].
    pub magic: [u8; 4],
    /// [`FORMAT_VERSION`].
    pub version: u16,
    /// `FLAG_*` bits.
    pub flags: u16,
    /// Size of the original data in bytes.
    pub original_size: u64,
    /// Block size in bytes, a power of two in `[MIN_BLOCK_SIZE, MAX_BLOCK_SIZE]`.
    pub block_size: u32,
    /// `ceil(original_size / block_size)`.
    pub block_count: u32,
    /// Blocks per entropy-table group (the last group may hold fewer).
    pub group_blocks: u32,
    /// `ceil(block_count / group_blocks)`.
    pub group_count: u32,
    /// Encoder parameter: shortest match it emitted (informational, >= the match base).
    pub min_match: u32,
    /// Largest match distance in bytes.
    pub window: u32,
    /// Encoder parameter: dependency depth cap, 0 = none (informational).
    pub depth_cap: u32,
    /// Encoder parameter: level (informational).
    pub level: u32,
    /// Bytes of the entropy-table section.
    pub table_bytes: u64,
    /// Bytes of the data section.
    pub data_bytes: u64,
    /// XXH3-64 (seed 0) of the whole original data.
    pub content_checksum: u64,
    /// Bit widths of the packed block-entry fields (FORMAT.md §3.1) and the match base.
    pub entry_bits: EntryBits,
    /// XXH3-64 of header bytes `0..88`, the block table, the table section and the extension
    /// area (FORMAT.md §6).
    pub meta_checksum: u64,
}

/// Header bytes 72..88 (FORMAT.md §2): the bit widths of the packed fields of a block entry
/// (§3.1; each field of a [`BlockEntry`] but the checksum is stored in exactly this many
/// bits) and the match base. 16 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
pub struct EntryBits {
    /// Width of each stream's `stored_len`.
    pub stored: [u8; STREAM_COUNT],
    /// Width of each stream's `decoded_len`.
    pub decoded: [u8; STREAM_COUNT],
    /// Width of each stream's lane count.
    pub lanes: u8,
    /// Width of `max_depth`.
    pub depth: u8,
    /// Width of the source distance `i - lowest_source_block` of entry `i`.
    pub source: u8,
    /// The match base, [`MIN_MATCH_BASE`]..=[`MATCH_BASE`] ([`FileHeader::match_base`]).
    pub match_base: u8,
    /// Reserved: must be zero (FORMAT.md §2).
    pub reserved: [u8; 2],
}

/// Largest width of a packed entry field (FORMAT.md §3.1).
pub const MAX_FIELD_BITS: u8 = 32;

/// In-memory form of one block entry (FORMAT.md §3.1), which the reader unpacks the packed
/// entries into. 64 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
pub struct BlockEntry {
    /// XXH3-64 (seed 0) of the block's original bytes. (On disk the entry stores this value
    /// XOR [`block_position_mix`] of the block index, FORMAT.md §6; `crate::entry` in the
    /// host applies and removes the mix.)
    pub checksum: u64,
    /// Stored bytes of each stream's slice in the data section, in `STREAM_*` order.
    pub stored_len: [u32; STREAM_COUNT],
    /// Bytes of each stream once entropy-decoded.
    pub decoded_len: [u32; STREAM_COUNT],
    /// Largest dependency level of any match in the block (0 = no match reads a match).
    pub max_depth: u32,
    /// Lowest block index any match of this block reads from (== own index when independent).
    pub lowest_source_block: u32,
    /// Per stream: [`LANES_RAW`] or the rANS lane count `1..=MAX_LANES`.
    pub lanes: [u8; STREAM_COUNT],
    /// Must be zero.
    pub reserved: [u8; 3],
}

impl BlockEntry {
    /// Whether a slice of the block is wide: more than [`WARP_LANES`] lanes (FORMAT.md §5.3),
    /// which the GPU rANS stage decodes with a pair of warps.
    pub fn has_wide_slice(&self) -> bool {
        self.lanes.iter().any(|&l| l > WARP_LANES && l <= MAX_LANES)
    }
}

/// Expanded rANS decode table of one stream of one group: 4096 packed slots.
///
/// Slot `s` (the low [`PROB_BITS`] of a state) packs `symbol | (freq - 1) << 8 | (s - cum) << 20`,
/// so one load gives the symbol, its frequency and the state's bias. Built and validated on
/// the host from the compact table of FORMAT.md §5.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct DecodeTable {
    /// Packed slots, indexed by `state & (PROB_SCALE - 1)`.
    pub slots: [u32; PROB_SCALE as usize],
}

/// A (destination, source, length) copy token: the resolved form of one match, in absolute
/// output positions. Used by the match-copy kernel and the dense pipe. 16 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
pub struct CopyToken {
    /// Absolute output position of the first byte written.
    pub dst: u64,
    /// Backward distance in bytes: the source is `dst - dist`, always `>= 1`.
    pub dist: u32,
    /// Bytes copied, `>= 1`.
    pub len: u32,
}

/// A run of literals to place: `len` bytes from the literal buffer at `src` to output `dst`.
/// Used by the literal-scatter kernel. 16 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
pub struct LiteralRun {
    /// Absolute output position of the first byte written.
    pub dst: u64,
    /// Index of the first byte in the literal buffer.
    pub src: u32,
    /// Bytes placed.
    pub len: u32,
}

const _: () = assert!(core::mem::size_of::<LiteralRun>() == 16);
const _: () = assert!(core::mem::size_of::<FileHeader>() == 96);
const _: () = assert!(core::mem::size_of::<BlockEntry>() == 64);
const _: () = assert!(core::mem::size_of::<EntryBits>() == 16);
const _: () = assert!(core::mem::size_of::<DecodeTable>() == 16384);
const _: () = assert!(core::mem::size_of::<CopyToken>() == 16);

/// Byte offset of `meta_checksum` in the header: the checksum covers the bytes before it.
pub const META_CHECKSUM_OFFSET: usize = 88;
const _: () = assert!(core::mem::offset_of!(FileHeader, meta_checksum) == META_CHECKSUM_OFFSET);

impl FileHeader {
    /// The match base of the archive (FORMAT.md §2, header byte 85). Meaningful once the
    /// header was validated.
    #[inline]
    pub fn match_base(&self) -> u32 {
        self.entry_bits.match_base as u32
    }
}

/// The value XORed into block `index`'s XXH3-64 to give the checksum its entry stores
/// (FORMAT.md §6), so that a block moved to another position fails its check: the SplitMix64
/// output for the state `index` (add the golden-ratio constant, then two multiply-xorshift
/// rounds). Never zero for a `u32` index.
#[inline]
pub const fn block_position_mix(index: u32) -> u64 {
    let mut z = (index as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Bytes of an extension record's header (FORMAT.md §3.4): type, flags, payload length.
pub const EXTENSION_HEADER_BYTES: usize = 8;
/// Extension record flag: a reader that does not know the record's type must reject the
/// archive (FORMAT.md §3.4); without it, such a reader skips the record.
pub const EXTENSION_MUST_UNDERSTAND: u16 = 1 << 0;
/// Extension record flags format 1 defines; the other bits are reserved (must be zero).
pub const KNOWN_EXTENSION_FLAGS: u16 = EXTENSION_MUST_UNDERSTAND;
/// Extension record type 0: reserved, never valid (FORMAT.md §3.4).
pub const EXTENSION_TYPE_RESERVED: u16 = 0;
/// Extension record type 1: the FASTA index of the original data (FORMAT.md §3.4, §3.5; read
/// by the host crate, never must-understand).
pub const EXTENSION_TYPE_FASTA_INDEX: u16 = 1;
/// Extension record type 2: the refget checksums of the FASTA index's sequences (FORMAT.md
/// §3.4, §3.6; read by the host crate, never must-understand).
pub const EXTENSION_TYPE_SEQUENCE_CHECKSUMS: u16 = 2;
/// Extension record type 3 (FORMAT.md §3.7): the archive has two-bit literal slices with runs
/// ([`LANES_TWO_BIT_RUNS`]); written with [`EXTENSION_MUST_UNDERSTAND`], empty payload.
pub const EXTENSION_TYPE_TWO_BIT_RUNS: u16 = 3;
/// Extension record type 4 (FORMAT.md §3.8): blocks of the archive may begin their command
/// stream with a line layout (§4.6); written with [`EXTENSION_MUST_UNDERSTAND`], empty
/// payload, only in archives without [`FLAG_CROSS_BLOCK`].
pub const EXTENSION_TYPE_LINE_LAYOUT: u16 = 4;

impl DecodeTable {
    /// Unpacks slot `slot`: `(symbol, freq, bias)`.
    #[inline(always)]
    pub fn entry(&self, slot: u32) -> (u8, u32, u32) {
        let e = self.slots[(slot & (PROB_SCALE - 1)) as usize];
        unpack_slot(e)
    }
}

/// Unpacks a [`DecodeTable`] slot into `(symbol, freq, bias)`.
#[inline(always)]
pub fn unpack_slot(e: u32) -> (u8, u32, u32) {
    ((e & 0xFF) as u8, ((e >> 8) & 0xFFF) + 1, e >> 20)
}

/// Packs `(symbol, freq, bias)` into a [`DecodeTable`] slot.
#[inline(always)]
pub const fn pack_slot(symbol: u8, freq: u32, bias: u32) -> u32 {
    symbol as u32 | ((freq - 1) << 8) | (bias << 20)
}

/// Most literals one packed symbol carries (FORMAT.md §5.6).
pub const MAX_PACK_WIDTH: u32 = 4;
/// Largest literal alphabet a packed literal table may declare (FORMAT.md §5.6): with 16
/// letters, two literals still fit one 8-bit symbol.
pub const MAX_PACK_ALPHABET: usize = 16;
/// Slot of an expansion table ([`DecodeTable`] form, see [`TABLE_PACKED`]) that holds the
/// pack width `w`; slots `0..256` hold each packed symbol's `w` literals, the first in the low
/// byte.
pub const PACK_WIDTH_SLOT: usize = 256;

/// The pack width `w` of `alphabet` letters (FORMAT.md §5.6): the most literals, at most
/// [`MAX_PACK_WIDTH`], whose `alphabet^w` combinations fit the 256 symbols; 0 when fewer
/// than two fit (more than [`MAX_PACK_ALPHABET`] letters).
pub const fn pack_width(alphabet: usize) -> u32 {
    let a = if alphabet == 0 { 1 } else { alphabet };
    let mut w = 0u32;
    let mut combos = 1usize;
    while w < MAX_PACK_WIDTH && combos * a <= 256 {
        combos *= a;
        w += 1;
    }
    if w < 2 {
        0
    } else {
        w
    }
}

/// Sentinel in the table index: the group has no table for that stream.
pub const NO_TABLE: u32 = u32::MAX;

/// Bit of a `table_index` entry from which the entry holds `ctx_bit + 1` for a context pair
/// (FORMAT.md §5.4: tables `ti` and `ti + 1`, with `ti` in the bits below), 0 for one table.
pub const TABLE_CTX_SHIFT: u32 = 24;

/// Tag of a `table_index` entry (the bits from [`TABLE_CTX_SHIFT`]) for a packed literal
/// table (FORMAT.md §5.6): the decode table at `ti`, its expansion table ([`PACK_WIDTH_SLOT`])
/// at `ti + 1`. (Context pairs take tags 1-8.)
pub const TABLE_PACKED: u32 = 16;

/// The `table_index` entry of a group's packed literal table at `ti, ti + 1`
/// ([`TABLE_PACKED`]). `ti < 2^24`.
pub const fn packed_table_index_entry(ti: u32) -> u32 {
    ti | (TABLE_PACKED << TABLE_CTX_SHIFT)
}

/// The `table_index` entry of a group's stream: one table at `ti`, or a context pair at
/// `ti, ti + 1` picking by bit `ctx_bit` (`Some`). `ti < 2^24`.
pub const fn table_index_entry(ti: u32, ctx_bit: Option<u32>) -> u32 {
    match ctx_bit {
        Some(c) => ti | ((c + 1) << TABLE_CTX_SHIFT),
        None => ti,
    }
}

/// One byte range of a random-access read on the GPU (`host/gpu/seek.rs`, the kernel
/// `seek_gather`): original bytes `[offset, offset + len)` go to the caller's buffer at
/// `out_at`; the blocks they lie in, `first_block` to `(offset + len - 1) / block_size`, were
/// decoded into consecutive slots from `first_slot`. 32 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct SeekRange {
    /// First original byte of the range.
    pub offset: u64,
    /// Bytes of the range (at least 1).
    pub len: u64,
    /// Where the range's first byte goes in the caller's buffer.
    pub out_at: u64,
    /// The slot of block `first_block`.
    pub first_slot: u32,
    /// The block holding `offset`.
    pub first_block: u32,
}
const _: () = assert!(core::mem::size_of::<SeekRange>() == 32);
