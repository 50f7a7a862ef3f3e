//! Planning a GPU random-access request (`gpu::seek::plan`) on the CPU alone: the time for
//! one tile, 1,000 tiles and 100,000 tiles, and 100,000 8 KiB windows, at random positions of
//! an archive of BLOCKS 16 KiB blocks (default 3,276,800: a 53.7 GB original), medians of 41,
//! each into a new plan and into one plan reused (`plan_into`). No GPU needed.
//!
//!     cargo run --release --example seek_plan [BLOCKS]

use aceapex::gpu::seek::{plan, plan_into, Plan, SeekChunks, SEEK_LONE_BLOCKS};

/// Plans timed of each request, each way.
const REPS: usize = 41;

/// The median of `v`.
fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map_or(3_276_800, |s| s.parse().expect("BLOCKS: a block count"));
    const BS: u64 = 16 << 10;
    let own = vec![false; n];
    let size = n as u64 * BS;
    let chunks = SeekChunks {
        group_blocks: 64,
        blocks: 8,
        lone_blocks: SEEK_LONE_BLOCKS,
    };
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    // aligned tiles (a direct request), then 8 KiB windows at any byte (slots and a gather)
    for (k, window) in [(1usize, 0), (1_000, 0), (100_000, 0), (100_000, 8192)] {
        let ranges: Vec<(u64, u64)> = (0..k)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                match window {
                    0 => ((x % n as u64) * BS, BS),
                    w => (x % (size - w), w),
                }
            })
            .collect();
        // a new plan each time, and one plan reused (its buffers kept: `plan_into`)
        let (mut fresh, mut reused) = (Vec::new(), Vec::new());
        let mut kept = Plan::default();
        for _ in 0..REPS {
            let t = std::time::Instant::now();
            let p = plan(&ranges, BS as u32, size, &own, chunks).expect("ranges inside");
            std::hint::black_box(&p);
            fresh.push(t.elapsed().as_secs_f64() * 1e6);
            let t = std::time::Instant::now();
            plan_into(&mut kept, &ranges, BS as u32, size, &own, chunks).expect("ranges inside");
            std::hint::black_box(&kept);
            reused.push(t.elapsed().as_secs_f64() * 1e6);
        }
        let what = match window {
            0 => "aligned 16 KiB tiles".to_string(),
            w => format!("{} KiB windows", w >> 10),
        };
        println!(
            "{n} blocks, {k} {what}: plan {:.1} us, into a reused plan {:.1} us (medians)",
            median(&mut fresh),
            median(&mut reused)
        );
    }
}
