//! Synthetic token lists for the match-copy and literal-scatter kernels: valid by
//! construction (sources before destinations), grouped into dependency levels, with a CPU
//! reference of the output. For tests and benchmarks only; real token lists come from the
//! parse of real archives.

use crate::device::format::{CopyToken, LiteralRun};

/// A synthetic decode job: literal runs, matches by dependency level, and the expected output.
pub struct TokenSet {
    /// Literal bytes, in output order.
    pub literals: Vec<u8>,
    /// Where each literal run goes.
    pub runs: Vec<LiteralRun>,
    /// Matches grouped by dependency level (level 0 reads only literal bytes).
    pub levels: Vec<Vec<CopyToken>>,
    /// The output a correct decode produces (CPU forward byte copy).
    pub expected: Vec<u8>,
}

impl TokenSet {
    /// Sum of match lengths: the logical bytes the match-copy kernels write.
    pub fn match_bytes(&self) -> u64 {
        self.levels.iter().flatten().map(|t| t.len as u64).sum()
    }

    /// Number of matches.
    pub fn match_count(&self) -> usize {
        self.levels.iter().map(Vec::len).sum()
    }
}

/// Small deterministic generator (xorshift64*), so test failures reproduce from the seed.
pub struct Rng(u64);
impl Rng {
    /// A generator from a non-zero seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }
    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in `0..max(n, 1)` (so `below(0)` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

/// Shape of a synthetic token list.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    /// Output bytes.
    pub size: usize,
    /// Fraction (per mille) of matches that self-overlap (distance < length, periods 1..=160).
    pub overlap_permille: u64,
    /// Fraction (per mille) of long matches (64 B to `max_len`).
    pub long_permille: u64,
    /// Longest match.
    pub max_len: u32,
    /// Fraction (per mille) of matches whose source is forced into the most recent literal
    /// run (so at level 0).
    pub level0_permille: u64,
}

impl Shape {
    /// Shaped like real token lists: median match 7 bytes, most short, some self-overlapping,
    /// rare long matches up to 64 KiB, about 60 % of matches at level 0.
    pub fn realistic(size: usize) -> Shape {
        Shape {
            size,
            overlap_permille: 150,
            long_permille: 10,
            max_len: 64 << 10,
            level0_permille: 500,
        }
    }
    /// Stress shape for tests: many self-overlapping matches with periods 1..160, lengths 6
    /// to 64 KiB.
    pub fn stress(size: usize) -> Shape {
        Shape {
            size,
            overlap_permille: 500,
            long_permille: 50,
            max_len: 64 << 10,
            level0_permille: 200,
        }
    }
}

/// Generates a valid token set of `shape` from `seed`.
pub fn generate(seed: u64, shape: Shape) -> TokenSet {
    let mut r = Rng::new(seed);
    let n = shape.size;
    let mut expected = vec![0u8; n];
    let mut level = vec![0u32; n]; // 0 = literal byte, else level+1 of the match that wrote it
    let mut literals = Vec::new();
    let mut runs = Vec::new();
    let mut levels: Vec<Vec<CopyToken>> = Vec::new();
    let mut cur = 0usize;
    let mut last_run;
    while cur < n {
        // a literal run of 1..=16 bytes (always at the start)
        let lit = (1 + r.below(16) as usize).min(n - cur);
        let src = literals.len() as u32;
        for i in 0..lit {
            let b = b"ACGTacgtNN the fox"[r.below(18) as usize];
            literals.push(b);
            expected[cur + i] = b;
            level[cur + i] = 0;
        }
        runs.push(LiteralRun {
            dst: cur as u64,
            src,
            len: lit as u32,
        });
        last_run = (cur, lit);
        cur += lit;
        if cur >= n {
            break;
        }
        // a match
        let roll = r.below(1000);
        let mut len = if roll < shape.long_permille {
            64 + r.below(shape.max_len as u64 - 63) as u32
        } else {
            // median 7: 6 + geometric-ish
            6 + (r.below(4) * r.below(4)) as u32 / 2
                + if r.below(8) == 0 {
                    r.below(24) as u32
                } else {
                    0
                }
        };
        len = len.min((n - cur) as u32);
        if len == 0 {
            continue;
        }
        let dist = if r.below(1000) < shape.overlap_permille {
            (1 + r.below(160)).min(cur as u64) as u32
        } else if r.below(1000) < shape.level0_permille
            && last_run.1 > 0
            && len as usize <= cur - last_run.0
        {
            // source starts inside the last literal run
            (cur - last_run.0 - r.below(last_run.1 as u64) as usize) as u32
        } else {
            (len as u64 + r.below((cur as u64).min(1 << 16).saturating_sub(len as u64).max(1)))
                .min(cur as u64) as u32
        };
        if dist == 0 {
            continue;
        }
        let src = cur - dist as usize;
        let read = (len as usize).min(dist as usize);
        let lvl = level[src..src + read].iter().copied().max().unwrap_or(0); // 0 = only literals
        for k in 0..len as usize {
            expected[cur + k] = expected[src + k];
            level[cur + k] = lvl + 1;
        }
        if levels.len() <= lvl as usize {
            levels.resize_with(lvl as usize + 1, Vec::new);
        }
        levels[lvl as usize].push(CopyToken {
            dst: cur as u64,
            dist,
            len,
        });
        cur += len as usize;
    }
    TokenSet {
        literals,
        runs,
        levels,
        expected,
    }
}

/// The real token lists of an archive (independent blocks or not): every block's commands
/// resolved to absolute literal runs and copy tokens, matches grouped by dependency level
/// (computed here from the parse, period-aware), and the original bytes as the expected output.
pub fn from_archive(
    a: &crate::format::Archive<'_>,
    original: &[u8],
) -> Result<TokenSet, crate::error::DecodeError> {
    use crate::device::format::*;
    use crate::device::lz::{BlockStreams, Command, Parser};
    let mut literals = Vec::new();
    let mut runs = Vec::new();
    let mut levels: Vec<Vec<CopyToken>> = Vec::new();
    let mut level = vec![0u32; original.len()];
    let mut bufs: [Vec<u8>; STREAM_COUNT] = Default::default();
    for b in 0..a.block_count() {
        let r = a.block_range(b);
        let berr = |status| crate::error::DecodeError::Block {
            block: b as u32,
            start: r.start,
            end: r.end,
            status,
        };
        crate::decode::decode_streams(a, b, &mut bufs).map_err(berr)?;
        let s = BlockStreams::from_slices(bufs.each_ref().map(|v| v.as_slice()));
        let mut p = Parser::new(s, a.header.match_base());
        let mut cur = r.start as usize;
        let mut lit = 0usize;
        while let Some(c) = p.next_command().map_err(berr)? {
            match c {
                Command::Literals(n) => {
                    let n = n as usize;
                    runs.push(LiteralRun {
                        dst: cur as u64,
                        src: literals.len() as u32,
                        len: n as u32,
                    });
                    literals.extend_from_slice(&s.literals[lit..lit + n]);
                    level[cur..cur + n].fill(0);
                    lit += n;
                    cur += n;
                }
                Command::Match { dist, len } => {
                    let src = cur - dist as usize;
                    let read = (len as usize).min(dist as usize);
                    let lvl = level[src..src + read].iter().copied().max().unwrap_or(0);
                    level[cur..cur + len as usize].fill(lvl + 1);
                    if levels.len() <= lvl as usize {
                        levels.resize_with(lvl as usize + 1, Vec::new);
                    }
                    levels[lvl as usize].push(CopyToken {
                        dst: cur as u64,
                        dist,
                        len,
                    });
                    cur += len as usize;
                }
                Command::Reset => {}
            }
        }
    }
    Ok(TokenSet {
        literals,
        runs,
        levels,
        expected: original.to_vec(),
    })
}
