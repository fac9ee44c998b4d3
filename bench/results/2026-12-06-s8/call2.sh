#!/usr/bin/env bash
# Device call 2 (2026-12-06, eighth session), .dev = eeeed43 (automatic = the three launches, the one-pass engine
# on request; cuda_fail clears the error it reports). The GLA tests on both engines; the goldens re-recorded (each
# runs verify on its scenario); the op tests call 1 failed (an error left by the errors test); the model tests;
# racecheck on [gla]; Nsight Compute on the one-pass kernel at 1M; as the time left allows.
set -uo pipefail
cd "$(dirname "$0")/.."
. bench/call_lib.sh
B=$SALASIM_BUILD
log "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); $($B/salasim --version | head -1)"
timeout 100 $B/tests/salasim_gpu_tests "[gla]" > "$OUT/gla_tests.log" 2>&1
rc=$?
log "gla tests rc $rc: $(grep -E 'test cases|assertions' "$OUT/gla_tests.log" | tail -2 | tr '\n' ' ')"
if [ $rc -ne 0 ]; then grep -B5 -A40 "FAILED" "$OUT/gla_tests.log" | head -200; finish; exit 0; fi
for sc in tiny-short tiny-sparse; do
  timeout 100 $B/salasim golden record --scenario scenarios/$sc.json --out "$OUT/$sc.h5" > "$OUT/golden_$sc.txt" 2>&1
  log "golden $sc rc $?: $(grep -E '^all|^wrote|FAIL' "$OUT/golden_$sc.txt" | tr '\n' ' ')"
done
pack
timeout $(($(left) - 5)) $B/tests/salasim_gpu_tests "~[model]~[gla]" -r compact > "$OUT/gpu_tests.log" 2>&1
rc=$?; log "op tests rc $rc: $(tail -2 "$OUT/gpu_tests.log" | tr '\n' ' ')"
[ $rc -ne 0 ] && grep -B2 -A25 "FAILED" "$OUT/gpu_tests.log" | head -80
pack
if [ "$(left)" -gt 60 ]; then
  timeout $(($(left) - 30)) $B/tests/salasim_gpu_tests "[model]" -r compact > "$OUT/gpu_model.log" 2>&1
  rc=$?; log "model tests rc $rc: $(tail -2 "$OUT/gpu_model.log" | tr '\n' ' ')"
  [ $rc -ne 0 ] && grep -B2 -A25 "FAILED" "$OUT/gpu_model.log" | head -80
fi
pack
if [ "$(left)" -gt 60 ]; then
  timeout $(($(left) - 30)) compute-sanitizer --tool racecheck --error-exitcode 9 $B/tests/salasim_gpu_tests "[gla]" > "$OUT/racecheck.log" 2>&1
  log "racecheck [gla] rc $?: $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' "$OUT/racecheck.log" | tail -1)"
fi
M=sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.avg.per_cycle_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct
if [ "$(left)" -gt 45 ]; then
  timeout $(($(left) - 15)) ncu --clock-control none -k "regex:onepass_kernel" -c 1 --section SpeedOfLight --section WarpStateStats --section Occupancy --section MemoryWorkloadAnalysis --metrics "$M" $B/bench/salasim_ops_bench --benchmark_filter="^gla\.wgmma/1M/" > "$OUT/ncu_gla_1M.txt" 2>&1
  log "ncu gla.wgmma/1M: $(grep -E 'Duration|hmma|per_cycle|dram__|hit_rate|Achieved Occ' "$OUT/ncu_gla_1M.txt" | awk '{print $NF}' | tr '\n' ' ')"
fi
log end
finish
