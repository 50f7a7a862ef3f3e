//! What a user asks of the encoder: a level, a target and the few levers of the match layer.
//!
//! [`Options`] says what the archive is for ([`Target`]) and how hard to work (`level`); the
//! encoder then decides per group and block which of the format's codings to use (context and
//! packed tables, raw match streams, wide rANS slices, two-bit literal slices), by their cost
//! under the target. [`Options::settings`] lowers a validated `Options` to those decisions.
//!
//! ```
//! use aceapex::{Options, Target};
//!
//! let opts = Options::new().with_level(9).with_target(Target::Gpu);
//! assert!(opts.validate().is_ok());
//! assert!(Options::new().with_level(0).validate().is_err());
//! ```

use crate::device::format::{DEFAULT_BLOCK_SIZE, MAX_BLOCK_SIZE, MIN_BLOCK_SIZE, MIN_MATCH_BASE};

/// The default level: the strongest lazy parse, with a minimum match tried on a sample of the
/// input under [`Target::Size`], the least effort that compresses every corpus of
/// docs/PERFORMANCE.md smaller than blockwise zstd level 3 at 16 KiB blocks.
pub const DEFAULT_LEVEL: u32 = 6;

/// What the archive is for; the encoder picks its codings per group and block by their cost
/// under it.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Target {
    /// Ratio first: every stream entropy-coded, context and packed tables where the level's
    /// rule takes them, two-bit literal slices only where they shorten the archive, and at
    /// every level a minimum match of 4 where a sample of the input compresses smaller with
    /// it than with 6 ([`crate::encode::default_min_match`]; below level 8 never on
    /// nucleotide sequence, and only by [`crate::encode::SHORT_MATCH_MIN_GAIN`]).
    #[default]
    Size,
    /// GPU decode speed first (FORMAT.md §5.5-§5.8): at levels 1-7 the match streams are
    /// stored raw, so that a block's literals have the rANS warp to themselves; two-bit
    /// literal slices (with runs, FORMAT.md §5.8, where the block is one the GPU's dense
    /// kernel decodes alone) where all but a sixteenth of the blocks take one at a cost of at
    /// most 1 % more than rANS, and none otherwise (an archive of such blocks with raw
    /// streams decodes without the rANS stage, while a few two-bit blocks slow the rest). On
    /// line-wrapped or soft-masked DNA FASTA this makes the archive smaller than under
    /// [`Target::Size`], whose blocks, with coded match streams, take no slices with runs
    /// (a GPU would decode those only with its lane kernel). For inputs of at most
    /// [`crate::encode::WIDE_MAX_BLOCKS`] blocks, 64-lane literal slices where they halve a
    /// chain of at least 64 steps. Minimum match 6 at levels 1-7 (fewer, longer matches).
    /// Levels 8-9 code for size with few rANS lanes, so raw match streams would cost bytes
    /// and buy no speed: there the target adds only the two-bit literal slices to the level.
    Gpu,
}

/// Encoder options. `Options::default()` is level 6, [`Target::Size`],
/// 16 KiB blocks, independent blocks, the level's minimum match, repeat codes, no depth cap.
///
/// Build one with [`Options::new`] and the `with_*` setters; [`crate::encode::compress`]
/// validates it ([`Options::validate`]).
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// 1 (fastest) to 9 (smallest). Levels 1-5 parse lazily with a growing search, 6 is the
    /// strongest lazy parse, 7-9 also try 1-3 price-based optimal parses per block and keep
    /// the smallest (3x to several hundred times slower than 6); 8-9 give the entropy coder
    /// 4x / 16x fewer interleaved lanes (smaller archives, slower GPU decode).
    pub level: u32,
    /// What the archive is for.
    pub target: Target,
    /// Block size in bytes: a power of two from 4 KiB to 4 MiB (FORMAT.md §2).
    pub block_size: u32,
    /// Largest match distance in bytes, at least 1; `None` = the block size (blocks decode
    /// independently). Larger than the block size lets matches reach earlier blocks.
    pub window: Option<u32>,
    /// Shortest match emitted in bytes, 4 up to the block size; below 6 the length codes start
    /// there too (FORMAT.md §2). `None` = the level's and target's choice (see [`Target`]).
    pub min_match: Option<u32>,
    /// Cap on a match's dependency level (FORMAT.md §3.1): every match's level is below it;
    /// 0 = no cap.
    pub depth_cap: u32,
    /// Use repeat-distance codes (FORMAT.md §4).
    pub repeat_codes: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            level: DEFAULT_LEVEL,
            target: Target::Size,
            block_size: DEFAULT_BLOCK_SIZE,
            window: None,
            min_match: None,
            depth_cap: 0,
            repeat_codes: true,
        }
    }
}

/// An option out of its range; each variant names the field and the value given.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OptionsError {
    /// `level` is not in 1..=9.
    #[error("level {0} is not in 1..=9")]
    Level(u32),
    /// `block_size` is not a power of two from 4 KiB to 4 MiB.
    #[error("block size {0} is not a power of two from 4 KiB (4096) to 4 MiB (4194304)")]
    BlockSize(u32),
    /// `window` is 0.
    #[error("window {0} is below 1 byte")]
    Window(u32),
    /// `min_match` is below 4.
    #[error("minimum match {0} is below {MIN_MATCH_BASE}")]
    MinMatch(u32),
    /// `min_match` is longer than a block, where no match could be found.
    #[error("minimum match {min_match} is longer than a block ({block_size} bytes)")]
    MinMatchAboveBlock {
        /// The minimum match given.
        min_match: u32,
        /// The block size given.
        block_size: u32,
    },
    /// The input has more than 2^32 blocks of `block_size`.
    #[error("an input of {len} bytes has more than 2^32 blocks of {block_size} bytes")]
    TooManyBlocks {
        /// Input bytes.
        len: u64,
        /// The block size given.
        block_size: u32,
    },
}

impl Options {
    /// The default options ([`Options::default`]).
    pub fn new() -> Self {
        Self::default()
    }

    /// With `level` (1-9).
    pub fn with_level(mut self, level: u32) -> Self {
        self.level = level;
        self
    }

    /// With `target`.
    pub fn with_target(mut self, target: Target) -> Self {
        self.target = target;
        self
    }

    /// With `block_size` in bytes.
    pub fn with_block_size(mut self, block_size: u32) -> Self {
        self.block_size = block_size;
        self
    }

    /// With `window` in bytes (`None`: the block size).
    pub fn with_window(mut self, window: Option<u32>) -> Self {
        self.window = window;
        self
    }

    /// With `min_match` in bytes (`None`: the level's choice).
    pub fn with_min_match(mut self, min_match: Option<u32>) -> Self {
        self.min_match = min_match;
        self
    }

    /// With `depth_cap` (0: none).
    pub fn with_depth_cap(mut self, depth_cap: u32) -> Self {
        self.depth_cap = depth_cap;
        self
    }

    /// With or without repeat codes.
    pub fn with_repeat_codes(mut self, repeat_codes: bool) -> Self {
        self.repeat_codes = repeat_codes;
        self
    }

    /// Checks every field; the error names the first one out of range.
    pub fn validate(&self) -> Result<(), OptionsError> {
        if !(1..=9).contains(&self.level) {
            return Err(OptionsError::Level(self.level));
        }
        if !self.block_size.is_power_of_two()
            || !(MIN_BLOCK_SIZE..=MAX_BLOCK_SIZE).contains(&self.block_size)
        {
            return Err(OptionsError::BlockSize(self.block_size));
        }
        if self.window == Some(0) {
            return Err(OptionsError::Window(0));
        }
        if let Some(m) = self.min_match {
            if m < MIN_MATCH_BASE {
                return Err(OptionsError::MinMatch(m));
            }
            if m > self.block_size {
                return Err(OptionsError::MinMatchAboveBlock {
                    min_match: m,
                    block_size: self.block_size,
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_names_the_field_and_value() {
        let o = Options::new();
        assert_eq!(o.validate(), Ok(()));
        assert_eq!(
            o.clone().with_level(10).validate(),
            Err(OptionsError::Level(10))
        );
        assert_eq!(
            o.clone().with_block_size(5000).validate(),
            Err(OptionsError::BlockSize(5000))
        );
        assert_eq!(
            o.clone().with_window(Some(0)).validate(),
            Err(OptionsError::Window(0))
        );
        assert_eq!(
            o.clone().with_min_match(Some(3)).validate(),
            Err(OptionsError::MinMatch(3))
        );
        assert_eq!(
            o.clone()
                .with_block_size(4096)
                .with_min_match(Some(4097))
                .validate(),
            Err(OptionsError::MinMatchAboveBlock {
                min_match: 4097,
                block_size: 4096
            })
        );
        assert_eq!(
            OptionsError::Level(0).to_string(),
            "level 0 is not in 1..=9"
        );
    }
}
