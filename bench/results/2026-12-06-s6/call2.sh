#!/usr/bin/env bash
# Device call 2 (2026-12-06, sixth session), the binary of i36-s6 (.dev): dense calls and shared-pick warpgroups on
# the pipelined wgmma walk (wg_walk); the selection as in e755269. Tests, goldens, verify, sanitizers, the op A/B in
# one binary (.in_turn) and against e755269 (.dev-base) 3 rounds alternating, Nsight Compute on the ring, the 1M spot
# check, dense beside SDPA, a 64K prefill each side.
set -uo pipefail
cd "$(dirname "$0")/.."
export OUT=${OUT:-/tmp/salasim-out}; mkdir -p "$OUT"
T0=$SECONDS
left() { echo $((${CALL_BUDGET:-575} - (SECONDS - T0))); }
log() { echo "== [$((SECONDS - T0)) s] $*" | tee -a "$OUT/summary.txt"; }
pack() { (cd "$OUT" && find . -type f -size -1500k ! -name C.tgz ! -name '*.h5' ! -name '*.json' -print0 | tar czf /tmp/C.tgz --null -T - && mv /tmp/C.tgz "$OUT/C.tgz"); }
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
K="[sparse_attn]~[large],[dense_attn]~[large]"
timeout 40 compute-sanitizer --tool memcheck --error-exitcode 9 .dev/tests/salasim_gpu_tests "$K" > "$OUT/memcheck.log" 2>&1
log "memcheck rc $?: $(grep -E 'ERROR SUMMARY' "$OUT/memcheck.log" | tail -1)"
timeout 100 compute-sanitizer --tool racecheck --error-exitcode 9 .dev/tests/salasim_gpu_tests "$K" > "$OUT/racecheck.log" 2>&1
log "racecheck rc $?: $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' "$OUT/racecheck.log" | tail -1)"
pack
F='^dense_attn(\.in_turn)?/|^sparse_attn(\.overlap|\.overlap\.in_turn)?/(256K|1M)/'
FB='^dense_attn/|^sparse_attn(\.overlap)?/(256K|1M)/'
for r in 1 2 3; do
  for v in base new; do
    [ "$(left)" -gt 170 ] || break 2
    d=.dev f=$F; [ $v = base ] && d=.dev-base f=$FB
    LD_LIBRARY_PATH=$PWD/.dev/lib timeout 100 $d/bench/salasim_ops_bench --benchmark_filter="$f" --benchmark_counters_tabular=true > "$OUT/ops_${v}_$r.txt" 2>&1
    log "round $r $v: $(grep -E '^(sparse|dense)' "$OUT/ops_${v}_$r.txt" | awk '{print $1, $2}' | sed 's#/min_time:0.300/manual_time##' | tr '\n' ' ')"
  done
done
pack
M=sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,smsp__inst_executed.avg.per_cycle_active,dram__throughput.avg.pct_of_peak_sustained_elapsed
for c in 'dense_attn/16K' 'sparse_attn.overlap/1M' 'dense_attn.in_turn/16K'; do
  [ "$(left)" -gt 130 ] || break
  tag=$(echo $c | tr -c 'A-Za-z0-9' _)
  LD_LIBRARY_PATH=$PWD/.dev/lib timeout 40 ncu --clock-control none -k "regex:ring_kernel" -c 1 --section SpeedOfLight --section WarpStateStats --section Occupancy --metrics "$M" .dev/bench/salasim_ops_bench --benchmark_filter="^$c/" > "$OUT/ncu_$tag.txt" 2>&1
  log "ncu $c: $(grep -E 'Duration|hmma|pipe_xu|per_cycle|dram__|Achieved Occ|Registers Per' "$OUT/ncu_$tag.txt" | awk '{print $NF}' | tr '\n' ' ') (duration, hmma, xu, ipc, dram, regs, occupancy: see file)"
done
pack
[ "$(left)" -gt 110 ] && { timeout 100 bash bench/device.sh "spot scenarios/sala-9b-1m.json" 2>&1 | grep -E "^== |PASS|FAIL|taps|tie" | tee -a "$OUT/summary.txt"; log "spot done"; pack; }
[ "$(left)" -gt 60 ] && { timeout 55 bash bench/device.sh "peers 16K 16K" > "$OUT/peers_step.txt" 2>&1; log "peers: $(grep -E '"op": "attn"' "$OUT/peers.txt" | cut -c1-200 | tr '\n' ' ')"; pack; }
for v in new base; do
  [ "$(left)" -gt 14 ] || break
  d=.dev; [ $v = base ] && d=.dev-base
  LD_LIBRARY_PATH=$PWD/.dev/lib timeout 12 $d/salasim run --config scenarios/models/minicpm-sala-9b.json --context 64K --decode 4 > "$OUT/run64K_$v.txt" 2>&1
  log "64K $v: $(grep -E '^TTFT|prefill by op' "$OUT/run64K_$v.txt" | tr '\n' ' ' | cut -c1-300)"
done
log end; pack
(cd "$OUT" && find . -mindepth 1 ! -name C.tgz ! -name 'tiny-*.h5' ! -name summary.txt -exec rm -rf {} + 2>/dev/null); ls -la "$OUT"
