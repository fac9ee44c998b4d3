#!/usr/bin/env bash
# bench/call_lib.sh in a scratch tree: a carried build's source path and binary linked, log and left, pack keeping
# what the device tool can bring back, finish leaving only the archive, the summary and the goldens.
# Usage: call_lib_test.sh <repository root> <scratch dir>
set -euo pipefail
root=$1 scratch=$2
rm -rf "$scratch" && mkdir -p "$scratch/tree/.dev/lib" && cd "$scratch/tree"
fail() { echo "call_lib: FAIL: $*"; exit 1; }
printf '#!/bin/sh\necho carried\n' > .dev/salasim && chmod +x .dev/salasim
echo "$scratch/build-machine/src" > .dev/source_dir
OUT="$scratch/out" CALL_BUDGET=100
export OUT CALL_BUDGET
. "$root/bench/call_lib.sh"
[ "$(readlink "$scratch/build-machine/src")" = "$PWD" ] || fail "the build machine's source path is not linked to the tree"
[ "$(build/salasim)" = carried ] || fail "build/salasim does not run the carried binary"
case ":$LD_LIBRARY_PATH:" in *":$PWD/.dev/lib:"*) ;; *) fail "the carried libraries are not on LD_LIBRARY_PATH" ;; esac
log "first line"
grep -q '^== \[0 s\] first line$' "$OUT/summary.txt" || fail "log wrote: $(cat "$OUT/summary.txt")"
[ "$(left)" -le 100 ] && [ "$(left)" -ge 95 ] || fail "left gave $(left) of 100"
echo small > "$OUT/small.txt"
mkdir -p "$OUT/sub" && echo nested > "$OUT/sub/nested.txt"
head -c 2000000 /dev/zero > "$OUT/big.bin"
echo '{}' > "$OUT/run.json"
echo golden > "$OUT/tiny-short.h5"
pack
listed=$(tar tzf "$OUT/C.tgz" | sed 's#^\./##' | sort | tr '\n' ' ')
[ "$listed" = "small.txt sub/nested.txt summary.txt " ] || fail "pack archived: $listed"
finish
left_files=$(cd "$OUT" && find . -type f | sed 's#^\./##' | sort | tr '\n' ' ')
[ "$left_files" = "C.tgz summary.txt tiny-short.h5 " ] || fail "finish left: $left_files"
# sourced again (a second script in the same call): nothing is linked twice, the links still point where they did
. "$root/bench/call_lib.sh"
[ "$(readlink "$scratch/build-machine/src")" = "$PWD" ] || fail "a second source moved the link"
echo "call_lib: OK"
