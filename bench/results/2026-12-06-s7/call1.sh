#!/usr/bin/env bash
# Device call 1 (2026-12-06, seventh session), .dev = i36-s7 (the dense gate of i36-s6-gate, GLA's one-pass wgmma
# kernel). The GLA tests first (stop there if they fail), the attention tests of the gate, sanitizers on the GLA
# tests, the GLA op A/B in one binary (gla = one pass, gla.mma_sync = the three launches as before) 3 rounds
# alternating, fla beside it, Nsight Compute on the one-pass kernel.
set -uo pipefail
cd "$(dirname "$0")/.."
export OUT=${OUT:-/tmp/salasim-out}; mkdir -p "$OUT"
T0=$SECONDS
left() { echo $((${CALL_BUDGET:-570} - (SECONDS - T0))); }
log() { echo "== [$((SECONDS - T0)) s] $*" | tee -a "$OUT/summary.txt"; }
pack() { (cd "$OUT" && find . -type f -size -1500k ! -name C.tgz ! -name '*.h5' ! -name '*.json' -print0 | tar czf /tmp/C.tgz --null -T - && mv /tmp/C.tgz "$OUT/C.tgz"); }
export SALASIM_BUILD=.dev LD_LIBRARY_PATH=$PWD/.dev/lib
src_dir=$(cat .dev/source_dir); [ -e "$src_dir" ] || { mkdir -p "$(dirname "$src_dir")" && ln -s "$PWD" "$src_dir"; }
[ -e build/salasim ] || { mkdir -p build && ln -s ../.dev/salasim build/salasim; }
log "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); new $(.dev/salasim --version | head -1)"
timeout 120 .dev/tests/salasim_gpu_tests "[gla]" > "$OUT/gla_tests.log" 2>&1
rc=$?
log "gla tests rc $rc: $(grep -E 'test cases|assertions' "$OUT/gla_tests.log" | tail -2 | tr '\n' ' ')"
if [ $rc -ne 0 ]; then grep -B5 -A30 "FAILED" "$OUT/gla_tests.log" | head -150; pack; exit 0; fi
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 .dev/tests/salasim_gpu_tests "[gla]" > "$OUT/memcheck.log" 2>&1
log "memcheck [gla] rc $?: $(grep -E 'ERROR SUMMARY' "$OUT/memcheck.log" | tail -1)"
timeout 100 compute-sanitizer --tool racecheck --error-exitcode 9 .dev/tests/salasim_gpu_tests "[gla]" > "$OUT/racecheck.log" 2>&1
log "racecheck [gla] rc $?: $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' "$OUT/racecheck.log" | tail -1)"
pack
for r in 1 2 3; do
  for f in '^gla/' '^gla\.mma_sync/'; do
    [ "$(left)" -gt 200 ] || break 2
    tag=$(echo "$f" | tr -c 'a-z_' _)
    timeout 80 .dev/bench/salasim_ops_bench --benchmark_filter="$f" --benchmark_counters_tabular=true > "$OUT/ops_${tag}_$r.txt" 2>&1
    log "round $r $f: $(grep -E '^gla' "$OUT/ops_${tag}_$r.txt" | awk '{print $1, $2, $3}' | sed 's#/min_time:0.300/manual_time##' | tr '\n' ' ')"
  done
done
pack
timeout 120 .dev/tests/salasim_gpu_tests "[sparse_attn]~[large],[dense_attn]~[large]" > "$OUT/attn_tests.log" 2>&1
log "attention tests rc $?: $(grep -E 'test cases|assertions' "$OUT/attn_tests.log" | tail -2 | tr '\n' ' ')"
grep -B5 -A30 "FAILED" "$OUT/attn_tests.log" | head -80
pack
if [ "$(left)" -gt 100 ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > "$OUT/pip.log" 2>&1
  PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 timeout 90 python3 bench/peers.py --lib .dev/bench/libsalasim_capi.so --gla 16K,256K,1M --attn '' --json "$OUT/peers.json" > "$OUT/peers.txt" 2>&1
  log "peers rc $?"; grep -E "gla" "$OUT/peers.txt" | tail -4 | tee -a "$OUT/summary.txt"
fi
pack
M=sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,smsp__inst_executed.avg.per_cycle_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct
if [ "$(left)" -gt 45 ]; then
  timeout 40 ncu --clock-control none -k "regex:onepass_kernel" -c 1 --section SpeedOfLight --section WarpStateStats --section Occupancy --section MemoryWorkloadAnalysis --metrics "$M" .dev/bench/salasim_ops_bench --benchmark_filter="^gla/1M/" > "$OUT/ncu_gla_1M.txt" 2>&1
  log "ncu gla/1M: $(grep -E 'Duration|hmma|pipe_xu|per_cycle|dram__|hit_rate|Achieved Occ' "$OUT/ncu_gla_1M.txt" | awk '{print $NF}' | tr '\n' ' ')"
fi
log end; pack
(cd "$OUT" && find . -mindepth 1 ! -name C.tgz ! -name summary.txt -exec rm -rf {} + 2>/dev/null); ls -la "$OUT"
