//! Region strings and the output of `samtools faidx FILE REGION...`, reproduced byte for byte
//! (samtools 1.16.1 with htslib 1.16: `hts_parse_region`, `fai_fetch64`, `faidx_core`).
//!
//! # Region syntax ([`parse_region`])
//! `name`, `name:beg`, `name:beg-end`, `name:beg-`, `name:-end`, 1-based and inclusive; the
//! result is 0-based and half-open. Numbers may hold thousands commas (`1,000`), a decimal
//! part (dropped with a warning) and an exponent or a `k`/`m`/`g` suffix (`2k` = 2000). A name
//! that contains `:` is found whole first (`chrUn:1-5` names the record `chrUn:1-5` when the
//! index has one; if the part before the last `:` is a record too, the region is ambiguous and
//! refused); braces quote a name: `{chrUn:1-5}:10-20`.
//!
//! # Output ([`faidx`], [`write_region`])
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

use std::io::{self, Write};

use thiserror::Error;

use super::index::{is_graph, FaiRecord, FastaIndex, SeqFormat};

/// htslib's `HTS_POS_MAX`: the end of a region given without an end.
pub const HTS_POS_MAX: i64 = ((i32::MAX as i64) << 32) | i32::MAX as i64;

/// A parsed region: a record and 0-based half-open coordinates, not yet clipped to the
/// record's length (`end` is [`HTS_POS_MAX`] where no end was given). As in htslib, `beg`
/// is -1 for `name:0-N` and `name:-`, which select nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    /// Position of the record in [`FastaIndex::records`].
    pub id: usize,
    /// First base, 0-based.
    pub beg: i64,
    /// One past the last base.
    pub end: i64,
}

impl Region {
    /// The coordinates clipped to a record of `length` bases as samtools clips them
    /// (`fai_get_val`): both ends to at most `length`, then `beg` to at most `end`. The
    /// comparisons are unsigned, as in htslib, so a negative `beg` clips to the end.
    pub fn clipped(&self, length: u64) -> (u64, u64) {
        let end = (self.end as u64).min(length);
        let beg = (self.beg as u64).min(length).min(end);
        (beg, end)
    }
}

/// Why a region string selects nothing. The messages are htslib's where it prints one.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum RegionError {
    /// `{` without a closing `}`.
    #[error("Mismatching braces in \"{}\"", String::from_utf8_lossy(.0))]
    MismatchedBraces(Vec<u8>),
    /// Both the whole string and the part before its last `:` name records.
    #[error("Range is ambiguous. Use {{{}}} or {{{}}}{} instead", String::from_utf8_lossy(.whole), String::from_utf8_lossy(.name), String::from_utf8_lossy(.coords))]
    Ambiguous {
        whole: Vec<u8>,
        name: Vec<u8>,
        coords: Vec<u8>,
    },
    /// No record has this name (the name as looked up).
    #[error("sequence \"{}\" not found", String::from_utf8_lossy(.0))]
    NotFound(Vec<u8>),
    /// A start of 0 or below followed by an end (`name:0-`, `name:-5-10`).
    #[error("Coordinates must be > 0")]
    CoordinatesNotPositive,
    /// Text after the coordinates that is not part of them.
    #[error("Unexpected string \"{}\" after region", String::from_utf8_lossy(.0))]
    UnexpectedString(Vec<u8>),
    /// A start after the end (`name:20-10`); 0-based half-open values.
    #[error("empty range: start {beg} is not before end {end}")]
    EmptyRange { beg: i64, end: i64 },
}

/// Parses `region` against `index` as htslib's `hts_parse_region` does for `samtools faidx`
/// (thousands separators allowed, `name:100` meaning from base 100 to the end). Bytes from
/// the first NUL on are ignored, as C does.
///
/// # Errors
/// [`RegionError`] where samtools would print "not found" for the region.
pub fn parse_region(index: &FastaIndex, region: &[u8]) -> Result<Region, RegionError> {
    parse_logged(index, region, &mut Vec::new())
}

/// The byte offset of base `pos` (0-based) of `record` in the original file: OFFSET +
/// `pos / LINEBASES * LINEWIDTH + pos % LINEBASES`. `None` where LINEBASES is 0 or the
/// offset passes `u64::MAX`.
pub fn base_offset(record: &FaiRecord, pos: u64) -> Option<u64> {
    seq_base_offset(record.offset, record, pos)
}

fn seq_base_offset(start: u64, record: &FaiRecord, pos: u64) -> Option<u64> {
    let lb = u64::from(record.line_bases);
    if lb == 0 {
        return None;
    }
    let lw = u64::from(record.line_width);
    (pos / lb)
        .checked_mul(lw)
        .and_then(|x| x.checked_add(pos % lb))
        .and_then(|x| x.checked_add(start))
}

/// The bytes of the original file that hold bases `beg..end` (0-based, half-open) of
/// `record`, line ends inside included: `start..end` byte offsets. Empty where `beg >= end`;
/// `None` where LINEBASES is 0 or an offset passes `u64::MAX`. Exact for files that [`FastaIndex::build`] accepted and whose
/// lines have no inner whitespace.
pub fn byte_range(record: &FaiRecord, beg: u64, end: u64) -> Option<std::ops::Range<u64>> {
    let start = base_offset(record, beg)?;
    if beg >= end {
        return Some(start..start);
    }
    let last = base_offset(record, end - 1)?;
    Some(start..last + 1)
}

/// Why the bases of a region could not be read.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum FetchError {
    /// The file ends before the region's last base (samtools: "Failed to retrieve block:
    /// unexpected end of file").
    #[error("Failed to retrieve block: unexpected end of file")]
    UnexpectedEof,
    /// The record has bases but its first line has none (LINEBASES 0), so no base has a byte
    /// offset (samtools divides by zero here), or an offset passes `u64::MAX` (an index not
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
/// `read(offset, buf)` fills `buf` from byte `offset` of the original file and returns the
/// count read, fewer than `buf.len()` only at the end of the file (as `pread`).
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
        for &b in &buf[..got] {
            if is_graph(b) {
                out.push(b);
                if out.len() == need {
                    break;
                }
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
/// Only errors of `out` or `log`; reading errors give [`RegionStatus::FetchFailed`].
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
    let region = until_nul(region);
    let seq = fetch_logged(index, region, false, read, log)?;
    let marker = if opts.output == SeqFormat::Fastq { b'@' } else { b'>' };
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
/// Only errors of `out` or `log`.
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
    for region in regions {
        let status = write_region(index, region.as_ref(), opts, read, out, log)?;
        if !status_ok(status, opts) {
            return Ok(1);
        }
    }
    Ok(0)
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

fn until_nul(s: &[u8]) -> &[u8] {
    match s.iter().position(|&b| b == 0) {
        Some(n) => &s[..n],
        None => s,
    }
}

/// samtools' complement table (IUPAC codes, case kept; other bytes unchanged).
fn complement(b: u8) -> u8 {
    const TO: &[u8; 26] = b"TVGHEFCDIJMLKNOPQYSAABWXRZ";
    match b {
        b'A'..=b'Z' => TO[usize::from(b - b'A')],
        b'a'..=b'z' => TO[usize::from(b - b'a')].to_ascii_lowercase(),
        _ => b
    }
}

fn reverse_complement(s: &mut [u8]) {
    s.reverse();
    for b in s {
        *b = complement(*b);
    }
}

/// The byte at `i`, or 0 past the end (C string semantics).
#[inline]
fn at(s: &[u8], i: usize) -> u8 {
    s.get(i).copied().unwrap_or(0)
}

/// htslib's `hts_parse_decimal` with `HTS_PARSE_THOUSANDS_SEP`, from `s[start..]`: the value
/// (wrapping on overflow, as the C on common machines) and the index after the number (or
/// `start` where there are no digits). Warnings go to `log`.
fn parse_decimal(s: &[u8], start: usize, log: &mut Vec<Vec<u8>>) -> (i64, usize) {
    let mut i = start;
    while matches!(at(s, i), b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r') {
        i += 1;
    }
    let num_start = i;
    let mut n: i64 = 0;
    let (mut digits, mut decimals) = (0u32, 0i32);
    let mut e: i32 = 0;
    let mut negative = false;
    if matches!(at(s, i), b'+' | b'-') {
        negative = at(s, i) == b'-';
        i += 1;
    }
    let push = |n: i64, c: u8| n.wrapping_mul(10).wrapping_add(i64::from(c - b'0'));
    loop {
        let c = at(s, i);
        if c.is_ascii_digit() {
            digits += 1;
            n = push(n, c);
            i += 1;
        } else if c == b',' {
            i += 1;
        } else {
            break;
        }
    }
    if at(s, i) == b'.' {
        i += 1;
        while at(s, i).is_ascii_digit() {
            decimals += 1;
            digits += 1;
            n = push(n, at(s, i));
            i += 1;
        }
    }
    match at(s, i) {
        b'e' | b'E' => {
            i += 1;
            let mut eneg = false;
            if matches!(at(s, i), b'+' | b'-') {
                eneg = at(s, i) == b'-';
                i += 1;
            }
            while at(s, i).is_ascii_digit() {
                e = e
                    .wrapping_mul(10)
                    .wrapping_add(i32::from(at(s, i) - b'0'));
                i += 1;
            }
            if eneg {
                e = e.wrapping_neg();
            }
        }
        b'k' | b'K' => {
            e = e.wrapping_add(3);
            i += 1;
        }
        b'm' | b'M' => {
            e = e.wrapping_add(6);
            i += 1;
        }
        b'g' | b'G' => {
            e = e.wrapping_add(9);
            i += 1;
        }
        _ => {}
    }
    e = e.wrapping_sub(decimals);
    // 64 steps bring any i64 to 0 in both directions, so the loops are capped there with the
    // same result as htslib's uncapped loops.
    let mut lost: i64 = 0;
    if e > 0 {
        for _ in 0..e.min(64) {
            n = n.wrapping_mul(10);
        }
    } else {
        for _ in 0..e.unsigned_abs().min(64) {
            lost += n % 10;
            n /= 10;
        }
    }
    if lost > 0 {
        let mut m = b"[W::hts_parse_decimal] Discarding fractional part of ".to_vec();
        m.extend_from_slice(&s[num_start.min(s.len())..i.min(s.len())]);
        log.push(m);
    }
    let end = if digits > 0 { i } else { start };
    (if negative { n.wrapping_neg() } else { n }, end)
}

fn log_error(log: &mut Vec<Vec<u8>>, parts: &[&[u8]]) {
    let mut m = b"[E::hts_parse_region] ".to_vec();
    for p in parts {
        m.extend_from_slice(p);
    }
    log.push(m);
}

/// A port of htslib 1.16 `hts_parse_region` (flags 0, so thousands separators on), with its
/// log lines (without line ends) pushed to `log`.
fn parse_logged(
    index: &FastaIndex,
    region: &[u8],
    log: &mut Vec<Vec<u8>>,
) -> Result<Region, RegionError> {
    let s = until_nul(region);
    let len = s.len();
    let (base, s_len, colon, quoted) = if at(s, 0) == b'{' {
        let Some(close) = s.iter().position(|&b| b == b'}') else {
            log_error(log, &[b"Mismatching braces in \"", s, b"\""]);
            return Err(RegionError::MismatchedBraces(s.to_vec()));
        };
        let colon = (at(s, close + 1) == b':').then_some(close + 1);
        (1usize, len - 1, colon, 1usize)
    } else {
        (0, len, s.iter().rposition(|&b| b == b':'), 0)
    };
    let Some(colon) = colon else {
        let name = &s[base..base + s_len - quoted];
        return match index.id(name) {
            Some(id) => Ok(Region {
                id,
                beg: 0,
                end: HTS_POS_MAX,
            }),
            None => Err(RegionError::NotFound(name.to_vec())),
        };
    };
    if quoted == 0 {
        if let Some(id) = index.id(s) {
            if index.id(&s[..colon]).is_some() {
                log_error(
                    log,
                    &[
                        b"Range is ambiguous. Use {",
                        s,
                        b"} or {",
                        &s[..colon],
                        b"}",
                        &s[colon..],
                        b" instead",
                    ],
                );
                return Err(RegionError::Ambiguous {
                    whole: s.to_vec(),
                    name: s[..colon].to_vec(),
                    coords: s[colon..].to_vec(),
                });
            }
            return Ok(Region {
                id,
                beg: 0,
                end: HTS_POS_MAX,
            });
        }
    }
    let name = &s[base..colon - quoted];
    let Some(id) = index.id(name) else {
        return Err(RegionError::NotFound(name.to_vec()));
    };
    let unexpected = |log: &mut Vec<Vec<u8>>, at_: usize| {
        let rest = &s[at_.min(len)..];
        log_error(log, &[b"Unexpected string \"", rest, b"\" after region"]);
        Err(RegionError::UnexpectedString(rest.to_vec()))
    };
    let (n, mut hyphen) = parse_decimal(s, colon + 1, log);
    let beg = n.wrapping_sub(1);
    let h = at(s, hyphen);
    if beg < 0 {
        if beg != -1 && h == b'-' && at(s, colon + 1) != 0 {
            log_error(log, &[b"Coordinates must be > 0"]);
            return Err(RegionError::CoordinatesNotPositive);
        }
        if h.is_ascii_digit() || h == 0 || h == b',' {
            // `name:-100` means `name:1-100`.
            let end = if beg == -1 {
                HTS_POS_MAX
            } else {
                beg.wrapping_add(1).wrapping_neg()
            };
            return Ok(Region { id, beg: 0, end });
        } else if beg < -1 {
            return unexpected(log, hyphen);
        }
    }
    let mut end = if h == 0 {
        HTS_POS_MAX
    } else if h == b'-' {
        let (e, after) = parse_decimal(s, hyphen + 1, log);
        hyphen = after;
        let c = at(s, hyphen);
        if c != 0 && c != b',' {
            return unexpected(log, hyphen);
        }
        e
    } else {
        return unexpected(log, hyphen);
    };
    if end == 0 {
        end = HTS_POS_MAX;
    }
    if beg >= end {
        return Err(RegionError::EmptyRange { beg, end });
    }
    Ok(Region { id, beg, end })
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
    fn parse_forms() {
        let i = idx(b">a\nACGTACGTAC\n>b:1-2\nAC\n>b\nGG\n");
        let p = |s: &str| parse_region(&i, s.as_bytes());
        assert_eq!(p("a"), Ok(Region { id: 0, beg: 0, end: HTS_POS_MAX }));
        assert_eq!(p("a:3"), Ok(Region { id: 0, beg: 2, end: HTS_POS_MAX }));
        assert_eq!(p("a:3-5"), Ok(Region { id: 0, beg: 2, end: 5 }));
        assert_eq!(p("a:1,0-2,0"), Ok(Region { id: 0, beg: 9, end: 20 }));
        assert_eq!(p("a:-4"), Ok(Region { id: 0, beg: 0, end: 4 }));
        assert_eq!(p("a:2k"), Ok(Region { id: 0, beg: 1999, end: HTS_POS_MAX }));
        assert_eq!(p("a:5-3"), Err(RegionError::EmptyRange { beg: 4, end: 3 }));
        assert_eq!(p("a:x"), Err(RegionError::UnexpectedString(b"x".to_vec())));
        assert_eq!(p("a:0-"), Ok(Region { id: 0, beg: -1, end: HTS_POS_MAX }));
        assert_eq!(p("a:-5-10"), Err(RegionError::CoordinatesNotPositive));
        assert!(matches!(p("b:1-2"), Err(RegionError::Ambiguous { .. })));
        assert_eq!(p("{b:1-2}"), Ok(Region { id: 1, beg: 0, end: HTS_POS_MAX }));
        assert_eq!(p("{b}:2"), Ok(Region { id: 2, beg: 1, end: HTS_POS_MAX }));
        assert_eq!(p("{b"), Err(RegionError::MismatchedBraces(b"{b".to_vec())));
        assert_eq!(p("c"), Err(RegionError::NotFound(b"c".to_vec())));
    }

    // Expected outputs below were produced by samtools 1.16.1 on the same bytes and regions.
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

    #[test]
    fn offsets_skip_line_ends() {
        let i = idx(b">a\nACGT\r\nACGT\r\nAC\r\n");
        let r = &i.records()[0];
        assert_eq!(base_offset(r, 0), Some(3));
        assert_eq!(base_offset(r, 4), Some(9));
        assert_eq!(byte_range(r, 3, 9), Some(6..16));
    }
}
