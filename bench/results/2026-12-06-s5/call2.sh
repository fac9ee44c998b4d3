#!/usr/bin/env bash
# Device call 2 (2026-12-06, fifth session): the ring kernel's warpgroup path (attend_block_wg, 38e6d7f, .dev): GPU
# attention tests, memcheck and racecheck on it, then the op A/B over AttnArgs::wg_takers (5 = every block on the
# warps' own mma.sync, as before), dense beside torch SDPA, and a 256K prefill against b075b3b (.dev-base).
set -uo pipefail
cd "$(dirname "$0")/.."
export OUT=${OUT:-/tmp/salasim-out}; mkdir -p "$OUT"
T0=$SECONDS
left() { echo $((${CALL_BUDGET:-570} - (SECONDS - T0))); }
log() { echo "== [$((SECONDS - T0)) s] $*" | tee -a "$OUT/summary.txt"; }
pack() { (cd "$OUT" && tar czf /tmp/C.tgz --exclude=C.tgz . && mv /tmp/C.tgz "$OUT/C.tgz"); }
export SALASIM_BUILD=.dev
bash bench/device.sh gpu > /dev/null 2>&1
log "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); new $(.dev/salasim --version | head -1); base $(.dev-base/salasim --version | head -1)"
timeout 200 .dev/tests/salasim_gpu_tests "[sparse_attn],[dense_attn]" -r compact > "$OUT/tests.txt" 2>&1; log "tests rc $?: $(tail -2 "$OUT/tests.txt" | tr '\n' ' ')"
grep -B3 -A20 "FAILED" "$OUT/tests.txt" | head -60
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 .dev/tests/salasim_gpu_tests "[sparse_attn]~[large],[dense_attn]~[large]" > "$OUT/${tool}.log" 2>&1
  log "$tool rc $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/${tool}.log" | tail -1)"
done
pack
OB() { LD_LIBRARY_PATH=$PWD/.dev/lib timeout 150 .dev/bench/salasim_ops_bench --benchmark_counters_tabular=true "$@"; }
F='^(sparse_attn|sparse_attn\.overlap)/(256K|1M)|^dense_attn/'
for r in 1 2 3; do
  for wt in 5 0; do
    [ "$(left)" -gt 250 ] || break 2
    SALASIM_ATTN_WG_TAKERS=$wt OB --benchmark_filter="$F" > "$OUT/ops_wt${wt}_$r.txt" 2>&1
    log "round $r wg_takers $wt: $(grep -E '^(sparse|dense)' "$OUT/ops_wt${wt}_$r.txt" | awk '{print $1, $2}' | sed 's#/min_time:0.300/manual_time##' | tr '\n' ' ')"
  done
done
for wt in 1 3 4; do
  [ "$(left)" -gt 200 ] || break
  SALASIM_ATTN_WG_TAKERS=$wt OB --benchmark_filter="$F" > "$OUT/ops_wt${wt}.txt" 2>&1
  log "wg_takers $wt: $(grep -E '^(sparse|dense)' "$OUT/ops_wt${wt}.txt" | awk '{print $1, $2}' | sed 's#/min_time:0.300/manual_time##' | tr '\n' ' ')"
done
pack
[ "$(left)" -gt 150 ] && { bash bench/device.sh "peers 16K 16K,64K" > "$OUT/peers_step.txt" 2>&1; log "peers: $(grep -iE 'sdpa|dense' "$OUT/peers.txt" | tr '\n' ' ' | cut -c1-600)"; }
pack
for v in new base; do
  [ "$(left)" -gt 40 ] || break
  d=.dev; [ $v = base ] && d=.dev-base
  LD_LIBRARY_PATH=$PWD/.dev/lib timeout 80 $d/salasim run --config scenarios/models/minicpm-sala-9b.json --context 256K --decode 4 > "$OUT/run256K_$v.txt" 2>&1
  log "256K $v: $(grep -E '^TTFT|prefill by op|sparse prefill' "$OUT/run256K_$v.txt" | tr '\n' ' ' | cut -c1-400)"
done
log end; pack
(cd "$OUT" && find . -mindepth 1 ! -name C.tgz ! -name summary.txt -exec rm -rf {} + 2>/dev/null); ls -la "$OUT"
