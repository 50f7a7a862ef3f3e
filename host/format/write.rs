//! Writing a container (FORMAT.md §1): the header, block table, table section, data section
//! and extension area in order, with the meta checksum (§6) set.

use super::{meta_checksum, HEADER_SIZE};
use crate::device::format::FileHeader;

/// The archive of header `h` (its section sizes and meta checksum are set here), the packed
/// block table, the table section, the data section and the extension area (FORMAT.md §1).
pub fn assemble(
    mut h: FileHeader,
    block_table: &[u8],
    tables: &[u8],
    data: &[u8],
    extensions: &[u8],
) -> Vec<u8> {
    h.table_bytes = tables.len() as u64;
    h.data_bytes = data.len() as u64;
    h.meta_checksum = meta_checksum(&h, block_table, tables, extensions);
    let mut out = Vec::with_capacity(
        HEADER_SIZE + block_table.len() + tables.len() + data.len() + extensions.len(),
    );
    out.extend_from_slice(bytemuck::bytes_of(&h));
    out.extend_from_slice(block_table);
    out.extend_from_slice(tables);
    out.extend_from_slice(data);
    out.extend_from_slice(extensions);
    out
}
