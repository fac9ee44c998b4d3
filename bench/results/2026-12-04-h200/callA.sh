#!/usr/bin/env bash
# Call A (2026-12-04): the golden hash over the compiler's inputs (new hash), launch geometry in gpu/launch_geometry.hpp,
# performance variants as RunnerOptions (Stream::pdl, Gemv, DecodeFusion; no process-wide switches), and decode steps
# enqueued one ahead with the greedy token picked on the device. Every GPU op test and the model tests, the
# sanitizers on the new kernel and the generation loop, both goldens (verify passes as they are recorded), the decode
# A/B --ahead on|off by turns (3 rounds at 64K, 1 at 1M), then the 1M spot check if time is left.
export SALASIM_BUILD=.dev LD_LIBRARY_PATH=$PWD/.dev/lib
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
log() { echo "[$SECONDS s] $*" | tee -a "$OUT/A_summary.txt"; }
pack() { cd "$OUT" && tar czf /tmp/A.tgz . && rm -rf "$OUT"/* && mv /tmp/A.tgz "$OUT/"; }
bash bench/device.sh gpu tests model > "$OUT/A_tests.txt" 2>&1
grep '^== ' "$OUT/A_tests.txt" | tee -a "$OUT/A_summary.txt"
if grep -q 'FAILED' "$OUT/A_tests.txt"; then log "tests failed: stop"; pack; exit 1; fi
log "tests done"
SAN_TIMEOUT=100 SMALL="[greedy_token],[embed]" bash bench/device.sh "sanitize memcheck racecheck" > "$OUT/A_san.txt" 2>&1
SAN_TIMEOUT=150 SMALL="[generate]~[large]" bash bench/device.sh "sanitize memcheck" > "$OUT/A_san_generate.txt" 2>&1
grep -h '^== ' "$OUT"/A_san*.txt | tee -a "$OUT/A_summary.txt"
log "sanitizers done"
bash bench/device.sh "golden scenarios/tiny-short.json" "golden scenarios/tiny-sparse.json" > "$OUT/A_golden.txt" 2>&1
grep '^== ' "$OUT/A_golden.txt" | tee -a "$OUT/A_summary.txt"
log "goldens done"
run() {  # run <context> <tag> [args]
  local ctx=$1 tag=$2; shift 2
  .dev/salasim run --config scenarios/models/minicpm-sala-9b.json --context $ctx --decode 128 --extrapolate \
    --json-out "$OUT/A_ab_$tag.json" "$@" > "$OUT/A_ab_$tag.txt" 2>&1
  echo "$tag: $(grep -E 'TTFT|decode:|host time' "$OUT/A_ab_$tag.txt" | tr '\n' ' ')" | tee -a "$OUT/A_ab.txt"
}
for i in 1 2 3; do run 64K on_$i; run 64K off_$i --ahead off; done
log "64K A/B done"
[ $SECONDS -lt 400 ] && run 1M on_1M
[ $SECONDS -lt 460 ] && run 1M off_1M --ahead off
log "1M A/B done"
[ $SECONDS -lt 470 ] && bash bench/device.sh "spot scenarios/sala-9b-1m.json 8" > "$OUT/A_spot.txt" 2>&1
grep -h '^== ' "$OUT/A_spot.txt" 2>/dev/null | tee -a "$OUT/A_summary.txt"
log "end"
pack
