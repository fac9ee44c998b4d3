#!/usr/bin/env bash
# Call C (2026-12-03): records at 64K-2048K (128 decode steps) of revision 4c72664, the 1M spot check, one 64K step under ncu.
export SALASIM_BUILD=.dev LD_LIBRARY_PATH=$PWD/.dev/lib
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
bash bench/device.sh gpu "measure 64K" "measure 256K" "measure 1M" "measure 2048K" > "$OUT/C_measure.txt" 2>&1
grep '^== ' "$OUT/C_measure.txt"
echo "[$SECONDS s] measured"
[ $SECONDS -lt 420 ] && bash bench/device.sh "spot scenarios/sala-9b-1m.json 8" > "$OUT/C_spot.txt" 2>&1 && grep '^== ' "$OUT/C_spot.txt"
echo "[$SECONDS s] spot"
[ $SECONDS -lt 500 ] && bash bench/device.sh "decode_ncu 64K 2" > "$OUT/C_ncu.txt" 2>&1; grep '^== ' "$OUT/C_ncu.txt"
echo "[$SECONDS s] end"
cd "$OUT" && tar czf /tmp/C_all.tgz --exclude=all.tgz . && rm -rf "$OUT"/* && mv /tmp/C_all.tgz "$OUT/"
