#!/usr/bin/env bash
# Device call 2 (2026-12-07, eleventh session; the tenth session's call2.sh with racecheck first), the same .dev as call 1 (a8fed01, the one-pass GLA as automatic), after
# call 1 landed it: the measured runs of the latency model's records at 64K, 256K and 1M (reports/measured/<hw>/,
# written by `salasim run --json-out`, as bench/device.sh's measure step does), then racecheck on [gla].
set -uo pipefail
cd "$(dirname "$0")/.."
. bench/call_lib.sh
B=$SALASIM_BUILD
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case "$gpu" in *H200*) hw=h200 ;; *H100*) hw=h100 ;; *) hw=other ;; esac
log "gpu: $gpu ($hw); $($B/salasim --version | head -1)"
timeout 200 compute-sanitizer --tool racecheck --error-exitcode 9 $B/tests/salasim_gpu_tests "[gla]" > "$OUT/racecheck.log" 2>&1
log "racecheck [gla] rc $?: $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' "$OUT/racecheck.log" | tail -1)"
pack
for ctx in 64K 256K 1M; do
  [ "$(left)" -gt 150 ] || break
  SALASIM_HW=$hw timeout $(($(left) - 100)) bash bench/device.sh "measure $ctx" > "$OUT/device_measure_$ctx.txt" 2>&1
  log "measure $ctx rc $?: $(grep -E '^== ' "$OUT/device_measure_$ctx.txt" | tail -1)"
  pack
done
log end
finish "run_*.json"
