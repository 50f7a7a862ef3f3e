//! Hand-made one-block archives whose lengths stream holds a broken varint (FORMAT.md §4.2:
//! cut off at the stream's end, longer than 5 bytes, or a fifth byte above `0x0F`) and which
//! may break another rule too, each with the status FORMAT.md §4.5 names: the leading reset
//! (step 1) first, then the commands in order, each reading its varints when it runs (step
//! 2: a rule an earlier command breaks wins, and a broken varint no command reads is a
//! leftover, step 3). Shared by the CPU decoder's tests (tests/corrupt/match_layer.rs) and
//! the GPU decoders' (tests/gpu/fail_closed.rs): the dense kernel turns the whole lengths
//! stream into values before its parse, yet must name the same rule.

use crate::common::{build, Blk, Hdr};
use aceapex::device::status::Status;

/// The original of every case: 3 literals, a 15-byte match at distance 3, 2 literals.
pub const ORIGINAL: &[u8] = b"abcabcabcabcabcabcXY";

/// A varint cut off at the stream's end.
const CUT: &[u8] = &[0x83];
/// A varint of six bytes.
const SIX: &[u8] = &[0x80, 0x80, 0x80, 0x80, 0x80, 0x00];
/// A fifth byte above `0x0F`.
const WIDE: &[u8] = &[0xFF, 0xFF, 0xFF, 0xFF, 0x10];

/// A one-block archive of [`ORIGINAL`] (match base 6, FORMAT.md §4.1) with these raw
/// streams.
fn one(lits: &[u8], lens: &[u8], offs: &[u8], cmds: &[u8]) -> Vec<u8> {
    build(
        Hdr::new(0, 4096),
        ORIGINAL,
        &[Blk::raw(lits, lens, offs, cmds)],
        None,
    )
}

/// `lens` with `tail` after it.
fn then(lens: &[u8], tail: &[u8]) -> Vec<u8> {
    [lens, tail].concat()
}

/// The cases: what each is, its archive, and the status FORMAT.md §4.5 gives its block.
pub fn cases() -> Vec<(String, Vec<u8>, Status)> {
    let mut v = Vec::new();
    for (bname, broken) in [("cut off", CUT), ("six bytes", SIX), ("fifth byte", WIDE)] {
        let mut case = |what: &str, archive: Vec<u8>, want: Status| {
            v.push((format!("{what} ({bname})"), archive, want));
        };
        // step 1 before any varint: no leading reset, the commands otherwise good
        case(
            "no leading reset",
            one(b"abcXY", broken, &[3], &[0x02, 0xC9, 0x01]),
            Status::NoLeadingReset,
        );
        // no command reads a length: the broken varint's bytes are left over (step 3)
        case(
            "no command reads it",
            one(b"abcXY", broken, &[3], &[0xFF, 0x02, 0xC9, 0x01]),
            Status::Trailing,
        );
        // a good length read (0xFE: 6 + 9 = 15 bytes), the broken one after it unread
        case(
            "read after a good one: never",
            one(
                b"abcXY",
                &then(&[9], broken),
                &[3],
                &[0xFF, 0x02, 0xFE, 0x01],
            ),
            Status::Trailing,
        );
        // the second 0xFE reads it
        case(
            "read after a good one",
            one(
                b"abcXY",
                &then(&[9], broken),
                &[3, 3],
                &[0xFF, 0x02, 0xFE, 0xFE],
            ),
            Status::BadVarint,
        );
        // an escaped repeat (0x8F) reads it at once
        case(
            "read by an escaped repeat",
            one(b"abcXY", broken, &[], &[0xFF, 0x02, 0x8F, 0x01]),
            Status::BadVarint,
        );
        // a literal run of 6 with 5 literals, before the 0xFE that reads it
        case(
            "after literals exhausted",
            one(b"abcXY", broken, &[3], &[0xFF, 0x05, 0xFE, 0x01]),
            Status::LiteralsExhausted,
        );
        // a distance of 4 after 3 bytes (before the block), before the 0xFE that reads it
        case(
            "after a bad distance",
            one(b"abcXY", broken, &[4, 3], &[0xFF, 0x02, 0xC9, 0xFE]),
            Status::BadDistance,
        );
        // 3 + 15 literals + 3 past the 20-byte block, before the 0xFE that reads it
        case(
            "after an output overrun",
            one(
                &[b"abc".as_slice(), &[b'x'; 18]].concat(),
                broken,
                &[3],
                &[0xFF, 0x02, 0x0E, 0x02, 0xFE],
            ),
            Status::OutputOverrun,
        );
    }
    v
}
