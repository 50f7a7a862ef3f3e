//! The container (FORMAT.md §2-§3, §5.2, §6): the header, the packed block table, the table
//! records, the extension area, the validated [`Archive`] a decoder reads, and the assembly of
//! an archive's sections.

pub mod archive;
pub mod entry;
pub mod extension;
pub mod tables;
pub mod varint;
pub mod write;

pub use archive::{table_cache_budget, Archive, StreamTable, TableHandle};
pub use extension::{with_extensions, Extension};

use crate::device::format::{FileHeader, META_CHECKSUM_OFFSET};
use xxhash_rust::xxh3::Xxh3;

/// Header size in bytes (FORMAT.md §2).
pub const HEADER_SIZE: usize = std::mem::size_of::<FileHeader>();

/// FORMAT.md §6: XXH3-64 of header bytes `0..88`, the block table, the table section and the
/// extension area, in that order.
pub(crate) fn meta_checksum(
    h: &FileHeader,
    block_table: &[u8],
    tables: &[u8],
    extensions: &[u8],
) -> u64 {
    let mut x = Xxh3::new();
    x.update(&bytemuck::bytes_of(h)[..META_CHECKSUM_OFFSET]);
    x.update(block_table);
    x.update(tables);
    x.update(extensions);
    x.digest()
}
