#!/usr/bin/env bash
# Device call 1 (2026-12-06, fifth session): the sparse prefill cut into launches of one wave and one kv group
# (AttnArgs::launch_queries, 15f2132, .dev) against one launch (the .one_launch cases; b075b3b's salasim, .dev-base).
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
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 .dev/tests/salasim_gpu_tests "[sparse_attn]~[large]" > "$OUT/memcheck.log" 2>&1
log "memcheck rc $?: $(grep -E 'ERROR SUMMARY' "$OUT/memcheck.log" | tail -1)"
pack
OB() { LD_LIBRARY_PATH=$PWD/.dev/lib timeout 150 .dev/bench/salasim_ops_bench --benchmark_counters_tabular=true "$@"; }
F='^sparse_attn(\.one_launch|\.overlap|\.overlap\.one_launch)?/(256K|1M)'
for r in 1 2 3; do
  [ "$(left)" -gt 300 ] || break
  OB --benchmark_filter="$F" > "$OUT/ops_$r.txt" 2>&1
  log "round $r: $(grep -E '^sparse_attn' "$OUT/ops_$r.txt" | awk '{print $1, $2}' | sed 's#/min_time:0.300/manual_time##' | tr '\n' ' ')"
done
pack
for lq in 264 528 2112 4224 8448; do
  [ "$(left)" -gt 240 ] || break
  SALASIM_ATTN_LAUNCH_QUERIES=$lq OB --benchmark_filter='^sparse_attn/1M' > "$OUT/ops_lq$lq.txt" 2>&1
  log "launch_queries $lq: $(grep -E '^sparse_attn' "$OUT/ops_lq$lq.txt" | awk '{print $1, $2}' | tr '\n' ' ')"
done
pack
for v in new base new base; do
  [ "$(left)" -gt 100 ] || break
  d=.dev; [ $v = base ] && d=.dev-base
  LD_LIBRARY_PATH=$PWD/.dev/lib timeout 80 $d/salasim run --config scenarios/models/minicpm-sala-9b.json --context 256K --decode 4 > "$OUT/run256K_$v.txt" 2>&1
  log "256K $v: $(grep -E '^TTFT|prefill by op|sparse prefill' "$OUT/run256K_$v.txt" | tr '\n' ' ' | cut -c1-400)"
done
pack
if [ "$(left)" -gt 90 ]; then
  M=dram__bytes_read.sum,lts__t_sector_hit_rate.pct,gpu__time_duration.sum,lts__t_sectors_srcunit_tex_op_read.sum
  for c in sparse_attn:40 sparse_attn.one_launch:3; do
    LD_LIBRARY_PATH=$PWD/.dev/lib timeout 40 ncu --metrics $M -k regex:ring_kernel --launch-skip ${c#*:} --launch-count 2 \
      .dev/bench/salasim_ops_bench --benchmark_filter="^${c%:*}/1M" > "$OUT/ncu_${c%:*}.txt" 2>&1
    log "ncu ${c%:*}: $(grep -E 'dram__bytes|hit_rate|duration|sectors_src' "$OUT/ncu_$c.txt" | awk '{print $1, $(NF-1), $NF}' | tr '\n' ' ')"
  done
fi
log end; pack
(cd "$OUT" && find . -mindepth 1 ! -name C.tgz ! -name summary.txt -exec rm -rf {} + 2>/dev/null); ls -la "$OUT"
