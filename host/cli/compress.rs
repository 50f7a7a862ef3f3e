//! `aceapex compress`: one input at a time, through [`archive::compress`].

use crate::args::{parse_block_size, parse_level, parse_min_match, parse_threads, parse_window};
use crate::io::{
    check_derived_from_file, check_input, check_not_same, each_input, one_output_name, read_input,
    OutFile,
};
use crate::output::{mbps, note, progress_bar};
use crate::{set_threads, usage};
use aceapex::archive::{self, Archive, EncodeOptions};
use aceapex::device::format::MATCH_BASE;
use anyhow::{bail, Result};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The arguments of `aceapex compress` (help text on [`crate::Cmd::Compress`]).
#[derive(clap::Args)]
pub struct CompressArgs {
    /// Input files, or '-' for standard input; several files are each compressed to
    /// their default name (FILE.acx), and an error in one does not stop the others.
    #[arg(required = true, value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
    /// Output file [default: INPUT.acx; standard output for '-' input]; '-' for standard
    /// output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Write to standard output (same as -o -).
    #[arg(short = 'c', long, conflicts_with = "output")]
    pub stdout: bool,
    /// Compression level: 1-5 fast lazy parsing (5 the default), 6 the strongest lazy
    /// level; 7-9 parse every block several ways (a lazy parse and 1-3 price-based
    /// optimal parses) and keep the smallest: 7 two ways, 8 three, 9 four with a deeper
    /// search. 1-7 favour GPU decode speed, so a higher one is not always smaller. 7-9
    /// are 3x to several hundred times slower than 6 (slowest on FASTQ and with a large
    /// --window); 9 is 1-8 % smaller than 7 (E. coli 1 %, Moby-Dick 6 %), most of it
    /// from 8 and 9 giving the entropy coder 4x / 16x fewer interleaved lanes (smaller
    /// archives, GPU decode slower). A progress bar shows on a terminal.
    #[arg(short, long, default_value_t = 5, value_parser = parse_level)]
    pub level: u32,
    /// Block size: a power of two from 4K to 4M (binary: 16K = 16384 bytes).
    #[arg(long, value_name = "SIZE", default_value = "16K", value_parser = parse_block_size)]
    pub block_size: u32,
    /// Largest match distance, 1 byte to 4G - 1 (4294967295 bytes) [default: the block
    /// size]. Larger than the block size lets matches reach earlier blocks: better ratio,
    /// but a block then decodes only after those blocks.
    #[arg(long, value_name = "SIZE", value_parser = parse_window)]
    pub window: Option<u32>,
    /// Shortest match to emit, in bytes (4 up to the block size). Below 6 the length
    /// codes start there too (a version-4 archive, or 5 to 8 with context or packed
    /// literal tables, wide slices or two-bit literals): 1-4 % smaller archives on text and FASTQ, about 10 % slower
    /// decode (more, shorter matches). [default: at levels 8-9, 4 or 6,
    /// whichever compresses a sample of the input smaller (256 KiB, or one block if
    /// larger; a smaller input is compressed both ways); levels 1-7: 6, for decode
    /// speed]
    #[arg(long, value_name = "BYTES", value_parser = parse_min_match)]
    pub min_match: Option<u32>,
    /// Send repeat distances as explicit offsets (no repeat codes).
    #[arg(long)]
    pub no_rep: bool,
    /// One frequency table per stream and group only: no context tables (a pair of
    /// tables, each symbol's picked by a bit of the symbol its rANS lane decoded before;
    /// a version-5 archive). Levels 8-9 take a pair wherever it saves more than 64
    /// bytes (soft-masked genomes 8-17 % smaller, text and FASTQ 1-2 %), levels 1-7 only
    /// where it saves more than 3 % of a group, since pairs decode slower (soft-masked
    /// genomes like dm3 7-17 %, most other files nothing). Without pairs (and
    /// without packed literals, --no-pack, wide slices, --wide-lanes, and two-bit literals,
    /// --two-bit-literals) the archive stays version 3 or 4, for readers of those versions.
    #[arg(long)]
    pub no_context: bool,
    /// No packed literal tables. By default a table group (1 MiB of input) of at least
    /// 4096 literals with at most 16 distinct bytes among them (DNA FASTA, soft-masked or
    /// not; up to an eighth of its blocks, a FASTA header's, may store theirs raw) codes
    /// 2-4 literals per rANS symbol where that is smaller, or at levels 1-7 at most 3 %
    /// larger (a version-6 archive): the literals then decode 2-4 times faster; genomes
    /// code 0.1-1.6 % smaller at level 5, soft-masked ones like TAIR10 about 10 %. With
    /// this flag (and without --wide-lanes and --two-bit-literals, whose archives are
    /// version 7 and 8) the archive stays version 5 or older, for readers of those versions.
    #[arg(long)]
    pub no_pack: bool,
    /// For DNA FASTA decoded on a GPU (levels 1-7): entropy-code the literals only and
    /// store the match streams (commands, lengths, offsets, offset tails) raw, which
    /// leaves a block's literals the GPU's whole rANS warp; matches are priced for that
    /// (fewer, longer ones). At level 6, DNA archives are 1.4-2.8 % larger and decode
    /// 15-30 % faster on the GPU (TAIR10: ratio 3.314 -> 3.239, 164 -> 201 GB/s on an
    /// H200) and 5-40 % faster on the CPU. The cost grows with the share of matches: text
    /// 12-20 % larger, very repetitive data several times larger. 'info' shows it
    /// ("match streams raw").
    #[arg(long)]
    pub raw_match_streams: bool,
    /// With --raw-match-streams, for inputs of up to 2048 blocks (32 MiB at 16 KiB blocks;
    /// larger ones are written without, and a note says so): give each block's literal
    /// slice 64 rANS lanes where that halves a decode chain of at least 64 steps (short
    /// blocks may stay narrow; a note says when none went wide), which two GPU warps then
    /// decode side by side (32 lanes each), and pack the literals of the groups with the
    /// longest chains tighter where that costs at most 1 % of the archive. At level 6, DNA
    /// archives are another 2-3 % larger and decode 5-40 % faster on an H200
    /// (P. falciparum 190 -> 212-214 GB/s, TAIR10 204 -> 227-233, ce2 178 -> 235-237, dm3
    /// 139 -> 206-210); the CPU decodes them 2-10 % slower. Writes a version-7 archive,
    /// which older aceapex versions refuse. 'info' shows it ("wide slices").
    #[arg(long)]
    pub wide_lanes: bool,
    /// Store a block's literals as 2-bit codes of its four most frequent bytes plus a list
    /// of the other literals (a FASTA file's line feeds, an N) wherever that is at most 1 %
    /// larger than their rANS coding: on upper-case FASTA whose bases cost about 2 bits
    /// each every block (E. coli at -l 6 --raw-match-streams: 287 of 287, the archive
    /// 0.8 % smaller than without), on genomes with repeats or skewed composition (hs37,
    /// mm9) about a tenth of them, on soft-masked genomes few. Such literals decode
    /// without a rANS chain; with --raw-match-streams too the GPU decodes such a block
    /// without its rANS stage (E. coli at -l 6: 201-206 GB/s on an H200, against 115-117
    /// with --wide-lanes). Writes a version-8 archive, which older aceapex versions
    /// refuse. 'info' shows it ("two-bit").
    #[arg(long)]
    pub two_bit_literals: bool,
    /// Cap the dependency depth (chains of matches that copy from matches): every match
    /// gets a level below N, which bounds the decode rounds per block. 0 = no cap.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub depth_cap: u32,
    /// Worker threads, 1 to 1024; 0 = all cores [default: all cores].
    #[arg(short = 'T', long, value_name = "N", value_parser = parse_threads)]
    pub threads: Option<usize>,
    /// Overwrite an existing output; allow compressed output to a terminal.
    #[arg(short, long)]
    pub force: bool,
}

/// Runs `aceapex compress`.
pub fn run(args: CompressArgs) -> Result<()> {
    let CompressArgs {
        inputs,
        output,
        stdout,
        level,
        block_size,
        window,
        min_match,
        no_rep,
        no_context,
        no_pack,
        raw_match_streams,
        wide_lanes,
        two_bit_literals,
        depth_cap,
        threads,
        force,
    } = args;
    let opts = EncodeOptions {
        level,
        block_size,
        window,
        min_match: min_match.unwrap_or(MATCH_BASE),
        repeat_codes: !no_rep,
        depth_cap,
        context_tables: !no_context,
        packed_literals: !no_pack,
        raw_match_streams,
        wide_lanes,
        two_bit_literals,
    };
    opts.validate().map_err(|m| usage("compress", m))?;
    // (the library takes it, an archive without matches; on the command line it is
    // a mistake)
    if opts.min_match > opts.block_size {
        return Err(usage(
            "compress",
            format!(
                "--min-match {} is longer than a block ({} bytes): no match could be found",
                opts.min_match, opts.block_size
            ),
        ));
    }
    one_output_name("compress", &inputs, output.is_some() || stdout)?;
    set_threads(threads)?;
    each_input(&inputs, |input| {
        compress_one(
            input,
            output.clone(),
            stdout,
            &opts,
            min_match.is_none(),
            force,
        )
    })?;
    Ok(())
}

/// `compress` of one input (see [`crate::Cmd::Compress`]).
fn compress_one(
    input: &Path,
    output: Option<PathBuf>,
    stdout: bool,
    opts: &EncodeOptions,
    auto_min_match: bool,
    force: bool,
) -> Result<()> {
    let out_path = match output {
        Some(o) => o,
        None if stdout || input.as_os_str() == "-" => PathBuf::from("-"),
        None => {
            check_derived_from_file(input)?;
            // the name's own bytes, not its display form (a name need not be UTF-8)
            let mut name = input.as_os_str().to_os_string();
            name.push(".acx");
            PathBuf::from(name)
        }
    };
    check_not_same(input, &out_path)?;
    check_input(input, false)?;
    if out_path.as_os_str() == "-" && std::io::stdout().is_terminal() && !force {
        bail!(
            "refusing to write compressed data to a terminal: redirect standard output, \
             name a file with -o, or use -f to force"
        );
    }
    let out = OutFile::open(&out_path, force)?;
    let data = read_input(input, false)?;
    if data.starts_with(&aceapex::device::format::MAGIC) && Archive::parse(&data).is_ok() {
        // as gzip warns of a .gz input: compressed data does not shrink again
        let name = if input.as_os_str() == "-" {
            "standard input".to_string()
        } else {
            input.display().to_string()
        };
        note(format_args!(
            "{name} is already an aceapex archive: compressing it again gains little \
             (decompress restores it)"
        ));
    }
    let blocks = data.len().div_ceil(opts.block_size as usize);
    if opts.wide_lanes && blocks > archive::WIDE_MAX_BLOCKS {
        let name = if input.as_os_str() == "-" {
            "standard input".to_string()
        } else {
            input.display().to_string()
        };
        note(format_args!(
            "{name} has {blocks} blocks: --wide-lanes applies to inputs of up to {} blocks \
             ({} MiB at this block size), so it is written without wide slices (inputs of \
             more blocks decode faster without them)",
            archive::WIDE_MAX_BLOCKS,
            (archive::WIDE_MAX_BLOCKS * opts.block_size as usize) >> 20
        ));
    }
    let slow = opts.level >= 6 || opts.window.is_some_and(|w| w > opts.block_size);
    let pb = progress_bar(data.len() as u64, "compress", slow);
    let t = Instant::now();
    let packed = if auto_min_match {
        if opts.level >= archive::SHORT_MATCH_LEVEL {
            // levels 8-9 first compress a sample both ways (seconds): say what is going on
            pb.set_message("compress (minimum match 4 or 6: trying both on a sample)");
        }
        let started = std::sync::atomic::AtomicBool::new(false);
        archive::compress_choosing_min_match(&data, opts, &|n| {
            if !started.swap(true, std::sync::atomic::Ordering::Relaxed) {
                pb.set_message("compress");
            }
            pb.inc(n)
        })
        .map_err(anyhow::Error::msg)?
        .0
    } else {
        archive::compress(&data, opts, &|n| pb.inc(n)).map_err(anyhow::Error::msg)?
    };
    // FASTA input: the archive carries its sequence index (FORMAT.md §3.5, type 1)
    let packed = aceapex::attach_auto_fasta_index(&data, packed)?;
    pb.finish_and_clear();
    let secs = t.elapsed().as_secs_f64();
    // --wide-lanes where no block's chain was long enough (FORMAT.md §5.5: 64 steps; short
    // blocks stay narrow): the archive is what it would be without
    let written = Archive::parse(&packed).map(|a| a.entries().to_vec())?;
    let wide = written.iter().any(|e| e.has_wide_slice());
    let two_bit = (written.iter()).any(|e| e.lanes[0] == aceapex::device::format::LANES_TWO_BIT);
    if opts.wide_lanes && blocks <= archive::WIDE_MAX_BLOCKS && !data.is_empty() && !wide {
        note(format_args!(
            "--wide-lanes: no block's rANS chain was long enough to pay for wide slices (a \
             32-lane slice goes wide from 64 steps; short blocks stay below), so the archive \
             is written without them"
        ));
    }
    // --two-bit-literals where no block's two-bit slice came within 1 % of its other slice
    // (FORMAT.md §5.7): the archive is what it would be without
    if opts.two_bit_literals && !data.is_empty() && !two_bit {
        note(format_args!(
            "--two-bit-literals: no block's literals were within 1 % of their rANS coding as \
             a two-bit slice (their bytes cost well under 2 bits each, or too many are \
             outside the four most frequent: soft-masked or N-rich sequence, text), so the \
             archive is written without"
        ));
    }
    out.finish(&packed)?;
    if out_path.as_os_str() != "-" {
        if data.is_empty() {
            // an empty input has no ratio and no speed
            note(format_args!(
                "{} -> {}: empty input -> {} bytes",
                input.display(),
                out_path.display(),
                packed.len()
            ));
        } else {
            note(format_args!(
                "{} -> {}: {} -> {} bytes (ratio {:.3}) in {:.2} s, {} MB/s",
                input.display(),
                out_path.display(),
                data.len(),
                packed.len(),
                data.len() as f64 / packed.len() as f64,
                secs,
                mbps(data.len() as u64, secs)
            ));
        }
    }
    Ok(())
}
