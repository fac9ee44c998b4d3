#!/usr/bin/env bash
# Device call 3 (2026-12-06, fifth session), the binary of 4ef3ad9 (.dev; the ring's warpgroup path, wg_takers 3; DecodeGraphStats::steps derived):
# every GPU op and model test, both goldens re-recorded, verify, the 1M spot check, memcheck on the attention tests;
# the op A/B against b075b3b's ops bench (.dev-base), 3 rounds alternating; dense beside torch SDPA; a 256K prefill
# against b075b3b's salasim; the 2048K spot check where time is left.
set -uo pipefail
cd "$(dirname "$0")/.."
export OUT=${OUT:-/tmp/salasim-out}; mkdir -p "$OUT"
T0=$SECONDS
left() { echo $((${CALL_BUDGET:-570} - (SECONDS - T0))); }
log() { echo "== [$((SECONDS - T0)) s] $*" | tee -a "$OUT/summary.txt"; }
pack() { (cd "$OUT" && tar czf /tmp/C.tgz --exclude=C.tgz --exclude=all.tgz --exclude='tiny-*.h5' . && mv /tmp/C.tgz "$OUT/C.tgz"); }
export SALASIM_BUILD=.dev
log "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); new $(.dev/salasim --version | head -1)"
bash bench/device.sh gpu tests model 2>&1 | grep -E "^== |FAILED|passed|failed" | tee -a "$OUT/summary.txt" | tail -20
grep -E "test cases" "$OUT/gpu_tests.log" "$OUT/gpu_model.log" | tee -a "$OUT/summary.txt"
grep -B3 -A25 "FAILED" "$OUT/gpu_tests.log" | head -80
log "tests done"; pack
bash bench/device.sh "golden scenarios/tiny-short.json" "golden scenarios/tiny-sparse.json" verify 2>&1 | grep -E "^== |taps|FAIL" | tee -a "$OUT/summary.txt"
log "goldens + verify done"; pack
timeout 100 bash bench/device.sh "spot scenarios/sala-9b-1m.json" 2>&1 | grep -E "^== |PASS|FAIL|taps" | tee -a "$OUT/summary.txt"
log "spot done"; pack
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 .dev/tests/salasim_gpu_tests "[sparse_attn]~[large],[dense_attn]~[large]" > "$OUT/memcheck.log" 2>&1
log "memcheck rc $?: $(grep -E 'ERROR SUMMARY' "$OUT/memcheck.log" | tail -1)"
F='^(sparse_attn|sparse_attn\.overlap)/(256K|1M)|^dense_attn/'
for r in 1 2 3; do
  for v in base new; do
    [ "$(left)" -gt 150 ] || break 2
    d=.dev; [ $v = base ] && d=.dev-base
    LD_LIBRARY_PATH=$PWD/.dev/lib timeout 100 $d/bench/salasim_ops_bench --benchmark_filter="$F" --benchmark_counters_tabular=true > "$OUT/ops_${v}_$r.txt" 2>&1
    log "round $r $v: $(grep -E '^(sparse|dense)' "$OUT/ops_${v}_$r.txt" | awk '{print $1, $2}' | sed 's#/min_time:0.300/manual_time##' | tr '\n' ' ')"
  done
done
pack
[ "$(left)" -gt 200 ] && { bash bench/device.sh "peers 16K 16K" > "$OUT/peers_step.txt" 2>&1; log "peers: $(grep -E '"op": "attn"' "$OUT/peers.txt" | cut -c1-200 | tr '\n' ' ')"; }
pack
if [ "$(left)" -gt 145 ]; then
  timeout $(( $(left) - 10 )) bash bench/device.sh "spot scenarios/sala-9b-1m.json 8 --tokens 2097152" 2>&1 | grep -E "^== |PASS|FAIL|tie|prefill" | tee -a "$OUT/summary.txt"
  log "spot 2048K done"; pack
fi
for v in new base; do
  [ "$(left)" -gt 35 ] || break
  d=.dev; [ $v = base ] && d=.dev-base
  LD_LIBRARY_PATH=$PWD/.dev/lib timeout 80 $d/salasim run --config scenarios/models/minicpm-sala-9b.json --context 256K --decode 4 > "$OUT/run256K_$v.txt" 2>&1
  log "256K $v: $(grep -E '^TTFT|prefill by op' "$OUT/run256K_$v.txt" | tr '\n' ' ' | cut -c1-300)"
done
log end; pack
(cd "$OUT" && find . -mindepth 1 ! -name C.tgz ! -name 'tiny-*.h5' ! -name summary.txt -exec rm -rf {} + 2>/dev/null); ls -la "$OUT"
