//! The FASTA index record of an archive (FORMAT.md §3.4, §3.5: extension type 1): when
//! [`crate::compress`] attaches it, how it is attached, and how a [`crate::Reader`] reads it;
//! and beside it the sequence checksums record (FORMAT.md §3.6: extension type 2).

use crate::device::format::{EXTENSION_TYPE_FASTA_INDEX, EXTENSION_TYPE_SEQUENCE_CHECKSUMS};
use crate::error::{Error, FormatError};
use crate::fasta::checksums::{self, sequence_digests, SequenceDigests};
use crate::fasta::{FastaIndex, SeqFormat};
use crate::format::{self as archive, Archive, Extension};

/// The largest index payload [`crate::compress`] attaches by itself, as a share of the input:
/// one byte of index per this many input bytes (a floor of [`AUTO_INDEX_MIN_BYTES`] lets small
/// files keep theirs). A genome's index is tens of bytes a chromosome and always fits; a
/// protein or read file of many short records has an index of a sizeable part of the archive,
/// which costs ratio that the caller did not ask to spend ([`with_fasta_index`] attaches it
/// anyway).
pub const AUTO_INDEX_SHARE: usize = 1024;

/// The index payload size [`crate::compress`] always accepts, whatever the input's size.
pub const AUTO_INDEX_MIN_BYTES: usize = 4096;

/// The FASTA index [`crate::compress`] attaches to the archive of `input`, if any: `input`
/// must be FASTA (its first byte after blank lines is `>`) that `samtools faidx` indexes
/// ([`FastaIndex::build`]), and the index's byte form must be at most
/// `max(input.len() / AUTO_INDEX_SHARE, AUTO_INDEX_MIN_BYTES)` bytes. FASTQ and other inputs
/// give `None` after looking at their first bytes only; FASTA costs a count of its `>` bytes
/// and, where that leaves the index small enough, one indexing pass.
pub fn auto_fasta_index(input: &[u8]) -> Option<FastaIndex> {
    let first = input.iter().find(|&&b| b != b'\n' && b != b'\r')?;
    if *first != b'>' {
        return None;
    }
    let limit = (input.len() / AUTO_INDEX_SHARE).max(AUTO_INDEX_MIN_BYTES);
    // every record costs at least 5 bytes of index: a file of many short records (proteins)
    // is refused from a count of its `>` bytes, before the slower indexing pass
    let mut markers = 0usize;
    for chunk in input.chunks(1 << 16) {
        markers += memchr::memchr_iter(b'>', chunk).count();
        if markers.saturating_mul(5) > limit {
            return None;
        }
    }
    let index = FastaIndex::build(input).ok()?;
    if index.format() != SeqFormat::Fasta {
        return None;
    }
    // the byte form is about the names plus a few varints a record: estimate before writing
    let estimate: usize = index.records().iter().map(|r| r.name.len() + 4).sum();
    (estimate <= limit && index.to_bytes().len() <= limit).then_some(index)
}

/// The archive `archive` with `index` attached as its FASTA index record (FORMAT.md §3.5,
/// type 1, must-understand flag clear: readers that do not know the type still restore the
/// data). The other sections are kept byte for byte; only the meta checksum changes.
///
/// `index` should be [`FastaIndex::build`] of the archive's original data: a [`crate::Reader`]
/// checks the record's layout and that its offsets lie inside the original data, not that it
/// describes that data.
///
/// Errors: [`Error::Format`] when `archive` does not parse or already carries a FASTA index
/// record, or the index's byte form is over `u32::MAX` bytes.
pub fn with_fasta_index(archive: &[u8], index: &FastaIndex) -> Result<Vec<u8>, Error> {
    let parsed = Archive::parse(archive)?;
    if let Some(offset) = fasta_record_offsets(&parsed).first() {
        return Err(Error::Format(FormatError::Extension {
            offset: *offset,
            why: "the archive already carries a FASTA index record (type 1)".into(),
        }));
    }
    let payload = index.to_bytes();
    Ok(archive::with_extensions(
        archive,
        &[Extension {
            kind: EXTENSION_TYPE_FASTA_INDEX,
            flags: 0,
            payload: &payload,
        }],
    )?)
}

/// Byte offsets inside the extension area of the archive's type-1 records.
fn fasta_record_offsets(a: &Archive<'_>) -> Vec<u64> {
    record_offsets(a, EXTENSION_TYPE_FASTA_INDEX)
}

/// The FASTA index record of a parsed archive, checked (FORMAT.md §3.5, type 1): at most one
/// such record, its payload in the layout of [`crate::fasta::serial`], every sequence's last
/// base (and quality) inside the original data (FORMAT.md §3.5: OFFSET + (LENGTH - 1) /
/// LINEBASES * LINEWIDTH + (LENGTH - 1) % LINEBASES below `original_size`).
///
/// Errors: [`FormatError::Extension`] naming the record's offset in the extension area.
pub fn read_fasta_index(a: &Archive<'_>) -> Result<Option<FastaIndex>, FormatError> {
    let offsets = fasta_record_offsets(a);
    let Some(&offset) = offsets.first() else {
        return Ok(None);
    };
    let err = |why: String| FormatError::Extension { offset, why };
    if offsets.len() > 1 {
        return Err(FormatError::Extension {
            offset: offsets[1],
            why: "a second FASTA index record (type 1); an archive carries at most one".into(),
        });
    }
    let payload = a
        .extensions()
        .find(|e| e.kind == EXTENSION_TYPE_FASTA_INDEX)
        .map(|e| e.payload)
        .unwrap_or_default();
    let index =
        FastaIndex::from_bytes(payload).map_err(|e| err(format!("FASTA index record: {e}")))?;
    let size = a.header().original_size;
    for (i, r) in index.records().iter().enumerate() {
        // the last base (and quality) must lie inside the data, which also bounds LENGTH
        let starts = [Some(r.offset), r.qual_offset];
        for start in starts.into_iter().flatten() {
            let last = match (r.length, r.line_bases) {
                (0, _) => Some(start),
                (n, 0) => (n <= size).then_some(start),
                (n, lb) => {
                    let (lb, lw) = (u64::from(lb), u64::from(r.line_width));
                    ((n - 1) / lb)
                        .checked_mul(lw)
                        .and_then(|x| x.checked_add((n - 1) % lb))
                        .and_then(|x| x.checked_add(start))
                }
            };
            if !last.is_some_and(|l| l <= size && (r.length == 0 || l < size)) {
                return Err(err(format!(
                    "FASTA index record: sequence {i} ({} bases from byte {start}) ends past \
                     the original data ({size} bytes)",
                    r.length
                )));
            }
        }
    }
    Ok(Some(index))
}

/// The records [`crate::compress`] attaches to the archive of `input`: its FASTA index
/// ([`auto_fasta_index`]) and, beside it, the refget checksums of its sequences
/// ([`sequence_digests`], computed in parallel) when their byte form fits the same size
/// budget as the index (FORMAT.md §3.6, informative).
pub(crate) fn auto_fasta_records(
    input: &[u8],
) -> Option<(FastaIndex, Option<Vec<SequenceDigests>>)> {
    let index = auto_fasta_index(input)?;
    let limit = (input.len() / AUTO_INDEX_SHARE).max(AUTO_INDEX_MIN_BYTES);
    let fits = index
        .len()
        .checked_mul(48)
        .and_then(|n| n.checked_add(8))
        .is_some_and(|n| n <= limit);
    let digests = fits.then(|| sequence_digests(&index, input).ok()).flatten();
    Some((index, digests))
}

/// The archive `archive` (without FASTA records) with `index` attached as its type-1 record
/// and, when given, `digests` as its type-2 record, in one pass (FORMAT.md §3.5, §3.6).
pub(crate) fn with_fasta_records(
    archive: &[u8],
    index: &FastaIndex,
    digests: Option<&[SequenceDigests]>,
) -> Result<Vec<u8>, Error> {
    let Some(digests) = digests else {
        return with_fasta_index(archive, index);
    };
    let index_payload = index.to_bytes();
    let digest_payload = checksums_payload(index, digests)?;
    Ok(archive::with_extensions(
        archive,
        &[
            Extension {
                kind: EXTENSION_TYPE_FASTA_INDEX,
                flags: 0,
                payload: &index_payload,
            },
            Extension {
                kind: EXTENSION_TYPE_SEQUENCE_CHECKSUMS,
                flags: 0,
                payload: &digest_payload,
            },
        ],
    )?)
}

/// The type-2 payload of `digests` for `index`, checked against it (FORMAT.md §3.6).
fn checksums_payload(index: &FastaIndex, digests: &[SequenceDigests]) -> Result<Vec<u8>, Error> {
    let err = |why: String| Error::Format(FormatError::Extension { offset: 0, why });
    if index.format() != SeqFormat::Fasta || digests.len() != index.len() {
        return Err(err(format!(
            "{} sequence checksums for a {:?} index of {} sequences",
            digests.len(),
            index.format(),
            index.len()
        )));
    }
    if let Some(i) = (0..digests.len()).find(|&i| digests[i].length > index.records()[i].length) {
        return Err(err(format!(
            "sequence {i}: checksums of {} letters, more than its {} bases",
            digests[i].length,
            index.records()[i].length
        )));
    }
    checksums::to_bytes(digests).ok_or_else(|| err("over 2^32 - 1 sequences".into()))
}

/// The archive `archive`, which carries a FASTA index record of FASTA data, with `digests`
/// ([`sequence_digests`] of its original data, one a sequence in index order) attached as its
/// sequence checksums record (FORMAT.md §3.6, type 2, must-understand flag clear). The other
/// sections are kept byte for byte; only the meta checksum changes.
///
/// Errors: [`Error::Format`] when `archive` does not parse, has no valid FASTA index record
/// of FASTA, already carries a type-2 record, or `digests` does not match the index (count,
/// a length over the sequence's LENGTH).
pub fn with_sequence_checksums(
    archive: &[u8],
    digests: &[SequenceDigests],
) -> Result<Vec<u8>, Error> {
    let parsed = Archive::parse(archive)?;
    if let Some(offset) = record_offsets(&parsed, EXTENSION_TYPE_SEQUENCE_CHECKSUMS).first() {
        return Err(Error::Format(FormatError::Extension {
            offset: *offset,
            why: "the archive already carries a sequence checksums record (type 2)".into(),
        }));
    }
    let index = read_fasta_index(&parsed)?.ok_or_else(|| {
        Error::Format(FormatError::Extension {
            offset: 0,
            why: "sequence checksums need a FASTA index record (type 1)".into(),
        })
    })?;
    let payload = checksums_payload(&index, digests)?;
    Ok(archive::with_extensions(
        archive,
        &[Extension {
            kind: EXTENSION_TYPE_SEQUENCE_CHECKSUMS,
            flags: 0,
            payload: &payload,
        }],
    )?)
}

/// Byte offsets inside the extension area of the archive's records of type `kind`.
fn record_offsets(a: &Archive<'_>, kind: u16) -> Vec<u64> {
    let mut offsets = Vec::new();
    let mut pos = 0u64;
    for e in a.extensions() {
        if e.kind == kind {
            offsets.push(pos);
        }
        pos += (crate::device::format::EXTENSION_HEADER_BYTES + e.payload.len()) as u64;
    }
    offsets
}

/// The sequence checksums record of a parsed archive, checked (FORMAT.md §3.6, type 2): at
/// most one such record; a valid FASTA index record of FASTA beside it (§3.5); its payload
/// in the layout of [`crate::fasta::checksums::to_bytes`], one entry per indexed sequence,
/// each length at most that sequence's LENGTH.
///
/// Errors: [`FormatError::Extension`] naming the record's offset in the extension area.
pub fn read_sequence_checksums(
    a: &Archive<'_>,
) -> Result<Option<Vec<SequenceDigests>>, FormatError> {
    let offsets = record_offsets(a, EXTENSION_TYPE_SEQUENCE_CHECKSUMS);
    let Some(&offset) = offsets.first() else {
        return Ok(None);
    };
    let err = |why: String| FormatError::Extension { offset, why };
    if offsets.len() > 1 {
        return Err(FormatError::Extension {
            offset: offsets[1],
            why: "a second sequence checksums record (type 2); an archive carries at most one"
                .into(),
        });
    }
    let payload = a
        .extensions()
        .find(|e| e.kind == EXTENSION_TYPE_SEQUENCE_CHECKSUMS)
        .map(|e| e.payload)
        .unwrap_or_default();
    let digests = checksums::from_bytes(payload).map_err(|e| err(e.to_string()))?;
    let index = read_fasta_index(a)?.ok_or_else(|| {
        err("a sequence checksums record (type 2) without a FASTA index record (type 1)".into())
    })?;
    if index.format() != SeqFormat::Fasta {
        return Err(err(
            "a sequence checksums record (type 2) beside a FASTQ index".into(),
        ));
    }
    if digests.len() != index.len() {
        return Err(err(format!(
            "sequence checksums record: {} entries for {} indexed sequences",
            digests.len(),
            index.len()
        )));
    }
    for (i, (d, r)) in digests.iter().zip(index.records()).enumerate() {
        if d.length > r.length {
            return Err(err(format!(
                "sequence checksums record: sequence {i} has {} letters, more than its {} bases",
                d.length, r.length
            )));
        }
    }
    Ok(Some(digests))
}

/// The refget checksums of the sequences of `reader`'s FASTA data, one a sequence in the
/// order of [`crate::Reader::fasta_index`], read from the archive's sequence checksums
/// record (FORMAT.md §3.6, type 2); `None` when the archive has none (not FASTA, made by a
/// version without the record, or too many sequences: see [`crate::compress`]).
///
/// Errors: [`Error::Format`] when the record breaks a rule of FORMAT.md §3.6.
pub fn sequence_checksums(
    reader: &crate::Reader<'_>,
) -> Result<Option<Vec<SequenceDigests>>, Error> {
    Ok(read_sequence_checksums(reader.archive())?)
}
