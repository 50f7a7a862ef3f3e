//! GPU measurements of the study (`aceapex reproduce --gpu`), device-resident: the archive
//! and its token lists are uploaded once and the output stays on the GPU; each time is the
//! median of five means of `ITERS` runs between two CUDA events ([`Gpu::time`]). Only what
//! `host/gpu` offers is used (the dense pipe's stage split, the match-copy kernels, the
//! wavefront decoder, [`crate::GpuReader`] for random access); every decode is verified on
//! the host before it is timed.

use crate::device::dense_layout::STAGE_SEQ_PARSE;
use crate::format::Archive;
use crate::gpu::decoder::{check_status, verify, Decoder, GpuArchive};
use crate::gpu::launch::{match_copy, CopyVariant};
use crate::gpu::{Ctx, Gpu, GpuError};
use crate::study::timing::{offsets, Latency, Rng, SEED};
use std::time::Instant;

/// Runs per timing event pair.
const ITERS: u32 = 5;

/// Median of five timings of `f` (seconds per run).
fn median_time(g: &Gpu, mut f: impl FnMut() -> Result<(), GpuError>) -> Result<f64, GpuError> {
    let mut t = Vec::with_capacity(5);
    for _ in 0..5 {
        t.push(g.time(ITERS, &mut f)?);
    }
    t.sort_by(f64::total_cmp);
    Ok(t[2])
}

/// The dense pipe's stage split on one archive (seconds per whole-archive decode).
#[derive(Clone, Copy, Debug)]
pub struct StageTimes {
    /// The full dense decode.
    pub dense: f64,
    /// rANS stage and load (stages without parse and write).
    pub load: f64,
    /// Up to the parallel parse and fill.
    pub parse: f64,
    /// Up to the one-lane (sequential) parse and fill.
    pub parse_sequential: f64,
}

impl StageTimes {
    /// The parallel parse's share of the full decode.
    pub fn parse_share(&self) -> f64 {
        (self.parse - self.load).max(0.0) / self.dense
    }

    /// The share the one-lane parse would have in a decode of the same other stages.
    pub fn sequential_parse_share(&self) -> f64 {
        let p = (self.parse_sequential - self.load).max(0.0);
        p / (self.dense - (self.parse - self.load).max(0.0) + p)
    }

    /// One-lane parse time over parallel parse time.
    pub fn scan_speedup(&self) -> f64 {
        (self.parse_sequential - self.load).max(0.0) / (self.parse - self.load).max(1e-12)
    }
}

/// Verifies a decode of `ga` with decoder `d` into fresh buffers.
fn verified(g: &Gpu, a: &Archive<'_>, ga: &GpuArchive, d: Decoder) -> Result<(), GpuError> {
    let (mut out, mut status) = ga.output_buffers(g)?;
    let st = ga.decode_all_status(g, d, &mut out, &mut status)?;
    check_status(&st[..ga.block_count() as usize])?;
    let back = g.download(&out)?;
    verify(a, &back[..a.header.original_size as usize])
}

/// The dense pipe's stage split on archive `a` (independent blocks).
///
/// Errors: any [`GpuError`] of upload, decode or verification.
pub fn stage_times(g: &Gpu, a: &Archive<'_>) -> Result<StageTimes, GpuError> {
    let ga = GpuArchive::upload(g, a)?;
    verified(g, a, &ga, Decoder::Dense)?;
    let (mut out, mut status) = ga.output_buffers(g)?;
    let mut timed = |d: Decoder| median_time(g, || ga.decode_all_with(g, d, &mut out, &mut status));
    Ok(StageTimes {
        dense: timed(Decoder::Dense)?,
        load: timed(Decoder::DenseStages(0))?,
        parse: timed(Decoder::DenseStages(1))?,
        parse_sequential: timed(Decoder::DenseStages(1 | STAGE_SEQ_PARSE))?,
    })
}

/// The match-copy kernels on the real token lists of `a` (whose original is `original`),
/// every dependency level's launch in order, and a coalesced write (a memset) of as many
/// bytes as the matches write.
#[derive(Clone, Copy, Debug)]
pub struct CopyTimes {
    /// One thread per match.
    pub thread_per_match: f64,
    /// One warp per match, period-aware fill.
    pub warp_period_aware: f64,
    /// The coalesced write of the match bytes.
    pub coalesced: f64,
    /// Logical bytes the matches write.
    pub match_bytes: u64,
}

/// [`CopyTimes`] of archive `a` with original `original`; the copies are checked against
/// the original before they are timed.
///
/// Errors: [`GpuError`] of the launches; a copy that does not reproduce the original's match
/// bytes is [`GpuError::Status`].
pub fn copy_times(g: &Gpu, a: &Archive<'_>, original: &[u8]) -> Result<CopyTimes, GpuError> {
    let ts = crate::gpu::tokens::from_archive(a, original)
        .map_err(|e| GpuError::Status(format!("token lists: {e}")))?;
    let levels: Vec<_> = ts
        .levels
        .iter()
        .map(|l| Ok((g.upload(bytemuck::cast_slice(l))?, l.len() as u32)))
        .collect::<Result<_, GpuError>>()?;
    let mut status = g
        .stream()
        .alloc_zeros::<u32>(1)
        .ctx("allocating a status word")?;
    let mut out = g.alloc_filled(ts.expected.len(), 0)?;
    // correctness: the original with every match's bytes poisoned, then the kernel's copies
    let mut check = |v: CopyVariant| -> Result<(), GpuError> {
        let mut seed = ts.expected.clone();
        for t in ts.levels.iter().flatten() {
            seed[t.dst as usize..][..t.len as usize].fill(0xA5);
        }
        let mut buf = g.upload(&seed)?;
        for (toks, n) in &levels {
            match_copy(g, v, &mut buf, toks, *n, &mut status)?;
        }
        if g.download(&buf)?[..ts.expected.len()] != ts.expected[..] {
            return Err(GpuError::Status(format!(
                "the {v:?} match copy did not reproduce the original"
            )));
        }
        Ok(())
    };
    check(CopyVariant::ThreadPerMatch)?;
    check(CopyVariant::WarpPeriodAware)?;
    // timing on an output without literals (the kernels' work does not depend on the bytes)
    let mut time = |v: CopyVariant| -> Result<f64, GpuError> {
        let mut run = || -> Result<(), GpuError> {
            for (toks, n) in &levels {
                match_copy(g, v, &mut out, toks, *n, &mut status)?;
            }
            Ok(())
        };
        median_time(g, &mut run)
    };
    let thread_per_match = time(CopyVariant::ThreadPerMatch)?;
    let warp_period_aware = time(CopyVariant::WarpPeriodAware)?;
    let match_bytes = ts.match_bytes();
    let mut flat = g.alloc_filled(match_bytes as usize, 0)?;
    let coalesced = median_time(g, || g.fill(&mut flat, 0x5A))?;
    Ok(CopyTimes {
        thread_per_match,
        warp_period_aware,
        coalesced,
        match_bytes,
    })
}

/// The wavefront decoder's time on archive `a` (seconds per decode) and the levels it ran.
///
/// Errors: any [`GpuError`] of upload, decode or verification.
pub fn wavefront_time(g: &Gpu, a: &Archive<'_>) -> Result<(f64, u32), GpuError> {
    let ga = GpuArchive::upload(g, a)?;
    // the first call captures the graph (and grows the levels if the table understated them)
    verified(g, a, &ga, Decoder::Wavefront)?;
    let levels = ga.wavefront_levels(g)?.unwrap_or(0);
    let (mut out, mut status) = ga.output_buffers(g)?;
    let t = median_time(g, || {
        ga.decode_all_with(g, Decoder::Wavefront, &mut out, &mut status)
    })?;
    Ok((t, levels))
}

/// `k` timings of the dense decode of `a` (seconds per whole-archive decode, each the mean of
/// `ITERS` runs between CUDA events), in run order, after a decode verified on the host: the
/// spread of a device-resident measurement (`bench.noise`).
///
/// Errors: any [`GpuError`] of upload, decode or verification.
pub fn decode_spread(g: &Gpu, a: &Archive<'_>, k: usize) -> Result<Vec<f64>, GpuError> {
    let ga = GpuArchive::upload(g, a)?;
    verified(g, a, &ga, Decoder::Dense)?;
    let (mut out, mut status) = ga.output_buffers(g)?;
    (0..k)
        .map(|_| {
            g.time(ITERS, || {
                ga.decode_all_with(g, Decoder::Dense, &mut out, &mut status)
            })
        })
        .collect()
}

/// Random access through [`crate::GpuReader`], device-resident (`seek.gpu`).
#[derive(Clone, Copy, Debug)]
pub struct SeekTimes {
    /// One aligned 16 KiB tile per request, host wall time from the call to the bytes in the
    /// device buffer.
    pub tile: Latency,
    /// Windows in one batch.
    pub batch: usize,
    /// Bytes per window.
    pub window: usize,
    /// Median seconds of one batch (of five).
    pub batch_s: f64,
}

impl SeekTimes {
    /// Windows per second of a batch.
    pub fn windows_per_s(&self) -> f64 {
        self.batch as f64 / self.batch_s.max(1e-12)
    }
}

/// Bytes of a tile and of a window of [`seek_times`].
pub const TILE: usize = 16 << 10;
pub const WINDOW: usize = 8 << 10;

/// Times `reader` (an upload of an archive whose original is `original`): `tiles` requests
/// of one aligned 16 KiB tile each, then five batches of `batch` random 8 KiB windows. The
/// first pass over the tiles and one batch are checked against the original byte for byte
/// before anything is timed. `None` when the original is shorter than a tile.
///
/// Errors: the reader's errors; answers that differ from the original are
/// [`crate::Error::Gpu`] with [`GpuError::Status`].
pub fn seek_times(
    reader: &crate::GpuReader<'_>,
    original: &[u8],
    tiles: usize,
    batch: usize,
) -> Result<Option<SeekTimes>, crate::Error> {
    let size = original.len() as u64;
    let tile_at = offsets(size, TILE as u64, TILE as u64, tiles.max(1));
    if tile_at.is_empty() {
        return Ok(None);
    }
    let differs = |what: &str| GpuError::Status(format!("{what} differ from the original"));
    let ranges: Vec<(u64, u64)> = tile_at.iter().map(|&o| (o, TILE as u64)).collect();
    let back = reader.read_ranges_to_vec(&ranges)?;
    for (i, &o) in tile_at.iter().enumerate() {
        if back[i * TILE..][..TILE] != original[o as usize..][..TILE] {
            return Err(differs("tiles read on the GPU").into());
        }
    }
    let mut buf = reader.alloc(TILE.max(batch * WINDOW))?;
    let mut t = Vec::with_capacity(tile_at.len());
    for &o in &tile_at {
        let t0 = Instant::now();
        reader.read_ranges(&[(o, TILE as u64)], &mut buf)?;
        t.push(t0.elapsed().as_secs_f64() * 1e6);
    }
    let tile = Latency::of(t, TILE);
    let mut r = Rng(SEED ^ 0x5EEC);
    let windows: Vec<(u64, u64)> = (0..batch.max(1))
        .map(|_| (r.below(size - WINDOW as u64 + 1), WINDOW as u64))
        .collect();
    let back = reader.read_ranges_to_vec(&windows)?;
    for (i, &(o, _)) in windows.iter().enumerate() {
        if back[i * WINDOW..][..WINDOW] != original[o as usize..][..WINDOW] {
            return Err(differs("windows read on the GPU").into());
        }
    }
    let mut bt = Vec::with_capacity(5);
    for _ in 0..5 {
        let t0 = Instant::now();
        reader.read_ranges(&windows, &mut buf)?;
        bt.push(t0.elapsed().as_secs_f64());
    }
    bt.sort_by(f64::total_cmp);
    Ok(Some(SeekTimes {
        tile,
        batch: windows.len(),
        window: WINDOW,
        batch_s: bt[2],
    }))
}
