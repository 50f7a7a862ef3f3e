//! The wavefront decoder: rANS, a parse that gives every match its dependency
//! level, literal placement and level buckets, then one copy launch per level, one warp per
//! match — all captured once in a CUDA graph and replayed. Unlike the dense pipe it also
//! decodes archives whose window crosses blocks: blocks are parsed in generations, each
//! after the blocks it reads from (kernels in `device/src/wave.rs`, data in
//! `device/src/wave_layout.rs`).
//!
//! Device memory beyond the archive: 16 bytes per command-stream byte for the segments and
//! as much again for the tokens (about 2-4 bytes per output byte on real corpora), plus
//! 12 bytes per level.

use super::resident::{GpuArchive, WaveState};
use super::{launch, Ctx, Gpu, GpuError};
use crate::device::format::{BlockEntry, STREAM_COMMANDS};
use crate::device::wave_layout::{WaveArgs, WaveSeg};
use cudarc::driver::{CudaGraph, CudaSlice, DevicePtr};

/// Most copy levels (graph launches) the wavefront decoder builds; a deeper archive is
/// [`GpuError::Unsupported`] here (the CPU decoder and the dense pipe have no such limit).
/// Real corpora stay far below (tens to hundreds of levels).
pub const MAX_WAVES: u32 = 1 << 16;

/// Most copy levels the first decode of an archive builds from the block table's hint;
/// beyond it, the level the parse measures decides ([`GpuArchive::grow_waves`]).
pub const INITIAL_WAVES: u32 = 8192;

/// Parse generations of the blocks: generation 0 holds every block that reads only itself;
/// a block that reads earlier blocks goes one generation after the latest of them
/// (`1 + max gen[lowest_source_block..b]`). Independent archives have one generation.
/// Returns the blocks in generation order and each generation's `(first, count)`.
pub(crate) fn generations(entries: &[BlockEntry]) -> (Vec<u32>, Vec<(usize, usize)>) {
    let n = entries.len();
    // range-max segment tree over the generations assigned so far
    let size = n.next_power_of_two().max(1);
    let mut tree = vec![0u32; 2 * size];
    let range_max = |tree: &[u32], mut lo: usize, mut hi: usize| {
        let mut m = 0;
        lo += size;
        hi += size;
        while lo < hi {
            if lo & 1 == 1 {
                m = m.max(tree[lo]);
                lo += 1;
            }
            if hi & 1 == 1 {
                hi -= 1;
                m = m.max(tree[hi]);
            }
            lo /= 2;
            hi /= 2;
        }
        m
    };
    let mut gen = vec![0u32; n];
    for (b, e) in entries.iter().enumerate() {
        let lo = (e.lowest_source_block as usize).min(b);
        let g = if lo == b {
            0
        } else {
            1 + range_max(&tree, lo, b)
        };
        gen[b] = g;
        let mut i = b + size;
        tree[i] = g;
        while i > 1 {
            i /= 2;
            tree[i] = tree[2 * i].max(tree[2 * i + 1]);
        }
    }
    let n_gens = gen.iter().max().map_or(0, |&g| g as usize + 1);
    let mut counts = vec![0usize; n_gens];
    for &g in &gen {
        counts[g as usize] += 1;
    }
    let mut gens = Vec::with_capacity(n_gens);
    let mut first = 0;
    for &c in &counts {
        gens.push((first, c));
        first += c;
    }
    let mut next: Vec<usize> = gens.iter().map(|g| g.0).collect();
    let mut list = vec![0u32; n];
    for (b, &g) in gen.iter().enumerate() {
        list[next[g as usize]] = b as u32;
        next[g as usize] += 1;
    }
    (list, gens)
}

impl WaveState {
    /// Allocates the buffers for `ga` with `n_waves` copy levels.
    pub(crate) fn new(gpu: &Gpu, ga: &GpuArchive, n_waves: u32) -> Result<WaveState, GpuError> {
        let s = gpu.stream();
        let mut seg_base = Vec::with_capacity(ga.host_entries.len());
        let mut total = 0u64;
        for e in &ga.host_entries {
            seg_base.push(total);
            total += e.decoded_len[STREAM_COMMANDS] as u64;
        }
        let (list, gens) = generations(&ga.host_entries);
        let seg_bytes = (total.max(1) as usize)
            .checked_mul(std::mem::size_of::<WaveSeg>())
            .ok_or_else(|| {
                GpuError::Status("archive too large for the wavefront decoder".into())
            })?;
        // SAFETY (allocs): segments and tokens are written before they are read — a block's
        // segments by its parse (count written last), tokens by wave_place up to the counts
        // the parse made; the copy kernels read only [offset[l], offset[l+1]).
        let segs = unsafe { s.alloc::<u8>(seg_bytes) }.ctx("allocating wavefront segments")?;
        let tokens = unsafe { s.alloc::<u8>(seg_bytes) }.ctx("allocating wavefront tokens")?;
        Ok(WaveState {
            seg_base: s
                .clone_htod(if seg_base.is_empty() {
                    &[0u64][..]
                } else {
                    &seg_base
                })
                .ctx("uploading segment bases")?,
            segs,
            seg_count: s
                .alloc_zeros::<u32>(ga.host_entries.len().max(1))
                .ctx("allocating segment counts")?,
            tokens,
            levels: s
                .alloc_zeros::<u32>(3 * (n_waves as usize + 2))
                .ctx("allocating level arrays")?,
            max_level: s.alloc_zeros::<u32>(1).ctx("allocating max level")?,
            args: s
                .alloc_zeros::<u8>(std::mem::size_of::<WaveArgs>())
                .ctx("allocating wavefront arguments")?,
            args_host: None,
            gen_list: s
                .clone_htod(if list.is_empty() { &[0u32][..] } else { &list })
                .ctx("uploading generations")?,
            gens,
            seg_total: total,
            n_waves,
            graph: None,
        })
    }

    /// Sets the number of copy levels (reallocating the level arrays; the graph is rebuilt).
    pub(crate) fn set_waves(&mut self, gpu: &Gpu, n_waves: u32) -> Result<(), GpuError> {
        self.levels = gpu
            .stream()
            .alloc_zeros::<u32>(3 * (n_waves as usize + 2))
            .ctx("allocating level arrays")?;
        self.n_waves = n_waves;
        self.graph = None;
        self.args_host = None;
        Ok(())
    }

    /// Queues one wavefront decode of `ga` into `out` with a status word per block: replays
    /// the graph, capturing it first when the buffers or the wave count changed.
    pub(crate) fn run(
        &mut self,
        gpu: &Gpu,
        ga: &GpuArchive,
        out: &mut CudaSlice<u8>,
        status: &mut CudaSlice<u32>,
    ) -> Result<(), GpuError> {
        let s = gpu.stream();
        ga.ensure_decoded(gpu)?;
        let dec = ga.decoded.lock().unwrap_or_else(|e| e.into_inner());
        let decoded = dec.as_ref().expect("ensure_decoded allocated it");
        let lv = self.n_waves as u64 + 2;
        let ptr = |p: u64, words: u64| p + 4 * words;
        let levels = self.levels.device_ptr(s).0;
        let args = WaveArgs {
            decoded: decoded.device_ptr(s).0,
            decoded_len: ga.decoded_len,
            dec_offsets: ga.dec_offsets.device_ptr(s).0,
            entries: ga.entries.device_ptr(s).0,
            seg_base: self.seg_base.device_ptr(s).0,
            segs: self.segs.device_ptr(s).0,
            seg_total: self.seg_total,
            seg_count: self.seg_count.device_ptr(s).0,
            level_count: levels,
            level_offset: ptr(levels, lv),
            level_cursor: ptr(levels, 2 * lv),
            tokens: self.tokens.device_ptr(s).0,
            out: out.device_ptr(s).0,
            out_len: ga.original_size,
            status: status.device_ptr(s).0,
            max_level: self.max_level.device_ptr(s).0,
            n_blocks: ga.n_blocks,
            block_size: ga.block_size,
            window: ga.window,
            n_waves: self.n_waves,
            match_base: ga.match_base,
            pad: 0,
        };
        drop(dec);
        if self.args_host != Some(args) {
            s.memcpy_htod(bytemuck::bytes_of(&args), &mut self.args)
                .ctx("uploading wavefront arguments")?;
            self.args_host = Some(args);
        }
        if self.graph.as_ref().map(|g| g.0) != Some(args) {
            self.graph = None;
            let g = self.capture(gpu, ga, status)?;
            self.graph = Some((args, g));
        }
        let (_, g) = self.graph.as_ref().expect("captured above");
        g.launch().ctx("launching the wavefront graph")
    }

    fn capture(
        &mut self,
        gpu: &Gpu,
        ga: &GpuArchive,
        status: &mut CudaSlice<u32>,
    ) -> Result<CudaGraph, GpuError> {
        use cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
        let s = gpu.stream();
        s.begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
            .ctx("beginning graph capture")?;
        let queued = self.queue(gpu, ga, status);
        // always end the capture, so the stream is usable again whatever happened
        let graph = s.end_capture(CUgraphInstantiate_flags(0));
        queued?;
        graph
            .ctx("instantiating the wavefront graph")?
            .ok_or_else(|| GpuError::Status("graph capture produced no graph".into()))
    }

    /// The decode, kernel by kernel (captured into the graph).
    fn queue(
        &mut self,
        gpu: &Gpu,
        ga: &GpuArchive,
        status: &mut CudaSlice<u32>,
    ) -> Result<(), GpuError> {
        let s = gpu.stream();
        s.memset_zeros(&mut self.levels)
            .ctx("zeroing level counts")?;
        s.memset_zeros(&mut self.max_level)
            .ctx("zeroing max level")?;
        launch::rans_decode_slices(gpu, ga, status, None, false)?;
        for &(first, count) in &self.gens {
            launch::wave_parse(gpu, &self.args, &self.gen_list, first, count)?;
        }
        launch::wave_scan(gpu, &self.args)?;
        launch::wave_place(gpu, &self.args, ga.n_blocks)?;
        for level in 1..=self.n_waves {
            launch::wave_copy(gpu, &self.args, level)?;
        }
        Ok(())
    }

    /// The largest dependency level the last parse saw (after the stream finished).
    pub(crate) fn measured_levels(&self, gpu: &Gpu) -> Result<u32, GpuError> {
        let v = gpu
            .stream()
            .clone_dtoh(&self.max_level)
            .ctx("downloading max level")?;
        Ok(v[0])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(lowest: u32) -> BlockEntry {
        BlockEntry {
            lowest_source_block: lowest,
            ..bytemuck::Zeroable::zeroed()
        }
    }

    #[test]
    fn independent_blocks_form_one_generation() {
        let e: Vec<BlockEntry> = (0..5).map(entry).collect();
        let (list, gens) = generations(&e);
        assert_eq!(gens, vec![(0, 5)]);
        assert_eq!(list, vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn a_block_follows_every_block_it_reads() {
        // block: lowest source -> expected generation
        // 0:0 -> 0, 1:0 -> 1, 2:2 -> 0, 3:1 -> 1 + max(1, 0) = 2, 4:4 -> 0, 5:3 -> 1 + max(2, 0) = 3
        let e: Vec<BlockEntry> = [0, 0, 2, 1, 4, 3].into_iter().map(entry).collect();
        let (list, gens) = generations(&e);
        assert_eq!(gens, vec![(0, 3), (3, 1), (4, 1), (5, 1)]);
        assert_eq!(list, vec![0, 2, 4, 1, 3, 5]);
    }

    #[test]
    fn no_blocks_no_generations() {
        let (list, gens) = generations(&[]);
        assert!(list.is_empty() && gens.is_empty());
    }
}
