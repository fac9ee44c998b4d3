#!/usr/bin/env bash
# Device call 2 (2026-12-07, ninth session), the same .dev as call 1 (7ca6cfb), on the machine call 1 left warm:
# racecheck on [gla]; a 256K prefill's TTFT and its gla share with the default engine (now the one pass).
set -uo pipefail
cd "$(dirname "$0")/.."
. bench/call_lib.sh
B=$SALASIM_BUILD
log "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); $($B/salasim --version | head -1)"
timeout 200 compute-sanitizer --tool racecheck --error-exitcode 9 $B/tests/salasim_gpu_tests "[gla]" > "$OUT/racecheck.log" 2>&1
log "racecheck [gla] rc $?: $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' "$OUT/racecheck.log" | tail -1)"
pack
for ctx in 64K 256K; do
  [ "$(left)" -gt 90 ] || break
  timeout $(($(left) - 30)) $B/salasim run --config scenarios/models/minicpm-sala-9b.json --context $ctx --decode 8 > "$OUT/run_$ctx.txt" 2>&1
  log "run $ctx rc $?: $(grep -iE 'ttft|gla|select|sparse_attn|gemm' "$OUT/run_$ctx.txt" | head -8 | tr '\n' ' ')"
done
log end
finish
