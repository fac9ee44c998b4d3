#!/usr/bin/env bash
# Device call 7 (2026-12-06, fourth session), the binary of b075b3b: Nsight Compute on the GLA op at 1M tokens (the
# three chunked kernels, one launch each): what bounds them after the scan's loads were batched.
set -uo pipefail
cd "$(dirname "$0")/.."
export OUT=${OUT:-/tmp/salasim-out}; mkdir -p "$OUT"
export SALASIM_BUILD=.dev
NCU_TIMEOUT=200 bash bench/device.sh gpu "ncu_pipes ^gla/1M segment_state_kernel|scan_kernel|chunk_fwd_kernel 3" 2>&1 | tail -60
(cd "$OUT" && tar czf /tmp/C.tgz --exclude=C.tgz --exclude=all.tgz . && mv /tmp/C.tgz "$OUT/C.tgz")
(cd "$OUT" && find . -mindepth 1 ! -name C.tgz -exec rm -rf {} + 2>/dev/null); ls -la "$OUT"
