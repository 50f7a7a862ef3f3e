//! The `aceapex` command line: compress, decompress, extract, faidx, info, serve.
//!
//! One module per command (`compress`, `decompress`, `extract`, `faidx`, `info`), each with its
//! arguments and its `run`; `io` (inputs and outputs), `output` (messages, progress),
//! `signal` (cleanup on signals) and `args` (value parsers) are shared.

mod analyze;
mod args;
mod compress;
mod decompress;
mod diff_blocks;
mod extract;
mod faidx;
mod info;
mod io;
mod output;
mod plots;
mod reproduce;
#[cfg(feature = "serve")]
mod serve;
mod signal;

use crate::args::sizes_help;
use anyhow::{Context, Result};
use clap::error::ErrorKind;
use clap::{CommandFactory, Parser, Subcommand};
use signal::install_signal_cleanup;

/// Absolute-offset LZ77 compression with GPU decode.
///
/// Archives (.acx) are cut into fixed blocks that decode independently (or, with --window,
/// after the blocks they read from); every block carries an XXH3-64 checksum, so a whole
/// file or any byte range can be restored and verified on the CPU or on an NVIDIA GPU.
#[derive(Parser)]
#[command(name = "aceapex", version, after_help = AFTER_HELP, args_override_self = true)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
    /// Print nothing but errors on standard error: no summary line, no progress bar, no notes
    /// (such as that the CPU decodes because there is no GPU); a command's own output, such as
    /// info's report, still goes to standard output.
    #[arg(short, long, global = true)]
    quiet: bool,
}

const AFTER_HELP: &str = concat!(
    sizes_help!("--block-size, --window, --offset, --length"),
    "\n\n",
    "\
Exit status: 0 success; 1 error (a file missing or unreadable, an output that exists, a damaged
archive, no GPU for --device gpu, ...); 2 usage error (unknown option, bad or missing value);
130 interrupted (SIGINT, SIGTERM, SIGHUP); 141 standard output closed early (e.g. `| head`, no
message). An output file appears under its name only when complete: until then it is a
hidden temporary '.NAME.XXXXXX.aceapex-tmp' beside it ('.aceapex.XXXXXX.tmp' for a long
NAME), mode 0600, removed on errors and signals (not after SIGKILL or a power cut; such a
leftover is safe to delete); complete, it takes the input file's mode and times and never
replaces a file that exists at that moment unless -f."
);

#[derive(Subcommand)]
enum Cmd {
    /// Compress a file into an .acx archive (the input is kept).
    #[command(after_help = sizes_help!("--block-size, --window"), args_override_self = true)]
    Compress(compress::CompressArgs),
    /// Restore the original file from an archive (every block and the whole file verified).
    #[command(args_override_self = true)]
    Decompress(decompress::DecompressArgs),
    /// Restore byte ranges of the original (--offset/--length, --range, --ranges), decoding
    /// only the blocks they need, each block verified by its checksum.
    #[command(after_help = sizes_help!("--offset, --length, --range, the lines of --ranges"), args_override_self = true)]
    Extract(extract::ExtractArgs),
    /// Print FASTA regions or the .fai index of an archived FASTA file, as samtools faidx.
    #[command(after_help = faidx::FAIDX_HELP, args_override_self = true)]
    Faidx(faidx::FaidxArgs),
    /// Show an archive's sizes, ratio, parameters, streams and match dependency depths.
    #[command(after_help = info::INFO_HELP, args_override_self = true)]
    Info(info::InfoArgs),
    /// Measure an archive's match layer: dependency levels, chained commands, matches,
    /// periods, write footprint (per block with --blocks).
    #[command(after_help = analyze::ANALYZE_HELP, args_override_self = true)]
    Analyze(analyze::AnalyzeArgs),
    /// List the blocks whose streams differ between two archives of the same input.
    #[command(after_help = diff_blocks::DIFF_HELP, args_override_self = true)]
    DiffBlocks(diff_blocks::DiffArgs),
    /// Rerun the ACEAPEX papers' measurements on a corpus: one JSON record per claim.
    #[command(after_help = reproduce::REPRODUCE_HELP, args_override_self = true)]
    Reproduce(reproduce::ReproduceArgs),
    /// Serve the sequences of archived FASTA files over HTTP with the GA4GH refget v1 API.
    #[cfg(feature = "serve")]
    #[command(after_help = serve::SERVE_HELP, args_override_self = true)]
    Serve(serve::ServeArgs),
}

/// Exit status of a usage error, as clap uses for its own.
const EXIT_USAGE: i32 = 2;

/// A mistake on the command line found after parsing (e.g. an output name that cannot be
/// derived): reported in clap's format, exit status [`EXIT_USAGE`].
#[derive(Debug)]
struct Usage {
    cmd: &'static str,
    msg: String,
}

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.msg)
    }
}

impl std::error::Error for Usage {}

fn usage(cmd: &'static str, msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(Usage {
        cmd,
        msg: msg.into(),
    })
}

/// Sizes the global thread pool: `None` or `Some(0)` keep rayon's default (all cores).
fn set_threads(threads: Option<usize>) -> Result<()> {
    if let Some(t) = threads.filter(|&t| t > 0) {
        rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build_global()
            .context("starting the thread pool")?;
    }
    Ok(())
}

/// For an unknown option given after a subcommand that another subcommand takes
/// (`decompress --level 9`, `decompress -l 9`), clap's error with a line that names the
/// subcommand it belongs to, instead of clap's tip to pass it as a value after `--`; `None`
/// for any other error (an option before the subcommand keeps clap's message).
fn misplaced_option(e: &clap::Error) -> Option<clap::Error> {
    use clap::error::{ContextKind, ContextValue};
    if e.kind() != ErrorKind::UnknownArgument {
        return None;
    }
    let Some(ContextValue::String(arg)) = e.get(ContextKind::InvalidArg) else {
        return None;
    };
    let name = arg.split('=').next()?;
    let is_it = |a: &clap::Arg| match name.strip_prefix("--") {
        Some(long) => a.get_long() == Some(long),
        None => {
            name.len() == 2
                && name.strip_prefix('-').and_then(|s| s.chars().next()) == a.get_short()
        }
    };
    let mut cmd = Cli::command();
    cmd.build();
    // the subcommand (the first argument that names one; arguments need not be UTF-8), and
    // the option after it
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let at = args
        .iter()
        .position(|a| cmd.get_subcommands().any(|c| a == c.get_name()))?;
    let used = args[at].to_string_lossy().into_owned();
    let after = args[at + 1..].iter().any(|a| {
        let a = a.to_string_lossy();
        a == name || a.starts_with(&format!("{name}="))
    });
    let owners: Vec<String> = (cmd.get_subcommands())
        .filter(|c| c.get_arguments().any(is_it))
        .map(|c| format!("'aceapex {}'", c.get_name()))
        .collect();
    if !after || owners.is_empty() {
        return None;
    }
    let why = if owners == ["'aceapex compress'"] {
        " (an archive records how it was made: the other commands read that from it)"
    } else {
        ""
    };
    let list = match owners.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => return None,
    };
    let msg = format!("{name} is an option of {list}, not of 'aceapex {used}'{why}");
    Some(
        cmd.find_subcommand_mut(&used)?
            .error(ErrorKind::UnknownArgument, msg),
    )
}

fn main() {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => misplaced_option(&e).unwrap_or(e).exit(),
    };
    // serve handles SIGINT and SIGTERM itself (a graceful shutdown)
    #[cfg(feature = "serve")]
    let serving = matches!(cli.cmd, Cmd::Serve(_));
    #[cfg(not(feature = "serve"))]
    let serving = false;
    if !serving {
        install_signal_cleanup();
    }
    output::QUIET.store(cli.quiet, std::sync::atomic::Ordering::Relaxed);
    if let Err(e) = run(cli) {
        if let Some(u) = e.downcast_ref::<Usage>() {
            // clap's format and exit status, with the subcommand's usage line
            let mut cmd = Cli::command();
            cmd.build();
            if let Some(sub) = cmd.find_subcommand_mut(u.cmd) {
                sub.error(ErrorKind::ValueValidation, &u.msg).exit();
            }
            eprintln!("aceapex: error: {e:#}");
            std::process::exit(EXIT_USAGE);
        }
        if e.chain().any(|c| {
            c.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
        }) {
            // the reader went away (e.g. `| head`): quiet, with the status of a process
            // ended by SIGPIPE, as gzip and zstd end
            std::process::exit(EXIT_BROKEN_PIPE);
        }
        eprintln!("aceapex: error: {e:#}");
        std::process::exit(1);
    }
}

/// Exit status when standard output's reader closed early (128 + SIGPIPE).
const EXIT_BROKEN_PIPE: i32 = 141;

fn run(cli: Cli) -> Result<()> {
    match cli.cmd {
        Cmd::Compress(args) => compress::run(args),
        Cmd::Decompress(args) => decompress::run(args),
        Cmd::Extract(args) => extract::run(args),
        Cmd::Faidx(args) => match faidx::run(args)? {
            0 => Ok(()),
            // samtools' status after a region it could not print (its messages are out)
            status => std::process::exit(status),
        },
        Cmd::Info(args) => info::run(args),
        Cmd::Analyze(args) => analyze::run(args),
        Cmd::DiffBlocks(args) => diff_blocks::run(args),
        Cmd::Reproduce(args) => reproduce::run(args),
        #[cfg(feature = "serve")]
        Cmd::Serve(args) => serve::run(args),
    }
}
