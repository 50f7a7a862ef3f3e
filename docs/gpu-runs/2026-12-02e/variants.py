# Builds the twenty-third session's PTX lesion of the rANS step from the committed dense.rs
# (commit b42b43b): a few text substitutions, built with cargo, the PTX copied to
# OUTDIR/NAME.ptx, dense.rs restored. Run from the repository root:
#   python3 docs/gpu-runs/2026-12-02e/variants.py OUTDIR [NAME ...]
# d2 (decodes wrong on purpose; time it with ACEAPEX_BENCH_RANS_ONLY=1): every thread of
# `decode_packed` runs two rANS states side by side for half the steps, as a slice of twice
# the lanes (two per thread, format change) would: two table loads, two ballots for the word
# hand-out, two word loads, two symbols' stores per step. What it asks: is the step's time a
# chain (two states per thread nearly free, the stage ~halves on the literal slice) or issue
# (the stage stays)? d2 loads each state's word under its own branch; d2p loads the four bytes
# in one predicated asm block and merges by a select (no branch between the two states'
# chains), and b1p is the committed single-state step so treated (decodes right), its
# control.
import glob, os, shutil, subprocess, sys

SRC = "device/src/dense.rs"
LOOP_START = "    for _ in 0..max_steps {\n        let active = active_slice && i < m;"
LOOP_END = """    if PACK && LATE && pending {
        store_words(pend_lits, pend_i);
    }
    let under = ballot(underflow);"""
DUAL = """    let mut y = x | 0x0100_0000;
    let mut prev2 = 0u32;
    let mut pend2 = 0u32;
    for _ in 0..max_steps.div_ceil(2) {
        let active = active_slice && i < m;
        let (mut need, mut need2) = (false, false);
        let (mut sym, mut sym2) = (0u8, 0u8);
        let (mut lits, mut lits2) = (0u32, 0u32);
        let (mut e, mut e2) = (0u32, 0u32);
        if active {
            let t = if CTX && (prev >> ctx_bit) & 1 != 0 { table1 } else { table };
            let t2 = if CTX && (prev2 >> ctx_bit) & 1 != 0 { table1 } else { table };
            e = crate::rans::slot_entry(unsafe { &*t }, x);
            e2 = crate::rans::slot_entry(unsafe { &*t2 }, y);
        }
        if PACK && LATE && pending {
            store_words(pend_lits, pend_i);
            store_words(pend2, pend_i);
        }
        if active {
            sym = crate::rans::apply_entry(e, &mut x);
            sym2 = crate::rans::apply_entry(e2, &mut y);
            if CTX {
                prev = sym as u32;
                prev2 = sym2 as u32;
            }
            if !LATE {
                lits = emit(sym, i);
                lits2 = emit(sym2, i);
            }
            need = x < RANS_L;
            need2 = y < RANS_L;
        }
        if PACK && !LATE {
            store_words(lits, i);
            store_words(lits2, i);
        }
        let m1 = ballot(need) & mask;
        let m2 = ballot(need2) & mask;
        let p = wp + (m1 & below).count_ones();
        let p2 = wp + m1.count_ones() + (m2 & below).count_ones();
        let take = need && p < nwords;
        let take2 = need2 && p2 < nwords;
        underflow |= (need && !take) || (need2 && !take2);
        let q = if take { 2 * p as usize } else { 0 };
        let q2 = if take2 { 2 * p2 as usize } else { 0 };
        let (word_lo, word_hi) = if take {
            unsafe { global_word_l2_256(words.add(q)) }
        } else {
            (0, 0)
        };
        let (w2_lo, w2_hi) = if take2 {
            unsafe { global_word_l2_256(words.add(q2)) }
        } else {
            (0, 0)
        };
        if LATE {
            if active {
                lits = emit(sym, i);
                lits2 = emit(sym2, i);
            }
            if PACK {
                (pend_lits, pend2, pend_i, pending) = (lits, lits2, i, true);
            }
            if take {
                x = merge_word(x, word_lo, word_hi);
            }
            if take2 {
                y = merge_word(y, w2_lo, w2_hi);
            }
        } else {
            if take {
                x = (x << 16) | (word_hi as u32) << 8 | word_lo as u32;
            }
            if take2 {
                y = (y << 16) | (w2_hi as u32) << 8 | w2_lo as u32;
            }
        }
        wp += m1.count_ones() + m2.count_ones();
        i = i.wrapping_add(lanes);
    }
    x ^= y & 1;
    if PACK && LATE && pending {
        store_words(pend_lits, pend_i);
    }
    let under = ballot(underflow);"""


def dual(s):
    a = s.index(LOOP_START)
    b = s.index(LOOP_END) + len(LOOP_END)
    assert s.count(LOOP_START) == 1 and s.count(LOOP_END) == 1
    return s[:a] + DUAL + s[b:]


PRED = '''
#[inline(always)]
unsafe fn zz_word_pred(take: bool, p: *const u8) -> (u16, u16) {
    let (mut lo, mut hi): (u16, u16) = (0, 0);
    unsafe {
        core::arch::asm!(
            "{{ .reg .pred pp;",
            "setp.ne.u32 pp, {t}, 0;",
            "@pp ld.global.L2::256B.u8 {lo}, [{p}];",
            "@pp ld.global.L2::256B.u8 {hi}, [{p}+1]; }}",
            t = in(reg32) take as u32,
            p = in(reg64) p,
            lo = inout(reg16) lo,
            hi = inout(reg16) hi,
            options(pure, readonly, nostack, preserves_flags)
        )
    };
    (lo, hi)
}
#[inline(always)]
unsafe fn zz_words_pred2(t1: bool, p1: *const u8, t2: bool, p2: *const u8) -> (u16, u16, u16, u16) {
    let (mut a, mut b, mut c, mut d): (u16, u16, u16, u16) = (0, 0, 0, 0);
    unsafe {
        core::arch::asm!(
            "{{ .reg .pred pp, qq;",
            "setp.ne.u32 pp, {t1}, 0;",
            "setp.ne.u32 qq, {t2}, 0;",
            "@pp ld.global.L2::256B.u8 {a}, [{p1}];",
            "@qq ld.global.L2::256B.u8 {c}, [{p2}];",
            "@pp ld.global.L2::256B.u8 {b}, [{p1}+1];",
            "@qq ld.global.L2::256B.u8 {d}, [{p2}+1]; }}",
            t1 = in(reg32) t1 as u32,
            t2 = in(reg32) t2 as u32,
            p1 = in(reg64) p1,
            p2 = in(reg64) p2,
            a = inout(reg16) a,
            b = inout(reg16) b,
            c = inout(reg16) c,
            d = inout(reg16) d,
            options(pure, readonly, nostack, preserves_flags)
        )
    };
    (a, b, c, d)
}
'''

# b1p: the committed single-state step with the word's loads predicated in one asm block and
# the merge unconditional plus a select (no branch around either); decodes right
B1P = [("""        let (word_lo, word_hi) = if take {
            unsafe { global_word_l2_256(words.add(q)) }
        } else {
            (0, 0)
        };""", """        let (word_lo, word_hi) = unsafe { zz_word_pred(take, words.add(q)) };"""),
       ("""            if take {
                x = merge_word(x, word_lo, word_hi);
            }
        } else if take {""", """            let xm = merge_word(x, word_lo, word_hi);
            x = if take { xm } else { x };
        } else if take {""")]
# d2p: d2 with the same treatment of both states' loads (one asm block for the four loads)
D2P = [("""        let (word_lo, word_hi) = if take {
            unsafe { global_word_l2_256(words.add(q)) }
        } else {
            (0, 0)
        };
        let (w2_lo, w2_hi) = if take2 {
            unsafe { global_word_l2_256(words.add(q2)) }
        } else {
            (0, 0)
        };""", """        let (word_lo, word_hi, w2_lo, w2_hi) =
            unsafe { zz_words_pred2(take, words.add(q), take2, words.add(q2)) };"""),
       ("""            if take {
                x = merge_word(x, word_lo, word_hi);
            }
            if take2 {
                y = merge_word(y, w2_lo, w2_hi);
            }""", """            let xm = merge_word(x, word_lo, word_hi);
            let ym = merge_word(y, w2_lo, w2_hi);
            x = if take { xm } else { x };
            y = if take2 { ym } else { y };""")]


def subst(s, pairs):
    for old, new in pairs:
        assert s.count(old) == 1, old[:70]
        s = s.replace(old, new)
    return s + PRED


VARIANTS = {
    "d2": dual,
    "b1p": lambda s: subst(s, B1P),
    "d2p": lambda s: subst(dual(s), D2P),
}


def main():
    out = sys.argv[1]
    names = sys.argv[2:] or list(VARIANTS)
    orig = open(SRC).read()
    try:
        for name in names:
            open(SRC, "w").write(VARIANTS[name](orig))
            subprocess.run(["cargo", "build", "--release"], check=True)
            ptx = glob.glob("target/release/build/aceapex/*/out/aceapex.ptx") + \
                glob.glob("target/release/build/aceapex-*/out/aceapex.ptx")
            shutil.copy(max(ptx, key=os.path.getmtime), f"{out}/{name}.ptx")
    finally:
        open(SRC, "w").write(orig)


main()
