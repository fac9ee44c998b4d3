#!/usr/bin/env bash
# Device call 4 (2026-12-06, sixth session), the binary of call 2 (.dev, dabec97) on the same warm H100: the 2048K
# spot check, then racecheck on the small sparse attention tests (call 2's run of them with the dense ones ran past
# its limit) in the time left.
set -uo pipefail
cd "$(dirname "$0")/.."
export OUT=${OUT:-/tmp/salasim-out}; mkdir -p "$OUT"
T0=$SECONDS
left() { echo $((${CALL_BUDGET:-400} - (SECONDS - T0))); }
log() { echo "== [$((SECONDS - T0)) s] $*" | tee -a "$OUT/summary.txt"; }
export SALASIM_BUILD=.dev
timeout 260 bash bench/device.sh "spot scenarios/sala-9b-1m.json 8 --tokens 2097152" 2>&1 | grep -E "^== |PASS|FAIL|tie|prefill|taps" | tee -a "$OUT/summary.txt"
log "spot 2048K done"
T=$(( $(left) - 8 ))
timeout $T compute-sanitizer --tool racecheck --error-exitcode 9 .dev/tests/salasim_gpu_tests "[sparse_attn]~[large]" > "$OUT/racecheck.log" 2>&1
log "racecheck sparse (${T} s limit) rc $?: $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY|test cases' "$OUT/racecheck.log" | tr '\n' ' ')"
grep -c "^All tests\|^[a-z_]*: " "$OUT/racecheck.log" | head -2
log end
(cd "$OUT" && find . -mindepth 1 ! -name summary.txt ! -name racecheck.log -exec rm -rf {} + 2>/dev/null); ls -la "$OUT"
