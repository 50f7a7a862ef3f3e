//! The output of `samtools faidx FILE REGION...` (samtools 1.16.1, htslib 1.16: `faidx_core`,
//! `fai_fetch64`, `fai_retrieve`), byte for byte, from any source of the original bytes.
//!
//! For each region, stdout gets `>` + the region string as typed (+ a strand suffix) + `\n`,
//! then the bases wrapped at [`FaidxOptions::line_length`] (samtools' default 60, whatever the
//! input's line length). The clipping and messages are samtools':
//! - an end past the sequence end is clipped, and stderr gets `[faidx] Truncated sequence:
//!   REGION` (only where the end was given and is below 2^31-1);
//! - a start past the end, or `name:0-N`, gives the header alone and `[faidx] Zero length
//!   sequence: REGION`;
//! - an unknown name, a start after the end, or a malformed region gives the header alone,
//!   `[W::fai_get_val] Reference REGION not found in FASTA file, returning empty sequence` and
//!   `[faidx] Failed to fetch sequence in REGION`, and stops with exit status 1 unless
//!   [`FaidxOptions::continue_on_missing`] (`-c`) is set.
//!
//! Not reproduced: for any region of a record whose first line has no base (LINEBASES 0, as
//! in `>a\n \n`), samtools divides by zero and dies (SIGFPE); here a region with bases fails to
//! fetch ([`FetchError::Unlocatable`], exit status 1) and an empty one is a zero-length
//! sequence.

use std::io::{self, Write};

use thiserror::Error;

use super::index::{is_graph, FaiRecord, FastaIndex, SeqFormat};
use super::region::{parse_logged, seq_base_offset, until_nul};

/// Why the bases of a region could not be read.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum FetchError {
    /// The file ends before the region's last base (samtools: "Failed to retrieve block:
    /// unexpected end of file").
    #[error("Failed to retrieve block: unexpected end of file")]
    UnexpectedEof,
    /// The record has bases but its first line has none (LINEBASES 0), so no base has a byte
    /// offset (samtools dies of a division by zero here), or an offset passes `u64::MAX` (an index not
    /// built from this file).
    #[error("the region's bases cannot be located (LINEBASES 0, or offset overflow)")]
    Unlocatable,
    /// The reader failed.
    #[error("read failed: {0}")]
    Io(#[from] io::Error),
}

/// Reads bases `beg..end` (0-based, half-open, already clipped) of the sequence (or, with
/// `quality`, the FASTQ quality string) of `record` as htslib's `fai_retrieve`: from the byte
/// offset of `beg`, keep the graphic bytes (`0x21..=0x7e`) until `end - beg` are kept.
/// `read(offset, buf)` reads into `buf` from byte `offset` of the original file and returns
/// the count read, 0 at (or past) the end of the file; short counts are read on from where
/// they stopped (as `pread`).
///
/// # Errors
/// [`FetchError`]: the file ends first, the bases cannot be located, or `read` fails.
pub fn fetch<R>(
    record: &FaiRecord,
    beg: u64,
    end: u64,
    quality: bool,
    read: &mut R,
) -> Result<Vec<u8>, FetchError>
where
    R: FnMut(u64, &mut [u8]) -> io::Result<usize>,
{
    let need = end.saturating_sub(beg) as usize;
    let mut out = Vec::with_capacity(need);
    if need == 0 {
        return Ok(out);
    }
    let start = if quality {
        record.qual_offset.unwrap_or(0)
    } else {
        record.offset
    };
    let mut pos = seq_base_offset(start, record, beg).ok_or(FetchError::Unlocatable)?;
    let last = seq_base_offset(start, record, end - 1).ok_or(FetchError::Unlocatable)?;
    let mut want = (last + 1).saturating_sub(pos).max(need as u64);
    let mut buf = Vec::new();
    while out.len() < need {
        buf.resize(want.min(1 << 24) as usize, 0);
        let mut got = 0;
        while got < buf.len() {
            let n = read(pos + got as u64, &mut buf[got..])?;
            if n == 0 {
                break;
            }
            got += n;
        }
        // runs of graphic bytes copied whole (a FASTA line at a time)
        for run in buf[..got].split(|&b| !is_graph(b)) {
            let take = run.len().min(need - out.len());
            out.extend_from_slice(&run[..take]);
            if out.len() == need {
                break;
            }
        }
        if out.len() < need && got < buf.len() {
            return Err(FetchError::UnexpectedEof);
        }
        pos = pos.checked_add(got as u64).ok_or(FetchError::Unlocatable)?;
        want = (need - out.len()) as u64 + 64;
    }
    Ok(out)
}

/// The strand suffix of the header line (samtools `--mark-strand`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum MarkStrand {
    /// Nothing on the forward strand, `/rc` on the reverse (samtools' default).
    #[default]
    Rc,
    /// No suffix.
    No,
    /// `(+)` and `(-)`.
    Sign,
    /// Given suffixes: forward, reverse.
    Custom(Vec<u8>, Vec<u8>),
}

impl MarkStrand {
    fn suffix(&self, reverse: bool) -> &[u8] {
        match (self, reverse) {
            (MarkStrand::Rc, false) | (MarkStrand::No, _) => b"",
            (MarkStrand::Rc, true) => b"/rc",
            (MarkStrand::Sign, false) => b"(+)",
            (MarkStrand::Sign, true) => b"(-)",
            (MarkStrand::Custom(p, _), false) => p,
            (MarkStrand::Custom(_, n), true) => n,
        }
    }
}

/// The `samtools faidx` options that shape the output.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct FaidxOptions {
    /// Bases per output line (`-n`; samtools' default 60; 0 is taken as 60, as samtools
    /// replaces values below 1).
    pub line_length: usize,
    /// Go on after a region whose name is not found, exit status 0 (`-c`).
    pub continue_on_missing: bool,
    /// Reverse-complement the bases (`-i`), reverse the qualities.
    pub reverse_complement: bool,
    /// Header suffixes (`--mark-strand`).
    pub mark_strand: MarkStrand,
    /// FASTA output (`samtools faidx`) or FASTQ with qualities (`samtools fqidx`, `faidx -f`).
    pub output: SeqFormat,
}

impl Default for FaidxOptions {
    fn default() -> Self {
        FaidxOptions {
            line_length: 60,
            continue_on_missing: false,
            reverse_complement: false,
            mark_strand: MarkStrand::Rc,
            output: SeqFormat::Fasta,
        }
    }
}

/// What happened to one region in [`write_region`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegionStatus {
    /// Bases were written; `truncated` where the region's end passed the sequence end.
    Written { bases: u64, truncated: bool },
    /// The clipped region is empty: the header alone was written.
    ZeroLength,
    /// The region names no record or is malformed: the header alone was written.
    NotFound,
    /// The bases could not be read (file too short, LINEBASES 0, or the reader failed).
    FetchFailed,
}

/// Writes the output of `samtools faidx FILE REGION` for one region: the header and the
/// wrapped bases (and for FASTQ output, `+` and the qualities) to `out`, samtools' messages
/// to `log` (lines ending in `\n`, the same text samtools prints on stderr). `read` reads the
/// original file, as in [`fetch`].
///
/// # Errors
/// Errors of `out` or `log`; an error of kind [`io::ErrorKind::InvalidInput`], before anything
/// is written, for FASTQ output from a FASTA index (samtools refuses to load such an index).
/// Reading errors give [`RegionStatus::FetchFailed`].
pub fn write_region<R, W, L>(
    index: &FastaIndex,
    region: &[u8],
    opts: &FaidxOptions,
    read: &mut R,
    out: &mut W,
    log: &mut L,
) -> io::Result<RegionStatus>
where
    R: FnMut(u64, &mut [u8]) -> io::Result<usize>,
    W: Write + ?Sized,
    L: Write + ?Sized,
{
    fastq_needs_qualities(index, opts)?;
    let region = until_nul(region);
    let seq = fetch_logged(index, region, false, read, log)?;
    let marker = if opts.output == SeqFormat::Fastq {
        b'@'
    } else {
        b'>'
    };
    let mut header = Vec::with_capacity(region.len() + 8);
    header.push(marker);
    header.extend_from_slice(region);
    header.extend_from_slice(opts.mark_strand.suffix(opts.reverse_complement));
    header.push(b'\n');
    out.write_all(&header)?;
    let mut seq = seq;
    if opts.reverse_complement {
        if let Fetched::Bases(s) = &mut seq {
            reverse_complement(s);
        }
    }
    let status = write_lines(index, region, opts, seq, out, log)?;
    if opts.output == SeqFormat::Fastq && status_ok(status, opts) {
        out.write_all(b"+\n")?;
        let mut qual = fetch_logged(index, region, true, read, log)?;
        if opts.reverse_complement {
            if let Fetched::Bases(q) = &mut qual {
                q.reverse();
            }
        }
        let q = write_lines(index, region, opts, qual, out, log)?;
        if !status_ok(q, opts) {
            return Ok(q);
        }
    }
    Ok(status)
}

/// Runs `samtools faidx FILE REGION...` over `regions` in order: [`write_region`] for each,
/// stopping after the first failure as samtools does. Returns samtools' exit status: 0, or 1
/// after a region not found (without `continue_on_missing`) or a failed read.
///
/// # Errors
/// As [`write_region`].
pub fn faidx<R, W, L, S>(
    index: &FastaIndex,
    regions: &[S],
    opts: &FaidxOptions,
    read: &mut R,
    out: &mut W,
    log: &mut L,
) -> io::Result<i32>
where
    R: FnMut(u64, &mut [u8]) -> io::Result<usize>,
    W: Write + ?Sized,
    L: Write + ?Sized,
    S: AsRef<[u8]>,
{
    fastq_needs_qualities(index, opts)?;
    for region in regions {
        let status = write_region(index, region.as_ref(), opts, read, out, log)?;
        if !status_ok(status, opts) {
            return Ok(1);
        }
    }
    Ok(0)
}

fn fastq_needs_qualities(index: &FastaIndex, opts: &FaidxOptions) -> io::Result<()> {
    if opts.output == SeqFormat::Fastq && index.format() == SeqFormat::Fasta {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "FASTQ output needs a FASTQ index (this index is of a FASTA file)",
        ));
    }
    Ok(())
}

fn status_ok(status: RegionStatus, opts: &FaidxOptions) -> bool {
    match status {
        RegionStatus::Written { .. } | RegionStatus::ZeroLength => true,
        RegionStatus::NotFound => opts.continue_on_missing,
        RegionStatus::FetchFailed => false,
    }
}

enum Fetched {
    Bases(Vec<u8>),
    NotFound,
    Failed,
}

/// `fai_fetch64` / `fai_fetchqual64`: parse, clip, retrieve, with htslib's log lines.
fn fetch_logged<R, L>(
    index: &FastaIndex,
    region: &[u8],
    quality: bool,
    read: &mut R,
    log: &mut L,
) -> io::Result<Fetched>
where
    R: FnMut(u64, &mut [u8]) -> io::Result<usize>,
    L: Write + ?Sized,
{
    let mut lines = Vec::new();
    let parsed = parse_logged(index, region, &mut lines);
    flush_log(log, &lines)?;
    let Ok(r) = parsed else {
        let mut m = b"[W::fai_get_val] Reference ".to_vec();
        m.extend_from_slice(region);
        m.extend_from_slice(b" not found in FASTA file, returning empty sequence\n");
        log.write_all(&m)?;
        return Ok(Fetched::NotFound);
    };
    let record = &index.records()[r.id];
    let (beg, end) = r.clipped(record.length);
    match fetch(record, beg, end, quality, read) {
        Ok(s) => Ok(Fetched::Bases(s)),
        Err(e) => {
            let text = match e {
                FetchError::UnexpectedEof => {
                    "Failed to retrieve block: unexpected end of file".to_string()
                }
                other => format!("Failed to retrieve block: {other}"),
            };
            writeln!(log, "[E::fai_retrieve] {text}")?;
            Ok(Fetched::Failed)
        }
    }
}

/// samtools' `write_line`: the messages, then the bases in lines of `line_length`.
fn write_lines<W, L>(
    index: &FastaIndex,
    region: &[u8],
    opts: &FaidxOptions,
    seq: Fetched,
    out: &mut W,
    log: &mut L,
) -> io::Result<RegionStatus>
where
    W: Write + ?Sized,
    L: Write + ?Sized,
{
    let note = |log: &mut L, what: &[u8]| -> io::Result<()> {
        let mut m = b"[faidx] ".to_vec();
        m.extend_from_slice(what);
        m.extend_from_slice(region);
        m.push(b'\n');
        log.write_all(&m)
    };
    let seq = match seq {
        Fetched::NotFound => {
            note(log, b"Failed to fetch sequence in ")?;
            return Ok(RegionStatus::NotFound);
        }
        Fetched::Failed => {
            note(log, b"Failed to fetch sequence in ")?;
            return Ok(RegionStatus::FetchFailed);
        }
        Fetched::Bases(s) => s,
    };
    if seq.is_empty() {
        note(log, b"Zero length sequence: ")?;
        return Ok(RegionStatus::ZeroLength);
    }
    // samtools parses the region again here, printing its warnings a second time.
    let mut lines = Vec::new();
    let again = parse_logged(index, region, &mut lines);
    flush_log(log, &lines)?;
    let truncated = matches!(again, Ok(r) if r.end < i64::from(i32::MAX)
        && seq.len() as i64 != r.end.wrapping_sub(r.beg));
    if truncated {
        note(log, b"Truncated sequence: ")?;
    }
    let width = if opts.line_length == 0 {
        60
    } else {
        opts.line_length
    };
    let mut text = Vec::with_capacity(seq.len() + seq.len() / width + 1);
    for line in seq.chunks(width) {
        text.extend_from_slice(line);
        text.push(b'\n');
    }
    out.write_all(&text)?;
    Ok(RegionStatus::Written {
        bases: seq.len() as u64,
        truncated,
    })
}

fn flush_log<L: Write + ?Sized>(log: &mut L, lines: &[Vec<u8>]) -> io::Result<()> {
    for l in lines {
        log.write_all(l)?;
        log.write_all(b"\n")?;
    }
    Ok(())
}

/// samtools' complement table (IUPAC codes, case kept; other bytes unchanged).
fn complement(b: u8) -> u8 {
    const TO: &[u8; 26] = b"TVGHEFCDIJMLKNOPQYSAABWXRZ";
    match b {
        b'A'..=b'Z' => TO[usize::from(b - b'A')],
        b'a'..=b'z' => TO[usize::from(b - b'a')].to_ascii_lowercase(),
        _ => b,
    }
}

fn reverse_complement(s: &mut [u8]) {
    s.reverse();
    for b in s {
        *b = complement(*b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idx(data: &[u8]) -> FastaIndex {
        FastaIndex::build(data).unwrap()
    }

    fn run(data: &[u8], regions: &[&str], opts: &FaidxOptions) -> (String, String, i32) {
        let index = idx(data);
        let mut read = |off: u64, buf: &mut [u8]| -> io::Result<usize> {
            let off = (off as usize).min(data.len());
            let n = buf.len().min(data.len() - off);
            buf[..n].copy_from_slice(&data[off..off + n]);
            Ok(n)
        };
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let rc = faidx(&index, regions, opts, &mut read, &mut out, &mut err).unwrap();
        (
            String::from_utf8(out).unwrap(),
            String::from_utf8(err).unwrap(),
            rc,
        )
    }

    #[test]
    fn samtools_output() {
        let data = b">a desc\nACGT\nAC\n>b\nACG\n";
        let o = FaidxOptions::default();
        assert_eq!(
            run(data, &["a:0-3", "a:-", "a:-3", "a:2,0", "a:1.5", "a:1k", "a:3-2"], &o),
            (
                ">a:0-3\n>a:-\n>a:-3\nACG\n>a:2,0\n>a:1.5\nACGTAC\n>a:1k\n>a:3-2\n".into(),
                "[faidx] Zero length sequence: a:0-3\n\
                 [faidx] Zero length sequence: a:-\n\
                 [faidx] Zero length sequence: a:2,0\n\
                 [W::hts_parse_decimal] Discarding fractional part of 1.5\n\
                 [W::hts_parse_decimal] Discarding fractional part of 1.5\n\
                 [faidx] Zero length sequence: a:1k\n\
                 [W::fai_get_val] Reference a:3-2 not found in FASTA file, returning empty sequence\n\
                 [faidx] Failed to fetch sequence in a:3-2\n"
                    .into(),
                1
            )
        );
        let c = FaidxOptions {
            continue_on_missing: true,
            ..FaidxOptions::default()
        };
        assert_eq!(
            run(data, &["nope", "a:2-100", "b:1-2"], &c),
            (
                ">nope\n>a:2-100\nCGTAC\n>b:1-2\nAC\n".into(),
                "[W::fai_get_val] Reference nope not found in FASTA file, returning empty sequence\n\
                 [faidx] Failed to fetch sequence in nope\n\
                 [faidx] Truncated sequence: a:2-100\n"
                    .into(),
                0
            )
        );
    }

    #[test]
    fn wraps_and_reverse_complements() {
        let data = b">s\nACGTNacgtnRYKMBDHV\n";
        let o = FaidxOptions {
            line_length: 7,
            reverse_complement: true,
            ..FaidxOptions::default()
        };
        let (out, _, rc) = run(data, &["s"], &o);
        assert_eq!(rc, 0);
        assert_eq!(out, ">s/rc\nBDHVKMR\nYnacgtN\nACGT\n");
    }
}
