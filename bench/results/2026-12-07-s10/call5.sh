#!/usr/bin/env bash
# Device call (2026-12-07, tenth session), .dev = a8fed01, for the last ~170 s of the session's device time: the GLA
# tests on both engines (stop if they fail); the op A/B gla.wgmma against gla.mma_sync, 2 rounds alternating; the
# verdict; if the one pass is faster at 16K, 256K and 1M and time is left, both goldens re-recorded (each runs
# verify on the GPU against the reference).
set -uo pipefail
cd "$(dirname "$0")/.."
. bench/call_lib.sh
B=$SALASIM_BUILD
log "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); $($B/salasim --version | head -1)"
timeout 60 $B/tests/salasim_gpu_tests "[gla]" > "$OUT/gla_tests.log" 2>&1
rc=$?
log "gla tests rc $rc: $(grep -E 'test cases|assertions' "$OUT/gla_tests.log" | tail -2 | tr '\n' ' ')"
if [ $rc -ne 0 ]; then grep -B5 -A40 "FAILED" "$OUT/gla_tests.log" | head -150; finish; exit 0; fi
for r in 1 2; do
  for f in '^gla\.wgmma/' '^gla\.mma_sync/'; do
    [ "$(left)" -gt 25 ] || break 2
    tag=$(echo "$f" | tr -c 'a-z_' _)
    timeout 25 $B/bench/salasim_ops_bench --benchmark_filter="$f" --benchmark_counters_tabular=true > "$OUT/ops_${tag}_$r.txt" 2>&1
    log "round $r $f: $(grep -E '^gla' "$OUT/ops_${tag}_$r.txt" | awk '{print $1, $2, $3}' | sed 's#/min_time:0.300/manual_time##' | tr '\n' ' ')"
  done
done
pack
for sc in tiny-short tiny-sparse; do
  [ "$(left)" -gt 50 ] || break
  timeout $(($(left) - 10)) $B/salasim golden record --scenario scenarios/$sc.json --out "$OUT/$sc.h5" > "$OUT/golden_$sc.txt" 2>&1
  log "golden $sc rc $?: $(grep -E '^all|^wrote|FAIL' "$OUT/golden_$sc.txt" | tr '\n' ' ')"
done
log end
finish
