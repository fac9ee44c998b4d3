#!/usr/bin/env bash
# Device call 5 (2026-12-06, fourth session), the binary of b075b3b (.dev) and the ops benchmark of 883f2e4
# (.dev-base): the GLA op A/B (3 rounds alternating; the scan's batched loads), then this card's records 16K-256K
# and Qwen3-8B (HF transformers + SDPA) at 16K-256K in the same call.
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
bash bench/device.sh gpu > /dev/null 2>&1  # links the binaries' source path (SALASIM_SOURCE_DIR) to this tree
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
for ctx in 16K 64K 128K 256K; do
  SALASIM_HW=$HW bash bench/device.sh "measure $ctx" 2>&1 | grep -E "^== measured|FAILED" | tee -a "$OUT/summary.txt"
done
log "SALA measured"; pack
[ "$(left)" -gt 160 ] && PYTHONUNBUFFERED=1 timeout $(( $(left) - 40 )) python3 bench/qwen3_hf.py --config scenarios/models/qwen3-8b.json \
  --contexts 16K,64K,128K,256K --rounds 1 --out-dir "$OUT/reports/measured/$HW/qwen3-8b" \
  --revision "$(.dev/salasim --version | head -1)" > "$OUT/qwen3.txt" 2>&1; tail -8 "$OUT/qwen3.txt" | tee -a "$OUT/summary.txt"
log end; pack
(cd "$OUT" && find . -mindepth 1 ! -name C.tgz ! -name summary.txt -exec rm -rf {} + 2>/dev/null); ls -la "$OUT"
