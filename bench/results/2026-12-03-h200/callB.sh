#!/usr/bin/env bash
# Call B (2026-12-03): the records at 64K-2048K with the decode fusions, the 1M spot check, more A/B rounds.
export SALASIM_BUILD=.dev LD_LIBRARY_PATH=$PWD/.dev/lib
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
log() { echo "[$SECONDS s] $*" | tee -a "$OUT/B_summary.txt"; }
bash bench/device.sh gpu "measure 64K" "measure 256K" "measure 1M" > "$OUT/B_measure.txt" 2>&1
grep '^== ' "$OUT/B_measure.txt" | tee -a "$OUT/B_summary.txt"
log "64K-1M done"
[ $SECONDS -lt 380 ] && { bash bench/device.sh "measure 2048K" > "$OUT/B_measure2048.txt" 2>&1; grep '^== ' "$OUT/B_measure2048.txt" | tee -a "$OUT/B_summary.txt"; log "2048K done"; }
for i in 4 5; do
  for f in on residual,gate residual,rope residual off; do
    [ $SECONDS -gt 560 ] && break 2
    .dev/salasim run --config scenarios/models/minicpm-sala-9b.json --context 64K --decode 128 --extrapolate --fuse $f \
      > "$OUT/B_ab_${f/,/+}_$i.txt" 2>&1
    echo "round $i --fuse $f: $(grep -E 'decode' "$OUT/B_ab_${f/,/+}_$i.txt" | tr '\n' ' ')" >> "$OUT/B_ab.txt"
  done
done
cat "$OUT/B_ab.txt" >> "$OUT/B_summary.txt" 2>/dev/null
log "end"
