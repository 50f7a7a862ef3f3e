//! Property test: any input, block size, level and parameter set (minimum match 4 and up,
//! so match bases 4-6) round-trips through the reference decoder, and the reported
//! statistics hold.

use aceapex::encode::lz::{parse_segment, ParseParams};
use aceapex_device::lz::{decode_block, BlockFrame, Command, Parser};
use proptest::prelude::*;

/// Inputs with plenty of repeats: random bytes from a small alphabet plus copied stretches.
fn input() -> impl Strategy<Value = Vec<u8>> {
    (
        prop::collection::vec((0u8..8, any::<u16>(), 0u16..300), 0..120),
        1u8..=255,
    )
        .prop_map(|(ops, alpha)| {
            let mut v: Vec<u8> = Vec::new();
            for (kind, a, b) in ops {
                if kind < 5 || v.is_empty() {
                    for k in 0..(b % 40 + 1) {
                        v.push(((a as u32 + k as u32 * 7919) % alpha as u32) as u8);
                    }
                } else {
                    let start = a as usize % v.len();
                    for k in 0..b as usize {
                        let x = v[start + k % (v.len() - start)];
                        v.push(x);
                    }
                }
            }
            v
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn roundtrip(
        data in input(),
        bs_pow in 8u32..13,
        level in 1u32..=9,
        min_match in 4u32..12,
        window_kind in 0u8..4,
        rep in any::<bool>(),
        cap in 0u32..4,
        offset in 0usize..50,
        raw in any::<bool>(),
    ) {
        let bs = 1usize << bs_pow;
        let window = match window_kind { 0 => bs as u32, 1 => (bs / 2) as u32 + 1, 2 => 3 * bs as u32, _ => u32::MAX };
        let p = ParseParams {
            level,
            min_match,
            window,
            repeat_codes: rep,
            depth_cap: cap,
            raw_match_streams: raw,
        };
        let start = offset.min(data.len());
        let blocks = parse_segment(&data, start..data.len(), bs, &p);
        let n = data.len() - start;
        prop_assert_eq!(blocks.len(), n.div_ceil(bs));
        let mut out = vec![0u8; n];
        let mut vals = vec![0u32; n];
        for (bi, b) in blocks.iter().enumerate() {
            let s = bi * bs;
            let e = (s + bs).min(n);
            prop_assert!(b.lowest_source >= start);
            let low = b.lowest_source - start;
            if window as usize <= bs {
                prop_assert!(low >= s);
            }
            // FORMAT.md §2: the base is the minimum match, at most 6
            let base = min_match.min(6);
            let frame = BlockFrame { dst_start: s, dst_end: e, src_floor: low / bs * bs, window, match_base: base };
            prop_assert!(decode_block(b.streams(), &mut out, &frame).is_ok());
            prop_assert_eq!(&out[s..e], &data[start + s..start + e]);
            let mut parser = Parser::new(b.streams(), base);
            let mut cur = s;
            let mut maxl = 0;
            while let Some(cmd) = parser.next_command().unwrap() {
                match cmd {
                    Command::Literals(k) => {
                        vals[cur..cur + k as usize].fill(0);
                        cur += k as usize;
                    }
                    Command::Match { dist, len } => {
                        prop_assert!(len >= min_match);
                        prop_assert!(dist <= window);
                        if !rep {
                            prop_assert!(parser.history.0[0] == dist);
                        }
                        let (d, l) = (dist as usize, len as usize);
                        let lvl = vals[cur - d..cur - d + l.min(d)].iter().copied().max().unwrap();
                        if cap > 0 {
                            prop_assert!(lvl < cap);
                        }
                        vals[cur..cur + l].fill(lvl + 1);
                        maxl = maxl.max(lvl);
                        cur += l;
                    }
                    Command::Reset => {}
                }
            }
            prop_assert_eq!(maxl, b.max_depth);
        }
    }
}
