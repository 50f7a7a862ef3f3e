//! Reading a container (FORMAT.md §2-§3, §5.2): [`Archive::parse`] checks every size, offset,
//! table and extension record before any block is touched.

use super::extension::parse_extensions;
use super::extension::Extension;
use super::tables::{self, FreqTable, TableRecord};
use super::{meta_checksum, HEADER_SIZE};
use crate::device::format::*;
use crate::device::rans::SliceTables;
use crate::error::FormatError;
use std::sync::atomic::{AtomicU64, Ordering};

/// A validated archive over borrowed bytes.
///
/// Construction checks every rule of FORMAT.md §2-§3 and §5.2 that can be checked without
/// decoding: after [`Archive::parse`] every slice range lies inside the data section and every
/// rANS slice has a table.
pub struct Archive<'a> {
    /// The header.
    pub(crate) header: FileHeader,
    /// The block table.
    pub(crate) entries: Vec<BlockEntry>,
    /// Per block: byte offset of its first slice inside the data section.
    pub(crate) block_offsets: Vec<u64>,
    /// Per group and stream: the table, if the group has one for that stream.
    /// (Boxed: an absent table costs 8 bytes, so a hostile archive of many groups without
    /// tables cannot make the reader hold many times its size.)
    pub(crate) tables: Vec<[Option<Box<StreamTable>>; STREAM_COUNT]>,
    /// The data section.
    pub(crate) data: &'a [u8],
    /// The data section's offset in the archive.
    pub(crate) data_offset: u64,
    /// The extension area (FORMAT.md §3.4): the bytes after the data section.
    pub(super) extension_area: &'a [u8],
    /// Its records, checked at parse time.
    extensions: Vec<Extension<'a>>,
    /// Whether a block's command stream may begin with a line layout (FORMAT.md §3.8,
    /// §4.6): the archive has the type-4 record, or (read in one pass, before its extension
    /// area) it may have it, which the reader checks at the end with
    /// [`Archive::first_line_layout`]. False until the records are read.
    pub(crate) line_layouts: bool,
    /// The lowest block decoded with a line layout so far (`u32::MAX`: none).
    first_line_layout: std::sync::atomic::AtomicU32,
    /// Bytes of expanded decode tables the archive may still keep ([`Archive::table`]):
    /// [`table_cache_budget`] at parse time.
    pub(crate) table_cache_left: AtomicU64,
}

/// Bytes of expanded decode tables an archive keeps for reuse: the larger of 256 MiB and a
/// quarter of its original size. A group's tables expand to 16-32 KiB per stream, so a
/// valid archive of 4 KiB blocks with a table group per block would otherwise hold ~25 times
/// its output in tables once decoded; past the budget a table is expanded for each use and
/// dropped after it. The encoder's groups (1 MiB of output, [`crate::encode::GROUP_BYTES`])
/// have at most 160 KiB of tables (five streams, two tables each), a sixth of their output,
/// so its archives stay within the budget. The GPU decoder refuses archives whose tables exceed it.
pub fn table_cache_budget(original_size: u64) -> u64 {
    (256u64 << 20).max(original_size / 4)
}

/// One group's table record for one stream (one table or a context pair, FORMAT.md §5.2),
/// kept compact (512 bytes per table, the second boxed) and expanded to the 16 KiB slot form
/// on first use: a hostile archive of many tiny groups then costs memory in proportion to its
/// size at parse time, and expansion only for groups actually decoded, kept while the
/// archive's [`table_cache_budget`] lasts.
pub struct StreamTable {
    freq: [u16; 256],
    /// A context pair's second table (boxed: a one-table record stays 512 bytes).
    freq1: Option<Box<[u16; 256]>>,
    ctx_bit: u8,
    /// A packed literal table's alphabet (FORMAT.md §5.6).
    alphabet: Option<Box<[u8]>>,
    pub(crate) expanded: std::sync::OnceLock<Box<[DecodeTable]>>,
}

/// The expanded decode tables of one [`StreamTable`], borrowed from the archive's cache or
/// owned alone (past the cache's budget; a borrow, not a shared count, so that the threads
/// decoding blocks of one group never write a common cache line, as an `Arc` clone per
/// lookup would); [`TableHandle::get`] gives them as
/// the decoders take them.
pub struct TableHandle<'a> {
    tables: std::borrow::Cow<'a, [DecodeTable]>,
    ctx_bit: u8,
    packed: bool,
}

impl TableHandle<'_> {
    /// The tables as the decoders take them: a packed literal table's expansion table
    /// (`tables::expansion_table`) after its decode table, a context pair's two tables.
    pub fn get(&self) -> SliceTables<'_> {
        if self.packed {
            SliceTables {
                pack: Some(&self.tables[1]),
                ..SliceTables::single(&self.tables[0])
            }
        } else {
            SliceTables {
                tables: &self.tables,
                ctx_bit: self.ctx_bit as u32,
                pack: None,
            }
        }
    }
}

impl StreamTable {
    fn new(r: TableRecord) -> StreamTable {
        // frequencies are at most PROB_SCALE = 4096 (deserialize checks)
        let compact = |t: &FreqTable| t.freq.map(|f| f as u16);
        StreamTable {
            freq: compact(&r.tables[0]),
            freq1: r.tables.get(1).map(|t| Box::new(compact(t))),
            ctx_bit: r.ctx_bit,
            alphabet: r.alphabet.map(Vec::into_boxed_slice),
            expanded: std::sync::OnceLock::new(),
        }
    }

    /// The record as read from the archive.
    pub fn record(&self) -> TableRecord {
        let full = |f: &[u16; 256]| FreqTable {
            freq: f.map(u32::from),
        };
        TableRecord {
            tables: std::iter::once(&self.freq)
                .chain(self.freq1.as_deref())
                .map(full)
                .collect(),
            ctx_bit: self.ctx_bit,
            alphabet: self.alphabet.as_deref().map(<[u8]>::to_vec),
        }
    }

    /// True for a context pair (kind-2 record).
    pub fn has_context(&self) -> bool {
        self.freq1.is_some()
    }

    /// True for a packed literal table (kind-3 record, FORMAT.md §5.6).
    pub fn is_packed(&self) -> bool {
        self.alphabet.is_some()
    }

    /// Literals per symbol: the pack width of a packed literal table's alphabet (2-4,
    /// FORMAT.md §5.6), else 1; read from the record, without expanding the tables.
    pub fn literal_width(&self) -> usize {
        self.alphabet
            .as_deref()
            .map_or(1, |a| pack_width(a.len()) as usize)
    }

    /// Expands the record (not cached): its decode table(s), and a packed literal table's
    /// expansion table (`tables::expansion_table`) after its decode table.
    pub fn expand(&self) -> TableHandle<'static> {
        self.handle(std::borrow::Cow::Owned(self.build()))
    }

    fn build(&self) -> Vec<DecodeTable> {
        let r = self.record();
        let mut t = Vec::with_capacity(r.tables.len() + r.alphabet.is_some() as usize);
        t.extend(r.tables.iter().map(|t| *t.decode_table()));
        if let Some(a) = &r.alphabet {
            t.push(*tables::expansion_table(a));
        }
        t
    }

    fn handle<'a>(&self, tables: std::borrow::Cow<'a, [DecodeTable]>) -> TableHandle<'a> {
        TableHandle {
            tables,
            ctx_bit: self.ctx_bit,
            packed: self.alphabet.is_some(),
        }
    }

    /// The expanded tables, built once and kept while `left` (the archive's remaining
    /// [`table_cache_budget`], bytes) covers them, else built for this use alone.
    fn cached(&self, left: &AtomicU64) -> TableHandle<'_> {
        if let Some(t) = self.expanded.get() {
            return self.handle(std::borrow::Cow::Borrowed(t));
        }
        let t = self.build();
        let bytes = std::mem::size_of_val::<[DecodeTable]>(&t) as u64;
        if left
            .try_update(Ordering::Relaxed, Ordering::Relaxed, |l| {
                l.checked_sub(bytes)
            })
            .is_err()
        {
            return self.handle(std::borrow::Cow::Owned(t));
        }
        // a thread that expanded the same record at the same time may have stored its copy
        // first: keep that one and give the bytes back
        if self.expanded.set(t.into_boxed_slice()).is_err() {
            left.fetch_add(bytes, Ordering::Relaxed);
        }
        let t = self
            .expanded
            .get()
            .expect("set above, by this thread or another");
        self.handle(std::borrow::Cow::Borrowed(t))
    }
}

fn herr(field: &'static str, why: impl Into<String>) -> FormatError {
    FormatError::Header {
        field,
        why: why.into(),
    }
}

/// The header's checks (FORMAT.md §2-§3: magic, size, version, flags, block size, counts,
/// window, match base, entry widths) on the first 96 bytes of `bytes`.
///
/// Errors: [`FormatError`] naming the first rule broken ([`FormatError::BadMagic`] before
/// [`FormatError::TooShort`]).
pub(crate) fn parse_header(bytes: &[u8]) -> Result<FileHeader, FormatError> {
    // the magic first (FORMAT.md §3), so that a short file of another kind is named as
    // such rather than as a truncated archive
    if let Some(&got) = bytes.first_chunk::<4>() {
        if got != MAGIC {
            return Err(FormatError::BadMagic { got });
        }
    }
    if bytes.len() < HEADER_SIZE {
        return Err(FormatError::TooShort {
            got: bytes.len() as u64,
            need: HEADER_SIZE as u64,
        });
    }
    // (the magic was checked above: at least 96 bytes hold its 4)
    let h: FileHeader = bytemuck::pod_read_unaligned(&bytes[..HEADER_SIZE]);
    // FORMAT.md §2: format 1 only; the pre-release versions are named as such
    if h.version != FORMAT_VERSION {
        return Err(if (2..=LAST_PRE_RELEASE_VERSION).contains(&h.version) {
            FormatError::PreReleaseVersion { got: h.version }
        } else {
            FormatError::Version { got: h.version }
        });
    }
    if h.flags & !KNOWN_FLAGS != 0 {
        return Err(herr(
            "flags",
            format!("unknown bits {:#06x}", h.flags & !KNOWN_FLAGS),
        ));
    }
    // FORMAT.md §2: block size is a power of two in [4 KiB, 4 MiB].
    if !h.block_size.is_power_of_two() || !(MIN_BLOCK_SIZE..=MAX_BLOCK_SIZE).contains(&h.block_size)
    {
        return Err(herr(
            "block_size",
            format!("{} is not a power of two in [4096, 4194304]", h.block_size),
        ));
    }
    let bs = h.block_size as u64;
    if h.original_size.div_ceil(bs) != h.block_count as u64 {
        return Err(herr(
            "block_count",
            format!("{} != ceil({} / {})", h.block_count, h.original_size, bs),
        ));
    }
    if h.group_blocks == 0 {
        return Err(herr("group_blocks", "must be at least 1"));
    }
    if (h.block_count as u64).div_ceil(h.group_blocks as u64) != h.group_count as u64 {
        return Err(herr(
            "group_count",
            format!(
                "{} != ceil({} / {})",
                h.group_count, h.block_count, h.group_blocks
            ),
        ));
    }
    if h.window == 0 {
        return Err(herr("window", "must be at least 1"));
    }
    let cross = h.flags & FLAG_CROSS_BLOCK != 0;
    if !cross && h.window > h.block_size {
        return Err(herr(
            "window",
            "larger than a block without the cross-block flag",
        ));
    }
    // FORMAT.md §2: a match base of 4 to 6
    let b = h.entry_bits.match_base as u32;
    if !(MIN_MATCH_BASE..=MATCH_BASE).contains(&b) {
        return Err(herr(
            "match_base",
            format!("{b} is not in {MIN_MATCH_BASE}..={MATCH_BASE}"),
        ));
    }
    if h.min_match < h.match_base() {
        return Err(herr(
            "min_match",
            format!("{} < the match base {}", h.min_match, h.match_base()),
        ));
    }
    // FORMAT.md §2: widths of at most 32 bits, reserved bytes 86..88 zero
    super::entry::check_bits(&h.entry_bits).map_err(|why| herr("entry_bits", why))?;
    Ok(h)
}

/// FORMAT.md §1: the size of one block entry, of the block table, and the end of the data
/// section (where the extension area starts) in the archive of header `h`.
///
/// Errors: [`FormatError::Header`] when the sizes overflow 64 bits.
pub(crate) fn section_sizes(h: &FileHeader) -> Result<(usize, u64, u64), FormatError> {
    let entry_size = super::entry::packed_size(&h.entry_bits);
    let table_len = h.block_count as u64 * entry_size as u64;
    // FORMAT.md §1: the sections end at or before the end of the file; the bytes after
    // the data section are the extension area
    let data_end = (HEADER_SIZE as u64)
        .checked_add(table_len)
        .and_then(|v| v.checked_add(h.table_bytes))
        .and_then(|v| v.checked_add(h.data_bytes))
        .ok_or_else(|| herr("data_bytes", "section sizes overflow"))?;
    Ok((entry_size, table_len, data_end))
}

/// The records of an extension area (FORMAT.md §3.4) checked as [`Archive::parse`] checks
/// them (the caller checked the meta checksum that covers them).
pub(crate) fn check_extension_area(area: &[u8]) -> Result<(), FormatError> {
    parse_extensions(area).map(|_| ())
}

/// FORMAT.md §3.7: the type-3 record (two-bit slices with runs) at most once, with an empty
/// payload, and present where a block has a slice with runs: `first_use`, the first such
/// block ([`first_two_bit_runs`]). `records`: how many type-3 records the area holds,
/// `with_payload` whether one has a payload.
pub(crate) fn check_two_bit_runs(
    first_use: Option<usize>,
    records: usize,
    with_payload: bool,
) -> Result<(), FormatError> {
    if records > 1 || with_payload {
        return Err(FormatError::Extension {
            offset: 0,
            why: "a second two-bit runs record, or one with a payload".into(),
        });
    }
    match (first_use, records) {
        (Some(block), 0) => Err(FormatError::BlockEntry {
            block: block as u32,
            why: "a two-bit slice with runs in an archive without the two-bit runs record".into(),
        }),
        _ => Ok(()),
    }
}

/// FORMAT.md §3.8: the type-4 record (line layouts) at most once, with an empty payload and
/// the must-understand flag, and only in an archive of independent blocks (`h` without
/// `FLAG_CROSS_BLOCK`); `records`: how many the area holds, `malformed` whether one has a
/// payload or lacks the flag. Returns whether the archive has it (its blocks may then have
/// line layouts, §4.6).
pub(crate) fn check_line_layout(
    h: &FileHeader,
    records: usize,
    malformed: bool,
) -> Result<bool, FormatError> {
    let err = |why: &str| FormatError::Extension {
        offset: 0,
        why: why.into(),
    };
    if records > 1 || malformed {
        return Err(err(
            "a second line layout record, or one with a payload or without the \
             must-understand flag",
        ));
    }
    if records == 1 && h.flags & FLAG_CROSS_BLOCK != 0 {
        return Err(err(
            "a line layout record in an archive whose window crosses blocks",
        ));
    }
    Ok(records == 1)
}

/// FORMAT.md §3.8: an archive read in one pass, whose extension area came after its blocks,
/// has the type-4 record where a block had a line layout: `has_record`, and
/// [`Archive::first_line_layout`] of the archive.
pub(crate) fn check_line_layout_used(
    first_use: Option<usize>,
    has_record: bool,
) -> Result<(), FormatError> {
    match (first_use, has_record) {
        (Some(block), false) => Err(FormatError::BlockEntry {
            block: block as u32,
            why: "a line layout in an archive without the line layout record".into(),
        }),
        _ => Ok(()),
    }
}

/// The first block of `entries` whose literals are a slice with runs (FORMAT.md §5.8).
pub(crate) fn first_two_bit_runs(entries: &[BlockEntry]) -> Option<usize> {
    (entries.iter()).position(|e| e.lanes[STREAM_LITERALS] == LANES_TWO_BIT_RUNS)
}

impl<'a> Archive<'a> {
    /// Parses and validates an archive.
    ///
    /// Errors: [`FormatError`] naming the first rule broken.
    pub fn parse(bytes: &'a [u8]) -> Result<Archive<'a>, FormatError> {
        let h = parse_header(bytes)?;
        let (_, table_len, data_end) = section_sizes(&h)?;
        if data_end > bytes.len() as u64 {
            return Err(FormatError::Size {
                expected: data_end,
                got: bytes.len() as u64,
            });
        }
        let bt_end = HEADER_SIZE + table_len as usize;
        let tables_end = bt_end + h.table_bytes as usize;
        let block_table = &bytes[HEADER_SIZE..bt_end];
        let table_section = &bytes[bt_end..tables_end];
        let extension_area = &bytes[data_end as usize..];
        if meta_checksum(&h, block_table, table_section, extension_area) != h.meta_checksum {
            return Err(FormatError::MetaChecksum);
        }
        let extensions = parse_extensions(extension_area)?;
        let mut a: Archive<'a> = Archive::from_sections(h, block_table, table_section)?;
        a.data = &bytes[tables_end..data_end as usize];
        a.data_offset = tables_end as u64;
        a.extension_area = extension_area;
        a.extensions = extensions;
        let runs = (a.extensions.iter()).filter(|r| r.kind == EXTENSION_TYPE_TWO_BIT_RUNS);
        check_two_bit_runs(
            first_two_bit_runs(&a.entries),
            runs.clone().count(),
            runs.clone().any(|r| !r.payload.is_empty()),
        )?;
        let layouts = (a.extensions.iter()).filter(|r| r.kind == EXTENSION_TYPE_LINE_LAYOUT);
        a.line_layouts = check_line_layout(
            &a.header,
            layouts.clone().count(),
            layouts
                .clone()
                .any(|r| !r.payload.is_empty() || !r.must_understand()),
        )?;
        Ok(a)
    }

    /// The archive of header `h` (checked by [`parse_header`]), its block table and its
    /// table section (FORMAT.md §3.1, §5.1-§5.2), every rule checked that [`Archive::parse`]
    /// checks on them, with an empty data section and extension area: what a streaming
    /// decoder ([`crate::decode::stream`]) reads before the data, whose meta checksum it
    /// checks at the end. [`Archive::with_data`] gives it a data section.
    ///
    /// Errors: [`FormatError`] naming the first rule broken.
    pub(crate) fn from_sections(
        h: FileHeader,
        block_table: &[u8],
        table_section: &[u8],
    ) -> Result<Archive<'static>, FormatError> {
        let bs = h.block_size as u64;
        let cross = h.flags & FLAG_CROSS_BLOCK != 0;
        let entry_size = super::entry::packed_size(&h.entry_bits);
        let entries: Vec<BlockEntry> = block_table
            .chunks_exact(entry_size.max(1))
            .enumerate()
            .map(|(i, c)| {
                super::entry::unpack(c, i as u32, &h.entry_bits).map_err(|why| {
                    FormatError::BlockEntry {
                        block: i as u32,
                        why,
                    }
                })
            })
            .collect::<Result<_, _>>()?;

        let mut tables = Vec::with_capacity(h.group_count as usize);
        let mut pos = 0usize;
        // FORMAT.md §5.1, §5.2
        for group in 0..h.group_count {
            let mut g: [Option<Box<StreamTable>>; STREAM_COUNT] = Default::default();
            for (k, t) in g.iter_mut().enumerate() {
                *t = TableRecord::deserialize(table_section, &mut pos, k)
                    .map_err(|e| match e {
                        FormatError::Table { what } => FormatError::GroupTable {
                            group,
                            stream: crate::device::format::STREAM_NAMES[k],
                            what,
                        },
                        e => e,
                    })?
                    .map(|t| Box::new(StreamTable::new(t)));
            }
            tables.push(g);
        }
        if pos != table_section.len() {
            return Err(FormatError::Table {
                what: "bytes left after the last group's tables",
            });
        }

        let mut block_offsets = Vec::with_capacity(entries.len());
        let mut off = 0u64;
        for (i, e) in entries.iter().enumerate() {
            let i32_ = i as u32;
            let berr = |why: String| FormatError::BlockEntry { block: i32_, why };
            let block_len = (h.original_size - i as u64 * bs).min(bs);
            if e.reserved != [0; 3] {
                return Err(berr("reserved field is not zero".into()));
            }
            // FORMAT.md §3: a block reads only itself and earlier blocks, and earlier ones only
            // with the cross-block flag.
            if e.lowest_source_block > i32_ || (!cross && e.lowest_source_block != i32_) {
                return Err(berr(format!(
                    "lowest source block {} is not allowed",
                    e.lowest_source_block
                )));
            }
            let group = i / h.group_blocks as usize;
            for k in 0..STREAM_COUNT {
                // FORMAT.md §3: every decoded stream is at most block length + 1 bytes.
                if e.decoded_len[k] as u64 > block_len + 1 {
                    return Err(berr(format!(
                        "stream {k} decodes to {} bytes, more than the block allows",
                        e.decoded_len[k]
                    )));
                }
                match e.lanes[k] {
                    LANES_RAW => {
                        if e.stored_len[k] != e.decoded_len[k] {
                            return Err(berr(format!(
                                "raw stream {k} stores {} bytes but decodes to {}",
                                e.stored_len[k], e.decoded_len[k]
                            )));
                        }
                    }
                    // FORMAT.md §3.1 rule 4, §5.7, §5.8: the literals only
                    LANES_TWO_BIT | LANES_TWO_BIT_RUNS if k == STREAM_LITERALS => {
                        if e.decoded_len[k] == 0 {
                            return Err(berr(
                                "an empty literal stream is stored as a two-bit slice".into(),
                            ));
                        }
                    }
                    l if l <= MAX_LANES => {
                        if tables[group][k].is_none() {
                            return Err(berr(format!(
                                "stream {k} is rANS-coded but group {group} has no table for it"
                            )));
                        }
                    }
                    l => {
                        return Err(berr(format!(
                            "stream {k} has {l} lanes (at most {MAX_LANES}, or \
                             {LANES_TWO_BIT} for a two-bit literal slice)"
                        )))
                    }
                }
            }
            block_offsets.push(off);
            // (saturating: a table of ~2^30 blocks of 4 GiB slices must not wrap into a
            // matching data_bytes; a saturated sum matches no real data section)
            off = off.saturating_add(e.stored_len.iter().map(|&l| l as u64).sum::<u64>());
        }
        if off != h.data_bytes {
            return Err(herr(
                "data_bytes",
                format!(
                    "{} but the block table's slices add up to {off}",
                    h.data_bytes
                ),
            ));
        }
        Ok(Archive {
            header: h,
            entries,
            block_offsets,
            tables,
            data: &[],
            data_offset: (HEADER_SIZE + block_table.len() + table_section.len()) as u64,
            extension_area: &[],
            extensions: Vec::new(),
            line_layouts: false,
            first_line_layout: u32::MAX.into(),
            table_cache_left: AtomicU64::new(table_cache_budget(h.original_size)),
        })
    }

    /// The same archive over the data section `data` (or the part of it that
    /// [`Archive::block_offsets`], as the caller rebased them, index), without its extension
    /// records.
    pub(crate) fn with_data<'b>(self, data: &'b [u8]) -> Archive<'b> {
        Archive {
            header: self.header,
            entries: self.entries,
            block_offsets: self.block_offsets,
            tables: self.tables,
            data,
            data_offset: self.data_offset,
            extension_area: &[],
            extensions: Vec::new(),
            line_layouts: self.line_layouts,
            first_line_layout: self.first_line_layout,
            table_cache_left: self.table_cache_left,
        }
    }

    /// Blocks `blocks` of an archive of independent blocks as an archive of their own, for a
    /// GPU decode in pieces (`crate::gpu::pieces`): the header's sizes and counts, the entries
    /// (their source block rebased), the slice offsets, the data and the table groups are
    /// those of the blocks; the content checksum, the table section's size and the extension
    /// area are not carried (the caller checks the whole content). `blocks` must start on a table group (FORMAT.md §5.1)
    /// and lie inside the archive.
    #[cfg(feature = "gpu")]
    pub(crate) fn piece(&self, blocks: std::ops::Range<usize>) -> Archive<'a> {
        let gb = self.header.group_blocks as usize;
        debug_assert!(blocks.start.is_multiple_of(gb) && blocks.end <= self.entries.len());
        debug_assert!(!self.cross_block());
        let first = blocks.start as u32;
        let entries: Vec<BlockEntry> = self.entries[blocks.clone()]
            .iter()
            .map(|e| BlockEntry {
                lowest_source_block: e.lowest_source_block - first,
                ..*e
            })
            .collect();
        let base = self.block_offsets.get(blocks.start).copied().unwrap_or(0);
        let end = self
            .block_offsets
            .get(blocks.end)
            .copied()
            .unwrap_or(self.data.len() as u64);
        let block_offsets: Vec<u64> = self.block_offsets[blocks.clone()]
            .iter()
            .map(|o| o - base)
            .collect();
        let tables = self.tables[blocks.start / gb..blocks.end.div_ceil(gb)]
            .iter()
            .map(|g| {
                g.each_ref()
                    .map(|t| t.as_deref().map(|t| Box::new(StreamTable::new(t.record()))))
            })
            .collect::<Vec<_>>();
        let bs = self.header.block_size as u64;
        let original_size = (blocks.end as u64 * bs).min(self.header.original_size)
            - (blocks.start as u64 * bs).min(self.header.original_size);
        let header = FileHeader {
            original_size,
            block_count: entries.len() as u32,
            group_count: tables.len() as u32,
            data_bytes: end - base,
            content_checksum: 0,
            ..self.header
        };
        Archive {
            header,
            entries,
            block_offsets,
            tables,
            data: &self.data[base as usize..end as usize],
            data_offset: self.data_offset + base,
            extension_area: &[],
            extensions: Vec::new(),
            line_layouts: self.line_layouts,
            first_line_layout: u32::MAX.into(),
            table_cache_left: AtomicU64::new(table_cache_budget(original_size)),
        }
    }

    /// Bytes of one block-table entry on disk (FORMAT.md §3.1), from the header's widths.
    pub fn entry_size(&self) -> usize {
        super::entry::packed_size(&self.header.entry_bits)
    }

    /// The records of the extension area (FORMAT.md §3.4), in file order, each checked by
    /// [`Archive::parse`] (type not 0, reserved flags zero, payload inside the area, and none
    /// of an unknown type marked must-understand). A reader that does not know a record's
    /// type skips it.
    pub fn extensions(&self) -> impl Iterator<Item = Extension<'a>> + '_ {
        self.extensions.iter().copied()
    }

    /// The header (FORMAT.md §2).
    pub fn header(&self) -> &FileHeader {
        &self.header
    }

    /// The block table: one entry per block (FORMAT.md §3.1).
    pub fn entries(&self) -> &[BlockEntry] {
        &self.entries
    }

    /// The block table, writable: for tests that give the decoders entries the parse would
    /// refuse. Not part of the API.
    #[doc(hidden)]
    pub fn entries_mut(&mut self) -> &mut [BlockEntry] {
        &mut self.entries
    }

    /// Per block: byte offset of its first slice inside the data section.
    pub fn block_offsets(&self) -> &[u64] {
        &self.block_offsets
    }

    /// Per table group and stream: the table, if the group has one for that stream
    /// (FORMAT.md §5.2).
    pub fn tables(&self) -> &[[Option<Box<StreamTable>>; STREAM_COUNT]] {
        &self.tables
    }

    /// The data section (every block's slices, FORMAT.md §4).
    pub fn data(&self) -> &'a [u8] {
        self.data
    }

    /// The data section's offset in the archive, in bytes.
    pub fn data_offset(&self) -> u64 {
        self.data_offset
    }

    /// Number of blocks.
    pub fn block_count(&self) -> usize {
        self.entries.len()
    }

    /// Original byte range of block `b`.
    pub fn block_range(&self, b: usize) -> std::ops::Range<u64> {
        let bs = self.header.block_size as u64;
        let start = b as u64 * bs;
        start..(start + bs).min(self.header.original_size)
    }

    /// The four stored slices of block `b`, in stream order.
    pub fn slices(&self, b: usize) -> [&'a [u8]; STREAM_COUNT] {
        let e = &self.entries[b];
        let mut off = self.block_offsets[b] as usize;
        let mut out: [&[u8]; STREAM_COUNT] = [&[]; STREAM_COUNT];
        for k in 0..STREAM_COUNT {
            let n = e.stored_len[k] as usize;
            out[k] = &self.data[off..off + n];
            off += n;
        }
        out
    }

    /// Decode table(s) of stream `k` for block `b` (None if the group has none), expanded
    /// once and shared while the archive's [`table_cache_budget`] lasts, else for this use
    /// alone; [`TableHandle::get`] gives them as the decoders take them.
    pub fn table(&self, b: usize, k: usize) -> Option<TableHandle<'_>> {
        self.tables[b / self.header.group_blocks as usize][k]
            .as_deref()
            .map(|t| t.cached(&self.table_cache_left))
    }

    /// Literals per rANS symbol of block `b`'s literal slice: the pack width of its group's
    /// packed literal table (2-4, FORMAT.md §5.6), else 1.
    pub fn literal_width(&self, b: usize) -> usize {
        self.tables[b / self.header.group_blocks as usize][STREAM_LITERALS]
            .as_deref()
            .map_or(1, StreamTable::literal_width)
    }

    /// Notes that block `b` was decoded with a line layout (FORMAT.md §4.6).
    pub(crate) fn note_line_layout(&self, b: usize) {
        self.first_line_layout
            .fetch_min(b as u32, std::sync::atomic::Ordering::Relaxed);
    }

    /// The lowest block decoded with a line layout so far, if any.
    pub(crate) fn first_line_layout(&self) -> Option<usize> {
        match self
            .first_line_layout
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            u32::MAX => None,
            b => Some(b as usize),
        }
    }

    /// Whether the archive has the line layout record (FORMAT.md §3.8): its blocks may leave
    /// line ends out of their match layer (§4.6).
    pub fn has_line_layouts(&self) -> bool {
        self.line_layouts
    }

    /// True when match sources may lie in earlier blocks.
    pub fn cross_block(&self) -> bool {
        self.header.flags & FLAG_CROSS_BLOCK != 0
    }
}
