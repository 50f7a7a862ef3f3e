//! pyfaidx's coordinates: which bytes of the original FASTA a `get_seq(name, start, end)`
//! reads, computed as pyfaidx 0.9 computes them (`Faidx.from_file` with its defaults,
//! `strict_bounds=False`), so that every call returns what pyfaidx returns, its quirks at the
//! ends of a record included.

use aceapex::fasta::FaiRecord;

/// The byte span of the original data that pyfaidx reads for `get_seq(name, start, end)`
/// (1-based, closed) of record `r`: `Ok(None)` when it reads nothing (an empty string), else
/// `(offset, length)`; the sequence is those bytes without their `\n` and `\r`.
///
/// Errors: pyfaidx's `FetchError` message for a `start` below 1.
pub fn span(r: &FaiRecord, start: i64, end: i64) -> Result<Option<(u64, u64)>, &'static str> {
    let start0 = start - 1;
    if start0 < 0 {
        return Err("Requested start coordinate must be greater than 1.");
    }
    let seq_len = end as i128 - start0 as i128;
    let lenc = i128::from(r.line_bases);
    let lenb = i128::from(r.line_width);
    let rlen = i128::from(r.length);
    let offset = i128::from(r.offset);
    // pyfaidx divides as Python floats and truncates toward zero (`int(x / lenc)`)
    let div = |x: i64| -> i128 {
        if lenc == 0 {
            0
        } else {
            (x as f64 / lenc as f64).trunc() as i128
        }
    };
    let newlines_before = if start0 > 0 { div(start0 - 1) } else { 0 };
    let newlines_to_end = div(end);
    let newline_blen = lenb - lenc;
    let mut seq_blen = (newlines_to_end - newlines_before) * newline_blen + seq_len;
    let bstart = offset + newlines_before * newline_blen + i128::from(start0);
    // the record's end as pyfaidx's index has it: `offset + ceil(rlen / lenc) * newline + rlen`
    let lines = if lenc == 0 {
        0
    } else {
        (r.length as f64 / lenc as f64).ceil() as i128
    };
    let bend = offset + lines * newline_blen + rlen;
    if bstart + seq_blen > bend {
        seq_blen = bend - bstart;
    }
    if seq_blen <= 0 {
        return Ok(None);
    }
    Ok(Some((bstart as u64, seq_blen as u64)))
}

/// The arguments of pyfaidx's `get_seq` for `record[index]` (`FastaRecord.__getitem__` with
/// a slice of step `None` or positive: 0-based, half-open, negative indices counted once from
/// `len`, no clamping; a negative step goes through [`reversed_slice`]).
pub fn slice_args(len: i64, start: Option<i64>, stop: Option<i64>) -> (i64, i64) {
    let mut start = start.unwrap_or(0);
    let mut stop = stop.unwrap_or(len);
    if stop < 0 {
        stop += len;
    }
    if start < 0 {
        start += len;
    }
    (start + 1, stop)
}

/// The `get_seq` arguments for a slice with a negative step, whose `slice.indices(len)` are
/// `(start, stop)` (pyfaidx: `get_seq(name, 1, 0)` when `start <= stop`, else
/// `get_seq(name, stop + 2, start + 1)`); the step is applied to the result afterwards.
pub fn reversed_slice(start: i64, stop: i64) -> (i64, i64) {
    if start <= stop {
        (1, 0)
    } else {
        (stop + 2, start + 1)
    }
}

/// The bytes read, without their line ends (pyfaidx removes every `\n` and `\r`).
pub fn strip_line_ends(mut bytes: Vec<u8>) -> Vec<u8> {
    bytes.retain(|&b| b != b'\n' && b != b'\r');
    bytes
}
