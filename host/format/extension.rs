//! The extension area (FORMAT.md §3.4): typed, length-prefixed records after the data section.

use super::write::assemble;
use super::{Archive, HEADER_SIZE};
use crate::device::format::*;
use crate::error::FormatError;

/// One record of an archive's extension area (FORMAT.md §3.4): a type, flags and a payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extension<'a> {
    /// The record type (`EXTENSION_TYPE_*`; 0 is reserved and never valid).
    pub kind: u16,
    /// `EXTENSION_*` flag bits; [`EXTENSION_MUST_UNDERSTAND`] is the only one defined.
    pub flags: u16,
    /// The payload, at most `u32::MAX` bytes.
    pub payload: &'a [u8],
}

impl Extension<'_> {
    /// Whether a reader that does not know [`Self::kind`] must reject the archive.
    pub fn must_understand(&self) -> bool {
        self.flags & EXTENSION_MUST_UNDERSTAND != 0
    }

    /// Appends the record (type, flags, payload length, payload: FORMAT.md §3.4) to `area`.
    /// The payload must be at most `u32::MAX` bytes (the callers' check or their payloads').
    pub(crate) fn write_to(&self, area: &mut Vec<u8>) {
        area.extend_from_slice(&self.kind.to_le_bytes());
        area.extend_from_slice(&self.flags.to_le_bytes());
        area.extend_from_slice(&(self.payload.len() as u32).to_le_bytes());
        area.extend_from_slice(self.payload);
    }
}

/// Appends to `area` the type-3 record (FORMAT.md §3.7: empty, must-understand) where a
/// block of `entries` has a slice with runs (§5.8), as both encoders write it, first in the
/// area.
pub(crate) fn write_two_bit_runs_record(entries: &[BlockEntry], area: &mut Vec<u8>) {
    if super::archive::first_two_bit_runs(entries).is_some() {
        let record = Extension {
            kind: EXTENSION_TYPE_TWO_BIT_RUNS,
            flags: EXTENSION_MUST_UNDERSTAND,
            payload: &[],
        };
        record.write_to(area);
    }
}

/// Appends to `area` the type-4 record (FORMAT.md §3.8: empty, must-understand), which an
/// encoder writes where a block of the archive has a line layout (§4.6).
pub(crate) fn write_line_layout_record(area: &mut Vec<u8>) {
    let record = Extension {
        kind: EXTENSION_TYPE_LINE_LAYOUT,
        flags: EXTENSION_MUST_UNDERSTAND,
        payload: &[],
    };
    record.write_to(area);
}

/// Record types this build interprets with the must-understand flag (FORMAT.md §3.4): the
/// types 3 (two-bit slices with runs, §3.7) and 4 (line layouts, §3.8). A record of another
/// type with the flag makes [`Archive::parse`] fail.
const UNDERSTOOD_EXTENSIONS: &[u16] = &[EXTENSION_TYPE_TWO_BIT_RUNS, EXTENSION_TYPE_LINE_LAYOUT];

/// The archive `archive` with `records` appended to its extension area (after the records it
/// already has) and its meta checksum recomputed (FORMAT.md §3.4, §6). The other sections
/// are kept byte for byte.
///
/// Errors: `archive` does not parse ([`Archive::parse`]), a record has type 0, flags outside
/// [`KNOWN_EXTENSION_FLAGS`], or a payload over `u32::MAX` bytes
/// ([`FormatError::Extension`]; a must-understand record of a type this build does not know
/// is refused too, since the result would not parse).
pub fn with_extensions(archive: &[u8], records: &[Extension<'_>]) -> Result<Vec<u8>, FormatError> {
    let a = Archive::parse(archive)?;
    let mut area = a.extension_area.to_vec();
    for r in records {
        let offset = area.len() as u64;
        check_extension(r.kind, r.flags).map_err(|why| FormatError::Extension { offset, why })?;
        if u32::try_from(r.payload.len()).is_err() {
            return Err(FormatError::Extension {
                offset,
                why: format!("payload of {} bytes (at most 2^32 - 1)", r.payload.len()),
            });
        }
        r.write_to(&mut area);
    }
    let bt_end = HEADER_SIZE + a.block_count() * a.entry_size();
    let tables_end = a.data_offset as usize;
    Ok(assemble(
        a.header,
        &archive[HEADER_SIZE..bt_end],
        &archive[bt_end..tables_end],
        a.data,
        &area,
    ))
}

/// FORMAT.md §3.4: a record's type must not be 0, its reserved flag bits must be zero, and a
/// must-understand record must be of a type this build interprets.
fn check_extension(kind: u16, flags: u16) -> Result<(), String> {
    if kind == EXTENSION_TYPE_RESERVED {
        return Err("record type 0 is reserved".into());
    }
    if flags & !KNOWN_EXTENSION_FLAGS != 0 {
        return Err(format!(
            "record type {kind} has reserved flag bits {:#06x} set",
            flags & !KNOWN_EXTENSION_FLAGS
        ));
    }
    if flags & EXTENSION_MUST_UNDERSTAND != 0 && !UNDERSTOOD_EXTENSIONS.contains(&kind) {
        return Err(format!(
            "record type {kind} is marked must-understand and this build does not know it"
        ));
    }
    Ok(())
}

/// The records of a meta-checksummed extension area, each checked ([`check_extension`], and
/// its payload inside the area).
pub(super) fn parse_extensions(area: &[u8]) -> Result<Vec<Extension<'_>>, FormatError> {
    let mut out = Vec::new();
    let mut pos = 0usize;
    while pos < area.len() {
        let offset = pos as u64;
        let err = |why: String| FormatError::Extension { offset, why };
        let head = area.get(pos..pos + EXTENSION_HEADER_BYTES).ok_or_else(|| {
            err(format!(
                "{} bytes left, a record header needs 8",
                area.len() - pos
            ))
        })?;
        let kind = u16::from_le_bytes([head[0], head[1]]);
        let flags = u16::from_le_bytes([head[2], head[3]]);
        let len = u32::from_le_bytes([head[4], head[5], head[6], head[7]]) as usize;
        check_extension(kind, flags).map_err(err)?;
        let start = pos + EXTENSION_HEADER_BYTES;
        let payload = area
            .get(start..)
            .and_then(|p| p.get(..len))
            .ok_or_else(|| {
                err(format!(
                    "record type {kind} declares a {len}-byte payload, {} bytes are left",
                    area.len() - start
                ))
            })?;
        out.push(Extension {
            kind,
            flags,
            payload,
        });
        pos = start + len;
    }
    Ok(out)
}
