# The preamble every device call script shares (bench/.callN.sh, ignored by git: a call's script is not kept).
# Source it first, from the repository root that the device tool runs in:
#   set -uo pipefail; cd "$(dirname "$0")/.."; . bench/call_lib.sh
# It sets OUT (the tool's output folder; /tmp/salasim-out where none is given) and SALASIM_BUILD (.dev unless set),
# and makes a build carried from another machine runnable here (bench/device.sh sources it too): the build
# machine's source path, which bench/stage.sh records in $SALASIM_BUILD/source_dir and the test binaries look for
# their data under, becomes a link to this tree; build/salasim, which tests that start the CLI run, a link to the
# carried binary; the carried libraries go last on LD_LIBRARY_PATH. Without the first link a carried test binary
# finds no scenario file, and the call is spent on nothing. Then:
#   left          seconds left of CALL_BUDGET (default 575: the tool's 600 s less the time to pack)
#   log TEXT...   one line "== [N s] TEXT" on stdout and at the end of $OUT/summary.txt
#   pack          $OUT's files under 1500 KiB, but no .h5 or .json, into $OUT/C.tgz: what still comes back when a
#                 call is cut short or a file is over the tool's size limit
#   finish [PAT]  pack, then remove from $OUT all but C.tgz, summary.txt and the files named like PAT (a find -name
#                 pattern; default tiny-*.h5, the goldens a call records)
export OUT=${OUT:-/tmp/salasim-out}
mkdir -p "$OUT"
export SALASIM_BUILD=${SALASIM_BUILD:-.dev}
CALL_T0=$SECONDS
call_src=$(cat "$SALASIM_BUILD/source_dir" 2>/dev/null || true)
if [ -n "$call_src" ] && [ ! -e "$call_src" ]; then mkdir -p "$(dirname "$call_src")" && ln -s "$PWD" "$call_src"; fi
if [ "$SALASIM_BUILD" != build ] && [ -x "$SALASIM_BUILD/salasim" ] && [ ! -e build/salasim ]; then
  mkdir -p build && ln -s "../$SALASIM_BUILD/salasim" build/salasim
fi
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$PWD/$SALASIM_BUILD/lib"
left() { echo $((${CALL_BUDGET:-575} - (SECONDS - CALL_T0))); }
log() { echo "== [$((SECONDS - CALL_T0)) s] $*" | tee -a "$OUT/summary.txt"; }
pack() {
  (cd "$OUT" && find . -type f -size -1500k ! -name C.tgz ! -name '*.h5' ! -name '*.json' -print0 |
    tar czf /tmp/call_lib_pack.tgz --null -T - && mv /tmp/call_lib_pack.tgz "$OUT/C.tgz")
}
finish() {
  pack
  (cd "$OUT" && find . -mindepth 1 -type f ! -name C.tgz ! -name summary.txt ! -name "${1:-tiny-*.h5}" -delete &&
    find . -mindepth 1 -type d -empty -delete)
}
