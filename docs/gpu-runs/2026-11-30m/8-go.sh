#!/bin/bash
# run 8 of the eighth session: ncu per-instruction stall samples of the final kernels on
# gcide (the file furthest behind nvCOMP Snappy), for the next session's plan
X=nv11
ACEAPEX_BENCH_ARCHIVES=$X/gc timeout 300 ncu --clock-control none -k regex:'rans_decode_slices|decode_blocks_dense' -c 2 --set full --import-source no -o $OUT/8-prof -f $X/bench-gpu_decode --bench none 2>&1 | tail -3
ncu -i $OUT/8-prof.ncu-rep --page details > $OUT/8-prof-details.txt 2>&1
ncu -i $OUT/8-prof.ncu-rep --page source --csv --print-source sass > $OUT/8-prof-sass.csv 2>&1; gzip $OUT/8-prof-sass.csv; rm -f $OUT/8-prof.ncu-rep
grep -E "Duration|Registers|Achieved Occupancy|L1/TEX Hit|Executed Ipc|Mem Busy|Max Bandwidth|Issue Slots|No Eligible|Warp Cycles Per Issued" $OUT/8-prof-details.txt | head -40
