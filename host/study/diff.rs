//! Which blocks differ between two archives of the same original (`aceapex diff-blocks`).
//!
//! Two comparisons per block: the **stored** slices (the bytes in the data section, after
//! entropy coding; a table group's shared tables make a change in one block show in the
//! stored slices of its neighbours too) and the **decoded** streams (the match layer itself:
//! literals, lengths, offsets, commands, offset tails). The ACEAPEX paper's byte-level test of
//! its depth cap compares the blocks' streams; the decoded comparison is that test.

use crate::device::format::STREAM_COUNT;
use crate::error::DecodeError;
use crate::format::Archive;

/// Why two archives cannot be compared block by block.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DiffError {
    /// The archives hold different originals (size or content checksum, FORMAT.md §2).
    #[error(
        "the archives hold different originals ({size_a} bytes, XXH3-64 {sum_a:016x} against \
         {size_b} bytes, XXH3-64 {sum_b:016x}): diff-blocks compares archives of one input"
    )]
    DifferentOriginals {
        /// First archive's original size.
        size_a: u64,
        /// First archive's content checksum.
        sum_a: u64,
        /// Second archive's original size.
        size_b: u64,
        /// Second archive's content checksum.
        sum_b: u64,
    },
    /// The archives cut the original into blocks of different sizes.
    #[error(
        "the archives have different block sizes ({0} and {1} bytes): their blocks do not \
         cover the same bytes"
    )]
    DifferentBlockSizes(u32, u32),
    /// A block's streams could not be decoded.
    #[error(transparent)]
    Decode(#[from] DecodeError),
}

/// How one block differs between the two archives.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BlockDiff {
    /// Block index.
    pub block: u32,
    /// Per stream (FORMAT.md §1 order): the stored slices differ.
    pub stored: [bool; STREAM_COUNT],
    /// Per stream: the decoded streams differ.
    pub decoded: [bool; STREAM_COUNT],
}

impl BlockDiff {
    /// Some stored slice differs.
    pub fn stored_differs(&self) -> bool {
        self.stored.iter().any(|&d| d)
    }

    /// Some decoded stream differs.
    pub fn decoded_differs(&self) -> bool {
        self.decoded.iter().any(|&d| d)
    }
}

/// The blocks of `a` and `b` whose stored slices or decoded streams differ, in index order
/// (blocks equal in both ways are left out).
///
/// Errors: [`DiffError::DifferentOriginals`] when the original sizes or content checksums
/// differ, [`DiffError::DifferentBlockSizes`], [`DiffError::Decode`] when a block's streams
/// do not entropy-decode (FORMAT.md §5).
pub fn diff(a: &Archive<'_>, b: &Archive<'_>) -> Result<Vec<BlockDiff>, DiffError> {
    let (ha, hb) = (&a.header, &b.header);
    if ha.original_size != hb.original_size || ha.content_checksum != hb.content_checksum {
        return Err(DiffError::DifferentOriginals {
            size_a: ha.original_size,
            sum_a: ha.content_checksum,
            size_b: hb.original_size,
            sum_b: hb.content_checksum,
        });
    }
    if ha.block_size != hb.block_size {
        return Err(DiffError::DifferentBlockSizes(ha.block_size, hb.block_size));
    }
    use rayon::prelude::*;
    let found: Vec<Option<BlockDiff>> = (0..a.block_count())
        .into_par_iter()
        .map_init(
            || {
                (
                    <[Vec<u8>; STREAM_COUNT]>::default(),
                    <[Vec<u8>; STREAM_COUNT]>::default(),
                )
            },
            |(ba, bb), i| {
                let err = |arch: &Archive<'_>, status| {
                    let r = arch.block_range(i);
                    DecodeError::Block {
                        block: i as u32,
                        start: r.start,
                        end: r.end,
                        status,
                    }
                };
                crate::decode::decode_streams(a, i, ba).map_err(|s| err(a, s))?;
                crate::decode::decode_streams(b, i, bb).map_err(|s| err(b, s))?;
                let (sa, sb) = (a.slices(i), b.slices(i));
                let d = BlockDiff {
                    block: i as u32,
                    stored: std::array::from_fn(|k| sa[k] != sb[k]),
                    decoded: std::array::from_fn(|k| ba[k] != bb[k]),
                };
                Ok::<_, DiffError>((d.stored_differs() || d.decoded_differs()).then_some(d))
            },
        )
        .collect::<Result<_, _>>()?;
    Ok(found.into_iter().flatten().collect())
}
