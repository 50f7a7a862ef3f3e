//! Taking a valid archive apart and putting it back together (tests/corrupt/context_pairs.rs,
//! tests/corrupt/packed_literals.rs): header, block entries, table section and data; sizes and the meta checksum recomputed (FORMAT.md §2, §3, §5.1, §6).

use super::{put_u16, put_u64};
use aceapex::device::format::BlockEntry;
use aceapex::format::Archive;
use xxhash_rust::xxh3::xxh3_64;

const HEADER_SIZE: usize = 96;
const H_VERSION: usize = 4;
const H_TABLE_BYTES: usize = 48;
const H_DATA_BYTES: usize = 56;
const H_BITS: usize = 72;

/// Bytes of the table body (FORMAT.md §5.2) at `at` (bitmap plus varints); None if truncated.
pub fn body_len(s: &[u8], at: usize) -> Option<usize> {
    let bm = s.get(at..at + 32)?;
    let count: u32 = bm.iter().map(|b| b.count_ones()).sum();
    let mut p = at + 32;
    for _ in 0..count {
        loop {
            let b = *s.get(p)?;
            p += 1;
            if b & 0x80 == 0 {
                break;
            }
        }
    }
    Some(p - at)
}

/// Header, block table and table section of a parsed archive.
#[derive(Clone)]
pub struct Parts {
    pub header: Vec<u8>,
    pub entries: Vec<BlockEntry>,
    pub tables: Vec<u8>,
    pub data: Vec<u8>,
}

pub fn parts(bytes: &[u8]) -> Parts {
    let a = Archive::parse(bytes).expect("source archive parses");
    let bt_end = HEADER_SIZE + a.block_count() * a.entry_size();
    let te = bt_end + a.header().table_bytes as usize;
    Parts {
        header: bytes[..HEADER_SIZE].to_vec(),
        entries: a.entries().to_vec(),
        tables: bytes[bt_end..te].to_vec(),
        data: bytes[te..].to_vec(),
    }
}

/// Assembles an archive with header version `version` (format 1 is the only one a reader
/// accepts; others test the refusal) and header byte 85 = `byte85` from a header template,
/// entries (packed in their tightest widths, FORMAT.md §3.1), table section and data; sizes
/// and the meta checksum computed.
pub fn assemble(
    p: &Parts,
    version: u16,
    byte85: u8,
    entries: &[BlockEntry],
    tables: &[u8],
    data: &[u8],
) -> Vec<u8> {
    let mut out = p.header.clone();
    put_u16(&mut out, H_VERSION, version);
    put_u64(&mut out, H_TABLE_BYTES, tables.len() as u64);
    put_u64(&mut out, H_DATA_BYTES, data.len() as u64);
    let mut bt = Vec::new();
    let mut bits = aceapex::format::entry::bits_for(entries);
    bits.match_base = byte85;
    out[H_BITS..H_BITS + 16].copy_from_slice(bytemuck::bytes_of(&bits));
    aceapex::format::entry::pack(entries, &bits, &mut bt);
    let mut covered = out[..88].to_vec();
    covered.extend_from_slice(&bt);
    covered.extend_from_slice(tables);
    put_u64(&mut out, 88, xxh3_64(&covered));
    out.extend_from_slice(&bt);
    out.extend_from_slice(tables);
    out.extend_from_slice(data);
    out
}

/// Same archive with another table section (and optionally version / byte 85).
pub fn with_tables(p: &Parts, version: u16, byte85: u8, tables: &[u8]) -> Vec<u8> {
    assemble(p, version, byte85, &p.entries, tables, &p.data)
}
