#!/usr/bin/env bash
# One call on the GPU machine (the device tool): build for sm_90a, then the steps named on the command line.
#   bash bench/device.sh build tests sanitize model "run 64K" "run 1M" verify exitcodes ...
# With binaries built on another machine and carried (the device tool's carry), skip the build:
#   SALASIM_BUILD=build bash bench/device.sh gpu tests "run 2048K"
# Logs and JSON land in $OUT (the device tool brings them back); the last lines printed are a summary.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/salasim-out}
mkdir -p "$OUT"
B=${SALASIM_BUILD:-build-dev}
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
  cmake --build $B -j"$(nproc)" --target salasim salasim_gpu_tests > "$OUT/build.log" 2>&1 \
    || { grep -E "error|Error" "$OUT/build.log" | head -30; note "build FAILED"; return 1; }
  note "build ok in $((SECONDS - t0)) s"
}
step_tests() {  # op tests (the model tests are step_model)
  "$B/tests/salasim_gpu_tests" "~[model]" -r compact > "$OUT/gpu_tests.log" 2>&1
  local rc=$?
  tail -3 "$OUT/gpu_tests.log"
  [ $rc -eq 0 ] && note "gpu op tests passed" || { grep -B2 -A25 "FAILED" "$OUT/gpu_tests.log" | head -150; note "gpu op tests FAILED (rc $rc)"; }
}
SMALL="~[model]~[synth]~[large]"  # racecheck is ~100x slower: the op tests of small sizes
step_sanitize() {  # step_sanitize [tool...] (default: memcheck racecheck)
  local tools=("$@")
  [ ${#tools[@]} -eq 0 ] && tools=(memcheck racecheck)
  for tool in "${tools[@]}"; do
    timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 "$B/tests/salasim_gpu_tests" "$SMALL" > "$OUT/sanitize_$tool.log" 2>&1
    local rc=$?
    tail -2 "$OUT/sanitize_$tool.log"
    [ $rc -eq 0 ] && note "compute-sanitizer $tool clean" || { grep -A12 "=========" "$OUT/sanitize_$tool.log" | head -60; note "compute-sanitizer $tool FAILED (rc $rc)"; }
  done
}
step_model() {
  "$B/tests/salasim_gpu_tests" "[model]" -r compact > "$OUT/gpu_model.log" 2>&1
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
for s in "$@"; do
  # shellcheck disable=SC2086
  set -- $s
  cmd=$1; shift
  "step_$cmd" "$@" || break
done
echo "======== summary"
printf '%s\n' "${summary[@]}"
