#!/usr/bin/env bash
# Device call 9 of 2026-12-07-s11 (run as bench/.call7.sh): .dev = 2ed517a (the one-pass GLA's chain link loading 16 values at a
# time before their stores), .old/salasim_ops_bench = a8fed01's ops benchmark (main's engine). The GLA tests first
# (stop there if they fail); the op A/B gla.wgmma new against old, 3 rounds alternating; a verdict; where the new is
# faster at every size: both goldens (each runs verify), memcheck and racecheck on [gla]; then Nsight Compute's stall
# reasons on the new kernel at 1M and the 1M spot check, as the time left allows.
set -uo pipefail
cd "$(dirname "$0")/.."
. bench/call_lib.sh
B=$SALASIM_BUILD
log "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); $($B/salasim --version | head -1)"
timeout 120 $B/tests/salasim_gpu_tests "[gla]" > "$OUT/gla_tests.log" 2>&1
rc=$?
log "gla tests rc $rc: $(grep -E 'test cases|assertions' "$OUT/gla_tests.log" | tail -2 | tr '\n' ' ')"
if [ $rc -ne 0 ]; then grep -B5 -A40 "FAILED" "$OUT/gla_tests.log" | head -150; finish; exit 0; fi
for r in 1 2 3; do
  for side in new old; do
    bin=$B/bench/salasim_ops_bench; [ $side = old ] && bin=.old/salasim_ops_bench
    timeout 60 $bin --benchmark_filter='^gla\.wgmma/' --benchmark_counters_tabular=true > "$OUT/ops_${side}_$r.txt" 2>&1
    log "round $r $side: $(grep -E '^gla' "$OUT/ops_${side}_$r.txt" | awk '{print $1, $11}' | sed 's#/min_time:0.300/manual_time##' | tr '\n' ' ')"
  done
done
pack
verdict=$(python3 - "$OUT" <<'PY'
import glob, sys
best = {}
for f in glob.glob(sys.argv[1] + "/ops_*.txt"):
    side = f.rsplit("/", 1)[1].split("_")[1]
    for line in open(f):
        if line.startswith("gla."):
            x = line.split()
            key = (side, x[0].split("/")[1])
            best[key] = min(best.get(key, 1e30), float(x[10]))
sizes = ["16K", "256K", "1M"]
ok = all(best.get(("new", z), 1e30) < best.get(("old", z), 0) for z in sizes)
print(("land" if ok else "keep") + " " + " ".join(f"{z}:{best.get(('new', z))}/{best.get(('old', z))}" for z in sizes))
PY
)
log "verdict (best median, new/old): $verdict"
M='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.avg.per_cycle_active,smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct'
timeout 60 ncu --clock-control none -k regex:onepass_kernel -c 1 --section SpeedOfLight --metrics "$M" $B/bench/salasim_ops_bench --benchmark_filter='^gla\.wgmma/1M/' > "$OUT/ncu_stalls_1M.txt" 2>&1
log "ncu new 1M rc $?: $(grep -E 'Duration|long_scoreboard|barrier_per|stalled_wait|per_cycle|dram__bytes|hit_rate' "$OUT/ncu_stalls_1M.txt" | awk '{print $1, $NF}' | tr '\n' ' ')"
pack
if [ "${verdict%% *}" != land ]; then log end; finish; exit 0; fi
for sc in tiny-short tiny-sparse; do
  timeout 100 $B/salasim golden record --scenario scenarios/$sc.json --out "$OUT/$sc.h5" > "$OUT/golden_$sc.txt" 2>&1
  log "golden $sc rc $?: $(grep -E '^all|^wrote|FAIL' "$OUT/golden_$sc.txt" | tr '\n' ' ')"
done
pack
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/salasim_gpu_tests "[gla]" > "$OUT/memcheck.log" 2>&1
log "memcheck [gla] rc $?: $(grep -E 'ERROR SUMMARY' "$OUT/memcheck.log" | tail -1)"
[ "$(left)" -gt 80 ] && timeout $(($(left) - 20)) compute-sanitizer --tool racecheck --error-exitcode 9 $B/tests/salasim_gpu_tests "[gla]" > "$OUT/racecheck.log" 2>&1
log "racecheck [gla] rc $?: $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' "$OUT/racecheck.log" | tail -1)"
pack
if [ "$(left)" -gt 90 ]; then
  timeout $(($(left) - 15)) bash bench/device.sh "spot scenarios/sala-9b-1m.json 8" > "$OUT/spot.txt" 2>&1
  log "spot 1M: $(grep -E 'spot check' "$OUT/spot.txt" | tail -1)"
fi
log end
finish
