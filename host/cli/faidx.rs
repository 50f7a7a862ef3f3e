//! `aceapex faidx`: FASTA regions from an archive, printed exactly as `samtools faidx` prints
//! them from the original file, through the archive's FASTA index record (FORMAT.md §3.5).

use crate::decompress::Device;
use crate::io::{check_input, read_input};
use crate::output::note;
use aceapex::fasta::{faidx, FaidxOptions, FastaIndex, SeqFormat};
use aceapex::{BlockCache, Reader};
use anyhow::{anyhow, bail, Context, Result};
use std::ffi::OsString;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// The help text after the options of `aceapex faidx`.
pub const FAIDX_HELP: &str = "\
Regions are samtools': NAME (the whole sequence), NAME:BEG-END (1-based, inclusive), NAME:BEG
(to the end), NAME:-END; numbers may hold thousands commas (1,000) and k/m/g suffixes. A name
containing ':' is found whole first; braces quote one: {chrUn:1-5}:10-20. Each region is
printed as '>' + the region as typed, then its bases in lines of -n; an end past the sequence
is clipped ('[faidx] Truncated sequence' on standard error), and an unknown name or a malformed
region prints the header alone and its samtools messages and stops with exit status 1 (-c goes
on, exit status 0). Regions of -r come first, then those on the command line; with none,
nothing is printed.

The index comes from the archive: 'aceapex compress' stores it when the input is FASTA that
samtools can index. For an archive without one, faidx restores the whole original to index it
(slower, a note says so), or, where the original is not indexable FASTA, says why and at which
line ('aceapex decompress' and 'extract' still restore its bytes).

--device gpu reads every region of the request with one batch on the GPU (the archive uploaded
once, each block verified there); --device auto does so where a GPU is present and the regions
touch enough blocks to repay the GPU's start-up, else the CPU reads them.

Exit status: 0 success; 1 a region not found (without -c) or unreadable, an archive without
usable index, or an error; 2 usage error.";

/// A source of the original bytes, read as `pread` reads ([`aceapex::fasta::fetch`]).
type ReadAt<'a> = Box<dyn FnMut(u64, &mut [u8]) -> std::io::Result<usize> + 'a>;

/// Decoded blocks kept between regions: regions close to each other (sorted region files,
/// overlapping windows) decode each block once.
const CACHE_BYTES: usize = 64 << 20;

/// The arguments of `aceapex faidx` (help text on [`crate::Cmd::Faidx`]).
#[derive(clap::Args)]
pub struct FaidxArgs {
    /// Archive of a FASTA file, or '-' for standard input.
    pub archive: PathBuf,
    /// Regions to print (NAME, NAME:BEG-END, NAME:BEG, NAME:-END; 1-based, inclusive).
    #[arg(value_name = "REGION")]
    pub regions: Vec<OsString>,
    /// Read regions from FILE, one a line (printed before those on the command line).
    #[arg(short = 'r', long = "region-file", value_name = "FILE")]
    pub region_file: Option<PathBuf>,
    /// Print the sequence index, byte-identical to the .fai file 'samtools faidx' writes for
    /// the original.
    #[arg(long, conflicts_with_all = ["regions", "region_file"])]
    pub fai: bool,
    /// Bases per output line (below 1: 60, with samtools' warning).
    #[arg(
        short = 'n',
        long = "length",
        value_name = "N",
        default_value = "60",
        allow_hyphen_values = true
    )]
    pub length: String,
    /// Go on after a region whose name is not found (exit status 0).
    #[arg(short = 'c', long = "continue")]
    pub continue_on_missing: bool,
    /// Print the reverse complement of each region (header suffix '/rc').
    #[arg(short = 'i', long = "reverse-complement")]
    pub reverse_complement: bool,
    /// Where the regions are decoded: cpu, gpu (one batch on the GPU), or auto (the GPU
    /// where one is present and the regions touch enough blocks to repay its start-up).
    #[arg(long, value_enum, default_value_t = Device::Auto)]
    pub device: Device,
}

/// Blocks a request must touch before `--device auto` reads it on the GPU: about what the CPU
/// reads, one block after another, in the time a GPU takes to start and take the archive
/// (a CUDA context, the kernels, the upload: about 0.7 s against 12 us a block on the CPU for
/// 20,000 regions of hs37 on an H100 machine, docs/PERFORMANCE.md).
const AUTO_GPU_MIN_BLOCKS: u64 = 60_000;

/// Whether `device` has the GPU read `ranges` (`(offset, length)` in original bytes, blocks
/// of `block_size` bytes): always with gpu, never with cpu, with auto where they touch at
/// least [`AUTO_GPU_MIN_BLOCKS`] blocks (an empty range touches none). `faidx` and `extract`.
#[cfg(feature = "gpu")]
pub(crate) fn gpu_repays(ranges: &[(u64, u64)], block_size: u64, device: Device) -> bool {
    let blocks = || -> u64 {
        ranges
            .iter()
            .filter(|r| r.1 > 0)
            .map(|&(o, l)| (o + l - 1) / block_size - o / block_size + 1)
            .sum()
    };
    match device {
        Device::Gpu => true,
        Device::Cpu => false,
        Device::Auto => blocks() >= AUTO_GPU_MIN_BLOCKS,
    }
}

/// Says, where `--device auto` falls back to the CPU, why the GPU is not used (`faidx`,
/// `extract`).
#[cfg(feature = "gpu")]
pub(crate) fn note_cpu_instead(why: impl std::fmt::Display) {
    note(format_args!(
        "the GPU is not used ({why}); reading on the CPU"
    ));
}

/// The bytes of every region of `list` that names bases (parsed and clipped as
/// [`faidx`] does; the others are left to it), sorted by offset, each once.
fn region_byte_ranges(index: &FastaIndex, list: &[Vec<u8>]) -> Vec<(u64, u64)> {
    let mut v: Vec<(u64, u64)> = list
        .iter()
        .filter_map(|r| {
            let region = aceapex::fasta::parse_region(index, r).ok()?;
            let record = &index.records()[region.id];
            let (beg, end) = region.clipped(record.length);
            let bytes = aceapex::fasta::byte_range(record, beg, end)?;
            (bytes.end > bytes.start).then(|| (bytes.start, bytes.end - bytes.start))
        })
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// Ranges read ahead: `(offset, length, at)` sorted by offset, and their bytes.
type Prefetched = (Vec<(u64, u64, u64)>, Vec<u8>);

/// The regions' bytes read on the GPU in one batch, as `(offset, length, at)` triples (the
/// range's bytes at `at` of the returned buffer); `None` where `device` is auto and the CPU
/// reads them (no GPU, too few blocks, an archive the GPU cannot take).
#[cfg(feature = "gpu")]
fn gpu_prefetch(
    bytes: &[u8],
    ranges: &[(u64, u64)],
    block_size: u64,
    device: Device,
) -> Result<Option<Prefetched>> {
    if !gpu_repays(ranges, block_size, device) {
        return Ok(None);
    }
    let read = || -> Result<Vec<u8>, aceapex::Error> {
        let dec = aceapex::GpuDecoder::open()?;
        let reader = dec.upload(bytes)?;
        reader.read_ranges_to_vec(ranges)
    };
    let data = match read() {
        Ok(d) => d,
        Err(e) if device == Device::Gpu => bail!("--device gpu: {e}"),
        Err(e) => {
            note_cpu_instead(e);
            return Ok(None);
        }
    };
    let mut at = 0;
    let table = ranges
        .iter()
        .map(|&(o, l)| {
            at += l;
            (o, l, at - l)
        })
        .collect();
    Ok(Some((table, data)))
}

#[cfg(not(feature = "gpu"))]
fn gpu_prefetch(_: &[u8], _: &[(u64, u64)], _: u64, device: Device) -> Result<Option<Prefetched>> {
    if device == Device::Gpu {
        bail!("--device gpu: this aceapex was built without the `gpu` feature");
    }
    Ok(None)
}

/// Runs `aceapex faidx`; returns the exit status (samtools': 1 after a failed region).
pub fn run(args: FaidxArgs) -> Result<i32> {
    let FaidxArgs {
        archive,
        regions,
        region_file,
        fai,
        length,
        continue_on_missing,
        reverse_complement,
        device,
    } = args;
    check_input(&archive, true)?;
    let line_length = match strtol(&length) {
        n if n >= 1 => usize::try_from(n).unwrap_or(usize::MAX),
        _ => {
            eprintln!("[faidx] bad line length '{length}', using default:60");
            60
        }
    };
    // regions of -r first (samtools' order), each line without its '\n' or '\r\n'
    let mut list: Vec<Vec<u8>> = Vec::new();
    if let Some(file) = &region_file {
        let text = std::fs::read(file)
            .with_context(|| format!("reading the region file {}", file.display()))?;
        list.extend(region_lines(&text).map(<[u8]>::to_vec));
    }
    list.extend(regions.iter().map(|r| os_bytes(r)));

    let bytes = read_input(&archive, true)?;
    let reader = Reader::new(&bytes).with_context(|| format!("reading {}", archive.display()))?;
    let restored;
    let built;
    let (index, mut read): (&FastaIndex, ReadAt<'_>) = match reader.fasta_index() {
        Some(index) => {
            let mut cache = BlockCache::new(&reader, CACHE_BYTES);
            let ranges = if fai || device == Device::Cpu {
                Vec::new()
            } else {
                region_byte_ranges(index, &list)
            };
            let fetched = if ranges.is_empty() {
                None
            } else {
                gpu_prefetch(&bytes, &ranges, u64::from(reader.block_size()), device)?
            };
            match fetched {
                // a read inside a range the GPU fetched is served from it, any other by the
                // CPU (the same bytes: both verified every block they decoded)
                Some((table, data)) => (
                    index,
                    Box::new(move |o, b: &mut [u8]| {
                        let i = table.partition_point(|&(start, _, _)| start <= o);
                        if let Some(&(start, len, at)) = i.checked_sub(1).map(|i| &table[i]) {
                            if o + b.len() as u64 <= start + len {
                                let from = (at + o - start) as usize;
                                b.copy_from_slice(&data[from..from + b.len()]);
                                return Ok(b.len());
                            }
                        }
                        cache.read_at(o, b)
                    }),
                ),
                None => (index, Box::new(move |o, b: &mut [u8]| cache.read_at(o, b))),
            }
        }
        None => {
            restored = reader
                .decompress()
                .with_context(|| format!("restoring {}", archive.display()))?;
            built = index_restored(&archive, &restored)?;
            let data: &[u8] = &restored;
            (
                &built,
                Box::new(move |o: u64, b: &mut [u8]| {
                    let rest = data.get(o as usize..).unwrap_or_default();
                    let n = rest.len().min(b.len());
                    b[..n].copy_from_slice(&rest[..n]);
                    Ok(n)
                }),
            )
        }
    };

    let stdout = std::io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, StdoutNamed(stdout.lock()));
    if fai {
        out.write_all(&index.to_fai())?;
        out.flush()?;
        return Ok(0);
    }
    let mut opts = FaidxOptions::default();
    opts.line_length = line_length;
    opts.continue_on_missing = continue_on_missing;
    opts.reverse_complement = reverse_complement;
    let mut log = std::io::stderr().lock();
    let status = faidx(index, &list, &opts, &mut read, &mut out, &mut log)?;
    out.flush()?;
    Ok(status)
}

/// Standard output whose write errors say where they happened ("writing to standard output:
/// No space left on device"), as the other commands' do.
struct StdoutNamed<W>(W);

impl<W: Write> Write for StdoutNamed<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf).map_err(named)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush().map_err(named)
    }
}

/// `e` with "writing to standard output" before it (its kind kept, so that a closed pipe
/// still ends the command quietly).
fn named(e: std::io::Error) -> std::io::Error {
    std::io::Error::new(e.kind(), format!("writing to standard output: {e}"))
}

/// The index of an archive's restored original that carries no FASTA index record, or an
/// error saying why the original is not indexable FASTA.
fn index_restored(archive: &Path, data: &[u8]) -> Result<FastaIndex> {
    match FastaIndex::build(data) {
        Ok(index) if index.format() == SeqFormat::Fastq => Err(anyhow!(
            "{} holds FASTQ, not FASTA: faidx prints FASTA regions ('aceapex decompress' \
             restores the file for samtools fqidx)",
            archive.display()
        )),
        Ok(index) => {
            note(format_args!(
                "{} carries no FASTA index (compress leaves it out where it would be a large \
                 share of the archive, as for many short records, and older archives have \
                 none): indexed the restored original",
                archive.display()
            ));
            Ok(index)
        }
        Err(why) => Err(anyhow!(
            "{} carries no FASTA index: its original is not FASTA that samtools can index \
             ({why}); 'aceapex decompress' or 'aceapex extract' restore its bytes",
            archive.display()
        )),
    }
}

/// The lines of a region file as htslib's `kgetline` gives them: split at `\n`, one `\r`
/// before it dropped; a last line without `\n` counts when it is not empty.
fn region_lines(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    let body = text.strip_suffix(b"\n").unwrap_or(text);
    let empty = text.is_empty();
    body.split(|&b| b == b'\n')
        .filter(move |_| !empty)
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
}

/// The bytes of a command-line argument (arguments need not be UTF-8).
fn os_bytes(s: &std::ffi::OsStr) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    s.as_bytes().to_vec()
}

/// C `strtol(s, NULL, 10)`: leading whitespace, a sign, the digits that follow (saturating);
/// 0 where there are none.
fn strtol(s: &str) -> i64 {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let mut n: i64 = 0;
    for b in digits.bytes().take_while(u8::is_ascii_digit) {
        n = n.saturating_mul(10).saturating_add(i64::from(b - b'0'));
    }
    if neg {
        -n
    } else {
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn region_file_lines() {
        let lines = |t: &[u8]| region_lines(t).map(<[u8]>::to_vec).collect::<Vec<_>>();
        assert_eq!(lines(b""), Vec::<Vec<u8>>::new());
        assert_eq!(lines(b"a\n"), vec![b"a".to_vec()]);
        assert_eq!(
            lines(b"a\r\n\nb"),
            vec![b"a".to_vec(), b"".to_vec(), b"b".to_vec()]
        );
        assert_eq!(lines(b"\n"), vec![b"".to_vec()]);
    }

    #[test]
    fn strtol_as_c() {
        assert_eq!(strtol("60"), 60);
        assert_eq!(strtol(" 5x"), 5);
        assert_eq!(strtol("abc"), 0);
        assert_eq!(strtol("-3"), -3);
        assert_eq!(strtol("99999999999999999999"), i64::MAX);
    }
}
