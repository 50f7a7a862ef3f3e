//! The compact byte form of a [`FastaIndex`], for storage in an archive's extension area.
//!
//! # Layout ([`FastaIndex::to_bytes`], [`FastaIndex::from_bytes`])
//! All integers are unsigned LEB128 varints (7 bits a byte, least significant group first, at
//! most 10 bytes, the last byte non-zero unless the value is 0: one encoding per value).
//!
//! ```text
//! magic     4 bytes  "FAI\x01" (format version 1 of this layout)
//! kind      1 byte   0 = FASTA, 1 = FASTQ
//! reserved  1 byte   0 (a reader refuses anything else)
//! count     varint   number of records
//! count times:
//!   name_len    varint   bytes of the name (at most 65,536)
//!   name        name_len bytes, no whitespace byte, unique within the index
//!   length      varint   LENGTH, bases
//!   offset_gap  varint   OFFSET minus the previous record's OFFSET (the first: minus 0);
//!                        non-zero after the first record, so offsets strictly increase
//!   line_bases  varint   LINEBASES, at most 2^32-1 (0 is possible: samtools indexes a
//!                        sequence whose first line is blank, such as ` ` or `\r`)
//!   line_width  varint   LINEWIDTH, at most 2^32-1, greater than line_bases
//!   qual_gap    varint   FASTQ only: QUALOFFSET minus OFFSET, non-zero
//! ```
//! Nothing follows the last record. The layout carries no checksum: the container that stores
//! it checks its bytes.

use std::collections::HashMap;

use thiserror::Error;

use super::index::{is_space, FaiRecord, FastaIndex, SeqFormat};

/// Why bytes are not a valid serialised index ([`FastaIndex::from_bytes`]).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum IndexBytesError {
    /// The bytes end before the field named.
    #[error("serialised FASTA index truncated in {0}")]
    Truncated(&'static str),
    /// The magic or layout version is not `FAI\x01`.
    #[error("not a serialised FASTA index (bad magic or unknown layout version)")]
    BadMagic,
    /// A field holds a value the layout forbids.
    #[error("serialised FASTA index: invalid {field} in record {record}")]
    Invalid { field: &'static str, record: u64 },
    /// A varint is longer than 10 bytes, overflows 64 bits, or is not in its one encoding.
    #[error("serialised FASTA index: malformed varint in {0}")]
    BadVarint(&'static str),
    /// Bytes follow the last record.
    #[error("serialised FASTA index: {0} bytes after the last record")]
    TrailingBytes(usize),
}

impl FastaIndex {
    /// The compact byte form described in the module documentation of [`super::serial`].
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(8 + self.records.len() * 24);
        out.extend_from_slice(MAGIC);
        out.push(match self.format {
            SeqFormat::Fasta => 0,
            SeqFormat::Fastq => 1,
        });
        out.push(0);
        put_varint(&mut out, self.records.len() as u64);
        let mut prev = 0u64;
        for r in &self.records {
            put_varint(&mut out, r.name.len() as u64);
            out.extend_from_slice(&r.name);
            put_varint(&mut out, r.length);
            put_varint(&mut out, r.offset - prev);
            prev = r.offset;
            put_varint(&mut out, u64::from(r.line_bases));
            put_varint(&mut out, u64::from(r.line_width));
            if self.format == SeqFormat::Fastq {
                put_varint(&mut out, r.qual_offset.unwrap_or(r.offset) - r.offset);
            }
        }
        out
    }

    /// Decodes and validates the byte form written by [`FastaIndex::to_bytes`].
    ///
    /// # Errors
    /// [`IndexBytesError`] for truncated input, a bad magic, a malformed varint, a field out
    /// of its range (see the module documentation), a duplicate name, or trailing bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, IndexBytesError> {
        let mut r = Reader { bytes, pos: 0 };
        if r.take(4, "magic")? != MAGIC {
            return Err(IndexBytesError::BadMagic);
        }
        let format = match r.take(1, "kind")?[0] {
            0 => SeqFormat::Fasta,
            1 => SeqFormat::Fastq,
            _ => return Err(invalid("kind", 0)),
        };
        if r.take(1, "reserved")?[0] != 0 {
            return Err(invalid("reserved byte", 0));
        }
        let count = r.varint("count")?;
        // Each record needs at least 5 bytes: refuse counts the input cannot hold.
        if count > (bytes.len() - r.pos) as u64 / 5 {
            return Err(invalid("count", 0));
        }
        let mut records = Vec::with_capacity(count as usize);
        let mut by_name = HashMap::with_capacity(count as usize);
        let mut prev = 0u64;
        for i in 0..count {
            let name_len = r.varint("name length")?;
            if name_len > MAX_NAME {
                return Err(invalid("name length", i));
            }
            let name = r.take(name_len as usize, "name")?.to_vec();
            if name.iter().any(|&b| is_space(b)) {
                return Err(invalid("name (whitespace)", i));
            }
            let length = r.varint("length")?;
            let gap = r.varint("offset")?;
            if i > 0 && gap == 0 {
                return Err(invalid("offset (not increasing)", i));
            }
            let offset = prev.checked_add(gap).ok_or(invalid("offset", i))?;
            prev = offset;
            let line_bases =
                u32::try_from(r.varint("line bases")?).map_err(|_| invalid("line bases", i))?;
            let line_width =
                u32::try_from(r.varint("line width")?).map_err(|_| invalid("line width", i))?;
            if line_width <= line_bases {
                return Err(invalid("line bases or width", i));
            }
            let qual_offset = match format {
                SeqFormat::Fasta => None,
                SeqFormat::Fastq => {
                    let g = r.varint("quality offset")?;
                    if g == 0 {
                        return Err(invalid("quality offset", i));
                    }
                    Some(offset.checked_add(g).ok_or(invalid("quality offset", i))?)
                }
            };
            if by_name.insert(name.clone(), records.len()).is_some() {
                return Err(invalid("name (duplicate)", i));
            }
            records.push(FaiRecord {
                name,
                length,
                offset,
                line_bases,
                line_width,
                qual_offset,
            });
        }
        if r.pos != bytes.len() {
            return Err(IndexBytesError::TrailingBytes(bytes.len() - r.pos));
        }
        Ok(FastaIndex {
            format,
            records,
            by_name,
        })
    }
}

const MAGIC: &[u8; 4] = b"FAI\x01";
/// The longest name the byte form accepts.
const MAX_NAME: u64 = 65_536;

fn invalid(field: &'static str, record: u64) -> IndexBytesError {
    IndexBytesError::Invalid { field, record }
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], IndexBytesError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or(IndexBytesError::Truncated(what))?;
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn varint(&mut self, what: &'static str) -> Result<u64, IndexBytesError> {
        let mut v = 0u64;
        for i in 0..10 {
            let b = self.take(1, what)?[0];
            let bits = u64::from(b & 0x7f);
            if i == 9 && b > 1 {
                return Err(IndexBytesError::BadVarint(what));
            }
            v |= bits << (7 * i);
            if b & 0x80 == 0 {
                if i > 0 && b == 0 {
                    return Err(IndexBytesError::BadVarint(what));
                }
                return Ok(v);
            }
        }
        Err(IndexBytesError::BadVarint(what))
    }
}
