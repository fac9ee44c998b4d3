#!/usr/bin/env bash
# Device call 5 (2026-12-06): the peers beside our GLA and dense attention on this card (bench/peers.py: fla's
# chunk_simple_gla at 16K/256K/1M, torch SDPA at 16K/64K), the H100 baseline for issue 36's A/Bs.
set -uo pipefail
cd "$(dirname "$0")/.."
export OUT=${OUT:-/tmp/salasim-out}; mkdir -p "$OUT"
export SALASIM_BUILD=.dev
.dev/salasim --version | head -1 > "$OUT/version.txt"
timeout 330 bash bench/device.sh gpu "peers 16K,256K,1M 16K,64K" 2>&1 | tail -30
(cd "$OUT" && tar czf /tmp/C5.tgz --exclude=all.tgz . && find . -mindepth 1 -delete && mv /tmp/C5.tgz C5.tgz)
