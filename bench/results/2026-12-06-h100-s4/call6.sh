#!/usr/bin/env bash
# Device call 6 (2026-12-06, fourth session), the binary of b075b3b: the 2048K spot check, then this card's measured
# runs at 1M and 2048K (records for reports/measured/h100/).
set -uo pipefail
cd "$(dirname "$0")/.."
export OUT=${OUT:-/tmp/salasim-out}; mkdir -p "$OUT"
T0=$SECONDS
left() { echo $((${CALL_BUDGET:-585} - (SECONDS - T0))); }
log() { echo "== [$((SECONDS - T0)) s] $*" | tee -a "$OUT/summary.txt"; }
pack() { (cd "$OUT" && tar czf /tmp/C.tgz --exclude=C.tgz --exclude=all.tgz . && mv /tmp/C.tgz "$OUT/C.tgz"); }
export SALASIM_BUILD=.dev
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case "$name" in *H200*) HW=h200 ;; *H100*) HW=h100 ;; *) HW=other ;; esac
log "gpu: $name -> $HW; $(.dev/salasim --version | head -1)"
timeout 300 bash bench/device.sh "spot scenarios/sala-9b-1m.json 8 --tokens 2097152" 2>&1 | grep -E "^== |PASS|FAIL|tie|prefill" | tee -a "$OUT/summary.txt"
log "spot 2048K done"; pack
[ "$(left)" -gt 90 ] && SALASIM_HW=$HW timeout $(( $(left) - 20 )) bash bench/device.sh "measure 1M" 2>&1 | grep -E "^== measured|FAILED" | tee -a "$OUT/summary.txt"
log "1M done"; pack
[ "$(left)" -gt 170 ] && SALASIM_HW=$HW timeout $(( $(left) - 15 )) bash bench/device.sh "measure 2048K" 2>&1 | grep -E "^== measured|FAILED" | tee -a "$OUT/summary.txt"
log end; pack
(cd "$OUT" && find . -mindepth 1 ! -name C.tgz ! -name summary.txt -exec rm -rf {} + 2>/dev/null); ls -la "$OUT"
