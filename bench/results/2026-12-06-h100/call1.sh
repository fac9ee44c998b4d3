#!/usr/bin/env bash
# Device call 1 (2026-12-06, third session): integ at c76de0d (.dev): every GPU test, goldens for both scenarios,
# verify on the default scenario, compute-sanitizer on the tensor-core kernels, the 1M spot check; the card's ceilings.
set -uo pipefail
cd "$(dirname "$0")/.."
export OUT=${OUT:-/tmp/salasim-out}; mkdir -p "$OUT"
T0=$SECONDS
left() { echo $((${CALL_BUDGET:-575} - (SECONDS - T0))); }
log() { echo "== [$((SECONDS - T0)) s] $*" | tee -a "$OUT/summary1.txt"; }
pack() { (cd "$OUT" && tar czf /tmp/C1.tgz --exclude=C1.tgz --exclude=all.tgz --exclude='tiny-*.h5' . && mv /tmp/C1.tgz "$OUT/C1.tgz"); }
export SALASIM_BUILD=.dev
.dev/salasim --version > "$OUT/version.txt" 2>&1
python3 bench/.ceil.py "$OUT/ceilings.json" > "$OUT/ceilings.txt" 2>&1; log "ceilings: $(tail -c 400 "$OUT/ceilings.txt")"
bash bench/device.sh gpu tests model 2>&1 | grep -E "^== |FAILED|passed|failed" | tee -a "$OUT/summary1.txt" | tail -20
log "tests done"; pack
bash bench/device.sh "golden scenarios/tiny-short.json" "golden scenarios/tiny-sparse.json" verify 2>&1 | grep -E "^== |taps|FAIL" | tee -a "$OUT/summary1.txt"
log "goldens + verify done"; pack
[ "$(left)" -gt 80 ] && timeout $(( $(left) - 10 )) bash bench/device.sh "spot scenarios/sala-9b-1m.json" 2>&1 | grep -E "^== |PASS|FAIL|taps" | tail -6 | tee -a "$OUT/summary1.txt"
log "spot done"; pack
[ "$(left)" -gt 60 ] && SAN_TIMEOUT=90 timeout $(( $(left) - 5 )) bash bench/device.sh "sanitize_kernels memcheck racecheck" 2>&1 | grep -E "^== |=====" | head -20 | tee -a "$OUT/summary1.txt"
log "sanitizers done"; pack
log "end"; pack
(cd "$OUT" && find . -mindepth 1 ! -name C1.tgz ! -name 'tiny-*.h5' ! -name summary1.txt -exec rm -rf {} + 2>/dev/null); ls -la "$OUT"
