#!/usr/bin/env bash
# Device call 1 (2026-12-06, fourth session): decode steps as CUDA graphs: the GPU tests of generate, memcheck on
# them, then decode A/B graph on/off (3 rounds alternating) at 16K and 64K.
set -uo pipefail
cd "$(dirname "$0")/.."
export OUT=${OUT:-/tmp/salasim-out}; mkdir -p "$OUT"
T0=$SECONDS
left() { echo $((${CALL_BUDGET:-560} - (SECONDS - T0))); }
log() { echo "== [$((SECONDS - T0)) s] $*" | tee -a "$OUT/summary.txt"; }
export SALASIM_BUILD=.dev
log "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); $(.dev/salasim --version | head -1)"
bash bench/device.sh gpu "tests [generate]" 2>&1 | tail -4 | tee -a "$OUT/summary.txt"
grep -E "passed|failed" "$OUT/gpu_tests.log" | tail -2 | tee -a "$OUT/summary.txt"
cp "$OUT/gpu_tests.log" "$OUT/gpu_tests_generate.log"
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 .dev/tests/salasim_gpu_tests "[generate]" > "$OUT/memcheck_generate.log" 2>&1
log "memcheck [generate] rc $?: $(tail -1 "$OUT/memcheck_generate.log")"
for ctx in 16K 64K; do
  for r in 1 2 3; do
    for g in off on; do
      [ "$(left)" -gt 40 ] || break 3
      timeout 60 .dev/salasim run --config scenarios/models/minicpm-sala-9b.json --context $ctx --decode 256 --graph $g > "$OUT/ab_${ctx}_${g}_$r.txt" 2>&1
      echo "$ctx round $r graph $g: $(grep -E 'TTFT|median|host time' "$OUT/ab_${ctx}_${g}_$r.txt" | tr '\n' ' ' | cut -c1-400)" | tee -a "$OUT/summary.txt"
    done
  done
done
log end
