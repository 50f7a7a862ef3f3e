//! The sequence index of a FASTA or FASTQ file, built with exactly the rules of samtools'
//! `faidx` (htslib 1.16 `fai_build_core`), its `.fai` text, and a compact byte form.
//!
//! # What is indexed
//! A record starts at a header line (`>` for FASTA, `@` for FASTQ; the first header decides the
//! format). Its name is the header after the marker up to the first whitespace byte, leading
//! whitespace skipped (`>  chr1 desc` is `chr1`; a header of only whitespace gives the empty
//! name, as samtools). Each record gets the `.fai` fields: LENGTH (bases: bytes `0x21..=0x7e`
//! of its sequence lines), OFFSET (byte offset of its first sequence byte), LINEBASES (bases on
//! its first line), LINEWIDTH (bytes of its first line, line feed included) and, for FASTQ,
//! QUALOFFSET (byte offset of its first quality byte).
//!
//! # Accepted and refused input (samtools' rules)
//! - Every line of a sequence but the last must have the first line's width; a longer line is
//!   refused ([`IndexError::DifferentLineLength`]) and a line after a shorter one must be a
//!   header or empty (otherwise [`IndexError::UnexpectedByte`]: this is how samtools refuses
//!   ragged lines and empty lines inside a sequence).
//! - Windows line ends are accepted: `\r` counts in LINEWIDTH but not in LINEBASES (so
//!   `ACGT\r\n` gives 4 and 6), and blank `\r\n` lines between records are skipped. A lone `\r`
//!   between records is refused ([`IndexError::CarriageReturn`]).
//! - The last line may lack its line feed.
//! - A later record with the name of an earlier one is left out of the index, with an
//!   [`IndexWarning::DuplicateName`] (samtools warns and ignores it).
//! - A FASTA record with no sequence line before the next header is left out of the index,
//!   with an [`IndexWarning::EmptySequenceSkipped`] (samtools drops it silently); one at the end
//!   of the input makes the whole input refused ([`IndexError::LastRecordEmpty`],
//!   [`IndexError::LastEntryNoSequence`]), as samtools refuses it.
//! - An input without any record is refused ([`IndexError::NoRecords`]).
//!
//! # Byte form
//! [`FastaIndex::to_bytes`] and [`FastaIndex::from_bytes`]; the layout is in the module
//! [`super::serial`].

use std::collections::HashMap;
use std::fmt;

use thiserror::Error;

/// Whether the indexed file is FASTA (`>` headers) or FASTQ (`@` headers, quality lines).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeqFormat {
    /// `>name` header, sequence lines.
    Fasta,
    /// `@name` header, sequence lines, `+` line, quality lines.
    Fastq,
}

/// One line of the `.fai` index: where a record's sequence lies in the original bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaiRecord {
    /// The name: header bytes after the marker up to the first whitespace (may be empty).
    pub name: Vec<u8>,
    /// Number of bases (graphic bytes `0x21..=0x7e` of the sequence lines).
    pub length: u64,
    /// Byte offset of the first sequence byte in the original file.
    pub offset: u64,
    /// Bases on each full line (the first line's count).
    pub line_bases: u32,
    /// Bytes of each full line including its line end (`\n`, or `\r\n` counted as 2).
    pub line_width: u32,
    /// FASTQ: byte offset of the first quality byte; `None` for FASTA.
    pub qual_offset: Option<u64>,
}

impl FaiRecord {
    /// The name as text (bytes that are not UTF-8 shown as U+FFFD).
    pub fn name_lossy(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(&self.name)
    }
}

/// A non-fatal finding while indexing; samtools also accepts these inputs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexWarning {
    /// A record whose name is already indexed was left out (samtools: "Ignoring duplicate
    /// sequence"). `offset` is the byte offset of its sequence.
    DuplicateName { name: Vec<u8>, offset: u64 },
    /// A FASTA record without sequence lines, followed by another record, was left out
    /// (samtools drops it without a message). `line` is its header line (1-based).
    EmptySequenceSkipped { name: Vec<u8>, line: u64 },
}

impl fmt::Display for IndexWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IndexWarning::DuplicateName { name, offset } => write!(
                f,
                "Ignoring duplicate sequence \"{}\" at byte offset {offset}",
                String::from_utf8_lossy(name)
            ),
            IndexWarning::EmptySequenceSkipped { name, line } => write!(
                f,
                "sequence '{}' (header at line {line}) has no bases and is left out",
                String::from_utf8_lossy(name)
            ),
        }
    }
}

/// Why an input cannot be indexed. Lines are 1-based and counted as samtools counts them.
/// Names are shown lossily as text.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum IndexError {
    /// The input holds no record at all (empty, or only blank lines).
    #[error("no sequence record in the input")]
    NoRecords,
    /// A byte other than a header marker or a line end where a record must start (samtools:
    /// "Format error, unexpected ... at line N"): a sequence line after a shorter line or
    /// after an empty line, or text before the first header.
    #[error("format error, unexpected {} at line {line}", show_byte(*.byte))]
    UnexpectedByte { byte: u8, line: u64 },
    /// A `\r` not followed by `\n` where a record must start.
    #[error("format error, carriage return not followed by new line at line {line}")]
    CarriageReturn { line: u64 },
    /// A sequence line longer than the sequence's first line.
    #[error("different line length in sequence '{}' at line {line}", String::from_utf8_lossy(.name))]
    DifferentLineLength { name: Vec<u8>, line: u64 },
    /// The input ends inside the last header line (samtools: "The last entry has no
    /// sequence").
    #[error("the last entry '{}' has no sequence (input ends in its header at line {line})", String::from_utf8_lossy(.name))]
    LastEntryNoSequence { name: Vec<u8>, line: u64 },
    /// The last FASTA record has no sequence line, or the input ends inside the last FASTQ
    /// record (samtools refuses without a message).
    #[error("the last record '{}' has no complete sequence before the end of input (line {line})", String::from_utf8_lossy(.name))]
    LastRecordEmpty { name: Vec<u8>, line: u64 },
    /// A `>` header in a FASTQ file.
    #[error("found '>' in a FASTQ file at line {line}")]
    FastaHeaderInFastq { line: u64 },
    /// An `@` header in a FASTA file.
    #[error("found '@' in a FASTA file at line {line}")]
    FastqHeaderInFasta { line: u64 },
    /// FASTQ: an empty line inside a sequence.
    #[error("empty line in sequence '{}' at line {line}", String::from_utf8_lossy(.name))]
    EmptyLineInSequence { name: Vec<u8>, line: u64 },
    /// FASTQ: an empty line before the quality string is complete.
    #[error("empty line in the quality of sequence '{}' at line {line}", String::from_utf8_lossy(.name))]
    EmptyLineInQuality { name: Vec<u8>, line: u64 },
    /// FASTQ: a quality line longer than the sequence lines.
    #[error("quality line too long in '{}' at line {line}", String::from_utf8_lossy(.name))]
    QualityLineTooLong { name: Vec<u8>, line: u64 },
    /// FASTQ: more quality bytes than bases.
    #[error("quality longer than sequence in '{}' at line {line}", String::from_utf8_lossy(.name))]
    QualityLongerThanSequence { name: Vec<u8>, line: u64 },
    /// FASTQ: a short quality line that does not end the quality string.
    #[error("quality line too short in '{}' at line {line}", String::from_utf8_lossy(.name))]
    QualityLineTooShort { name: Vec<u8>, line: u64 },
    /// FASTQ: the line after a short sequence line does not start with `+`.
    #[error("format error, expecting '+', got {} at line {line}", show_byte(*.byte))]
    ExpectedPlus { byte: u8, line: u64 },
    /// A line of more than 2^32-1 bytes (the `.fai` fields are 32-bit).
    #[error("line {line} is longer than 4 GiB")]
    LineTooLong { line: u64 },
}

fn show_byte(b: u8) -> String {
    if (0x20..=0x7e).contains(&b) {
        format!("\"{}\"", b as char)
    } else {
        format!("byte 0x{b:02x}")
    }
}

/// C `isgraph` in the C locale: the bytes samtools counts as bases.
#[inline]
pub(crate) fn is_graph(b: u8) -> bool {
    (0x21..=0x7e).contains(&b)
}

/// Whether every byte of `bytes` is [`is_graph`]; branch-free within 64-byte chunks, so that
/// it vectorises.
#[inline]
fn all_graph(bytes: &[u8]) -> bool {
    bytes.chunks(64).all(|c| {
        c.iter()
            .fold(0u8, |bad, &b| bad | (b.wrapping_sub(0x21) >= 0x5e) as u8)
            == 0
    })
}

/// C `isspace` in the C locale.
#[inline]
pub(super) fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// The index of one FASTA or FASTQ file: its records in file order and a name lookup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FastaIndex {
    pub(super) format: SeqFormat,
    pub(super) records: Vec<FaiRecord>,
    pub(super) by_name: HashMap<Vec<u8>, usize>,
}

/// The states of samtools' indexing automaton.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    OutRead,
    InName,
    InSeq,
    SeqEnd,
    InQual,
}

impl FastaIndex {
    /// Indexes `data`, the whole bytes of a FASTA or FASTQ file, as `samtools faidx` (or
    /// `fqidx`) would. Warnings are dropped; see [`FastaIndex::build_with_warnings`].
    ///
    /// # Errors
    /// [`IndexError`] where samtools refuses to index the input.
    pub fn build(data: &[u8]) -> Result<Self, IndexError> {
        Self::build_with_warnings(data).map(|(index, _)| index)
    }

    /// Indexes `data` as [`FastaIndex::build`] and also returns the findings that samtools
    /// accepts (duplicate names, empty records left out), in input order.
    ///
    /// # Errors
    /// [`IndexError`] where samtools refuses to index the input.
    pub fn build_with_warnings(data: &[u8]) -> Result<(Self, Vec<IndexWarning>), IndexError> {
        Builder::new(data).run()
    }

    /// The FASTA index of `records` (file order, distinct names), as the streaming encoder
    /// builds them (`crate::encode::stream`).
    pub(crate) fn from_fasta_records(records: Vec<FaiRecord>) -> FastaIndex {
        let by_name = (records.iter().enumerate())
            .map(|(i, r)| (r.name.clone(), i))
            .collect();
        FastaIndex {
            format: SeqFormat::Fasta,
            records,
            by_name,
        }
    }

    /// Whether the indexed file is FASTA or FASTQ.
    pub fn format(&self) -> SeqFormat {
        self.format
    }

    /// The records in file order (duplicates and empty FASTA records left out, as samtools).
    pub fn records(&self) -> &[FaiRecord] {
        &self.records
    }

    /// The number of records.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether the index has no record (never true for a built or decoded index).
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// The position in [`FastaIndex::records`] of the record named `name` (exact bytes).
    pub fn id(&self, name: &[u8]) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    /// The record named `name` (exact bytes).
    pub fn get(&self, name: &[u8]) -> Option<&FaiRecord> {
        self.id(name).map(|i| &self.records[i])
    }

    /// The `.fai` text, byte-identical to the file `samtools faidx FILE` writes: one line per
    /// record, `NAME\tLENGTH\tOFFSET\tLINEBASES\tLINEWIDTH` (then `\tQUALOFFSET` for FASTQ),
    /// each ending in `\n`.
    pub fn to_fai(&self) -> Vec<u8> {
        use std::io::Write;
        let mut out = Vec::with_capacity(self.records.len() * 40);
        for r in &self.records {
            out.extend_from_slice(&r.name);
            // Writing to a Vec cannot fail.
            let _ = write!(
                out,
                "\t{}\t{}\t{}\t{}",
                r.length, r.offset, r.line_bases, r.line_width
            );
            if self.format == SeqFormat::Fastq {
                let _ = write!(out, "\t{}", r.qual_offset.unwrap_or(0));
            }
            out.push(b'\n');
        }
        out
    }
}

/// A port of htslib 1.16 `fai_build_core`: one pass over the bytes, the same states, line
/// counting and acceptance decisions.
struct Builder<'a> {
    data: &'a [u8],
    pos: usize,
    format: Option<SeqFormat>,
    records: Vec<FaiRecord>,
    by_name: HashMap<Vec<u8>, usize>,
    warnings: Vec<IndexWarning>,
}

impl<'a> Builder<'a> {
    fn new(data: &'a [u8]) -> Self {
        Builder {
            data,
            pos: 0,
            format: None,
            records: Vec::new(),
            by_name: HashMap::new(),
            warnings: Vec::new(),
        }
    }

    #[inline]
    fn getc(&mut self) -> Option<u8> {
        let c = self.data.get(self.pos).copied();
        if c.is_some() {
            self.pos += 1;
        }
        c
    }

    /// Consumes up to and including the next `\n` (or to the end); returns the bytes before
    /// it.
    fn rest_of_line(&mut self) -> &'a [u8] {
        let data = self.data;
        let start = self.pos;
        match memchr::memchr(b'\n', &data[start..]) {
            Some(n) => {
                self.pos = start + n + 1;
                &data[start..start + n]
            }
            None => {
                self.pos = data.len();
                &data[start..]
            }
        }
    }

    /// Reads a data line whose first byte `c` was just consumed; returns samtools' `(ll, cl)`:
    /// bytes including one line end, and graphic bytes.
    fn data_line(&mut self) -> (u64, u64) {
        let start = self.pos - 1;
        let line_rest = self.rest_of_line();
        let line = &self.data[start..start + 1 + line_rest.len()];
        let cl = line.iter().filter(|&&b| is_graph(b)).count() as u64;
        (line.len() as u64 + 1, cl)
    }

    /// The run of FASTA sequence lines from the one whose first byte was just consumed, each
    /// `width` bytes: `width - 1` graphic bytes, the first not `>` (a header), and a `\n`.
    /// Consumes them and returns their number (0: the next line is not such a line, nothing
    /// consumed). Each is a line that [`Builder::data_line`] would read as
    /// `(width, width - 1)`: the common case of a wrapped sequence, checked a line at a time
    /// without the state machine.
    fn full_lines(&mut self, width: usize) -> u64 {
        let data = self.data;
        let mut start = self.pos - 1;
        let mut n = 0u64;
        while let Some(line) = data.get(start..start + width) {
            let (body, end) = line.split_at(width - 1);
            if end != b"\n" || body[0] == b'>' || !all_graph(body) {
                break;
            }
            start += width;
            n += 1;
        }
        if n > 0 {
            self.pos = start;
        }
        n
    }

    #[allow(clippy::too_many_arguments)]
    fn insert(
        &mut self,
        name: &[u8],
        len: u64,
        line_len: u64,
        char_len: u64,
        seq_offset: u64,
        qual_offset: u64,
        line: u64,
    ) -> Result<(), IndexError> {
        if self.by_name.contains_key(name) {
            self.warnings.push(IndexWarning::DuplicateName {
                name: name.to_vec(),
                offset: seq_offset,
            });
            return Ok(());
        }
        let line_width = u32::try_from(line_len).map_err(|_| IndexError::LineTooLong { line })?;
        let line_bases = u32::try_from(char_len).map_err(|_| IndexError::LineTooLong { line })?;
        self.by_name.insert(name.to_vec(), self.records.len());
        self.records.push(FaiRecord {
            name: name.to_vec(),
            length: len,
            offset: seq_offset,
            line_bases,
            line_width,
            qual_offset: (self.format == Some(SeqFormat::Fastq)).then_some(qual_offset),
        });
        Ok(())
    }

    fn run(mut self) -> Result<(FastaIndex, Vec<IndexWarning>), IndexError> {
        use IndexError as E;
        let mut name: Vec<u8> = Vec::new();
        let mut have_record = false;
        let mut header_line = 0u64;
        let mut read_done = false;
        let mut line_num = 1u64;
        let (mut seq_offset, mut qual_offset) = (0u64, 0u64);
        let (mut seq_len, mut qual_len) = (0u64, 0u64);
        let (mut char_len, mut line_len) = (0u64, 0u64);
        let mut state = State::OutRead;
        let mut next = self.getc();
        while let Some(mut c) = next {
            match state {
                State::OutRead => match c {
                    b'>' => {
                        if self.format == Some(SeqFormat::Fastq) {
                            return Err(E::FastaHeaderInFastq { line: line_num });
                        }
                        self.format = Some(SeqFormat::Fasta);
                        state = State::InName;
                    }
                    b'@' => {
                        if self.format == Some(SeqFormat::Fasta) {
                            return Err(E::FastqHeaderInFasta { line: line_num });
                        }
                        self.format = Some(SeqFormat::Fastq);
                        state = State::InName;
                    }
                    b'\r' => {
                        if self.getc() == Some(b'\n') {
                            line_num += 1;
                        } else {
                            return Err(E::CarriageReturn { line: line_num });
                        }
                    }
                    b'\n' => line_num += 1,
                    _ => {
                        return Err(E::UnexpectedByte {
                            byte: c,
                            line: line_num,
                        })
                    }
                },
                State::InName => {
                    if read_done {
                        self.insert(
                            &name,
                            seq_len,
                            line_len,
                            char_len,
                            seq_offset,
                            qual_offset,
                            header_line,
                        )?;
                        read_done = false;
                    } else if have_record {
                        self.warnings.push(IndexWarning::EmptySequenceSkipped {
                            name: name.clone(),
                            line: header_line,
                        });
                    }
                    have_record = true;
                    header_line = line_num;
                    name.clear();
                    let mut eof = false;
                    loop {
                        if !is_space(c) {
                            name.push(c);
                        } else if !name.is_empty() || c == b'\n' {
                            break;
                        }
                        match self.getc() {
                            Some(b) => c = b,
                            None => {
                                eof = true;
                                break;
                            }
                        }
                    }
                    if eof {
                        return Err(E::LastEntryNoSequence {
                            name,
                            line: line_num,
                        });
                    }
                    if c != b'\n' {
                        self.rest_of_line();
                    }
                    state = State::InSeq;
                    (seq_len, qual_len, char_len, line_len) = (0, 0, 0, 0);
                    seq_offset = self.pos as u64;
                    line_num += 1;
                }
                State::InSeq => {
                    if self.format == Some(SeqFormat::Fasta) {
                        if c == b'\n' {
                            state = State::OutRead;
                            line_num += 1;
                            next = self.getc();
                            continue;
                        } else if c == b'>' {
                            state = State::InName;
                            next = self.getc();
                            continue;
                        }
                    } else if c == b'+' {
                        state = State::InQual;
                        self.rest_of_line();
                        qual_offset = self.pos as u64;
                        line_num += 1;
                        next = self.getc();
                        continue;
                    } else if c == b'\n' {
                        return Err(E::EmptyLineInSequence {
                            name,
                            line: line_num,
                        });
                    }
                    if self.format == Some(SeqFormat::Fasta) {
                        read_done = true;
                        // lines of the first line's width, every byte but the `\n` a base:
                        // each leaves the state as it is and adds its bases
                        if line_len > 1 && char_len + 1 == line_len {
                            let n = self.full_lines(line_len as usize);
                            if n > 0 {
                                seq_len += n * char_len;
                                line_num += n;
                                next = self.getc();
                                continue;
                            }
                        }
                    }
                    let (ll, cl) = self.data_line();
                    seq_len += cl;
                    if line_len == 0 {
                        line_len = ll;
                        char_len = cl;
                    } else if line_len > ll {
                        state = if self.format == Some(SeqFormat::Fasta) {
                            State::OutRead
                        } else {
                            State::SeqEnd
                        };
                    } else if line_len < ll {
                        return Err(E::DifferentLineLength {
                            name,
                            line: line_num,
                        });
                    }
                    line_num += 1;
                }
                State::SeqEnd => {
                    if c == b'+' {
                        state = State::InQual;
                        self.rest_of_line();
                        qual_offset = self.pos as u64;
                        line_num += 1;
                    } else {
                        return Err(E::ExpectedPlus {
                            byte: c,
                            line: line_num,
                        });
                    }
                }
                State::InQual => {
                    if c == b'\n' {
                        if !read_done {
                            return Err(E::EmptyLineInQuality {
                                name,
                                line: line_num,
                            });
                        }
                        state = State::OutRead;
                        line_num += 1;
                        next = self.getc();
                        continue;
                    } else if c == b'@' && read_done {
                        state = State::InName;
                        next = self.getc();
                        continue;
                    }
                    let (ll, cl) = self.data_line();
                    qual_len += cl;
                    if line_len < ll {
                        return Err(E::QualityLineTooLong {
                            name,
                            line: line_num,
                        });
                    } else if qual_len == seq_len {
                        read_done = true;
                    } else if qual_len > seq_len {
                        return Err(E::QualityLongerThanSequence {
                            name,
                            line: line_num,
                        });
                    } else if line_len > ll {
                        return Err(E::QualityLineTooShort {
                            name,
                            line: line_num,
                        });
                    }
                    line_num += 1;
                }
            }
            next = self.getc();
        }
        if read_done {
            self.insert(
                &name,
                seq_len,
                line_len,
                char_len,
                seq_offset,
                qual_offset,
                header_line,
            )?;
        } else if have_record {
            return Err(E::LastRecordEmpty {
                name,
                line: line_num,
            });
        } else {
            return Err(E::NoRecords);
        }
        let format = self.format.unwrap_or(SeqFormat::Fasta);
        Ok((
            FastaIndex {
                format,
                records: self.records,
                by_name: self.by_name,
            },
            self.warnings,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::super::serial::IndexBytesError;
    use super::*;

    fn fai(data: &[u8]) -> String {
        String::from_utf8(FastaIndex::build(data).unwrap().to_fai()).unwrap()
    }

    // Expected `.fai` lines below were produced by samtools 1.16.1 on the same bytes.
    #[test]
    fn samtools_fai_lines() {
        assert_eq!(
            fai(b">a desc\nACGT\nAC\n>b\nACG\n"),
            "a\t6\t8\t4\t5\nb\t3\t19\t3\t4\n"
        );
        assert_eq!(fai(b">a\nACGT\nAC"), "a\t6\t3\t4\t5\n");
        assert_eq!(
            fai(b">a x\r\nACGT\r\nAC\r\n\r\n>b\r\nAAA\r\n"),
            "a\t6\t6\t4\t6\nb\t3\t22\t3\t5\n"
        );
        assert_eq!(
            fai(b">\nAC\n> \nGG\n>  c d\nT\n"),
            "\t2\t2\t2\t3\nc\t1\t18\t1\t2\n"
        );
        assert_eq!(fai(b">a\n \n>b\nAC\n"), "a\t0\t3\t0\t2\nb\t2\t8\t2\t3\n");
        assert_eq!(fai(b">a\n>b\nAC\n"), "b\t2\t6\t2\t3\n");
        assert_eq!(fai(b">a\nAC GT\nAC\n"), "a\t6\t3\t4\t6\n");
    }

    /// Runs of lines of the first line's width (`Builder::full_lines`) and the lines that
    /// break a run: a space or a `\r` inside a line (fewer bases), a `>` inside a line (a
    /// base), a header line of the run's width, a longer or a shorter line, a last line
    /// without its line feed, Windows line ends, a thousand full lines. Expected `.fai` lines
    /// and refusals from samtools 1.16.1 on the same bytes.
    #[test]
    fn runs_of_full_lines_index_as_samtools() {
        assert_eq!(fai(b">a\nACGT\nACGT\nAC T\nACGT\nA\n"), "a\t16\t3\t4\t5\n");
        assert_eq!(
            fai(b">a\nAC>T\nACGT\n>b\nGG\n"),
            "a\t8\t3\t4\t5\nb\t2\t16\t2\t3\n"
        );
        assert_eq!(fai(b">a\nACGT\nAC\rT\nACGT\n"), "a\t11\t3\t4\t5\n");
        assert_eq!(fai(b">a\nACGT\nACGT\nACGT"), "a\t12\t3\t4\t5\n");
        assert_eq!(
            fai(b">a\nACGT\nACGT\n>bb\nAC\n"),
            "a\t8\t3\t4\t5\nbb\t2\t17\t2\t3\n"
        );
        assert_eq!(
            fai(b">a\nACGT\r\nACGT\r\nAC\r\n>b\nNNNN\nnn\n"),
            "a\t10\t3\t4\t6\nb\t6\t22\t4\t5\n"
        );
        let mut big = b">x long\n".to_vec();
        big.extend_from_slice(&b"ACGTACGTAC\n".repeat(1000));
        big.extend_from_slice(b"ACG\n>y\n");
        big.extend_from_slice(&b"acgtnNNNNN\n".repeat(3));
        big.push(b'A');
        assert_eq!(fai(&big), "x\t10003\t8\t10\t11\ny\t31\t11015\t10\t11\n");
        // lines over 64 bytes, a space in the second one's second 64
        let mut wide = b">w\n".to_vec();
        wide.extend_from_slice(&[b'A'; 100]);
        wide.push(b'\n');
        wide.extend_from_slice(&[b'C'; 70]);
        wide.push(b' ');
        wide.extend_from_slice(&[b'C'; 29]);
        wide.push(b'\n');
        wide.extend_from_slice(&[b'G'; 100]);
        wide.extend_from_slice(b"\nTTTTT\n");
        assert_eq!(fai(&wide), "w\t304\t3\t100\t101\n");
        assert_eq!(
            FastaIndex::build(b">a\nACGT\nACGT\nACGTA\n").unwrap_err(),
            IndexError::DifferentLineLength {
                name: b"a".to_vec(),
                line: 4
            }
        );
        assert_eq!(
            FastaIndex::build(b">a\nACGT\nACGT\nAC\nACGT\n").unwrap_err(),
            IndexError::UnexpectedByte {
                byte: b'A',
                line: 5
            }
        );
    }

    #[test]
    fn refusals_name_the_line() {
        let e = |d: &[u8]| FastaIndex::build(d).unwrap_err();
        assert_eq!(
            e(b">a\nACGT\nAC\nACGT\n"),
            IndexError::UnexpectedByte {
                byte: b'A',
                line: 4
            }
        );
        assert_eq!(
            e(b">a\nAC\nACGT\n"),
            IndexError::DifferentLineLength {
                name: b"a".to_vec(),
                line: 3
            }
        );
        assert_eq!(e(b""), IndexError::NoRecords);
        assert_eq!(e(b"\n\n"), IndexError::NoRecords);
        assert_eq!(
            e(b"x\n>a\nAC\n"),
            IndexError::UnexpectedByte {
                byte: b'x',
                line: 1
            }
        );
        assert!(matches!(
            e(b">a\nAC\n>b"),
            IndexError::LastEntryNoSequence { .. }
        ));
        assert!(matches!(
            e(b">a\nAC\n>b\n"),
            IndexError::LastRecordEmpty { .. }
        ));
        assert_eq!(
            e(b">a\nAC\n\n\rx\n"),
            IndexError::CarriageReturn { line: 4 }
        );
    }

    #[test]
    fn duplicate_warns_and_keeps_first() {
        let (idx, w) = FastaIndex::build_with_warnings(b">a\nAC\n>a\nGG\n>b\nT\n").unwrap();
        assert_eq!(idx.to_fai(), b"a\t2\t3\t2\t3\nb\t1\t15\t1\t2\n");
        assert_eq!(
            w,
            vec![IndexWarning::DuplicateName {
                name: b"a".to_vec(),
                offset: 9
            }]
        );
    }

    #[test]
    fn fastq_fields() {
        let idx = FastaIndex::build(b"@r1\nACGT\n+\nIIII\n@r2 x\nAC\n+r2\nII\n").unwrap();
        assert_eq!(idx.format(), SeqFormat::Fastq);
        assert_eq!(idx.to_fai(), b"r1\t4\t4\t4\t5\t11\nr2\t2\t22\t2\t3\t29\n");
    }

    #[test]
    fn bytes_round_trip_and_validation() {
        let idx = FastaIndex::build(b">a desc\nACGT\nAC\n>b\nACG\n>c\n \n>d\nA\n").unwrap();
        let bytes = idx.to_bytes();
        assert_eq!(&bytes[..6], b"FAI\x01\x00\x00");
        assert_eq!(FastaIndex::from_bytes(&bytes).unwrap(), idx);
        for cut in 0..bytes.len() {
            assert!(
                FastaIndex::from_bytes(&bytes[..cut]).is_err(),
                "prefix {cut}"
            );
        }
        let mut long = bytes.clone();
        long.push(0);
        assert_eq!(
            FastaIndex::from_bytes(&long),
            Err(IndexBytesError::TrailingBytes(1))
        );
        let mut bad = bytes.clone();
        bad[5] = 1;
        assert!(FastaIndex::from_bytes(&bad).is_err());
        let q = FastaIndex::build(b"@r1\nACGT\n+\nIIII\n").unwrap();
        assert_eq!(FastaIndex::from_bytes(&q.to_bytes()).unwrap(), q);
    }
}
