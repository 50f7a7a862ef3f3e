//! Streaming compression ([`compress_stream`], behind [`crate::compress_to`]): an input read
//! from any reader a batch at a time, in memory bounded independently of its size, written
//! as the same archive [`crate::compress`] makes of the same bytes.
//!
//! The container puts its header (original size, content checksum), block table and table
//! section before the data section (FORMAT.md §1, §2), so the data section is spooled to an
//! anonymous temporary file while the input is coded, and the archive is written once the
//! input has ended: header, block table, tables, the spooled data section, extension area.

use super::stream_fasta::FastaStream;
use super::{file_header, Plan, Settings, TwoBit};
use crate::device::format::*;
use crate::error::Error;
use crate::fasta::checksums::SequenceDigests;
use crate::fasta::FastaIndex;
use crate::options::Options;
use std::io::{BufReader, BufWriter, Read, Seek, Write};
use std::path::Path;
use xxhash_rust::xxh3::Xxh3;

/// Input bytes up to which [`compress_stream`] reads the whole input and calls
/// [`crate::compress_with_progress`] (at least this; more where the options' wide slices
/// depend on the block count, [`in_memory_limit`]).
pub const IN_MEMORY_BYTES: usize = 64 << 20;

/// What [`crate::compress_to`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamSummary {
    /// Bytes read from the input (the archive's original size).
    pub input_bytes: u64,
    /// Bytes of the archive written to the output.
    pub archive_bytes: u64,
    /// Whether the input was coded a batch at a time through a spool (`false`: it was small
    /// enough to be compressed whole in memory).
    pub streamed: bool,
    /// Whether a streamed input starts as FASTA (its first byte after line ends is `>`) but
    /// is not plain FASTA (`\n` line ends, no blank line, graphic sequence bytes, wrapped
    /// lines of one width a record), so that its archive lacks the FASTA records
    /// [`crate::compress`] may attach (FORMAT.md §3.5, §3.6): those come from samtools'
    /// automaton over a whole input, which a stream indexes only in its plain form.
    pub fasta_left_out: bool,
}

/// The choices of [`compress_stream`] beyond [`Options`].
#[doc(hidden)]
#[derive(Default)]
pub struct StreamConfig<'a> {
    /// The minimum match where [`Options::tries_min_match`] leaves it to a trial: the
    /// caller's result of [`crate::encode::default_min_match`] on the whole input (a file
    /// whose length is known, [`sample_min_match`]). `None`: the trial samples the first
    /// [`in_memory_limit`] bytes of an input longer than that.
    pub min_match: Option<u32>,
    /// Folder of the spool file (`None`: the system's temporary folder, `TMPDIR`).
    pub spool_dir: Option<&'a Path>,
    /// Inputs up to this many bytes are compressed whole in memory (`None`:
    /// [`in_memory_limit`]); never less than the options need for identical bytes.
    pub in_memory_bytes: Option<usize>,
}

/// Bytes of input that [`compress_stream`] holds whole before it streams: [`IN_MEMORY_BYTES`],
/// or under options with wide slices ([`Target::Gpu`](crate::Target::Gpu) at levels 1-7),
/// whose choice depends on whether the input has more than `WIDE_MAX_BLOCKS` blocks, that
/// many blocks.
pub fn in_memory_limit(opts: &Options) -> usize {
    let s = opts.settings();
    let wide = match s.wide_lanes {
        true => super::WIDE_MAX_BLOCKS * s.block_size as usize,
        false => 0,
    };
    IN_MEMORY_BYTES.max(wide)
}

/// The minimum match of [`crate::encode::default_min_match`] for an input of `len` bytes
/// whose bytes at an offset `read_at` reads (a file read by position): the same trial on the
/// same sample, without the whole input in memory.
///
/// Errors: those of `read_at`.
pub fn sample_min_match(
    opts: &Options,
    len: u64,
    read_at: &mut dyn FnMut(u64, &mut [u8]) -> std::io::Result<()>,
) -> std::io::Result<u32> {
    if let Some(m) = opts.min_match {
        return Ok(m);
    }
    if !opts.tries_min_match() || len == 0 {
        return Ok(MATCH_BASE);
    }
    let len = usize::try_from(len).unwrap_or(usize::MAX);
    match super::short_match_pieces(len, opts.block_size) {
        Some((piece, starts)) => {
            let mut sample = vec![0u8; piece * starts.len()];
            for (at, out) in starts.iter().zip(sample.chunks_mut(piece)) {
                read_at(*at as u64, out)?;
            }
            Ok(super::short_match_wins(&opts.settings(), &sample))
        }
        None => {
            let mut all = vec![0u8; len];
            read_at(0, &mut all)?;
            Ok(super::default_min_match(opts, &all))
        }
    }
}

/// A failed read of the input: [`Error::Io`] naming it "the input" ([`Error::Read`] is the
/// archive of a streaming decode).
fn read_error(source: std::io::Error) -> Error {
    Error::Io {
        path: "the input".into(),
        source,
    }
}

/// Reads from `r` into `buf` until it holds `want` bytes or the input ends.
fn fill(r: &mut impl Read, buf: &mut Vec<u8>, want: usize) -> std::io::Result<()> {
    if buf.len() < want {
        buf.try_reserve_exact(want - buf.len())
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::OutOfMemory, e.to_string()))?;
    }
    while buf.len() < want {
        let n = (&mut *r).take((want - buf.len()) as u64).read_to_end(buf);
        match n {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Compresses everything `input` yields into an archive written to `output`, byte for byte
/// [`crate::compress_with_progress`] of the same bytes (see [`crate::compress_to`] for the
/// one exception), calling `progress` with input bytes coded.
///
/// Memory: an input up to [`in_memory_limit`] bytes (or `cfg.in_memory_bytes`) is held whole
/// and compressed as [`crate::compress`] does; a longer one is coded a batch at a time
/// (64 MiB, or 4 windows with a window larger than the block: one batch coded while the
/// next is read, each with about 3x its size of parse buffers), beside 64 bytes per block
/// of block entries and the table section (both precede the data section and are written
/// last), 24 bytes per block given a two-bit literal slice, and the FASTA index and
/// checksums of a FASTA input. The data section goes to an anonymous spool file in
/// `cfg.spool_dir`, removed however the call ends: with the two-bit slices, which the end
/// decides to keep or not (FORMAT.md §5.7), the others then coded again from them, so the
/// spool is never larger than the data section written.
///
/// Errors: [`Error::Options`] for options out of range or more than 2^32 blocks,
/// [`Error::Io`] (path `the input`) when reading `input` fails, [`Error::Write`] when writing
/// `output` or the spool fails.
pub fn compress_stream<R: Read + Send>(
    mut input: R,
    output: &mut dyn Write,
    opts: &Options,
    cfg: &StreamConfig<'_>,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<StreamSummary, Error> {
    opts.validate()?;
    let limit = match cfg.in_memory_bytes {
        Some(n) => n.max(small_input_floor(opts)),
        None => in_memory_limit(opts),
    };
    let mut head = Vec::new();
    fill(&mut input, &mut head, limit + 1).map_err(read_error)?;
    if head.len() <= limit {
        let archive = crate::compress_with_progress(&head, opts, progress)?;
        output.write_all(&archive).map_err(Error::Write)?;
        return Ok(StreamSummary {
            input_bytes: head.len() as u64,
            archive_bytes: archive.len() as u64,
            streamed: false,
            fasta_left_out: false,
        });
    }
    let min_match = match (opts.min_match, cfg.min_match) {
        (Some(m), _) => m,
        (None, Some(m)) if opts.tries_min_match() => m,
        _ => super::default_min_match(opts, &head),
    };
    let settings = Settings {
        min_match,
        ..opts.settings()
    };
    let spool = |what: &str| {
        match cfg.spool_dir {
            Some(d) => tempfile::tempfile_in(d),
            None => tempfile::tempfile(),
        }
        .map_err(|e| {
            Error::Write(std::io::Error::new(
                e.kind(),
                format!("creating the {what} spool file: {e}"),
            ))
        })
    };
    let mut s = Spool {
        plan: Plan::new(&settings, usize::MAX),
        entries: Vec::new(),
        tables: Vec::new(),
        data: BufWriter::with_capacity(1 << 20, spool("data section")?),
        group_tables: Vec::new(),
        alts: Vec::new(),
        original: 0,
        content: Xxh3::new(),
        fasta: FastaStream::new(),
    };
    let batch_bytes = s.plan.batch_bytes;
    // one batch is coded while the next is read
    let mut current = head;
    let mut rest = current.split_off(batch_bytes.min(current.len()));
    fill(&mut input, &mut current, batch_bytes).map_err(read_error)?;
    let mut input = Some(input);
    std::thread::scope(|scope| -> Result<(), Error> {
        loop {
            if current.is_empty() {
                return Ok(());
            }
            let reader = (current.len() == batch_bytes && rest.len() < batch_bytes).then(|| {
                let mut r = input.take().expect("the input is back");
                let mut next = std::mem::take(&mut rest);
                scope.spawn(move || {
                    let read = fill(&mut r, &mut next, batch_bytes).map(|()| next);
                    (r, read)
                })
            });
            s.add_batch(&current, progress)?;
            if let Some(h) = reader {
                let (r, read) = h.join().expect("the reader thread does not panic");
                input = Some(r);
                rest = read.map_err(read_error)?;
            }
            let tail = rest.split_off(batch_bytes.min(rest.len()));
            current = std::mem::replace(&mut rest, tail);
        }
    })?;
    drop(input);
    let input_bytes = s.original;
    let (archive_bytes, fasta_left_out) = s.finish(output)?;
    Ok(StreamSummary {
        input_bytes,
        archive_bytes,
        streamed: true,
        fasta_left_out,
    })
}

/// The fewest bytes held whole whatever `cfg.in_memory_bytes` asks: inputs at most this
/// long must be compressed whole for identical bytes (the wide slices' block count, the
/// minimum match trial on the whole input).
fn small_input_floor(opts: &Options) -> usize {
    let s = opts.settings();
    let wide = match s.wide_lanes {
        true => super::WIDE_MAX_BLOCKS * s.block_size as usize,
        false => 0,
    };
    wide.max(super::SHORT_MATCH_SAMPLE.max(s.block_size as usize * 4))
}

/// The state of a streamed compression between batches.
struct Spool {
    plan: Plan,
    /// Every block's entry so far, with its two-bit literal slice where it took one.
    entries: Vec<BlockEntry>,
    /// The table section so far.
    tables: Vec<u8>,
    /// The data section so far, with the two-bit slices.
    data: BufWriter<std::fs::File>,
    /// Where each group's table records start in `tables`.
    group_tables: Vec<usize>,
    /// Per block that took a two-bit literal slice, in block order: its index, the lane
    /// code and length of the literal slice it had before (coded again from the two-bit
    /// slice if the two-bit slices do not stay: [`Spool::other_slice`]), its two-bit
    /// slice's length and lane code (FORMAT.md §5.7 or §5.8).
    alts: Vec<(usize, u8, u32, u32, u8)>,
    /// Input bytes so far.
    original: u64,
    /// XXH3-64 of the input so far.
    content: Xxh3,
    /// The FASTA records being built, when the input starts as FASTA.
    fasta: FastaStream,
}

impl Spool {
    /// Codes the next batch of input (the plan's batch size but for the last) and spools it.
    fn add_batch(&mut self, batch: &[u8], progress: &(dyn Fn(u64) + Sync)) -> Result<(), Error> {
        let base = self.original as usize;
        let bs = self.plan.bs;
        let blocks = self.entries.len() + batch.len().div_ceil(bs);
        if blocks > u32::MAX as usize {
            return Err(crate::OptionsError::TooManyBlocks {
                len: self.original + batch.len() as u64,
                block_size: bs as u32,
            }
            .into());
        }
        let (groups, ()) = rayon::join(
            || self.plan.encode_batch(batch, base, progress),
            || {
                self.content.update(batch);
                self.fasta.update(batch);
            },
        );
        for (g, _) in groups {
            self.group_tables.push(self.tables.len());
            self.tables.extend_from_slice(&g.tables);
            let first = self.entries.len();
            let mut alts = g.two_bit_alt.into_iter().peekable();
            for (i, (e, bytes)) in g.blocks.into_iter().enumerate() {
                self.data.write_all(&bytes).map_err(Error::Write)?;
                if let Some((_, lanes, other)) = alts.next_if(|a| a.0 == i) {
                    self.alts.push((
                        first + i,
                        lanes,
                        other.len() as u32,
                        e.stored_len[STREAM_LITERALS],
                        e.lanes[STREAM_LITERALS],
                    ));
                }
                self.entries.push(e);
            }
        }
        self.original += batch.len() as u64;
        Ok(())
    }

    /// Whether the two-bit slices stay, by the rule of the settings' [`TwoBit`]
    /// (`keep_two_bit_if_smaller`, `keep_two_bit_if_most_blocks`); where they do not, every
    /// entry of [`Spool::alts`] is given its other slice here.
    fn keep_two_bit(&mut self) -> bool {
        if self.alts.is_empty() {
            return true;
        }
        let table = |es: &[BlockEntry]| {
            (crate::format::entry::packed_size(&crate::format::entry::bits_for(es)) * es.len())
                as isize
        };
        let keep = match self.plan.opts.two_bit {
            TwoBit::MostBlocks => {
                super::keep_two_bit::most_blocks_keep_two_bit(self.entries.iter())
            }
            _ => {
                let with = table(&self.entries);
                let mut saved = 0isize;
                for &(b, lanes, other, _, _) in &self.alts {
                    let e = &mut self.entries[b];
                    saved += other as isize - e.stored_len[STREAM_LITERALS] as isize;
                    e.lanes[STREAM_LITERALS] = lanes;
                    e.stored_len[STREAM_LITERALS] = other;
                }
                let without = table(&self.entries);
                if saved > with - without {
                    for &(b, _, _, two, two_lanes) in &self.alts {
                        let e = &mut self.entries[b];
                        e.lanes[STREAM_LITERALS] = two_lanes;
                        e.stored_len[STREAM_LITERALS] = two;
                    }
                    return true;
                }
                return false;
            }
        };
        if !keep {
            for &(b, lanes, other, _, _) in &self.alts {
                let e = &mut self.entries[b];
                e.lanes[STREAM_LITERALS] = lanes;
                e.stored_len[STREAM_LITERALS] = other;
            }
        }
        keep
    }

    /// The literal slice block `b` (entry `e`, its two-bit slice `two_bit`) had before its
    /// two-bit slice, with lane code `lanes`: the literals, decoded from the two-bit slice
    /// (FORMAT.md §5.7), stored raw, or coded again as `encode_group` coded them, under
    /// the group's literal record (packed to its alphabet where it has one, §5.6).
    /// `coder`: the last group's coder and alphabet, kept for its next block.
    #[allow(clippy::too_many_arguments)]
    fn other_slice(
        tables: &[u8],
        group_tables: &[usize],
        group_blocks: usize,
        b: usize,
        e: &BlockEntry,
        lanes: u8,
        two_bit: &[u8],
        two_lanes: u8,
        coder: &mut Option<(usize, super::entropy::SliceCoder, Option<Vec<u8>>)>,
    ) -> Result<Vec<u8>, Error> {
        let bad = |why: String| Error::Write(std::io::Error::other(format!("block {b}: {why}")));
        let mut literals = vec![0u8; e.decoded_len[STREAM_LITERALS] as usize];
        match two_lanes {
            LANES_TWO_BIT_RUNS => crate::device::two_bit::decode_runs(two_bit, &mut literals),
            _ => crate::device::two_bit::decode(two_bit, &mut literals),
        }
        .map_err(|s| bad(format!("its two-bit slice does not decode ({s:?})")))?;
        if lanes == LANES_RAW {
            return Ok(literals);
        }
        let g = b / group_blocks;
        if coder.as_ref().is_none_or(|c| c.0 != g) {
            let mut pos = group_tables[g];
            let record = crate::format::tables::TableRecord::deserialize(tables, &mut pos, 0)
                .map_err(|f| bad(format!("its group's literal record: {f}")))?
                .ok_or_else(|| bad("its group has no literal record".into()))?;
            let alphabet = record.alphabet.clone();
            *coder = Some((g, super::entropy::SliceCoder::new(&record), alphabet));
        }
        let (_, c, alphabet) = coder.as_ref().expect("set above");
        let mut out = Vec::new();
        match alphabet {
            Some(a) => {
                let mut packed = Vec::new();
                super::entropy::pack_literals(&literals, a, &mut packed);
                c.encode(&packed, lanes as usize, &mut out);
            }
            None => c.encode(&literals, lanes as usize, &mut out),
        }
        Ok(out)
    }

    /// Writes the archive to `out`: header, block table, tables, the data section from the
    /// spool (with the other literal slices where the two-bit ones do not stay), extension
    /// area. Returns its length in bytes, and whether the input looked like FASTA but its
    /// records were left out ([`StreamSummary::fasta_left_out`]).
    fn finish(mut self, out: &mut dyn Write) -> Result<(u64, bool), Error> {
        let keep = self.keep_two_bit();
        let data_bytes: u64 = (self.entries.iter())
            .flat_map(|e| e.stored_len.iter().map(|&n| u64::from(n)))
            .sum();
        let (records, fasta_left_out) = self.fasta.finish(self.original);
        let lines = self
            .plan
            .used_lines
            .load(std::sync::atomic::Ordering::Relaxed);
        let area = extension_area(&self.entries, lines, records.as_ref());
        let (mut h, block_table) = file_header(
            &self.plan.opts,
            self.original,
            &self.entries,
            self.tables.len() as u64,
            data_bytes,
            self.content.digest(),
        );
        h.meta_checksum = crate::format::meta_checksum(&h, &block_table, &self.tables, &area);
        let mut out = BufWriter::with_capacity(1 << 20, out);
        let w =
            |out: &mut BufWriter<&mut dyn Write>, b: &[u8]| out.write_all(b).map_err(Error::Write);
        w(&mut out, bytemuck::bytes_of(&h))?;
        w(&mut out, &block_table)?;
        w(&mut out, &self.tables)?;
        let rewind = |f: BufWriter<std::fs::File>| -> std::io::Result<BufReader<std::fs::File>> {
            let mut f = f.into_inner().map_err(|e| e.into_error())?;
            f.rewind()?;
            Ok(BufReader::with_capacity(1 << 20, f))
        };
        let mut data = rewind(self.data).map_err(Error::Write)?;
        if keep {
            std::io::copy(&mut data, &mut out).map_err(Error::Write)?;
        } else {
            // each block that took a two-bit slice gets its other one (its literal slice,
            // `STREAM_LITERALS`, comes first in its bytes)
            let mut alts = self.alts.iter().peekable();
            let mut coder = None;
            let copy = |r: &mut BufReader<std::fs::File>, n: u64, to: Option<&mut dyn Write>| {
                let mut taken = r.take(n);
                let got = match to {
                    Some(to) => std::io::copy(&mut taken, to),
                    None => std::io::copy(&mut taken, &mut std::io::sink()),
                }?;
                match got == n {
                    true => Ok(()),
                    false => Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof)),
                }
            };
            for (b, e) in self.entries.iter().enumerate() {
                let all: u64 = e.stored_len.iter().map(|&n| u64::from(n)).sum();
                match alts.next_if(|a| a.0 == b) {
                    Some(&(_, lanes, other, two, two_lanes)) => {
                        let rest = all - u64::from(other);
                        let mut two_bit = vec![0u8; two as usize];
                        data.read_exact(&mut two_bit).map_err(Error::Write)?;
                        let slice = Spool::other_slice(
                            &self.tables,
                            &self.group_tables,
                            self.plan.group_blocks,
                            b,
                            e,
                            lanes,
                            &two_bit,
                            two_lanes,
                            &mut coder,
                        )?;
                        if slice.len() != other as usize {
                            return Err(Error::Write(std::io::Error::other(format!(
                                "block {b}: its literal slice coded again is {} bytes, \
                                 not {other}",
                                slice.len()
                            ))));
                        }
                        w(&mut out, &slice)?;
                        copy(&mut data, rest, Some(&mut out)).map_err(Error::Write)?;
                    }
                    None => copy(&mut data, all, Some(&mut out)).map_err(Error::Write)?,
                }
            }
        }
        w(&mut out, &area)?;
        out.flush().map_err(Error::Write)?;
        let archive_bytes = crate::format::HEADER_SIZE as u64
            + block_table.len() as u64
            + self.tables.len() as u64
            + data_bytes
            + area.len() as u64;
        Ok((archive_bytes, fasta_left_out))
    }
}

/// The extension area as [`crate::compress`] writes it (FORMAT.md §3.4): the two-bit runs
/// record (type 3) where a block of `entries` needs it, the line layout record (type 4)
/// where a block has a layout (`lines`), then the FASTA index (type 1) and the checksums
/// (type 2) where given (`crate::format::with_extensions` appends them there).
fn extension_area(
    entries: &[BlockEntry],
    lines: bool,
    records: Option<&(FastaIndex, Option<Vec<SequenceDigests>>)>,
) -> Vec<u8> {
    let mut area = Vec::new();
    crate::format::extension::write_two_bit_runs_record(entries, &mut area);
    if lines {
        crate::format::extension::write_line_layout_record(&mut area);
    }
    let Some((index, digests)) = records else {
        return area;
    };
    let mut add = |kind: u16, payload: &[u8]| {
        let record = crate::format::Extension {
            kind,
            flags: 0,
            payload,
        };
        record.write_to(&mut area)
    };
    add(EXTENSION_TYPE_FASTA_INDEX, &index.to_bytes());
    if let Some(d) = digests {
        if let Some(p) = crate::fasta::checksums::to_bytes(d) {
            add(EXTENSION_TYPE_SEQUENCE_CHECKSUMS, &p);
        }
    }
    area
}
