# Ranges per file and variant from a gpu-go.sh bench.log: device-resident dense GB/s (full
# decodes) and rANS-stage ms (ACEAPEX_BENCH_RANS_ONLY runs). python3 summary.py BENCH_LOG
import re, collections, sys
gb = collections.defaultdict(lambda: collections.defaultdict(list))
ro = collections.defaultdict(lambda: collections.defaultdict(list))
for line in open(sys.argv[1]):
    m = re.match(r'(\w+)-(\d): SUMMARY gpu_decode ([^:]*): .*device-resident dense [0-9.]+ ms = ([0-9.]+) GB/s', line)
    if m:
        gb[m.group(3)][m.group(1)].append(float(m.group(4)))
    m = re.match(r'(\w+)-(\d): SUMMARY rans_only ([^:]*): median of 5 means of 10: ([0-9.]+) ms', line)
    if m:
        ro[m.group(3)][m.group(1)].append(float(m.group(4)))
for title, d, fmt in (("dense GB/s", gb, "{:.1f}"), ("rANS stage ms", ro, "{:.4f}")):
    if d:
        print(f"== {title}")
    for f, v in d.items():
        print(f"{f[:24]:24s} " + "  ".join(
            f"{k} " + fmt.format(min(x)) + "-" + fmt.format(max(x)) for k, x in v.items()))
