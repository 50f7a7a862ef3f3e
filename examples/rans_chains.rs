//! The GPU rANS stage's dependency chains of archives: per block the steps of its warp
//! (`gpu::schedule::rans_block_steps`: its raw slices, copied 128 bytes per step,
//! `RAW_COPY_UNROLL` per lane, then its rANS slices in the kernel's rounds of at most 32
//! lanes (a wide slice, FORMAT.md §5.4, a round of its own that the block's two warps
//! share), each round its slowest slice's `ceil(symbols / lanes)`, packed literals counted
//! in symbols); their maximum, 99th percentile and median, and the mean rANS lanes per
//! block (each lane costs about 3 bytes of archive). One warp (two with wide slices)
//! decodes one block, so on an archive whose blocks are all in flight at once the stage
//! takes at least the longest chain times the latency of one step; with many warps per SM
//! it is bound by the L1 traffic of the steps instead.
//! Also counts the blocks whose streams exceed the dense GPU kernel's caps (`dense_layout`),
//! which that kernel hands to the slow lane-per-block kernel.
//! Usage: `cargo run --release --example rans_chains -- ARCHIVE...`
use aceapex::format::Archive;
use aceapex::gpu::schedule::{rans_block_steps, rans_block_steps_split};

fn main() {
    for path in std::env::args().skip(1) {
        let bytes = std::fs::read(&path).expect("reading the archive");
        let a = Archive::parse(&bytes).expect("parsing the archive");
        let mut chains: Vec<u32> = (a.entries().iter().enumerate())
            .map(|(b, e)| rans_block_steps(e, a.literal_width(b) as u32))
            .collect();
        let lanes: u64 = a
            .entries()
            .iter()
            .flat_map(|e| e.lanes)
            .filter(|&l| l != LANES_RAW)
            .map(u64::from)
            .sum();
        chains.sort_unstable();
        let n = chains.len();
        let pct = |p: f64| {
            chains
                .get(((n.max(1) - 1) as f64 * p) as usize)
                .copied()
                .unwrap_or(0)
        };
        println!(
            "{path}: {n} blocks; longest rANS chain per block (steps): max {} p99 {} median {}; \
             mean lanes per block {:.1}",
            pct(1.0),
            pct(0.99),
            pct(0.5),
            lanes as f64 / n.max(1) as f64
        );
        // if 2 or 4 warps shared each block's rounds (`rans_block_steps_split`; no kernel does)
        for parts in [2u32, 4] {
            let longest = (a.entries().iter().enumerate())
                .map(|(b, e)| rans_block_steps_split(e, a.literal_width(b) as u32, parts))
                .max()
                .unwrap_or(0);
            println!("  with {parts} warps sharing a block's rounds: longest chain {longest}");
        }
        // the three longest blocks: per slice (decoded bytes, lanes), and the literal width
        let mut by_chain: Vec<usize> = (0..n).collect();
        by_chain.sort_by_key(|&b| {
            std::cmp::Reverse(rans_block_steps(&a.entries()[b], a.literal_width(b) as u32))
        });
        for &b in by_chain.iter().take(3) {
            let e = &a.entries()[b];
            println!(
                "  block {b}: {} steps; (decoded, lanes) per slice {:?}, literal width {}",
                rans_block_steps(e, a.literal_width(b) as u32),
                (0..e.lanes.len())
                    .map(|k| (e.decoded_len[k], e.lanes[k]))
                    .collect::<Vec<_>>(),
                a.literal_width(b)
            );
        }
        // blocks the dense GPU kernel hands to the lane-per-block kernel (its stream caps)
        use aceapex::device::dense_layout::{CMD_CAP, LENB_CAP, LIT_CAP, OFFB_CAP, TAILB_CAP};
        use aceapex::device::format::*;
        let caps = [
            (STREAM_LITERALS, LIT_CAP),
            (STREAM_LENGTHS, LENB_CAP),
            (STREAM_OFFSETS, OFFB_CAP),
            (STREAM_COMMANDS, CMD_CAP),
            (STREAM_OFFSET_TAILS, TAILB_CAP),
        ];
        let over: Vec<String> = caps
            .iter()
            .map(|&(k, cap)| {
                let c = a
                    .entries()
                    .iter()
                    .filter(|e| e.decoded_len[k] as usize > cap)
                    .count();
                format!("{} {c}", STREAM_NAMES[k])
            })
            .collect();
        let any = a
            .entries()
            .iter()
            .filter(|e| caps.iter().any(|&(k, cap)| e.decoded_len[k] as usize > cap))
            .count();
        println!(
            "  blocks over the dense kernel's stream caps: {any} of {n} ({})",
            over.join(", ")
        );
    }
}
