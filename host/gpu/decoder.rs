//! GPU decoders over an archive kept resident in device memory ([`GpuArchive`]).
//!
//! Three decoders share the resident archive: the lane-per-block baseline
//! (`decode_blocks_lane`: one lane decodes a whole independent block with the same
//! sequential cores as the CPU decoder), the dense full pipe (`rans_decode_slices` then
//! `decode_blocks_dense`, independent blocks) and the wavefront decoder (`wave.rs`: parse
//! with dependency levels, one copy launch per level in a CUDA graph; also cross-block
//! archives). Each reports one status word per block.

pub use super::resident::GpuArchive;
pub use super::schedule::RansKernel;
use super::schedule::{self, BlockOrders, RansFacts};
use super::{launch, Ctx, Gpu, GpuError, GpuTuning};
use crate::decode::checksum::{self, KIB};
use crate::device::format::{
    packed_table_index_entry, table_index_entry, NO_TABLE, TABLE_CTX_SHIFT,
};
use crate::device::format::{BlockEntry, DecodeTable, STREAM_COUNT};
use crate::device::status::Status;
use crate::format::Archive;
use cudarc::driver::CudaSlice;
use std::sync::atomic::Ordering;

/// Which GPU decoder to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decoder {
    /// One lane per block, sequential shared cores (the baseline).
    Lane,
    /// The dense full pipe (rANS, parallel parse, pointer resolve, coalesced write).
    Dense,
    /// The rANS kernel and the dense kernel with only some stages (bit 0: parse+fill, bit 1:
    /// resolve+write, bit 2: sequential one-lane parse instead of the parallel one), for the
    /// stage-split and parse benchmarks; without bits 0 and 1 the output is incomplete.
    DenseStages(u32),
    /// Only the rANS kernel (stage-split benchmark).
    RansOnly,
    /// The wavefront decoder: matches grouped by dependency level, one launch per level,
    /// captured once in a CUDA graph (`host/gpu/wave.rs`). Decodes cross-block archives too.
    Wavefront,
}

impl Decoder {
    /// The decoder for whole-archive decodes: the dense full pipe for independent blocks,
    /// the wavefront when the window crosses blocks (the only one that takes them).
    pub fn for_archive(cross_block: bool) -> Decoder {
        if cross_block {
            Decoder::Wavefront
        } else {
            Decoder::Dense
        }
    }
}

/// `order` in device memory, or one unused zero word when it is empty (a kernel argument
/// needs an allocation; the kernels read no entry of an empty archive's orders).
fn upload_order(gpu: &Gpu, order: &[u32], what: &'static str) -> Result<CudaSlice<u32>, GpuError> {
    if order.is_empty() {
        gpu.stream().alloc_zeros::<u32>(1)
    } else {
        gpu.stream().clone_htod(order)
    }
    .ctx(what)
}

impl GpuArchive {
    /// Uploads the data section, block table, slice offsets and expanded decode tables, with
    /// the tuning the GPU was opened with ([`Gpu::tuning`]).
    pub fn upload(gpu: &Gpu, a: &Archive<'_>) -> Result<GpuArchive, GpuError> {
        GpuArchive::upload_with(gpu, a, gpu.tuning())
    }

    /// [`GpuArchive::upload`] with `tuning`'s per-archive choices (the stages' shared-memory
    /// staging, [`GpuTuning`]); the plan is made here, once, by [`schedule::rans_plan`].
    pub fn upload_with(
        gpu: &Gpu,
        a: &Archive<'_>,
        tuning: &GpuTuning,
    ) -> Result<GpuArchive, GpuError> {
        let runs = crate::format::archive::first_two_bit_runs(&a.entries).is_some();
        if runs && a.cross_block() {
            // (the wavefront's rANS stage leaves slices with runs to the dense kernel or the
            // lane kernel, neither of which takes a window across blocks)
            return Err(GpuError::Unsupported(
                "two-bit literal slices with runs (FORMAT.md §5.8) in an archive whose window \
                 crosses blocks are read on the CPU only"
                    .into(),
            ));
        }
        let mut phases = Phases::new(tuning.print_phases);
        let n_tables: usize = a
            .tables
            .iter()
            .flatten()
            .flatten()
            .map(|t| 1 + (t.has_context() || t.is_packed()) as usize)
            .sum();
        if n_tables >= 1 << TABLE_CTX_SHIFT {
            return Err(GpuError::Unsupported(format!(
                "{n_tables} decode tables (the GPU table index holds fewer than 2^24)"
            )));
        }
        // A valid archive may have a table group per 4 KiB block, whose expanded tables are
        // many times its output: such an archive goes to the CPU decoder
        // (`Archive::table`'s bounded cache) instead of filling host memory here.
        let table_bytes = n_tables as u64 * std::mem::size_of::<DecodeTable>() as u64;
        if table_bytes > crate::format::table_cache_budget(a.header.original_size) {
            return Err(GpuError::Unsupported(format!(
                "{} MiB of expanded decode tables for {} MiB of data",
                table_bytes >> 20,
                a.header.original_size >> 20
            )));
        }
        // (reserved up front: growing a vector of 16 KiB tables copies them again and again)
        let mut tables: Vec<DecodeTable> = Vec::new();
        tables.try_reserve_exact(n_tables).map_err(|_| {
            GpuError::Unsupported(format!(
                "no host memory for {} MiB of decode tables",
                table_bytes >> 20
            ))
        })?;
        let mut index: Vec<u32> = Vec::with_capacity(a.tables.len() * STREAM_COUNT);
        for t in a.tables.iter().flatten() {
            match t {
                Some(t) => {
                    // a context pair side by side, its bit in the index (FORMAT.md §5.4); a
                    // packed literal table, then its expansion table (§5.6)
                    // expanded for the upload alone, not kept in the archive's cache
                    let h = t.expand();
                    let st = h.get();
                    let ti = tables.len() as u32;
                    tables.extend_from_slice(st.tables);
                    if let Some(expand) = st.pack {
                        index.push(packed_table_index_entry(ti));
                        tables.push(*expand);
                    } else {
                        let ctx = st.has_context().then_some(st.ctx_bit);
                        index.push(table_index_entry(ti, ctx));
                    }
                }
                None => index.push(NO_TABLE),
            }
        }
        phases.lap(gpu, "  upload: decode tables")?;
        let data = gpu.upload_padded16(a.data)?;
        phases.lap(gpu, "  upload: data section")?;
        let entries = gpu.upload(bytemuck::cast_slice(&a.entries))?;
        let offsets = gpu.upload(bytemuck::cast_slice(&a.block_offsets))?;
        let tables_d = gpu.upload(bytemuck::cast_slice(&tables))?;
        let table_index = gpu.upload(bytemuck::cast_slice(&index))?;
        let mut dec_off: Vec<u64> = Vec::with_capacity(a.entries.len() * STREAM_COUNT);
        let mut total = 0u64;
        for e in &a.entries {
            for &len in &e.decoded_len {
                // 16-byte aligned and padded: the dense kernel loads streams 16 bytes at a
                // time; with room for the rANS stage's packed-literal words past the end
                dec_off.push(total);
                total += (len as u64 + crate::device::rans::KERNEL_SLOT_SLACK).div_ceil(16) * 16;
            }
        }
        let dec_offsets = gpu.upload(bytemuck::cast_slice(&dec_off))?;
        // the dense kernel's block queue, its count of blocks left to the lane kernel and the
        // hand-off words of the two kernels (device/src/handoff.rs), zero: no epoch yet
        let dense_queue = gpu
            .stream()
            .alloc_zeros::<u32>(crate::device::handoff::queue_words(a.entries.len()))
            .ctx("allocating the dense block queue")?;
        phases.lap(gpu, "  upload: block table, tables, offsets")?;
        let sms = gpu.sm_count();
        let rans = schedule::rans_plan(&RansFacts::of(a), sms, tuning);
        let BlockOrders {
            rans_chunk_order: order,
            dense_order,
            self_contained,
        } = schedule::block_orders(
            &a.entries,
            &a.block_offsets,
            a.data.len() as u64,
            |b| a.literal_width(b) as u32,
            a.header.group_blocks,
            &rans,
            sms,
        );
        let dense_order = upload_order(gpu, &dense_order, "uploading the dense block order")?;
        let rans_order = upload_order(gpu, &order, "uploading the rANS chunk order")?;
        let resident_bytes = (a.data.len()
            + a.entries.len() * std::mem::size_of::<BlockEntry>()
            + a.block_offsets.len() * 8
            + tables.len() * 16384
            + index.len() * 4) as u64;
        Ok(GpuArchive {
            data,
            data_len: a.data.len() as u64,
            entries,
            offsets,
            tables: tables_d,
            table_index,
            n_blocks: a.entries.len() as u32,
            n_tables: tables.len() as u32,
            group_blocks: a.header.group_blocks,
            block_size: a.header.block_size,
            window: a.header.window,
            match_base: a.header.match_base(),
            original_size: a.header.original_size,
            cross_block: a.cross_block(),
            line_layouts: a.has_line_layouts(),
            dec_offsets,
            decoded: std::sync::Mutex::new(None),
            decoded_len: total,
            lane_scratch: std::sync::Mutex::new(None),
            dense_queue: std::sync::Mutex::new(dense_queue),
            dense_epoch: std::sync::atomic::AtomicU32::new(0),
            no_overlap: std::sync::atomic::AtomicBool::new(false),
            no_self_contained: std::sync::atomic::AtomicBool::new(false),
            stall_next: std::sync::atomic::AtomicBool::new(false),
            dense_order,
            rans,
            rans_chunks: order.len() as u32,
            rans_order,
            self_contained,
            lane_after_dense: !schedule::dense_leaves_no_fallback(a),
            two_bit_runs: runs,
            host_entries: a.entries.to_vec(),
            own_blocks: super::seek::own_blocks(a),
            wave: std::sync::Mutex::new(None),
            seek: std::sync::Mutex::new(None),
            spare_plans: std::sync::Mutex::new(Vec::new()),
            resident_bytes,
        })
    }

    /// Decodes every block into `out` (device memory of `original_size` bytes) and one status
    /// word per block into `status`, with the dense full pipe for independent blocks and the
    /// wavefront decoder for archives whose window crosses blocks. Queued on the GPU's
    /// stream; does not wait. A `Status::DepthHint` word means the wavefront needs more
    /// levels than the block table announced: [`GpuArchive::grow_waves`], then decode again.
    pub fn decode_all(
        &self,
        gpu: &Gpu,
        out: &mut CudaSlice<u8>,
        status: &mut CudaSlice<u32>,
    ) -> Result<(), GpuError> {
        self.decode_all_with(gpu, Decoder::for_archive(self.cross_block), out, status)
    }

    /// Like [`GpuArchive::decode_all`] with a chosen decoder. `Dense` runs the dense full pipe,
    /// then the lane kernel on any block the dense kernel handed back (`Status::Fallback`),
    /// without a host round trip (no lane kernel where the upload found that no block can be
    /// handed back: `schedule::dense_leaves_no_fallback`). Every decoder but `Wavefront` needs
    /// independent blocks.
    pub fn decode_all_with(
        &self,
        gpu: &Gpu,
        d: Decoder,
        out: &mut CudaSlice<u8>,
        status: &mut CudaSlice<u32>,
    ) -> Result<(), GpuError> {
        if self.cross_block && d != Decoder::Wavefront {
            return Err(GpuError::Status(
                "this archive's window crosses blocks; only the wavefront decoder handles it"
                    .into(),
            ));
        }
        if self.line_layouts && d == Decoder::Wavefront {
            return Err(GpuError::Unsupported(
                "the wavefront decoder does not read line layouts (FORMAT.md §4.6)".into(),
            ));
        }
        if self.two_bit_runs && d == Decoder::Wavefront {
            return Err(GpuError::Unsupported(
                "the wavefront decoder does not read two-bit literal slices with runs \
                 (FORMAT.md §5.8)"
                    .into(),
            ));
        }
        use crate::device::dense_layout::STAGES_ALL;
        // the dense queue, locked from the rANS launch (which zeroes it) to the lane launch
        // (which reads its count): one decode's launches at a time on the stream
        let queue = || self.dense_queue.lock().unwrap_or_else(|e| e.into_inner());
        // the rANS stage, then the dense kernel, overlapping where the GPU allows it
        // (device/src/handoff.rs), under the next epoch
        let dense =
            |q: &mut CudaSlice<u32>, out: &mut CudaSlice<u8>, status: &mut CudaSlice<u32>, st| {
                use std::sync::atomic::Ordering::Relaxed;
                let epoch = self.next_epoch();
                let overlap = self.overlaps(gpu);
                // epoch 0: no hand-off words (the kernels one after the other)
                let epoch = if overlap { epoch } else { 0 };
                // (the test hook: an epoch no hand-off word holds)
                let dense_epoch = if self.stall_next.swap(false, Relaxed) {
                    epoch.wrapping_add(1).max(1)
                } else {
                    epoch
                };
                // self-contained blocks left to the dense kernel: one answer for both launches
                let leave = self.leaves_self_contained(st);
                // every block the dense kernel's alone: no rANS stage, no hand-off (epoch 0)
                let dense_epoch = if self.dense_alone(gpu, leave) {
                    0
                } else {
                    launch::rans_decode_slices(gpu, self, status, Some((&mut *q, epoch)), leave)?;
                    dense_epoch
                };
                launch::decode_blocks_dense(
                    gpu,
                    self,
                    out,
                    status,
                    q,
                    dense_epoch,
                    st,
                    overlap,
                    leave,
                )?;
                Ok::<bool, GpuError>(overlap)
            };
        match d {
            Decoder::Lane => {
                launch::decode_blocks_lane(gpu, self, out, status, &queue(), false, false)
            }
            Decoder::Dense => {
                let mut q = queue();
                let overlap = dense(&mut q, out, status, STAGES_ALL)?;
                // (none where no block can be handed back: schedule::dense_leaves_no_fallback)
                if !self.lane_after(STAGES_ALL) {
                    return Ok(());
                }
                launch::decode_blocks_lane(gpu, self, out, status, &q, true, overlap)
            }
            Decoder::RansOnly => launch::rans_decode_slices(gpu, self, status, None, false),
            Decoder::DenseStages(st) => {
                let mut q = queue();
                let overlap = dense(&mut q, out, status, st)?;
                if st & STAGES_ALL == STAGES_ALL && self.lane_after(st) {
                    // a complete decode (e.g. with the sequential parse): as `Dense`
                    launch::decode_blocks_lane(gpu, self, out, status, &q, true, overlap)?;
                }
                Ok(())
            }
            Decoder::Wavefront => {
                let mut w = self.wave.lock().unwrap_or_else(|e| e.into_inner());
                if w.is_none() {
                    let hint = self.host_entries.iter().map(|e| e.max_depth).max();
                    // FORMAT.md §3.1: max_depth is a hint; levels here are max_depth + 1
                    // a hint is not trusted beyond INITIAL_WAVES (a hostile max_depth must
                    // not buy a graph of 65,536 launches); deeper archives grow on DepthHint
                    let waves = hint
                        .map_or(1, |d| d.saturating_add(1))
                        .clamp(1, super::wave::INITIAL_WAVES);
                    *w = Some(super::resident::WaveState::new(gpu, self, waves)?);
                }
                let w = w.as_mut().expect("made above");
                if !launch::has_blocks(self, out, status) {
                    return Ok(());
                }
                w.run(gpu, self, out, status)
            }
        }
    }

    /// [`GpuArchive::decode_all_with`], then waits and returns the status words; when the
    /// wavefront reported `Status::DepthHint` it grows its waves to the measured depth and
    /// decodes once more (the block table's `max_depth` is only a hint, FORMAT.md §3.1).
    pub fn decode_all_status(
        &self,
        gpu: &Gpu,
        d: Decoder,
        out: &mut CudaSlice<u8>,
        status: &mut CudaSlice<u32>,
    ) -> Result<Vec<u32>, GpuError> {
        self.decode_all_with(gpu, d, out, status)?;
        let st = gpu.stream().clone_dtoh(status).ctx("downloading status")?;
        let hint = Status::DepthHint as u32;
        if d == Decoder::Wavefront && st.contains(&hint) && self.grow_waves(gpu)? {
            self.decode_all_with(gpu, d, out, status)?;
            return gpu.stream().clone_dtoh(status).ctx("downloading status");
        }
        Ok(st)
    }

    /// The next hand-off epoch (`device/src/handoff.rs`) of a decode or seek of this
    /// archive: never 0 and never the one before.
    pub(crate) fn next_epoch(&self) -> u32 {
        use std::sync::atomic::Ordering::Relaxed;
        let epoch = self.dense_epoch.fetch_add(1, Relaxed).wrapping_add(1);
        if epoch == 0 {
            // (0 is "no hand-off"; after 2^32 decodes the counter passes it)
            return self.dense_epoch.fetch_add(1, Relaxed).wrapping_add(1);
        }
        epoch
    }

    /// Whether this archive's dense pipe runs its two kernels overlapping (the GPU allows
    /// it, [`Gpu::overlap`], and [`GpuArchive::set_overlap`] did not turn it off).
    pub fn overlaps(&self, gpu: &Gpu) -> bool {
        gpu.overlap() && !self.no_overlap.load(Ordering::Relaxed)
    }

    /// Turns the overlap of the dense pipe's two kernels on (where the GPU allows it) or off
    /// for this archive (`device/src/handoff.rs`); both decode the same bytes. For
    /// comparisons and tests.
    pub fn set_overlap(&self, on: bool) {
        self.no_overlap.store(!on, Ordering::Relaxed);
    }

    /// Turns on (the default) or off, for this archive, that a dense decode leaves the blocks
    /// the dense kernel can decode from the data section alone out of the rANS stage
    /// (`schedule::leaves_self_contained`: two-bit literals and raw match streams); both decode
    /// the same bytes. For comparisons and tests.
    pub fn set_self_contained(&self, on: bool) {
        self.no_self_contained.store(!on, Ordering::Relaxed);
    }

    /// Whether a dense decode leaves this archive's self-contained blocks to the dense kernel
    /// now (`schedule::leaves_self_contained`), and whether the dense kernel then runs alone,
    /// without the rANS stage and the lane kernel (`schedule::dense_alone`). For tests.
    #[doc(hidden)]
    pub fn self_contained_path(&self, gpu: &Gpu) -> (bool, bool) {
        use crate::device::dense_layout::STAGES_ALL;
        let leave = self.leaves_self_contained(STAGES_ALL);
        (leave, self.dense_alone(gpu, leave))
    }

    /// Whether a dense decode with stage bits `stages` leaves the self-contained blocks to
    /// the dense kernel ([`schedule::leaves_self_contained`]).
    pub(crate) fn leaves_self_contained(&self, stages: u32) -> bool {
        schedule::leaves_self_contained(
            self.self_contained,
            !self.no_self_contained.load(Ordering::Relaxed),
            stages,
            self.rans.entry,
        )
    }

    /// Whether a dense decode with stage bits `stages` needs the lane kernel after it: where a
    /// block can come out of the dense kernel as `Status::Fallback`
    /// (`schedule::dense_leaves_no_fallback`), and where the rANS stage hands back the slices
    /// with runs (FORMAT.md §5.8) it decodes no self-contained block for (`dense/rans.rs`).
    pub(crate) fn lane_after(&self, stages: u32) -> bool {
        self.lane_after_dense || self.two_bit_runs && !self.leaves_self_contained(stages)
    }

    /// Whether a dense decode with the answer `leave` of
    /// [`GpuArchive::leaves_self_contained`] runs the dense kernel alone
    /// ([`schedule::dense_alone`]).
    pub(crate) fn dense_alone(&self, gpu: &Gpu, leave: bool) -> bool {
        schedule::dense_alone(
            leave,
            self.self_contained,
            self.n_blocks,
            self.lane_after_dense,
            gpu.facts(),
        )
    }

    /// How many blocks the dense kernel can decode from the data section alone
    /// (`device::own::own_slice`).
    pub fn self_contained_blocks(&self) -> u32 {
        self.self_contained
    }

    /// Test hook: the next dense decode hands the dense kernel an epoch that no hand-off word
    /// holds, so that its first wait gives up after `handoff::WAIT_LIMIT_NS` (what a paused
    /// GPU or a word never written would give) and every CTA waits for the whole rANS grid
    /// instead (`device/src/handoff.rs`): the decode takes a second longer and decodes the
    /// same bytes. (A decode of the dense kernel alone, `schedule::dense_alone`, has no
    /// hand-off: it uses the hook up without stalling.)
    #[doc(hidden)]
    pub fn stall_next_dense_decode(&self) {
        self.stall_next.store(true, Ordering::Relaxed);
    }

    /// Test hook: fills the rANS stage's scratch of decoded streams with `byte`, so that a
    /// dense kernel that read a block's streams before the stage wrote them would decode
    /// wrong (the scratch is allocated on first use: this allocates it).
    #[doc(hidden)]
    pub fn poison_scratch(&self, gpu: &Gpu, byte: u8) -> Result<(), GpuError> {
        self.ensure_decoded(gpu)?;
        let mut guard = self.decoded.lock().unwrap_or_else(|e| e.into_inner());
        gpu.fill(guard.as_mut().expect("ensure_decoded allocated it"), byte)
    }

    /// After a wavefront decode reported `Status::DepthHint` (and the stream finished): sets
    /// the wave count to the level the parse measured. Returns false when the count already
    /// covered it (the status had another cause).
    pub fn grow_waves(&self, gpu: &Gpu) -> Result<bool, GpuError> {
        let mut w = self.wave.lock().unwrap_or_else(|e| e.into_inner());
        let Some(w) = w.as_mut() else {
            return Ok(false);
        };
        let measured = w.measured_levels(gpu)?;
        if measured <= w.n_waves {
            return Ok(false);
        }
        if measured > super::wave::MAX_WAVES {
            return Err(GpuError::Unsupported(format!(
                "dependency depth {measured} exceeds the wavefront decoder's {} levels",
                super::wave::MAX_WAVES
            )));
        }
        w.set_waves(gpu, measured)?;
        Ok(true)
    }

    /// The largest dependency level the last wavefront parse measured (1 + the format's
    /// level, so 1 + the largest `max_depth` of an honest block table; 0 without matches),
    /// or `None` before the first wavefront decode. Waits for the stream.
    pub fn wavefront_levels(&self, gpu: &Gpu) -> Result<Option<u32>, GpuError> {
        let w = self.wave.lock().unwrap_or_else(|e| e.into_inner());
        w.as_ref().map(|w| w.measured_levels(gpu)).transpose()
    }

    /// Allocates the decoded-stream scratch of the rANS kernel if it is not there yet.
    pub(crate) fn ensure_decoded(&self, gpu: &Gpu) -> Result<(), GpuError> {
        let mut guard = self.decoded.lock().unwrap_or_else(|e| e.into_inner());
        if guard.is_none() {
            // SAFETY (alloc): every decoded byte a later kernel reads was written by the
            // rANS kernel for a block whose status stayed zero; other blocks are not read.
            *guard = Some(
                unsafe { gpu.stream().alloc::<u8>(self.decoded_len.max(1) as usize) }
                    .ctx("allocating decoded streams")?,
            );
        }
        Ok(())
    }

    /// Number of blocks.
    pub fn block_count(&self) -> u32 {
        self.n_blocks
    }

    /// Original size in bytes.
    pub fn original_size(&self) -> u64 {
        self.original_size
    }

    /// The buffers a decode of this archive writes ([`GpuArchive::decode_all`]): the output,
    /// `original_size` bytes (at least 1) filled with the poison byte 0xA5 so that a byte no
    /// kernel wrote shows, and the status words, one per block (at least 1), zeroed.
    pub fn output_buffers(&self, gpu: &Gpu) -> Result<(CudaSlice<u8>, CudaSlice<u32>), GpuError> {
        let out = gpu.alloc_filled(self.original_size as usize, 0xA5)?;
        let status = gpu
            .stream()
            .alloc_zeros::<u32>(self.n_blocks.max(1) as usize)
            .ctx("allocating status")?;
        Ok((out, status))
    }
}

/// Turns per-block status words into an error naming the first failing block.
pub fn check_status(status: &[u32]) -> Result<(), GpuError> {
    for (b, &s) in status.iter().enumerate() {
        if s != 0 {
            let what = Status::from_u32(s)
                .map(|s| s.describe())
                .unwrap_or("unknown status");
            return Err(GpuError::Status(format!("block {b}: {what}")));
        }
    }
    Ok(())
}

/// Decodes a whole archive on the GPU and returns the bytes, verified on the host against
/// every block's XXH3-64 and the content checksum. The output buffer is poisoned first.
/// Independent blocks use the dense full pipe, cross-block archives the wavefront decoder.
pub fn decompress(gpu: &Gpu, a: &Archive<'_>) -> Result<Vec<u8>, GpuError> {
    decompress_with(gpu, a, Decoder::for_archive(a.cross_block()))
}

/// [`decompress`] with a chosen decoder.
///
/// With [`GpuTuning::print_phases`] set in the GPU's tuning, prints the wall time of each
/// phase (upload, output allocation, decode with status, download, host verification) to
/// standard error: the end-to-end split that PERFORMANCE.md quotes.
pub fn decompress_with(gpu: &Gpu, a: &Archive<'_>, d: Decoder) -> Result<Vec<u8>, GpuError> {
    let mut phases = Phases::new(gpu.tuning().print_phases);
    let ga = GpuArchive::upload(gpu, a)?;
    phases.lap(gpu, "upload")?;
    let (mut out, mut status) = ga.output_buffers(gpu)?;
    phases.lap(gpu, "alloc+poison")?;
    let st = ga.decode_all_status(gpu, d, &mut out, &mut status)?;
    check_status(&st[..ga.n_blocks as usize])?;
    phases.lap(gpu, "decode+status")?;
    let mut bytes = gpu.download(&out)?;
    bytes.truncate(a.header.original_size as usize);
    phases.lap(gpu, "download")?;
    verify(a, &bytes)?;
    phases.lap(gpu, "verify")?;
    Ok(bytes)
}

/// Checks decoded bytes against the block checksums and the content checksum (with
/// [`crate::decode::checksum`], AVX2 when the CPU has it), hashing each byte once: the blocks in
/// parallel into per-KiB sums, which give each block's checksum and, folded in order, the
/// content checksum (as the CPU decoder does; windows of 64 MiB bound the sums' memory).
///
/// # Errors
/// [`GpuError::Status`] naming the lowest block whose checksum fails (the same block
/// whatever the threads' timing, as the reference decoder names it), else the content
/// checksum.
pub fn verify(a: &Archive<'_>, bytes: &[u8]) -> Result<(), GpuError> {
    // block sizes are whole KiBs (FORMAT.md §2), so every block starts on a KiB
    let bs = a.header.block_size as usize;
    let window = bs * (WINDOW_BYTES / bs).max(1);
    let mut sums = vec![[0u64; 8]; window.min(bytes.len()).div_ceil(KIB)];
    let mut content = checksum::Folder::new(bytes.len());
    for (w, win) in bytes.chunks(window).enumerate() {
        let sums = &mut sums[..win.len().div_ceil(KIB)];
        let first = w * (window / bs);
        if let Some(j) = lowest_bad_block(win, bs, sums, &a.entries[first..]) {
            return Err(GpuError::Status(format!(
                "block {}: {}",
                first + j,
                Status::Checksum.describe()
            )));
        }
        content.absorb(w * (window / KIB), sums);
    }
    if content.finish(bytes) != a.header.content_checksum {
        return Err(GpuError::Status("content checksum mismatch".into()));
    }
    Ok(())
}

/// Hashes the blocks of `win` (block `j` is `win[j * bs..]`, `bs` bytes but the last; whole
/// KiBs, FORMAT.md §2) in parallel into their per-KiB sums in `sums` (kept for the content
/// checksum) and returns the lowest `j` whose XXH3-64 is not `entries[j]`'s checksum (§6):
/// the lowest, not the first a thread finds, so that the block an error names does not
/// depend on the threads' timing. For [`verify`] and the decode in pieces.
pub(super) fn lowest_bad_block(
    win: &[u8],
    bs: usize,
    sums: &mut [checksum::KibSums],
    entries: &[BlockEntry],
) -> Option<usize> {
    use rayon::prelude::*;
    win.par_chunks(bs)
        .zip(sums.par_chunks_mut(bs / KIB))
        .zip(entries.par_iter())
        .enumerate()
        .find_map_first(|(j, ((chunk, s), e))| {
            let s = &mut s[..chunk.len() / KIB];
            checksum::kib_sums(chunk, s);
            (checksum::hash_with_sums(chunk, s) != e.checksum).then_some(j)
        })
}

/// Wall-time laps printed to standard error when [`GpuTuning::print_phases`] is set; only
/// then does a lap wait for the GPU (so that each lap is its phase's time), and otherwise
/// costs nothing.
struct Phases(Option<std::time::Instant>);

impl Phases {
    fn new(on: bool) -> Phases {
        Phases(on.then(std::time::Instant::now))
    }

    fn lap(&mut self, gpu: &Gpu, name: &str) -> Result<(), GpuError> {
        if let Some(t) = &mut self.0 {
            gpu.sync()?;
            eprintln!("phase {name}: {:.2} ms", t.elapsed().as_secs_f64() * 1e3);
            *t = std::time::Instant::now();
        }
        Ok(())
    }
}

/// Output bytes whose per-KiB sums [`verify`] holds at once.
const WINDOW_BYTES: usize = 64 << 20;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::{compress_settings, Settings};

    /// Text with repeats, `n` bytes.
    fn text(n: usize) -> Vec<u8> {
        let words = [
            "lorem ",
            "ipsum ",
            "dolor ",
            "sit ",
            "amet,\n",
            "consectetur ",
        ];
        let mut x = 7u32;
        let mut v = Vec::with_capacity(n + 16);
        while v.len() < n {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            v.extend_from_slice(words[(x >> 16) as usize % words.len()].as_bytes());
        }
        v.truncate(n);
        v
    }

    /// The host check after a GPU decode: intact output passes at every size (one KiB sum
    /// per byte hashed once; short inputs, partial last blocks and KiBs, several windows of
    /// sums), and a flipped byte anywhere fails, naming the block; so does output that
    /// passes every block but not the content checksum.
    #[test]
    fn verify_accepts_the_original_and_names_the_damaged_block() {
        for (n, bs) in [
            (0, 4096),
            (1, 4096),
            (240, 4096),
            (241, 4096),
            (4096, 4096),
            (5000, 4096),
            (100_000, 16384),
            (70 << 20 | 777, 1 << 20),
        ] {
            let data = text(n);
            let opts = Settings {
                block_size: bs,
                level: 1,
                ..Default::default()
            };
            let packed = compress_settings(&data, &opts, &|_| {}).unwrap();
            let a = Archive::parse(&packed).unwrap();
            verify(&a, &data).unwrap_or_else(|e| panic!("n {n}: {e}"));
            if n == 0 {
                continue;
            }
            for at in [0, n / 2, n - 1] {
                let mut bad = data.clone();
                bad[at] ^= 0x40;
                let e = verify(&a, &bad).expect_err("a flipped byte").to_string();
                let block = at / bs as usize;
                assert!(e.contains(&format!("block {block}:")), "n {n} at {at}: {e}");
            }
        }
        // every block intact but the content checksum wrong (a damaged header field)
        let data = text(50_000);
        let packed = compress_settings(&data, &Settings::default(), &|_| {}).unwrap();
        let mut a = Archive::parse(&packed).unwrap();
        a.header.content_checksum ^= 1;
        let e = verify(&a, &data).expect_err("content checksum").to_string();
        assert!(e.contains("content checksum"), "{e}");
    }

    /// Several damaged blocks: the check names the lowest, whatever the threads' timing (the
    /// reference decoder's first failing block, which the GPU decode's report must name).
    /// Every block from block 100 on is damaged: the thread that hashes block 100 hashes
    /// the blocks before it in its part first, while the threads given the later parts find
    /// a damaged block at once; many threads, several rounds.
    #[test]
    fn verify_names_the_lowest_damaged_block() {
        let bs = 64usize << 10;
        let data = text(256 * bs);
        let opts = Settings {
            block_size: bs as u32,
            level: 1,
            ..Default::default()
        };
        let packed = compress_settings(&data, &opts, &|_| {}).unwrap();
        let a = Archive::parse(&packed).unwrap();
        let mut bad = data.clone();
        for b in 100..256 {
            bad[b * bs + 100] ^= 0x40;
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(16)
            .build()
            .unwrap();
        for round in 0..20 {
            let e = pool
                .install(|| verify(&a, &bad))
                .expect_err("damaged blocks")
                .to_string();
            assert!(e.contains("block 100:"), "round {round}: {e}");
        }
    }
}
