//! Streaming decode: an archive read once, in file order, from any [`Read`] (a pipe, a socket,
//! a file larger than memory), its original written in order to any [`Write`] as soon as each
//! batch of blocks is verified, in memory bounded by the batch, the window and the archive's
//! metadata, never by the original's size.
//!
//! The sections come in the order of FORMAT.md §1: the header (§2), the block table (§3.1)
//! and the table section (§5.1) are read and checked first ([`Archive::from_sections`]); then
//! the data section is read batch by batch (whole decoder groups of blocks, a few per worker
//! thread), each batch decoded on the rayon pool and every block verified against its
//! checksum (§6) before any of its bytes is written; last, the extension area (§3.4) is read
//! to the end of the stream and the meta checksum, which covers it, and the content checksum
//! are checked. A failure there comes after the output was written: the caller must discard
//! it (the command line removes its output file).
//!
//! With a cross-block window (§3.3) the decoder also keeps the decoded bytes that the batch's
//! blocks or later ones may read: from the lowest of their source blocks, and never more than
//! `window` bytes before a block (§4.4 forbids longer distances, so older bytes are never
//! read).

use super::checksum::{self, Folder, KibSums, KIB};
use super::region::{span_of, CROSS_JOIN_BYTES};
use super::{block_error, decode_group_at, streams, verify_block, FAST_SCRATCH};
use crate::device::format::{
    FileHeader, EXTENSION_HEADER_BYTES, EXTENSION_MUST_UNDERSTAND, EXTENSION_TYPE_LINE_LAYOUT,
    EXTENSION_TYPE_TWO_BIT_RUNS, META_CHECKSUM_OFFSET,
};
use crate::device::lz::BlockFrame;
use crate::error::{DecodeError, Error, FormatError};
use crate::format::archive::{
    check_extension_area, check_line_layout, check_line_layout_used, check_two_bit_runs,
    first_two_bit_runs, parse_header, section_sizes,
};
use crate::format::{Archive, HEADER_SIZE};
use rayon::prelude::*;
use std::io::{Read, Seek, SeekFrom, Write};
use std::ops::Range;
use std::sync::atomic::Ordering;
use xxhash_rust::xxh3::Xxh3;

/// Output bytes of a batch, at least: the decoder groups of a batch decode in parallel, so a
/// batch is also at least four groups per worker thread ([`batch_target`]).
const MIN_BATCH_BYTES: usize = 32 << 20;

/// Bytes of expanded decode tables kept for reuse, at least (see [`decode_data`]).
const MIN_TABLE_CACHE: usize = 16 << 20;

/// Output bytes of the first batch, smaller so that the first bytes are written early.
const FIRST_BATCH_BYTES: usize = 4 << 20;

/// Decodes the archive read from `archive` and writes the original to `out`; returns the
/// number of bytes written (the header's `original_size`).
///
/// The archive is read once, front to back, and need not be seekable or whole in memory; the
/// original is written in order, a batch of blocks at a time as soon as each of its blocks
/// passed its checksum, so the first bytes come out after the first batch (a few MiB)
/// decodes. Runs on the current rayon thread pool; writes on one extra thread.
///
/// Memory: about 3 batches of output (a batch is the larger of 32 MiB and 4 MiB per worker
/// thread), one batch of stored data, the archive's block table and compact tables (about
/// 100 bytes per block and 3 KiB per table group), the expanded tables of the batch's groups
/// and, for archives with a cross-block window, up to `window` bytes of earlier output.
///
/// Errors: [`Error::Format`] for a damaged or truncated container (as [`crate::decompress`],
/// with the meta checksum and extension records checked last, after the data);
/// [`Error::Decode`] naming the first damaged block (nothing of that batch is written) or
/// [`DecodeError::ContentChecksum`] (after all was written); [`Error::Read`] and
/// [`Error::Write`] for the I/O (a closed pipe is [`Error::Write`] with
/// [`std::io::ErrorKind::BrokenPipe`]). On any error the bytes already written are not the
/// original and must be discarded.
///
/// ```
/// let data = b"GATTACA, GATTACA, CATTAGA. ".repeat(2_000);
/// let archive = aceapex::compress(&data, &aceapex::Options::default())?;
/// let mut restored = Vec::new();
/// let n = aceapex::decompress_to(&archive[..], &mut restored)?;
/// assert_eq!((n, restored), (data.len() as u64, data));
/// # Ok::<(), aceapex::Error>(())
/// ```
pub fn decompress_to<R: Read + Send, W: Write + Send>(archive: R, out: W) -> Result<u64, Error> {
    decompress_stream(archive, out, &|_| {}, None)
}

/// [`decompress_to`], calling `progress` with the number of original bytes done as blocks
/// verify (from worker threads, in no particular order), with batches of at least
/// `batch_bytes` of output where given (tests use small ones; rounded up to whole groups).
///
/// Errors: as [`decompress_to`].
pub fn decompress_stream<R: Read + Send, W: Write + Send>(
    archive: R,
    out: W,
    progress: &(dyn Fn(u64) + Sync),
    batch_bytes: Option<usize>,
) -> Result<u64, Error> {
    let mut r = Counted { r: archive, pos: 0 };
    let (h, mut a, mut meta, data_end) = read_metadata(&mut r)?;
    // its blocks may have line layouts until its extension area, read last, says otherwise
    // (FORMAT.md §3.8)
    a.line_layouts = !a.cross_block();
    let blocks = a.block_count();
    let size = h.original_size;
    // (the slices with runs, whose record comes last: FORMAT.md §3.4, §5.8)
    let uses_runs = first_two_bit_runs(&a.entries);
    let (a, content, tail) = std::thread::scope(|scope| {
        let span = Span {
            blocks: 0..blocks,
            bytes: 0..size,
            keep_tables: false,
        };
        decode_data(&mut r, a, out, scope, progress, batch_bytes, data_end, span)
    })?;
    // (line layouts, whose record comes last too: FORMAT.md §3.8)
    let first_layout = a.first_line_layout();

    // FORMAT.md §3.4, §6: the extension area (the rest of the stream), under the meta checksum
    let records = read_extension_area(&mut r, &mut meta)?;
    if meta.digest() != h.meta_checksum {
        return Err(FormatError::MetaChecksum.into());
    }
    let records = records?;
    check_two_bit_runs(uses_runs, records.runs.0, records.runs.1)?;
    let layouts = check_line_layout(&h, records.layouts.0, records.layouts.1)?;
    check_line_layout_used(first_layout, layouts)?;
    if content.finish_tail(h.original_size as usize, &tail) != h.content_checksum {
        return Err(DecodeError::ContentChecksum.into());
    }
    Ok(h.original_size)
}

/// Reads the header, the block table and the table section (FORMAT.md §2, §3.1, §5.1) from
/// the start of `r`; returns the header, the archive they make (no data section), the meta
/// checksum's hash so far and the offset where the data section ends.
fn read_metadata<R: Read>(
    r: &mut Counted<R>,
) -> Result<(FileHeader, Archive<'static>, Xxh3, u64), Error> {
    let (h, block_table, table_section, meta, data_end) = read_sections(r)?;
    let a = Archive::from_sections(h, &block_table, &table_section)?;
    Ok((h, a, meta, data_end))
}

/// The header (checked), the block table and the table section (not yet parsed) read from
/// the start of `r`, the meta checksum's hash over them and the offset where the data
/// section ends.
#[allow(clippy::type_complexity)]
fn read_sections<R: Read>(
    r: &mut Counted<R>,
) -> Result<(FileHeader, Vec<u8>, Vec<u8>, Xxh3, u64), Error> {
    // the magic first, so that a stream of something else fails at once instead of after
    // the 92 more bytes of a header (FORMAT.md §2)
    let mut head = Vec::with_capacity(HEADER_SIZE);
    for part in [4, HEADER_SIZE - 4] {
        (&mut r.r)
            .take(part as u64)
            .read_to_end(&mut head)
            .map_err(Error::Read)?;
        if let Err(e @ FormatError::BadMagic { .. }) = parse_header(&head) {
            return Err(e.into());
        }
    }
    r.pos = head.len() as u64;
    let h = parse_header(&head)?;
    let (_, table_len, data_end) = section_sizes(&h)?;
    let block_table = r.section(table_len, data_end)?;
    let table_section = r.section(h.table_bytes, data_end)?;
    let mut meta = Xxh3::new();
    meta.update(&head[..META_CHECKSUM_OFFSET]);
    meta.update(&block_table);
    meta.update(&table_section);
    Ok((h, block_table, table_section, meta, data_end))
}

/// A reader that counts the bytes read so far (for the size in a truncation error).
struct Counted<R> {
    r: R,
    pos: u64,
}

impl<R: Read> Counted<R> {
    /// The next `len` bytes, read as they come (a truncated stream costs what it holds,
    /// not what its header declares); a short stream is [`FormatError::Size`] against
    /// `data_end`, the size the header declares before the extension area.
    fn section(&mut self, len: u64, data_end: u64) -> Result<Vec<u8>, Error> {
        let mut v = Vec::new();
        self.fill_vec(&mut v, len, data_end)?;
        Ok(v)
    }

    /// Appends the next `len` bytes to `buf` (a short stream: as [`Counted::section`]).
    fn fill_vec(&mut self, buf: &mut Vec<u8>, len: u64, data_end: u64) -> Result<(), Error> {
        let n = (&mut self.r)
            .take(len)
            .read_to_end(buf)
            .map_err(Error::Read)?;
        self.pos += n as u64;
        if (n as u64) < len {
            return Err(FormatError::Size {
                expected: data_end,
                got: self.pos,
            }
            .into());
        }
        Ok(())
    }
}

/// Reads the extension area to the end of the stream, hashing it into `meta` (FORMAT.md
/// §3.4, §6) without keeping it: each record's header is checked as [`Archive::parse`]
/// checks it and its payload dropped. A bad record is returned only once the meta checksum,
/// which [`Archive::parse`] checks first, matched (`Ok(Err(_))`).
fn read_extension_area<R: Read>(
    r: &mut Counted<R>,
    meta: &mut Xxh3,
) -> Result<Result<Records, FormatError>, Error> {
    let mut walk = RecordWalk::default();
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let n = match r.r.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Error::Read(e)),
        };
        r.pos += n as u64;
        meta.update(&buf[..n]);
        walk.feed(&buf[..n]);
    }
    Ok(walk.finish())
}

/// The records of an extension area that change how blocks decode, counted: each type's
/// records and whether one had a payload.
struct Records {
    /// Two-bit runs records (FORMAT.md §3.7).
    runs: (usize, bool),
    /// Line layout records (FORMAT.md §3.8).
    layouts: (usize, bool),
}

/// The records of an extension area walked as its bytes arrive (FORMAT.md §3.4).
#[derive(Default)]
struct RecordWalk {
    /// Offset of the next unread byte in the area.
    offset: u64,
    /// Offset of the record being read.
    record: u64,
    /// The record header read so far.
    head: Vec<u8>,
    /// Payload bytes still to skip.
    payload_left: u64,
    /// The first bad record.
    bad: Option<FormatError>,
    /// Two-bit runs records (FORMAT.md §5.8) seen, and whether one had a payload.
    runs: (usize, bool),
    /// Line layout records (FORMAT.md §3.8) seen, and whether one had a payload or lacked
    /// the must-understand flag.
    layouts: (usize, bool),
}

impl RecordWalk {
    fn feed(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() && self.bad.is_none() {
            if self.payload_left > 0 {
                let n = self.payload_left.min(bytes.len() as u64);
                self.payload_left -= n;
                self.offset += n;
                bytes = &bytes[n as usize..];
                continue;
            }
            if self.head.is_empty() {
                self.record = self.offset;
            }
            let n = (EXTENSION_HEADER_BYTES - self.head.len()).min(bytes.len());
            self.head.extend_from_slice(&bytes[..n]);
            self.offset += n as u64;
            bytes = &bytes[n..];
            if self.head.len() == EXTENSION_HEADER_BYTES {
                let h = std::mem::take(&mut self.head);
                self.payload_left = u32::from_le_bytes([h[4], h[5], h[6], h[7]]) as u64;
                match u16::from_le_bytes([h[0], h[1]]) {
                    EXTENSION_TYPE_TWO_BIT_RUNS => {
                        self.runs.0 += 1;
                        self.runs.1 |= self.payload_left > 0;
                    }
                    EXTENSION_TYPE_LINE_LAYOUT => {
                        let flags = u16::from_le_bytes([h[2], h[3]]);
                        self.layouts.0 += 1;
                        self.layouts.1 |=
                            self.payload_left > 0 || flags & EXTENSION_MUST_UNDERSTAND == 0;
                    }
                    _ => {}
                }
                // type and flags, checked on the header alone (an empty payload)
                let mut alone = h;
                alone[4..8].fill(0);
                if let Err(e) = check_extension_area(&alone) {
                    self.bad = Some(match e {
                        FormatError::Extension { why, .. } => FormatError::Extension {
                            offset: self.record,
                            why,
                        },
                        e => e,
                    });
                }
            }
        }
    }

    /// The first bad record, or a record cut short by the end of the stream; else the
    /// counted records seen.
    fn finish(self) -> Result<Records, FormatError> {
        let err = |why: String| FormatError::Extension {
            offset: self.record,
            why,
        };
        match self.bad {
            Some(e) => Err(e),
            None if !self.head.is_empty() => Err(err(format!(
                "{} bytes left, a record header needs 8",
                self.head.len()
            ))),
            None if self.payload_left > 0 => Err(err(format!(
                "a record's payload ends {} bytes early",
                self.payload_left
            ))),
            None => Ok(Records {
                runs: self.runs,
                layouts: self.layouts,
            }),
        }
    }
}

/// The first block whose sources block `b` may read: its `lowest_source_block`, raised to
/// the block holding the byte `window` bytes before its start (FORMAT.md §4.4: no distance
/// exceeds the window, so nothing older is read).
fn floor_block(a: &Archive<'_>, b: usize) -> usize {
    let bs = a.header.block_size as u64;
    let by_window = ((b as u64 * bs).saturating_sub(a.header.window as u64) / bs) as usize;
    (a.entries[b].lowest_source_block as usize).max(by_window)
}

/// The batches: ranges of blocks, each ending on a whole decoder group
/// ([`streams::group_blocks`]) except the last; the first is smaller.
fn batch_target(h: &FileHeader, threads: usize, batch_bytes: Option<usize>) -> (usize, usize) {
    let bs = h.block_size as usize;
    let group = streams::group_blocks(bs);
    let group_bytes = group * bs;
    let full = batch_bytes.unwrap_or(MIN_BATCH_BYTES.max(threads * 4 * group_bytes));
    let first = batch_bytes.unwrap_or(FIRST_BATCH_BYTES);
    let groups = |bytes: usize| bytes.div_ceil(group_bytes).max(1) * group;
    (groups(first), groups(full))
}

/// What [`decode_data`] decodes and writes.
struct Span {
    /// The blocks to decode, in order; the reader stands at the first one's stored bytes.
    /// With a cross-block window no block of the span may read a block before it.
    blocks: Range<usize>,
    /// The original bytes to write (inside the blocks' bytes).
    bytes: Range<u64>,
    /// Keep each group's compact tables once its blocks are done (later spans may need them;
    /// only the expanded forms are dropped), instead of dropping them.
    keep_tables: bool,
}

/// Decodes the data section batch by batch over `span`'s blocks and hands the output bytes
/// inside `span.bytes` to a writer thread (spawned in `scope`); returns the archive, its
/// block offsets rebased for the span's batches, and the fold of the content hash and the
/// last KiB of the blocks' whole output (the content checksum's parts, meaningful for a span
/// of every block).
#[allow(clippy::too_many_arguments)]
fn decode_data<'scope, 'env, R: Read, W: Write + Send + 'scope>(
    r: &mut Counted<R>,
    mut a: Archive<'static>,
    mut out: W,
    scope: &'scope std::thread::Scope<'scope, 'env>,
    progress: &(dyn Fn(u64) + Sync),
    batch_bytes: Option<usize>,
    data_end: u64,
    span: Span,
) -> Result<(Archive<'static>, Folder, Vec<u8>), Error> {
    let size = a.header.original_size as usize;
    let bs = a.header.block_size as usize;
    let blocks = span.blocks.end;
    let first_block = span.blocks.start;
    let cross = a.cross_block();
    let (first_blocks, batch_blocks) =
        batch_target(&a.header, rayon::current_num_threads(), batch_bytes);
    let mut folder = Folder::new(size);
    let mut tail: Vec<u8> = Vec::with_capacity(2 * KIB);

    // full batches go to the writer; it sends the emptied buffers back for reuse
    let (to_writer, from_decoder) = std::sync::mpsc::sync_channel::<Vec<u8>>(1);
    let (recycle, recycled) = std::sync::mpsc::channel::<Vec<u8>>();
    let writer = scope.spawn(move || -> std::io::Result<()> {
        for buf in from_decoder {
            out.write_all(&buf)?;
            let _ = recycle.send(buf);
        }
        out.flush()
    });

    // expanded tables kept for reuse: those of a batch's groups (the encoder's take at most
    // a sixth of their output), released after it
    a.table_cache_left.store(
        (MIN_TABLE_CACHE as u64).max((batch_blocks * bs / 4) as u64),
        Ordering::Relaxed,
    );
    // cross-block archives: per block, the lowest block it or any later block may read, so
    // that the bytes before it are never needed again
    // (indexed from the span's first block; none reads before it, so none is below it)
    let mut keep_from: Vec<u32> = Vec::new();
    if cross {
        keep_from = span
            .blocks
            .clone()
            .map(|b| floor_block(&a, b) as u32)
            .collect();
        for i in (0..keep_from.len().saturating_sub(1)).rev() {
            keep_from[i] = keep_from[i].min(keep_from[i + 1]);
        }
    }
    // the most the cross-block history and batch ever hold together: `win` grows to it and
    // no further (a doubling past it could ask for nearly twice the memory the archive's
    // window needs)
    let mut win_most = 0;
    if cross {
        let mut b = first_block;
        while b < blocks {
            let n = if b == first_block {
                first_blocks
            } else {
                batch_blocks
            };
            let end = ((b + n).min(blocks) * bs).min(size);
            win_most = win_most.max(end - keep_from[b - first_block] as usize * bs);
            b += n;
        }
    }
    let mut stored = Vec::new();
    let mut sums: Vec<KibSums> = Vec::new();
    // cross-block archives: the decoded bytes from `win_base` on (history, then the batch)
    let mut win: Vec<u8> = Vec::new();
    let mut win_base = first_block * bs;
    let mut b0 = first_block;
    let mut writer_stopped = false;
    let mut released = first_block / a.header.group_blocks as usize;
    while b0 < blocks {
        let n = if b0 == first_block {
            first_blocks
        } else {
            batch_blocks
        };
        let b1 = (b0 + n).min(blocks);
        let out_start = b0 * bs;
        let out_end = (b1 * bs).min(size);
        // this batch's stored slices, and the archive's offsets rebased onto them
        let d0 = a.block_offsets[b0];
        let d1 = a
            .block_offsets
            .get(b1)
            .copied()
            .unwrap_or(a.header.data_bytes);
        // read as the bytes come: a block table may declare slices far larger than the
        // stream holds
        stored.clear();
        r.fill_vec(&mut stored, d1 - d0, data_end)?;
        for o in &mut a.block_offsets[b0..b1] {
            *o -= d0;
        }
        let ab = a.with_data(&stored);
        let mut buf = recycled.try_recv().unwrap_or_default();
        let decoded = if !cross {
            buf.resize(out_end - out_start, 0);
            decode_batch(&ab, b0, &mut buf, &mut sums, progress)
        } else {
            // keep from the lowest block this batch or a later one may read
            let keep = keep_from[b0 - first_block] as usize * bs;
            debug_assert!(keep >= win_base && keep <= out_start);
            win.drain(..keep - win_base);
            win_base = keep;
            let need = out_end - win_base;
            if need > win.capacity() {
                // (a window too large for this machine's memory is an error, not an abort)
                let grow_to = need.max(2 * win.capacity()).min(win_most.max(need));
                win.try_reserve_exact(grow_to - win.len()).map_err(|_| {
                    Error::Decode(DecodeError::Alloc {
                        bytes: grow_to as u64,
                    })
                })?;
            }
            win.resize(need, 0);
            let done = decode_batch_cross(&ab, b0..b1, &mut win, win_base, progress);
            let new = &win[out_start - win_base..];
            sums.resize(new.len().div_ceil(KIB), [0; 8]);
            new.par_chunks(64 * KIB)
                .zip(sums.par_chunks_mut(64))
                .for_each(|(c, s)| checksum::kib_sums(c, &mut s[..c.len() / KIB]));
            buf.clear();
            buf.extend_from_slice(new);
            done
        };
        a = ab.with_data(&[]);
        decoded?;
        // (the content hash folds the output in order from its first byte)
        if first_block == 0 {
            folder.absorb(out_start / KIB, &sums[..buf.len() / KIB]);
        }
        tail.extend_from_slice(&buf[buf.len().saturating_sub(KIB)..]);
        tail.drain(..tail.len().saturating_sub(KIB));
        release_tables(&mut a, &mut released, b1, span.keep_tables);
        b0 = b1;
        // only the bytes asked for go out
        let lo = (span.bytes.start as usize).clamp(out_start, out_end);
        let hi = (span.bytes.end as usize).clamp(lo, out_end);
        buf.truncate(hi - out_start);
        buf.drain(..lo - out_start);
        if buf.is_empty() {
            continue;
        }
        if to_writer.send(buf).is_err() {
            // the writer stopped on an error, returned below
            writer_stopped = true;
            break;
        }
    }
    drop(to_writer);
    let written = writer.join().expect("the writer thread does not panic");
    written.map_err(Error::Write)?;
    if writer_stopped {
        return Err(Error::Write(std::io::Error::other(
            "the output writer stopped",
        )));
    }
    Ok((a, folder, tail))
}

/// Drops the tables of the groups from `*released` to those that end before block `next`
/// (later batches never use them), or with `keep_compact` only their expanded forms, giving
/// the expanded tables' bytes back to the archive's cache budget; advances `*released`.
fn release_tables(a: &mut Archive<'static>, released: &mut usize, next: usize, keep_compact: bool) {
    let done = next / a.header.group_blocks as usize;
    for g in a.tables.iter_mut().take(done).skip(*released) {
        for slot in g.iter_mut() {
            let expanded = if keep_compact {
                slot.as_mut().and_then(|t| t.expanded.take())
            } else {
                slot.take().and_then(|t| t.expanded.into_inner())
            };
            if let Some(x) = expanded {
                let bytes =
                    std::mem::size_of_val::<[crate::device::format::DecodeTable]>(&x) as u64;
                a.table_cache_left.fetch_add(bytes, Ordering::Relaxed);
            }
        }
    }
    *released = done.max(*released);
}

/// Decodes the blocks of a batch without cross-block sources into `out` (from the first byte
/// of block `b0`), whole decoder groups in parallel ([`decode_group_at`]); leaves the KiB
/// sums of `out` in `sums`.
fn decode_batch(
    a: &Archive<'_>,
    b0: usize,
    out: &mut [u8],
    sums: &mut Vec<KibSums>,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<(), DecodeError> {
    let bs = a.header.block_size as usize;
    let group = streams::group_blocks(bs);
    let group_bytes = group * bs;
    sums.resize(out.len().div_ceil(KIB), [0; 8]);
    out.par_chunks_mut(group_bytes)
        .zip(sums.par_chunks_mut(group_bytes / KIB))
        .enumerate()
        .try_for_each(|(g, (chunk, s))| {
            decode_group_at(a, b0 + g * group, chunk, s)?;
            progress(chunk.len() as u64);
            Ok(())
        })
}

/// Decodes blocks `blocks` of a cross-block archive into `win`, whose byte 0 is original byte
/// `base` and which holds every block the batch may read ([`floor_block`]): runs of blocks
/// that read only each other decode in parallel, the blocks of a run in order (FORMAT.md
/// §8.7).
fn decode_batch_cross(
    a: &Archive<'_>,
    blocks: Range<usize>,
    win: &mut [u8],
    base: usize,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<(), DecodeError> {
    let bs = a.header.block_size as usize;
    let b0 = blocks.start;
    // runs: a new one at each block that reads nothing before itself within the batch;
    // a block reading further back merges the runs back to the one holding its source
    let mut runs: Vec<Range<usize>> = Vec::new();
    let mut start = b0;
    for b in blocks.clone() {
        let lowest = floor_block(a, b).max(b0);
        if lowest == b && b > start {
            runs.push(start..b);
            start = b;
        } else if lowest < start {
            while let Some(prev) = runs.pop() {
                start = prev.start;
                if prev.start <= lowest {
                    break;
                }
            }
        }
    }
    runs.push(start..blocks.end);
    // carve `win` into the runs' ranges; the first keeps the history before it
    let mut pieces = Vec::with_capacity(runs.len());
    let mut rest = win;
    let mut at = base;
    for (i, r) in runs.iter().enumerate() {
        let end = (r.end * bs).min(a.header.original_size as usize);
        let (piece, more) = rest.split_at_mut(end - at);
        let piece_base = if i == 0 { base } else { r.start * bs };
        pieces.push((r.clone(), piece, piece_base));
        at = end;
        rest = more;
    }
    pieces
        .into_par_iter()
        .try_for_each(|(r, piece, piece_base)| {
            for b in r {
                decode_block_window(a, b, piece, piece_base as u64)?;
                let range = a.block_range(b);
                progress(range.end - range.start);
            }
            Ok(())
        })
}

/// Decodes block `b` into `out` (`out[0]` is original byte `base`), which holds the block and
/// the bytes from its [`floor_block`] on; verifies its checksum. The same outcome and status
/// as [`super::decode_block_at`], whose source floor is the block's `lowest_source_block`:
/// a match reaching below the higher floor used here has a distance over the window and
/// fails rule 1 of FORMAT.md §4.4 either way.
fn decode_block_window(
    a: &Archive<'_>,
    b: usize,
    out: &mut [u8],
    base: u64,
) -> Result<(), DecodeError> {
    let r = a.block_range(b);
    let floor = floor_block(a, b) as u64 * a.header.block_size as u64;
    debug_assert!(base <= floor && r.end - base <= out.len() as u64);
    let frame = BlockFrame {
        dst_start: (r.start - base) as usize,
        dst_end: (r.end - base) as usize,
        src_floor: (floor - base) as usize,
        window: a.header.window,
        match_base: a.header.match_base(),
    };
    FAST_SCRATCH
        .with(|s| streams::decode_archive_block(a, b, out, &frame, &mut s.borrow_mut(), false))
        .map_err(|st| block_error(a, b, st))?;
    verify_block(
        a,
        b,
        checksum::xxh3_64(&out[frame.dst_start..frame.dst_end]),
    )
}

/// Ranges at most this long in an archive of independent blocks are read block by block
/// (only the blocks they lie in); longer ones, and every range of a cross-block archive, go
/// through the batch decoder of [`decompress_to`], in parallel and in bounded memory.
const SMALL_RANGE: u64 = 1 << 20;

/// How many of the ranges after one a cross-block span is joined with (those that meet it).
const CROSS_JOIN_LOOKAHEAD: usize = 256;

/// An archive on a seekable source, typically a file larger than memory, read in part: its
/// metadata once ([`SeekableArchive::open`]), then for each range only the stored bytes of
/// the blocks it needs ([`SeekableArchive::write_ranges`]).
///
/// Unlike [`crate::Reader`], which holds or maps the whole archive for the lowest latency per
/// read, this holds only the metadata (about 100 bytes per block and 3 KiB per table group),
/// at most 16 MiB of expanded decode tables kept for reuse (past that a table is expanded
/// for each use), the last block decoded for a range inside one block (at most 4 MiB: the
/// next ranges in that block copy from it) and, while a range is written, what
/// [`decompress_to`] holds for a batch; so any range of an archive of any size, the whole
/// original included, is written in that memory. A file changed or truncated while it is
/// read gives an error, never a signal.
///
/// ```
/// let data = b"GATTACA, GATTACA, CATTAGA. ".repeat(20_000);
/// let archive = aceapex::compress(&data, &aceapex::Options::default())?;
/// let mut file = aceapex::SeekableArchive::open(std::io::Cursor::new(archive))?;
/// let mut out = Vec::new();
/// file.write_ranges(&[(100_000, 27), (5, 10)], &mut out)?;
/// assert_eq!(&out[..27], &data[100_000..100_027]);
/// assert_eq!(&out[27..], &data[5..15]);
/// # Ok::<(), aceapex::Error>(())
/// ```
pub struct SeekableArchive<R> {
    r: Counted<R>,
    /// The metadata (`None` only while a range is decoded, or after a failed one).
    archive: Option<Archive<'static>>,
    /// The data section's offset in the source and the end the header declares for it.
    data_start: u64,
    data_end: u64,
    /// Per block, the offset of its stored bytes inside the data section (the archive's own
    /// offsets are rebased onto the bytes read for a range).
    offsets: Vec<u64>,
    header: FileHeader,
    /// The last block decoded whole for a range inside it (independent blocks only), kept
    /// so that the next ranges in the same block copy from it instead of reading and
    /// decoding it again: its index and bytes (at most one block).
    cached: Option<usize>,
    block: Vec<u8>,
}

impl<R: Read + Seek + Send> SeekableArchive<R> {
    /// Reads and checks the archive's metadata from `source`: the header, block table and
    /// table section (FORMAT.md §2, §3.1, §5.1-§5.2, checked as [`Archive::parse`] checks
    /// them), and the extension area with the meta checksum over all of them (§3.4, §6),
    /// the checksum first, as [`Archive::parse`] does (damaged metadata is
    /// [`FormatError::MetaChecksum`]). The data section is not read.
    ///
    /// Errors: [`Error::Format`] for a damaged container or a source shorter than the size
    /// the header declares; [`Error::Read`] for the I/O.
    pub fn open(mut source: R) -> Result<Self, Error> {
        source.seek(SeekFrom::Start(0)).map_err(Error::Read)?;
        let mut r = Counted { r: source, pos: 0 };
        let (h, block_table, table_section, mut meta, data_end) = read_sections(&mut r)?;
        let data_start = r.pos;
        let len = r.r.seek(SeekFrom::End(0)).map_err(Error::Read)?;
        if len < data_end {
            return Err(FormatError::Size {
                expected: data_end,
                got: len,
            }
            .into());
        }
        r.r.seek(SeekFrom::Start(data_end)).map_err(Error::Read)?;
        r.pos = data_end;
        let records = read_extension_area(&mut r, &mut meta)?;
        if meta.digest() != h.meta_checksum {
            return Err(FormatError::MetaChecksum.into());
        }
        let records = records?;
        // the sections parsed once the checksum that covers them matched, as `Archive::parse`
        // does (FORMAT.md §6): damage is reported as the mismatch, not as a broken field
        let mut a = Archive::from_sections(h, &block_table, &table_section)?;
        check_two_bit_runs(
            first_two_bit_runs(&a.entries),
            records.runs.0,
            records.runs.1,
        )?;
        a.line_layouts = check_line_layout(&h, records.layouts.0, records.layouts.1)?;
        drop((block_table, table_section));
        // expanded tables kept for reuse: a bounded cache, not a share of the original (the
        // ranges of a large file may touch every group)
        a.table_cache_left
            .store(MIN_TABLE_CACHE as u64, Ordering::Relaxed);
        Ok(SeekableArchive {
            offsets: a.block_offsets.clone(),
            archive: Some(a),
            r,
            data_start,
            data_end,
            header: h,
            cached: None,
            block: Vec::new(),
        })
    }

    /// The original data's size in bytes.
    pub fn len(&self) -> u64 {
        self.header.original_size
    }

    /// True when the original data is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The archive's block size in bytes (FORMAT.md §2).
    pub fn block_size(&self) -> u32 {
        self.header.block_size
    }

    /// Writes the original bytes of every range `(offset, length)` to `out`, one after the
    /// other in the order given, decoding only the blocks each range lies in (and, with a
    /// cross-block window, the blocks those read from), every block verified against its
    /// checksum (FORMAT.md §6) before any of its bytes is written; a range that is the whole
    /// original data is also checked against the content checksum, at its end. Returns the
    /// number of bytes written.
    ///
    /// Ranges up to 1 MiB of an archive of independent blocks are decoded on the calling
    /// thread, one block after another; longer ones batch by batch on the rayon pool as
    /// [`decompress_to`] does, in its memory bound. Across blocks, a range's span (from the
    /// lowest block it reads from) is decoded together with the spans of the ranges after it
    /// that meet it, up to 64 MiB kept, and those ranges copy from it.
    ///
    /// Errors: [`DecodeError::Region`] for the first range that does not lie inside the data
    /// (checked for every range before anything is written); [`Error::Decode`] naming a
    /// damaged block or [`DecodeError::ContentChecksum`]; [`Error::Format`] when the source
    /// is shorter than its block table says; [`Error::Read`] and [`Error::Write`] for the
    /// I/O. The bytes written before an error are not the ranges and must be discarded; the
    /// archive cannot be read again after one (a later call is [`Error::Read`], saying so).
    pub fn write_ranges<W: Write + Send>(
        &mut self,
        ranges: &[(u64, u64)],
        mut out: W,
    ) -> Result<u64, Error> {
        let size = self.len();
        for &(offset, length) in ranges {
            if offset.checked_add(length).is_none_or(|e| e > size) {
                return Err(DecodeError::Region {
                    offset,
                    length,
                    size,
                }
                .into());
            }
        }
        let mut written = 0;
        let mut buf = Vec::new();
        // Across blocks, a range's span runs from the lowest block it reads from
        // (transitively) to its last block; the span decoded last, joined with the spans of
        // the ranges after it that meet it (within CROSS_JOIN_BYTES), stays in `joined`, and
        // the ranges inside it copy from it rather than decode their chains again.
        let bs = self.header.block_size as u64;
        let cross = self.archive.as_ref().is_some_and(|a| a.cross_block());
        let spans: Vec<(usize, usize)> = match (cross, &self.archive) {
            (true, Some(a)) => ranges
                .iter()
                .map(|&(offset, length)| span_of(a, offset, length.max(1)))
                .collect(),
            _ => Vec::new(),
        };
        let mut joined: (u64, Vec<u8>) = (0, Vec::new());
        for (k, &(offset, length)) in ranges.iter().enumerate() {
            if length == 0 {
                continue;
            }
            let a = self.archive.take().ok_or_else(|| {
                Error::Read(std::io::Error::other(
                    "an earlier read of this archive failed: open it again",
                ))
            })?;
            let end = offset + length;
            let (lo, hi) = spans.get(k).copied().unwrap_or((0, 0));
            let a = if cross && offset >= joined.0 && end <= joined.0 + joined.1.len() as u64 {
                let at = (offset - joined.0) as usize;
                out.write_all(&joined.1[at..at + length as usize])
                    .map_err(Error::Write)?;
                a
            } else if cross && (hi + 1 - lo) as u64 * bs <= CROSS_JOIN_BYTES {
                let (mut lo, mut hi) = (lo, hi);
                for (&(l2, h2), &(_, n)) in spans[k + 1..]
                    .iter()
                    .zip(&ranges[k + 1..])
                    .take(CROSS_JOIN_LOOKAHEAD)
                {
                    let (l, h) = (lo.min(l2), hi.max(h2));
                    if n > 0
                        && l2 <= hi + 1
                        && h2 + 1 >= lo
                        && (h + 1 - l) as u64 * bs <= CROSS_JOIN_BYTES
                    {
                        (lo, hi) = (l, h);
                    }
                }
                let span = lo as u64 * bs..((hi as u64 + 1) * bs).min(size);
                joined.1.clear();
                joined.0 = span.start;
                let a = self
                    .write_span(a, span, &mut joined.1)
                    .map_err(|e| self.with_length(e))?;
                let at = (offset - joined.0) as usize;
                out.write_all(&joined.1[at..at + length as usize])
                    .map_err(Error::Write)?;
                a
            } else if !a.cross_block() && length <= SMALL_RANGE {
                buf.resize(length as usize, 0);
                let a = self
                    .read_small(a, offset, &mut buf)
                    .map_err(|e| self.with_length(e))?;
                out.write_all(&buf).map_err(Error::Write)?;
                a
            } else {
                self.write_span(a, offset..offset + length, &mut out)
                    .map_err(|e| self.with_length(e))?
            };
            self.archive = Some(a);
            written += length;
        }
        out.flush().map_err(Error::Write)?;
        Ok(written)
    }

    /// `e`, a source found shorter than its block table says while a range was read,
    /// with the source's length now (it shrank after [`SeekableArchive::open`]) instead of
    /// the position of the short read.
    fn with_length(&mut self, e: Error) -> Error {
        match e {
            Error::Format(FormatError::Size { expected, got }) => FormatError::Size {
                expected,
                got: self.r.r.seek(SeekFrom::End(0)).unwrap_or(got),
            }
            .into(),
            e => e,
        }
    }

    /// Positions the source at byte `at` of the data section.
    fn seek_data(&mut self, at: u64) -> Result<(), Error> {
        self.r.pos = self.data_start + at;
        self.r
            .r
            .seek(SeekFrom::Start(self.r.pos))
            .map_err(Error::Read)?;
        Ok(())
    }

    /// The stored offset of block `b`'s end (the next block's start, or the section's end).
    fn stored_end(&self, b: usize) -> u64 {
        self.offsets
            .get(b + 1)
            .copied()
            .unwrap_or(self.header.data_bytes)
    }

    /// A range of an archive of independent blocks, into `buf`: a range inside one block
    /// copied from that block decoded whole (kept for the next ranges in it), a longer one
    /// read as [`SeekableArchive::read_blocks`] reads it.
    fn read_small(
        &mut self,
        a: Archive<'static>,
        offset: u64,
        buf: &mut [u8],
    ) -> Result<Archive<'static>, Error> {
        let bs = self.header.block_size as u64;
        let b = (offset / bs) as usize;
        if (offset + buf.len() as u64 - 1) / bs != b as u64 {
            return self.read_blocks(a, offset, buf);
        }
        let start = b as u64 * bs;
        let a = if self.cached == Some(b) {
            a
        } else {
            self.cached = None;
            let mut block = std::mem::take(&mut self.block);
            block.resize((self.len() - start).min(bs) as usize, 0);
            let a = self.read_blocks(a, start, &mut block)?;
            self.block = block;
            self.cached = Some(b);
            a
        };
        let at = (offset - start) as usize;
        buf.copy_from_slice(&self.block[at..at + buf.len()]);
        Ok(a)
    }

    /// A range of an archive of independent blocks, into `buf`: its blocks' stored bytes
    /// read in one piece and decoded by the region reader.
    fn read_blocks(
        &mut self,
        mut a: Archive<'static>,
        offset: u64,
        buf: &mut [u8],
    ) -> Result<Archive<'static>, Error> {
        let bs = self.header.block_size as u64;
        let (first, last) = (
            (offset / bs) as usize,
            ((offset + buf.len() as u64 - 1) / bs) as usize,
        );
        let d0 = self.offsets[first];
        let d1 = self.stored_end(last);
        self.seek_data(d0)?;
        let mut stored = Vec::new();
        self.r.fill_vec(&mut stored, d1 - d0, self.data_end)?;
        for b in first..=last {
            a.block_offsets[b] = self.offsets[b] - d0;
        }
        let ab = a.with_data(&stored);
        let read = super::region::read_range(&ab, offset, buf);
        let mut a = ab.with_data(&[]);
        a.block_offsets[first..=last].copy_from_slice(&self.offsets[first..=last]);
        read?;
        Ok(a)
    }

    /// A range through the batch decoder: from the first block of its decoder group (or,
    /// across blocks, the lowest block it reads from, transitively) to its last block.
    fn write_span<W: Write + Send>(
        &mut self,
        a: Archive<'static>,
        bytes: Range<u64>,
        out: &mut W,
    ) -> Result<Archive<'static>, Error> {
        let bs = self.header.block_size as u64;
        let (first, last) = ((bytes.start / bs) as usize, ((bytes.end - 1) / bs) as usize);
        let from = if a.cross_block() {
            super::region::lowest_source(&a, first, last)
        } else {
            let group = streams::group_blocks(bs as usize);
            first - first % group
        };
        let whole = bytes.start == 0 && bytes.end == self.len();
        self.seek_data(self.offsets[from])?;
        let span = Span {
            blocks: from..last + 1,
            bytes,
            keep_tables: true,
        };
        let data_end = self.data_end;
        let r = &mut self.r;
        let (mut a, content, tail) = std::thread::scope(|scope| {
            decode_data(r, a, out, scope, &|_| {}, None, data_end, span)
        })?;
        a.block_offsets.copy_from_slice(&self.offsets);
        // back to the bounded cache of `open`, empty
        let all = a.tables.len() * a.header.group_blocks as usize;
        release_tables(&mut a, &mut 0, all, true);
        a.table_cache_left
            .store(MIN_TABLE_CACHE as u64, Ordering::Relaxed);
        if whole && content.finish_tail(self.len() as usize, &tail) != self.header.content_checksum
        {
            return Err(DecodeError::ContentChecksum.into());
        }
        Ok(a)
    }
}
