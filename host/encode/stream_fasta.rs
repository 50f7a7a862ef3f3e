//! The FASTA records of a streamed input ([`super::stream`]): the index (FORMAT.md §3.5)
//! and refget checksums (§3.6) that [`crate::compress`] attaches
//! (`crate::fasta_record::auto_fasta_records`), built line by line as the input passes.
//!
//! The index of a whole input comes from a port of samtools' indexing automaton
//! (`crate::fasta::index`); here a stream is indexed only where it is plain FASTA, on which
//! that automaton's result is simple: every line ends in `\n`; the first byte is `>`; each
//! header line `>` then the name (its first run of non-space bytes) and anything; each
//! record has sequence lines of graphic bytes only, all as long as its first but the last,
//! which may be shorter (the last line of the input may lack its `\n`, as samtools
//! allows). Anything else (carriage returns, blank lines, spaces in sequence, a record
//! without sequence, a line longer than the first) makes the
//! stream [`FastaStream::abandoned`]: no records, said to the caller, rather than records
//! that might differ from samtools'. An input whose first byte is neither `>` nor a line
//! end is not FASTA, as [`crate::auto_fasta_index`] decides.

use crate::fasta::checksums::{Digester, SequenceDigests};
use crate::fasta::{FaiRecord, FastaIndex};
use crate::fasta_record::{AUTO_INDEX_MIN_BYTES, AUTO_INDEX_SHARE};
use std::collections::HashSet;

/// The FASTA index and, where they fit the budget, the sequence checksums of an input.
pub(super) type Records = Option<(FastaIndex, Option<Vec<SequenceDigests>>)>;

/// Longest line kept across a batch boundary; a longer one abandons the index.
const MAX_LINE: usize = 1 << 20;

/// Where the indexer is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    /// Before the first byte.
    Start,
    /// Indexing plain FASTA.
    Fasta,
    /// Not FASTA (first byte neither `>` nor a line end): no records, as `compress`.
    NotFasta,
    /// FASTA outside the plain form: no records, unlike `compress`.
    Abandoned,
}

/// The record being read.
struct Open {
    record: FaiRecord,
    /// Sequence lines so far.
    lines: u64,
    /// A line shorter than the first was seen: only a header may follow.
    short: bool,
    digest: Digester,
}

/// The FASTA index and refget checksums of a stream, built batch by batch.
pub(super) struct FastaStream {
    state: State,
    /// Input bytes so far (the offset of `carry`'s first byte plus its length).
    pos: u64,
    /// The unfinished last line of the previous batch.
    carry: Vec<u8>,
    records: Vec<FaiRecord>,
    digests: Vec<SequenceDigests>,
    names: HashSet<Vec<u8>>,
    open: Option<Open>,
    /// `>` bytes so far (a protein file of many short records is refused from their count,
    /// as `auto_fasta_index` does).
    markers: u64,
    /// Whether the input's first non-line-end byte is `>`.
    looks_fasta: bool,
}

impl FastaStream {
    pub(super) fn new() -> FastaStream {
        FastaStream {
            state: State::Start,
            pos: 0,
            carry: Vec::new(),
            records: Vec::new(),
            digests: Vec::new(),
            names: HashSet::new(),
            open: None,
            markers: 0,
            looks_fasta: false,
        }
    }

    fn abandon(&mut self) {
        self.state = State::Abandoned;
        self.records = Vec::new();
        self.digests = Vec::new();
        self.names = HashSet::new();
        self.open = None;
        self.carry = Vec::new();
    }

    /// Takes the next bytes of the input.
    pub(super) fn update(&mut self, batch: &[u8]) {
        if batch.is_empty() {
            return;
        }
        if self.state == State::Start {
            let first = batch.iter().find(|&&b| b != b'\n' && b != b'\r');
            self.looks_fasta = first == Some(&b'>');
            self.state = match batch[0] {
                b'>' => State::Fasta,
                b'\n' | b'\r' => State::Abandoned,
                _ => State::NotFasta,
            };
        }
        if self.state != State::Fasta {
            return;
        }
        self.markers += memchr::memchr_iter(b'>', batch).count() as u64;
        let mut rest = batch;
        if !self.carry.is_empty() {
            match memchr::memchr(b'\n', rest) {
                Some(n) => {
                    let mut line = std::mem::take(&mut self.carry);
                    line.extend_from_slice(&rest[..n]);
                    let at = self.pos - (line.len() - n) as u64;
                    if self.line(&line, at) {
                        self.digest(&line);
                    }
                    self.pos += n as u64 + 1;
                    rest = &rest[n + 1..];
                }
                None => {
                    self.carry.extend_from_slice(rest);
                    self.pos += rest.len() as u64;
                    if self.carry.len() > MAX_LINE {
                        self.abandon();
                    }
                    return;
                }
            }
        }
        // the open record's sequence lines in this batch so far, hashed in one piece (their
        // line ends fall out of the canonical form)
        let mut span: Option<(usize, usize)> = None;
        let mut start = 0;
        for end in memchr::memchr_iter(b'\n', rest) {
            if self.state != State::Fasta {
                return;
            }
            let line = &rest[start..end];
            if line.first() == Some(&b'>') {
                if let Some((a, b)) = span.take() {
                    self.digest(&rest[a..b]);
                }
            }
            if self.line(line, self.pos + start as u64) {
                span = Some((span.map_or(start, |(a, _)| a), end));
            }
            start = end + 1;
        }
        if let Some((a, b)) = span {
            self.digest(&rest[a..b]);
        }
        self.pos += rest.len() as u64;
        if self.state == State::Fasta && start < rest.len() {
            if rest.len() - start > MAX_LINE {
                return self.abandon();
            }
            self.carry.extend_from_slice(&rest[start..]);
        }
    }

    /// Adds `bytes` (sequence lines of the open record) to its checksums.
    fn digest(&mut self, bytes: &[u8]) {
        if let Some(open) = self.open.as_mut() {
            open.digest.update(bytes);
        }
    }

    /// One line (without its `\n`) that starts at byte `at` of the input; returns whether it
    /// is a sequence line of the open record, whose bytes the caller adds to its checksums
    /// ([`FastaStream::digest`]).
    fn line(&mut self, line: &[u8], at: u64) -> bool {
        if line.first() == Some(&b'>') {
            self.close();
            if self.state != State::Fasta {
                return false;
            }
            let name = line[1..]
                .split(|&b| matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r'))
                .find(|w| !w.is_empty())
                .unwrap_or_default();
            self.open = Some(Open {
                record: FaiRecord {
                    name: name.to_vec(),
                    length: 0,
                    offset: at + line.len() as u64 + 1,
                    line_bases: 0,
                    line_width: 0,
                    qual_offset: None,
                },
                lines: 0,
                short: false,
                digest: Digester::new(),
            });
            return false;
        }
        let plain = !line.is_empty()
            && line.iter().all(|&b| (0x21..=0x7e).contains(&b))
            && line.len() < u32::MAX as usize;
        let Some(open) = self.open.as_mut().filter(|o| plain && !o.short) else {
            self.abandon();
            return false;
        };
        let n = line.len() as u64;
        if open.lines == 0 {
            open.record.line_bases = n as u32;
            open.record.line_width = n as u32 + 1;
        } else if n > u64::from(open.record.line_bases) {
            self.abandon();
            return false;
        } else if n < u64::from(open.record.line_bases) {
            open.short = true;
        }
        open.lines += 1;
        open.record.length += n;
        true
    }

    /// Ends the open record: kept unless its name was seen (samtools keeps the first); a
    /// record without sequence abandons the index.
    fn close(&mut self) {
        let Some(open) = self.open.take() else {
            return;
        };
        if open.lines == 0 {
            return self.abandon();
        }
        if self.names.insert(open.record.name.clone()) {
            self.records.push(open.record);
            self.digests.push(open.digest.finish());
        }
    }

    /// The records `compress` attaches to an input of `len` bytes (`None`: none, as for a
    /// non-FASTA input or one whose index is over the size budget, or abandoned), and
    /// whether the input looks like FASTA but its records were abandoned.
    pub(super) fn finish(mut self, len: u64) -> (Records, bool) {
        let records = self.records_for(len);
        let abandoned = self.state == State::Abandoned && self.looks_fasta;
        (records, abandoned)
    }

    fn records_for(&mut self, len: u64) -> Records {
        if self.state != State::Fasta {
            return None;
        }
        if !self.carry.is_empty() {
            // a last line without its line end counts as one with it (samtools' `ll`)
            let line = std::mem::take(&mut self.carry);
            if self.line(&line, self.pos - line.len() as u64) {
                self.digest(&line);
            }
        }
        self.close();
        if self.state != State::Fasta || self.records.is_empty() {
            self.abandon();
            return None;
        }
        let limit = (len / AUTO_INDEX_SHARE as u64).max(AUTO_INDEX_MIN_BYTES as u64);
        if self.markers.saturating_mul(5) > limit {
            return None;
        }
        let estimate: u64 = self.records.iter().map(|r| r.name.len() as u64 + 4).sum();
        if estimate > limit {
            return None;
        }
        let index = FastaIndex::from_fasta_records(std::mem::take(&mut self.records));
        if index.to_bytes().len() as u64 > limit {
            return None;
        }
        let fits = (index.len() as u64)
            .checked_mul(48)
            .and_then(|n| n.checked_add(8))
            .is_some_and(|n| n <= limit);
        Some((index, fits.then(|| std::mem::take(&mut self.digests))))
    }
}
