//! XXH3-64 (xxHash 0.8, seed 0, default secret: FORMAT.md §6) for the decoder's checksums,
//! split so that one pass over the output serves the block checksums and the content checksum.
//!
//! For inputs over 240 bytes XXH3 walks 1 KiB pieces ("KiBs" here) of 16 stripes of 64 bytes;
//! each stripe only *adds* to the eight accumulators (its data lanes, and the 32x32-bit
//! products of data ^ secret), with secret offsets 0, 8, .., 120 that depend only on the
//! stripe's place in its KiB; after a KiB the accumulators are scrambled. So the additions of a
//! whole KiB, [`KibSums`], do not depend on the state they are added to and serve every hash
//! whose KiBs start at the same byte: a block's hash and the whole content's hash, since block
//! sizes are powers of two of at least 4 KiB (FORMAT.md §2). [`kib_sums`] computes them (AVX2
//! when the CPU has it), [`State`] absorbs them in order and finishes a hash by reading only
//! the input's tail (the last, partial or not, KiB and the final stripe, at most 1 KiB + 64
//! bytes). Inputs of at most 240 bytes go to `xxhash_rust` (they have no KiB structure).
//!
//! Tested against `xxhash_rust::xxh3::xxh3_64` on every length up to a few KiB and on large
//! random inputs.

use crate::device::xxh3::{self, SECRET, STRIPE};

const SECRET_LEN: usize = SECRET.len();
/// Bytes per XXH3 block with the default secret: 16 stripes of 64 bytes.
pub const KIB: usize = xxh3::ROUND;
const STRIPES_PER_KIB: usize = xxh3::STRIPES_PER_ROUND;
const _: () = assert!(STRIPES_PER_KIB * STRIPE == KIB && SECRET_LEN == 192);
/// Secret offset of the final stripe.
const LAST_STRIPE_AT: usize = xxh3::LAST_STRIPE_SECRET;
/// Longest input of XXH3's short and mid-size paths.
const MID_SIZE_MAX: usize = xxh3::MID_SIZE_MAX;

/// What one KiB adds to the eight accumulators before the scramble.
pub type KibSums = [u64; 8];

#[inline(always)]
fn word(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// Adds stripe `stripe` (64 bytes) with the secret at `secret_at` to `acc`.
#[inline(always)]
fn add_stripe(acc: &mut [u64; 8], stripe: &[u8; STRIPE], secret_at: usize) {
    for i in 0..8 {
        let v = word(stripe, 8 * i);
        let k = v ^ word(&SECRET, secret_at + 8 * i);
        acc[i ^ 1] = acc[i ^ 1].wrapping_add(v);
        acc[i] = acc[i].wrapping_add((k & 0xFFFF_FFFF) * (k >> 32));
    }
}

fn kib_sums_scalar(data: &[u8], out: &mut [KibSums]) {
    for (o, kib) in out.iter_mut().zip(data.as_chunks::<KIB>().0) {
        let mut acc = [0u64; 8];
        for (s, stripe) in kib.as_chunks::<STRIPE>().0.iter().enumerate() {
            add_stripe(&mut acc, stripe, 8 * s);
        }
        *o = acc;
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{KibSums, KIB, SECRET, STRIPE, STRIPES_PER_KIB};
    use std::arch::x86_64::*;

    /// [`super::kib_sums_scalar`] with two 4-lane vectors per stripe.
    ///
    /// # Safety
    /// The CPU must support AVX2, and `data.len() >= out.len() * KIB`.
    #[target_feature(enable = "avx2")]
    pub unsafe fn kib_sums(data: &[u8], out: &mut [KibSums]) {
        debug_assert!(data.len() >= out.len() * KIB);
        // SAFETY: AVX2 is enabled (caller); loads read data[k * KIB .. (k + 1) * KIB] for
        // k < out.len(), inside `data` (caller), and SECRET[8 s .. 8 s + 64] for s < 16, inside
        // its 192 bytes; stores write the 64 bytes of out[k]. All accesses are unaligned ones.
        unsafe {
            let sec = SECRET.as_ptr();
            for (k, o) in out.iter_mut().enumerate() {
                let p = data.as_ptr().add(k * KIB);
                let mut a0 = _mm256_setzero_si256();
                let mut a1 = _mm256_setzero_si256();
                for s in 0..STRIPES_PER_KIB {
                    let d0 = _mm256_loadu_si256(p.add(s * STRIPE).cast());
                    let d1 = _mm256_loadu_si256(p.add(s * STRIPE + 32).cast());
                    let k0 = _mm256_xor_si256(d0, _mm256_loadu_si256(sec.add(8 * s).cast()));
                    let k1 = _mm256_xor_si256(d1, _mm256_loadu_si256(sec.add(8 * s + 32).cast()));
                    // low 32 bits times high 32 bits of each 64-bit lane
                    let m0 = _mm256_mul_epu32(k0, _mm256_srli_epi64::<32>(k0));
                    let m1 = _mm256_mul_epu32(k1, _mm256_srli_epi64::<32>(k1));
                    // lane i of the data goes to accumulator i ^ 1: swap 64-bit pairs
                    let s0 = _mm256_shuffle_epi32::<0b0100_1110>(d0);
                    let s1 = _mm256_shuffle_epi32::<0b0100_1110>(d1);
                    a0 = _mm256_add_epi64(a0, _mm256_add_epi64(m0, s0));
                    a1 = _mm256_add_epi64(a1, _mm256_add_epi64(m1, s1));
                }
                let q = o.as_mut_ptr();
                _mm256_storeu_si256(q.cast(), a0);
                _mm256_storeu_si256(q.add(4).cast(), a1);
            }
        }
    }
}

/// Writes into `out[k]` the sums of KiB `k` of `data`, for every `k < out.len()`.
///
/// Panics if `data` is shorter than `out.len()` KiBs.
pub fn kib_sums(data: &[u8], out: &mut [KibSums]) {
    assert!(
        data.len() / KIB >= out.len(),
        "data shorter than the KiBs asked for"
    );
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: AVX2 checked just above; lengths asserted above.
        return unsafe { avx2::kib_sums(data, out) };
    }
    kib_sums_scalar(data, out);
}

/// The accumulators of one long XXH3-64 hash, fed KiB by KiB.
#[derive(Clone, Copy, Debug)]
pub struct State {
    acc: [u64; 8],
    kibs: usize,
}

impl Default for State {
    fn default() -> Self {
        State::new()
    }
}

impl State {
    /// A hash at its first byte.
    pub const fn new() -> State {
        State {
            acc: xxh3::INIT_ACC,
            kibs: 0,
        }
    }

    /// KiBs absorbed so far.
    pub fn kibs(&self) -> usize {
        self.kibs
    }

    /// Adds the sums of the next KiB and scrambles.
    #[inline]
    pub fn absorb(&mut self, sums: &KibSums) {
        for (i, a) in self.acc.iter_mut().enumerate() {
            *a = xxh3::scramble_lane(a.wrapping_add(sums[i]), i);
        }
        self.kibs += 1;
    }

    /// The XXH3-64 of `data`, a string of more than 240 bytes whose first
    /// [`State::kibs_before_tail`]`(data.len())` KiBs, and no more, were absorbed; reads only
    /// the bytes from there on.
    ///
    /// Panics if `data` has at most 240 bytes or a different number of KiBs was absorbed.
    pub fn finish(self, data: &[u8]) -> u64 {
        self.finish_tail(data.len(), &data[data.len().saturating_sub(KIB)..])
    }

    /// [`State::finish`] of an input of `len` bytes given only its last `min(len, 1024)`
    /// bytes, `tail` (a streaming decoder keeps no more of its output).
    ///
    /// Panics as [`State::finish`], or if `tail` is not that long.
    pub fn finish_tail(self, len: usize, tail: &[u8]) -> u64 {
        assert!(len > MID_SIZE_MAX, "short inputs have no KiB structure");
        assert_eq!(tail.len(), len.min(KIB), "the last KiB");
        let nb = State::kibs_before_tail(len);
        assert_eq!(self.kibs, nb, "KiBs absorbed");
        let off = len - tail.len();
        let mut acc = self.acc;
        let last_kib = &tail[nb * KIB - off..];
        // the stripes of the last KiB that end before the last byte, then the final stripe
        let (stripes, _) = last_kib[..len - 1 - nb * KIB].as_chunks::<STRIPE>();
        for (s, stripe) in stripes.iter().enumerate() {
            add_stripe(&mut acc, stripe, 8 * s);
        }
        let last = tail[len - STRIPE - off..].try_into().expect("64 bytes");
        add_stripe(&mut acc, last, LAST_STRIPE_AT);
        xxh3::merge_accs(&acc, len as u64)
    }

    /// How many whole KiBs of an input of `len` (> 240) bytes are absorbed (and scrambled)
    /// before its tail: XXH3 keeps the last KiB, even a whole one, for the final stripe.
    pub fn kibs_before_tail(len: usize) -> usize {
        (len - 1) / KIB
    }
}

/// The XXH3-64 of a whole output of `len` bytes, folded from the per-KiB sums of its windows
/// in order (the decoders hash each output byte once, per block, and fold the same sums into
/// the content checksum; a window's sums are dropped once folded).
pub struct Folder {
    state: State,
    /// KiBs of the output that XXH3 absorbs before its tail (0 for at most 240 bytes).
    content_kibs: usize,
}

impl Folder {
    /// A fold for an output of `len` bytes.
    pub fn new(len: usize) -> Folder {
        Folder {
            state: State::new(),
            content_kibs: if len > MID_SIZE_MAX {
                State::kibs_before_tail(len)
            } else {
                0
            },
        }
    }

    /// Folds `sums`, the sums of KiBs `kib0..` of the output (windows in order, from 0).
    pub fn absorb(&mut self, kib0: usize, sums: &[KibSums]) {
        debug_assert_eq!(kib0.min(self.content_kibs), self.state.kibs());
        let n = self.content_kibs.saturating_sub(kib0).min(sums.len());
        for s in &sums[..n] {
            self.state.absorb(s);
        }
    }

    /// The hash of `data`, the whole output, once every window is folded.
    pub fn finish(self, data: &[u8]) -> u64 {
        self.finish_tail(data.len(), &data[data.len().saturating_sub(KIB)..])
    }

    /// [`Folder::finish`] given only the output's length and its last `min(len, 1024)`
    /// bytes.
    pub fn finish_tail(self, len: usize, tail: &[u8]) -> u64 {
        if len > MID_SIZE_MAX {
            self.state.finish_tail(len, tail)
        } else {
            xxhash_rust::xxh3::xxh3_64(tail)
        }
    }
}

/// XXH3-64 of `data`, where `sums[k]` are the [`kib_sums`] of KiB `k` of `data` for at least
/// every `k <` [`State::kibs_before_tail`]`(data.len())` (unused for inputs of at most 240
/// bytes); reads only the tail of `data`.
pub fn hash_with_sums(data: &[u8], sums: &[KibSums]) -> u64 {
    if data.len() <= MID_SIZE_MAX {
        return xxhash_rust::xxh3::xxh3_64(data);
    }
    let mut st = State::new();
    for s in &sums[..State::kibs_before_tail(data.len())] {
        st.absorb(s);
    }
    st.finish(data)
}

/// XXH3-64 of `data` (same value as `xxhash_rust::xxh3::xxh3_64`), in one pass.
pub fn xxh3_64(data: &[u8]) -> u64 {
    if data.len() <= MID_SIZE_MAX {
        return xxhash_rust::xxh3::xxh3_64(data);
    }
    let nb = State::kibs_before_tail(data.len());
    let mut st = State::new();
    let mut sums = [[0u64; 8]; 16];
    let mut k = 0;
    while k < nb {
        let n = (nb - k).min(sums.len());
        kib_sums(&data[k * KIB..], &mut sums[..n]);
        for s in &sums[..n] {
            st.absorb(s);
        }
        k += n;
    }
    st.finish(data)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::tokens::Rng;

    fn bytes(r: &mut Rng, n: usize) -> Vec<u8> {
        (0..n).map(|_| r.next_u64() as u8).collect()
    }

    #[test]
    fn matches_xxhash_rust_on_every_length() {
        let mut r = Rng::new(0x5851_F42D_4C95_7F2D);
        let data = bytes(&mut r, 5 * KIB + 100);
        for n in 0..data.len() {
            let d = &data[..n];
            assert_eq!(xxh3_64(d), xxhash_rust::xxh3::xxh3_64(d), "length {n}");
        }
    }

    #[test]
    fn scalar_and_simd_sums_agree_and_sums_serve_sub_slices() {
        let mut r = Rng::new(99);
        for _ in 0..20 {
            let kibs = 1 + r.below(70) as usize;
            let extra = r.below(KIB as u64) as usize;
            let data = bytes(&mut r, kibs * KIB + extra);
            let mut a = vec![[0u64; 8]; kibs];
            let mut b = vec![[1u64; 8]; kibs];
            kib_sums(&data, &mut a);
            kib_sums_scalar(&data, &mut b);
            assert_eq!(a, b);
            // one set of sums for the whole and for pieces starting at KiB boundaries
            assert_eq!(hash_with_sums(&data, &a), xxhash_rust::xxh3::xxh3_64(&data));
            let from = r.below(kibs as u64) as usize;
            let to = (from * KIB + r.below((data.len() - from * KIB) as u64 + 1) as usize)
                .min(data.len());
            let piece = &data[from * KIB..to];
            assert_eq!(
                hash_with_sums(piece, &a[from..]),
                xxhash_rust::xxh3::xxh3_64(piece)
            );
        }
        let big = bytes(&mut r, (3 << 20) + 17);
        assert_eq!(xxh3_64(&big), xxhash_rust::xxh3::xxh3_64(&big));
    }
}
