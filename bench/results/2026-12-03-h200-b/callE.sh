#!/usr/bin/env bash
# Call E (2026-12-03, session 2): the decode sparse chain's new kernels: GPU tests, sanitizers, op bench, one 1M step under ncu.
export SALASIM_BUILD=.dev LD_LIBRARY_PATH=$PWD/.dev/lib
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
bash bench/device.sh gpu "tests [sparse_attn],[dense_attn],[select_blocks],[op_cases],[generate]" model > "$OUT/E_tests.txt" 2>&1
grep '^== ' "$OUT/E_tests.txt"; echo "[$SECONDS s] tests"
SMALL="[sparse_attn]~[large],[dense_attn]~[large],[select_blocks]~[large]" SAN_TIMEOUT=140 bash bench/device.sh "sanitize memcheck racecheck" > "$OUT/E_san.txt" 2>&1
grep '^== ' "$OUT/E_san.txt"; echo "[$SECONDS s] sanitize"
.dev/bench/salasim_ops_bench --benchmark_filter='select_blocks\.decode|sparse_attn\.decode' --benchmark_min_time=0.2 > "$OUT/E_ops.txt" 2>&1
grep -E "decode" "$OUT/E_ops.txt" | cut -c1-75; echo "[$SECONDS s] ops"
[ $SECONDS -lt 430 ] && bash bench/device.sh "decode_ncu 1M 1" > "$OUT/E_ncu.txt" 2>&1; grep -v '^==' "$OUT/E_ncu.txt" | head -30
echo "[$SECONDS s] end"
cd "$OUT" && tar czf /tmp/E_all.tgz . && rm -rf "$OUT"/* && mv /tmp/E_all.tgz "$OUT/"
