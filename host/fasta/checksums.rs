//! Sequence checksums as GA4GH refget defines them: the MD5 and the truncated SHA-512
//! (`TRUNC512`, `sha512t24u`, the `SQ.` identifier) of each sequence's canonical form, and
//! their byte form for storage in an archive (FORMAT.md §3.6).
//!
//! The canonical form of a sequence (refget, "Checksum calculation") is its bases with every
//! byte that is not an ASCII letter removed (line ends, whitespace, `*`, `-`, ...) and the
//! lowercase letters made uppercase. So the bytes of a FASTA file from a sequence's first
//! base to its last, line ends included, give the same digests as the bases alone.
//!
//! ```
//! use aceapex::fasta::checksums::Digester;
//!
//! // the canonical form of "acgt\nNN\n" is "ACGTNN"
//! let mut d = Digester::new();
//! d.update(b"acgt\n");
//! d.update(b"NN\n");
//! let digests = d.finish();
//! assert_eq!(digests.length, 6);
//! // `printf ACGTNN | md5sum`
//! assert_eq!(digests.md5_hex(), "247326f3ddab5b675f000e844a6dde4b");
//! ```

use super::index::{FastaIndex, SeqFormat};
use base64::Engine;
use md5::{Digest, Md5};
use rayon::prelude::*;
use sha2::Sha512;
use thiserror::Error;

/// The digests of one sequence's canonical form (refget).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SequenceDigests {
    /// Letters in the canonical form: the sequence's LENGTH (FORMAT.md §3.5) less its bases
    /// that are not ASCII letters.
    pub length: u64,
    /// MD5 of the canonical form.
    pub md5: [u8; 16],
    /// The first 24 bytes of the SHA-512 of the canonical form.
    pub sha512t24: [u8; 24],
}

impl SequenceDigests {
    /// The MD5 as 32 lowercase hex digits: refget's `md5` identifier.
    pub fn md5_hex(&self) -> String {
        hex(&self.md5)
    }

    /// The truncated SHA-512 as 48 lowercase hex digits: refget v1's `TRUNC512` identifier.
    pub fn trunc512(&self) -> String {
        hex(&self.sha512t24)
    }

    /// The truncated SHA-512 in unpadded base64url, 32 characters: `sha512t24u`.
    pub fn sha512t24u(&self) -> String {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(self.sha512t24)
    }

    /// The refget (`ga4gh` algorithm) identifier: `SQ.` and [`SequenceDigests::sha512t24u`].
    pub fn ga4gh_id(&self) -> String {
        format!("SQ.{}", self.sha512t24u())
    }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// Bytes canonicalised at a time before they go to the hashes.
const CHUNK: usize = 64 << 10;

/// Bytes canonicalised at a time where [`Digester::update`] runs its two hashes side by side:
/// long enough that the join costs nothing beside the hashing.
const JOINED_CHUNK: usize = 1 << 20;

/// Incremental [`SequenceDigests`]: feed a sequence's bytes (bases, with or without line
/// ends) in any pieces, then [`Digester::finish`].
#[derive(Clone)]
pub struct Digester {
    md5: Md5,
    sha512: Sha512,
    length: u64,
    buf: Vec<u8>,
}

impl Default for Digester {
    fn default() -> Self {
        Digester::new()
    }
}

impl Digester {
    /// A digester of the empty sequence.
    pub fn new() -> Self {
        Digester {
            md5: Md5::new(),
            sha512: Sha512::new(),
            length: 0,
            buf: Vec::with_capacity(CHUNK),
        }
    }

    /// Adds `bytes` to the sequence: its ASCII letters, uppercased; every other byte is
    /// dropped (refget's canonical form).
    ///
    /// With more than one rayon thread, a long input's two hashes run side by side, one MiB
    /// (`JOINED_CHUNK`) at a time (the two take about as long each, and hashing is the
    /// serial part of a streamed compress of FASTA).
    pub fn update(&mut self, bytes: &[u8]) {
        let joined = bytes.len() >= JOINED_CHUNK && rayon::current_num_threads() > 1;
        let chunk = if joined { JOINED_CHUNK } else { CHUNK };
        for piece in bytes.chunks(chunk) {
            canonicalise(piece, &mut self.buf);
            let (md5, sha512, buf) = (&mut self.md5, &mut self.sha512, &self.buf);
            if joined {
                rayon::join(|| md5.update(buf), || sha512.update(buf));
            } else {
                md5.update(buf);
                sha512.update(buf);
            }
            self.length += self.buf.len() as u64;
        }
    }

    /// The digests of everything added.
    pub fn finish(self) -> SequenceDigests {
        let sha = self.sha512.finalize();
        let mut sha512t24 = [0u8; 24];
        sha512t24.copy_from_slice(&sha[..24]);
        SequenceDigests {
            length: self.length,
            md5: self.md5.finalize().into(),
            sha512t24,
        }
    }
}

/// `piece`'s ASCII letters, uppercased, into `buf` (cleared first): refget's canonical form.
fn canonicalise(piece: &[u8], buf: &mut Vec<u8>) {
    buf.clear();
    // runs of letters (a FASTA line's bases) copied whole, then uppercased in one pass
    for run in piece.split(|b| !b.is_ascii_alphabetic()) {
        buf.extend_from_slice(run);
    }
    buf.make_ascii_uppercase();
}

/// The digests of every sequence of `index` (a FASTA index of `data`), in index order,
/// computed in parallel on the current rayon pool (a task a sequence; a long one's two hashes
/// side by side, as [`Digester::update`] runs them).
///
/// Each sequence's bytes run from its OFFSET to its last base (FORMAT.md §3.5); line ends
/// between them fall out of the canonical form.
///
/// Errors: [`ChecksumsError::NotFasta`] for a FASTQ index; [`ChecksumsError::Unlocatable`]
/// when a sequence ends past `data` (an index of other bytes) or has bases but a LINEBASES
/// of 0 (its bytes cannot be located).
pub fn sequence_digests(
    index: &FastaIndex,
    data: &[u8],
) -> Result<Vec<SequenceDigests>, ChecksumsError> {
    if index.format() != SeqFormat::Fasta {
        return Err(ChecksumsError::NotFasta);
    }
    index
        .records()
        .par_iter()
        .enumerate()
        .map(|(i, r)| {
            let bytes = match r.length {
                0 => Some(0..0),
                _ => super::byte_range(r, 0, r.length),
            }
            .and_then(|range| {
                let (s, e) = (
                    usize::try_from(range.start).ok()?,
                    usize::try_from(range.end).ok()?,
                );
                data.get(s..e)
            })
            .ok_or(ChecksumsError::Unlocatable { sequence: i })?;
            // (a long sequence's two hashes run side by side: `Digester::update`)
            let mut d = Digester::new();
            d.update(bytes);
            Ok(d.finish())
        })
        .collect()
}

/// Why sequence checksums cannot be computed or parsed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ChecksumsError {
    /// The index is of FASTQ: refget checksums are of FASTA sequences.
    #[error("sequence checksums are defined for FASTA, not FASTQ")]
    NotFasta,
    /// A sequence of the index ends past the data, or its bytes cannot be located.
    #[error("sequence {sequence} cannot be located in the data")]
    Unlocatable {
        /// Its position in the index.
        sequence: usize,
    },
    /// The byte form is malformed (FORMAT.md §3.6).
    #[error("sequence checksums record: {0}")]
    Bytes(String),
}

/// Magic of the byte form: `SQC` and layout version 1 (FORMAT.md §3.6).
const MAGIC: &[u8; 4] = b"SQC\x01";
/// Bytes of one sequence's entry in the byte form.
const ENTRY_BYTES: usize = 8 + 16 + 24;

/// The byte form of `digests` (FORMAT.md §3.6): magic, count (u32 little-endian), then per
/// sequence its canonical length (u64 little-endian), MD5 (16 bytes) and truncated SHA-512
/// (24 bytes). `None` for more than `u32::MAX` sequences.
pub fn to_bytes(digests: &[SequenceDigests]) -> Option<Vec<u8>> {
    let count = u32::try_from(digests.len()).ok()?;
    let mut out = Vec::with_capacity(8 + digests.len() * ENTRY_BYTES);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&count.to_le_bytes());
    for d in digests {
        out.extend_from_slice(&d.length.to_le_bytes());
        out.extend_from_slice(&d.md5);
        out.extend_from_slice(&d.sha512t24);
    }
    Some(out)
}

/// Parses the byte form of [`to_bytes`], checking the rules of FORMAT.md §3.6 that need
/// only the payload: the magic and a size of exactly 8 + 48 × count bytes.
///
/// Errors: [`ChecksumsError::Bytes`] saying which rule is broken.
pub fn from_bytes(bytes: &[u8]) -> Result<Vec<SequenceDigests>, ChecksumsError> {
    let bad = |why: String| ChecksumsError::Bytes(why);
    if bytes.len() < 8 || &bytes[..4] != MAGIC {
        return Err(bad(
            "bad magic or unknown layout version (want SQC\\x01)".into()
        ));
    }
    let count = u32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]) as usize;
    let want = count
        .checked_mul(ENTRY_BYTES)
        .and_then(|n| n.checked_add(8))
        .ok_or_else(|| bad(format!("count {count} overflows")))?;
    if bytes.len() != want {
        return Err(bad(format!(
            "{} bytes for {count} sequences (want {want})",
            bytes.len()
        )));
    }
    Ok(bytes[8..]
        .as_chunks::<ENTRY_BYTES>()
        .0
        .iter()
        .map(|e| {
            let mut d = SequenceDigests {
                length: u64::from_le_bytes(e[..8].try_into().expect("8 bytes")),
                md5: [0; 16],
                sha512t24: [0; 24],
            };
            d.md5.copy_from_slice(&e[8..24]);
            d.sha512t24.copy_from_slice(&e[24..48]);
            d
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Digests from the refget compliance suite's `checksums.json` would need its sequences;
    /// these are from `printf ... | md5sum` and `| sha512sum` (first 48 hex digits).
    #[test]
    fn known_digests() {
        let mut d = Digester::new();
        d.update(b"ACGT");
        let d = d.finish();
        assert_eq!(d.md5_hex(), "f1f8f4bf413b16ad135722aa4591043e");
        assert_eq!(
            d.trunc512(),
            "68a178f7c740c5c240aa67ba41843b119d3bf9f8b0f0ac36"
        );
        assert_eq!(d.ga4gh_id(), "SQ.aKF498dAxcJAqme6QYQ7EZ07-fiw8Kw2");
        let empty = Digester::new().finish();
        assert_eq!(empty.md5_hex(), "d41d8cd98f00b204e9800998ecf8427e");
        assert_eq!(empty.ga4gh_id(), "SQ.z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXc");
        assert_eq!(empty.length, 0);
    }

    /// A 4 MB sequence in 60-base lowercase lines, fed in pieces of several sizes (one over
    /// `JOINED_CHUNK`, so the two hashes run side by side on a two-thread pool); the digests of
    /// `ACGT` x 1,000,000 are from `md5sum` and `sha512sum` (first 48 hex digits).
    #[test]
    fn long_sequences_fed_in_pieces_on_two_threads() {
        let bases = b"acgt".repeat(1_000_000);
        let lines: Vec<u8> = bases
            .chunks(60)
            .flat_map(|l| l.iter().copied().chain(*b"\n"))
            .collect();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let d = pool.install(|| {
            let mut d = Digester::new();
            let (a, rest) = lines.split_at(1000);
            let (b, c) = rest.split_at(JOINED_CHUNK * 2 + 7);
            d.update(a);
            d.update(b);
            d.update(c);
            d.finish()
        });
        assert_eq!(d.length, 4_000_000);
        assert_eq!(d.md5_hex(), "fcb1585907d8f94579201cff512462b9");
        assert_eq!(
            d.trunc512(),
            "1d3989945725fc3745af8478fda22b91d2cb5d588951db25"
        );
    }

    #[test]
    fn canonical_form_drops_non_letters_and_uppercases() {
        let mut a = Digester::new();
        a.update(b"ac\r\ngt-*N n\n");
        let mut b = Digester::new();
        b.update(b"ACGTNN");
        assert_eq!(a.finish(), b.finish());
        // bytes above 0x7f never become letters
        let mut c = Digester::new();
        c.update(&[0xC1, 0xE1, b'A']);
        assert_eq!(c.finish().length, 1);
    }

    #[test]
    fn byte_form_round_trip_and_rejects() {
        let mut d = Digester::new();
        d.update(b"GATTACA");
        let ds = vec![d.finish(), Digester::new().finish()];
        let bytes = to_bytes(&ds).unwrap();
        assert_eq!(bytes.len(), 8 + 2 * 48);
        assert_eq!(&bytes[..8], b"SQC\x01\x02\0\0\0");
        assert_eq!(from_bytes(&bytes).unwrap(), ds);
        assert!(from_bytes(&bytes[..bytes.len() - 1]).is_err());
        let mut extra = bytes.clone();
        extra.push(0);
        assert!(from_bytes(&extra).is_err());
        let mut magic = bytes;
        magic[3] = 2;
        assert!(from_bytes(&magic).is_err());
        assert!(from_bytes(b"SQC").is_err());
    }
}
