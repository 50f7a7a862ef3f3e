# Builds the PTX variants of the twenty-first session's rANS experiments from the committed
# dense.rs (the P1 kernels): each a few text substitutions, built with cargo, the PTX copied to
# OUTDIR/NAME.ptx, dense.rs restored. Run from the repository root:
#   python3 docs/gpu-runs/2026-12-02c/variants.py OUTDIR [NAME ...]
# Lesions (decode wrong on purpose; time them with ACEAPEX_BENCH_RANS_ONLY=1):
#   l1 no renormalisation-word load (a constant word), l2 no expansion and no literal stores,
#   l4 = l1 + l2, l6 = l4 + no decode-table load (an entry computed from the state).
# Word-load variants (decode right): nohint (plain ld.global.u8, no L2::256B hint), nc
# (ld.global.nc, the read-only path), u16 (one 16-bit load where the slice's word area is
# 2-aligned). S2 and W2 are the patches run3/s2.diff and run3/w2-on-s2.diff.
import glob, shutil, subprocess, sys

SRC = "device/src/dense.rs"
WORD = "global_word_l2_256(words.add(q))"
LESION_WORD = ("""        let (word_lo, word_hi) = if take {
            unsafe { global_word_l2_256(words.add(q)) }
        } else {""", """        let (word_lo, word_hi) = if take {
            ((q as u16) & 0xFF, 0x80u16)
        } else {""")
LESION_EMIT = ("""            if active {
                lits = emit(sym, i);
            }
            if PACK {
                (pend_lits, pend_i, pending) = (lits, i, true);
            }""", """            if active {
                lits = sym as u32;
            }
            if PACK {
                (pend_lits, pend_i, pending) = (lits, i, false);
            }""")
LESION_TABLE = ("""            e = crate::rans::slot_entry(unsafe { &*t }, x);""",
                """            let _ = t;
            e = (x & 0xFFF).wrapping_mul(0x9E37_79B1) & 0xFFFF_F0FF;""")
LOADS = '''
#[inline(always)]
unsafe fn zz_nohint(p: *const u8) -> (u16, u16) {
    let (lo, hi): (u16, u16);
    unsafe { core::arch::asm!("ld.global.u8 {lo}, [{p}];", "ld.global.u8 {hi}, [{p}+1];", p = in(reg64) p, lo = out(reg16) lo, hi = out(reg16) hi, options(pure, readonly, nostack, preserves_flags)) };
    (lo, hi)
}
#[inline(always)]
unsafe fn zz_nc(p: *const u8) -> (u16, u16) {
    let (lo, hi): (u16, u16);
    unsafe { core::arch::asm!("ld.global.nc.L2::256B.u8 {lo}, [{p}];", "ld.global.nc.L2::256B.u8 {hi}, [{p}+1];", p = in(reg64) p, lo = out(reg16) lo, hi = out(reg16) hi, options(pure, readonly, nostack, preserves_flags)) };
    (lo, hi)
}
#[inline(always)]
unsafe fn zz_u16(p: *const u8, aligned: bool) -> (u16, u16) {
    let (lo, hi): (u16, u16);
    if aligned {
        let v: u16;
        unsafe { core::arch::asm!("ld.global.L2::256B.u16 {v}, [{p}];", p = in(reg64) p, v = out(reg16) v, options(pure, readonly, nostack, preserves_flags)) };
        lo = v & 0xFF; hi = v >> 8;
    } else {
        unsafe { core::arch::asm!("ld.global.L2::256B.u8 {lo}, [{p}];", "ld.global.L2::256B.u8 {hi}, [{p}+1];", p = in(reg64) p, lo = out(reg16) lo, hi = out(reg16) hi, options(pure, readonly, nostack, preserves_flags)) };
    }
    (lo, hi)
}
'''
VARIANTS = {
    "l1": [LESION_WORD],
    "l2": [LESION_EMIT],
    "l4": [LESION_WORD, LESION_EMIT],
    "l6": [LESION_WORD, LESION_EMIT, LESION_TABLE],
    "nohint": [(WORD, "zz_nohint(words.add(q))")],
    "nc": [(WORD, "zz_nc(words.add(q))")],
    "u16": [(WORD, "zz_u16(words.add(q), (words as usize) & 1 == 0)")],
}

def main():
    out = sys.argv[1]
    names = sys.argv[2:] or list(VARIANTS)
    orig = open(SRC).read()
    try:
        for name in names:
            s = orig + (LOADS if name in ("nohint", "nc", "u16") else "")
            for old, new in VARIANTS[name]:
                assert s.count(old) == 1, (name, old[:60])
                s = s.replace(old, new)
            open(SRC, "w").write(s)
            subprocess.run(["cargo", "build", "--release"], check=True)
            ptx = glob.glob("target/release/build/aceapex-*/out/aceapex.ptx") + \
                glob.glob("target/release/build/aceapex/*/out/aceapex.ptx")
            shutil.copy(max(ptx, key=lambda p: __import__("os").path.getmtime(p)), f"{out}/{name}.ptx")
    finally:
        open(SRC, "w").write(orig)

main()
