//! Corrupt and hand-made archives: every one must be rejected with the precise error (never a
//! panic, never `Ok` with wrong bytes).
//!
//! Two sources of archives:
//! - real ones from `aceapex::compress`, tampered with and, where the test is about a rule
//!   behind the metadata checksum, re-sealed: the XXH3-64 (seed 0) of header bytes 0..88 ++
//!   block table ++ table section ++ extension area recomputed here and written at header
//!   offset 88;
//! - hand-made ones from [`Spec`]: explicit stream bytes per block (raw slices unless told),
//!   "absent" tables (one 0 byte per stream and group) unless told, correct block and content
//!   checksums of an intended original, so every byte is under the test's control.
//!
//! Header and block-entry offsets below are written out from FORMAT.md §2-§3 by hand (not taken
//! from the crate), so a layout change also fails here.

mod common;

use aceapex::decode::{decompress, extract};
use aceapex::device::status::Status;
use aceapex::encode::compress_settings;
use aceapex::format::Archive;
use aceapex::{DecodeError, FormatError, Settings};
use common::{get_u32, get_u64, put_u16, put_u32, put_u64, table_record, Blk, Hdr, ENTRY, HEADER};
use proptest::prelude::*;
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

fn parse_err(b: &[u8]) -> FormatError {
    match Archive::parse(b) {
        Ok(_) => panic!("archive parsed but should be rejected"),
        Err(e) => e,
    }
}

fn header_field(b: &[u8]) -> &'static str {
    match parse_err(b) {
        FormatError::Header { field, .. } => field,
        e => panic!("expected a header error, got {e:?}"),
    }
}

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

struct Rng(u64);
impl Rng {
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
    let mut r = Rng(seed | 1);
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
/// header tests below patch field by field (`v3_*` tests for the packing itself).
fn small_archive() -> (Vec<u8>, Vec<u8>) {
    let (data, packed) = small_archive_v3();
    let v2 = common::with_fixed_entries(&packed);
    decodes_to(&v2, &data);
    (data, v2)
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
fn small_archive_v3() -> (Vec<u8>, Vec<u8>) {
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

fn good20() -> Blk {
    Blk::raw(b"abcXY", &[], &[3], CMDS20)
}

fn decodes_to(archive: &[u8], expect: &[u8]) {
    let a = Archive::parse(archive).expect("hand-made archive parses");
    assert_eq!(decompress(&a).expect("hand-made archive decodes"), expect);
    assert_eq!(extract(&a, 0, expect.len() as u64).unwrap(), expect);
}

/// Positive controls: the builder makes archives the decoder accepts, so the negative tests
/// below fail for the reason they name.
#[test]
fn hand_made_valid_archives_decode() {
    decodes_to(&Spec::one(ORIG20, good20()).build(), ORIG20);
    // a repeat after reset: slot 0 is distance 1 (history 1,2,4,8); 0x83 = slot 0, length 9
    decodes_to(
        &Spec::one(b"aaaaaaaaaa", Blk::raw(b"a", &[], &[], &[0xFF, 0x00, 0x83])).build(),
        b"aaaaaaaaaa",
    );
    // slot 3 is distance 8: 8 literals then a repeat of 6 from 8 back (0xB0 = slot 3, length 6)
    decodes_to(
        &Spec::one(
            b"ABCDEFGHABCDEF",
            Blk::raw(b"ABCDEFGH", &[], &[], &[0xFF, 0x07, 0xB0]),
        )
        .build(),
        b"ABCDEFGHABCDEF",
    );
    // escaped repeat length: 0x8F = slot 0, length 21 + varint(3) = 24
    decodes_to(
        &Spec::one(&[b'z'; 25], Blk::raw(b"z", &[3], &[], &[0xFF, 0x00, 0x8F])).build(),
        &[b'z'; 25],
    );
    // long match 0xFE: length 6 + varint(200) (2-byte varint), distance varint(1)
    let long = vec![b'q'; 207];
    decodes_to(
        &Spec::one(
            &long,
            Blk::raw(b"q", &[0xC8, 0x01], &[1], &[0xFF, 0x00, 0xFE]),
        )
        .build(),
        &long,
    );
    // a reset mid-block restores the history: new match distance 3, reset, repeat slot 1 = 2
    decodes_to(
        &Spec::one(
            b"xyzxyzxyzyzyzyzy",
            Blk::raw(b"xyz", &[], &[3], &[0xFF, 0x02, 0xC0, 0xFF, 0x91]),
        )
        .build(),
        b"xyzxyzxyzyzyzyzy",
    );
    // empty original: no blocks, no groups
    let empty = Spec {
        blocks: vec![],
        ..Spec::one(b"", good20())
    }
    .build();
    assert_eq!(empty.len(), HEADER);
    decodes_to(&empty, b"");
}

/// A two-block cross-block archive: block 1 copies from block 0.
fn cross_spec(lowest1: u32, flags: u16, window: u32) -> Spec {
    let mut original: Vec<u8> = (0..4096u32).map(|i| (i * 31 % 251) as u8).collect();
    original.extend_from_within(..100);
    let b0 = Blk::raw(
        &original[..4096],
        &[],
        &[],
        &std::iter::once(0xFF)
            .chain(std::iter::repeat_n(0x7F, 32))
            .collect::<Vec<_>>(),
    );
    // block 1: new match of length 100 (0xFE, varint 94) at distance 4096 (varint 0x80 0x20)
    let mut b1 = Blk::raw(&[], &[94], &[0x80, 0x20], &[0xFF, 0xFE]);
    b1.lowest = Some(lowest1);
    Spec {
        original,
        block_size: 4096,
        window,
        flags,
        blocks: vec![b0, b1],
        tables: None,
    }
}

#[test]
fn cross_block_hand_made_decodes_and_rejects_reads_below_the_lowest_source_block() {
    let good = cross_spec(0, 2, 8192);
    decodes_to(&good.build(), &good.original);
    let a_bytes = good.build();
    let a = Archive::parse(&a_bytes).unwrap();
    assert_eq!(extract(&a, 4096, 100).unwrap(), &good.original[4096..]);
    // block table claims block 1 reads only itself: the match below it is a bad distance
    assert_eq!(
        block_status(&cross_spec(1, 2, 8192).build()),
        (1, Status::BadDistance)
    );
    // a distance larger than the window
    assert_eq!(
        block_status(&cross_spec(0, 2, 4095).build()).1,
        Status::BadDistance
    );
    // without the cross-block flag, a block may not name an earlier source block
    assert_eq!(entry_err_block(&cross_spec(0, 0, 4096).build()), 1);
    // and with its own index the read before the block start is a bad distance
    assert_eq!(
        block_status(&cross_spec(1, 0, 4096).build()),
        (1, Status::BadDistance)
    );
    // a lowest source block above the block's own index
    assert_eq!(entry_err_block(&cross_spec(2, 2, 8192).build()), 1);
}

fn only_block_status(blk: Blk, original: &[u8]) -> Status {
    let (block, status) = block_status(&Spec::one(original, blk).build());
    assert_eq!(block, 0);
    status
}

#[test]
fn varint_of_six_bytes_is_bad() {
    // the 5th byte may only carry 4 bits without continuation
    let blk = Blk::raw(b"abcXY", &[], &[0x83, 0x80, 0x80, 0x80, 0x80, 0x00], CMDS20);
    assert_eq!(only_block_status(blk, ORIG20), Status::BadVarint);
}

#[test]
fn varint_beyond_u32_is_bad() {
    let blk = Blk::raw(b"abcXY", &[], &[0xFF, 0xFF, 0xFF, 0xFF, 0x10], CMDS20);
    assert_eq!(only_block_status(blk, ORIG20), Status::BadVarint);
}

#[test]
fn varint_cut_off_at_stream_end_is_bad() {
    let blk = Blk::raw(b"abcXY", &[], &[0x83], CMDS20);
    assert_eq!(only_block_status(blk, ORIG20), Status::BadVarint);
    // escaped repeat whose length varint is missing
    assert_eq!(
        only_block_status(Blk::raw(b"z", &[], &[], &[0xFF, 0x00, 0x8F]), &[b'z'; 25]),
        Status::BadVarint
    );
    // long match whose distance varint is missing
    assert_eq!(
        only_block_status(
            Blk::raw(b"q", &[0xC8, 0x01], &[], &[0xFF, 0x00, 0xFE]),
            &[b'q'; 207]
        ),
        Status::BadVarint
    );
}

#[test]
fn distance_zero_is_bad() {
    assert_eq!(
        only_block_status(Blk::raw(b"abcXY", &[], &[0], CMDS20), ORIG20),
        Status::BadDistance
    );
}

#[test]
fn distance_before_block_start_is_bad() {
    // cursor is 3 after "abc": distance 4 reaches one byte before the block
    assert_eq!(
        only_block_status(Blk::raw(b"abcXY", &[], &[4], CMDS20), ORIG20),
        Status::BadDistance
    );
    // a repeat of slot 3 (distance 8) right after one literal
    assert_eq!(
        only_block_status(Blk::raw(b"a", &[], &[], &[0xFF, 0x00, 0xB3]), b"aaaaaaaaaa"),
        Status::BadDistance
    );
}

#[test]
fn distance_beyond_window_is_bad() {
    let mut s = Spec::one(ORIG20, good20());
    s.window = 2;
    assert_eq!(block_status(&s.build()), (0, Status::BadDistance));
    s.window = 3;
    decodes_to(&s.build(), ORIG20);
}

#[test]
fn block_not_starting_with_reset_is_bad() {
    assert_eq!(
        only_block_status(Blk::raw(b"abcXY", &[], &[3], &[0x02, 0xC9, 0x01]), ORIG20),
        Status::NoLeadingReset
    );
    assert_eq!(
        only_block_status(Blk::raw(b"abcXY", &[], &[3], &[]), ORIG20),
        Status::NoLeadingReset
    );
}

#[test]
fn literal_run_past_the_literals_is_bad() {
    assert_eq!(
        only_block_status(Blk::raw(b"abcX", &[], &[3], CMDS20), ORIG20),
        Status::LiteralsExhausted
    );
}

#[test]
fn writing_past_the_block_end_is_bad() {
    // match of 30 (0xC0 + 24) after 3 literals in a 20-byte block
    assert_eq!(
        only_block_status(
            Blk::raw(b"abcXY", &[], &[3], &[0xFF, 0x02, 0xD8, 0x01]),
            ORIG20
        ),
        Status::OutputOverrun
    );
    // literals past the end: 3 + 15 + 3 literals (block is 20)
    assert_eq!(
        only_block_status(
            Blk::raw(b"abcXYZ", &[], &[3], &[0xFF, 0x02, 0xC9, 0x02]),
            ORIG20
        ),
        Status::OutputOverrun
    );
    // a length varint so large that 21 + extra overflows u32 must not wrap around
    let blk = Blk::raw(
        b"z",
        &[0xFF, 0xFF, 0xFF, 0xFF, 0x0F],
        &[],
        &[0xFF, 0x00, 0x8F],
    );
    assert_eq!(only_block_status(blk, &[b'z'; 25]), Status::OutputOverrun);
    let blk = Blk::raw(
        b"z",
        &[0xFF, 0xFF, 0xFF, 0xFF, 0x0F],
        &[1],
        &[0xFF, 0x00, 0xFE],
    );
    assert_eq!(only_block_status(blk, &[b'z'; 25]), Status::OutputOverrun);
}

#[test]
fn leftovers_and_short_blocks_are_trailing() {
    // commands end at 18 of 20 bytes
    assert_eq!(
        only_block_status(Blk::raw(b"abc", &[], &[3], &[0xFF, 0x02, 0xC9]), ORIG20),
        Status::Trailing
    );
    // an unused literal
    assert_eq!(
        only_block_status(Blk::raw(b"abcXYZ", &[], &[3], CMDS20), ORIG20),
        Status::Trailing
    );
    // an unused offset varint
    assert_eq!(
        only_block_status(Blk::raw(b"abcXY", &[], &[3, 5], CMDS20), ORIG20),
        Status::Trailing
    );
    // an unused length byte
    assert_eq!(
        only_block_status(Blk::raw(b"abcXY", &[0], &[3], CMDS20), ORIG20),
        Status::Trailing
    );
}

#[test]
fn wrong_block_checksum_is_detected() {
    let mut blk = good20();
    blk.checksum = Some(xxh3_64(ORIG20) ^ 1);
    assert_eq!(only_block_status(blk, ORIG20), Status::Checksum);
}

#[test]
fn flipped_data_byte_is_a_checksum_error() {
    // the literal 'X' stored as 'Z': the block decodes by the rules but to other bytes
    assert_eq!(
        only_block_status(Blk::raw(b"abcZY", &[], &[3], CMDS20), ORIG20),
        Status::Checksum
    );
    // and by flipping the byte in the finished archive (the data section is not under the
    // metadata checksum, so no reseal is needed)
    let mut a = Spec::one(ORIG20, good20()).build();
    let n = a.len();
    a[n - 7] ^= 0x20; // data = "abcXY" [] [3] [FF 02 C9 01]: 'X' -> 'x'
    assert_eq!(block_status(&a), (0, Status::Checksum));
}

#[test]
fn content_checksum_mismatch_is_detected() {
    let mut a = Spec::one(ORIG20, good20()).build();
    let c = get_u64(&a, H_CONTENT);
    put_u64(&mut a, H_CONTENT, c ^ 0x100);
    reseal(&mut a);
    let p = Archive::parse(&a).unwrap();
    assert_eq!(decompress(&p), Err(DecodeError::ContentChecksum));
    // a region that is the whole data is checked too (FORMAT.md §6); a shorter one checks
    // its blocks only, so it still succeeds with the right bytes
    assert_eq!(extract(&p, 0, 20), Err(DecodeError::ContentChecksum));
    assert_eq!(extract(&p, 0, 19).unwrap(), &ORIG20[..19]);
}

#[test]
fn region_outside_the_data_is_refused() {
    let a = Spec::one(ORIG20, good20()).build();
    let p = Archive::parse(&a).unwrap();
    assert_eq!(
        extract(&p, 21, 0),
        Err(DecodeError::Region {
            offset: 21,
            length: 0,
            size: 20
        })
    );
    assert_eq!(
        extract(&p, 10, 11),
        Err(DecodeError::Region {
            offset: 10,
            length: 11,
            size: 20
        })
    );
    assert_eq!(
        extract(&p, u64::MAX, 2),
        Err(DecodeError::Region {
            offset: u64::MAX,
            length: 2,
            size: 20
        })
    );
    assert_eq!(extract(&p, 20, 0).unwrap(), b"");
    assert_eq!(extract(&p, 5, 10).unwrap(), &ORIG20[5..15]);
}

// ---------------------------------------------------------------------------------------
// rANS slices, hand-made with explicit tables
// ---------------------------------------------------------------------------------------

/// Original "aaaaaaaa": the literal stream is rANS-coded with a one-symbol table ('a' has
/// every slot), so a single lane's state never moves: the slice is the state 65536 alone.
fn rans_spec(literal_slice: &[u8], literal_table: Vec<u8>) -> Spec {
    let mut blk = Blk::raw(literal_slice, &[], &[], &[0xFF, 0x07]);
    blk.lanes = [1, 0, 0, 0, 0];
    blk.decoded = Some([8, 0, 0, 2, 0]);
    let mut tables = literal_table;
    tables.extend_from_slice(&[0, 0, 0, 0]);
    Spec {
        tables: Some(tables),
        ..Spec::one(b"aaaaaaaa", blk)
    }
}

const STATE_L: [u8; 4] = 65536u32.to_le_bytes();

#[test]
fn hand_made_rans_slice_decodes() {
    decodes_to(
        &rans_spec(&STATE_L, table_record(&[(b'a', 4096)])).build(),
        b"aaaaaaaa",
    );
}

#[test]
fn rans_state_below_lower_bound_is_a_header_error() {
    let s = rans_spec(&65535u32.to_le_bytes(), table_record(&[(b'a', 4096)]));
    assert_eq!(block_status(&s.build()), (0, Status::RansHeader));
}

#[test]
fn rans_odd_word_area_is_a_header_error() {
    let s = rans_spec(&[0, 0, 1, 0, 7], table_record(&[(b'a', 4096)]));
    assert_eq!(block_status(&s.build()), (0, Status::RansHeader));
    // shorter than the lane states
    let s = rans_spec(&[0, 0, 1], table_record(&[(b'a', 4096)]));
    assert_eq!(block_status(&s.build()), (0, Status::RansHeader));
}

#[test]
fn rans_unread_words_or_wrong_final_state_are_trailer_errors() {
    let s = rans_spec(&[0, 0, 1, 0, 7, 7], table_record(&[(b'a', 4096)]));
    assert_eq!(block_status(&s.build()), (0, Status::RansTrailer));
    let s = rans_spec(&65537u32.to_le_bytes(), table_record(&[(b'a', 4096)]));
    assert_eq!(block_status(&s.build()), (0, Status::RansTrailer));
}

#[test]
fn rans_running_out_of_words_is_underflow() {
    // two symbols of 2048: the first step halves the state below 65536 and needs a word
    let s = rans_spec(&STATE_L, table_record(&[(b'a', 2048), (b'b', 2048)]));
    assert_eq!(block_status(&s.build()), (0, Status::RansUnderflow));
}

#[test]
fn table_frequencies_not_summing_to_4096_are_refused() {
    for freqs in [
        vec![(b'a', 2048u32), (b'b', 2047)],
        vec![(b'a', 4095)],
        vec![(b'a', 2049), (b'b', 2048)],
    ] {
        let a = rans_spec(&STATE_L, table_record(&freqs)).build();
        assert!(
            matches!(parse_err(&a), FormatError::GroupTable { group: 0, .. }),
            "{freqs:?}"
        );
    }
    // a frequency above 4096 (varint of 4096 = freq 4097) on its own
    let mut rec = table_record(&[(b'a', 4096)]);
    let n = rec.len();
    rec[n - 2..].copy_from_slice(&[0x80, 0x20]);
    assert!(matches!(
        parse_err(&rans_spec(&STATE_L, rec).build()),
        FormatError::GroupTable { group: 0, .. }
    ));
}

#[test]
fn malformed_table_sections_are_refused() {
    // the error names the group and stream of the bad record
    let e = parse_err(&rans_spec(&STATE_L, vec![2]).build()).to_string();
    assert!(e.contains("table group 0") && e.contains("stream "), "{e}");
    // unknown kind
    let a = rans_spec(&STATE_L, vec![2]).build();
    assert!(matches!(
        parse_err(&a),
        FormatError::GroupTable { group: 0, .. }
    ));
    // truncated bitmap
    let a = rans_spec(&STATE_L, vec![1, 0xFF, 0xFF]).build();
    assert!(matches!(
        parse_err(&a),
        FormatError::GroupTable { group: 0, .. }
    ));
    // a byte after the last group's tables
    let mut s = rans_spec(&STATE_L, table_record(&[(b'a', 4096)]));
    s.tables.as_mut().unwrap().push(0);
    assert!(matches!(parse_err(&s.build()), FormatError::Table { .. }));
    // the section ends before the fourth table of the group
    let mut s = rans_spec(&STATE_L, table_record(&[(b'a', 4096)]));
    s.tables.as_mut().unwrap().pop();
    assert!(matches!(
        parse_err(&s.build()),
        FormatError::GroupTable { group: 0, .. }
    ));
}

#[test]
fn rans_slice_without_a_table_is_refused() {
    let mut s = rans_spec(&STATE_L, vec![0]);
    assert_eq!(entry_err_block(&s.build()), 0);
    // a table for another stream does not help
    s.tables = Some([vec![0u8], table_record(&[(b'a', 4096)]), vec![0, 0, 0]].concat());
    assert_eq!(entry_err_block(&s.build()), 0);
}

#[test]
fn more_than_64_lanes_is_refused() {
    // FORMAT.md §3.1 rule 4: 65 to 255 are reserved, but 127 on the literals (a two-bit slice)
    for (k, lanes) in [
        (0usize, 65u8),
        (0, 126),
        (0, 128),
        (0, 200),
        (0, 255),
        (3, 127),
    ] {
        let mut s = rans_spec(&STATE_L, table_record(&[(b'a', 4096)]));
        s.blocks[0].lanes[k] = lanes;
        assert_eq!(entry_err_block(&s.build()), 0, "stream {k}, {lanes} lanes");
    }
    // 32 lanes is allowed: 32 states of 65536, 8 symbols (lanes 8..31 never step)
    let mut s = rans_spec(&STATE_L.repeat(32), table_record(&[(b'a', 4096)]));
    s.blocks[0].lanes[0] = 32;
    decodes_to(&s.build(), b"aaaaaaaa");
}

#[test]
fn raw_slice_with_stored_not_equal_decoded_is_refused() {
    let mut blk = good20();
    blk.decoded = Some([4, 0, 1, 4, 0]);
    assert_eq!(entry_err_block(&Spec::one(ORIG20, blk).build()), 0);
}

#[test]
fn decoded_length_over_block_plus_one_is_refused() {
    // 20-byte block: a stream may decode to at most 21 bytes; a rANS literal slice claims 22
    let mut s = rans_spec(&STATE_L, table_record(&[(b'a', 4096)]));
    s.original = vec![b'a'; 20];
    s.blocks[0].decoded = Some([22, 0, 0, 2, 0]);
    assert_eq!(entry_err_block(&s.build()), 0);
    // 21 is allowed by the table check (the block then fails to decode, but as a block error)
    s.blocks[0].decoded = Some([21, 0, 0, 2, 0]);
    let b = s.build();
    assert!(Archive::parse(&b).is_ok());
    assert!(matches!(
        block_status(&b).1,
        Status::LiteralsExhausted | Status::Trailing | Status::OutputOverrun
    ));
}

// ---------------------------------------------------------------------------------------
// header and block table of a real archive
// ---------------------------------------------------------------------------------------

#[test]
fn every_truncation_is_an_error() {
    let (_, packed) = small_archive();
    // a hand-made one too, which is short enough to test every length cheaply
    let hand = Spec::one(ORIG20, good20()).build();
    for a in [&packed, &hand] {
        let full = a.len() as u64;
        for len in 0..a.len() {
            let e = parse_err(&a[..len]);
            if len < HEADER {
                assert_eq!(
                    e,
                    FormatError::TooShort {
                        got: len as u64,
                        need: 96
                    }
                );
            } else {
                assert_eq!(
                    e,
                    FormatError::Size {
                        expected: full,
                        got: len as u64
                    },
                    "truncated to {len}"
                );
            }
        }
        // one byte too many is an extension area the meta checksum does not cover
        // (FORMAT.md §3.4, §6)
        let mut longer = a.clone();
        longer.push(0);
        assert_eq!(parse_err(&longer), FormatError::MetaChecksum);
    }
}

#[test]
fn bad_magic_is_refused() {
    let (_, mut a) = small_archive();
    a[0..4].copy_from_slice(b"ACPY");
    reseal(&mut a);
    assert_eq!(parse_err(&a), FormatError::BadMagic { got: *b"ACPY" });
    a[0..4].copy_from_slice(b"\0\0\0\0");
    assert_eq!(parse_err(&a), FormatError::BadMagic { got: [0; 4] });
    // a short file of another kind is not called a truncated archive: the magic comes first
    assert_eq!(
        parse_err(b"hello\n"),
        FormatError::BadMagic { got: *b"hell" }
    );
    // a gzip member's first bytes
    assert_eq!(
        parse_err(&[0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0]),
        FormatError::BadMagic {
            got: [0x1f, 0x8b, 0x08, 0x00]
        }
    );
}

#[test]
fn bad_version_is_refused() {
    let (_, mut a) = small_archive();
    // FORMAT.md §2: format 1 only; 2 to 8 are the pre-release versions, named as such
    for v in [0u16, 9, 0xFFFF] {
        put_u16(&mut a, H_VERSION, v);
        reseal(&mut a);
        assert_eq!(parse_err(&a), FormatError::Version { got: v });
    }
    for v in 2u16..=8 {
        put_u16(&mut a, H_VERSION, v);
        reseal(&mut a);
        assert_eq!(parse_err(&a), FormatError::PreReleaseVersion { got: v });
        let msg = parse_err(&a).to_string();
        assert!(
            msg.contains(&format!(
                "format version {v} is a pre-release version this build does not read"
            )) && msg.contains("re-compress the original"),
            "{msg}"
        );
    }
}

#[test]
fn unknown_flags_are_refused() {
    let (_, mut a) = small_archive();
    let f = u16::from_le_bytes([a[H_FLAGS], a[H_FLAGS + 1]]);
    for bit in 2..16 {
        put_u16(&mut a, H_FLAGS, f | 1 << bit);
        reseal(&mut a);
        assert_eq!(header_field(&a), "flags", "bit {bit}");
    }
}

#[test]
fn block_size_out_of_rules_is_refused() {
    let (_, mut a) = small_archive();
    for bs in [
        0u32,
        1,
        2048,
        4095,
        5000,
        12288,
        4097,
        8 << 20,
        1 << 31,
        u32::MAX,
    ] {
        put_u32(&mut a, H_BLOCK_SIZE, bs);
        reseal(&mut a);
        assert_eq!(header_field(&a), "block_size", "block size {bs}");
    }
    // a valid power of two that does not match the block count
    put_u32(&mut a, H_BLOCK_SIZE, 16384);
    reseal(&mut a);
    assert_eq!(header_field(&a), "block_count");
}

#[test]
fn inconsistent_block_count_is_refused() {
    let (_, a) = small_archive();
    let bc = get_u32(&a, H_BLOCK_COUNT);
    for v in [0, bc - 1, bc + 1, u32::MAX] {
        let mut b = a.clone();
        put_u32(&mut b, H_BLOCK_COUNT, v);
        reseal(&mut b);
        assert_eq!(header_field(&b), "block_count", "block_count {v}");
    }
}

#[test]
fn inconsistent_groups_are_refused() {
    let (_, a) = small_archive();
    let mut b = a.clone();
    put_u32(&mut b, H_GROUP_BLOCKS, 0);
    reseal(&mut b);
    assert_eq!(header_field(&b), "group_blocks");
    let mut b = a.clone();
    put_u32(&mut b, H_GROUP_COUNT, 2);
    reseal(&mut b);
    assert_eq!(header_field(&b), "group_count");
}

#[test]
fn bad_window_min_match_and_reserved_are_refused() {
    let (_, a) = small_archive();
    // (header bytes 72..88: entry widths 32 at most, then the base, then reserved zero)
    let cases: [(usize, u64, usize, &str); 5] = [
        (H_WINDOW, 0, 4, "window"),
        (H_WINDOW, 4097, 4, "window"), // larger than the block without the cross-block flag
        (H_MIN_MATCH, 5, 4, "min_match"),
        (H_RESERVED, 33, 1, "entry_bits"),
        (H_RESERVED + 14, 1, 1, "entry_bits"),
    ];
    for (off, v, width, field) in cases {
        let mut b = a.clone();
        match width {
            1 => b[off] = v as u8,
            4 => put_u32(&mut b, off, v as u32),
            _ => put_u64(&mut b, off, v),
        }
        reseal(&mut b);
        assert_eq!(header_field(&b), field);
    }
    // informational fields may hold anything
    let mut b = a.clone();
    put_u32(&mut b, H_DEPTH_CAP, 77);
    put_u32(&mut b, H_LEVEL, 1000);
    reseal(&mut b);
    assert!(Archive::parse(&b).is_ok());
}

#[test]
fn absurd_section_sizes_are_refused() {
    let (_, a) = small_archive();
    let len = a.len() as u64;
    // data_bytes so large that the sections' sum overflows u64
    let mut b = a.clone();
    put_u64(&mut b, H_DATA_BYTES, u64::MAX);
    reseal(&mut b);
    assert_eq!(header_field(&b), "data_bytes");
    // data_bytes huge but no overflow: the file is too short
    let mut b = a.clone();
    let db = get_u64(&b, H_DATA_BYTES);
    put_u64(&mut b, H_DATA_BYTES, 1 << 40);
    reseal(&mut b);
    assert_eq!(
        parse_err(&b),
        FormatError::Size {
            expected: len - db + (1 << 40),
            got: len
        }
    );
    // table_bytes huge
    let mut b = a.clone();
    put_u64(&mut b, H_TABLE_BYTES, u64::MAX - 50);
    reseal(&mut b);
    assert!(matches!(
        parse_err(&b),
        FormatError::Header {
            field: "data_bytes",
            ..
        } | FormatError::Size { .. }
    ));
    // table_bytes and data_bytes swapped between sections with the same sum: the file size
    // holds, the tables do not parse or the slices do not add up
    let mut b = a.clone();
    let tb = get_u64(&b, H_TABLE_BYTES);
    put_u64(&mut b, H_TABLE_BYTES, tb + 1);
    put_u64(&mut b, H_DATA_BYTES, db - 1);
    reseal(&mut b);
    assert!(matches!(
        parse_err(&b),
        FormatError::Table { .. }
            | FormatError::GroupTable { .. }
            | FormatError::Header {
                field: "data_bytes",
                ..
            }
    ));
}

#[test]
fn huge_original_size_with_consistent_block_count_is_refused() {
    let (_, a) = small_archive();
    // 2^40 bytes in 4 MiB blocks = 262144 blocks, 64 groups of 4096 blocks... the block table
    // alone would be 14 MiB: the file is far too short
    let mut b = a.clone();
    put_u64(&mut b, H_ORIGINAL, 1 << 40);
    put_u32(&mut b, H_BLOCK_SIZE, 4 << 20);
    put_u32(&mut b, H_BLOCK_COUNT, 1 << 18);
    put_u32(&mut b, H_GROUP_BLOCKS, 1);
    put_u32(&mut b, H_GROUP_COUNT, 1 << 18);
    reseal(&mut b);
    assert!(matches!(parse_err(&b), FormatError::Size { .. }));
    // u64::MAX bytes cannot be described by a u32 block count at all
    let mut b = a.clone();
    put_u64(&mut b, H_ORIGINAL, u64::MAX);
    reseal(&mut b);
    assert_eq!(header_field(&b), "block_count");
}

#[test]
fn original_size_shrunk_within_the_last_block_fails_cleanly() {
    // same block count, smaller last block: the entries no longer fit; must be an error
    // (format or block), never a panic or wrong bytes
    let (data, a) = small_archive();
    let n = data.len() as u64;
    for shrink in [1u64, 7, 100, (n % 4096) - 1] {
        let mut b = a.clone();
        put_u64(&mut b, H_ORIGINAL, n - shrink);
        reseal(&mut b);
        match Archive::parse(&b) {
            Err(FormatError::BlockEntry { .. }) => {}
            Err(e) => panic!("unexpected format error {e:?}"),
            Ok(p) => assert!(
                matches!(decompress(&p), Err(DecodeError::Block { .. })),
                "shrink {shrink}"
            ),
        }
    }
    // a tiny archive whose single 4 MiB block claims to be full: decodes to a block error
    let tiny = compress_settings(
        b"0123456789",
        &Settings {
            block_size: 4 << 20,
            packed_literals: false,
            ..Default::default()
        },
        &|_| {},
    )
    .unwrap();
    // fixed-offset entries: `reseal` knows their size
    let tiny = common::with_fixed_entries(&tiny);
    let mut b = tiny.clone();
    put_u64(&mut b, H_ORIGINAL, 4 << 20);
    reseal(&mut b);
    assert_eq!(block_status(&b), (0, Status::Trailing));
}

#[test]
fn meta_checksum_mismatch_is_detected() {
    let (_, a) = small_archive();
    // the checksum itself
    let mut b = a.clone();
    b[H_META] ^= 1;
    assert_eq!(parse_err(&b), FormatError::MetaChecksum);
    // an informational header field
    let mut b = a.clone();
    b[H_LEVEL] ^= 1;
    assert_eq!(parse_err(&b), FormatError::MetaChecksum);
    // a block checksum in the table
    let mut b = a.clone();
    b[entry(3) + E_CHECKSUM] ^= 1;
    assert_eq!(parse_err(&b), FormatError::MetaChecksum);
    // max_depth (not otherwise validated)
    let mut b = a.clone();
    b[entry(0) + E_MAX_DEPTH] ^= 1;
    assert_eq!(parse_err(&b), FormatError::MetaChecksum);
    // the last byte of the table section
    let bc = get_u32(&a, H_BLOCK_COUNT) as usize;
    let tb = get_u64(&a, H_TABLE_BYTES) as usize;
    let mut b = a.clone();
    b[HEADER + bc * ENTRY + tb - 1] ^= 1;
    assert_eq!(parse_err(&b), FormatError::MetaChecksum);
}

#[test]
fn block_entry_rules_are_enforced() {
    let (_, a) = small_archive();
    // reserved header bytes 86..88 (FORMAT.md §2)
    let mut b = a.clone();
    b[87] = 1;
    reseal(&mut b);
    assert_eq!(header_field(&b), "entry_bits");
    // a source before block 0 (distance 5 at block 4), and (no cross-block flag) a lowest
    // source block below the block's own index (distance 1)
    let mut b = a.clone();
    put_u32(&mut b, entry(4) + E_SOURCE, 5);
    reseal(&mut b);
    assert_eq!(entry_err_block(&b), 4);
    let mut b = a.clone();
    put_u32(&mut b, entry(4) + E_SOURCE, 1);
    reseal(&mut b);
    assert_eq!(entry_err_block(&b), 4);
    // lanes over 64, and the two-bit mark on a stream other than the literals
    for (k, lanes) in [(3usize, 65u8), (1, 127), (0, 128), (2, 255)] {
        let mut b = a.clone();
        b[entry(1) + E_LANES + k] = lanes;
        reseal(&mut b);
        assert_eq!(entry_err_block(&b), 1, "stream {k}, {lanes} lanes");
    }
    // a rANS slice re-marked raw: stored and decoded lengths then differ
    let (k, blk) = (0..get_u32(&a, H_BLOCK_COUNT) as usize)
        .flat_map(|i| (0..4).map(move |k| (k, i)))
        .find(|&(k, i)| {
            a[entry(i) + E_LANES + k] != 0
                && get_u32(&a, entry(i) + E_STORED + 4 * k)
                    != get_u32(&a, entry(i) + E_DECODED + 4 * k)
        })
        .expect("some rANS slice");
    let mut b = a.clone();
    b[entry(blk) + E_LANES + k] = 0;
    reseal(&mut b);
    assert_eq!(entry_err_block(&b), blk as u32);
    // decoded length over block + 1 (4097 for a 4 KiB block)
    let mut b = a.clone();
    put_u32(&mut b, entry(0) + E_DECODED, 4098);
    reseal(&mut b);
    assert_eq!(entry_err_block(&b), 0);
    // slice lengths that no longer add up to data_bytes (a stored byte moved to the
    // following block's slices keeps the file size)
    let mut b = a.clone();
    let s = get_u32(&b, entry(0) + E_STORED + 12);
    put_u32(&mut b, entry(0) + E_STORED + 12, s + 1);
    if b[entry(0) + E_LANES + 3] == 0 {
        let d = get_u32(&b, entry(0) + E_DECODED + 12);
        put_u32(&mut b, entry(0) + E_DECODED + 12, d + 1);
    }
    reseal(&mut b);
    assert_eq!(header_field(&b), "data_bytes");
}

#[test]
fn corrupt_rans_state_in_a_real_archive_is_a_header_error() {
    let (_, a) = small_archive();
    let p = Archive::parse(&a).unwrap();
    let blk = (0..p.block_count())
        .find(|&i| p.entries()[i].lanes[0] > 0)
        .expect("a rANS literal slice");
    let off = p.data_offset() as usize + p.block_offsets()[blk] as usize;
    drop(p);
    let mut b = a.clone();
    b[off..off + 4].copy_from_slice(&[0, 0, 0, 0]); // lane 0 state 0 < 65536
    assert_eq!(block_status(&b), (blk as u32, Status::RansHeader));
}

// ---------------------------------------------------------------------------------------
// single-byte flips everywhere in a real archive
// ---------------------------------------------------------------------------------------

fn check_flips(data: &[u8], packed: &[u8], step: usize) -> (usize, usize) {
    let p = Archive::parse(packed).unwrap();
    let data_start = p.data_offset() as usize;
    drop(p);
    let mut b = packed.to_vec();
    // metadata: any flip fails the parse
    for i in 0..data_start {
        let m = 1u8 << (i % 8);
        b[i] ^= m;
        assert!(
            Archive::parse(&b).is_err(),
            "flip of metadata byte {i} (mask {m:#x}) parsed"
        );
        b[i] ^= m;
    }
    // data section: Err or the exact original
    let (mut rejected, mut harmless) = (0, 0);
    for i in (data_start..b.len()).step_by(step) {
        let m = 1u8 << (i % 8);
        b[i] ^= m;
        let a = Archive::parse(&b).expect("data-section flips leave the metadata valid");
        match decompress(&a) {
            Err(DecodeError::Block { .. }) => rejected += 1,
            Err(e) => panic!("flip at {i}: unexpected error kind {e:?}"),
            Ok(out) => {
                assert!(
                    out == data,
                    "flip at {i} (mask {m:#x}) decoded Ok to wrong bytes"
                );
                harmless += 1;
            }
        }
        b[i] ^= m;
    }
    (rejected, harmless)
}

#[test]
fn every_single_byte_flip_of_the_data_section_is_caught() {
    let data = prose(100_000, 42);
    let packed = compress_settings(&data, &Settings::default(), &|_| {}).unwrap();
    let (rejected, harmless) = check_flips(&data, &packed, 1);
    // a flip can only be harmless in bits the decoder never reads; nearly all must be caught
    assert!(
        rejected > 0 && harmless * 100 < rejected,
        "rejected {rejected}, harmless {harmless}"
    );
}

#[test]
fn single_byte_flips_of_a_cross_block_archive_are_caught() {
    let data = prose(100_000, 43);
    let o = Settings {
        block_size: 4096,
        window: Some(32768),
        level: 7,
        ..Default::default()
    };
    let packed = compress_settings(&data, &o, &|_| {}).unwrap();
    assert!(Archive::parse(&packed).unwrap().cross_block());
    let (rejected, harmless) = check_flips(&data, &packed, 3);
    assert!(
        rejected > 0 && harmless * 100 < rejected,
        "rejected {rejected}, harmless {harmless}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// Random multi-byte damage anywhere, optionally re-sealed so it gets past the metadata
    /// checksum: parse, decompress and extract never panic, and whatever decodes Ok is exact.
    #[test]
    fn random_damage_never_panics_or_lies(
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..5),
        reseal_it in any::<bool>(),
        cross in any::<bool>(),
        region in (any::<prop::sample::Index>(), 0u64..20000),
    ) {
        use std::sync::OnceLock;
        static ARCHIVES: OnceLock<[(Vec<u8>, Vec<u8>); 2]> = OnceLock::new();
        let archives = ARCHIVES.get_or_init(|| {
            let data = prose(30_000, 9);
            let plain = compress_settings(&data, &Settings { block_size: 4096, ..Default::default() }, &|_| {}).unwrap();
            let cross = compress_settings(&data, &Settings { block_size: 4096, window: Some(16384), ..Default::default() }, &|_| {}).unwrap();
            [(data.clone(), plain), (data, cross)]
        });
        let (data, packed) = &archives[cross as usize];
        let mut b = packed.clone();
        for (at, x) in &edits {
            let i = at.index(b.len());
            b[i] ^= x | 1;
        }
        if reseal_it {
            reseal(&mut b);
        }
        if let Ok(a) = Archive::parse(&b) {
            if let Ok(out) = decompress(&a) {
                prop_assert!(out == *data, "damaged archive decoded Ok to other bytes");
            }
            let size = a.header().original_size;
            let off = region.0.index(size as usize + 1) as u64;
            let len = region.1.min(size - off);
            if let Ok(out) = extract(&a, off, len) {
                prop_assert!(off + len <= data.len() as u64, "extract Ok past the real data");
                prop_assert!(out == data[off as usize..(off + len) as usize], "extract Ok with other bytes");
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// packed block entries (FORMAT.md §2, §3.1)
// ---------------------------------------------------------------------------------------

/// A 4 KiB-block archive with a 16 KiB window: its source distances need bits.
fn cross_archive_v3() -> (Vec<u8>, Vec<u8>) {
    let data = prose(40_000, 9);
    let packed = compress_settings(
        &data,
        &Settings {
            block_size: 4096,
            window: Some(16384),
            ..Default::default()
        },
        &|_| {},
    )
    .unwrap();
    (data, packed)
}

#[test]
fn v3_entries_read_by_the_format_text_match_the_parser() {
    for (data, a) in [small_archive_v3(), cross_archive_v3()] {
        decodes_to(&a, &data);
        let p = Archive::parse(&a).unwrap();
        assert_eq!(p.header().version, 1);
        let ours = common::v3_entries(&a);
        assert_eq!(ours.len(), p.entries().len());
        for (i, (o, e)) in ours.iter().zip(p.entries()).enumerate() {
            assert_eq!(o.checksum, e.checksum, "block {i}");
            assert_eq!(o.stored, e.stored_len, "block {i}");
            assert_eq!(o.decoded, e.decoded_len, "block {i}");
            assert_eq!(o.lanes, e.lanes, "block {i}");
            assert_eq!(o.depth, e.max_depth, "block {i}");
            assert_eq!(o.lowest, e.lowest_source_block, "block {i}");
        }
        // the widths are the smallest that hold the values (FORMAT.md §3.1, writer note)
        let w = common::v3_widths(&a);
        let need = |v: u32| 32 - v.leading_zeros();
        for k in 0..5 {
            assert_eq!(w[k], ours.iter().map(|e| need(e.stored[k])).max().unwrap());
            assert_eq!(
                w[5 + k],
                ours.iter().map(|e| need(e.decoded[k])).max().unwrap()
            );
        }
        assert_eq!(w[15], ours.iter().map(|e| need(e.depth)).max().unwrap());
        let far = ours
            .iter()
            .enumerate()
            .map(|(i, e)| i as u32 - e.lowest)
            .max();
        assert_eq!(w[16], need(far.unwrap()));
    }
    // the cross-block archive does read earlier blocks, so its source field is not empty
    let (_, a) = cross_archive_v3();
    assert!(common::v3_widths(&a)[16] > 0);
}

#[test]
fn v3_entry_widths_are_checked() {
    let (_, a) = small_archive_v3();
    // a width above 32
    let mut b = a.clone();
    b[common::H_ENTRY_BITS + 11] = 33;
    common::reseal_v3(&mut b);
    assert_eq!(header_field(&b), "entry_bits");
    // the match base byte (FORMAT.md §2), then the reserved bytes
    for at in 13..16 {
        let mut b = a.clone();
        b[common::H_ENTRY_BITS + at] = 1;
        common::reseal_v3(&mut b);
        let want = if at == 13 { "match_base" } else { "entry_bits" };
        assert_eq!(header_field(&b), want, "byte {at}");
    }
    // a wider field changes the entry size: the sections no longer add up to the file
    let mut b = a.clone();
    b[common::H_ENTRY_BITS] += 8;
    common::reseal_v3(&mut b);
    assert!(matches!(parse_err(&b), FormatError::Size { .. }));
    // the same archive with every field at its widest width is the same archive
    let wide = common::with_fixed_entries(&a);
    assert!(wide.len() > a.len());
    let (x, y) = (Archive::parse(&a).unwrap(), Archive::parse(&wide).unwrap());
    assert_eq!(x.entries(), y.entries());
}

#[test]
fn packed_fields_are_validated_like_fixed_offset_ones() {
    let (_, a) = small_archive_v3();
    let ents = common::v3_entries(&a);
    let (bi, k) = (0..ents.len())
        .flat_map(|i| (0..5).map(move |k| (i, k)))
        .find(|&(i, k)| ents[i].lanes[k] != 0 && ents[i].decoded[k] > 1)
        .expect("a rANS slice");
    // a rANS slice marked raw: its stored length differs from its decoded length
    let mut b = a.clone();
    common::v3_set(&mut b, bi, 10 + k, 0);
    common::reseal_v3(&mut b);
    assert_eq!(entry_err_block(&b), bi as u32);
    // one stored byte less: the slices no longer add up to the data section
    let mut b = a.clone();
    common::v3_set(&mut b, bi, k, ents[bi].stored[k] - 1);
    common::reseal_v3(&mut b);
    assert!(matches!(
        parse_err(&b),
        FormatError::Header {
            field: "data_bytes",
            ..
        }
    ));
    // one decoded symbol less: parses, and the block fails its rANS end check
    let mut b = a.clone();
    common::v3_set(&mut b, bi, 5 + k, ents[bi].decoded[k] - 1);
    common::reseal_v3(&mut b);
    let (block, _) = block_status(&b);
    assert_eq!(block, bi as u32);
}

#[test]
fn v3_source_distance_and_padding_are_checked() {
    let (data, a) = cross_archive_v3();
    let w = common::v3_widths(&a);
    // block 0 cannot read before itself
    let mut b = a.clone();
    common::v3_set(&mut b, 0, 16, 1);
    common::reseal_v3(&mut b);
    assert_eq!(entry_err_block(&b), 0);
    // a distance one beyond the block index
    let n = get_u32(&a, H_BLOCK_COUNT) as usize;
    let far = (1u32 << w[16]) - 1;
    let j = far as usize - 1;
    assert!(j < n, "{n} blocks, source width {}", w[16]);
    let mut b = a.clone();
    common::v3_set(&mut b, j, 16, far);
    common::reseal_v3(&mut b);
    assert_eq!(entry_err_block(&b), j as u32);
    // a distance of 0 everywhere is valid (a block may read only itself)
    let mut b = a.clone();
    for i in 0..n {
        common::v3_set(&mut b, i, 16, 0);
    }
    common::reseal_v3(&mut b);
    let p = Archive::parse(&b).expect("lowest = own index is valid");
    // but the decoder then finds sources outside the declared range or decodes right
    if let Ok(out) = decompress(&p) {
        assert_eq!(out, data);
    }
    // padding bits after the last field must be zero
    let used: u32 = w.iter().sum();
    assert_ne!(used % 8, 0, "this archive's entries end in padding bits");
    let size = common::v3_entry_size(&a);
    let mut b = a.clone();
    b[HEADER + 3 * size + size - 1] |= 0x80;
    common::reseal_v3(&mut b);
    assert_eq!(entry_err_block(&b), 3);
}

/// Header byte 85 (FORMAT.md §2): the match base.
const H_MATCH_BASE: usize = common::H_ENTRY_BITS + 13;

/// [`prose`] compressed with minimum match `min_match` (4 KiB blocks, level 8).
fn archive_with_min_match(min_match: u32) -> (Vec<u8>, Vec<u8>) {
    let data = prose(40_000, 5);
    let packed = compress_settings(
        &data,
        &Settings {
            block_size: 4096,
            level: 8,
            min_match,
            context_tables: false,
            ..Default::default()
        },
        &|_| {},
    )
    .unwrap();
    (data, packed)
}

#[test]
fn short_minimum_matches_write_their_base() {
    // FORMAT.md §2: base = the minimum match, at most 6
    for (min_match, version, base) in [(4u32, 1u16, 4u8), (5, 1, 5), (6, 1, 6), (9, 1, 6)] {
        let (data, a) = archive_with_min_match(min_match);
        assert_eq!(
            u16::from_le_bytes([a[4], a[5]]),
            version,
            "min match {min_match}"
        );
        assert_eq!(a[H_MATCH_BASE], base, "min match {min_match}");
        assert_eq!(get_u32(&a, H_MIN_MATCH), min_match);
        decodes_to(&a, &data);
    }
    // the base matters: the prose has 4- and 5-byte repeats that base 4 codes
    let (_, a4) = archive_with_min_match(4);
    let (_, a6) = archive_with_min_match(6);
    assert!(a4.len() < a6.len(), "{} >= {}", a4.len(), a6.len());
}

#[test]
fn match_base_is_checked() {
    let (_, a) = archive_with_min_match(4);
    for bad in [0u8, 1, 3, 7, 255] {
        let mut b = a.clone();
        b[H_MATCH_BASE] = bad;
        common::reseal_v3(&mut b);
        assert_eq!(header_field(&b), "match_base", "base {bad}");
    }
    // the minimum match may not lie below the base
    let mut b = a.clone();
    put_u32(&mut b, H_MIN_MATCH, 3);
    common::reseal_v3(&mut b);
    assert_eq!(header_field(&b), "min_match");
    let (_, a6) = archive_with_min_match(6);
    let mut b = a6.clone();
    put_u32(&mut b, H_MIN_MATCH, 5);
    common::reseal_v3(&mut b);
    assert_eq!(header_field(&b), "min_match", "base 6");
}

#[test]
fn a_wrong_match_base_fails_closed() {
    // an archive relabelled with another base parses (the header is consistent) but its
    // matches then have other lengths: every decoder must report an error, never the
    // wrong bytes as right
    let (data, a) = archive_with_min_match(4);
    for base in [5u8, 6] {
        let mut b = a.clone();
        b[H_MATCH_BASE] = base;
        put_u32(&mut b, H_MIN_MATCH, 6);
        common::reseal_v3(&mut b);
        let arc = Archive::parse(&b).expect("a consistent header");
        match decompress(&arc) {
            Err(DecodeError::Block { .. }) | Err(DecodeError::ContentChecksum) => {}
            Ok(out) => panic!("base {base}: decoded {} bytes without an error", out.len()),
            Err(e) => panic!("base {base}: unexpected error {e:?}"),
        }
        assert!(extract(&arc, 0, data.len() as u64).is_err());
    }
}

// ---------------------------------------------------------------------------------------
// context tables (FORMAT.md §5.2, §5.4)
// ---------------------------------------------------------------------------------------

/// Soft-masked DNA-like text (FORMAT.md §5.4's case): runs of upper- and lower-case bases in
/// 60-column lines, so the literal stream's context tables pay.
fn soft_masked(n: usize, seed: u64) -> Vec<u8> {
    let mut r = Rng(seed | 1);
    let mut out = Vec::with_capacity(n + 64);
    let mut lower = false;
    while out.len() < n {
        if r.next().is_multiple_of(200) {
            lower = !lower;
        }
        let b = b"ACGT"[(r.next() % 4) as usize];
        out.push(if lower { b.to_ascii_lowercase() } else { b });
        if out.len() % 61 == 60 {
            out.push(b'\n');
        }
    }
    out.truncate(n);
    out
}

/// [`soft_masked`] data and its archive (4 KiB blocks, defaults otherwise: context tables).
fn context_archive() -> (Vec<u8>, Vec<u8>) {
    let data = soft_masked(60_000, 11);
    let packed = compress_4k(&data, true);
    (data, packed)
}

/// Start and kind of each table record of an archive's table section.
fn table_records(a: &[u8]) -> Vec<(usize, u8)> {
    let start = HEADER + get_u32(a, 20) as usize * common::v3_entry_size(a);
    let end = start + get_u64(a, 48) as usize;
    let body = |mut p: usize| {
        let bitmap = &a[p..p + 32];
        p += 32;
        for s in 0..256 {
            if bitmap[s / 8] >> (s % 8) & 1 == 1 {
                while a[p] & 0x80 != 0 {
                    p += 1;
                }
                p += 1;
            }
        }
        p
    };
    let mut out = Vec::new();
    let mut p = start;
    while p < end {
        out.push((p, a[p]));
        p = match a[p] {
            0 => p + 1,
            1 => body(p + 1),
            2 => body(body(p + 2)),
            3 => body(p + 2 + a[p + 1] as usize),
            k => panic!("kind {k}"),
        };
    }
    assert_eq!(p, end);
    out
}

#[test]
fn context_tables_shrink_soft_masked_dna() {
    let (data, a) = context_archive();
    assert_eq!(u16::from_le_bytes([a[4], a[5]]), 1);
    assert_eq!(a[H_MATCH_BASE], 6);
    let kinds: Vec<u8> = table_records(&a).iter().map(|r| r.1).collect();
    assert!(kinds.contains(&2), "a context pair: {kinds:?}");
    decodes_to(&a, &data);
    // the same input without context tables: larger
    let plain = compress_4k(&data, false);
    assert!(!table_records(&plain).iter().any(|r| r.1 == 2));
    assert!(
        a.len() * 100 < plain.len() * 95,
        "{} vs {}",
        a.len(),
        plain.len()
    );
}

#[test]
fn context_records_are_checked() {
    let (_, a) = context_archive();
    let (at, _) = *table_records(&a).iter().find(|r| r.1 == 2).unwrap();
    let table_err = |b: &[u8]| match parse_err(b) {
        FormatError::GroupTable { what, .. } => what,
        e => panic!("expected a table error, got {e:?}"),
    };
    // context bits 8 and above
    for bad in [8u8, 9, 0x80, 0xFF] {
        let mut b = a.clone();
        b[at + 1] = bad;
        common::reseal_v3(&mut b);
        assert_eq!(table_err(&b), "context bit above 7", "bit {bad}");
    }
    // the second table's frequencies must sum to 4096 too: its last varint changed
    let second_end = table_records(&a)
        .iter()
        .skip_while(|r| r.0 != at)
        .nth(1)
        .map(|r| r.0)
        .unwrap_or(
            HEADER
                + get_u32(&a, 20) as usize * common::v3_entry_size(&a)
                + get_u64(&a, 48) as usize,
        );
    let mut b = a.clone();
    b[second_end - 1] ^= 1;
    common::reseal_v3(&mut b);
    assert_eq!(table_err(&b), "frequencies do not sum to 4096");
    // reserved kinds 4-255 (FORMAT.md §5.2)
    for kind in [4u8, 5, 0x80, 0xFF] {
        let mut b = a.clone();
        b[at] = kind;
        common::reseal_v3(&mut b);
        assert!(table_err(&b).contains("unknown table kind"), "kind {kind}");
    }
}

#[test]
fn a_relabelled_context_fails_closed() {
    // another context bit, or a pair read as its first table alone, decodes other
    // symbols: every decoder must report an error, never the wrong bytes as right
    let (data, a) = context_archive();
    let (at, _) = *table_records(&a).iter().find(|r| r.1 == 2).unwrap();
    for bit in 0u8..8 {
        if bit == a[at + 1] {
            continue;
        }
        let mut b = a.clone();
        b[at + 1] = bit;
        common::reseal_v3(&mut b);
        let arc = Archive::parse(&b).expect("a consistent table section");
        match decompress(&arc) {
            Err(DecodeError::Block { .. }) | Err(DecodeError::ContentChecksum) => {}
            Ok(out) => panic!("bit {bit}: decoded {} bytes without an error", out.len()),
            Err(e) => panic!("bit {bit}: unexpected error {e:?}"),
        }
        assert!(extract(&arc, 0, data.len() as u64).is_err(), "bit {bit}");
    }
}

/// [`compress_4k`] with packed literal tables allowed (and context tables): packed where a
/// group's literals have at most 16 distinct bytes (FORMAT.md §5.6).
fn compress_4k_packed(data: &[u8]) -> Vec<u8> {
    let opts = Settings {
        block_size: 4096,
        ..Default::default()
    };
    compress_settings(data, &opts, &|_| {}).unwrap()
}

/// Soft-masked DNA (ten letters with the newline: two per packed symbol) and its archive
/// with packed literal tables, and the start of its kind-3 record.
fn packed_archive() -> (Vec<u8>, Vec<u8>, usize) {
    let data = soft_masked(60_000, 11);
    let a = compress_4k_packed(&data);
    let (at, _) = *table_records(&a)
        .iter()
        .find(|r| r.1 == 3)
        .expect("a packed literal record");
    (data, a, at)
}

#[test]
fn packed_literals_shrink_soft_masked_dna() {
    let (data, a, at) = packed_archive();
    assert_eq!(u16::from_le_bytes([a[4], a[5]]), 1);
    assert_eq!(a[H_MATCH_BASE], 6);
    // the record: kind 3, the alphabet size, the alphabet (strictly increasing)
    let n = a[at + 1] as usize;
    let alphabet = &a[at + 2..at + 2 + n];
    let mut letters: Vec<u8> = data.clone();
    letters.sort_unstable();
    letters.dedup();
    assert!(
        alphabet.iter().all(|x| letters.contains(x)) && alphabet.is_sorted() && n <= 16,
        "alphabet {alphabet:?}, data letters {letters:?}"
    );
    decodes_to(&a, &data);
    // without packed literals: no kind-3 record; larger with one table per stream, and at
    // level 5 at most 3 % smaller with context tables (`PACK_MAX_LOSS_FAST_LEVELS`; the
    // chain-step rule, `PACK_STEPS_PER_BYTE`, could take packing where it loses more, but
    // 15 blocks of 4 KiB save too few steps for that)
    let plain = compress_4k(&data, false);
    let ctx = compress_4k(&data, true);
    assert!(!table_records(&plain).iter().any(|r| r.1 == 3));
    assert!(!table_records(&ctx).iter().any(|r| r.1 == 3));
    assert!(a.len() < plain.len(), "{} vs {}", a.len(), plain.len());
    assert!(
        a.len() * 100 <= ctx.len() * 103,
        "{} vs {}",
        a.len(),
        ctx.len()
    );
}

#[test]
fn packed_records_are_checked() {
    let (_, a, at) = packed_archive();
    let table_err = |b: &[u8]| match parse_err(b) {
        FormatError::GroupTable { what, .. } => what,
        e => panic!("expected a table error, got {e:?}"),
    };
    // a kind-3 record for a stream other than the literals (the record moved into the
    // lengths' place: the literals' record made absent, the lengths' record replaced)
    let recs = table_records(&a);
    let i = recs.iter().position(|r| r.0 == at).unwrap();
    if let (Some(&(next, _)), Some(&(after, _))) = (recs.get(i + 1), recs.get(i + 2)) {
        let mut b = a[..at].to_vec();
        b.push(0);
        b.extend_from_slice(&a[at..next]);
        b.extend_from_slice(&a[after..]);
        let tb = get_u64(&a, 48) as usize + 1 - (after - next);
        put_u64(&mut b, 48, tb as u64);
        common::reseal_v3(&mut b);
        match parse_err(&b) {
            FormatError::GroupTable { what, .. } => {
                assert!(what.contains("other than literals"), "{what}")
            }
            e => panic!("expected a table error, got {e:?}"),
        }
    }
    // alphabet sizes 0 and above 16
    for bad in [0u8, 17, 0xFF] {
        let mut b = a.clone();
        b[at + 1] = bad;
        common::reseal_v3(&mut b);
        assert!(
            table_err(&b).contains("alphabet size"),
            "{bad}: {}",
            table_err(&b)
        );
    }
    // an alphabet out of order: two letters swapped, or one repeated
    let mut b = a.clone();
    b.swap(at + 2, at + 3);
    common::reseal_v3(&mut b);
    assert!(table_err(&b).contains("increasing"), "{}", table_err(&b));
    let mut b = a.clone();
    b[at + 3] = b[at + 2];
    common::reseal_v3(&mut b);
    assert!(table_err(&b).contains("increasing"), "{}", table_err(&b));
}

#[test]
fn a_relabelled_packed_alphabet_fails_closed() {
    // other letters (still increasing) or a narrower pack width decode other bytes: every
    // decoder must report an error, never the wrong bytes as right
    let (data, a, at) = packed_archive();
    let n = a[at + 1] as usize;
    // the last letter raised by one (still increasing, the same width)
    let mut b = a.clone();
    b[at + 1 + n] = b[at + 1 + n].wrapping_add(1);
    common::reseal_v3(&mut b);
    let arc = Archive::parse(&b).expect("a consistent table section");
    assert_eq!(arc.literal_width(0), 2);
    match decompress(&arc) {
        Err(DecodeError::Block { .. }) | Err(DecodeError::ContentChecksum) => {}
        Ok(out) => panic!("decoded {} bytes without an error", out.len()),
        Err(e) => panic!("unexpected error {e:?}"),
    }
    assert!(extract(&arc, 0, data.len() as u64).is_err());
}

// ---------------------------------------------------------------------------------------
// position-bound block checksums (FORMAT.md §6)
// ---------------------------------------------------------------------------------------

/// 6 blocks of 4 KiB of random bytes (no match crosses a block, so every entry's source
/// distance is 0 and a block's entry and slices can move), with and without a cross-block
/// window (the whole-file decode then takes its dependency-ordered path).
fn movable_archive(cross: bool) -> (Vec<u8>, Vec<u8>) {
    let mut r = Rng(0x5EED_B10C);
    let data: Vec<u8> = (0..6 * 4096).map(|_| r.next() as u8).collect();
    let opts = Settings {
        block_size: 4096,
        window: cross.then_some(16384),
        ..Default::default()
    };
    let a = compress_settings(&data, &opts, &|_| {}).unwrap();
    decodes_to(&a, &data);
    (data, a)
}

/// The archive with its blocks in the order `order` (block `i` of the result is block
/// `order[i]` of `a`): each block's stored entry bytes and slices moved together, the content
/// checksum set to the moved blocks' bytes and the meta checksum recomputed, so that only the
/// block checksums' binding to their position (FORMAT.md §6) can tell.
fn with_blocks_moved(a: &[u8], data: &[u8], order: &[usize]) -> Vec<u8> {
    let p = Archive::parse(a).unwrap();
    let size = common::v3_entry_size(a);
    let n = p.block_count();
    assert_eq!(order.len(), n);
    let bt_end = HEADER + n * size;
    let data_start = p.data_offset() as usize;
    let mut out = a[..HEADER].to_vec();
    for &j in order {
        out.extend_from_slice(&a[HEADER + j * size..HEADER + (j + 1) * size]);
    }
    out.extend_from_slice(&a[bt_end..data_start]);
    let mut moved = Vec::new();
    for &j in order {
        let start = data_start + p.block_offsets()[j] as usize;
        let len: u32 = p.entries()[j].stored_len.iter().sum();
        out.extend_from_slice(&a[start..start + len as usize]);
        moved.extend_from_slice(&data[j * 4096..(j + 1) * 4096]);
    }
    put_u64(&mut out, H_CONTENT, xxh3_64(&moved));
    common::reseal_v3(&mut out);
    out
}

/// Every CPU read path fails a moved block with a checksum error naming it: the whole-file
/// decode (one of the moved blocks), an extract of one block's range, and an extract of a
/// range that covers it among others.
fn assert_moved_blocks_fail(b: &[u8], moved: &[u32], what: &str) {
    let a = Archive::parse(b).expect("a moved block keeps the container valid");
    match decompress(&a) {
        Err(DecodeError::Block {
            block,
            status: Status::Checksum,
            ..
        }) => assert!(
            moved.contains(&block),
            "{what}: decompress named block {block}"
        ),
        other => panic!("{what}: decompress gave {other:?}"),
    }
    for &m in moved {
        let start = m as u64 * 4096;
        for (off, len) in [(start, 4096u64), (start + 100, 10), (0, 6 * 4096)] {
            match extract(&a, off, len) {
                Err(DecodeError::Block {
                    block,
                    status: Status::Checksum,
                    ..
                }) => {
                    if len < 6 * 4096 {
                        assert_eq!(block, m, "{what}: extract {off}+{len}");
                    } else {
                        assert!(
                            moved.contains(&block),
                            "{what}: extract {off}+{len}: {block}"
                        );
                    }
                }
                other => panic!("{what}: extract {off}+{len} gave {other:?}"),
            }
        }
        let msg = extract(&a, start, 4096).unwrap_err().to_string();
        assert!(
            msg.contains(&format!("block {m} ")) && msg.contains("checksum"),
            "{what}: {msg}"
        );
    }
    // the blocks that did not move still extract
    for i in (0..6u32).filter(|i| !moved.contains(i)) {
        assert!(
            extract(&a, i as u64 * 4096, 4096).is_ok(),
            "{what}: block {i}"
        );
    }
}

#[test]
fn swapped_and_duplicated_blocks_fail_their_position_bound_checksums() {
    for cross in [false, true] {
        let (data, a) = movable_archive(cross);
        // the identity order rebuilds the same archive (the helper moves nothing else)
        assert_eq!(with_blocks_moved(&a, &data, &[0, 1, 2, 3, 4, 5]), a);
        let swapped = with_blocks_moved(&a, &data, &[0, 1, 4, 3, 2, 5]);
        assert_moved_blocks_fail(&swapped, &[2, 4], &format!("swap 2, 4 (cross {cross})"));
        let duplicated = with_blocks_moved(&a, &data, &[0, 1, 2, 1, 4, 5]);
        assert_moved_blocks_fail(&duplicated, &[3], &format!("block 1 at 3 (cross {cross})"));
        let adjacent = with_blocks_moved(&a, &data, &[1, 0, 2, 3, 4, 5]);
        assert_moved_blocks_fail(&adjacent, &[0, 1], &format!("swap 0, 1 (cross {cross})"));
    }
}

// ---------------------------------------------------------------------------------------
// extension area (FORMAT.md §3.4)
// ---------------------------------------------------------------------------------------

/// `a` with `area` as its extension area, the meta checksum recomputed.
fn with_area(a: &[u8], area: &[u8]) -> Vec<u8> {
    let mut b = a.to_vec();
    b.extend_from_slice(area);
    common::reseal_v3(&mut b);
    b
}

/// One record's bytes as FORMAT.md §3.4 lays them out: type, flags, length, payload.
fn record(kind: u16, flags: u16, payload: &[u8]) -> Vec<u8> {
    let mut r = kind.to_le_bytes().to_vec();
    r.extend_from_slice(&flags.to_le_bytes());
    r.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    r.extend_from_slice(payload);
    r
}

fn extension_err(b: &[u8]) -> (u64, String) {
    match parse_err(b) {
        FormatError::Extension { offset, why } => (offset, why),
        e => panic!("expected an extension error, got {e:?}"),
    }
}

#[test]
fn unknown_extension_records_are_skipped() {
    let (data, a) = small_archive_v3();
    // the FASTA index type (assigned, not interpreted here) and an unassigned type, neither
    // must-understand, and an empty payload
    let mut area = record(1, 0, b"index bytes");
    area.extend(record(0x4242, 0, b""));
    area.extend(record(0xFFFF, 0, &[7; 300]));
    let b = with_area(&a, &area);
    decodes_to(&b, &data);
    let p = Archive::parse(&b).unwrap();
    let got: Vec<(u16, u16, usize)> = p
        .extensions()
        .map(|e| (e.kind, e.flags, e.payload.len()))
        .collect();
    assert_eq!(got, [(1, 0, 11), (0x4242, 0, 0), (0xFFFF, 0, 300)]);
    assert_eq!(p.extensions().next().unwrap().payload, b"index bytes");
    assert!(!p.extensions().any(|e| e.must_understand()));
    // the library writes the same bytes
    let records: Vec<aceapex::format::Extension> = p.extensions().collect();
    assert_eq!(aceapex::format::with_extensions(&a, &records).unwrap(), b);
    // and appends after the records already there
    let more = aceapex::format::with_extensions(&b, &records[..1]).unwrap();
    assert_eq!(Archive::parse(&more).unwrap().extensions().count(), 4);
    assert_eq!(&more[b.len()..], &area[..8 + 11]);
}

#[test]
fn extension_records_that_break_a_rule_are_refused() {
    let (_, a) = small_archive_v3();
    // must-understand, of a type this build does not know: refused naming the type
    for kind in [1u16, 2, 0x4242] {
        let b = with_area(&a, &record(kind, 1, b"x"));
        let (offset, why) = extension_err(&b);
        assert_eq!(offset, 0);
        assert!(
            why.contains(&format!("type {kind}")) && why.contains("must-understand"),
            "{why}"
        );
    }
    // the second record refused: its offset named
    let mut area = record(9, 0, b"abc");
    area.extend(record(10, 1, b""));
    assert_eq!(extension_err(&with_area(&a, &area)).0, 11);
    // type 0 is reserved
    let (_, why) = extension_err(&with_area(&a, &record(0, 0, b"")));
    assert!(why.contains("type 0"), "{why}");
    // reserved flag bits
    for flags in [2u16, 0x8000, 0xFFFE] {
        let (_, why) = extension_err(&with_area(&a, &record(5, flags, b"")));
        assert!(why.contains("reserved flag"), "{flags:#x}: {why}");
    }
    // a payload past the end, and a record header cut short
    let mut r = record(5, 0, b"abcdef");
    r.truncate(r.len() - 1);
    let (_, why) = extension_err(&with_area(&a, &r));
    assert!(why.contains("6-byte payload, 5 bytes are left"), "{why}");
    for cut in 1..8 {
        let (_, why) = extension_err(&with_area(&a, &record(5, 0, b"")[..cut]));
        assert!(why.contains("record header needs 8"), "{cut}: {why}");
    }
    // the area is under the meta checksum: bytes appended without resealing are refused
    let mut b = a.clone();
    b.extend_from_slice(&record(5, 0, b""));
    assert_eq!(parse_err(&b), FormatError::MetaChecksum);
    // the writer refuses what the reader would
    let bad = aceapex::format::Extension {
        kind: 0,
        flags: 0,
        payload: b"",
    };
    assert!(aceapex::format::with_extensions(&a, &[bad]).is_err());
    let bad = aceapex::format::Extension {
        kind: 3,
        flags: 1,
        payload: b"",
    };
    assert!(aceapex::format::with_extensions(&a, &[bad]).is_err());
}
