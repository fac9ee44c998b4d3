#!/usr/bin/env bash
# Stages this machine's CUDA build for the device tool: the binaries bench/device.sh runs, in the build tree's layout,
# plus the shared libraries the device may lack, into .dev/ (ignored by git; name it in the device tool's carry and
# run SALASIM_BUILD=.dev bash bench/device.sh ...). The fla-core wheel for bench/peers.py goes to .whl/.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
rm -rf .dev && mkdir -p .dev/tests .dev/bench .dev/lib
cp "$B/salasim" .dev/
cp "$B/tests/salasim_gpu_tests" .dev/tests/
[ -x "$B/bench/salasim_ops_bench" ] && cp "$B/bench/salasim_ops_bench" .dev/bench/
[ -f "$B/bench/libsalasim_capi.so" ] && cp "$B/bench/libsalasim_capi.so" .dev/bench/
[ -d "$B/lib" ] && cp -L "$B"/lib/*.so* .dev/lib/ 2>/dev/null  # the SentencePiece copies the binary's RPATH names
for lib in $(ldd .dev/bench/salasim_ops_bench 2>/dev/null | awk '/libbenchmark/ {print $3}'); do cp -L "$lib" .dev/lib/; done
sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$B/CMakeCache.txt" > .dev/source_dir
grep -qx '/.dev/' .git/info/exclude 2>/dev/null || echo '/.dev/' >> .git/info/exclude
du -sh .dev
