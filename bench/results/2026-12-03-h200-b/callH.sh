#!/usr/bin/env bash
# Call H (2026-12-03, session 2): A/B at 1M, 128 decode steps, the previous binary (.dev-old, 64ee668) and this one by turns.
export SALASIM_BUILD=.dev
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
run() {  # run <binary dir> <context> <tag>
  LD_LIBRARY_PATH=$PWD/$1/lib $1/salasim run --config scenarios/models/minicpm-sala-9b.json --context $2 --decode 128 --extrapolate \
    > "$OUT/H_ab_$3.txt" 2>&1
  echo "$3: $(grep -E 'median' "$OUT/H_ab_$3.txt" | tr '\n' ' ')" | tee -a "$OUT/H_ab.txt"
}
for i in 1 2; do
  [ $SECONDS -lt 380 ] && run .dev 1M new_1M_$i
  [ $SECONDS -lt 380 ] && run .dev-old 1M old_1M_$i
done
for i in 1 2 3; do run .dev 64K new_64K_$i; run .dev-old 64K old_64K_$i; done
echo "[$SECONDS s] end"
cd "$OUT" && tar czf /tmp/H.tgz . && rm -rf "$OUT"/* && mv /tmp/H.tgz "$OUT/"
