//! The ACEAPEX paper's depth cap ("What Actually Serializes GPU LZ77 Decode"), beside the
//! parser's own ([`super::ParseParams::depth_cap`] with [`DepthCapMethod::Clamp`]).
//!
//! The parser's method clamps each match while parsing: a match is cut before the first
//! source byte whose level would put it at the cap, and the parse goes on from there. The
//! paper's method works on a finished parse, in passes: the segment is parsed without a
//! cap; a level pass computes every match's dependency level (FORMAT.md §3.1) from the parse
//! as it stands; a rewrite pass turns the matches at exactly the cap (the shallowest of those
//! too deep) into literals, whose bytes are then *forced literals*, level-0 bytes for the
//! matches that read them; the two passes repeat until the level pass finds no match at or
//! above the cap (the fixed point). The deeper matches are not forced with them: most fall
//! below the cap once what they read is literal, which is what keeps the method cheap. A block
//! the rewrites leave alone keeps its streams byte for byte; a rewritten block is emitted
//! again, repeat codes chosen from the history as it now runs.
//!
//! Reachable from `aceapex reproduce` (a study of the two methods), not from the
//! command line's `--depth-cap`, which keeps the parser's method.

use std::ops::Range;

use aceapex_device::format::{CMD_RESET, MIN_MATCH_BASE};
use aceapex_device::lz::{write_offset, write_varint, Command, History, Parser};

use super::{match_base, match_code, BlockParse, ParseParams};

/// How [`super::ParseParams::depth_cap`] is enforced.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DepthCapMethod {
    /// The parser clamps each match while parsing (the command line's `--depth-cap`).
    #[default]
    Clamp,
    /// The paper's method: parse without a cap, then force the matches at or above it to
    /// literals, pass after pass, to a fixed point ([`cap_to_fixed_point`]).
    FixedPoint,
}

/// One command of a parse: literals `data[at..at + len]` or a match.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Literals { at: usize, len: usize },
    Match { at: usize, dist: usize, len: usize },
}

/// The commands of block `b` (starting at `start`), through the device crate's command
/// parser. The parse came from this encoder, so its grammar holds.
fn ops_of(b: &BlockParse, start: usize, base: u32) -> Vec<Op> {
    let mut p = Parser::new(b.streams(), base);
    let mut at = start;
    let mut ops = Vec::with_capacity(b.commands.len());
    while let Ok(Some(c)) = p.next_command() {
        match c {
            Command::Literals(n) => {
                ops.push(Op::Literals {
                    at,
                    len: n as usize,
                });
                at += n as usize;
            }
            Command::Match { dist, len } => {
                ops.push(Op::Match {
                    at,
                    dist: dist as usize,
                    len: len as usize,
                });
                at += len as usize;
            }
            Command::Reset => {}
        }
    }
    ops
}

/// The level pass: every match's dependency level under the parse `blocks` (positions from
/// `seg_start`), in command order per block; `vals` is scratch of the segment's length.
fn levels(ops: &[Vec<Op>], seg_start: usize, vals: &mut [u32]) -> Vec<Vec<u32>> {
    ops.iter()
        .map(|block| {
            let mut lv = Vec::new();
            for &op in block {
                match op {
                    Op::Literals { at, len } => vals[at - seg_start..][..len].fill(0),
                    Op::Match { at, dist, len } => {
                        let src = at - dist - seg_start;
                        let l = vals[src..src + len.min(dist)]
                            .iter()
                            .copied()
                            .max()
                            .unwrap_or(0);
                        vals[at - seg_start..][..len].fill(l + 1);
                        lv.push(l);
                    }
                }
            }
            lv
        })
        .collect()
}

/// The block `ops` (of `data`, starting at `start`) emitted as streams (FORMAT.md §4.1-§4.3):
/// adjacent literals merged into runs of at most 128, each match as a repeat of the first
/// history slot holding its distance (when `repeat_codes`) or as a new match.
fn emit(data: &[u8], ops: &[Op], start: usize, base: u32, repeat_codes: bool) -> BlockParse {
    let mut out = BlockParse {
        lowest_source: start,
        ..Default::default()
    };
    out.commands.push(CMD_RESET);
    let mut hist = History::RESET;
    let mut lit: Option<Range<usize>> = None;
    let flush = |out: &mut BlockParse, lit: &mut Option<Range<usize>>| {
        if let Some(r) = lit.take() {
            for chunk in data[r].chunks(128) {
                out.commands.push((chunk.len() - 1) as u8);
                out.literals.extend_from_slice(chunk);
            }
        }
    };
    for &op in ops {
        match op {
            Op::Literals { at, len } => {
                lit = Some(lit.map_or(at..at + len, |r| r.start..at + len));
            }
            Op::Match { at, dist, len } => {
                flush(&mut out, &mut lit);
                let d = dist as u32;
                let slot = if repeat_codes {
                    hist.0.iter().position(|&h| h == d)
                } else {
                    None
                };
                let (c, extra) = match_code(slot, len as u32, base);
                out.commands.push(c);
                if let Some(v) = extra {
                    write_varint(v, &mut out.lengths);
                }
                match slot {
                    Some(i) => {
                        hist.take(i);
                    }
                    None => {
                        write_offset(d, &mut out.offsets, &mut out.offset_tails);
                        hist.push(d);
                    }
                }
                out.lowest_source = out.lowest_source.min(at - dist);
                out.matches += 1;
            }
        }
    }
    flush(&mut out, &mut lit);
    out
}

/// Applies the paper's depth cap `params.depth_cap` (> 0) to `blocks`, the uncapped parse of
/// `data[seg]` in blocks of `block_size`: the level and rewrite passes of the module docs, to
/// the fixed point. Returns the blocks (the untouched ones as they were) and the number of
/// rewrite passes that forced literals.
pub fn cap_to_fixed_point(
    data: &[u8],
    seg: Range<usize>,
    block_size: usize,
    params: &ParseParams,
    mut blocks: Vec<BlockParse>,
) -> (Vec<BlockParse>, u32) {
    let cap = params.depth_cap;
    assert!(cap > 0, "a depth cap to enforce");
    let base = match_base(params.min_match.max(MIN_MATCH_BASE));
    let starts: Vec<usize> = (0..blocks.len())
        .map(|i| seg.start + i * block_size)
        .collect();
    let mut ops: Vec<Vec<Op>> = blocks
        .iter()
        .zip(&starts)
        .map(|(b, &s)| ops_of(b, s, base))
        .collect();
    let mut vals = vec![0u32; seg.len()];
    let mut passes = 0;
    loop {
        let lv = levels(&ops, seg.start, &mut vals);
        if lv.iter().flatten().all(|&l| l < cap) {
            break;
        }
        passes += 1;
        // (a match above the cap reads one at the level below it, so some match is at
        // exactly the cap: every pass forces at least one)
        for (bi, block) in ops.iter_mut().enumerate() {
            if !lv[bi].contains(&cap) {
                continue;
            }
            let mut k = 0;
            for op in block.iter_mut() {
                if let Op::Match { at, len, .. } = *op {
                    if lv[bi][k] == cap {
                        *op = Op::Literals { at, len };
                    }
                    k += 1;
                }
            }
            blocks[bi] = emit(data, block, starts[bi], base, params.repeat_codes);
        }
    }
    // the block tables' depths under the final parse
    let lv = levels(&ops, seg.start, &mut vals);
    for (b, l) in blocks.iter_mut().zip(&lv) {
        b.max_depth = l.iter().copied().max().unwrap_or(0);
    }
    (blocks, passes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` copies of the 10 literals before them: a chain of matches at levels 0, 1, ...
    /// (distance 10 is in no reset history slot).
    fn chain(data: &[u8], n: usize) -> BlockParse {
        let mut ops = vec![Op::Literals { at: 0, len: 10 }];
        for k in 1..=n {
            ops.push(Op::Match {
                at: 10 * k,
                dist: 10,
                len: 10,
            });
        }
        emit(data, &ops, 0, 6, true)
    }

    fn cap(c: u32) -> ParseParams {
        ParseParams {
            depth_cap: c,
            ..Default::default()
        }
    }

    /// The passes by hand. Levels 0, 1, 2: under cap 2 the level-2 match is forced; under
    /// cap 1 the level-1 match is, after which the third copy reads forced literals and
    /// drops to level 0 (kept, as a repeat). Levels 0-3 under cap 1 take two rewrites: the
    /// level-1 match, then the fourth copy, which has dropped to exactly level 1.
    #[test]
    fn forces_the_shallowest_deep_matches_to_a_fixed_point() {
        let data = b"ABCDEFGHIJ".repeat(5);
        let c3 = chain(&data, 3);
        // reset, 10 literals, new match (len 10 = base 6 + 4), two repeats of slot 0
        assert_eq!(c3.commands, [0xFF, 0x09, 0xC4, 0x84, 0x84]);
        assert_eq!(c3.offsets, [10]);
        let (b, passes) = cap_to_fixed_point(&data, 0..40, 4096, &cap(2), vec![c3.clone()]);
        assert_eq!(passes, 1);
        // reset, 10 literals, two matches, 10 forced literals
        assert_eq!(b[0].commands, [0xFF, 0x09, 0xC4, 0x84, 0x09]);
        assert_eq!(b[0].literals, data[..10].repeat(2));
        assert_eq!(b[0].max_depth, 1);
        let (b, passes) = cap_to_fixed_point(&data, 0..40, 4096, &cap(1), vec![c3.clone()]);
        assert_eq!(passes, 1);
        assert_eq!(b[0].commands, [0xFF, 0x09, 0xC4, 0x09, 0x84]);
        assert_eq!(b[0].max_depth, 0);
        let c4 = chain(&data, 4);
        let (b, passes) = cap_to_fixed_point(&data, 0..50, 4096, &cap(1), vec![c4]);
        assert_eq!(passes, 2);
        assert_eq!(b[0].commands, [0xFF, 0x09, 0xC4, 0x09, 0x84, 0x09]);
        assert_eq!(b[0].max_depth, 0);
        // a cap the parse already keeps changes nothing
        let (b, passes) = cap_to_fixed_point(&data, 0..40, 4096, &cap(3), vec![c3.clone()]);
        assert_eq!((passes, &b[0]), (0, &BlockParse { max_depth: 2, ..c3 }));
    }
}
