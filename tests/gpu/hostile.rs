//! Hostile archives on every GPU decode path (issue 39, docs/RELIABILITY.md): thousands of
//! mutated archives, their checksums recomputed so that they reach the entropy and match
//! layers, fed to the dense pipe (archives of the default target, and of `--target gpu`,
//! whose blocks of two-bit literals and raw match streams the dense kernel decodes alone;
//! both with line layouts on the FASTA samples, FORMAT.md §4.6),
//! the lane-per-block decoder (forced), the wavefront decoder (cross-block `--window`
//! archives) and the random-access seek (`GpuReader`), each compared with the CPU decoder;
//! and blocks moved or duplicated, refused by every GPU path (position-bound checksums).
//!
//! **The mutants.** As `examples/hostile_campaign.rs` builds them, from a fixed seed: a base
//! archive (the golden archives of the fuzz checks and archives of 96 KiB samples of the
//! sample inputs, under the path's encoder settings) and a mutation script of up to 8
//! operations ([`checks::mutate`]): for three mutants of four only bytes of the data section
//! XORed, for the fourth anything (bit flips, bytes, inserts, deletes, range copies, header
//! fields, block entries swapped, a byte in a chosen section). The meta checksum is always
//! recomputed; for every other mutant the block and content checksums too, from the
//! reference decoder ([`checks::reseal_blocks`]), so that a mutation that still decodes is
//! accepted and every decoder must give the reference decoder's changed bytes. A mutant
//! that does not parse never reaches a GPU (the parser is shared) and does not count:
//! [`MUTANTS`] mutants that parse go to each path.
//!
//! **What "the same" means.** The CPU's verdict is the reference block decoder
//! (`decode_block_reference`, the code the kernels share), block by block in index order:
//! each block decodes and verifies (Ok), decodes to bytes that fail its checksum
//! (Checksum), or breaks a rule (a `Status`). Then:
//! - Dense and lane (independent blocks): every block's status word is the CPU's status, or
//!   0 where the CPU decodes the block (Ok or Checksum: the kernels do not hash, the host
//!   does after them); every block with status 0 holds exactly the CPU's bytes in the
//!   poisoned output. The decode as `decompress --device gpu` reports it (the status words,
//!   then the host's checksums) fails exactly when the CPU's whole decode fails, and names
//!   the lowest block with a status, else the lowest checksum block, else the content
//!   checksum. Where the CPU's first failing block fails only its checksum and a later block
//!   breaks a rule, the two decoders name different first blocks (the GPU reports statuses
//!   before it hashes): counted apart, with every block's verdict still compared. (A
//!   mutant whose header now makes blocks cross goes to neither: only the wavefront takes
//!   such archives; it is counted apart too.)
//! - Wavefront (cross-block): the same up to and including the first block that breaks a
//!   rule; later blocks are not compared, since a block that copies from a failed block
//!   reports `BadDistance` on the GPU ("the source block failed", `device/src/wave.rs`)
//!   where the CPU decodes it from whatever the failed block left.
//! - Seek: the whole original read as one range per block; the first damaged range names the
//!   CPU's first failing block with its verdict (the seek verifies checksums on the
//!   device); then each block read alone gives the CPU's verdict for that block, or its
//!   bytes.
//! - Where several slices of a block fail their entropy decode, both name the first in
//!   stream order (`device/src/dense/rans.rs`), and where a block breaks a rule in its
//!   slices and in its commands, both name the slice's (FORMAT.md §7: the first rule
//!   broken); no exception is made for either.
//!
//! A disagreement does not stop the test: each is printed and its mutant saved (to
//! `$ACEAPEX_HOSTILE_SAVE`, else the temporary directory), then the test fails. Each path
//! prints how many mutants ended in each class (the figures of docs/RELIABILITY.md).

#[allow(unused_imports)]
use super::*;
use aceapex::gpu::GpuError;
use aceapex::{DecodeError, Error, GpuDecoder, Options, Status, Target};
use std::collections::BTreeMap;

#[path = "../../fuzz/src/lib.rs"]
mod checks;
#[path = "../moved/mod.rs"]
mod moved;

/// Mutants (that parse) per path; `ACEAPEX_HOSTILE_MUTANTS` sets another count (fewer
/// under compute-sanitizer: scripts/gpu-sanitizer.sh).
const MUTANTS: usize = 2000;
/// The mutation seed.
const SEED: u64 = 39;
/// Bytes of each sample input an archive is made of.
const SAMPLE: usize = 96 << 10;
/// Disagreements printed and saved at most.
const SAVED: usize = 20;

fn mutant_count() -> usize {
    std::env::var("ACEAPEX_HOSTILE_MUTANTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(MUTANTS)
}

/// A GPU decode path under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Path {
    /// `GpuArchive::decode_all_with(Decoder::Dense)`: the dense pipe, the lane kernel after
    /// it for any block handed back.
    Dense,
    /// `Decoder::Lane`: the lane-per-block decoder alone.
    Lane,
    /// `Decoder::Wavefront`, on cross-block archives.
    Wavefront,
    /// `GpuReader::read_ranges_to_vec`.
    Seek,
}

/// The archives a path's mutants start from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Independent blocks, the default target (16 and 4 KiB blocks).
    Default,
    /// Independent blocks, `--target gpu` (two-bit literals and raw match streams).
    TargetGpu,
    /// A window that crosses blocks (`--window`).
    Window,
}

/// A base archive and its original.
struct Base {
    name: String,
    archive: Vec<u8>,
    original: Vec<u8>,
}

/// The base archives of `kind`: the golden archives of the fuzz checks (independent ones
/// for `Default`, cross-block ones for `Window`) and archives of 96 KiB of five sample
/// inputs.
fn bases(kind: Kind) -> Vec<Base> {
    let mut v: Vec<Base> = Vec::new();
    if kind != Kind::TargetGpu {
        for (i, (a, o)) in checks::bases().iter().enumerate() {
            let cross = Archive::parse(a).unwrap().cross_block();
            if cross == (kind == Kind::Window) {
                v.push(Base {
                    name: format!("golden#{i}"),
                    archive: a.clone(),
                    original: o.to_vec(),
                });
            }
        }
    }
    let opts: Vec<(&str, Options)> = match kind {
        Kind::Default => vec![
            ("default", Options::default()),
            ("4K", Options::default().with_block_size(4096)),
        ],
        Kind::TargetGpu => vec![
            ("gpu", Options::default().with_target(Target::Gpu)),
            (
                "gpu-4K",
                Options::default()
                    .with_target(Target::Gpu)
                    .with_block_size(4096),
            ),
        ],
        Kind::Window => vec![
            (
                "w64K-4K",
                Options::default()
                    .with_block_size(4096)
                    .with_window(Some(64 << 10)),
            ),
            ("w1M", Options::default().with_window(Some(1 << 20))),
            (
                "gpu-w64K-4K",
                Options::default()
                    .with_target(Target::Gpu)
                    .with_block_size(4096)
                    .with_window(Some(64 << 10)),
            ),
        ],
    };
    let wanted = [
        "dna-like",
        "soft-masked",
        "fasta",
        "text-like",
        "deep chains",
    ];
    let inputs: Vec<(String, Vec<u8>)> = sample_inputs()
        .into_iter()
        .filter(|(name, _)| wanted.contains(&name.as_str()))
        .collect();
    for (name, data) in inputs {
        // from the middle: past any run at the start
        let at = (data.len() / 3).min(data.len().saturating_sub(SAMPLE));
        let data = data[at..(at + SAMPLE).min(data.len())].to_vec();
        for (oname, o) in &opts {
            let archive = aceapex::compress(&data, o).unwrap();
            let cross = Archive::parse(&archive).unwrap().cross_block();
            assert_eq!(cross, kind == Kind::Window, "{name} {oname}");
            v.push(Base {
                name: format!("{name} {oname}"),
                archive,
                original: data.clone(),
            });
        }
    }
    v
}

/// The CPU's verdict on every block: the reference decoder, block by block in index order,
/// into one buffer (a failed block leaves what it wrote).
struct Verdict {
    out: Vec<u8>,
    /// `None`: decoded and verified; `Some(Status::Checksum)`: decoded, wrong checksum;
    /// another status: the rule the block broke.
    blocks: Vec<Option<Status>>,
}

impl Verdict {
    fn of(a: &Archive<'_>) -> Verdict {
        let mut out = vec![0u8; a.header().original_size as usize];
        let blocks = (0..a.block_count())
            .map(
                |b| match aceapex::decode::decode_block_reference(a, b, &mut out, 0) {
                    Ok(()) => None,
                    Err(DecodeError::Block { status, .. }) => Some(status),
                    Err(e) => panic!("block {b}: the reference decoder gave {e}"),
                },
            )
            .collect();
        Verdict { out, blocks }
    }

    /// The first block that breaks a rule (a status other than Checksum).
    fn first_rule(&self) -> Option<usize> {
        self.blocks
            .iter()
            .position(|v| matches!(v, Some(s) if *s != Status::Checksum))
    }

    /// The first block that fails in any way.
    fn first_failure(&self) -> Option<usize> {
        self.blocks.iter().position(Option::is_some)
    }

    /// The status word the kernels must leave for block `b`: the rule it breaks, 0 where it
    /// decodes (its checksum is the host's to check).
    fn word(&self, b: usize) -> u32 {
        match self.blocks[b] {
            Some(s) if s != Status::Checksum => s as u32,
            _ => 0,
        }
    }
}

/// What one path's mutants ended in, and the disagreements.
#[derive(Default)]
struct Tally {
    classes: BTreeMap<String, usize>,
    first_reason: BTreeMap<String, usize>,
    blocks_compared: usize,
    disagreements: Vec<String>,
}

impl Tally {
    fn count(&mut self, class: impl Into<String>) {
        *self.classes.entry(class.into()).or_default() += 1;
    }

    fn disagree(&mut self, label: &str, m: &[u8], why: String) {
        if self.disagreements.len() < SAVED {
            let dir = std::env::var_os("ACEAPEX_HOSTILE_SAVE")
                .map(std::path::PathBuf::from)
                .unwrap_or_else(std::env::temp_dir);
            let path = dir.join(format!("hostile-{label}.acx"));
            let saved = std::fs::create_dir_all(&dir)
                .and_then(|()| std::fs::write(&path, m))
                .map_or_else(
                    |e| format!("not saved: {e}"),
                    |()| path.display().to_string(),
                );
            eprintln!("DISAGREEMENT {label}: {why} (mutant: {saved})");
        }
        self.disagreements.push(format!("{label}: {why}"));
    }
}

/// A mutant that parses, for the path under test: its archive parsed, its bytes, the CPU's
/// verdict, its base and a label for messages.
struct Mutant<'m> {
    a: Archive<'m>,
    m: &'m [u8],
    v: Verdict,
    base: &'m Base,
    ctx: String,
}

/// One mutant as [`mutants`] makes it: its base (an index of the bases), its bytes, and
/// whether its script only XORs bytes of the data section and whether its block checksums
/// were resealed.
struct Made {
    base: usize,
    m: Vec<u8>,
    data_only: bool,
    resealed: bool,
}

/// Mutant number `it` of `bases` (module docs), its base and script drawn from `r`, which
/// must have made mutants `0..it` before (each takes the same number of draws, so
/// [`nth_mutant`] can skip to one).
fn make_mutant(bases: &[Base], r: &mut common::Rng, it: usize) -> Made {
    let base = r.below(bases.len() as u64) as usize;
    let mut script: Vec<u8> = (0..64).map(|_| r.next() as u8).collect();
    let data_only = it % 4 != 3;
    let resealed = it % 2 == 1;
    if data_only {
        // each operation a byte of the data section XORed (operation 9, section 3 of
        // `checks::mutate`), as examples/hostile_campaign.rs does
        for op in script[1..].chunks_mut(7) {
            op[0] = 9;
            if op.len() > 1 {
                op[1] = 3;
            }
        }
    }
    let mut m = checks::mutate(&bases[base].archive, &mut checks::Cursor(&script));
    checks::reseal_meta(&mut m);
    if resealed {
        checks::reseal_blocks(&mut m);
    }
    Made {
        base,
        m,
        data_only,
        resealed,
    }
}

/// Mutant number `it` of a campaign over `bases` from `seed` (the `-{it}` of its label in a
/// disagreement), made again without a GPU.
fn nth_mutant(bases: &[Base], seed: u64, it: usize) -> Made {
    let mut r = common::Rng(seed);
    for _ in 0..it {
        // an earlier mutant's draws (make_mutant's), without making it
        r.below(bases.len() as u64);
        for _ in 0..64 {
            r.next();
        }
    }
    make_mutant(bases, &mut r, it)
}

/// Makes mutants of `bases` from `seed` (module docs) until `n` of them parse, handing each
/// to `each`; returns how many were made.
fn mutants(
    what: &str,
    bases: &[Base],
    seed: u64,
    n: usize,
    t: &mut Tally,
    mut each: impl FnMut(&Mutant<'_>, &mut Tally),
) -> usize {
    let mut r = common::Rng(seed);
    let (mut parsed, mut tried) = (0usize, 0usize);
    while parsed < n {
        tried += 1;
        assert!(
            tried < 20 * n + 100,
            "{what}: too few mutants parse ({parsed} of {tried})"
        );
        let it = tried - 1;
        let Made {
            base,
            m,
            data_only,
            resealed,
        } = make_mutant(bases, &mut r, it);
        let base = &bases[base];
        let Ok(a) = Archive::parse(&m) else {
            t.count("(parse error: not sent to the GPU, not counted)");
            continue;
        };
        let size = a.header().original_size;
        if size == 0 || size > checks::MAX_WHOLE_DECODE {
            t.count("(declared size 0 or over 16 MiB: not sent, not counted)");
            continue;
        }
        parsed += 1;
        let v = Verdict::of(&a);
        let ctx = format!(
            "{what}-{it} ({}, {}{})",
            base.name,
            if data_only {
                "data section"
            } else {
                "anywhere"
            },
            if resealed { ", resealed" } else { "" }
        );
        let mu = Mutant {
            a,
            m: &m,
            v,
            base,
            ctx,
        };
        each(&mu, t);
    }
    tried
}

/// Prints the tally of `parsed` mutants (of `tried` made) and fails on any disagreement or
/// when too few were refused (the mutations damage most archives: a run that refused
/// none would test nothing).
fn report(what: &str, t: &Tally, parsed: usize, tried: usize, header: &str) {
    println!("hostile archives, {what}: {parsed} mutants that parse ({tried} made); {header}");
    for (k, c) in &t.classes {
        println!("  {k}: {c}");
    }
    let reasons: Vec<String> = t
        .first_reason
        .iter()
        .map(|(k, c)| format!("{k} {c}"))
        .collect();
    println!("  first failing block's reason: {}", reasons.join(", "));
    println!("  block verdicts compared: {}", t.blocks_compared);
    println!("  disagreements: {}", t.disagreements.len());
    assert!(
        t.disagreements.is_empty(),
        "{what}: {} disagreements with the CPU, the first: {}",
        t.disagreements.len(),
        t.disagreements[0]
    );
    let refused: usize = t
        .classes
        .iter()
        .filter(|(k, _)| k.starts_with("refused"))
        .map(|(_, c)| c)
        .sum();
    assert!(refused > parsed / 4, "{what}: only {refused} refused");
}

/// Runs [`mutant_count`] parsed mutants of `bases` through `path` and checks each against
/// the CPU's verdict (module docs); prints the tally and fails on any disagreement.
fn campaign(what: &str, path: Path, bases: &[Base], seed: u64) {
    let n = mutant_count();
    let g = gpu();
    let dec = (path == Path::Seek).then(|| GpuDecoder::open().unwrap());
    let mut t = Tally::default();
    let started = std::time::Instant::now();
    let mut self_contained = 0usize;
    for b in bases {
        let a = Archive::parse(&b.archive).unwrap();
        let ga = decoder::GpuArchive::upload(&g, &a).unwrap();
        self_contained += (ga.self_contained_blocks() > 0) as usize;
    }
    let tried = mutants(what, bases, seed, n, &mut t, |mu, t| match path {
        Path::Seek => seek_one(dec.as_ref().unwrap(), mu, t),
        _ => decode_one(&g, path, mu, t),
    });
    let header = format!(
        "{} base archives ({self_contained} with self-contained blocks), seed {seed}, {:.1} s",
        bases.len(),
        started.elapsed().as_secs_f64()
    );
    report(what, &t, n, tried, &header);
}

/// One mutant through the dense, lane or wavefront decoder (module docs).
fn decode_one(g: &Gpu, path: Path, mu: &Mutant<'_>, t: &mut Tally) {
    let (a, m, v, base, ctx) = (&mu.a, mu.m, &mu.v, mu.base, mu.ctx.as_str());
    let d = match path {
        // a mutated header window can make blocks cross: only the wavefront takes those, and
        // `decompress --device gpu` gives them to it
        Path::Dense | Path::Lane if a.cross_block() => {
            return t.count("(made cross-block by the mutation: left to the wavefront's test)")
        }
        Path::Dense => decoder::Decoder::Dense,
        Path::Lane => decoder::Decoder::Lane,
        _ => decoder::Decoder::Wavefront,
    };
    let ga = match decoder::GpuArchive::upload(g, a) {
        Ok(ga) => ga,
        Err(GpuError::Unsupported(_)) => return t.count("declined by the GPU (Unsupported)"),
        Err(e) => return t.disagree(ctx, m, format!("upload: {e}")),
    };
    // the output poisoned (0xA5), the status words zero, as `decompress --device gpu` has them
    let (mut out, mut status) = ga.output_buffers(g).unwrap();
    let st = match ga.decode_all_status(g, d, &mut out, &mut status) {
        Ok(st) => st,
        Err(GpuError::Unsupported(_)) => return t.count("declined by the GPU (Unsupported)"),
        Err(e) => return t.disagree(ctx, m, format!("decode: {e}")),
    };
    let mut bytes = g.download(&out).unwrap();
    bytes.truncate(a.header().original_size as usize);
    let n = a.block_count();
    // blocks compared: all of them with independent blocks, else up to the first rule broken
    let last = if a.cross_block() {
        v.first_rule().unwrap_or(n - 1)
    } else {
        n - 1
    };
    for (b, &got) in st.iter().enumerate().take(last + 1) {
        t.blocks_compared += 1;
        let want = v.word(b);
        if got != want {
            return t.disagree(
                ctx,
                m,
                format!(
                    "block {b}: GPU status {got}, CPU {want} ({:?})",
                    v.blocks[b]
                ),
            );
        }
        if got == 0 {
            let r = a.block_range(b);
            let (s, e) = (r.start as usize, r.end as usize);
            if bytes[s..e] != v.out[s..e] {
                return t.disagree(ctx, m, format!("block {b}: bytes differ from the CPU's"));
            }
        }
    }
    // the decode as `decompress --device gpu` reports it (the status words, then the host's
    // checksums), against the CPU's whole decode
    let gpu = decoder::check_status(&st[..n]).and_then(|()| decoder::verify(a, &bytes));
    let cpu = aceapex::decompress(m);
    let (rule, fail) = (v.first_rule(), v.first_failure());
    match (&cpu, &gpu) {
        (Ok(x), Ok(())) => {
            if *x != bytes {
                return t.disagree(ctx, m, "both accept, the bytes differ".into());
            }
            t.count(if *x == base.original {
                "decoded: the original's bytes"
            } else {
                "decoded: the CPU's changed bytes (checksums resealed)"
            });
        }
        (Err(_), Err(e)) => {
            let msg = e.to_string();
            // the block the GPU's report names first, and the CPU's first failing block
            let named = rule.or(fail);
            match named {
                Some(b) if !moved::names_block(&msg, b as u32) => {
                    return t.disagree(ctx, m, format!("GPU reports {msg:?}, want block {b}"))
                }
                None if !msg.contains("content checksum") => {
                    return t.disagree(ctx, m, format!("GPU reports {msg:?}, want content"))
                }
                _ => {}
            }
            if let Some(f) = fail {
                *t.first_reason
                    .entry(format!("{:?}", v.blocks[f].unwrap()))
                    .or_default() += 1;
            }
            t.count(match (rule, fail) {
                (Some(r), Some(f)) if r > f => {
                    "refused: the CPU's first failing block fails only its checksum, the GPU \
                     names the first block that breaks a rule"
                }
                (Some(_), _) => "refused: same first block and reason",
                (None, Some(_)) => "refused: same first block, its checksum",
                (None, None) => "refused: content checksum",
            });
        }
        (c, g) => t.disagree(
            ctx,
            m,
            format!("CPU {:?}, GPU {:?}", c.as_ref().err(), g.as_ref().err()),
        ),
    }
}

/// One mutant through the seek (module docs).
fn seek_one(dec: &GpuDecoder, mu: &Mutant<'_>, t: &mut Tally) {
    let (a, m, v, base, ctx) = (&mu.a, mu.m, &mu.v, mu.base, mu.ctx.as_str());
    let reader = match dec.upload(m) {
        Ok(x) => x,
        Err(Error::Gpu(GpuError::Unsupported(_))) => {
            return t.count("declined by the GPU (Unsupported)")
        }
        Err(e) => return t.disagree(ctx, m, format!("upload: {e}")),
    };
    let n = a.block_count();
    let blocks: Vec<(u64, u64)> = (0..n)
        .map(|b| {
            let r = a.block_range(b);
            (r.start, r.end - r.start)
        })
        .collect();
    // a block's verdict as a read of its range must give it
    let check = |b: usize, got: Result<Vec<u8>, Error>| -> Result<(), String> {
        match (got, v.blocks[b]) {
            (Ok(x), None) => {
                let (s, l) = (blocks[b].0 as usize, blocks[b].1 as usize);
                (x[..l] == v.out[s..s + l])
                    .then_some(())
                    .ok_or(format!("block {b}: bytes differ from the CPU's"))
            }
            (Err(Error::Decode(DecodeError::Block { block, status, .. })), Some(want))
                if block as usize == b =>
            {
                (status == want)
                    .then_some(())
                    .ok_or(format!("block {b}: GPU {status:?}, CPU {want:?}"))
            }
            (got, want) => Err(format!(
                "block {b}: GPU {:?}, CPU {want:?}",
                got.map(|x| x.len())
            )),
        }
    };
    // the whole original, one range per block: the first damaged range is the first block
    // the CPU fails
    let whole = reader.read_ranges_to_vec(&blocks);
    let fail = v.first_failure();
    match (fail, whole) {
        (None, Ok(x)) => {
            if x != v.out {
                return t.disagree(ctx, m, "the whole original differs from the CPU's".into());
            }
            t.count(if x == base.original {
                "decoded: the original's bytes"
            } else {
                "decoded: the CPU's changed bytes (checksums resealed)"
            });
        }
        (Some(f), got) => {
            if let Err(why) = check(f, got) {
                return t.disagree(ctx, m, format!("whole original: {why}"));
            }
            let reason = v.blocks[f].unwrap();
            *t.first_reason.entry(format!("{reason:?}")).or_default() += 1;
            t.count(if reason == Status::Checksum {
                "refused: same first block, its checksum"
            } else {
                "refused: same first block and reason"
            });
        }
        (None, Err(e)) => return t.disagree(ctx, m, format!("whole original: {e}")),
    }
    // every block alone, where some block failed
    if fail.is_some() {
        for b in 0..n {
            t.blocks_compared += 1;
            let got = reader.read_ranges_to_vec(&blocks[b..b + 1]);
            if let Err(why) = check(b, got) {
                return t.disagree(ctx, m, why);
            }
        }
    }
}

/// Without a GPU: the mutants of every path's bases, with the CPU's whole decode
/// (`aceapex::decompress`) in the place of the GPU path, compared with the reference
/// decoder's verdict as the GPU paths are: the whole decode fails exactly when a block or
/// the content checksum does, names a failing block with its verdict, and otherwise gives
/// the reference's bytes. Checks the campaign itself
/// (the mutants parse, reach the blocks, are refused and sometimes decode to changed
/// bytes), with fewer mutants (`CPU_MUTANTS`).
#[test]
pub(crate) fn hostile_mutants_against_the_cpu_whole_decode() {
    const CPU_MUTANTS: usize = 150;
    for (k, kind) in [Kind::Default, Kind::TargetGpu, Kind::Window]
        .into_iter()
        .enumerate()
    {
        let bases = bases(kind);
        // `--target gpu` bases with blocks the dense kernel decodes alone (two-bit literals
        // and raw match streams, `device::own::own_slice`), and none among the others
        let own = bases
            .iter()
            .filter(|b| {
                let a = Archive::parse(&b.archive).unwrap();
                (0..a.block_count()).any(|i| {
                    let off = a.block_offsets()[i];
                    aceapex::device::own::own_slice(&a.entries()[i], off, a.data().len() as u64)
                        .is_some()
                })
            })
            .count();
        if kind == Kind::TargetGpu {
            assert!(own > 0, "no --target gpu base has self-contained blocks");
        }
        let what = format!("CPU whole decode, {kind:?} archives");
        let mut t = Tally::default();
        let tried = mutants(
            &what,
            &bases,
            SEED + 10 + k as u64,
            CPU_MUTANTS,
            &mut t,
            |mu, t| {
                let v = &mu.v;
                match aceapex::decompress(mu.m) {
                    Ok(x) if v.first_failure().is_none() && x == v.out => {
                        t.count(if x == mu.base.original {
                            "decoded: the original's bytes"
                        } else {
                            "decoded: the CPU's changed bytes (checksums resealed)"
                        })
                    }
                    Err(Error::Decode(DecodeError::Block { block, status, .. })) => {
                        let b = block as usize;
                        *t.first_reason.entry(format!("{status:?}")).or_default() += 1;
                        match v.blocks[b] {
                            Some(s) if s == status => {
                                t.count("refused: a failing block, its reason")
                            }
                            want => t.disagree(
                                &mu.ctx,
                                mu.m,
                                format!("block {b}: {status:?}, {want:?}"),
                            ),
                        }
                    }
                    Err(Error::Decode(DecodeError::ContentChecksum))
                        if v.first_failure().is_none() =>
                    {
                        t.count("refused: content checksum")
                    }
                    other => t.disagree(
                        &mu.ctx,
                        mu.m,
                        format!(
                            "{:?} where the reference has {:?}",
                            other.map(|x| x.len()),
                            v.first_failure()
                        ),
                    ),
                }
            },
        );
        report(
            &what,
            &t,
            CPU_MUTANTS,
            tried,
            &format!(
                "{} base archives ({own} with self-contained blocks)",
                bases.len()
            ),
        );
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU; run with --ignored"]
pub(crate) fn hostile_archives_on_the_dense_pipe() {
    campaign("dense", Path::Dense, &bases(Kind::Default), SEED);
}

#[test]
#[ignore = "needs an NVIDIA GPU; run with --ignored"]
pub(crate) fn hostile_archives_on_the_dense_pipe_target_gpu() {
    campaign(
        "dense --target gpu",
        Path::Dense,
        &bases(Kind::TargetGpu),
        SEED + 1,
    );
}

#[test]
#[ignore = "needs an NVIDIA GPU; run with --ignored"]
pub(crate) fn hostile_archives_on_the_lane_decoder() {
    let mut b = bases(Kind::Default);
    b.extend(bases(Kind::TargetGpu));
    campaign("lane", Path::Lane, &b, SEED + 2);
}

#[test]
#[ignore = "needs an NVIDIA GPU; run with --ignored"]
pub(crate) fn hostile_archives_on_the_wavefront_decoder() {
    campaign("wavefront", Path::Wavefront, &bases(Kind::Window), SEED + 3);
}

#[test]
#[ignore = "needs an NVIDIA GPU; run with --ignored"]
pub(crate) fn hostile_archives_on_the_seek() {
    let mut b = bases(Kind::Default);
    b.extend(bases(Kind::TargetGpu));
    campaign("seek", Path::Seek, &b, SEED + 4);
}

/// Position-bound checksums (FORMAT.md §6) on every GPU path: the archives of
/// tests/moved/ (blocks 2 and 4 swapped, block 1 duplicated at 3; independent and
/// cross-block) are refused by the dense pipe, the lane decoder and the wavefront decoder
/// (each through `decoder::decompress_with`: statuses, then the host's checksums) and by
/// `GpuDecoder::decompress`, each naming the lowest moved block and its checksum; the seek
/// refuses every range over a moved block naming that block, and reads the blocks left in
/// place (a cross-block archive it declines, for the CPU `Reader`).
#[test]
#[ignore = "needs an NVIDIA GPU; run with --ignored"]
pub(crate) fn moved_blocks_fail_on_every_gpu_path() {
    use moved::{names_block, BLOCK, BLOCKS};
    let g = gpu();
    let dec = GpuDecoder::open().unwrap();
    for cross in [false, true] {
        let (data, cases) = moved::cases(cross);
        for c in &cases {
            let what = &c.what;
            let a = Archive::parse(&c.archive).unwrap();
            let first = c.moved[0];
            let names_first = |msg: &str, path: &str| {
                assert!(
                    names_block(msg, first) && msg.contains("checksum"),
                    "{what}: {path}: {msg}"
                );
            };
            let decoders: &[decoder::Decoder] = if cross {
                &[decoder::Decoder::Wavefront]
            } else {
                &[
                    decoder::Decoder::Dense,
                    decoder::Decoder::Lane,
                    decoder::Decoder::Wavefront,
                ]
            };
            for &d in decoders {
                match decoder::decompress_with(&g, &a, d) {
                    Err(e) => names_first(&e.to_string(), &format!("{d:?}")),
                    Ok(_) => panic!("{what}: {d:?} accepted it"),
                }
            }
            match dec.decompress(&c.archive) {
                Err(e) => names_first(&e.to_string(), "GpuDecoder::decompress"),
                Ok(_) => panic!("{what}: GpuDecoder::decompress accepted it"),
            }
            let reader = match dec.upload(&c.archive) {
                Err(Error::Gpu(GpuError::Unsupported(_))) if cross => continue,
                Err(e) => panic!("{what}: seek upload: {e}"),
                Ok(_) if cross => panic!("{what}: the seek took a cross-block archive"),
                Ok(r) => r,
            };
            for &m in &c.moved {
                let start = m as u64 * BLOCK as u64;
                for range in [
                    (start, BLOCK as u64),
                    (start + 100, 10),
                    (0, data.len() as u64),
                ] {
                    match reader.read_ranges_to_vec(&[range]) {
                        Err(Error::Decode(DecodeError::Block { block, status, .. })) => {
                            assert_eq!(status, Status::Checksum, "{what}: seek {range:?}");
                            let want = if range.1 == data.len() as u64 {
                                first
                            } else {
                                m
                            };
                            assert_eq!(block, want, "{what}: seek {range:?}");
                        }
                        other => panic!("{what}: seek {range:?}: {:?}", other.map(|x| x.len())),
                    }
                }
            }
            for i in (0..BLOCKS).filter(|&i| !c.moved.contains(&(i as u32))) {
                let got = reader
                    .read_ranges_to_vec(&[(i as u64 * BLOCK as u64, BLOCK as u64)])
                    .unwrap_or_else(|e| panic!("{what}: seek of block {i} in place: {e}"));
                assert!(
                    got == data[i * BLOCK..(i + 1) * BLOCK],
                    "{what}: seek of block {i} in place"
                );
            }
        }
    }
}

/// Mutant 180 of the `--target gpu` dense campaign (seed `SEED + 1`), made again without a
/// GPU ([`nth_mutant`]): bytes of the data section of "fasta gpu-4K" XORed, the block
/// checksums not resealed. Blocks 0-2 decode to the original's bytes; block 3 decodes to other
/// bytes under its original checksum, so it fails its checksum (FORMAT.md §4.5 step 4, §6),
/// and so do later blocks. The decode's report must name block 3, the lowest failing block
/// (the reference decoder's verdict), whatever the threads' timing: the host's check after a
/// GPU decode (`decoder::verify`, here on the reference's bytes, which the GPU decode
/// writes), run with many threads; a check that stops at the first failing block any
/// thread finds names a later one on a many-core host.
#[test]
fn a_target_gpu_mutant_is_refused_naming_its_lowest_damaged_block() {
    let bases = bases(Kind::TargetGpu);
    let mu = nth_mutant(&bases, SEED + 1, 180);
    let base = &bases[mu.base];
    assert_eq!(base.name, "fasta gpu-4K");
    assert!(mu.data_only && !mu.resealed);
    let a = Archive::parse(&mu.m).unwrap();
    let orig = Archive::parse(&base.archive).unwrap();
    let v = Verdict::of(&a);
    let block = |b: usize| {
        let r = a.block_range(b);
        r.start as usize..r.end as usize
    };
    for b in 0..3 {
        assert_eq!(v.blocks[b], None, "block {b}");
        assert!(v.out[block(b)] == base.original[block(b)], "block {b}");
    }
    // block 3: other bytes, the original's checksum
    assert!(v.out[block(3)] != base.original[block(3)]);
    assert_eq!(a.entries()[3].checksum, orig.entries()[3].checksum);
    assert_eq!(v.blocks[3], Some(Status::Checksum));
    assert_eq!(v.first_rule(), None, "{:?}", v.blocks);
    assert!(v.blocks[4..].iter().any(|x| x.is_some()), "{:?}", v.blocks);
    // the GPU decode's report, from the bytes it decoded (the reference's): block 3, every
    // time, with many threads
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(16)
        .build()
        .unwrap();
    for round in 0..20 {
        let e = pool.install(|| decoder::verify(&a, &v.out)).unwrap_err();
        let msg = e.to_string();
        assert!(moved::names_block(&msg, 3), "round {round}: {msg}");
    }
    match aceapex::decompress(mu.m.as_slice()) {
        Err(Error::Decode(DecodeError::Block { block, status, .. })) => {
            assert_eq!((block, status), (3, Status::Checksum))
        }
        other => panic!("the CPU decode: {:?}", other.map(|x| x.len())),
    }
}
