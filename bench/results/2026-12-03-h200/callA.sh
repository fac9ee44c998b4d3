#!/usr/bin/env bash
# Call A (2026-12-03): GPU tests of the decode fusions, sanitizers, both goldens, then the 64K A/B of --fuse.
export SALASIM_BUILD=.dev LD_LIBRARY_PATH=$PWD/.dev/lib
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
log() { echo "[$SECONDS s] $*" | tee -a "$OUT/A_summary.txt"; }
bash bench/device.sh gpu "tests [gemv],[gla],[rope],[generate],[residual],[gate],[rmsnorm],[op_cases]" model > "$OUT/A_tests.txt" 2>&1
grep '^== ' "$OUT/A_tests.txt" | tee -a "$OUT/A_summary.txt"
if grep -q 'FAILED' "$OUT/A_tests.txt"; then log "tests failed: stop"; cp -r "$OUT"/gpu_*.log "$OUT/A_logs" 2>/dev/null; exit 1; fi
log "tests done"
SAN_TIMEOUT=100 SMALL="[gemv_gate],[rope]" bash bench/device.sh "sanitize memcheck racecheck" > "$OUT/A_sanitize.txt" 2>&1
grep '^== ' "$OUT/A_sanitize.txt" | tee -a "$OUT/A_summary.txt"
log "sanitize done"
bash bench/device.sh "golden scenarios/tiny-short.json" "golden scenarios/tiny-sparse.json" > "$OUT/A_golden.txt" 2>&1
grep '^== ' "$OUT/A_golden.txt" | tee -a "$OUT/A_summary.txt"
log "goldens done"
.dev/bench/salasim_ops_bench --benchmark_filter='gemv\.' --benchmark_min_time=0.2 > "$OUT/A_ops_gemv.txt" 2>&1
grep -E 'gemv' "$OUT/A_ops_gemv.txt" | head -30 >> "$OUT/A_summary.txt"
log "ops done"
for i in 1 2 3; do
  for f in on residual,gate residual,rope residual off; do
    [ $SECONDS -gt 560 ] && break 2
    .dev/salasim run --config scenarios/models/minicpm-sala-9b.json --context 64K --decode 128 --extrapolate --fuse $f \
      > "$OUT/A_ab_${f/,/+}_$i.txt" 2>&1
    echo "round $i --fuse $f: $(grep -E 'decode' "$OUT/A_ab_${f/,/+}_$i.txt" | tr '\n' ' ')" >> "$OUT/A_ab.txt"
  done
done
cat "$OUT/A_ab.txt" >> "$OUT/A_summary.txt"
log "end"
