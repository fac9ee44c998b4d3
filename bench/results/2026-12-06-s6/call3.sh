#!/usr/bin/env bash
# Device call 3 (2026-12-06, sixth session), the binary of call 2 (.dev, i36-s6 dabec97) on the same warm H100: the op
# A/B against e755269 (.dev-base), 3 rounds alternating (call 2 had time for one), racecheck on the dense tests
# alone (call 2's on the sparse and dense ones ran past its 100 s), dense beside SDPA.
set -uo pipefail
cd "$(dirname "$0")/.."
export OUT=${OUT:-/tmp/salasim-out}; mkdir -p "$OUT"
T0=$SECONDS
left() { echo $((${CALL_BUDGET:-440} - (SECONDS - T0))); }
log() { echo "== [$((SECONDS - T0)) s] $*" | tee -a "$OUT/summary.txt"; }
export SALASIM_BUILD=.dev
log "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); new $(.dev/salasim --version | head -1)"
F='^dense_attn(\.in_turn)?/|^sparse_attn(\.overlap|\.overlap\.in_turn)?/(256K|1M)/'
FB='^dense_attn/|^sparse_attn(\.overlap)?/(256K|1M)/'
for r in 1 2 3; do
  for v in base new; do
    d=.dev f=$F; [ $v = base ] && d=.dev-base f=$FB
    LD_LIBRARY_PATH=$PWD/.dev/lib timeout 100 $d/bench/salasim_ops_bench --benchmark_filter="$f" --benchmark_counters_tabular=true > "$OUT/ops_${v}_$r.txt" 2>&1
    log "round $r $v: $(grep -E '^(sparse|dense)' "$OUT/ops_${v}_$r.txt" | awk '{print $1, $2}' | sed 's#/min_time:0.300/manual_time##' | tr '\n' ' ')"
  done
done
timeout 100 bash bench/device.sh "peers 16K 16K" > "$OUT/peers_step.txt" 2>&1
log "peers: $(grep -E '"op": "attn"' "$OUT/peers.txt" | cut -c1-260 | tr '\n' ' ')"
tail -5 "$OUT/peers.txt"
T=$(( $(left) - 10 )); [ $T -gt 150 ] && T=150
timeout $T compute-sanitizer --tool racecheck --error-exitcode 9 .dev/tests/salasim_gpu_tests "[dense_attn]~[large]" > "$OUT/racecheck.log" 2>&1
log "racecheck (${T} s limit) rc $?: $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY|test cases' "$OUT/racecheck.log" | tr '\n' ' ')"
log end
(cd "$OUT" && tar czf /tmp/C.tgz ops_*.txt peers.txt racecheck.log 2>/dev/null; mv /tmp/C.tgz "$OUT/C.tgz"; find . -mindepth 1 ! -name C.tgz ! -name summary.txt -exec rm -rf {} + 2>/dev/null); ls -la "$OUT"
