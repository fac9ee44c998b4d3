#!/usr/bin/env bash
# Device call 2 (2026-12-06, third session): issue 37 item 7 (MiniCPM-SALA's `salasim run` and Qwen3-8B through HF
# transformers + SDPA at 16K/64K/128K/256K in one call), then issue 36's ring kernel against the tile kernel.
set -uo pipefail
cd "$(dirname "$0")/.."
export OUT=${OUT:-/tmp/salasim-out}; mkdir -p "$OUT"
T0=$SECONDS
left() { echo $((${CALL_BUDGET:-575} - (SECONDS - T0))); }
log() { echo "== [$((SECONDS - T0)) s] $*" | tee -a "$OUT/summary2.txt"; }
pack() { (cd "$OUT" && tar czf /tmp/C2.tgz --exclude=C2.tgz --exclude=all.tgz . && mv /tmp/C2.tgz "$OUT/C2.tgz"); }
export SALASIM_BUILD=.dev
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case "$name" in *H200*) HW=h200 ;; *H100*) HW=h100 ;; *) HW=other ;; esac
log "gpu: $name -> reports/measured/$HW"
for ctx in 16K 64K 128K 256K; do
  [ "$(left)" -gt 300 ] && SALASIM_HW=$HW bash bench/device.sh "measure $ctx" 2>&1 | grep -E "^== measured|FAILED" | tee -a "$OUT/summary2.txt"
done
log "SALA measured"; pack
[ "$(left)" -gt 200 ] && PYTHONUNBUFFERED=1 timeout $(( $(left) - 120 )) python3 bench/qwen3_hf.py --config scenarios/models/qwen3-8b.json \
  --contexts 16K,64K,128K,256K --rounds 1 --out-dir "$OUT/reports/measured/$HW/qwen3-8b" \
  --revision "$(.dev/salasim --version | head -1)" > "$OUT/qwen3.txt" 2>&1; tail -8 "$OUT/qwen3.txt" | tee -a "$OUT/summary2.txt"
log "Qwen3 done"; pack
[ "$(left)" -gt 60 ] && timeout $(( $(left) - 45 )) bash bench/device.sh "ops ^(sparse_attn|sparse_attn.cp_async|sparse_attn.overlap|sparse_attn.overlap.cp_async)/" 2>&1 | \
  grep -E "^(sparse|dense)_attn|^== " | cut -c1-170 | tee -a "$OUT/summary2.txt"
log "ops done"; pack
for r in 1 2 3; do
  for e in auto cp_async; do
    [ "$(left)" -gt 25 ] || break 2
    timeout $(( $(left) - 15 )) .dev/salasim run --config scenarios/models/minicpm-sala-9b.json --context 64K --decode 8 --attn-engine $e > "$OUT/ab_${e}_$r.txt" 2>&1
    echo "round $r $e: $(grep -E 'TTFT|sparse_attn|tiles' "$OUT/ab_${e}_$r.txt" | tr '\n' ' ' | cut -c1-300)" | tee -a "$OUT/summary2.txt"
  done
done
log "end"; pack
(cd "$OUT" && find . -mindepth 1 ! -name C2.tgz ! -name summary2.txt -exec rm -rf {} + 2>/dev/null); ls -la "$OUT"
