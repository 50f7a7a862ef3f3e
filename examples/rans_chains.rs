//! The GPU rANS stage's dependency chains of archives: per block the steps of its warp
//! (`gpu::launch::rans_block_steps`: the longest slice's `ceil(symbols / lanes)`, a raw slice
//! copied 32 bytes per step); their maximum, 99th percentile and median, and the mean rANS
//! lanes per block (each lane costs about 3 bytes of archive). One warp decodes one block,
//! so on an archive whose blocks are all in flight at once the stage takes at least the
//! longest chain times the latency of one step; with many warps per SM it is bound by the
//! L1 traffic of the steps instead (PERFORMANCE.md, eighth session).
//! Usage: `cargo run --release --example rans_chains -- ARCHIVE...`
use aceapex::archive::Archive;
use aceapex::device::format::LANES_RAW;
use aceapex::gpu::launch::rans_block_steps;

fn main() {
    for path in std::env::args().skip(1) {
        let bytes = std::fs::read(&path).expect("reading the archive");
        let a = Archive::parse(&bytes).expect("parsing the archive");
        let mut chains: Vec<u32> = a.entries.iter().map(rans_block_steps).collect();
        let lanes: u64 = a
            .entries
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
    }
}
