# Hot basic blocks of one SASS stretch of the dense kernel from an ncu source export (the
# csv of `ncu -i REP --page source --csv --print-source sass`): per run of instructions with the
# same execution count, its share of the kernel's instructions and samples, threads active and
# opcodes. python3 sass_blocks.py SASS.csv FIRST LAST [TOP] [A:B to list instructions A..B]
# (KERNEL=name in the environment for another kernel than decode_blocks_dense; its rows are
# numbered from 0 as its own)
import csv, os, sys
from collections import Counter
path, lo, hi = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rows=[];cur=None;header=None
for r in csv.reader(open(path)):
    if r and r[0]=="Kernel Name": cur=r[1]
    elif r and r[0]=="Address": header=r
    elif r and cur==os.environ.get("KERNEL", "decode_blocks_dense"): rows.append(r)
col={n:i for i,n in enumerate(header)}
E=col['Instructions Executed'];S=col['Warp Stall Sampling (All Samples)'];T=col['Avg. Threads Executed']
TI=sum(int(r[E]) for r in rows); TS=sum(int(r[S]) for r in rows)
blocks=[];cur=None
for idx in range(lo,hi+1):
    r=rows[idx]; e=int(r[E]); s=int(r[S]); ins=r[1]
    op=ins.split()[1] if ins.startswith('@') else ins.split()[0]
    if cur and cur['e']==e: cur['n']+=1;cur['s']+=s;cur['end']=idx;cur['ops'].append(op)
    else: cur={'start':idx,'end':idx,'e':e,'n':1,'s':s,'t':r[T],'ops':[op]};blocks.append(cur)
for b in sorted(blocks,key=lambda b:-b['e']*b['n'])[:int(sys.argv[4]) if len(sys.argv)>4 else 15]:
    c=Counter(o.split('.')[0] for o in b['ops'])
    print(f"{b['start']}-{b['end']} n={b['n']} exec={b['e']} instr%(kernel)={100*b['e']*b['n']/TI:.1f} samp%={100*b['s']/TS:.1f} thr={b['t']} {dict(c.most_common(7))}")
if len(sys.argv)>5:
    a,z=map(int,sys.argv[5].split(':'))
    for idx in range(a,z+1):
        r=rows[idx]; print(idx, r[E], r[S], r[T], r[1])
