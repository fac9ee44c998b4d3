#!/usr/bin/env bash
# One call on the GPU machine (the device tool): build for sm_90a, then the steps named on the command line.
#   bash bench/device.sh build tests sanitize model "run 64K" "run 1M" verify exitcodes ...
# With binaries built on another machine and carried (the device tool's carry), skip the build:
#   SALASIM_BUILD=build bash bench/device.sh gpu tests "run 2048K"
# A measured run for the latency model's calibration (its record at $OUT/reports/measured/h200/run_64K.json):
#   SALASIM_BUILD=build bash bench/device.sh gpu "measure 64K"
# Logs and JSON land in $OUT (the device tool brings them back); the last lines printed are a summary.
set -uo pipefail
cd "$(dirname "$0")/.."
export SALASIM_BUILD=${SALASIM_BUILD:-build-dev}
# OUT; a build carried from another machine made runnable here (its source path and build/salasim linked, its
# libraries on the search path): bench/call_lib.sh, which the device call scripts source too.
. bench/call_lib.sh
B=$SALASIM_BUILD
summary=()
note() { summary+=("$*"); echo "== $*"; }
step_gpu() {
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm --format=csv | tee "$OUT/gpu.txt"
}
step_build() {
  step_gpu
  local t0=$SECONDS
  cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DSALASIM_CUDA=ON -DSALASIM_CUDA_ARCH=90a > "$OUT/configure.log" 2>&1 \
    || { tail -30 "$OUT/configure.log"; note "configure FAILED"; return 1; }
  cmake --build $B -j"$(nproc)" --target salasim salasim_gpu_tests salasim_ops_bench salasim_capi > "$OUT/build.log" 2>&1 \
    || { grep -E "error|Error" "$OUT/build.log" | head -30; note "build FAILED"; return 1; }
  note "build ok in $((SECONDS - t0)) s"
}
step_tests() {  # step_tests [Catch2 filter]: op tests (default: all but the model tests, which are step_model)
  # bounded: a kernel that never finishes (an mbarrier waited on forever) must not take the call's whole limit
  timeout -k 5 "${TESTS_TIMEOUT:-300}" "$B/tests/salasim_gpu_tests" "${1:-~[model]}" -r compact > "$OUT/gpu_tests.log" 2>&1
  local rc=$?
  tail -3 "$OUT/gpu_tests.log"
  [ $rc -eq 0 ] && note "gpu op tests passed" || { grep -B2 -A25 "FAILED" "$OUT/gpu_tests.log" | head -150; note "gpu op tests FAILED (rc $rc)"; }
}
# racecheck is ~100x slower: the op tests of small sizes. [errors] provokes CUDA API errors on purpose (a failed
# cudaMalloc, a copy to null), which memcheck reports. SMALL from the environment picks other tests.
SMALL=${SMALL:-"~[model]~[synth]~[large]~[op_cases]~[op_cli]~[errors]"}
# ([op_cli] runs the salasim binary in child processes: the kernels it reaches are the ones the op tests sanitize)
KERNELS="[sparse_attn]~[large],[dense_attn]~[large],[select_blocks]~[large],[gla]~[large]"  # the tensor-core kernels
step_sanitize() {  # step_sanitize [tool...] (default: memcheck racecheck)
  local tools=("$@")
  [ ${#tools[@]} -eq 0 ] && tools=(memcheck racecheck)
  for tool in "${tools[@]}"; do
    timeout "${SAN_TIMEOUT:-150}" compute-sanitizer --tool $tool --error-exitcode 9 "$B/tests/salasim_gpu_tests" "$SMALL" > "$OUT/sanitize_$tool.log" 2>&1
    local rc=$?
    tail -2 "$OUT/sanitize_$tool.log"
    [ $rc -eq 0 ] && note "compute-sanitizer $tool clean" || { grep -A12 "=========" "$OUT/sanitize_$tool.log" | head -60; note "compute-sanitizer $tool FAILED (rc $rc)"; }
  done
}
step_sanitize_kernels() {  # step_sanitize_kernels [tool...]: the sanitizers on the tensor-core kernels' small tests
  SAN_TIMEOUT=120 SMALL="$KERNELS" step_sanitize "$@"
}
step_run_taps() {  # run --dump-taps through the runner on the tiny config, against ref's and the peer's dumps
  "$B/tests/salasim_gpu_tests" "[run_taps]" -r compact > "$OUT/gpu_run_taps.log" 2>&1
  local rc=$?
  tail -3 "$OUT/gpu_run_taps.log"
  [ $rc -eq 0 ] && note "run_taps GPU tests passed" || { grep -B2 -A40 "FAILED" "$OUT/gpu_run_taps.log" | head -100; note "run_taps GPU tests FAILED (rc $rc)"; }
}
step_op_cli() {  # salasim op --backend gpu on every op, gated against --backend reference and peer (docs/op.md)
  "$B/tests/salasim_gpu_tests" "[op_cli]" -r compact > "$OUT/gpu_op_cli.log" 2>&1
  local rc=$?
  tail -3 "$OUT/gpu_op_cli.log"
  [ $rc -eq 0 ] && note "salasim op --backend gpu tests passed" || { grep -B2 -A40 "FAILED" "$OUT/gpu_op_cli.log" | head -150; note "salasim op --backend gpu tests FAILED (rc $rc)"; }
}
step_model() {
  timeout -k 5 "${TESTS_TIMEOUT:-300}" "$B/tests/salasim_gpu_tests" "[model]" -r compact > "$OUT/gpu_model.log" 2>&1
  local rc=$?
  tail -3 "$OUT/gpu_model.log"
  [ $rc -eq 0 ] && note "gpu model tests passed" || { grep -B2 -A40 "FAILED" "$OUT/gpu_model.log" | head -120; note "gpu model tests FAILED (rc $rc)"; }
}
step_run() {  # step_run 64K [extra args]; "--time-limit auto" leaves ~70 s of this call's 580 s
  local ctx=$1; shift
  local args=()
  for x in "$@"; do [ "$x" = auto ] && args+=("$((510 - SECONDS))") || args+=("$x"); done
  set -- "${args[@]}"
  # --extrapolate: 1M and 2048K are past the config's max_position_embeddings (524288), as in the paper
  "$B/salasim" run --config scenarios/models/minicpm-sala-9b.json --context "$ctx" --decode 32 --extrapolate --json-out "$OUT/run_$ctx.json" "$@" > "$OUT/run_$ctx.txt" 2>&1
  local rc=$?
  cat "$OUT/run_$ctx.txt"
  [ $rc -eq 0 ] && note "run $ctx: $(grep -E 'TTFT|decode:' "$OUT/run_$ctx.txt" | tr '\n' ' ')" || note "run $ctx FAILED (rc $rc)"
}
step_measure() {  # step_measure 64K [extra args]: a run whose record is a measured run of reports/measured/<hw>/
  # The record lands in $OUT at its path in the repository, written by `salasim run --json-out` and never edited:
  # cp <device output>/reports/measured/h200/run_64K.json reports/measured/h200/, then bash tools/regen_docs.sh
  # (README's figures and bench/RESULTS.md are generated from the records).
  local ctx=$1; shift
  local dir="$OUT/reports/measured/${SALASIM_HW:-h200}"
  mkdir -p "$dir"
  # 128 decode steps: the median of the 120 unprofiled ones (issue 14's targets are medians over >= 64 tokens)
  "$B/salasim" run --config scenarios/models/minicpm-sala-9b.json --context "$ctx" --decode 128 --extrapolate \
    --json-out "$dir/run_$ctx.json" "$@" > "$OUT/measure_$ctx.txt" 2>&1
  local rc=$?
  cat "$OUT/measure_$ctx.txt"
  [ $rc -eq 0 ] && [ -s "$dir/run_$ctx.json" ] && note "measured $ctx: $(grep -E 'TTFT|decode:' "$OUT/measure_$ctx.txt" | tr '\n' ' ')-> ${dir#"$OUT"/}/run_$ctx.json" \
                || note "measure $ctx FAILED (rc $rc)"
}
step_dump_taps() {  # step_dump_taps [context]: run --dump-taps at full size, then a tiny run's dump diffed against ref's
  local ctx=${1:-64K} f=/tmp/salasim-dump/dump.h5 TMPD=/tmp/salasim-dump  # dumps stay out of $OUT: the archive that comes back has a size limit
  mkdir -p "$TMPD"
  "$B/salasim" run --config scenarios/models/minicpm-sala-9b.json --context "$ctx" --decode 2 --extrapolate \
    --dump-taps "$f" --taps 'layer_*/residual/h,layer_*/sparse/select/blocks,/prefill/final/norm' --rows 0,100,-1 \
    > "$OUT/dump_taps.txt" 2>&1
  local rc=$?
  cat "$OUT/dump_taps.txt"
  [ $rc -eq 0 ] || { note "dump_taps $ctx FAILED (rc $rc)"; return 1; }
  ls -l "$f"
  # The file's taps: name, shape, kept rows (h5py where the device has it, else h5ls).
  python3 - "$f" <<'PY' 2>/dev/null || h5ls -r "$f" || echo "(neither h5py nor h5ls here: the file is in \$OUT)"
import sys, h5py
f = h5py.File(sys.argv[1]); names = []
f.visititems(lambda n, o: names.append("/" + n) if isinstance(o, h5py.Dataset) else None)
print(dict(f.attrs)); print(len(names), "taps")
for n in sorted(names, key=lambda n: f[n].attrs["order"]):
    print(n, f[n].shape, list(f[n].attrs["rows"]) if "rows" in f[n].attrs else "all rows")
PY
  # The same tokens on the tiny-short model: ref's and the peer's dumps of every tap, run's of chosen ones, diffed.
  "$B/salasim" ref --scenario scenarios/tiny-short.json --tokens 1000 --decode 0 --dump-taps "$TMPD/tiny_ref.h5" > "$OUT/tiny_ref.txt" 2>&1 \
    && "$B/salasim" ref --peer --scenario scenarios/tiny-short.json --tokens 1000 --decode 0 --dump-taps "$TMPD/tiny_peer.h5" > "$OUT/tiny_peer.txt" 2>&1 \
    && "$B/salasim" run --config scenarios/models/tiny-short.json --context 1000 --decode 0 --chunk 704 --prompt-seed 7 \
         --dump-taps "$TMPD/tiny_run.h5" --taps 'layer_*/,final/norm' --rows 0,1,703,704,-1 > "$OUT/tiny_run.txt" 2>&1
  rc=$?
  tail -2 "$OUT/tiny_run.txt"
  [ $rc -eq 0 ] || { note "dump_taps tiny runs FAILED (rc $rc)"; return 1; }
  "$B/salasim" diff "$TMPD/tiny_ref.h5" "$TMPD/tiny_run.h5" --peer "$TMPD/tiny_peer.h5" > "$OUT/tiny_diff.txt" 2>&1
  rc=$?
  grep -E "^chosen|rows not lined up|taps pass|failed" "$OUT/tiny_diff.txt"
  [ $rc -eq 0 ] && note "dump_taps: $ctx file $(du -h "$f" | cut -f1); tiny run vs ref diff: $(grep -E 'taps pass' "$OUT/tiny_diff.txt")" \
                || { grep -A2 FAIL "$OUT/tiny_diff.txt" | head -40; note "dump_taps diff FAILED (rc $rc)"; }
}
step_exitcodes() {  # docs/input-limits.md: a --time-limit stop is exit 1; a CUDA failure is DeviceError, exit 3
  "$B/salasim" run --config scenarios/models/tiny.json --context 64K --decode 0 --time-limit 0.000001 > "$OUT/exitcodes.txt" 2>&1
  local rc=$?
  tail -4 "$OUT/exitcodes.txt"
  [ $rc -eq 1 ] && grep -q "run: INCOMPLETE" "$OUT/exitcodes.txt" && note "run --time-limit stop: exit 1 as documented" \
                || note "run --time-limit stop: exit $rc, expected 1 FAILED"
  "$B/tests/salasim_gpu_tests" "[errors]" -r compact > "$OUT/gpu_errors.log" 2>&1
  rc=$?
  tail -2 "$OUT/gpu_errors.log"
  [ $rc -eq 0 ] && note "CUDA failures are DeviceError (exit 3): passed" || note "DeviceError test FAILED (rc $rc)"
}
step_verify() {  # the main job on the default scenario, GPU backend
  "$B/salasim" verify --backend gpu --failures-only --dump "$OUT" "$@" > "$OUT/verify.txt" 2>&1
  local rc=$?
  tail -25 "$OUT/verify.txt"
  [ $rc -eq 0 ] && note "verify (gpu, default scenario) PASS: $(grep -E '^all|taps' "$OUT/verify.txt" | tail -1)" \
                || note "verify (gpu) FAILED (rc $rc)"
}
step_golden() {  # step_golden scenarios/tiny-short.json
  local sc=${1:-scenarios/tiny-short.json}
  local name; name=$(basename "$sc" .json)
  "$B/salasim" golden record --scenario "$sc" --out "$OUT/$name.h5" > "$OUT/golden_$name.txt" 2>&1
  local rc=$?
  tail -6 "$OUT/golden_$name.txt"
  [ $rc -eq 0 ] && note "golden recorded for $sc" || note "golden record FAILED (rc $rc)"
}
step_spot() {  # step_spot scenarios/sala-9b-1m.json [N [extra verify args, e.g. --tokens 2097152]]
  local sc=$1 n=${2:-8}
  shift; [ $# -gt 0 ] && shift
  local log="$OUT/spot_$(basename "$sc" .json)$(printf '%s' "$*" | tr -c 'A-Za-z0-9' '_').txt"
  "$B/salasim" verify --backend gpu --spot "$n" --scenario "$sc" "$@" > "$log" 2>&1
  local rc=$?
  tail -25 "$log"
  [ $rc -eq 0 ] && note "spot check $sc $* PASS" || note "spot check $sc $* FAILED (rc $rc)"
}
step_optests() {  # the op-case table (bench/op_cases.hpp) against the reference, as the benchmarks run it
  "$B/tests/salasim_gpu_tests" "[op_cases]" -r compact > "$OUT/op_cases.log" 2>&1
  local rc=$?
  tail -3 "$OUT/op_cases.log"
  [ $rc -eq 0 ] && note "op cases pass" || { grep -B2 -A40 "FAILED" "$OUT/op_cases.log" | head -150; note "op cases FAILED (rc $rc)"; }
}
step_ops() {  # step_ops [benchmark filter]: the Google Benchmark suite, JSON in $OUT/ops.json
  local filter=${1:-.}
  "$B/bench/salasim_ops_bench" --benchmark_filter="$filter" --benchmark_out="$OUT/ops.json" --benchmark_out_format=json \
    --benchmark_counters_tabular=true > "$OUT/ops.txt" 2>&1
  local rc=$?
  cat "$OUT/ops.txt" | cut -c1-200
  [ $rc -eq 0 ] && note "ops benchmark done ($filter)" || note "ops benchmark FAILED (rc $rc)"
}
step_peers() {  # step_peers [gla lengths] [attn lengths]: fla and torch SDPA beside our kernels (bench/peers.py)
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > "$OUT/pip.log" 2>&1
  PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 python3 bench/peers.py --lib "$B/bench/libsalasim_capi.so" --gla "${1:-16K,256K,1M}" \
    --attn "${2:-16K,64K}" --json "$OUT/peers.json" --revision "$("$B/salasim" --version | head -1)" > "$OUT/peers.txt" 2>&1
  local rc=$?
  tail -12 "$OUT/peers.txt"
  [ $rc -eq 0 ] && note "peers measured" || note "peers FAILED (rc $rc)"
}
peer_site() {  # the carried wheels (.whl/: fla-core; peer-assets/wheels/: einops, if carried) into /tmp/site
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl \
    $(ls peer-assets/wheels/*.whl 2>/dev/null) > "$OUT/pip.log" 2>&1
}
step_peers_ops() {  # issue 15 item 3: salasim's ops vs fla, the infllmv2 definition and torch SDPA (tools/peers/ops_peers.py)
  peer_site
  PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 python3 tools/peers/ops_peers.py --salasim "$B/salasim" \
    --lib "$B/bench/libsalasim_capi.so" "$@" > "$OUT/peers_ops.txt" 2>&1
  local rc=$?
  cat "$OUT/peers_ops.txt"
  [ $rc -eq 0 ] && note "peers_ops: every row measured" || note "peers_ops: rc $rc (rows marked 'not run' or an error above)"
}
step_hf_peer() {  # step_hf_peer [tokens]: issue 15 item 4 on the tiny HF-shaped config, then item 3; needs peer-assets/hf
  # (the official modeling_minicpm_sala.py, carried: docs/interop.md#peers) and the fla-core wheel (.whl/).
  [ -f peer-assets/hf/modeling_minicpm_sala.py ] || { note "hf_peer: no peer-assets/hf/modeling_minicpm_sala.py (carry peer-assets)"; return 1; }
  peer_site
  rm -rf /tmp/hf-tiny
  "$B/salasim" synth-checkpoint --config scenarios/models/tiny-hf.json --out /tmp/hf-tiny > "$OUT/hf_peer.txt" 2>&1
  PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 python3 tools/peers/hf_whole_model.py --salasim "$B/salasim" \
    --modeling-dir peer-assets/hf --checkpoint /tmp/hf-tiny --tokens "${1:-512}" --dump /tmp/hf_peer_ref.h5 >> "$OUT/hf_peer.txt" 2>&1
  local rc=$?
  cat "$OUT/hf_peer.txt"
  [ $rc -eq 0 ] && note "hf_peer: $(grep verdict "$OUT/hf_peer.txt")" || note "hf_peer: rc $rc $(grep verdict "$OUT/hf_peer.txt")"
  step_peers_ops
}
step_hf_peer_full() {  # step_hf_peer_full [tokens]: issue 15 item 4 on the full 9.48B config (18 GB of bf16 weights in /tmp;
  # salasim ref holds them as float64, ~76 GB of host memory; HF holds them as float32 on the GPU, ~38 GB)
  [ -f peer-assets/hf/modeling_minicpm_sala.py ] || { note "hf_peer_full: no peer-assets/hf/modeling_minicpm_sala.py (carry peer-assets)"; return 1; }
  peer_site
  rm -rf /tmp/hf-9b
  local t0=$SECONDS
  "$B/salasim" synth-checkpoint --config scenarios/models/minicpm-sala-9b.json --out /tmp/hf-9b > "$OUT/hf_peer_full.txt" 2>&1
  echo "synth-checkpoint: $((SECONDS - t0)) s" >> "$OUT/hf_peer_full.txt"
  local timer=()
  [ -x /usr/bin/time ] && timer=(/usr/bin/time -v)  # peak host memory (Maximum resident set size)
  PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 "${timer[@]}" python3 tools/peers/hf_whole_model.py --salasim "$B/salasim" \
    --modeling-dir peer-assets/hf --checkpoint /tmp/hf-9b --tokens "${1:-256}" >> "$OUT/hf_peer_full.txt" 2>&1
  local rc=$?
  rm -rf /tmp/hf-9b
  grep -v "^\s*\(Page\|Voluntary\|Involuntary\|Swaps\|File system\|Socket\|Signals\|Average\|Minor\|Major\|Exit status\|Percent\|System time\|User time\)" "$OUT/hf_peer_full.txt"
  [ $rc -eq 0 ] && note "hf_peer_full: $(grep verdict "$OUT/hf_peer_full.txt") in $((SECONDS - t0)) s" \
                || note "hf_peer_full: rc $rc $(grep verdict "$OUT/hf_peer_full.txt")"
}
step_ncu() {  # step_ncu <benchmark filter> <kernel regex> [launches]: Nsight Compute on the op's kernels
  local tag; tag=$(printf '%s' "$1" | tr -c 'A-Za-z0-9' '_')
  timeout 150 ncu --clock-control none -k "regex:$2" -c "${3:-2}" --section SpeedOfLight --section WarpStateStats \
    --section Occupancy --section LaunchStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
    "$B/bench/salasim_ops_bench" --benchmark_filter="$1" > "$OUT/ncu_$tag.txt" 2>&1
  local rc=$?
  grep -E "^  [a-z_]+_kernel|Duration|Compute \(SM\) Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Stall|Issue Slots Busy|Executed Ipc A" "$OUT/ncu_$tag.txt" | head -40
  [ $rc -eq 0 ] && note "ncu $1 done" || note "ncu $1 FAILED (rc $rc)"
}
step_ncu_pipes() {  # step_ncu_pipes <benchmark filter> <kernel regex> [launches]: what bounds a kernel (issue 13's profile)
  # Speed of light, occupancy, warp stalls, and the busy fraction of each pipe (tensor, MUFU/XU, FMA, ALU, LSU):
  # a kernel whose busiest pipe is near its peak is bound by that pipe, one with every pipe low by latency.
  local tag; tag=$(printf '%s' "$1" | tr -c 'A-Za-z0-9' '_')
  local m=sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
  m+=,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active
  m+=,sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active
  m+=,sm__pipe_shared_cycles_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum
  m+=,smsp__inst_executed.avg.per_cycle_active,dram__throughput.avg.pct_of_peak_sustained_elapsed
  timeout "${NCU_TIMEOUT:-150}" ncu --clock-control none -k "regex:$2" -c "${3:-2}" --section SpeedOfLight --section WarpStateStats \
    --section Occupancy --section LaunchStats --metrics "$m" \
    "$B/bench/salasim_ops_bench" --benchmark_filter="$1" > "$OUT/ncu_pipes_$tag.txt" 2>&1
  local rc=$?
  grep -E "^  [a-z_]+_kernel|Duration|Compute \(SM\) Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Stall|Issue Slots Busy|Executed Ipc A|pipe|per_cycle|dram__" \
    "$OUT/ncu_pipes_$tag.txt" | head -80
  [ $rc -eq 0 ] && note "ncu_pipes $1 done" || note "ncu_pipes $1 FAILED (rc $rc)"
}
step_decode_ncu() {  # step_decode_ncu 64K [steps]: every kernel of the first decode steps (issue 14's profile)
  # Nsight Compute times each kernel alone (gpu__time_duration, clocks left alone), bracketed by
  # `salasim run --profiler-steps`: the per-kernel table of one decode step, whose sum is the step's kernel time; the
  # rest of the unprofiled step's wall time (the run's own median) is launch gaps and host work.
  local ctx=$1 steps=${2:-2}
  timeout 400 ncu --clock-control none --profile-from-start off --metrics gpu__time_duration.sum --print-units base --csv \
    "$B/salasim" run --config scenarios/models/minicpm-sala-9b.json --context "$ctx" --decode 16 --extrapolate \
    --profiler-steps "$steps" > "$OUT/decode_ncu_$ctx.csv" 2> "$OUT/decode_ncu_$ctx.err"
  local rc=$?
  python3 bench/ncu_table.py "$OUT/decode_ncu_$ctx.csv" "$steps" | tee "$OUT/decode_ncu_$ctx.txt"
  grep -E "decode:" "$OUT/decode_ncu_$ctx.csv" "$OUT/decode_ncu_$ctx.err" | head -3
  [ $rc -eq 0 ] && note "decode_ncu $ctx done" || note "decode_ncu $ctx FAILED (rc $rc)"
}
# ---- RULER NIAH (salasim ruler; docs/ruler-runs.md) ----
# The inputs are made on the CPU machine (the GPU machine has no network, no wonderwords lists, no sentencepiece
# package) and carried in ruler-assets/ beside the build (whose lib/ holds the libsentencepiece copies):
#   bash bench/device.sh ruler_assets         (on the CPU machine: a trained tokenizer and niah_single_1 data)
RA=${RULER_ASSETS:-ruler-assets}
step_ruler_assets() {
  mkdir -p "$RA"
  "$B/salasim" ruler train-tokenizer --out "$RA/tokenizer.model" --vocab 1000 --force || { note "ruler_assets: tokenizer FAILED"; return 1; }
  for len in 64K 256K 1M 2048K; do
    rm -f "$RA/niah_single_1_$len.jsonl" "$RA/niah_single_1_$len.jsonl.gz"
    "$B/salasim" ruler generate --task niah_single_1 --length $len --samples 1 --tokenizer "$RA/tokenizer.model" \
      --out "$RA/niah_single_1_$len.jsonl" && gzip -9 "$RA/niah_single_1_$len.jsonl" || { note "ruler_assets $len FAILED"; return 1; }
  done
  rm -f "$RA/niah_single_1_x4_64K.jsonl" "$RA/niah_single_1_x4_64K.jsonl.gz"
  "$B/salasim" ruler generate --task niah_single_1 --length 64K --samples 4 --tokenizer "$RA/tokenizer.model" \
    --out "$RA/niah_single_1_x4_64K.jsonl" && gzip -9 "$RA/niah_single_1_x4_64K.jsonl"
  # Several lengths in one file, for one `ruler run` (step_ruler4): shortest first, so that a call cut short by its
  # time limit still finishes the short ones.
  (cd "$RA" && gunzip -c niah_single_1_64K.jsonl.gz niah_single_1_256K.jsonl.gz niah_single_1_1M.jsonl.gz | gzip -9 > niah3.jsonl.gz \
     && gunzip -c niah3.jsonl.gz niah_single_1_2048K.jsonl.gz | gzip -9 > niah4.jsonl.gz \
     && cp niah_single_1_2048K.jsonl.gz niah_2048K.jsonl.gz)
  note "ruler_assets in $RA: $(ls "$RA" | tr '\n' ' ')"
}
# step_ruler 64K: one niah_single_1 sample on the full 9.48B config, synthetic weights generated in place
ruler_args=(--config scenarios/models/minicpm-sala-9b.json --synthetic-seed 1 --tokenizer "$RA/tokenizer.model")
step_ruler() {
  local len=$1
  gunzip -c "$RA/niah_single_1_$len.jsonl.gz" > "$OUT/data_$len.jsonl" || { note "ruler $len: no data"; return 1; }
  rm -f "$OUT/ruler_$len.jsonl"
  LD_LIBRARY_PATH="$B/lib:${LD_LIBRARY_PATH:-}" "$B/salasim" ruler run "${ruler_args[@]}" --data "$OUT/data_$len.jsonl" \
    --out "$OUT/ruler_$len.jsonl" > "$OUT/ruler_$len.txt" 2>&1
  local rc=$?
  tail -8 "$OUT/ruler_$len.txt"
  [ $rc -eq 0 ] && note "ruler $len: $(grep -o '"prefill_s":[0-9.]*\|"sample_s":[0-9.]*\|"score":[0-9.]*\|"recall_prompt":[0-9.]*' "$OUT/ruler_$len.jsonl" | tr '\n' ' ')" \
                || note "ruler $len FAILED (rc $rc)"
}
# step_ruler_gpus: 4 samples at 64K over every visible GPU (nvidia-h200-x2), shards merged, then the report
step_ruler_gpus() {
  gunzip -c "$RA/niah_single_1_x4_64K.jsonl.gz" > "$OUT/data_x4.jsonl" || { note "ruler_gpus: no data"; return 1; }
  rm -f "$OUT/ruler_gpus.jsonl"
  LD_LIBRARY_PATH="$B/lib:${LD_LIBRARY_PATH:-}" "$B/salasim" ruler run "${ruler_args[@]}" --data "$OUT/data_x4.jsonl" \
    --out "$OUT/ruler_gpus.jsonl" --gpus all > "$OUT/ruler_gpus.txt" 2>&1
  local rc=$?
  tail -12 "$OUT/ruler_gpus.txt"
  "$B/salasim" ruler report "$OUT/ruler_gpus.jsonl" $(ls "$OUT"/ruler_[0-9]*.jsonl 2>/dev/null) --out "$OUT/ruler_report" > "$OUT/ruler_report.txt" 2>&1
  [ $rc -eq 0 ] && note "ruler --gpus all: $(grep merged "$OUT/ruler_gpus.txt") ($(wc -l < "$OUT/ruler_gpus.jsonl") lines)" \
                || note "ruler --gpus all FAILED (rc $rc)"
}
# step_ruler_x2 (nvidia-h200-x2): niah_single_1 at 64K, 256K, 1M and 2048K (ruler-assets/niah4.jsonl.gz) over both
# GPUs with --gpus all (the two shards take alternate lines), merged and reported; then the 2048K measured run on
# GPU 0 beside, on GPU 1, the 1M spot check, the 256K measured run and memcheck on the tensor-core kernels.
step_ruler_x2() {
  step_ruler4
  (export CUDA_VISIBLE_DEVICES=0; step_measure 2048K) > "$OUT/gpu0.txt" 2>&1 &
  (export CUDA_VISIBLE_DEVICES=1; step_spot scenarios/sala-9b-1m.json 8; step_measure 256K
   SAN_TIMEOUT=120 SMALL="$KERNELS" step_sanitize memcheck) > "$OUT/gpu1.txt" 2>&1 &
  wait
  grep -h "^== " "$OUT/gpu0.txt" "$OUT/gpu1.txt" | sed 's/^== //' | while read -r l; do echo "== $l"; done
  summary+=("$(grep -h "^== " "$OUT/gpu0.txt" "$OUT/gpu1.txt" | sed 's/^== //' | tr '\n' ';')")
}
# step_ruler4 [data.jsonl.gz] [tag] [seconds]: the samples of ruler-assets/niah4.jsonl.gz (or the file named) over
# every visible GPU (--gpus all), merged and reported; with [seconds], stopped after that long (the results written
# so far stay: one line per finished sample) so that the archive below is still packed within the call's limit.
step_ruler4() {
  local data=${1:-$RA/niah4.jsonl.gz} tag=${2:-ruler4} limit=${3:-0}
  gunzip -c "$data" > "/tmp/$tag.jsonl" || { note "$tag: no data"; return 1; }
  rm -f "$OUT/$tag.jsonl"
  local t=()
  [ "$limit" != 0 ] && t=(timeout -k 5 "$((limit - SECONDS))")
  "${t[@]}" "$B/salasim" ruler run "${ruler_args[@]}" --data "/tmp/$tag.jsonl" --out "$OUT/$tag.jsonl" --gpus all \
    > "$OUT/$tag.txt" 2>&1
  local rc=$?
  tail -12 "$OUT/$tag.txt"
  "$B/salasim" ruler report "$OUT/$tag.jsonl" --out "$OUT/${tag}_report" > "$OUT/${tag}_report.txt" 2>&1
  [ $rc -eq 0 ] && note "$tag --gpus all: $(grep merged "$OUT/$tag.txt") ($(wc -l < "$OUT/$tag.jsonl") lines)" \
                || note "$tag FAILED (rc $rc)"
}
for s in "$@"; do
  # shellcheck disable=SC2086
  set -- $s
  cmd=$1; shift
  "step_$cmd" "$@"
  step_rc=$?
  # Everything written under $OUT in one archive (the device tool brings back at most 8 files), packed after every
  # step so that a call stopped at its time limit still brings back what the finished steps wrote.
  (cd "$OUT" && tar czf /tmp/salasim-all.tgz --exclude=all.tgz . && mv /tmp/salasim-all.tgz all.tgz)
  [ $step_rc -eq 0 ] || break
done
echo "======== summary"
printf '%s\n' "${summary[@]}"
