//! The GPU rANS stage's dependency chains of archives: per block the steps of its longest
//! rANS slice (decoded symbols / lanes, rounded up); their maximum, 99th percentile and
//! median, and the mean lanes per block (each lane costs about 3 bytes of archive). One warp
//! decodes one block, so on an archive whose blocks are all in flight at once the stage
//! takes at least the longest chain times the latency of one step; with many warps per SM
//! it is bound by the L1 traffic of the steps instead (PERFORMANCE.md, eighth session).
//! Usage: `cargo run --release --example rans_chains -- ARCHIVE...`
use aceapex::archive::Archive;
use aceapex::device::format::{LANES_RAW, STREAM_COUNT};

fn main() {
    for path in std::env::args().skip(1) {
        let bytes = std::fs::read(&path).expect("reading the archive");
        let a = Archive::parse(&bytes).expect("parsing the archive");
        let rans = |e: &aceapex::device::format::BlockEntry, k: usize| {
            e.lanes[k] != LANES_RAW && e.decoded_len[k] > 0
        };
        let mut chains: Vec<u32> = Vec::new();
        let mut lanes = 0u64;
        for e in &a.entries {
            let ks = (0..STREAM_COUNT).filter(|&k| rans(e, k));
            chains.push(
                ks.clone()
                    .map(|k| e.decoded_len[k].div_ceil(e.lanes[k] as u32))
                    .max()
                    .unwrap_or(0),
            );
            lanes += ks.map(|k| e.lanes[k] as u64).sum::<u64>();
        }
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
    }
}
