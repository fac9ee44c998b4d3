#!/usr/bin/env bash
# Call G (2026-12-03, session 2): records at 64K-2048K (128 decode steps) of the final gpu/ sources, the 1M spot check.
export SALASIM_BUILD=.dev LD_LIBRARY_PATH=$PWD/.dev/lib
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
bash bench/device.sh gpu "measure 64K" "measure 256K" "measure 1M" "measure 2048K" > "$OUT/G_measure.txt" 2>&1
grep '^== ' "$OUT/G_measure.txt"
echo "[$SECONDS s] measured"
[ $SECONDS -lt 480 ] && bash bench/device.sh "spot scenarios/sala-9b-1m.json 8" > "$OUT/G_spot.txt" 2>&1 && grep '^== ' "$OUT/G_spot.txt"
echo "[$SECONDS s] end"
cd "$OUT" && tar czf /tmp/G.tgz . && rm -rf "$OUT"/* && mv /tmp/G.tgz "$OUT/"
