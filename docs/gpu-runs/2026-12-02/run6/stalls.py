import csv, sys
def kernels(path):
    rows=[]; name=None; hdr=None
    for r in csv.reader(open(path)):
        if not r: continue
        if r[0]=="Kernel Name":
            if name: yield name, hdr, rows
            name=r[1]; hdr=None; rows=[]; continue
        if r[0]=="Address": hdr=r; continue
        rows.append(r)
    if name: yield name, hdr, rows
for path in sys.argv[1:]:
    for name, hdr, rows in kernels(path):
        i_s=hdr.index("Warp Stall Sampling (All Samples)"); i_e=hdr.index("Instructions Executed")
        tot=sum(int(r[i_s]) for r in rows)
        first=int(rows[0][i_e])
        print(f"== {path.split('-sass')[0]} {name}: samples {tot}, warps {first}")
        # classify by execution count relative to the warp count
        buckets={}
        for r in rows:
            e=int(r[i_e]); s=int(r[i_s])
            k = "once per warp or CTA (<= 2 per warp)" if e <= 2*first else ("a few per warp (<= 16)" if e <= 16*first else "loop (> 16 per warp)")
            buckets[k]=buckets.get(k,0)+s
        for k,v in buckets.items(): print(f"   {k}: {v} ({100*v/tot:.1f} %)")
        top=sorted(rows,key=lambda r:-int(r[i_s]))[:12]
        for r in top: print(f"   {int(r[i_s]):6d} {100*int(r[i_s])/tot:5.1f}% ex={int(r[i_e]):8d} {r[1].strip()[:60]}")
