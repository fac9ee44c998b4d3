#!/usr/bin/env bash
# Device call 4 (2026-12-06): sparse_attn() split into its three launchers (a host-code change to a GPU translation
# unit, so the golden hash moves): every GPU test, memcheck on the attention tests, goldens and verify again.
set -uo pipefail
cd "$(dirname "$0")/.."
export OUT=${OUT:-/tmp/salasim-out}; mkdir -p "$OUT"
T0=$SECONDS
log() { echo "== [$((SECONDS - T0)) s] $*" | tee -a "$OUT/summary4.txt"; }
pack() { (cd "$OUT" && tar czf /tmp/C4.tgz --exclude=C4.tgz --exclude=all.tgz --exclude='tiny-*.h5' . && mv /tmp/C4.tgz "$OUT/C4.tgz"); }
export SALASIM_BUILD=.dev
.dev/salasim --version > "$OUT/version.txt" 2>&1; head -1 "$OUT/version.txt" | tee -a "$OUT/summary4.txt"
bash bench/device.sh gpu tests model 2>&1 | grep -E "^== |FAILED|passed|failed" | tee -a "$OUT/summary4.txt" | tail -20
log "tests done"; pack
bash bench/device.sh "golden scenarios/tiny-short.json" "golden scenarios/tiny-sparse.json" verify 2>&1 | grep -E "^== |taps|FAIL" | tee -a "$OUT/summary4.txt"
log "goldens + verify done"; pack
SAN_TIMEOUT=100 SMALL="[sparse_attn]~[large],[dense_attn]~[large]" timeout 120 bash bench/device.sh "sanitize memcheck" 2>&1 | grep -E "^== |ERROR SUMMARY|All tests|test cases" | tee -a "$OUT/summary4.txt"
log "end"; pack
(cd "$OUT" && find . -mindepth 1 ! -name C4.tgz ! -name 'tiny-*.h5' ! -name summary4.txt -exec rm -rf {} + 2>/dev/null); ls -la "$OUT"
