#!/usr/bin/env bash
# Call D (2026-12-03, session 2): baseline of the decode selection at 64K / 1M / 2M, and one 1M decode step under ncu.
export SALASIM_BUILD=.dev LD_LIBRARY_PATH=$PWD/.dev/lib
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
.dev/bench/salasim_ops_bench --benchmark_filter='select_blocks\.decode|sparse_attn\.decode' --benchmark_min_time=0.2 > "$OUT/D_ops.txt" 2>&1
cut -c1-160 "$OUT/D_ops.txt" | grep -E "decode" | head -30
echo "[$SECONDS s] ops"
timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum --print-units base --csv -k "regex:lse|score|topk" -c 60 \
  .dev/bench/salasim_ops_bench --benchmark_filter='select_blocks\.decode/' --benchmark_min_time=0.01 > "$OUT/D_ncu_sel.csv" 2>&1
python3 - "$OUT/D_ncu_sel.csv" <<'PY'
import csv,sys,collections
rows=[r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
h=rows[0]; ki=h.index("Kernel Name"); vi=h.index("Metric Value"); gi=h.index("Grid Size") if "Grid Size" in h else None
seq=[(r[ki].split("(")[0].replace("void ","").replace("(anonymous namespace)::",""), float(r[vi].replace(",",""))/1e3, r[gi] if gi is not None else "") for r in rows[1:]]
for s in seq: print("%-60s %8.1f us %s"%s)
PY
echo "[$SECONDS s] ncu sel"
bash bench/device.sh "decode_ncu 1M 1" > "$OUT/D_ncu.txt" 2>&1; grep -v '^==' "$OUT/D_ncu.txt" | head -60
echo "[$SECONDS s] end"
cd "$OUT" && tar czf /tmp/D_all.tgz . && rm -rf "$OUT"/* && mv /tmp/D_all.tgz "$OUT/"
