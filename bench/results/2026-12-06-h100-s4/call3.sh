#!/usr/bin/env bash
# Device call 3 (2026-12-06, fourth session), the binary of b075b3b (.dev) and of 883f2e4 (.dev-base: the ops
# benchmark before the GLA scan's batched loads): the GLA op A/B (3 rounds alternating), the peers beside it (fla
# chunk_simple_gla, torch SDPA), decode as CUDA graphs on/off at 64K (3 rounds alternating), then the measured runs
# 16K-256K of this card's records.
set -uo pipefail
cd "$(dirname "$0")/.."
export OUT=${OUT:-/tmp/salasim-out}; mkdir -p "$OUT"
T0=$SECONDS
left() { echo $((${CALL_BUDGET:-570} - (SECONDS - T0))); }
log() { echo "== [$((SECONDS - T0)) s] $*" | tee -a "$OUT/summary.txt"; }
pack() { (cd "$OUT" && tar czf /tmp/C.tgz --exclude=C.tgz --exclude=all.tgz . && mv /tmp/C.tgz "$OUT/C.tgz"); }
export SALASIM_BUILD=.dev
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case "$name" in *H200*) HW=h200 ;; *H100*) HW=h100 ;; *) HW=other ;; esac
log "gpu: $name ($(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)) -> $HW; new $(.dev/salasim --version | head -1); base ops bench of 883f2e4"
for r in 1 2 3; do
  for v in base new; do
    d=.dev; [ $v = base ] && d=.dev-base
    LD_LIBRARY_PATH=$PWD/.dev/lib timeout 100 $d/bench/salasim_ops_bench --benchmark_filter='^gla/' \
      --benchmark_counters_tabular=true > "$OUT/ops_gla_${v}_$r.txt" 2>&1
    echo "round $r $v: $(grep -E '^gla/' "$OUT/ops_gla_${v}_$r.txt" | awk '{print $1, $2, $3}' | tr '\n' ' ')" | tee -a "$OUT/summary.txt"
  done
done
pack
timeout 150 bash bench/device.sh gpu "peers 16K,256K,1M 16K,64K" 2>&1 | tail -14 | tee -a "$OUT/summary.txt"
log "peers done"; pack
for r in 1 2 3; do
  for g in off on; do
    timeout 60 .dev/salasim run --config scenarios/models/minicpm-sala-9b.json --context 64K --decode 256 --graph $g > "$OUT/graph_64K_${g}_$r.txt" 2>&1
    echo "64K round $r graph $g: $(grep -E 'median|host time' "$OUT/graph_64K_${g}_$r.txt" | tr '\n' ' ' | cut -c1-330)" | tee -a "$OUT/summary.txt"
  done
done
pack
for ctx in 16K 64K 128K 256K; do
  [ "$(left)" -gt 45 ] && SALASIM_HW=$HW bash bench/device.sh "measure $ctx" 2>&1 | grep -E "^== measured|FAILED" | tee -a "$OUT/summary.txt"
done
log end; pack
(cd "$OUT" && find . -mindepth 1 ! -name C.tgz ! -name summary.txt -exec rm -rf {} + 2>/dev/null); ls -la "$OUT"
