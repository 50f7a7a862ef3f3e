//! Random access on the GPU: byte ranges of an archive kept resident in device memory, read
//! in one submission per batch (one range or a hundred thousand).
//!
//! A request is planned on the host ([`plan()`]: the blocks the ranges lie in, sorted and each
//! once, and which of them need the rANS stage), written to page-locked host memory (where
//! the kernels read a small request, [`ZERO_COPY_BYTES`], and from where a larger one is
//! uploaded in one copy), and decoded by at most three kernels on the stream
//! (`launch::seek`): the rANS stage for the blocks whose streams are entropy-coded,
//! `decode_blocks_seek` (each block into its slot, its XXH3-64 checked on the device,
//! FORMAT.md §6; beside the rANS stage, each of its blocks after that block's hand-off) and
//! `seek_gather` (each range from the slots into the caller's device buffer, with its
//! status). A request of whole blocks ([`Plan::direct`]: aligned tiles of one block or more)
//! needs no slots and no gather: the dense kernel writes each block into its place in the
//! caller's buffer and its status words. Only the status words come back to the host
//! (written there by the kernels for a small request, copied for a larger one). A block the
//! dense kernel cannot take (`Status::Fallback`) is reported for its ranges;
//! [`crate::GpuReader`] reads those ranges on the CPU instead. Archives whose window crosses
//! blocks are not supported here (their blocks need their sources decoded first): the CPU
//! [`crate::Reader`] reads them.

use super::resident::{GpuArchive, SeekState};
use super::{launch, Ctx, Gpu, GpuError};
use crate::device::status::Status;
use crate::format::Archive;
use cudarc::driver::{CudaSlice, DevicePtr};

/// Why an archive whose window crosses blocks is not read here.
pub(crate) const CROSS_BLOCK: &str =
    "random access on the GPU needs independent blocks (this archive's window crosses blocks)";

/// Bytes of request, and of range status words, up to which a seek is read and answered in
/// place in page-locked host memory, with no copy either way (a request of up to about 100
/// ranges); a larger one is copied, as the kernels' reads across the bus would cost more than
/// the copy.
pub const ZERO_COPY_BYTES: usize = 4096;

/// The device address of page-locked host memory allocated mapped
/// (`CU_MEMHOSTALLOC_DEVICEMAP`) in the context bound to this thread.
fn device_address<T>(p: *mut T) -> Result<u64, GpuError> {
    let mut d: cudarc::driver::sys::CUdeviceptr = 0;
    // SAFETY: `p` is the start of a mapped page-locked allocation of the bound context (the
    // callers' allocations, which bind it); `d` is a valid out-pointer.
    unsafe { cudarc::driver::sys::cuMemHostGetDevicePointer_v2(&mut d, p.cast(), 0) }
        .result()
        .ctx("the host buffer's device address")?;
    Ok(d)
}

/// Per block of `a`: whether the dense kernel decodes it from the data section alone (a
/// two-bit literal slice and raw match streams, `device::own::own_slice`).
pub(crate) fn own_blocks(a: &Archive<'_>) -> Vec<bool> {
    let data_len = a.data.len() as u64;
    a.entries
        .iter()
        .zip(&a.block_offsets)
        .map(|(e, &off)| crate::device::own::own_slice(e, off, data_len).is_some())
        .collect()
}

mod plan;
pub use plan::*;

/// What a random-access read found for one range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RangeStatus {
    /// Every block of the range decoded and matched its checksum: its bytes are right.
    Ok,
    /// Block `block` of the range did not decode or verify, for `status`; the range's bytes
    /// in the output are not the original's (`Status::Fallback`: the dense kernel cannot
    /// take the block, the CPU can).
    Bad {
        /// The first bad block of the range.
        block: u32,
        /// Why.
        status: Status,
    },
}

impl GpuArchive {
    /// Per block: whether a random-access read decodes it without the rANS stage (for
    /// [`plan()`]).
    pub fn own_blocks(&self) -> &[bool] {
        &self.own_blocks
    }

    /// The chunks of this archive's seek rANS stage (for [`plan()`]): its table groups, and
    /// [`seek_chunk_blocks`] of the rANS entry point and warps per block it was uploaded with.
    pub fn seek_chunks(&self) -> SeekChunks {
        SeekChunks {
            group_blocks: self.group_blocks.max(1),
            blocks: seek_chunk_blocks(self.rans.entry, self.rans.halves),
            lone_blocks: SEEK_LONE_BLOCKS,
        }
    }

    /// The archive's block size in bytes (FORMAT.md §2).
    pub fn block_size(&self) -> u32 {
        self.block_size
    }

    /// Reads `ranges` (`(offset, length)` in original bytes) of this resident archive into
    /// `out`, back to back in request order from byte 0 (`out` must hold the sum of the
    /// lengths), decoding only the blocks they lie in, each verified by its XXH3-64 on the
    /// device; returns one [`RangeStatus`] per range. The launches of `launch::seek`, with one
    /// upload of the request and one download of the status words unless the request is
    /// small ([`ZERO_COPY_BYTES`]: the kernels read and answer it in host memory).
    ///
    /// Errors: [`GpuError::Status`] for a range that is empty or past the end, or an `out`
    /// too small; [`GpuError::Unsupported`] for an archive whose window crosses blocks; a
    /// driver error.
    pub fn read_ranges(
        &self,
        gpu: &Gpu,
        ranges: &[(u64, u64)],
        out: &mut CudaSlice<u8>,
    ) -> Result<Vec<RangeStatus>, GpuError> {
        // (a spare plan's buffers, taken and given back under a lock held for neither the
        // planning nor the read)
        let spare = || self.spare_plans.lock().unwrap_or_else(|e| e.into_inner());
        let mut p = spare().pop().unwrap_or_default();
        plan_into(
            &mut p,
            ranges,
            self.block_size,
            self.original_size,
            &self.own_blocks,
            self.seek_chunks(),
        )?;
        let found = self.read_planned(gpu, &p, out);
        if p.kept_bytes() <= SPARE_PLAN_BYTES {
            spare().push(p);
        }
        found
    }

    /// [`GpuArchive::read_ranges`] of a request [`plan()`]ned by the caller (with this archive's
    /// block size, original size, `own_blocks` and `seek_chunks`).
    ///
    /// Errors: as [`GpuArchive::read_ranges`].
    pub fn read_planned(
        &self,
        gpu: &Gpu,
        p: &Plan,
        out: &mut CudaSlice<u8>,
    ) -> Result<Vec<RangeStatus>, GpuError> {
        if p.n_ranges == 0 {
            return Ok(Vec::new());
        }
        let mut guard = self.seek.lock().unwrap_or_else(|e| e.into_inner());
        let st = self.submit_locked(gpu, &mut guard, p, out)?;
        gpu.stream().synchronize().ctx("waiting for the seek")?;
        let words = st
            .range_status_host
            .as_slice()
            .ctx("the status host buffer")?;
        let found = words[..p.status_words()]
            .as_chunks::<2>()
            .0
            .iter()
            .map(|w| match w[0] {
                0 => RangeStatus::Ok,
                s => RangeStatus::Bad {
                    block: w[1],
                    // (a word no kernel writes reads as a checksum failure, never as Ok)
                    status: Status::from_u32(s).unwrap_or(Status::Checksum),
                },
            });
        if p.run_blocks.is_empty() {
            return Ok(found.collect());
        }
        // a range of several blocks: its first block that is not Ok, else Ok
        let mut blocks = found;
        Ok(p.run_blocks
            .iter()
            .map(|&k| {
                blocks
                    .by_ref()
                    .take(k as usize)
                    .fold(RangeStatus::Ok, |first, s| match first {
                        RangeStatus::Ok => s,
                        bad => bad,
                    })
            })
            .collect())
    }

    /// Queues the request `p` (its upload, the kernels, the download of its status words)
    /// without waiting: for timing the GPU's part of requests queued back to back (the same
    /// plan each time: the next call writes the same bytes into the host buffer the last one
    /// may still be copying from).
    ///
    /// Errors: as [`GpuArchive::read_ranges`].
    pub fn submit_planned(
        &self,
        gpu: &Gpu,
        p: &Plan,
        out: &mut CudaSlice<u8>,
    ) -> Result<(), GpuError> {
        let mut guard = self.seek.lock().unwrap_or_else(|e| e.into_inner());
        self.submit_locked(gpu, &mut guard, p, out).map(|_| ())
    }

    /// Queues the request `p` on the stream with the seek buffers (grown for it).
    fn submit_locked<'s>(
        &self,
        gpu: &Gpu,
        guard: &'s mut Option<SeekState>,
        p: &Plan,
        out: &mut CudaSlice<u8>,
    ) -> Result<&'s mut SeekState, GpuError> {
        if self.cross_block {
            return Err(GpuError::Unsupported(CROSS_BLOCK.into()));
        }
        if (out.len() as u64) < p.out_len {
            return Err(GpuError::Status(format!(
                "the output buffer holds {} bytes, the ranges {}",
                out.len(),
                p.out_len
            )));
        }
        // (the rANS launch's CTA size comes from the plan's chunks: another archive's could
        // exceed this entry point's launch bounds or overlap this archive's groups)
        if p.n_rans > 0 && !self.seek_chunks().admits(&p.chunks) {
            return Err(GpuError::Status(format!(
                "the request was planned for rANS chunks {:?}, this archive takes {:?}",
                p.chunks,
                self.seek_chunks()
            )));
        }
        let st = self.seek_buffers(gpu, guard, p)?;
        let stream = gpu.stream();
        let n_words = p.status_words();
        // a small request is read and answered where it lies in host memory
        let zero_copy = p.bytes.len() <= ZERO_COPY_BYTES && 4 * n_words <= ZERO_COPY_BYTES;
        // (as_mut_slice waits for the pinned buffer's last copy: none is in flight but a
        // `submit_planned` of the same bytes)
        let req_host = st
            .req_host
            .as_mut_slice()
            .ctx("the request's host buffer")?;
        req_host[..p.bytes.len()].copy_from_slice(&p.bytes);
        gpu.context().bind_to_thread().ctx("binding the context")?;
        let (req, req_len) = if zero_copy {
            (st.req_host_addr, req_host.len() as u64)
        } else {
            // SAFETY: the source is the first p.bytes.len() bytes of the page-locked request
            // buffer, which nothing writes again before the stream's synchronize (in
            // `read_planned`; `submit_planned` writes the same bytes again); the
            // destination is the device request buffer of at least that many bytes
            // (seek_buffers).
            unsafe {
                cudarc::driver::result::memcpy_htod_async(
                    st.req.device_ptr(stream).0,
                    &req_host[..p.bytes.len()],
                    stream.cu_stream(),
                )
            }
            .ctx("uploading the request")?;
            (st.req.device_ptr(stream).0, st.req.len() as u64)
        };
        let (range_status, range_status_len) = if zero_copy {
            (st.range_status_host_addr, st.range_status_host.len() as u64)
        } else {
            (
                st.range_status.device_ptr(stream).0,
                st.range_status.len() as u64,
            )
        };
        launch::seek(
            gpu,
            self,
            launch::SeekLaunch {
                req,
                req_len,
                order_at: 0,
                n_order: p.n_order,
                takes_at: p.takes_at,
                rans_at: p.rans_at,
                n_rans: p.n_rans,
                chunk_blocks: p.chunks.blocks.max(1),
                ranges_at: p.ranges_at,
                n_ranges: p.n_ranges,
                range_bytes: p.out_len,
                direct: p.direct,
                slots: &mut st.slots,
                status: &mut st.status,
                range_status,
                range_status_len,
            },
            out,
        )?;
        if zero_copy {
            return Ok(st);
        }
        let words = st
            .range_status_host
            .as_mut_slice()
            .ctx("the status host buffer")?;
        // SAFETY: the destination is the first n_words words of the page-locked status
        // buffer, read only after the stream's synchronize; the source is the device status
        // buffer of at least n_words words (seek_buffers), written by seek_gather before on
        // the stream.
        unsafe {
            cudarc::driver::result::memcpy_dtoh_async(
                &mut words[..n_words],
                st.range_status.device_ptr(stream).0,
                stream.cu_stream(),
            )
        }
        .ctx("downloading the range status")?;
        Ok(st)
    }

    /// The seek buffers, allocated or grown for plan `p`.
    fn seek_buffers<'s>(
        &self,
        gpu: &Gpu,
        guard: &'s mut Option<SeekState>,
        p: &Plan,
    ) -> Result<&'s mut SeekState, GpuError> {
        // (a direct request writes no slots)
        let slots = if p.direct {
            0
        } else {
            p.n_order as usize * self.block_size as usize
        };
        let fits = |s: &SeekState| {
            s.req.len() >= p.bytes.len()
                && s.slots.len() >= slots
                && s.range_status.len() >= p.status_words()
        };
        if !guard.as_ref().is_some_and(fits) {
            let old = guard.take();
            // grown to twice what is asked, so a growing series of requests allocates rarely
            let grow = |want: usize, had: usize| want.max(had).max(1).next_power_of_two();
            let (req0, slots0, rs0) = old.as_ref().map_or((0, 0, 0), |s| {
                (s.req.len(), s.slots.len(), s.range_status.len())
            });
            let stream = gpu.stream();
            let status = match old {
                Some(s) => s.status,
                None => stream
                    .alloc_zeros::<u32>(self.n_blocks.max(1) as usize)
                    .ctx("allocating the seek status")?,
            };
            let ctx = gpu.context();
            // mapped (the zero-copy path's kernels reach them), cached on the host (which
            // writes the request and reads the status words)
            let mapped = cudarc::driver::sys::CU_MEMHOSTALLOC_DEVICEMAP;
            // SAFETY (both): page-locked host memory, written before it is read (the request
            // by the host, the status words by a copy from the device or by `seek_gather`).
            let mut req_host =
                unsafe { ctx.alloc_pinned_with_flags::<u8>(grow(p.bytes.len(), req0), mapped) }
                    .ctx("allocating the request's host buffer")?;
            let mut range_status_host =
                unsafe { ctx.alloc_pinned_with_flags::<u32>(grow(p.status_words(), rs0), mapped) }
                    .ctx("allocating the status host buffer")?;
            let req_host_addr =
                device_address(req_host.as_mut_ptr().ctx("the request's host buffer")?)?;
            let range_status_host_addr = device_address(
                range_status_host
                    .as_mut_ptr()
                    .ctx("the status host buffer")?,
            )?;
            *guard = Some(SeekState {
                req_host,
                range_status_host,
                req_host_addr,
                range_status_host_addr,
                req: stream
                    .alloc_zeros::<u8>(grow(p.bytes.len(), req0))
                    .ctx("allocating the seek request")?,
                slots: stream
                    .alloc_zeros::<u8>(grow(slots, slots0))
                    .ctx("allocating the seek slots")?,
                status,
                range_status: stream
                    .alloc_zeros::<u32>(grow(p.status_words(), rs0))
                    .ctx("allocating the seek range status")?,
            });
        }
        Ok(guard.as_mut().expect("set above"))
    }
}

#[cfg(test)]
mod tests {

    /// The device crate's XXH3-64 (the checksum `seek_verify` computes) against
    /// `xxhash-rust`, on every length class, sequentially and in the warp's order: each round
    /// summed by four stripe groups per accumulator lane, the data words joined across the
    /// lane pair, as the kernel's shuffles do.
    #[test]
    fn device_xxh3_matches_xxhash_rust_sequential_and_in_warp_order() {
        use crate::device::xxh3::*;
        let mut r = super::super::tokens::Rng::new(0xACE);
        let data: Vec<u8> = (0..40_000).map(|_| r.next_u64() as u8).collect();
        let warp = |b: &[u8]| -> u64 {
            let len = b.len();
            if len <= MID_SIZE_MAX {
                return hash_short(b);
            }
            let word = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
            let sums = |base: usize, stripes: usize| {
                let (mut p, mut v) = ([0u64; 8], [0u64; 8]);
                for q in (0..4).rev() {
                    for i in 0..8 {
                        let mut s = q;
                        while s < stripes {
                            let (pp, vv) = stripe_lane(
                                word(base + s * STRIPE + 8 * i),
                                secret64(8 * s + 8 * i),
                            );
                            p[i] = p[i].wrapping_add(pp);
                            v[i] = v[i].wrapping_add(vv);
                            s += 4;
                        }
                    }
                }
                (p, v)
            };
            let mut acc = INIT_ACC;
            let (rounds, tail) = round_split(len);
            let add = |acc: &mut [u64; 8], (p, v): ([u64; 8], [u64; 8])| {
                for i in 0..8 {
                    acc[i] = acc[i].wrapping_add(p[i]).wrapping_add(v[i ^ 1]);
                }
            };
            for k in 0..rounds {
                add(&mut acc, sums(k * ROUND, STRIPES_PER_ROUND));
                for (i, a) in acc.iter_mut().enumerate() {
                    *a = scramble_lane(*a, i);
                }
            }
            add(&mut acc, sums(rounds * ROUND, tail));
            let (mut p, mut v) = ([0u64; 8], [0u64; 8]);
            for i in 0..8 {
                (p[i], v[i]) = stripe_lane(
                    word(len - STRIPE + 8 * i),
                    secret64(LAST_STRIPE_SECRET + 8 * i),
                );
            }
            add(&mut acc, (p, v));
            merge_accs(&acc, len as u64)
        };
        let lens = (0..2_200).chain([4095, 4096, 4097, 16_383, 16_384, 16_385, 40_000]);
        for n in lens {
            let d = &data[..n];
            let want = xxhash_rust::xxh3::xxh3_64(d);
            assert_eq!(xxh3_64(d), want, "sequential, length {n}");
            assert_eq!(warp(d), want, "warp order, length {n}");
        }
    }
}
