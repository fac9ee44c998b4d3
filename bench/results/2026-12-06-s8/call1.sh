#!/usr/bin/env bash
# Device call 1 (2026-12-06, eighth session), .dev = the one-pass GLA engine rewritten (GlaEngine::wgmma). The GLA
# tests on both engines first (stop there if they fail); the goldens re-recorded (each runs verify on its scenario);
# the GLA op A/B in one binary (gla = one pass, gla.mma_sync = the three launches), 3 rounds alternating; fla beside
# it; memcheck on [gla]; the other op tests; the model tests; racecheck on [gla]; as the time left allows.
set -uo pipefail
cd "$(dirname "$0")/.."
. bench/call_lib.sh
B=$SALASIM_BUILD
log "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); $($B/salasim --version | head -1)"
timeout 150 $B/tests/salasim_gpu_tests "[gla]" > "$OUT/gla_tests.log" 2>&1
rc=$?
log "gla tests rc $rc: $(grep -E 'test cases|assertions' "$OUT/gla_tests.log" | tail -2 | tr '\n' ' ')"
if [ $rc -ne 0 ]; then grep -B5 -A40 "FAILED" "$OUT/gla_tests.log" | head -200; finish; exit 0; fi
for sc in tiny-short tiny-sparse; do
  timeout 150 $B/salasim golden record --scenario scenarios/$sc.json --out "$OUT/$sc.h5" > "$OUT/golden_$sc.txt" 2>&1
  log "golden $sc rc $?: $(grep -E '^all|^wrote|FAIL' "$OUT/golden_$sc.txt" | tr '\n' ' ')"
done
pack
for r in 1 2 3; do
  for f in '^gla/' '^gla\.mma_sync/'; do
    [ "$(left)" -gt 330 ] || break 2
    tag=$(echo "$f" | tr -c 'a-z_' _)
    timeout 80 $B/bench/salasim_ops_bench --benchmark_filter="$f" --benchmark_counters_tabular=true > "$OUT/ops_${tag}_$r.txt" 2>&1
    log "round $r $f: $(grep -E '^gla' "$OUT/ops_${tag}_$r.txt" | awk '{print $1, $2, $3}' | sed 's#/min_time:0.300/manual_time##' | tr '\n' ' ')"
  done
done
pack
if [ "$(left)" -gt 300 ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > "$OUT/pip.log" 2>&1
  PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 timeout 90 python3 bench/peers.py --lib $B/bench/libsalasim_capi.so --gla 16K,256K,1M --attn '' --json "$OUT/peers.json" > "$OUT/peers.txt" 2>&1
  log "peers rc $?"; grep -E "gla" "$OUT/peers.txt" | tail -4 | tee -a "$OUT/summary.txt"
fi
pack
if [ "$(left)" -gt 200 ]; then
  timeout 110 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/salasim_gpu_tests "[gla]" > "$OUT/memcheck.log" 2>&1
  log "memcheck [gla] rc $?: $(grep -E 'ERROR SUMMARY' "$OUT/memcheck.log" | tail -1)"
fi
pack
if [ "$(left)" -gt 90 ]; then
  timeout $(($(left) - 60)) $B/tests/salasim_gpu_tests "~[model]~[gla]" -r compact > "$OUT/gpu_tests.log" 2>&1
  rc=$?; log "op tests rc $rc: $(tail -2 "$OUT/gpu_tests.log" | tr '\n' ' ')"
  [ $rc -ne 0 ] && grep -B2 -A25 "FAILED" "$OUT/gpu_tests.log" | head -80
fi
log end
finish
