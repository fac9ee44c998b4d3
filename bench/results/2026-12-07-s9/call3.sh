#!/usr/bin/env bash
# Device call (2026-12-07, ninth session), .dev = 7ca6cfb, measure only (too little device time was left to land:
# goldens and the whole GPU suite need ~330 s): the GLA tests on both engines; the op A/B gla.wgmma against
# gla.mma_sync, 3 rounds alternating; memcheck on [gla]; fla beside it; Nsight Compute on the kernel at 1M.
set -uo pipefail
cd "$(dirname "$0")/.."
. bench/call_lib.sh
B=$SALASIM_BUILD
log "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); $($B/salasim --version | head -1)"
timeout 90 $B/tests/salasim_gpu_tests "[gla]" > "$OUT/gla_tests.log" 2>&1
rc=$?
log "gla tests rc $rc: $(grep -E 'test cases|assertions' "$OUT/gla_tests.log" | tail -2 | tr '\n' ' ')"
if [ $rc -ne 0 ]; then grep -B5 -A40 "FAILED" "$OUT/gla_tests.log" | head -150; finish; exit 0; fi
for r in 1 2 3; do
  for f in '^gla\.wgmma/' '^gla\.mma_sync/'; do
    tag=$(echo "$f" | tr -c 'a-z_' _)
    timeout 40 $B/bench/salasim_ops_bench --benchmark_filter="$f" --benchmark_counters_tabular=true > "$OUT/ops_${tag}_$r.txt" 2>&1
    log "round $r $f: $(grep -E '^gla' "$OUT/ops_${tag}_$r.txt" | awk '{print $1, $2, $3}' | sed 's#/min_time:0.300/manual_time##' | tr '\n' ' ')"
  done
done
pack
[ "$(left)" -gt 60 ] && timeout 45 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/salasim_gpu_tests "[gla]" > "$OUT/memcheck.log" 2>&1
log "memcheck [gla] rc $?: $(grep -E 'ERROR SUMMARY' "$OUT/memcheck.log" | tail -1)"
pack
M=sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.avg.per_cycle_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,dram__bytes_write.sum
if [ "$(left)" -gt 70 ]; then
  timeout 60 ncu --clock-control none -k "regex:onepass_kernel" -c 1 --section SpeedOfLight --section WarpStateStats --section Occupancy --section SchedulerStats --metrics "$M" $B/bench/salasim_ops_bench --benchmark_filter="^gla\.wgmma/1M/" > "$OUT/ncu_gla_1M.txt" 2>&1
  log "ncu gla.wgmma/1M rc $?: $(grep -E 'Duration|hmma|per_cycle|dram__|hit_rate' "$OUT/ncu_gla_1M.txt" | awk '{print $1, $NF}' | tr '\n' ' ')"
fi
pack
if [ "$(left)" -gt 80 ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > "$OUT/pip.log" 2>&1
  PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 timeout $(($(left) - 10)) python3 bench/peers.py --lib $B/bench/libsalasim_capi.so --gla 16K,256K,1M --attn '' --json "$OUT/peers.json" > "$OUT/peers.txt" 2>&1
  log "peers rc $?"; grep -E "gla" "$OUT/peers.txt" | tail -3 | tee -a "$OUT/summary.txt"
fi
log end
finish
