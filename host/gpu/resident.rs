//! The device-resident state of an archive: the buffers a [`GpuArchive`] keeps on the GPU
//! and the wavefront decoder's [`WaveState`]. Data only; the decoders (`decoder.rs`,
//! `wave.rs`) and the launches (`launch.rs`) work on it, so that none of them imports another
//! for its types.

use super::schedule::RansPlan;
use crate::device::wave_layout::WaveArgs;
use cudarc::driver::{CudaGraph, CudaSlice};

/// An archive uploaded once and kept in device memory.
pub struct GpuArchive {
    /// The data section, padded with zeros to a multiple of 16 bytes (the rANS stage reads
    /// raw slices in aligned 16-byte words: `device/src/dense/`, `copy_raw_slice`).
    pub(crate) data: CudaSlice<u8>,
    /// The data section's length in bytes (without the padding).
    pub(crate) data_len: u64,
    pub(crate) entries: CudaSlice<u8>,
    pub(crate) offsets: CudaSlice<u8>,
    pub(crate) tables: CudaSlice<u8>,
    pub(crate) table_index: CudaSlice<u8>,
    pub(crate) n_blocks: u32,
    pub(crate) n_tables: u32,
    pub(crate) group_blocks: u32,
    pub(crate) block_size: u32,
    pub(crate) window: u32,
    /// The archive's match base (FORMAT.md §2).
    pub(crate) match_base: u32,
    pub(crate) original_size: u64,
    pub(crate) cross_block: bool,
    /// Whether blocks may begin their command stream with a line layout (FORMAT.md §3.8).
    pub(crate) line_layouts: bool,
    /// Per slice (`4 * block + stream`): where its decoded bytes go in `decoded`.
    pub(crate) dec_offsets: CudaSlice<u8>,
    /// Scratch for the decoded streams of every block (dense pipe), allocated at upload.
    pub(crate) decoded: std::sync::Mutex<Option<CudaSlice<u8>>>,
    pub(crate) decoded_len: u64,
    /// Per-warp scratch of the lane kernel, allocated on first use.
    pub(crate) lane_scratch: std::sync::Mutex<Option<CudaSlice<u8>>>,
    /// The dense kernel's block queue: two words, zeroed by the rANS kernel before each dense
    /// launch: the ticket from which its CTAs take their next blocks, and its count of blocks
    /// left to the lane kernel (`launch::decode_blocks_dense`, `launch::decode_blocks_lane`).
    /// [`GpuArchive::decode_all_with`] holds the lock from the rANS launch to the lane
    /// launch, so one decode's three launches sit together on the one stream. (A
    /// `GpuArchive` is not `Sync`, its wavefront graph cannot move between threads, so two
    /// threads cannot decode one at once; the lock is what `&self` methods mutate through.)
    pub(crate) dense_queue: std::sync::Mutex<CudaSlice<u32>>,
    /// The last dense decode's hand-off epoch (`device/src/handoff.rs`: each dense decode
    /// takes the next, skipping 0, which the zeroed queue holds).
    pub(crate) dense_epoch: std::sync::atomic::AtomicU32,
    /// Set by [`GpuArchive::set_overlap`]`(false)`: this archive's dense pipe runs its two
    /// kernels one after the other.
    pub(crate) no_overlap: std::sync::atomic::AtomicBool,
    /// Set by [`GpuArchive::set_self_contained`]`(false)`: this archive's dense decodes leave
    /// no block to the dense kernel alone (`schedule::leaves_self_contained`).
    pub(crate) no_self_contained: std::sync::atomic::AtomicBool,
    /// Test hook: the next dense decode hands the dense kernel another epoch than the rANS
    /// stage's, so that its waits give up (`GpuArchive::stall_next_dense_decode`).
    pub(crate) stall_next: std::sync::atomic::AtomicBool,
    /// The order in which the dense kernel takes the blocks when the two kernels overlap
    /// (`schedule::dense_block_order`, longest first where `schedule::dense_order_longest_first`
    /// says so; one unused word for an empty archive).
    pub(crate) dense_order: CudaSlice<u32>,
    /// The rANS stage's plan for this archive on this GPU (`schedule::rans_plan`).
    pub(crate) rans: RansPlan,
    /// The order in which the rANS stage's CTAs take the chunks (`schedule::rans_chunks`), as
    /// their first blocks (`schedule::rans_chunk_order`; one unused word for an empty archive).
    pub(crate) rans_order: CudaSlice<u32>,
    /// The entries of `rans_order` the kernel reads (whole rounds of the plan's grid, the last
    /// padded with `schedule::RANS_NO_CHUNK`).
    pub(crate) rans_chunks: u32,
    /// Whether a dense decode launches the lane kernel after the dense kernel: false where no
    /// block can come out `Fallback` (`schedule::dense_leaves_no_fallback`).
    pub(crate) lane_after_dense: bool,
    /// Whether some block's literals are a two-bit slice with runs (FORMAT.md §5.8), which
    /// only the dense kernel (self-contained blocks) and the lane kernel decode.
    pub(crate) two_bit_runs: bool,
    /// Blocks the dense kernel can decode from the data section alone
    /// (`device::own::own_slice`), which a dense decode leaves out of the rANS stage
    /// (`schedule::leaves_self_contained`).
    pub(crate) self_contained: u32,
    /// The block table on the host (wavefront generations and segment capacities).
    pub(crate) host_entries: Vec<crate::device::format::BlockEntry>,
    /// Per block: whether the dense kernel decodes it from the data section alone
    /// (`device::own`), so a random-access read needs no rANS launch for it.
    pub(crate) own_blocks: Vec<bool>,
    /// Wavefront decoder buffers and graph, made on first use.
    pub(crate) wave: std::sync::Mutex<Option<WaveState>>,
    /// The random-access reads' buffers (`seek.rs`), made on first use and grown.
    pub(crate) seek: std::sync::Mutex<Option<SeekState>>,
    /// Plans of finished requests, kept for their buffers: `read_ranges` plans into one
    /// (`seek::plan_into`) so that a request no larger than an earlier one allocates nothing
    /// on the host; one per request in flight at once, each of at most
    /// `seek::SPARE_PLAN_BYTES`.
    pub(crate) spare_plans: std::sync::Mutex<Vec<super::seek::Plan>>,
    /// Bytes uploaded (data section, block table, offsets, expanded tables).
    pub resident_bytes: u64,
}

/// Device buffers and the captured graph of one archive's wavefront decode.
pub(crate) struct WaveState {
    pub(crate) seg_base: CudaSlice<u64>,
    pub(crate) segs: CudaSlice<u8>,
    pub(crate) seg_count: CudaSlice<u32>,
    pub(crate) tokens: CudaSlice<u8>,
    /// `3 * (n_waves + 2)` words: counts, offsets, cursors.
    pub(crate) levels: CudaSlice<u32>,
    pub(crate) max_level: CudaSlice<u32>,
    /// One [`WaveArgs`], as bytes.
    pub(crate) args: CudaSlice<u8>,
    pub(crate) args_host: Option<WaveArgs>,
    /// Block indices, generation after generation.
    pub(crate) gen_list: CudaSlice<u32>,
    /// `(first, count)` of each generation in `gen_list`.
    pub(crate) gens: Vec<(usize, usize)>,
    pub(crate) seg_total: u64,
    pub(crate) n_waves: u32,
    pub(crate) graph: Option<(WaveArgs, CudaGraph)>,
}

/// Device buffers of the random-access reads (`seek.rs`), kept between requests and grown
/// to the largest so far.
pub(crate) struct SeekState {
    /// The request: block order, rANS list and ranges, one upload per request not small
    /// enough to be read in host memory (`seek::ZERO_COPY_BYTES`).
    pub(crate) req: CudaSlice<u8>,
    /// One slot of `block_size` bytes per block of a request.
    pub(crate) slots: CudaSlice<u8>,
    /// One status word per block of the archive.
    pub(crate) status: CudaSlice<u32>,
    /// Two words per range.
    pub(crate) range_status: CudaSlice<u32>,
    /// Page-locked host copies of the request and the range status words, mapped into the
    /// device's address space: a large request is copied to and from the device buffers
    /// above (asynchronous, short copies), a small one read and written by the kernels where
    /// it lies (`seek::ZERO_COPY_BYTES`).
    pub(crate) req_host: cudarc::driver::PinnedHostSlice<u8>,
    pub(crate) range_status_host: cudarc::driver::PinnedHostSlice<u32>,
    /// The device addresses of `req_host` and `range_status_host`.
    pub(crate) req_host_addr: u64,
    pub(crate) range_status_host_addr: u64,
}
