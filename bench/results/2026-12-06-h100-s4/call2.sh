#!/usr/bin/env bash
# Device call 2 (2026-12-06, fourth session): the selection's exponentials partly on the FMA pipe (exp2_poly), A/B
# against the binary before it (.dev-base), 3 rounds alternating; GPU select tests and both sanitizers on it first.
set -uo pipefail
cd "$(dirname "$0")/.."
export OUT=${OUT:-/tmp/salasim-out}; mkdir -p "$OUT"
T0=$SECONDS
left() { echo $((${CALL_BUDGET:-560} - (SECONDS - T0))); }
log() { echo "== [$((SECONDS - T0)) s] $*" | tee -a "$OUT/summary.txt"; }
pack() { (cd "$OUT" && tar czf /tmp/C.tgz --exclude=C.tgz . && mv /tmp/C.tgz "$OUT/C.tgz"); }
export SALASIM_BUILD=.dev
log "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); new $(.dev/salasim --version | head -1); base $(.dev-base/salasim --version | head -1)"
bash bench/device.sh gpu "tests [select_blocks],[generate]" > "$OUT/tests.txt" 2>&1; tail -3 "$OUT/tests.txt" | tee -a "$OUT/summary.txt"
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 .dev/tests/salasim_gpu_tests "[select_blocks]~[large]" > "$OUT/${tool}_select.log" 2>&1
  log "$tool [select_blocks]~[large] rc $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/${tool}_select.log" | tail -1)"
done
pack
for r in 1 2 3; do
  for v in base new; do
    [ "$(left)" -gt 120 ] || break 2
    d=.dev; [ $v = base ] && d=.dev-base
    LD_LIBRARY_PATH=$PWD/.dev/lib timeout 100 $d/bench/salasim_ops_bench --benchmark_filter='^select_blocks/' \
      --benchmark_counters_tabular=true > "$OUT/ops_${v}_$r.txt" 2>&1
    echo "round $r $v: $(grep -E '^select_blocks/' "$OUT/ops_${v}_$r.txt" | awk '{print $1, $2, $3}' | tr '\n' ' ')" | tee -a "$OUT/summary.txt"
  done
done
pack
for r in 1 2; do
  for v in base new; do
    [ "$(left)" -gt 40 ] || break 2
    d=.dev; [ $v = base ] && d=.dev-base
    LD_LIBRARY_PATH=$PWD/.dev/lib timeout 60 $d/salasim run --config scenarios/models/minicpm-sala-9b.json --context 256K --decode 8 > "$OUT/run256K_${v}_$r.txt" 2>&1
    echo "256K round $r $v: $(grep -E '^TTFT|prefill by op' "$OUT/run256K_${v}_$r.txt" | tr '\n' ' ' | cut -c1-300)" | tee -a "$OUT/summary.txt"
  done
done
log end; pack
(cd "$OUT" && find . -mindepth 1 ! -name C.tgz ! -name summary.txt -exec rm -rf {} + 2>/dev/null); ls -la "$OUT"
