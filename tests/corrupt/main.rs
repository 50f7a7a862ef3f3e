//! Corrupt, hand-made and hostile archives: every one must be rejected with the precise error
//! or decoded to the original, never a panic, hang, out-of-bounds access, huge allocation, or
//! `Ok` with wrong bytes.
//!
//! Two sources of archives:
//! - real ones from the encoder, tampered with and, where the test is about a rule behind the
//!   metadata checksum, re-sealed: the XXH3-64 (seed 0) of header bytes 0..88 ++ block table
//!   ++ table section ++ extension area recomputed here and written at header offset 88;
//! - hand-made ones ([`Spec`], `common::build`): explicit stream bytes per block (raw slices
//!   unless told), "absent" tables (one 0 byte per stream and group) unless told, correct
//!   block and content checksums of an intended original, so every byte is under the test's
//!   control.
//!
//! Header and block-entry offsets below are written out from FORMAT.md §2-§3 by hand (not taken
//! from the crate), so a layout change also fails here.
//!
//! By concern: [`container`] (header, block table, table-section framing, extension area,
//! checksums, truncation, parse memory and time), [`entropy`] (rANS slices and tables),
//! [`match_layer`] (commands, lengths, distances, repeat history, cross-block sources, the
//! match base), and the coded features, each with its own slice generators and oracles:
//! [`context_pairs`], [`packed_literals`], [`wide_slices`].

#[path = "../common/mod.rs"]
mod common;
mod container;
mod context_pairs;
mod entropy;
mod match_layer;
#[path = "../moved/mod.rs"]
mod moved;
mod packed_literals;
mod wide_slices;

use aceapex::compress_settings;
use aceapex::decode::{decode_block_at, decode_block_reference};
use aceapex::decode::{decompress, extract};
use aceapex::device::status::Status;
use aceapex::encode::entropy::{count, encode_slice, FreqTable};
use aceapex::format::Archive;
use aceapex::{DecodeError, FormatError, Settings};
use common::*;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::time::{Duration, Instant};
use xxhash_rust::xxh3::xxh3_64;

// header field offsets (FORMAT.md §2)
const H_VERSION: usize = 4;
const H_FLAGS: usize = 6;
const H_ORIGINAL: usize = 8;
const H_BLOCK_SIZE: usize = 16;
const H_BLOCK_COUNT: usize = 20;
const H_GROUP_BLOCKS: usize = 24;
const H_GROUP_COUNT: usize = 28;
const H_MIN_MATCH: usize = 32;
const H_WINDOW: usize = 36;
const H_DEPTH_CAP: usize = 40;
const H_LEVEL: usize = 44;
const H_TABLE_BYTES: usize = 48;
const H_DATA_BYTES: usize = 56;
const H_CONTENT: usize = 64;
const H_RESERVED: usize = 72;
const H_META: usize = 88;

// block entry field offsets (FORMAT.md §3)
const E_CHECKSUM: usize = 0;
const E_STORED: usize = 8;
const E_DECODED: usize = 28;
const E_MAX_DEPTH: usize = 53;
const E_SOURCE: usize = 57;
const E_LANES: usize = 48;

/// Offset of block entry `i`.
fn entry(i: usize) -> usize {
    HEADER + i * ENTRY
}

/// Recomputes the metadata checksum of an archive of [`ENTRY`]-byte entries from the header's own
/// block_count and table_bytes.
fn reseal(b: &mut [u8]) {
    common::reseal_entries(b, ENTRY);
}

/// The error `Archive::parse` must give for `b`.
fn parse_err(b: &[u8]) -> FormatError {
    match Archive::parse(b) {
        Ok(_) => panic!("archive parsed but should be rejected"),
        Err(e) => e,
    }
}

/// The header field `Archive::parse` names in refusing `b`.
fn header_field(b: &[u8]) -> &'static str {
    match parse_err(b) {
        FormatError::Header { field, .. } => field,
        e => panic!("expected a header error, got {e:?}"),
    }
}

/// The block whose entry `Archive::parse` refuses in `b`.
fn entry_err_block(b: &[u8]) -> u32 {
    match parse_err(b) {
        FormatError::BlockEntry { block, .. } => block,
        e => panic!("expected a block-entry error, got {e:?}"),
    }
}

/// Status of the block error `decompress` must give (and `extract` of the whole range).
fn block_status(b: &[u8]) -> (u32, Status) {
    let a = Archive::parse(b).expect("tampered archive still parses");
    let (block, status) = match decompress(&a) {
        Err(DecodeError::Block { block, status, .. }) => (block, status),
        other => panic!("expected a block error, got {other:?}"),
    };
    let size = a.header().original_size;
    match extract(&a, 0, size) {
        Err(DecodeError::Block {
            block: b2,
            status: s2,
            ..
        }) => {
            assert_eq!((b2, s2), (block, status), "extract and decompress disagree")
        }
        other => panic!("extract: expected a block error, got {other:?}"),
    }
    (block, status)
}

// ---------------------------------------------------------------------------------------
// generated test data
// ---------------------------------------------------------------------------------------

/// xorshift64*: the prose and soft-masked generators of these tests.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// Novel-like English-ish prose from a fixed vocabulary (deterministic).
fn prose(n: usize, seed: u64) -> Vec<u8> {
    const W: &[&str] = &[
        "Call", "me", "the", "whale", "and", "sea", "of", "harpoon", "captain", "Ahab", "ship",
        "Pequod", "deck", "mast", "was", "in", "a", "to", "his", "that", "it", "with", "white",
        "boats", "crew", "ocean", "upon", "old", "like", "some", "years", "ago", "never", "mind",
    ];
    let mut r = XorShift(seed | 1);
    let mut out = Vec::with_capacity(n + 16);
    let mut col = 0;
    while out.len() < n {
        let w = W[(r.next() % W.len() as u64) as usize];
        out.extend_from_slice(w.as_bytes());
        col += w.len() + 1;
        let p = r.next() % 16;
        out.extend_from_slice(match p {
            0 => b". ".as_slice(),
            1 => b", ",
            _ => b" ",
        });
        if col > 70 {
            out.push(b'\n');
            col = 0;
        }
    }
    out.truncate(n);
    out
}

/// 40,000 bytes of prose and their archive in 4 KiB blocks, its entries repacked with the
/// widest widths (fields at fixed offsets, `common::with_fixed_entries`), which the entry and
/// header tests below patch field by field (`packed_*` tests for the packing itself).
fn small_archive() -> (Vec<u8>, Vec<u8>) {
    let (data, packed) = small_archive_packed();
    let fixed = common::with_fixed_entries(&packed);
    decodes_to(&fixed, &data);
    (data, fixed)
}

/// `data`'s archive in 4 KiB blocks, defaults otherwise, context tables on or off, no packed
/// literal tables (the context-table tests; [`compress_4k_packed`] for packed literals).
fn compress_4k(data: &[u8], context_tables: bool) -> Vec<u8> {
    let opts = Settings {
        block_size: 4096,
        context_tables,
        packed_literals: false,
        ..Default::default()
    };
    compress_settings(data, &opts, &|_| {}).unwrap()
}

/// [`small_archive`] as the encoder writes it (tightest entry widths).
fn small_archive_packed() -> (Vec<u8>, Vec<u8>) {
    let data = prose(40_000, 3);
    let packed = compress_4k(&data, false);
    (data, packed)
}

// ---------------------------------------------------------------------------------------
// hand-made archives
// ---------------------------------------------------------------------------------------

/// A hand-made archive: the intended original, the blocks' streams, header knobs.
struct Spec {
    original: Vec<u8>,
    block_size: u32,
    window: u32,
    flags: u16,
    blocks: Vec<Blk>,
    /// Table section (default: every stream's table absent, i.e. 4 zero bytes per group).
    tables: Option<Vec<u8>>,
}

impl Spec {
    fn one(original: &[u8], blk: Blk) -> Spec {
        Spec {
            original: original.to_vec(),
            block_size: 4096,
            window: 4096,
            flags: 0,
            blocks: vec![blk],
            tables: None,
        }
    }

    fn build(&self) -> Vec<u8> {
        let mut h = Hdr::new(0, self.block_size);
        h.flags = self.flags;
        h.window = self.window;
        common::build(h, &self.original, &self.blocks, self.tables.clone())
    }
}

/// "abc" then 15 bytes copied from distance 3, then "XY": 20 bytes.
const ORIG20: &[u8] = b"abcabcabcabcabcabcXY";

/// Commands for [`ORIG20`]: reset, 3 literals, short new match of 15 (0xC0 + 9), 2 literals.
const CMDS20: &[u8] = &[0xFF, 0x02, 0xC9, 0x01];

/// The raw block of [`ORIG20`].
fn good20() -> Blk {
    Blk::raw(b"abcXY", &[], &[3], CMDS20)
}

/// `archive` parses, and `decompress` and a whole-range `extract` give `expect`.
fn decodes_to(archive: &[u8], expect: &[u8]) {
    let a = Archive::parse(archive).expect("hand-made archive parses");
    assert_eq!(decompress(&a).expect("hand-made archive decodes"), expect);
    assert_eq!(extract(&a, 0, expect.len() as u64).unwrap(), expect);
}

// ---------------------------------------------------------------------------------------
// per-thread allocation accounting (Archive::parse is single-threaded)
// ---------------------------------------------------------------------------------------

/// The global allocator of this test binary: counts the bytes each thread holds.
struct Counting;

thread_local! {
    static CUR: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn note(delta: isize) {
    let _ = CUR.try_with(|c| {
        let v = c.get() + delta;
        c.set(v);
        let _ = PEAK.try_with(|p| {
            if v > p.get() {
                p.set(v)
            }
        });
    });
}

// SAFETY: every call forwards to `System` with the caller's layout and pointer unchanged;
// the counting touches only thread-locals (and skips them while they are torn down).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        note(l.size() as isize);
        unsafe { System.alloc(l) }
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        note(l.size() as isize);
        unsafe { System.alloc_zeroed(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        note(-(l.size() as isize));
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        note(n as isize - l.size() as isize);
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Peak bytes allocated (net) on this thread while running `f`.
fn peak_alloc<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let base = CUR.with(|c| c.get());
    PEAK.with(|p| p.set(base));
    let r = f();
    let peak = PEAK.with(|p| p.get());
    (r, (peak - base).max(0) as usize)
}

// ---------------------------------------------------------------------------------------
// archive assembly
// ---------------------------------------------------------------------------------------

/// The largest block size (FORMAT.md §2).
const MAX_BS: u32 = 4 << 20;
/// The rANS lower bound `L` (FORMAT.md §5.4).
const L: u32 = 65536;

/// Decodes every block with the fast and the reference decoder (in order, one buffer), asserts
/// they agree, and returns the first block error's status (None if all blocks and the whole
/// file decode). Also checks `decompress` and `extract` agree with it.
fn outcome(b: &[u8]) -> Option<(u32, Status)> {
    let a = Archive::parse(b).expect("archive parses");
    let n = a.header().original_size as usize;
    let mut fast = vec![0u8; n];
    let mut refr = vec![0u8; n];
    let mut first = None;
    for blk in 0..a.block_count() {
        let f = decode_block_at(&a, blk, &mut fast, 0);
        let r = decode_block_reference(&a, blk, &mut refr, 0);
        let st = |x: &Result<(), DecodeError>| match x {
            Ok(()) => None,
            Err(DecodeError::Block { status, .. }) => Some(*status),
            Err(e) => panic!("unexpected {e:?}"),
        };
        assert_eq!(st(&f), st(&r), "block {blk}: fast and reference disagree");
        if f.is_ok() {
            let rg = a.block_range(blk);
            assert!(
                fast[rg.start as usize..rg.end as usize]
                    == refr[rg.start as usize..rg.end as usize]
            );
        }
        if first.is_none() {
            if let Some(s) = st(&f) {
                first = Some((blk as u32, s));
            }
        }
    }
    let d = decompress(&a);
    let x = extract(&a, 0, n as u64);
    match first {
        None => {
            let d = d.expect("decompress");
            assert!(xxh3_64(&d) == a.header().content_checksum);
            assert!(x.expect("extract") == d);
        }
        Some((blk, s)) => {
            for r in [d.map(|_| ()), x.map(|_| ())] {
                match r {
                    Err(DecodeError::Block { status, block, .. }) if !a.cross_block() => {
                        // parallel decode may report any failing block; ours is the first
                        assert!(block >= blk || status == s, "{block} {status:?}");
                    }
                    Err(DecodeError::Block { .. }) => {}
                    other => panic!("expected a block error, got {other:?}"),
                }
            }
        }
    }
    first
}

/// The status of the first failing block of `b` ([`outcome`]).
fn status_of(b: &[u8]) -> Status {
    outcome(b).expect("expected a block error").1
}

// ---------------------------------------------------------------------------------------
// blocks shared by the container and match-layer tests
// ---------------------------------------------------------------------------------------

/// The status of the one block of a hand-made archive of `blk` (which must fail).
fn only_block_status(blk: Blk, original: &[u8]) -> Status {
    let (block, status) = block_status(&Spec::one(original, blk).build());
    assert_eq!(block, 0);
    status
}

/// Header byte 85 (FORMAT.md §2): the match base.
const H_MATCH_BASE: usize = common::H_ENTRY_BITS + 13;

/// Block of bs bytes that copies `dist` back for bs bytes (one long match).
fn copy_block(bs: usize, dist: u32, lowest: u32) -> Blk {
    let mut lens = Vec::new();
    let mut offs = Vec::new();
    varint(bs as u32 - 6, &mut lens);
    varint(dist, &mut offs);
    let mut b = Blk::raw(&[], &lens, &offs, &[0xFF, 0xFE]);
    b.lowest = Some(lowest);
    b
}

/// A block of literals only (runs of at most 128).
fn lit_block(bytes: &[u8]) -> Blk {
    let mut cmds = vec![0xFF];
    let mut n = bytes.len();
    while n > 0 {
        let k = n.min(128);
        cmds.push(k as u8 - 1);
        n -= k;
    }
    Blk::raw(bytes, &[], &[], &cmds)
}
