#!/usr/bin/env bash
# Device call (2026-12-07, tenth session), .dev = a8fed01, for the last ~300 s of the session's device time: call 1
# cut to what decides the landing. The GLA tests on both engines (stop if they fail); the op A/B gla.wgmma against
# gla.mma_sync, 2 rounds alternating; the verdict; if the one pass is faster at 16K, 256K and 1M, both goldens
# re-recorded (each runs verify on the GPU against the reference), then the op tests outside [gla] as time allows;
# else the knobs sweep.
set -uo pipefail
cd "$(dirname "$0")/.."
. bench/call_lib.sh
B=$SALASIM_BUILD
log "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); $($B/salasim --version | head -1)"
timeout 90 $B/tests/salasim_gpu_tests "[gla]" > "$OUT/gla_tests.log" 2>&1
rc=$?
log "gla tests rc $rc: $(grep -E 'test cases|assertions' "$OUT/gla_tests.log" | tail -2 | tr '\n' ' ')"
if [ $rc -ne 0 ]; then grep -B5 -A40 "FAILED" "$OUT/gla_tests.log" | head -150; finish; exit 0; fi
for r in 1 2; do
  for f in '^gla\.wgmma/' '^gla\.mma_sync/'; do
    tag=$(echo "$f" | tr -c 'a-z_' _)
    timeout 40 $B/bench/salasim_ops_bench --benchmark_filter="$f" --benchmark_counters_tabular=true > "$OUT/ops_${tag}_$r.txt" 2>&1
    log "round $r $f: $(grep -E '^gla' "$OUT/ops_${tag}_$r.txt" | awk '{print $1, $2, $3}' | sed 's#/min_time:0.300/manual_time##' | tr '\n' ' ')"
  done
done
pack
verdict=$(python3 - "$OUT" <<'PY'
import glob, sys
best = {}
for f in glob.glob(sys.argv[1] + "/ops_*.txt"):
    for line in open(f):
        if line.startswith("gla."):
            x = line.split()
            name = x[0].split("/min_time")[0]
            best[name] = min(best.get(name, 1e30), float(x[10]))
sizes = ["16K", "256K", "1M"]
ok = all(best.get("gla.wgmma/" + z, 1e30) < best.get("gla.mma_sync/" + z, 0) for z in sizes)
print(("land" if ok else "profile") + " " + " ".join(f"{z}:{best.get('gla.wgmma/'+z)}/{best.get('gla.mma_sync/'+z)}" for z in sizes))
PY
)
log "verdict: $verdict"
if [ "${verdict%% *}" = profile ]; then
  K=$B/bench/salasim_ops_bench_knobs
  for v in "SALASIM_GLA_SEG_CHUNKS=4" "SALASIM_GLA_SEG_CHUNKS=16" "SALASIM_GLA_L2_HINTS=0"; do
    [ "$(left)" -gt 40 ] || break
    tag=$(echo "$v" | tr -c 'A-Za-z0-9_' _)
    env $v timeout 40 $K --benchmark_filter='^gla\.wgmma/' --benchmark_counters_tabular=true > "$OUT/knobs_$tag.txt" 2>&1
    log "knobs $v: $(grep -E '^gla' "$OUT/knobs_$tag.txt" | awk '{print $1, $2, $3}' | sed 's#/min_time:0.300/manual_time##' | tr '\n' ' ')"
  done
  log end
  finish
  exit 0
fi
for sc in tiny-short tiny-sparse; do
  timeout 100 $B/salasim golden record --scenario scenarios/$sc.json --out "$OUT/$sc.h5" > "$OUT/golden_$sc.txt" 2>&1
  log "golden $sc rc $?: $(grep -E '^all|^wrote|FAIL' "$OUT/golden_$sc.txt" | tr '\n' ' ')"
done
pack
if [ "$(left)" -gt 40 ]; then
  timeout $(($(left) - 15)) $B/tests/salasim_gpu_tests "~[gla]~[model]" -r compact > "$OUT/gpu_tests.log" 2>&1
  rc=$?; log "op tests (not [gla], not [model]) rc $rc: $(tail -2 "$OUT/gpu_tests.log" | tr '\n' ' ')"
  [ $rc -ne 0 ] && grep -B2 -A25 "FAILED" "$OUT/gpu_tests.log" | head -60
fi
log end
finish
