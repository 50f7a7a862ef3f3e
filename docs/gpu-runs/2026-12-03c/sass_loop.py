# The rANS step loop of an ncu source page (`ncu -i R --page source --csv --print-source sass`):
# total stall samples, then every instruction executed at least 0.3 times as often as the most
# executed one (address tail, samples, executions, SASS). Usage: python3 sass_loop.py FILE.csv
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
hdr = rows[1]; data = rows[2:]
ia, isrc, iall, iex = hdr.index("Address"), hdr.index("Source"), hdr.index("Warp Stall Sampling (All Samples)"), hdr.index("Instructions Executed")
tot = sum(int(r[iall] or 0) for r in data)
print("total samples", tot, "instructions", len(data))
# hot loop: instructions executed >= max/2
mx = max(int(r[iex] or 0) for r in data)
loop = [r for r in data if int(r[iex] or 0) >= mx * 0.3]
print("loop-ish instrs", len(loop), "samples in them", sum(int(r[iall] or 0) for r in loop))
for r in data:
    if int(r[iex] or 0) >= mx*0.3:
        print(r[ia][-5:], f"{int(r[iall] or 0):6d}", f"{int(r[iex]):7d}", r[isrc].strip()[:70])
