//! Kernel parameters, defined once for the host and the kernels: each list below names a
//! kernel family's parameters in order with their kernel-side types. It gives
//!
//! - the host a `#[repr(C)]` Pod struct ([`DenseParams`], [`RansParams`], [`LaneParams`])
//!   with one `u64` field per parameter (a device address, or a size or count widened to
//!   64 bits), in the kernel's order: `bytemuck::cast` of it to `[u64; N]` is the argument
//!   list `host/gpu/launch.rs` hands the driver, which reads each parameter's own size (the
//!   low bytes on this little-endian host);
//! - the kernels their parameter lists (`with_dense_params!` and the others, called with the name of a
//!   macro that declares the entry point).
//!
//! The kernels keep one PTX parameter per value (not one aggregate): a struct passed by
//! value makes LLVM load every field at the kernel's entry, where the positional parameters
//! are loaded near their first use, and the dense kernel then spilled.
//! Kernel names: [`crate::kernel_names`].

use bytemuck::{Pod, Zeroable};

/// `with_dense_params!(m; PRE...)` calls `m! { PRE... ; name: Type, ... }` with the
/// parameters of `decode_blocks_dense`, `decode_blocks_dense_sc` and `decode_blocks_seek`
/// (`dense/decode.rs`), each with its doc.
#[macro_export]
macro_rules! with_dense_params {
    ($m:ident; $($pre:tt)*) => {
        $m! { $($pre)* ;
            /// The rANS stage's decoded streams (`dec_len` bytes).
            decoded: *const u8,
            /// Bytes at `decoded`.
            dec_len: u64,
            /// Per slice (`STREAM_COUNT * block + stream`): its offset in `decoded`.
            dec_offsets: *const u64,
            /// The data section (`data_len` bytes, padded with zeros to a multiple of 16).
            data: *const u8,
            /// Bytes of the data section (without the padding).
            data_len: u64,
            /// Each block's offset in the data section (`n_blocks` words).
            offsets: *const u64,
            /// The block table (`n_blocks` entries).
            entries: *const $crate::format::BlockEntry,
            /// Blocks in the archive.
            n_blocks: u32,
            /// The header's block size (FORMAT.md §2).
            block_size: u32,
            /// The header's window (FORMAT.md §2).
            window: u32,
            /// The archive's match base (FORMAT.md §2: 4 to 6).
            match_base: u32,
            /// The output (`out_len` bytes).
            out: *mut u8,
            /// Bytes of the output (the original size).
            out_len: u64,
            /// One status word per block.
            status: *mut u32,
            /// Stage bits (`dense_layout::STAGES_ALL` to decode).
            stages: u32,
            /// The archive's dense queue (`handoff::queue_words(n_blocks)` words).
            queue: *mut u32,
            /// The order in which CTAs take the blocks (`n_blocks` words), or null: index order.
            order: *const u32,
            /// The hand-off epoch (`handoff.rs`; 0: no hand-off).
            epoch: u32,
            /// Entries of `order` (`n_blocks` but for a seek: the blocks it decodes).
            n_order: u32,
            /// The archive's original size (each block's length; `out_len` but for a seek,
            /// whose `out` holds one slot of `block_size` bytes per entry of `order`).
            original_size: u64,
            /// A seek's take order: the positions in `order` its CTAs take in turn (`n_order`
            /// words, the blocks it decodes from the data section alone first), or null:
            /// position order. Null but for a seek.
            takes: *const u32,
            /// A direct seek's status words, or null. Direct: the request's ranges are whole
            /// blocks, `order` holds their blocks in request order (a block may recur), `out`
            /// is the caller's buffer with order position `p` at `p * block_size`, and this
            /// kernel writes two status words per position here (`2 * n_order`: the block's
            /// status, and the block where that is not 0), from which the host makes the
            /// ranges' (where `seek_gather` would write them). Null but for a direct seek.
            range_status: *mut u32,
            /// 1 where the archive has the type-4 record (FORMAT.md §3.8): a block's command
            /// stream may begin with a line layout (§4.6); 0: none may.
            line_layouts: u32,
        }
    };
}

/// `with_rans_params!(m; PRE...)` calls `m! { PRE... ; name: Type, ... }` with the
/// parameters of the rANS stage's entry points (`rans_decode_slices` and its variants, `dense/rans.rs`).
#[macro_export]
macro_rules! with_rans_params {
    ($m:ident; $($pre:tt)*) => {
        $m! { $($pre)* ;
            /// The data section (`data_len` bytes, padded with zeros to a multiple of 16).
            data: *const u8,
            /// Bytes of the data section (without the padding).
            data_len: u64,
            /// The block table (`n_blocks` entries).
            entries: *const $crate::format::BlockEntry,
            /// Each block's offset in the data section (`n_blocks` words).
            offsets: *const u64,
            /// Blocks in the archive.
            n_blocks: u32,
            /// The expanded decode tables (`n_tables`).
            tables: *const $crate::format::DecodeTable,
            /// Decode tables at `tables`.
            n_tables: u32,
            /// Per group and stream: its table's index entry (FORMAT.md §5.4, §5.6).
            table_index: *const u32,
            /// Blocks per table group.
            group_blocks: u32,
            /// The decoded streams (`dec_len` bytes), written.
            decoded: *mut u8,
            /// Bytes at `decoded`.
            dec_len: u64,
            /// Per slice (`STREAM_COUNT * block + stream`): its offset in `decoded`.
            dec_offsets: *const u64,
            /// One status word per block, written.
            status: *mut u32,
            /// The chunks' first blocks in the order the CTAs take them.
            chunk_order: *const u32,
            /// Entries of `chunk_order`.
            n_chunks: u32,
            /// Decode tables staged per round in shared memory.
            staged_tables: u32,
            /// Non-zero: a packed literal table's expansion slots staged too.
            stage_expand: u32,
            /// The archive's dense queue, or null (no dense kernel follows).
            dense_queue: *mut u32,
            /// The hand-off epoch (0: none).
            epoch: u32,
            /// Warps per block (1, or 2 with wide slices).
            halves: u32,
            /// Non-zero: the self-contained blocks are left to the dense kernel.
            leave_self_contained: u32,
        }
    };
}

/// `with_lane_params!(m; PRE...)` calls `m! { PRE... ; name: Type, ... }` with the
/// parameters of `decode_blocks_lane` (`kernels.rs`).
#[macro_export]
macro_rules! with_lane_params {
    ($m:ident; $($pre:tt)*) => {
        $m! { $($pre)* ;
            /// The data section (`data_len` bytes).
            data: *const u8,
            /// Bytes of the data section.
            data_len: u64,
            /// The block table (`n_blocks` entries).
            entries: *const $crate::format::BlockEntry,
            /// Each block's offset in the data section (`n_blocks` words).
            offsets: *const u64,
            /// Blocks in the archive.
            n_blocks: u32,
            /// The expanded decode tables (`n_tables`).
            tables: *const $crate::format::DecodeTable,
            /// Decode tables at `tables`.
            n_tables: u32,
            /// Per group and stream: its table's index entry.
            table_index: *const u32,
            /// Blocks per table group.
            group_blocks: u32,
            /// The header's block size (FORMAT.md §2).
            block_size: u32,
            /// The header's window (FORMAT.md §2).
            window: u32,
            /// The archive's match base (FORMAT.md §2).
            match_base: u32,
            /// Per-warp scratch, `STREAM_COUNT * (block_size + 1)` bytes a warp.
            scratch: *mut u8,
            /// The output (`out_len` bytes).
            out: *mut u8,
            /// Bytes of the output.
            out_len: u64,
            /// One status word per block.
            status: *mut u32,
            /// Non-zero: only the blocks the dense kernel handed back.
            only_fallback: u32,
            /// The dense queue's count of blocks handed back (one word).
            fallbacks: *const u32,
            /// 1 where the archive has the type-4 record (FORMAT.md §3.8): a block's command
            /// stream may begin with a line layout (§4.6); 0: none may.
            line_layouts: u32,
        }
    };
}

/// Defines a host parameter struct from a parameter list: one `u64` field per parameter.
macro_rules! param_struct {
    ($(#[$doc:meta])* $name:ident ; $($(#[$fdoc:meta])* $f:ident : $t:ty),* $(,)?) => {
        $(#[$doc])*
        #[repr(C)]
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
        pub struct $name {
            $($(#[$fdoc])* pub $f: u64,)*
        }
    };
}

with_dense_params!(
    param_struct;
    #[doc = "The parameters of `decode_blocks_dense`, `decode_blocks_dense_sc` and `decode_blocks_seek`, in order, each widened to a `u64`."]
    DenseParams
);
with_rans_params!(
    param_struct;
    #[doc = "The parameters of the rANS stage's entry points (`rans_decode_slices` and its variants), in order, each widened to a `u64`."]
    RansParams
);
with_lane_params!(
    param_struct;
    #[doc = "The parameters of `decode_blocks_lane`, in order, each widened to a `u64`."]
    LaneParams
);

const _: () = assert!(core::mem::size_of::<DenseParams>() == 23 * 8);
const _: () = assert!(core::mem::size_of::<RansParams>() == 21 * 8);
const _: () = assert!(core::mem::size_of::<LaneParams>() == 19 * 8);

/// `with_seek_gather_params!(m; PRE...)` calls `m! { PRE... ; name: Type, ... }` with the
/// parameters of `seek_gather` (`dense/seek.rs`).
#[macro_export]
macro_rules! with_seek_gather_params {
    ($m:ident; $($pre:tt)*) => {
        $m! { $($pre)* ;
            /// The seek's slots: block `order[p]` at `slots[p * block_size..]`.
            slots: *const u8,
            /// The header's block size (FORMAT.md §2; a power of two).
            block_size: u32,
            /// The ranges (`n_ranges` [`SeekRange`](crate::format::SeekRange)s).
            ranges: *const $crate::format::SeekRange,
            /// Entries of `ranges`.
            n_ranges: u32,
            /// One status word per block (as `decode_blocks_seek` left them).
            status: *const u32,
            /// The caller's buffer (`out_len` bytes).
            out: *mut u8,
            /// Bytes at `out`.
            out_len: u64,
            /// Two words per range, written: its first bad block's status (0: every block of
            /// the range verified) and that block's index.
            range_status: *mut u32,
        }
    };
}

with_seek_gather_params!(
    param_struct;
    #[doc = "The parameters of `seek_gather`, in order, each widened to a `u64`."]
    SeekGatherParams
);
const _: () = assert!(core::mem::size_of::<SeekGatherParams>() == 8 * 8);
