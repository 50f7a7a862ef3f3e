//! XXH3-64 with seed 0 and the default secret (FORMAT.md §6), the block checksum, in the
//! pieces a warp needs to hash a block on the GPU (`seek.rs`: the random-access decoder
//! verifies every block it decodes on the device) and as one sequential function, which the
//! host tests hold against the `xxhash-rust` crate for every input length class.
//!
//! The host's checksum pass (`host/decode/checksum.rs`, with AVX2 sums) uses the same
//! constants and round functions.
//!
//! Inputs longer than [`MID_SIZE_MAX`] bytes are hashed in 1,024-byte rounds of 16 stripes of
//! 64 bytes: within a round the eight 64-bit accumulators only add (wrapping), so the
//! stripes of a round can be summed in any order and by several threads; the rounds are
//! joined by [`scramble`], which is sequential but cheap (eight words per round).

/// The default secret of XXH3 (192 bytes), as the XXH3 specification gives it.
pub const SECRET: [u8; 192] = [
    0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c,
    0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f,
    0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21,
    0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c,
    0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3,
    0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8,
    0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d,
    0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64,
    0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb,
    0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e,
    0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce,
    0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e,
];

const PRIME32_1: u64 = 0x9E37_79B1;
const PRIME32_2: u64 = 0x85EB_CA77;
const PRIME32_3: u64 = 0xC2B2_AE3D;
const PRIME64_1: u64 = 0x9E37_79B1_85EB_CA87;
const PRIME64_2: u64 = 0xC2B2_AE3D_27D4_EB4F;
const PRIME64_3: u64 = 0x1656_67B1_9E37_79F9;
const PRIME64_4: u64 = 0x85EB_CA77_C2B2_AE63;
const PRIME64_5: u64 = 0x27D4_EB2F_1656_67C5;
const PRIME_MX1: u64 = 0x1656_6791_9E37_79F9;
const PRIME_MX2: u64 = 0x9FB2_1C65_1E98_DF25;

/// Inputs up to this length take the short paths; longer ones the striped loop.
pub const MID_SIZE_MAX: usize = 240;
/// Bytes of one stripe.
pub const STRIPE: usize = 64;
/// Stripes in one round (between two scrambles) with the default secret.
pub const STRIPES_PER_ROUND: usize = (SECRET.len() - STRIPE) / 8;
/// Bytes of one round.
pub const ROUND: usize = STRIPE * STRIPES_PER_ROUND;
/// The accumulators' initial values.
pub const INIT_ACC: [u64; 8] = [
    PRIME32_3, PRIME64_1, PRIME64_2, PRIME64_3, PRIME64_4, PRIME32_2, PRIME64_5, PRIME32_1,
];
/// Where the secret of the last stripe starts.
pub const LAST_STRIPE_SECRET: usize = SECRET.len() - STRIPE - 7;
/// Where the secret of the scramble starts.
pub const SCRAMBLE_SECRET: usize = SECRET.len() - STRIPE;

/// Word `i` (8 bytes, little-endian) of the secret from byte `at`.
#[inline(always)]
pub const fn secret64(at: usize) -> u64 {
    let s = &SECRET;
    u64::from_le_bytes([
        s[at],
        s[at + 1],
        s[at + 2],
        s[at + 3],
        s[at + 4],
        s[at + 5],
        s[at + 6],
        s[at + 7],
    ])
}

#[inline(always)]
const fn secret32(at: usize) -> u32 {
    let s = &SECRET;
    u32::from_le_bytes([s[at], s[at + 1], s[at + 2], s[at + 3]])
}

#[inline(always)]
fn read64(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

#[inline(always)]
fn read32(b: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(w)
}

/// The 128-bit product of `a` and `b`, its halves XORed.
#[inline(always)]
pub fn mul128_fold64(a: u64, b: u64) -> u64 {
    let p = a as u128 * b as u128;
    p as u64 ^ (p >> 64) as u64
}

#[inline(always)]
fn avalanche_xxh64(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(PRIME64_2);
    h ^= h >> 29;
    h = h.wrapping_mul(PRIME64_3);
    h ^ (h >> 32)
}

/// The final mix of the 9-byte-and-longer paths.
#[inline(always)]
pub fn avalanche(mut h: u64) -> u64 {
    h ^= h >> 37;
    h = h.wrapping_mul(PRIME_MX1);
    h ^ (h >> 32)
}

#[inline(always)]
fn rrmxmx(mut h: u64, len: u64) -> u64 {
    h ^= h.rotate_left(49) ^ h.rotate_left(24);
    h = h.wrapping_mul(PRIME_MX2);
    h ^= (h >> 35).wrapping_add(len);
    h = h.wrapping_mul(PRIME_MX2);
    h ^ (h >> 28)
}

#[inline(always)]
fn mix16(b: &[u8], at: usize, sec: usize) -> u64 {
    mul128_fold64(
        read64(b, at) ^ secret64(sec),
        read64(b, at + 8) ^ secret64(sec + 8),
    )
}

/// The XXH3-64 of an input of at most [`MID_SIZE_MAX`] bytes.
pub fn hash_short(b: &[u8]) -> u64 {
    let len = b.len();
    match len {
        0 => avalanche_xxh64(secret64(56) ^ secret64(64)),
        1..=3 => {
            let combined = (b[0] as u32) << 16
                | (b[len >> 1] as u32) << 24
                | b[len - 1] as u32
                | (len as u32) << 8;
            let bitflip = (secret32(0) ^ secret32(4)) as u64;
            avalanche_xxh64(combined as u64 ^ bitflip)
        }
        4..=8 => {
            let input1 = read32(b, 0) as u64;
            let input2 = read32(b, len - 4) as u64;
            let bitflip = secret64(8) ^ secret64(16);
            rrmxmx((input2 | input1 << 32) ^ bitflip, len as u64)
        }
        9..=16 => {
            let lo = read64(b, 0) ^ (secret64(24) ^ secret64(32));
            let hi = read64(b, len - 8) ^ (secret64(40) ^ secret64(48));
            let acc = (len as u64)
                .wrapping_add(lo.swap_bytes())
                .wrapping_add(hi)
                .wrapping_add(mul128_fold64(lo, hi));
            avalanche(acc)
        }
        17..=128 => {
            let mut acc = (len as u64).wrapping_mul(PRIME64_1);
            if len > 32 {
                if len > 64 {
                    if len > 96 {
                        acc = acc.wrapping_add(mix16(b, 48, 96));
                        acc = acc.wrapping_add(mix16(b, len - 64, 112));
                    }
                    acc = acc.wrapping_add(mix16(b, 32, 64));
                    acc = acc.wrapping_add(mix16(b, len - 48, 80));
                }
                acc = acc.wrapping_add(mix16(b, 16, 32));
                acc = acc.wrapping_add(mix16(b, len - 32, 48));
            }
            acc = acc.wrapping_add(mix16(b, 0, 0));
            acc = acc.wrapping_add(mix16(b, len - 16, 16));
            avalanche(acc)
        }
        _ => {
            let mut acc = (len as u64).wrapping_mul(PRIME64_1);
            for i in 0..8 {
                acc = acc.wrapping_add(mix16(b, 16 * i, 16 * i));
            }
            acc = avalanche(acc);
            for i in 8..len / 16 {
                acc = acc.wrapping_add(mix16(b, 16 * i, 16 * (i - 8) + 3));
            }
            acc = acc.wrapping_add(mix16(b, len - 16, 136 - 17));
            avalanche(acc)
        }
    }
}

/// One stripe's contribution for accumulator lane `i` (0..8): `data` is the stripe's word
/// `i`, `key` the secret's word at the stripe's secret offset plus `8 * i`. Returns
/// `(product, data)`: the product adds to accumulator `i`, the data word to accumulator
/// `i ^ 1`.
#[inline(always)]
pub fn stripe_lane(data: u64, key: u64) -> (u64, u64) {
    let k = data ^ key;
    ((k & 0xFFFF_FFFF).wrapping_mul(k >> 32), data)
}

/// The scramble between rounds, for accumulator lane `i`.
#[inline(always)]
pub fn scramble_lane(acc: u64, i: usize) -> u64 {
    let mut a = acc;
    a ^= a >> 47;
    a ^= secret64(SCRAMBLE_SECRET + 8 * i);
    a.wrapping_mul(PRIME32_1)
}

/// The hash of an input of `len` > [`MID_SIZE_MAX`] bytes from its final accumulators.
#[inline(always)]
pub fn merge_accs(acc: &[u64; 8], len: u64) -> u64 {
    let mut r = len.wrapping_mul(PRIME64_1);
    for i in 0..4 {
        r = r.wrapping_add(mul128_fold64(
            acc[2 * i] ^ secret64(11 + 16 * i),
            acc[2 * i + 1] ^ secret64(11 + 16 * i + 8),
        ));
    }
    avalanche(r)
}

/// Adds the stripe at `b[at..at + 64]` with the secret from `sec` to `acc`.
#[inline(always)]
fn accumulate_stripe(acc: &mut [u64; 8], b: &[u8], at: usize, sec: usize) {
    for i in 0..8 {
        let (p, d) = stripe_lane(read64(b, at + 8 * i), secret64(sec + 8 * i));
        acc[i] = acc[i].wrapping_add(p);
        acc[i ^ 1] = acc[i ^ 1].wrapping_add(d);
    }
}

/// Stripes of the last, partial round of an input of `len` > [`MID_SIZE_MAX`] bytes (the
/// final stripe, at `len - 64`, comes after them with the secret from
/// [`LAST_STRIPE_SECRET`]), and the count of full rounds before it.
#[inline(always)]
pub fn round_split(len: usize) -> (usize, usize) {
    let rounds = (len - 1) / ROUND;
    (rounds, (len - 1 - rounds * ROUND) / STRIPE)
}

/// XXH3-64 (seed 0, default secret) of `b`, sequentially.
pub fn xxh3_64(b: &[u8]) -> u64 {
    let len = b.len();
    if len <= MID_SIZE_MAX {
        return hash_short(b);
    }
    let mut acc = INIT_ACC;
    let (rounds, tail_stripes) = round_split(len);
    for r in 0..rounds {
        for s in 0..STRIPES_PER_ROUND {
            accumulate_stripe(&mut acc, b, r * ROUND + s * STRIPE, 8 * s);
        }
        for (i, a) in acc.iter_mut().enumerate() {
            *a = scramble_lane(*a, i);
        }
    }
    for s in 0..tail_stripes {
        accumulate_stripe(&mut acc, b, rounds * ROUND + s * STRIPE, 8 * s);
    }
    accumulate_stripe(&mut acc, b, len - STRIPE, LAST_STRIPE_SECRET);
    merge_accs(&acc, len as u64)
}
