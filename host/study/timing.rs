//! Timing measurements of the study on the CPU (`aceapex reproduce`'s `bench.noise` and
//! `seek.cpu` claims): the spread of a repeated measurement, and the latency of region reads
//! on one thread as `examples/region_latency.rs` measures it (requests at fixed pseudo-random
//! places, a warm-up pass whose answers are checked against the original, then each request
//! timed alone with the wall clock).

use crate::{Error, Reader};
use std::time::Instant;

/// The spread of repeated timings of one measurement.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    /// Timings taken.
    pub runs: usize,
    /// Median, fastest and slowest (the unit of the timings given).
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// Coefficient of variation: the population standard deviation over the mean, in per cent.
    pub cv_percent: f64,
    /// Slowest over fastest, minus one, in per cent.
    pub range_percent: f64,
}

impl Spread {
    /// The spread of `t` (any unit, at least one timing; `None` when empty).
    pub fn of(t: &[f64]) -> Option<Spread> {
        if t.is_empty() {
            return None;
        }
        let mut s = t.to_vec();
        s.sort_by(f64::total_cmp);
        let n = s.len() as f64;
        let mean = s.iter().sum::<f64>() / n;
        let var = s.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
        let (min, max) = (s[0], s[s.len() - 1]);
        Some(Spread {
            runs: s.len(),
            median: quantile(&s, 0.5),
            min,
            max,
            cv_percent: if mean > 0.0 {
                100.0 * var.sqrt() / mean
            } else {
                0.0
            },
            range_percent: if min > 0.0 {
                100.0 * (max / min - 1.0)
            } else {
                0.0
            },
        })
    }
}

/// The value at quantile `q` (0 to 1) of sorted, non-empty `v` (nearest rank).
pub fn quantile(v: &[f64], q: f64) -> f64 {
    v[((v.len() - 1) as f64 * q.clamp(0.0, 1.0)).round() as usize]
}

/// Latency quantiles of one kind of request, in microseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Latency {
    /// Requests timed.
    pub requests: usize,
    /// Bytes per request.
    pub bytes: usize,
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
}

impl Latency {
    /// The quantiles of `t` (microseconds, non-empty) for requests of `bytes`.
    pub fn of(mut t: Vec<f64>, bytes: usize) -> Latency {
        t.sort_by(f64::total_cmp);
        Latency {
            requests: t.len(),
            bytes,
            p50_us: quantile(&t, 0.5),
            p90_us: quantile(&t, 0.9),
            p99_us: quantile(&t, 0.99),
            max_us: t[t.len() - 1],
        }
    }
}

/// A small xorshift generator: the same requests on every run (`examples/region_latency.rs`
/// uses the same seed).
#[derive(Clone, Debug)]
pub struct Rng(pub u64);

impl Rng {
    /// A value in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

/// The seed of the requests.
pub const SEED: u64 = 0x9E37_79B9_7F4A_7C15;

/// Offsets of `n` requests of `len` bytes in an original of `size` bytes: at any byte when
/// `align` is 1, else at multiples of `align` (and never past the end). Empty when `len`
/// exceeds `size`.
pub fn offsets(size: u64, len: u64, align: u64, n: usize) -> Vec<u64> {
    if len > size || len == 0 {
        return Vec::new();
    }
    let mut r = Rng(SEED);
    let align = align.max(1);
    let places = (size - len) / align + 1;
    (0..n).map(|_| r.below(places) * align).collect()
}

/// Times `reader.read_range` on requests of `len` bytes at `offsets` on this thread: a
/// warm-up pass whose answers are checked against `original`, then each request timed alone.
///
/// Errors: the reader's errors. A read whose bytes differ from the original is
/// [`CheckedLatency::Differs`], not timed.
pub fn region_latency(
    reader: &Reader<'_>,
    original: &[u8],
    offsets: &[u64],
    len: usize,
) -> Result<CheckedLatency, Error> {
    let mut buf = vec![0u8; len];
    for &o in offsets {
        reader.read_range(o, &mut buf)?;
        if buf[..] != original[o as usize..o as usize + len] {
            return Ok(CheckedLatency::Differs(o));
        }
    }
    let mut t = Vec::with_capacity(offsets.len());
    for &o in offsets {
        let t0 = Instant::now();
        reader.read_range(o, &mut buf)?;
        t.push(t0.elapsed().as_secs_f64() * 1e6);
        std::hint::black_box(&buf);
    }
    Ok(if t.is_empty() {
        CheckedLatency::NoRequest
    } else {
        CheckedLatency::Timed(Latency::of(t, len))
    })
}

/// The outcome of [`region_latency`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CheckedLatency {
    /// Every answer matched the original; the quantiles.
    Timed(Latency),
    /// The read at this offset returned other bytes than the original.
    Differs(u64),
    /// No request (the original is shorter than one request).
    NoRequest,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_by_hand() {
        // 1, 2, 3, 4, 10: mean 4, population variance (9 + 4 + 1 + 0 + 36) / 5 = 10
        let s = Spread::of(&[4.0, 10.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!((s.runs, s.median, s.min, s.max), (5, 3.0, 1.0, 10.0));
        assert!((s.cv_percent - 100.0 * 10f64.sqrt() / 4.0).abs() < 1e-9);
        assert!((s.range_percent - 900.0).abs() < 1e-9);
        assert_eq!(Spread::of(&[]), None);
        let flat = Spread::of(&[2.0; 4]).unwrap();
        assert_eq!((flat.cv_percent, flat.range_percent), (0.0, 0.0));
    }

    #[test]
    fn offsets_stay_inside_and_aligned() {
        let o = offsets(100_000, 16_384, 16_384, 500);
        assert_eq!(o.len(), 500);
        assert!(o.iter().all(|&x| x % 16_384 == 0 && x + 16_384 <= 100_000));
        // every one of the 6 aligned places is drawn
        let mut d = o.clone();
        d.sort();
        d.dedup();
        assert_eq!(d, [0, 16_384, 32_768, 49_152, 65_536, 81_920]);
        let r = offsets(5_000, 5_000, 1, 3);
        assert_eq!(r, [0, 0, 0]);
        assert!(offsets(4_999, 5_000, 1, 3).is_empty());
    }

    #[test]
    fn region_latency_checks_the_bytes() {
        let original: Vec<u8> = (0..200_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let archive = crate::compress(&original, &crate::Options::default()).unwrap();
        let reader = Reader::new(&archive).unwrap();
        let off = offsets(original.len() as u64, 5_000, 1, 50);
        match region_latency(&reader, &original, &off, 5_000).unwrap() {
            CheckedLatency::Timed(l) => {
                assert_eq!((l.requests, l.bytes), (50, 5_000));
                assert!(l.p50_us <= l.p99_us && l.p99_us <= l.max_us);
            }
            other => panic!("{other:?}"),
        }
        // another original: the first read differs
        let other = vec![0u8; original.len()];
        assert!(matches!(
            region_latency(&reader, &other, &off, 5_000).unwrap(),
            CheckedLatency::Differs(_)
        ));
    }
}
