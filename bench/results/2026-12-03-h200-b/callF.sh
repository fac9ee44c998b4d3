#!/usr/bin/env bash
# Call F (2026-12-03, session 2): GPU tests of the final gpu/ sources, both goldens, the A/B of the previous binary
# (.dev-old, revision 64ee668) against this one at 64K (3 rounds) and 1M (1 round), 128 decode steps each.
export SALASIM_BUILD=.dev LD_LIBRARY_PATH=$PWD/.dev/lib
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
log() { echo "[$SECONDS s] $*" | tee -a "$OUT/F_summary.txt"; }
bash bench/device.sh gpu "tests [sparse_attn],[dense_attn],[select_blocks],[gla],[rmsnorm],[gemv],[generate]" > "$OUT/F_tests.txt" 2>&1
grep '^== ' "$OUT/F_tests.txt" | tee -a "$OUT/F_summary.txt"
if grep -q 'FAILED' "$OUT/F_tests.txt"; then log "tests failed: stop"; cp "$OUT"/gpu_tests.log "$OUT/F_gpu_tests.log"; cd "$OUT" && tar czf /tmp/F.tgz . && rm -rf "$OUT"/* && mv /tmp/F.tgz "$OUT/"; exit 1; fi
log "tests done"
bash bench/device.sh "golden scenarios/tiny-short.json" "golden scenarios/tiny-sparse.json" > "$OUT/F_golden.txt" 2>&1
grep '^== ' "$OUT/F_golden.txt" | tee -a "$OUT/F_summary.txt"
log "goldens done"
run() {  # run <binary dir> <context> <tag>
  LD_LIBRARY_PATH=$PWD/$1/lib $1/salasim run --config scenarios/models/minicpm-sala-9b.json --context $2 --decode 128 --extrapolate \
    > "$OUT/F_ab_$3.txt" 2>&1
  echo "$3: $(grep -E 'decode' "$OUT/F_ab_$3.txt" | tr '\n' ' ')" | tee -a "$OUT/F_ab.txt"
}
for i in 1 2 3; do
  run .dev-old 64K old_64K_$i; run .dev 64K new_64K_$i
done
log "64K A/B done"
[ $SECONDS -lt 440 ] && run .dev-old 1M old_1M
[ $SECONDS -lt 510 ] && run .dev 1M new_1M
log "end"
cd "$OUT" && tar czf /tmp/F.tgz . && rm -rf "$OUT"/* && mv /tmp/F.tgz "$OUT/"
