#!/usr/bin/env bash
# Call I (2026-12-03, session 2): both goldens again after comment-only edits of gpu/ (new GPU source hash).
export SALASIM_BUILD=.dev LD_LIBRARY_PATH=$PWD/.dev/lib
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
bash bench/device.sh gpu "golden scenarios/tiny-short.json" "golden scenarios/tiny-sparse.json" > "$OUT/I_golden.txt" 2>&1
grep '^== ' "$OUT/I_golden.txt"; tail -2 "$OUT"/golden_tiny-*.txt
cd "$OUT" && tar czf /tmp/I.tgz . && rm -rf "$OUT"/* && mv /tmp/I.tgz "$OUT/"
