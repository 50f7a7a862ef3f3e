#!/usr/bin/env python3
"""Regenerates the FASTA golden files under cases/ with the samtools on PATH.

For each crafted input cases/NAME.fa (or .fq) it writes:
  NAME.fai            the index samtools writes, where samtools indexes the input
  NAME.err            samtools' stderr, where samtools refuses to index it
  NAME.regions        the regions asked (one per line)
  NAME.VARIANT.stdout samtools faidx (fqidx for .fq) per region, one call per region, concatenated
  NAME.VARIANT.stderr the calls' stderr, concatenated
  NAME.VARIANT.status the calls' exit statuses, one a line
VARIANT is 'default' (no option) or 'n7i' (-n 7 -i).
"""
import os, shutil, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "cases")

def inputs():
    c = {}
    c["basic.fa"] = b">chr1 first chromosome\nACGTACGTAC\nGTACGTACGT\nACGTA\n>chr2\tdesc\nNNNNNNNNNN\nACGTNNNNac\nGt\n>chr3\nA\n"
    c["no_final_newline.fa"] = b">a\nACGTACGT\nACGTACGT\nACG\n>b\nTTTTGGGG\nCC"
    c["soft_masked.fa"] = b">Chr1 CHROMOSOME dumped from ADB\nccctaaaccctaaaccctaaACCCTAAACCCTAAAC\nNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNN\nNNNNNNNNacgtacgtacgtACGTACGTRYKMSWBD\nnnnnnHVN\n"
    c["colon_names.fa"] = b">chr1\nACGTACGTAC\nGG\n>chr1:1-5\nTTTTTTTTTT\nCC\n>HLA-DRB1*12:17\nGATTACAGAT\nTACA\n>x:y\nACGT\n>x\nGGGG\n"
    c["one_line.fa"] = b">s1\nACGTACGTACGTACGTACGT\n>s2\nAC\n>s3\nACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGT\n>s4\nG\n"
    c["crlf.fa"] = b">a x y\r\nACGTACGT\r\nACGTACGT\r\nAC\r\n\r\n>b\r\nGGGGCCCC\r\nTT\r\n"
    c["empty_middle.fa"] = b">a\nACGT\n>empty\n>b\nGGCC\nA\n\n>c\nTTTT\n"
    c["blank_between.fa"] = b"\n\n>a\nACGTACGT\nAC\n\n\n>b\nGG\n\n"
    c["duplicate.fa"] = b">a\nACGT\n>a\nGGGG\n>b\nTT\n"
    c["empty_name.fa"] = b">\nACGT\n> \nGG\n>  c d\nT\n"
    c["inner_spaces.fa"] = b">a\nAC GT\nAC GT\nAC\n"
    c["protein.fa"] = (b">sp|P12345|TEST_HUMAN Test protein OS=Homo sapiens\nMKTAYIAKQRQISFVKSHFSRQLEERLGLIEVQAPILSRVGDGTQDNLSGAEKAVQVKVKALPDAQFEVV\nHVAKGEQ\n"
                       b">sp|Q99999|OTHER_MOUSE Other\nMSTNPKPQRKTKRNTNRRPQDVKFPGG\n")
    c["fastq_basic.fq"] = b"@r1 x\nACGTACGT\n+\nIIIIHHHH\n@r2\nACGT\nAC\n+r2\n!!!!\n##\n@r3\nNNNN\n+\n@@@@\n"
    # Inputs samtools refuses.
    c["bad_ragged.fa"] = b">a\nACGT\nAC\nACGT\n"
    c["bad_longer.fa"] = b">a\nACGT\nACGTA\n"
    c["bad_blank_inside.fa"] = b">a\nACGT\n\nACGT\n"
    c["bad_cr_only.fa"] = b">a\nACGT\n\n\rx\n"
    c["bad_text_first.fa"] = b"x\n>a\nAC\n"
    c["bad_empty_last.fa"] = b">a\nAC\n>b\n"
    c["bad_header_at_end.fa"] = b">a\nAC\n>b"
    c["bad_empty.fa"] = b""
    c["bad_blank_only.fa"] = b"\n\n\n"
    c["bad_at_in_fasta.fa"] = b">a\nAC\n\n@b\nA\n"
    c["bad_gt_in_fastq.fq"] = b"@a\nAC\n+\nII\n\n>b\nA\n"
    c["bad_fq_blank_seq.fq"] = b"@a\nACGT\n\n+\nIIII\n"
    c["bad_fq_qual_long_line.fq"] = b"@a\nACGT\nAC\n+\nIIIII\nI\n"
    c["bad_fq_qual_longer.fq"] = b"@a\nACGT\n+\nIIII\nI\n"
    c["bad_fq_qual_short_line.fq"] = b"@a\nACGT\nACGT\n+\nII\nIIIIII\n"
    c["bad_fq_no_plus.fq"] = b"@a\nACGT\nAC\nII\n"
    c["bad_fq_truncated.fq"] = b"@a\nACGT\n+\nII"
    return c

def regions(fai_lines):
    out = []
    for line in fai_lines:
        name, length = line.split("\t")[:2]
        n = int(length)
        out += [name, f"{name}:1", f"{name}:1-1", f"{name}:2-3", f"{name}:{n}", f"{name}:{n}-{n + 5}",
                f"{name}:{n + 1}", f"{name}:{n + 2}-", f"{name}:0", f"{name}:0-3", f"{name}:-3",
                f"{name}:3-2", f"{name}:1,0-1,5", f"{{{name}}}:2-3", f"{{{name}}}", f"{name}:1k",
                f"{name}:abc", f"{name}:1-2x", f"{name}:-5-10", f"{name}:2.5-4", f"{name}:", f"{name}:1e1-12"]
    out += ["missing", "missing:1-5", "{unbalanced", "{}", "chr1:1-5:1-2"]
    return out

def main():
    if shutil.which("samtools") is None:
        sys.exit("samtools not on PATH")
    os.makedirs(CASES, exist_ok=True)
    for f in os.listdir(CASES):
        os.remove(os.path.join(CASES, f))
    with tempfile.TemporaryDirectory() as tmp:
        for name, data in sorted(inputs().items()):
            stem, ext = os.path.splitext(name)
            tool = "fqidx" if ext == ".fq" else "faidx"
            with open(os.path.join(CASES, name), "wb") as f:
                f.write(data)
            src = os.path.join(tmp, name)
            with open(src, "wb") as f:
                f.write(data)
            p = subprocess.run(["samtools", tool, src], capture_output=True)
            if p.returncode != 0:
                with open(os.path.join(CASES, stem + ".err"), "wb") as f:
                    f.write(p.stderr.replace(tmp.encode() + b"/", b""))
                continue
            fai = open(src + ".fai", "rb").read()
            with open(os.path.join(CASES, stem + ".fai"), "wb") as f:
                f.write(fai)
            # A record whose first line has no base (LINEBASES 0) crashes samtools' fetch.
            lines = [l for l in fai.decode().splitlines() if l.split("\t")[3] != "0"]
            regs = regions(lines)
            with open(os.path.join(CASES, stem + ".regions"), "w") as f:
                f.write("".join(r + "\n" for r in regs))
            for variant, opts in (("default", []), ("n7i", ["-n", "7", "-i"])):
                out, err, st = b"", b"", ""
                for r in regs:
                    p = subprocess.run(["samtools", tool] + opts + [src, r], capture_output=True)
                    out += p.stdout
                    err += p.stderr
                    st += f"{p.returncode}\n"
                for suffix, content in (("stdout", out), ("stderr", err), ("status", st.encode())):
                    with open(os.path.join(CASES, f"{stem}.{variant}.{suffix}"), "wb") as f:
                        f.write(content)

if __name__ == "__main__":
    main()
