//! GPU decoders over an archive kept resident in device memory ([`GpuArchive`]).
//!
//! Implemented now: the lane-per-block decoder (`decode_blocks_lane`): one lane of a warp
//! decodes a whole independent block with the same sequential cores as the CPU decoder, so
//! it enforces the same rules and reports a status per block. The dense full pipe and the
//! wavefront decoder (issue 4) build on the same resident archive.

use super::{launch, Ctx, Gpu, GpuError};
use crate::archive::Archive;
use crate::device::format::{DecodeTable, STREAM_COUNT};
use crate::device::status::Status;
use cudarc::driver::CudaSlice;
use xxhash_rust::xxh3::xxh3_64;

/// Which GPU decoder to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decoder {
    /// One lane per block, sequential shared cores (the baseline).
    Lane,
    /// The dense full pipe (rANS, parallel parse, pointer resolve, coalesced write).
    Dense,
    /// The rANS kernel and the dense kernel with only some stages (bit 0: parse+fill, bit 1:
    /// resolve+write), for the stage-split benchmark; the output is incomplete.
    DenseStages(u32),
    /// Only the rANS kernel (stage-split benchmark).
    RansOnly,
}

/// Table index value for "no table" (matches the kernel's `NO_TABLE`).
const NO_TABLE: u32 = u32::MAX;

/// An archive uploaded once and kept in device memory.
pub struct GpuArchive {
    pub(crate) data: CudaSlice<u8>,
    pub(crate) entries: CudaSlice<u8>,
    pub(crate) offsets: CudaSlice<u8>,
    pub(crate) tables: CudaSlice<u8>,
    pub(crate) table_index: CudaSlice<u8>,
    pub(crate) n_blocks: u32,
    pub(crate) n_tables: u32,
    pub(crate) group_blocks: u32,
    pub(crate) block_size: u32,
    pub(crate) window: u32,
    pub(crate) original_size: u64,
    pub(crate) cross_block: bool,
    /// Per slice (`4 * block + stream`): where its decoded bytes go in `decoded`.
    pub(crate) dec_offsets: CudaSlice<u8>,
    /// Scratch for the decoded streams of every block (dense pipe), allocated at upload.
    pub(crate) decoded: std::sync::Mutex<Option<CudaSlice<u8>>>,
    pub(crate) decoded_len: u64,
    /// Per-warp scratch of the lane kernel, allocated on first use.
    pub(crate) lane_scratch: std::sync::Mutex<Option<CudaSlice<u8>>>,
    /// Bytes uploaded (data section, block table, offsets, expanded tables).
    pub resident_bytes: u64,
}

impl GpuArchive {
    /// Uploads the data section, block table, slice offsets and expanded decode tables.
    pub fn upload(gpu: &Gpu, a: &Archive<'_>) -> Result<GpuArchive, GpuError> {
        let mut tables: Vec<DecodeTable> = Vec::new();
        let mut index: Vec<u32> = Vec::with_capacity(a.tables.len() * STREAM_COUNT);
        for g in &a.tables {
            for t in g {
                match t {
                    Some(t) => {
                        index.push(tables.len() as u32);
                        tables.push(*t.decode_table());
                    }
                    None => index.push(NO_TABLE),
                }
            }
        }
        let data = gpu.upload(a.data)?;
        let entries = gpu.upload(bytemuck::cast_slice(&a.entries))?;
        let offsets = gpu.upload(bytemuck::cast_slice(&a.block_offsets))?;
        let tables_d = gpu.upload(bytemuck::cast_slice(&tables))?;
        let table_index = gpu.upload(bytemuck::cast_slice(&index))?;
        let mut dec_off: Vec<u64> = Vec::with_capacity(a.entries.len() * STREAM_COUNT);
        let mut total = 0u64;
        for e in &a.entries {
            for &len in &e.decoded_len {
                // 16-byte aligned and padded: the dense kernel loads streams 16 bytes at a time
                dec_off.push(total);
                total += (len as u64).div_ceil(16) * 16;
            }
        }
        let dec_offsets = gpu.upload(bytemuck::cast_slice(&dec_off))?;
        let resident_bytes = (a.data.len()
            + a.entries.len() * 56
            + a.block_offsets.len() * 8
            + tables.len() * 16384
            + index.len() * 4) as u64;
        Ok(GpuArchive {
            data,
            entries,
            offsets,
            tables: tables_d,
            table_index,
            n_blocks: a.entries.len() as u32,
            n_tables: tables.len() as u32,
            group_blocks: a.header.group_blocks,
            block_size: a.header.block_size,
            window: a.header.window,
            original_size: a.header.original_size,
            cross_block: a.cross_block(),
            dec_offsets,
            decoded: std::sync::Mutex::new(None),
            decoded_len: total,
            lane_scratch: std::sync::Mutex::new(None),
            resident_bytes,
        })
    }

    /// Decodes every block into `out` (device memory of `original_size` bytes) and one status
    /// word per block into `status`. Queued on the GPU's stream; does not wait.
    pub fn decode_all(
        &self,
        gpu: &Gpu,
        out: &mut CudaSlice<u8>,
        status: &mut CudaSlice<u32>,
    ) -> Result<(), GpuError> {
        if self.cross_block {
            return Err(GpuError::Status(
                "this archive's window crosses blocks; the GPU lane decoder handles independent blocks only".into(),
            ));
        }
        self.decode_all_with(gpu, Decoder::Dense, out, status)
    }

    /// Like [`GpuArchive::decode_all`] with a chosen decoder. `Dense` runs the dense full pipe,
    /// then the lane kernel on any block the dense kernel handed back (`Status::Fallback`),
    /// without a host round trip.
    pub fn decode_all_with(
        &self,
        gpu: &Gpu,
        d: Decoder,
        out: &mut CudaSlice<u8>,
        status: &mut CudaSlice<u32>,
    ) -> Result<(), GpuError> {
        if self.cross_block {
            return Err(GpuError::Status(
                "this archive's window crosses blocks; the GPU decoders handle independent blocks only".into(),
            ));
        }
        use crate::device::dense_layout::STAGES_ALL;
        match d {
            Decoder::Lane => launch::decode_blocks_lane(gpu, self, out, status, false),
            Decoder::Dense => {
                launch::rans_decode_slices(gpu, self, status)?;
                launch::decode_blocks_dense(gpu, self, out, status, STAGES_ALL)?;
                launch::decode_blocks_lane(gpu, self, out, status, true)
            }
            Decoder::RansOnly => launch::rans_decode_slices(gpu, self, status),
            Decoder::DenseStages(st) => {
                launch::rans_decode_slices(gpu, self, status)?;
                launch::decode_blocks_dense(gpu, self, out, status, st)
            }
        }
    }

    /// Number of blocks.
    pub fn block_count(&self) -> u32 {
        self.n_blocks
    }

    /// Original size in bytes.
    pub fn original_size(&self) -> u64 {
        self.original_size
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
pub fn decompress(gpu: &Gpu, a: &Archive<'_>) -> Result<Vec<u8>, GpuError> {
    decompress_with(gpu, a, Decoder::Dense)
}

/// [`decompress`] with a chosen decoder.
pub fn decompress_with(gpu: &Gpu, a: &Archive<'_>, d: Decoder) -> Result<Vec<u8>, GpuError> {
    let ga = GpuArchive::upload(gpu, a)?;
    let mut out = gpu.alloc_filled(a.header.original_size as usize, 0xA5)?;
    let mut status = gpu
        .stream()
        .alloc_zeros::<u32>(ga.n_blocks.max(1) as usize)
        .ctx("allocating status")?;
    ga.decode_all_with(gpu, d, &mut out, &mut status)?;
    let st = gpu.stream().clone_dtoh(&status).ctx("downloading status")?;
    check_status(&st[..ga.n_blocks as usize])?;
    let mut bytes = gpu.download(&out)?;
    bytes.truncate(a.header.original_size as usize);
    verify(a, &bytes)?;
    Ok(bytes)
}

/// Checks decoded bytes against the block checksums and the content checksum.
pub fn verify(a: &Archive<'_>, bytes: &[u8]) -> Result<(), GpuError> {
    use rayon::prelude::*;
    let bs = a.header.block_size as usize;
    bytes
        .par_chunks(bs)
        .zip(a.entries.par_iter())
        .enumerate()
        .try_for_each(|(b, (chunk, e))| {
            if xxh3_64(chunk) != e.checksum {
                Err(GpuError::Status(format!(
                    "block {b}: {}",
                    Status::Checksum.describe()
                )))
            } else {
                Ok(())
            }
        })?;
    if xxh3_64(bytes) != a.header.content_checksum {
        return Err(GpuError::Status("content checksum mismatch".into()));
    }
    Ok(())
}
