//! Region strings parsed exactly as `samtools faidx` parses them (htslib 1.16
//! `hts_parse_region`), and sequence coordinates turned into byte offsets of the original file.
//!
//! `name`, `name:beg`, `name:beg-end`, `name:beg-`, `name:-end`, 1-based and inclusive; the
//! result is 0-based and half-open. Numbers may hold thousands commas (`1,000`), a decimal
//! part (dropped with a warning) and an exponent or a `k`/`m`/`g` suffix (`2k` = 2000). A name
//! that contains `:` is found whole first (`chrUn:1-5` names the record `chrUn:1-5` when the
//! index has one; if the part before the last `:` is a record too, the region is ambiguous and
//! refused); braces quote a name: `{chrUn:1-5}:10-20`. The quirks follow htslib: `name:0`
//! is the whole record, `name:0-5` and `name:-` select nothing, `name:5-` runs to the end.

use thiserror::Error;

use super::index::{FaiRecord, FastaIndex};

/// htslib's `HTS_POS_MAX`: the end of a region given without an end.
pub const HTS_POS_MAX: i64 = ((i32::MAX as i64) << 32) | i32::MAX as i64;

/// A parsed region: a record and 0-based half-open coordinates, not yet clipped to the
/// record's length (`end` is [`HTS_POS_MAX`] where no end was given). As in htslib, `beg`
/// is -1 for `name:0-N` and `name:-`, which select nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    /// Position of the record in [`FastaIndex::records`].
    pub id: usize,
    /// First base, 0-based.
    pub beg: i64,
    /// One past the last base.
    pub end: i64,
}

impl Region {
    /// The coordinates clipped to a record of `length` bases as samtools clips them
    /// (`fai_get_val`): both ends to at most `length`, then `beg` to at most `end`. The
    /// comparisons are unsigned, as in htslib, so a negative `beg` clips to the end.
    pub fn clipped(&self, length: u64) -> (u64, u64) {
        let end = (self.end as u64).min(length);
        let beg = (self.beg as u64).min(length).min(end);
        (beg, end)
    }
}

/// Why a region string selects nothing. The messages are htslib's where it prints one.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum RegionError {
    /// `{` without a closing `}`.
    #[error("Mismatching braces in \"{}\"", String::from_utf8_lossy(.0))]
    MismatchedBraces(Vec<u8>),
    /// Both the whole string and the part before its last `:` name records.
    #[error("Range is ambiguous. Use {{{}}} or {{{}}}{} instead", String::from_utf8_lossy(.whole), String::from_utf8_lossy(.name), String::from_utf8_lossy(.coords))]
    Ambiguous {
        whole: Vec<u8>,
        name: Vec<u8>,
        coords: Vec<u8>,
    },
    /// No record has this name (the name as looked up).
    #[error("sequence \"{}\" not found", String::from_utf8_lossy(.0))]
    NotFound(Vec<u8>),
    /// A start of 0 or below followed by an end (`name:0-`, `name:-5-10`).
    #[error("Coordinates must be > 0")]
    CoordinatesNotPositive,
    /// Text after the coordinates that is not part of them.
    #[error("Unexpected string \"{}\" after region", String::from_utf8_lossy(.0))]
    UnexpectedString(Vec<u8>),
    /// A start after the end (`name:20-10`); 0-based half-open values.
    #[error("empty range: start {beg} is not before end {end}")]
    EmptyRange { beg: i64, end: i64 },
}

/// Parses `region` against `index` as htslib's `hts_parse_region` does for `samtools faidx`
/// (thousands separators allowed, `name:100` meaning from base 100 to the end). Bytes from
/// the first NUL on are ignored, as C does.
///
/// # Errors
/// [`RegionError`] where samtools would print "not found" for the region.
pub fn parse_region(index: &FastaIndex, region: &[u8]) -> Result<Region, RegionError> {
    parse_logged(index, region, &mut Vec::new())
}

/// The byte offset of base `pos` (0-based) of `record` in the original file: OFFSET +
/// `pos / LINEBASES * LINEWIDTH + pos % LINEBASES`. `None` where LINEBASES is 0 or the
/// offset passes `u64::MAX`.
pub fn base_offset(record: &FaiRecord, pos: u64) -> Option<u64> {
    seq_base_offset(record.offset, record, pos)
}

pub(super) fn seq_base_offset(start: u64, record: &FaiRecord, pos: u64) -> Option<u64> {
    let lb = u64::from(record.line_bases);
    if lb == 0 {
        return None;
    }
    let lw = u64::from(record.line_width);
    (pos / lb)
        .checked_mul(lw)
        .and_then(|x| x.checked_add(pos % lb))
        .and_then(|x| x.checked_add(start))
}

/// The bytes of the original file that hold bases `beg..end` (0-based, half-open) of
/// `record`, line ends inside included: `start..end` byte offsets. Empty where `beg >= end`;
/// `None` where LINEBASES is 0 or an offset passes `u64::MAX`. Exact for files that [`FastaIndex::build`] accepted and whose
/// lines have no inner whitespace.
pub fn byte_range(record: &FaiRecord, beg: u64, end: u64) -> Option<std::ops::Range<u64>> {
    let start = base_offset(record, beg)?;
    if beg >= end {
        return Some(start..start);
    }
    let last = base_offset(record, end - 1)?;
    Some(start..last + 1)
}

/// `s` up to its first NUL byte (C string semantics).
pub(super) fn until_nul(s: &[u8]) -> &[u8] {
    match s.iter().position(|&b| b == 0) {
        Some(n) => &s[..n],
        None => s,
    }
}

/// The byte at `i`, or 0 past the end (C string semantics).
#[inline]
fn at(s: &[u8], i: usize) -> u8 {
    s.get(i).copied().unwrap_or(0)
}

/// htslib's `hts_parse_decimal` with `HTS_PARSE_THOUSANDS_SEP`, from `s[start..]`: the value
/// (wrapping on overflow, as the C on common machines) and the index after the number (or
/// `start` where there are no digits). Warnings go to `log`.
fn parse_decimal(s: &[u8], start: usize, log: &mut Vec<Vec<u8>>) -> (i64, usize) {
    let mut i = start;
    while matches!(at(s, i), b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r') {
        i += 1;
    }
    let num_start = i;
    let mut n: i64 = 0;
    let (mut digits, mut decimals) = (0u32, 0i32);
    let mut e: i32 = 0;
    let mut negative = false;
    if matches!(at(s, i), b'+' | b'-') {
        negative = at(s, i) == b'-';
        i += 1;
    }
    let push = |n: i64, c: u8| n.wrapping_mul(10).wrapping_add(i64::from(c - b'0'));
    loop {
        let c = at(s, i);
        if c.is_ascii_digit() {
            digits += 1;
            n = push(n, c);
            i += 1;
        } else if c == b',' {
            i += 1;
        } else {
            break;
        }
    }
    if at(s, i) == b'.' {
        i += 1;
        while at(s, i).is_ascii_digit() {
            decimals += 1;
            digits += 1;
            n = push(n, at(s, i));
            i += 1;
        }
    }
    match at(s, i) {
        b'e' | b'E' => {
            i += 1;
            let mut eneg = false;
            if matches!(at(s, i), b'+' | b'-') {
                eneg = at(s, i) == b'-';
                i += 1;
            }
            while at(s, i).is_ascii_digit() {
                e = e.wrapping_mul(10).wrapping_add(i32::from(at(s, i) - b'0'));
                i += 1;
            }
            if eneg {
                e = e.wrapping_neg();
            }
        }
        b'k' | b'K' => {
            e = e.wrapping_add(3);
            i += 1;
        }
        b'm' | b'M' => {
            e = e.wrapping_add(6);
            i += 1;
        }
        b'g' | b'G' => {
            e = e.wrapping_add(9);
            i += 1;
        }
        _ => {}
    }
    e = e.wrapping_sub(decimals);
    // 64 steps bring any i64 to 0 in both directions, so the loops are capped there with the
    // same result as htslib's uncapped loops.
    let mut lost: i64 = 0;
    if e > 0 {
        for _ in 0..e.min(64) {
            n = n.wrapping_mul(10);
        }
    } else {
        for _ in 0..e.unsigned_abs().min(64) {
            lost += n % 10;
            n /= 10;
        }
    }
    if lost > 0 {
        let mut m = b"[W::hts_parse_decimal] Discarding fractional part of ".to_vec();
        m.extend_from_slice(&s[num_start.min(s.len())..i.min(s.len())]);
        log.push(m);
    }
    let end = if digits > 0 { i } else { start };
    (if negative { n.wrapping_neg() } else { n }, end)
}

fn log_error(log: &mut Vec<Vec<u8>>, parts: &[&[u8]]) {
    let mut m = b"[E::hts_parse_region] ".to_vec();
    for p in parts {
        m.extend_from_slice(p);
    }
    log.push(m);
}

/// A port of htslib 1.16 `hts_parse_region` (flags 0, so thousands separators on), with its
/// log lines (without line ends) pushed to `log`.
pub(super) fn parse_logged(
    index: &FastaIndex,
    region: &[u8],
    log: &mut Vec<Vec<u8>>,
) -> Result<Region, RegionError> {
    let s = until_nul(region);
    let len = s.len();
    let (base, s_len, colon, quoted) = if at(s, 0) == b'{' {
        let Some(close) = s.iter().position(|&b| b == b'}') else {
            log_error(log, &[b"Mismatching braces in \"", s, b"\""]);
            return Err(RegionError::MismatchedBraces(s.to_vec()));
        };
        let colon = (at(s, close + 1) == b':').then_some(close + 1);
        (1usize, len - 1, colon, 1usize)
    } else {
        (0, len, s.iter().rposition(|&b| b == b':'), 0)
    };
    let Some(colon) = colon else {
        let name = &s[base..base + s_len - quoted];
        return match index.id(name) {
            Some(id) => Ok(Region {
                id,
                beg: 0,
                end: HTS_POS_MAX,
            }),
            None => Err(RegionError::NotFound(name.to_vec())),
        };
    };
    if quoted == 0 {
        if let Some(id) = index.id(s) {
            if index.id(&s[..colon]).is_some() {
                log_error(
                    log,
                    &[
                        b"Range is ambiguous. Use {",
                        s,
                        b"} or {",
                        &s[..colon],
                        b"}",
                        &s[colon..],
                        b" instead",
                    ],
                );
                return Err(RegionError::Ambiguous {
                    whole: s.to_vec(),
                    name: s[..colon].to_vec(),
                    coords: s[colon..].to_vec(),
                });
            }
            return Ok(Region {
                id,
                beg: 0,
                end: HTS_POS_MAX,
            });
        }
    }
    let name = &s[base..colon - quoted];
    let Some(id) = index.id(name) else {
        return Err(RegionError::NotFound(name.to_vec()));
    };
    let unexpected = |log: &mut Vec<Vec<u8>>, at_: usize| {
        let rest = &s[at_.min(len)..];
        log_error(log, &[b"Unexpected string \"", rest, b"\" after region"]);
        Err(RegionError::UnexpectedString(rest.to_vec()))
    };
    let (n, mut hyphen) = parse_decimal(s, colon + 1, log);
    let beg = n.wrapping_sub(1);
    let h = at(s, hyphen);
    if beg < 0 {
        if beg != -1 && h == b'-' && at(s, colon + 1) != 0 {
            log_error(log, &[b"Coordinates must be > 0"]);
            return Err(RegionError::CoordinatesNotPositive);
        }
        if h.is_ascii_digit() || h == 0 || h == b',' {
            // `name:-100` means `name:1-100`.
            let end = if beg == -1 {
                HTS_POS_MAX
            } else {
                beg.wrapping_add(1).wrapping_neg()
            };
            return Ok(Region { id, beg: 0, end });
        } else if beg < -1 {
            return unexpected(log, hyphen);
        }
    }
    let mut end = if h == 0 {
        HTS_POS_MAX
    } else if h == b'-' {
        let (e, after) = parse_decimal(s, hyphen + 1, log);
        hyphen = after;
        let c = at(s, hyphen);
        if c != 0 && c != b',' {
            return unexpected(log, hyphen);
        }
        e
    } else {
        return unexpected(log, hyphen);
    };
    if end == 0 {
        end = HTS_POS_MAX;
    }
    if beg >= end {
        return Err(RegionError::EmptyRange { beg, end });
    }
    Ok(Region { id, beg, end })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idx(data: &[u8]) -> FastaIndex {
        FastaIndex::build(data).unwrap()
    }

    #[test]
    fn parse_forms() {
        let i = idx(b">a\nACGTACGTAC\n>b:1-2\nAC\n>b\nGG\n");
        let p = |s: &str| parse_region(&i, s.as_bytes());
        assert_eq!(
            p("a"),
            Ok(Region {
                id: 0,
                beg: 0,
                end: HTS_POS_MAX
            })
        );
        assert_eq!(
            p("a:3"),
            Ok(Region {
                id: 0,
                beg: 2,
                end: HTS_POS_MAX
            })
        );
        assert_eq!(
            p("a:3-5"),
            Ok(Region {
                id: 0,
                beg: 2,
                end: 5
            })
        );
        assert_eq!(
            p("a:1,0-2,0"),
            Ok(Region {
                id: 0,
                beg: 9,
                end: 20
            })
        );
        assert_eq!(
            p("a:-4"),
            Ok(Region {
                id: 0,
                beg: 0,
                end: 4
            })
        );
        assert_eq!(
            p("a:2k"),
            Ok(Region {
                id: 0,
                beg: 1999,
                end: HTS_POS_MAX
            })
        );
        assert_eq!(p("a:5-3"), Err(RegionError::EmptyRange { beg: 4, end: 3 }));
        assert_eq!(p("a:x"), Err(RegionError::UnexpectedString(b"x".to_vec())));
        assert_eq!(
            p("a:0-"),
            Ok(Region {
                id: 0,
                beg: -1,
                end: HTS_POS_MAX
            })
        );
        assert_eq!(p("a:-5-10"), Err(RegionError::CoordinatesNotPositive));
        assert!(matches!(p("b:1-2"), Err(RegionError::Ambiguous { .. })));
        assert_eq!(
            p("{b:1-2}"),
            Ok(Region {
                id: 1,
                beg: 0,
                end: HTS_POS_MAX
            })
        );
        assert_eq!(
            p("{b}:2"),
            Ok(Region {
                id: 2,
                beg: 1,
                end: HTS_POS_MAX
            })
        );
        assert_eq!(p("{b"), Err(RegionError::MismatchedBraces(b"{b".to_vec())));
        assert_eq!(p("c"), Err(RegionError::NotFound(b"c".to_vec())));
    }

    // Expected outputs below were produced by samtools 1.16.1 on the same bytes and regions.
    #[test]
    fn offsets_skip_line_ends() {
        let i = idx(b">a\nACGT\r\nACGT\r\nAC\r\n");
        let r = &i.records()[0];
        assert_eq!(base_offset(r, 0), Some(3));
        assert_eq!(base_offset(r, 4), Some(9));
        assert_eq!(byte_range(r, 3, 9), Some(6..16));
    }
}
