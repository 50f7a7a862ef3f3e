//! `aceapex serve`: the GA4GH refget v1 API (docs/REFGET.md) over archives of FASTA (and
//! plain FASTA files), on axum and tokio.
//!
//! - `source`: where bases come from ([`source::SequenceSource`]: an archive on the CPU, a
//!   plain FASTA file; a GPU-resident archive plugs in there).
//! - `http`: the routes, the refget rules for `start`/`end`, `Range` and `Accept`, and the
//!   access log.

mod http;
mod source;

use crate::output::note;
use aceapex::fasta::checksums::SequenceDigests;
use anyhow::{bail, Context, Result};
use source::{Device, SequenceSource};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

/// The help text after the options of `aceapex serve`.
pub const SERVE_HELP: &str = "\
Serves every sequence of the given files by its refget checksums (MD5, TRUNC512 and the ga4gh
SQ. identifier, all stored by 'aceapex compress' in the archive): GET /sequence/ID with
?start=&end= (0-based, end exclusive) or a 'Range: bytes=FIRST-LAST' header,
/sequence/ID/metadata and /sequence/service-info. Bases are sent uppercase, as refget's
checksums define them; a sequence with bases that are not letters (*, -) is not served.
A plain FASTA file is served too (indexed and digested when the server starts).

Each request is logged on standard error in the common log format (not under --quiet).
SIGINT or SIGTERM stops accepting connections and ends after the requests in flight (a second
signal ends at once, exit status 130).

Exit status: 0 after a shutdown by signal; 1 an input that cannot be served, an address that
cannot be bound, or --device gpu without a usable GPU; 2 usage error.";

/// The arguments of `aceapex serve` (help text on [`crate::Cmd::Serve`]).
#[derive(clap::Args)]
pub struct ServeArgs {
    /// Archives of FASTA files (or plain FASTA files) to serve.
    #[arg(required = true, value_name = "ARCHIVE")]
    pub inputs: Vec<PathBuf>,
    /// Address to listen on, HOST:PORT (port 0: any free port; the address bound is printed).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
    pub listen: String,
    /// Where regions are decoded: the CPU, or the GPU (the archive resident in its memory;
    /// requests that arrive together are read in one batch, every block verified there).
    #[arg(long, value_enum, default_value = "cpu")]
    pub device: Device,
    /// A circular sequence (by name or checksum; repeatable): start > end wraps round its
    /// end, as refget specifies.
    #[arg(long, value_name = "ID")]
    pub circular: Vec<String>,
    /// Most region reads running at once (each holds at most 1 MiB of bases; later requests
    /// wait).
    #[arg(long, value_name = "N", default_value = "64", value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub max_concurrent: u32,
    /// Worker threads of the HTTP runtime; reads run on a blocking pool of --max-concurrent
    /// threads [default: all cores].
    #[arg(short = 'T', long, value_name = "N", value_parser = crate::args::parse_threads)]
    pub threads: Option<usize>,
}

/// One served sequence.
pub struct Entry {
    /// Index into [`Catalogue::sources`].
    pub source: usize,
    /// Position in that source's FASTA index.
    pub id: usize,
    /// Its name in the FASTA file.
    pub name: String,
    /// Its refget digests.
    pub digests: SequenceDigests,
    /// Whether start > end wraps round (`--circular`).
    pub circular: bool,
}

/// Every served sequence, found by its MD5 or truncated SHA-512.
pub struct Catalogue {
    pub sources: Vec<Box<dyn SequenceSource>>,
    pub entries: Vec<Entry>,
    by_md5: HashMap<[u8; 16], usize>,
    by_sha512t24: HashMap<[u8; 24], usize>,
}

impl Catalogue {
    /// The catalogue of `sources`: every sequence whose bases are all letters (its refget
    /// length is its LENGTH), the first of those with equal digests; `circular` names
    /// sequences (by name or checksum) that wrap round.
    ///
    /// Errors: a `circular` entry that names no served sequence.
    pub fn new(sources: Vec<Box<dyn SequenceSource>>, circular: &[String]) -> Result<Self> {
        let mut c = Catalogue {
            sources: Vec::new(),
            entries: Vec::new(),
            by_md5: HashMap::new(),
            by_sha512t24: HashMap::new(),
        };
        for (s, src) in sources.iter().enumerate() {
            for (id, (r, d)) in src.index().records().iter().zip(src.digests()).enumerate() {
                if d.length != r.length {
                    note(format!(
                        "aceapex: not serving {} of {}: {} of its {} bases are not letters \
                         (refget checksums are of letters only)",
                        r.name_lossy(),
                        src.describe(),
                        r.length - d.length,
                        r.length
                    ));
                    continue;
                }
                if c.by_md5.contains_key(&d.md5) {
                    note(format!(
                        "aceapex: {} of {} is already served under the same checksums",
                        r.name_lossy(),
                        src.describe()
                    ));
                    continue;
                }
                let e = c.entries.len();
                c.by_md5.insert(d.md5, e);
                c.by_sha512t24.insert(d.sha512t24, e);
                c.entries.push(Entry {
                    source: s,
                    id,
                    name: r.name_lossy().into_owned(),
                    digests: *d,
                    circular: false,
                });
            }
        }
        for want in circular {
            let hits: Vec<usize> = (0..c.entries.len())
                .filter(|&e| c.entries[e].name == *want || c.lookup(want) == Some(e))
                .collect();
            if hits.is_empty() {
                bail!("--circular {want}: no served sequence has this name or checksum");
            }
            for e in hits {
                c.entries[e].circular = true;
            }
        }
        c.sources = sources;
        Ok(c)
    }

    /// The entry a refget identifier names: 32 hex digits (MD5, also as `md5:…`), 48 hex
    /// digits (TRUNC512), or `SQ.` and 32 base64url characters (also as `ga4gh:SQ.…`); hex
    /// in either case.
    pub fn lookup(&self, id: &str) -> Option<usize> {
        use base64::Engine;
        let id = id.strip_prefix("ga4gh:").unwrap_or(id);
        if let Some(b64) = id.strip_prefix("SQ.") {
            let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(b64)
                .ok()?;
            let key: [u8; 24] = bytes.try_into().ok()?;
            return self.by_sha512t24.get(&key).copied();
        }
        let id = id.strip_prefix("md5:").unwrap_or(id);
        let bytes = unhex(id)?;
        match bytes.len() {
            16 => self.by_md5.get(&bytes[..]).copied(),
            24 => self.by_sha512t24.get(&bytes[..]).copied(),
            _ => None,
        }
    }
}

/// Bytes of an even-length hex string (either case); `None` for anything else.
fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Runs `aceapex serve` until SIGINT or SIGTERM.
pub fn run(args: ServeArgs) -> Result<()> {
    let sources = args
        .inputs
        .iter()
        .map(|p| source::open(p, args.device))
        .collect::<Result<Vec<_>>>()?;
    let catalogue = Catalogue::new(sources, &args.circular)?;
    if catalogue.entries.is_empty() {
        bail!("no sequence to serve");
    }
    let mut rt = tokio::runtime::Builder::new_multi_thread();
    rt.enable_all()
        .max_blocking_threads(args.max_concurrent as usize);
    if let Some(t) = args.threads.filter(|&t| t > 0) {
        rt.worker_threads(t);
    }
    let rt = rt.build().context("starting the async runtime")?;
    rt.block_on(http::serve(
        Arc::new(catalogue),
        &args.listen,
        args.max_concurrent as usize,
    ))
}
