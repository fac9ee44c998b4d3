#!/usr/bin/env bash
# Device call 4 (2026-12-06, fourth session), the binary of b075b3b: every GPU op and model test, both goldens
# re-recorded (the GPU sources changed: runner.cpp/.hpp, gla.cu, sparse_attn.cu), verify, the 1M spot check,
# memcheck on the GLA and generate tests (the scan's batched loads, the decode graphs).
set -uo pipefail
cd "$(dirname "$0")/.."
export OUT=${OUT:-/tmp/salasim-out}; mkdir -p "$OUT"
T0=$SECONDS
log() { echo "== [$((SECONDS - T0)) s] $*" | tee -a "$OUT/summary.txt"; }
pack() { (cd "$OUT" && tar czf /tmp/C.tgz --exclude=C.tgz --exclude=all.tgz --exclude='tiny-*.h5' . && mv /tmp/C.tgz "$OUT/C.tgz"); }
export SALASIM_BUILD=.dev
.dev/salasim --version > "$OUT/version.txt" 2>&1; head -1 "$OUT/version.txt" | tee -a "$OUT/summary.txt"
bash bench/device.sh gpu tests model 2>&1 | grep -E "^== |FAILED|passed|failed" | tee -a "$OUT/summary.txt" | tail -20
grep -E "test cases" "$OUT/gpu_tests.log" "$OUT/gpu_model.log" | tee -a "$OUT/summary.txt"
log "tests done"; pack
bash bench/device.sh "golden scenarios/tiny-short.json" "golden scenarios/tiny-sparse.json" verify 2>&1 | grep -E "^== |taps|FAIL" | tee -a "$OUT/summary.txt"
log "goldens + verify done"; pack
timeout 100 bash bench/device.sh "spot scenarios/sala-9b-1m.json" 2>&1 | grep -E "^== |PASS|FAIL|taps" | tee -a "$OUT/summary.txt"
log "spot done"; pack
SAN_TIMEOUT=110 SMALL="[gla]~[large],[generate]" timeout 120 bash bench/device.sh "sanitize memcheck" 2>&1 | grep -E "^== |ERROR SUMMARY|test cases" | tee -a "$OUT/summary.txt"
log "end"; pack
(cd "$OUT" && find . -mindepth 1 ! -name C.tgz ! -name 'tiny-*.h5' ! -name summary.txt -exec rm -rf {} + 2>/dev/null); ls -la "$OUT"
