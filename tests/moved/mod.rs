//! Archives with blocks moved or duplicated, for the position-bound checksum tests
//! (tests/position_bound.rs on the CPU, tests/gpu/hostile.rs on the GPU): each moved block's
//! entry and slices go together, and the content and meta checksums are recomputed for the
//! moved bytes, so that only the block checksums' binding to their index (FORMAT.md §6:
//! XXH3-64 XOR `mix(i)`) can tell.

// each test crate uses a different part
#![allow(dead_code)]

use aceapex::format::Archive;
use aceapex::{compress_settings, Settings};
use xxhash_rust::xxh3::xxh3_64;

/// Header bytes (FORMAT.md §2) and the content checksum's offset in it.
const HEADER: usize = 96;
const H_CONTENT: usize = 64;

/// Block size of the movable archives.
pub const BLOCK: usize = 4096;
/// Blocks of the movable archives.
pub const BLOCKS: usize = 6;

/// An archive whose blocks can be moved: six 4 KiB blocks of random bytes (no matches, so a
/// block decodes the same at any index), independent or, with `cross`, with a 16 KiB window
/// (the cross-block decode paths; the blocks still read only themselves). Returns the
/// original and the archive.
pub fn movable_archive(cross: bool) -> (Vec<u8>, Vec<u8>) {
    let mut x = 0x5EED_B10C_u64;
    let data: Vec<u8> = (0..BLOCKS * BLOCK)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    let opts = Settings {
        block_size: BLOCK as u32,
        window: cross.then_some(16384),
        ..Default::default()
    };
    let a = compress_settings(&data, &opts, &|_| {}).unwrap();
    assert_eq!(aceapex::decompress(&a).unwrap(), data, "cross {cross}");
    assert_eq!(Archive::parse(&a).unwrap().cross_block(), cross);
    (data, a)
}

/// `a` with its blocks in the order `order` (block `i` of the result is block `order[i]`
/// of `a`): entries and slices moved together, the content checksum set to the moved
/// blocks' bytes and the meta checksum recomputed.
pub fn with_blocks_moved(a: &[u8], data: &[u8], order: &[usize]) -> Vec<u8> {
    let p = Archive::parse(a).unwrap();
    let size = p.entry_size();
    let n = p.block_count();
    assert_eq!(order.len(), n);
    let bt_end = HEADER + n * size;
    let data_start = p.data_offset() as usize;
    let mut out = a[..HEADER].to_vec();
    for &j in order {
        out.extend_from_slice(&a[HEADER + j * size..HEADER + (j + 1) * size]);
    }
    out.extend_from_slice(&a[bt_end..data_start]);
    let mut moved = Vec::new();
    for &j in order {
        let start = data_start + p.block_offsets()[j] as usize;
        let len: u32 = p.entries()[j].stored_len.iter().sum();
        out.extend_from_slice(&a[start..start + len as usize]);
        moved.extend_from_slice(&data[j * BLOCK..(j + 1) * BLOCK]);
    }
    out[H_CONTENT..H_CONTENT + 8].copy_from_slice(&xxh3_64(&moved).to_le_bytes());
    crate::common::reseal_packed(&mut out);
    out
}

/// A damaged archive of [`cases`].
pub struct Moved {
    /// What was moved, for messages.
    pub what: String,
    /// The archive.
    pub archive: Vec<u8>,
    /// The blocks whose bytes are not the ones written for their index (ascending).
    pub moved: Vec<u32>,
}

/// Two blocks swapped (2 and 4) and a block duplicated over another (1 at 3) in the
/// movable archive; the identity order is checked to rebuild the archive unchanged (so the
/// helper moves nothing else). Returns the original and the cases.
pub fn cases(cross: bool) -> (Vec<u8>, Vec<Moved>) {
    let (data, a) = movable_archive(cross);
    assert_eq!(with_blocks_moved(&a, &data, &[0, 1, 2, 3, 4, 5]), a);
    let v = [
        ("blocks 2 and 4 swapped", [0, 1, 4, 3, 2, 5], vec![2, 4]),
        ("block 1 duplicated at 3", [0, 1, 2, 1, 4, 5], vec![3]),
    ]
    .into_iter()
    .map(|(what, order, moved)| Moved {
        what: format!("{what} (cross-block {cross})"),
        archive: with_blocks_moved(&a, &data, &order),
        moved,
    })
    .collect();
    (data, v)
}

/// Whether `msg` names block `b` as the library's block errors do ("block 3 (bytes ..."),
/// or the GPU's status errors ("block 3: ...").
pub fn names_block(msg: &str, b: u32) -> bool {
    msg.contains(&format!("block {b} (")) || msg.contains(&format!("block {b}:"))
}
