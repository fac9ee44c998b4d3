#!/usr/bin/env bash
# Device call 1 (2026-12-06, sixth session), the binary of i36-s6 (.dev): the selection's half tiles beside the next
# product, dense attention's softmax beside the P V before it, P fragments before the fence. Tests, goldens, verify,
# sanitizers, the op A/B against e755269 (.dev-base) 3 rounds alternating, Nsight Compute on both sides' selection,
# the 1M spot check, dense beside SDPA, a 256K prefill each side.
set -uo pipefail
cd "$(dirname "$0")/.."
export OUT=${OUT:-/tmp/salasim-out}; mkdir -p "$OUT"
T0=$SECONDS
left() { echo $((${CALL_BUDGET:-570} - (SECONDS - T0))); }
log() { echo "== [$((SECONDS - T0)) s] $*" | tee -a "$OUT/summary.txt"; }
pack() { (cd "$OUT" && tar czf /tmp/C.tgz --exclude=C.tgz --exclude='tiny-*.h5' . && mv /tmp/C.tgz "$OUT/C.tgz"); }
export SALASIM_BUILD=.dev
log "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); new $(.dev/salasim --version | head -1)"
bash bench/device.sh gpu tests model 2>&1 | grep -E "^== |FAILED|passed|failed" | tee -a "$OUT/summary.txt" | tail -20
grep -E "test cases" "$OUT/gpu_tests.log" "$OUT/gpu_model.log" | tee -a "$OUT/summary.txt"
grep -B3 -A25 "FAILED" "$OUT/gpu_tests.log" | head -80
log "tests done"; pack
if ! grep -q FAILED "$OUT/summary.txt"; then
  bash bench/device.sh "golden scenarios/tiny-short.json" "golden scenarios/tiny-sparse.json" verify 2>&1 | grep -E "^== |taps|FAIL" | tee -a "$OUT/summary.txt"
  log "goldens + verify done"; pack
fi
K="[sparse_attn]~[large],[dense_attn]~[large],[select_blocks]~[large]"
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 .dev/tests/salasim_gpu_tests "$K" > "$OUT/memcheck.log" 2>&1
log "memcheck rc $?: $(grep -E 'ERROR SUMMARY' "$OUT/memcheck.log" | tail -1)"
timeout 70 compute-sanitizer --tool racecheck --error-exitcode 9 .dev/tests/salasim_gpu_tests "$K" > "$OUT/racecheck.log" 2>&1
log "racecheck rc $?: $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' "$OUT/racecheck.log" | tail -1)"
pack
F='^select_blocks/(16K|256K|1M)/|^dense_attn/|^sparse_attn(\.overlap)?/1M/'
for r in 1 2 3; do
  for v in base new; do
    [ "$(left)" -gt 200 ] || break 2
    d=.dev; [ $v = base ] && d=.dev-base
    LD_LIBRARY_PATH=$PWD/.dev/lib timeout 100 $d/bench/salasim_ops_bench --benchmark_filter="$F" --benchmark_counters_tabular=true > "$OUT/ops_${v}_$r.txt" 2>&1
    log "round $r $v: $(grep -E '^(sparse|dense|select)' "$OUT/ops_${v}_$r.txt" | awk '{print $1, $2}' | sed 's#/min_time:0.300/manual_time##' | tr '\n' ' ')"
  done
done
pack
M=sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active,smsp__inst_executed.avg.per_cycle_active,dram__throughput.avg.pct_of_peak_sustained_elapsed
for v in new base; do
  [ "$(left)" -gt 170 ] || break
  d=.dev; [ $v = base ] && d=.dev-base
  LD_LIBRARY_PATH=$PWD/.dev/lib timeout 60 ncu --clock-control none -k "regex:lse_partial_wg|score_pool_wg" -c 2 --section SpeedOfLight --section WarpStateStats --metrics "$M" $d/bench/salasim_ops_bench --benchmark_filter='^select_blocks/1M/' > "$OUT/ncu_select_$v.txt" 2>&1
  log "ncu select $v: $(grep -E '^  [a-z_]+_kernel|Duration|hmma|pipe_xu|per_cycle' "$OUT/ncu_select_$v.txt" | awk '{$1=$1};1' | cut -c1-70 | tr '\n' '|')"
  LD_LIBRARY_PATH=$PWD/.dev/lib timeout 60 ncu --clock-control none -k "regex:ring_kernel" -c 1 --section SpeedOfLight --section WarpStateStats --metrics "$M" $d/bench/salasim_ops_bench --benchmark_filter='^dense_attn/16K/' > "$OUT/ncu_dense_$v.txt" 2>&1
  log "ncu dense $v: $(grep -E 'Duration|hmma|pipe_xu|per_cycle' "$OUT/ncu_dense_$v.txt" | awk '{$1=$1};1' | cut -c1-70 | tr '\n' '|')"
done
pack
[ "$(left)" -gt 110 ] && { timeout 100 bash bench/device.sh "spot scenarios/sala-9b-1m.json" 2>&1 | grep -E "^== |PASS|FAIL|taps|tie" | tee -a "$OUT/summary.txt"; log "spot done"; pack; }
[ "$(left)" -gt 75 ] && { timeout 70 bash bench/device.sh "peers 16K 16K,64K" > "$OUT/peers_step.txt" 2>&1; log "peers: $(grep -E '"op": "attn"' "$OUT/peers.txt" | cut -c1-200 | tr '\n' ' ')"; pack; }
for v in new base; do
  [ "$(left)" -gt 25 ] || break
  d=.dev; [ $v = base ] && d=.dev-base
  LD_LIBRARY_PATH=$PWD/.dev/lib timeout 25 $d/salasim run --config scenarios/models/minicpm-sala-9b.json --context 256K --decode 4 > "$OUT/run256K_$v.txt" 2>&1
  log "256K $v: $(grep -E '^TTFT|prefill by op' "$OUT/run256K_$v.txt" | tr '\n' ' ' | cut -c1-300)"
done
log end; pack
(cd "$OUT" && find . -mindepth 1 ! -name C.tgz ! -name 'tiny-*.h5' ! -name summary.txt -exec rm -rf {} + 2>/dev/null); ls -la "$OUT"
