#!/usr/bin/env bash
# Builds the fuzz targets with clang (AddressSanitizer + UndefinedBehaviorSanitizer + libFuzzer) in build-fuzz/,
# writes their seed corpora from the project's files, replays the inputs that once crashed them
# (fuzz/regressions/<target>/), then fuzzes each target for SECONDS (default 30). Any crash, leak, timeout or
# sanitizer report fails with the target named and the input kept in build-fuzz/artifacts/.
# Usage: bash fuzz/run.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-30}
B=build-fuzz
CXX_FUZZ=${CXX_FUZZ:-$(command -v clang++ || command -v clang++-14)}
CC_FUZZ=${CC_FUZZ:-$(command -v clang || command -v clang-14)}
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
cmake -S . -B $B -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSALASIM_FUZZ=ON -DSALASIM_CUDA=OFF -DSALASIM_TESTS=OFF \
  -DCMAKE_CXX_COMPILER="$CXX_FUZZ" -DCMAKE_C_COMPILER="$CC_FUZZ" -DSALASIM_WERROR="${SALASIM_WERROR:-OFF}" \
  "${launcher[@]}" >/dev/null
cmake --build $B -j"$(nproc 2>/dev/null || echo 2)" --target salasim_fuzzers
rm -rf $B/corpus $B/artifacts
mkdir -p $B/artifacts
$B/fuzz/salasim_fuzz_seeds $B/corpus
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1
export LSAN_OPTIONS=suppressions=$PWD/fuzz/lsan.supp:print_suppressions=0  # leaks inside libhdf5 itself, with reasons
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
symbolizer=$(command -v llvm-symbolizer || command -v llvm-symbolizer-14 || true)
[ -n "$symbolizer" ] && export ASAN_SYMBOLIZER_PATH=$symbolizer
failed=()
for t in safetensors config scenario taps op_inputs rows ruler_lines tokenizer_files hardware measured; do
  mkdir -p $B/artifacts/$t
  regress=() dict=()
  [ -d fuzz/regressions/$t ] && regress=(fuzz/regressions/$t)
  [ -f fuzz/$t.dict ] && dict=(-dict=fuzz/$t.dict)  # the format's field names and edge values
  echo "== fuzz_$t: ${secs} s from $(ls $B/corpus/$t | wc -l) seeds${regress:+ and the regression inputs of fuzz/regressions/$t}"
  # stdin from /dev/null: a fuzzed path such as /dev/stdin must not wait for input.
  # fuzz_taps: full stacks for the allocations, so that fuzz/lsan.supp can name the libhdf5 function that leaks (the
  # fast unwinder stops at the library's first frame); its runs are few (each input is read in a child process first).
  asan=$ASAN_OPTIONS
  [ $t = taps ] || [ $t = op_inputs ] && asan+=:fast_unwind_on_malloc=0
  if ! ASAN_OPTIONS=$asan $B/fuzz/fuzz_$t -max_total_time="$secs" -timeout=20 -rss_limit_mb=3072 -max_len=65536 -print_final_stats=1 \
       "${dict[@]}" -artifact_prefix=$B/artifacts/$t/ $B/corpus/$t "${regress[@]}" < /dev/null > $B/artifacts/$t.log 2>&1; then
    tail -40 $B/artifacts/$t.log
    failed+=("fuzz_$t")
  else
    grep -E "^stat::number_of_executed_units|^Done [0-9]+ runs" $B/artifacts/$t.log | tr '\n' ' '
    echo
  fi
done
if ((${#failed[@]})); then
  echo "fuzz: FAILED: ${failed[*]} (inputs in $B/artifacts/; replay with $B/fuzz/<target> <input>)"
  exit 1
fi
echo "fuzz: every target ran ${secs} s clean (ASan + UBSan, leaks checked)"
