#!/usr/bin/env bash
# Device call 3: racecheck on the sparse-attention tests (the ring kernel is new), then ncu on the ring kernel at 1M.
set -uo pipefail
cd "$(dirname "$0")/.."
export OUT=${OUT:-/tmp/salasim-out}; mkdir -p "$OUT"
export SALASIM_BUILD=.dev
SAN_TIMEOUT=280 SMALL="[sparse_attn]~[large]" bash bench/device.sh "sanitize racecheck" 2>&1 | grep -E "^== |ERROR SUMMARY|test cases|assertions" | head
NCU_TIMEOUT=150 bash bench/device.sh "ncu_pipes ^sparse_attn/1M ring_kernel 1" "ncu_pipes ^sparse_attn.overlap/1M ring_kernel 1" 2>&1 | tail -70
(cd "$OUT" && tar czf /tmp/C3.tgz --exclude=all.tgz . && find . -mindepth 1 -delete && mv /tmp/C3.tgz C3.tgz); ls -la "$OUT"
