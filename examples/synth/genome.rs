//! A synthetic genome of any size made of real ones: the records of source FASTA files,
//! repeated, each repeat after the first with point mutations, written as FASTA.
//!
//! Layout (a pure function of the sources, the seed and the size; see [`Synth`]):
//! - repeat `r` (0, 1, 2, ...) holds every source record in order, each as a header line
//!   `>rep{r}_{name}` (`name`: the first word of the source header, made unique with `.2`,
//!   `.3`, ... when two sources share it) and its bases wrapped at the width of the record's
//!   first sequence line, every line ending in `\n` (a `\r` or blank line of the source
//!   is dropped);
//! - repeat 0 holds the bases as they are; in repeat `r >= 1`, each run of [`MUT_CHUNK`]
//!   bases of a record gets 0, 1, 1 or 2 substitutions (chosen with one keyed hash of
//!   `(seed, r, record, run)`: one per 1,024 bases on average); a substitution turns an A,
//!   C, G or T into one of the three others, keeping the case, and leaves any other letter
//!   (N, IUPAC codes) as it is;
//! - the output is the longest prefix of the repeats, at most `size` bytes, that ends at the
//!   end of a line (so the last record may be cut short, whole lines only).
//!
//! Any byte range is computed on its own ([`Synth::bytes_at`]): the stream is the same
//! function over consecutive chunks, so a checker regenerates exactly what was written.

use std::io::Write;
use std::path::Path;

/// Bases per mutation run: each run of a record's bases gets 0 to 2 substitutions.
pub const MUT_CHUNK: u64 = 1024;

/// One source record: its unique name and its bases laid out in lines (`\n`-terminated).
struct Record {
    name: Vec<u8>,
    /// The bases wrapped at `width`, each line followed by `\n`.
    body: Vec<u8>,
    /// Bases per full line.
    width: u64,
    /// Number of bases.
    bases: u64,
}

/// A synthetic genome: sources, seed and size fixed at construction.
pub struct Synth {
    seed: u64,
    records: Vec<Record>,
    /// Per record: its offset in a repeat, not counting the repeat number's digits
    /// (`rec_base[i] + i * digits(r)` is its offset in repeat `r`); one entry more, the total.
    rec_base: Vec<u64>,
    len: u64,
}

/// Decimal digits of `r`.
fn digits(r: u64) -> u64 {
    let mut d = 1;
    let mut x = r;
    while x >= 10 {
        x /= 10;
        d += 1;
    }
    d
}

/// A 64-bit mix (splitmix64's finaliser).
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The keyed hash that places the substitutions of run `run` of record `rec` in repeat `r`.
fn run_hash(seed: u64, r: u64, rec: u64, run: u64) -> u64 {
    let a = mix(seed ^ 0x9e37_79b9_7f4a_7c15);
    let b = mix(a ^ r.wrapping_mul(0xd6e8_feb8_6659_fd93));
    let c = mix(b ^ rec.wrapping_mul(0xa076_1d64_78bd_642f));
    mix(c ^ run.wrapping_mul(0xe703_7ed1_a0b4_28db))
}

/// `b` substituted by choice `k` (0..3) among the three other bases, keeping the case;
/// `None` for a letter that is not A, C, G or T.
fn substitute(b: u8, k: u64) -> Option<u8> {
    const BASES: &[u8; 4] = b"ACGT";
    let upper = b.to_ascii_uppercase();
    let i = BASES.iter().position(|&x| x == upper)?;
    let n = BASES[(i + 1 + k as usize % 3) % 4];
    Some(if b.is_ascii_lowercase() {
        n.to_ascii_lowercase()
    } else {
        n
    })
}

/// A source record as read: its name, its bases and its first line's width.
type SourceRecord = (Vec<u8>, Vec<u8>, u64);

/// The records of FASTA text `text`: `(first word of the header, bases, first line width)`;
/// records without bases are left out.
fn parse_fasta(label: &str, text: &[u8]) -> Result<Vec<SourceRecord>, String> {
    let mut out: Vec<SourceRecord> = Vec::new();
    let mut cur: Option<SourceRecord> = None;
    for line in text.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if let Some(h) = line.strip_prefix(b">") {
            out.extend(cur.take().filter(|c| c.2 > 0));
            let name: Vec<u8> = h
                .split(|b| b.is_ascii_whitespace())
                .next()
                .unwrap_or_default()
                .to_vec();
            if name.is_empty() {
                return Err(format!("{label}: a header without a name"));
            }
            cur = Some((name, Vec::new(), 0));
        } else if !line.is_empty() {
            let Some(c) = cur.as_mut() else {
                return Err(format!("{label}: sequence before the first header"));
            };
            if c.2 == 0 {
                c.2 = line.len() as u64;
            }
            if let Some(b) = line.iter().find(|b| !b.is_ascii_graphic()) {
                return Err(format!(
                    "{label}: byte {b:#04x} in a sequence line of {}",
                    { String::from_utf8_lossy(&c.0) }
                ));
            }
            c.1.extend_from_slice(line);
        }
    }
    out.extend(cur.take().filter(|c| c.2 > 0));
    Ok(out)
}

impl Synth {
    /// The genome of the FASTA texts `sources` (`(label for errors, bytes)`), at most `size`
    /// bytes, substitutions keyed by `seed`.
    ///
    /// Errors: a source that is not FASTA, no record with bases, or a `size` smaller than the
    /// first record's header and first line.
    pub fn new(sources: &[(&str, &[u8])], size: u64, seed: u64) -> Result<Synth, String> {
        let mut records: Vec<Record> = Vec::new();
        for (label, text) in sources {
            for (name, bases, width) in parse_fasta(label, text)? {
                let mut unique = name.clone();
                let mut k = 1;
                while records.iter().any(|r| r.name == unique) {
                    k += 1;
                    unique = [&name[..], format!(".{k}").as_bytes()].concat();
                }
                let mut body = Vec::with_capacity(bases.len() + bases.len() / width as usize + 1);
                for line in bases.chunks(width as usize) {
                    body.extend_from_slice(line);
                    body.push(b'\n');
                }
                records.push(Record {
                    name: unique,
                    body,
                    width,
                    bases: bases.len() as u64,
                });
            }
        }
        if records.is_empty() {
            return Err("the sources hold no sequence".into());
        }
        let mut rec_base = vec![0u64];
        for r in &records {
            // ">rep" + "_" + name + "\n" + the body (the repeat's digits come on top)
            let next = rec_base.last().unwrap() + 6 + r.name.len() as u64 + r.body.len() as u64;
            rec_base.push(next);
        }
        let mut s = Synth {
            seed,
            records,
            rec_base,
            len: 0,
        };
        s.len = s.cut(size);
        if s.len == 0 {
            return Err(format!(
                "{size} bytes cannot hold the first record's header and first line"
            ));
        }
        Ok(s)
    }

    /// [`Synth::new`] on FASTA files.
    ///
    /// Errors: as [`Synth::new`], and a file that cannot be read.
    pub fn from_files<P: AsRef<Path>>(paths: &[P], size: u64, seed: u64) -> Result<Synth, String> {
        let texts: Vec<(String, Vec<u8>)> = paths
            .iter()
            .map(|p| {
                let p = p.as_ref();
                std::fs::read(p)
                    .map(|t| (p.display().to_string(), t))
                    .map_err(|e| format!("{}: {e}", p.display()))
            })
            .collect::<Result<_, _>>()?;
        let refs: Vec<(&str, &[u8])> = texts.iter().map(|(l, t)| (&l[..], &t[..])).collect();
        Synth::new(&refs, size, seed)
    }

    /// Its length in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Number of source records in one repeat.
    pub fn records(&self) -> usize {
        self.records.len()
    }

    /// Bytes of one repeat without its headers' repeat numbers.
    pub fn repeat_bytes(&self) -> u64 {
        *self.rec_base.last().unwrap()
    }

    /// Where repeat `r` starts in the unbounded stream.
    fn repeat_start(&self, r: u64) -> u64 {
        let n = self.records.len() as u64;
        // the digits of 0..r: 10 one-digit numbers (0-9), 90 two-digit ones, ...
        let mut sum = 0u64;
        let (mut lo, mut d) = (0u64, 1u64);
        while lo < r {
            let hi = if d == 1 { 10 } else { lo.saturating_mul(10) };
            sum += (hi.min(r) - lo) * d;
            lo = hi;
            d += 1;
        }
        r * self.repeat_bytes() + n * sum
    }

    /// Where record `i` starts in repeat `r`, relative to the repeat's start.
    fn record_start(&self, i: usize, r: u64) -> u64 {
        self.rec_base[i] + i as u64 * digits(r)
    }

    /// The length of the longest prefix of the unbounded stream, at most `size` bytes, that
    /// ends at a line end and holds at least one base of every record it begins.
    fn cut(&self, size: u64) -> u64 {
        // the last repeat starting at or before `size`
        let (mut lo, mut hi) = (0u64, size / self.repeat_bytes() + 1);
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if self.repeat_start(mid) <= size {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        let (r, start) = (lo, self.repeat_start(lo));
        let d = digits(r);
        let mut end = start;
        for (i, rec) in self.records.iter().enumerate() {
            let at = start + self.record_start(i, r);
            let body_at = at + 6 + d + rec.name.len() as u64;
            if body_at + rec.body.len() as u64 <= size {
                end = body_at + rec.body.len() as u64;
                continue;
            }
            // whole lines of this record that fit
            let lines = size.saturating_sub(body_at) / (rec.width + 1);
            if lines > 0 {
                end = body_at + lines * (rec.width + 1);
            }
            break;
        }
        end
    }

    /// The repeat that holds stream offset `x`: `(r, its start)`.
    fn repeat_of(&self, x: u64) -> (u64, u64) {
        let (mut lo, mut hi) = (0u64, x / self.repeat_bytes() + 1);
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if self.repeat_start(mid) <= x {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        (lo, self.repeat_start(lo))
    }

    /// Fills `out` with the bytes at `offset..offset + out.len()`.
    ///
    /// Panics when the range reaches past [`Synth::len`].
    pub fn bytes_at(&self, offset: u64, out: &mut [u8]) {
        assert!(
            offset <= self.len && out.len() as u64 <= self.len - offset,
            "bytes {offset}+{} past the end ({})",
            out.len(),
            self.len
        );
        let mut x = offset;
        let mut o = 0usize;
        while o < out.len() {
            let (r, start) = self.repeat_of(x);
            let d = digits(r);
            let y = x - start;
            // the last record starting at or before `y`
            let (mut i, mut hi) = (0usize, self.records.len() - 1);
            while i < hi {
                let mid = (i + hi).div_ceil(2);
                if self.record_start(mid, r) <= y {
                    i = mid;
                } else {
                    hi = mid - 1;
                }
            }
            let rec = &self.records[i];
            let z = y - self.record_start(i, r);
            let hdr_len = 6 + d + rec.name.len() as u64;
            let n;
            if z < hdr_len {
                let hdr = [format!(">rep{r}_").as_bytes(), &rec.name[..], &b"\n"[..]].concat();
                n = ((hdr_len - z) as usize).min(out.len() - o);
                out[o..o + n].copy_from_slice(&hdr[z as usize..z as usize + n]);
            } else {
                let b = (z - hdr_len) as usize;
                n = (rec.body.len() - b).min(out.len() - o);
                out[o..o + n].copy_from_slice(&rec.body[b..b + n]);
                if r > 0 {
                    self.mutate(r, i, b as u64, &mut out[o..o + n]);
                }
            }
            o += n;
            x += n as u64;
        }
    }

    /// Applies repeat `r`'s substitutions to `out`, which holds record `i`'s body bytes from
    /// body offset `b`.
    fn mutate(&self, r: u64, i: usize, b: u64, out: &mut [u8]) {
        let rec = &self.records[i];
        let line = rec.width + 1;
        // bases before body offset `q`
        let base_of = |q: u64| q / line * rec.width + (q % line).min(rec.width);
        let (first, last) = (base_of(b), base_of(b + out.len() as u64));
        if first >= last {
            return;
        }
        for run in first / MUT_CHUNK..=(last - 1) / MUT_CHUNK {
            let h = run_hash(self.seed, r, i as u64, run);
            let count = [0, 1, 1, 2][(h & 3) as usize];
            for k in 0..count {
                let p = run * MUT_CHUNK + ((h >> (2 + 10 * k)) & (MUT_CHUNK - 1));
                if p < first || p >= last || p >= rec.bases {
                    continue;
                }
                let q = (p + p / rec.width - b) as usize;
                if let Some(s) = substitute(rec.body[(b as usize) + q], h >> (22 + 8 * k)) {
                    out[q] = s;
                }
            }
        }
    }

    /// Writes the whole genome to `w`, in chunks of `chunk` bytes made `threads` at a time.
    ///
    /// Errors: those of `w`.
    pub fn write_to(
        &self,
        w: &mut impl Write,
        threads: usize,
        chunk: usize,
    ) -> std::io::Result<()> {
        let threads = threads.max(1);
        let chunk = chunk.max(1) as u64;
        let mut bufs: Vec<Vec<u8>> = vec![Vec::new(); threads];
        let mut at = 0u64;
        while at < self.len {
            let group: Vec<(u64, usize)> = (0..threads as u64)
                .map(|k| at + k * chunk)
                .filter(|&o| o < self.len)
                .map(|o| (o, chunk.min(self.len - o) as usize))
                .collect();
            std::thread::scope(|s| {
                for (buf, &(o, n)) in bufs.iter_mut().zip(&group) {
                    s.spawn(move || {
                        buf.resize(n, 0);
                        self.bytes_at(o, buf);
                    });
                }
            });
            for (buf, _) in bufs.iter().zip(&group) {
                w.write_all(buf)?;
            }
            at += group.iter().map(|g| g.1 as u64).sum::<u64>();
        }
        w.flush()
    }
}
