//! Position-bound block checksums (FORMAT.md §6) in every CPU read path: an archive whose
//! blocks 2 and 4 are swapped, or whose block 1 is duplicated over block 3 (entries and
//! slices moved together, content and meta checksums recomputed: tests/moved/), is refused
//! by the whole decode, the streaming decode, `Reader`'s whole decode and ranges, and the
//! command line's `decompress`, `decompress -t` and `extract`, each naming a moved block
//! with a checksum error; the blocks left in place still read. (The GPU paths:
//! `moved_blocks_fail_on_every_gpu_path` in tests/gpu/hostile.rs.)

mod common;
mod moved;

use aceapex::{DecodeError, Error, Reader, Status};
use moved::{cases, names_block, BLOCK, BLOCKS};

/// The block and status of a block error; panics on anything else.
fn block_error(r: Result<impl Sized, Error>, what: &str) -> u32 {
    match r {
        Err(Error::Decode(DecodeError::Block { block, status, .. })) => {
            assert_eq!(status, Status::Checksum, "{what}: block {block}");
            block
        }
        Err(e) => panic!("{what}: {e}"),
        Ok(_) => panic!("{what}: accepted"),
    }
}

#[test]
fn moved_blocks_fail_in_every_cpu_read_path() {
    for cross in [false, true] {
        let (data, cases) = cases(cross);
        for c in &cases {
            let what = &c.what;
            let any = |b: u32, path: &str| {
                assert!(c.moved.contains(&b), "{what}: {path} named block {b}");
            };
            // the whole decode
            any(
                block_error(aceapex::decompress(&c.archive), what),
                "decompress",
            );
            // the streaming decode (what the command line's CPU decompress uses)
            let mut sink = Vec::new();
            let r = aceapex::decompress_to(&c.archive[..], &mut sink);
            any(block_error(r, what), "decompress_to");
            // Reader: whole, every range over a moved block, the blocks left in place
            let reader = Reader::new(&c.archive).unwrap();
            any(block_error(reader.decompress(), what), "Reader::decompress");
            let mut all = vec![0u8; data.len()];
            any(
                block_error(reader.read_range(0, &mut all), what),
                "read_range of everything",
            );
            for &m in &c.moved {
                let start = m as u64 * BLOCK as u64;
                for (off, len) in [(start, BLOCK), (start + 100, 10), (start + 4000, 200)] {
                    let mut buf = vec![0u8; len];
                    let got = block_error(reader.read_range(off, &mut buf), what);
                    assert_eq!(got, m, "{what}: read_range({off}, {len})");
                }
            }
            for i in (0..BLOCKS as u32).filter(|i| !c.moved.contains(i)) {
                let mut buf = vec![0u8; BLOCK];
                reader
                    .read_range(i as u64 * BLOCK as u64, &mut buf)
                    .unwrap_or_else(|e| panic!("{what}: block {i} in place: {e}"));
                let at = i as usize * BLOCK;
                assert!(buf == data[at..at + BLOCK], "{what}: block {i} in place");
            }
        }
    }
}

/// The command line: `decompress` (streaming, CPU) to a file and with `-t`, and `extract` of
/// each moved block's range exit 1 naming a moved block and its checksum, and leave no
/// output file; `extract` of a block left in place gives its bytes.
#[cfg(feature = "cli")]
#[test]
fn moved_blocks_fail_on_the_command_line() {
    use common::cli::{fails, ok, run, tmp};
    for cross in [false, true] {
        let (data, cases) = cases(cross);
        for c in &cases {
            let what = &c.what;
            let t = tmp();
            let d = t.path();
            std::fs::write(d.join("m.acx"), &c.archive).unwrap();
            let names_moved = |msg: &str, path: &str| {
                assert!(
                    c.moved.iter().any(|&b| names_block(msg, b)) && msg.contains("checksum"),
                    "{what}: {path}: {msg}"
                );
            };
            let o = run(d, &["decompress", "--device", "cpu", "m.acx", "-o", "out"]);
            names_moved(&fails(&o), "decompress");
            assert!(
                !d.join("out").exists(),
                "{what}: decompress left its output"
            );
            let o = run(d, &["decompress", "--device", "cpu", "-t", "m.acx"]);
            names_moved(&fails(&o), "decompress -t");
            for &m in &c.moved {
                let range = format!("{}:{}", m as usize * BLOCK + 10, 100);
                let o = run(d, &["extract", "m.acx", "--range", &range, "-o", "x"]);
                let msg = fails(&o);
                assert!(
                    names_block(&msg, m) && msg.contains("checksum"),
                    "{what}: extract {range}: {msg}"
                );
                assert!(!d.join("x").exists(), "{what}: extract left its output");
            }
            let kept = (0..BLOCKS)
                .find(|&i| !c.moved.contains(&(i as u32)))
                .unwrap();
            let range = format!("{}:{}", kept * BLOCK, BLOCK);
            let o = run(d, &["extract", "m.acx", "--range", &range, "-c"]);
            ok(&o);
            assert!(
                o.stdout == data[kept * BLOCK..(kept + 1) * BLOCK],
                "{what}: extract of block {kept} in place"
            );
        }
    }
}
