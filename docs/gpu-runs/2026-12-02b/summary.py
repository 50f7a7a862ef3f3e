# Ranges of device-resident dense GB/s per file and variant from a gpu-go.sh bench.log: python3 summary.py BENCH_LOG
import re,collections,sys
d=collections.defaultdict(lambda: collections.defaultdict(list))
for line in open(sys.argv[1]):
    m=re.match(r'(\w+)-(\d): SUMMARY gpu_decode ([^:]*): .*device-resident dense [0-9.]+ ms = ([0-9.]+) GB/s',line)
    if m: d[m.group(3)][m.group(1)].append(float(m.group(4)))
for f,v in d.items():
    print(f"{f[:24]:24s} "+"  ".join(f"{k} {min(x):.1f}-{max(x):.1f}" for k,x in v.items()))
