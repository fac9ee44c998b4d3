#!/usr/bin/env bash
# The hostile-case runner's functions (tests/hostile/run.sh sources this, then one class file). A class file is a
# list of cases, each run as a user runs it, in a real process, in a scratch folder; the runner writes the class's
# table for docs/hostile-cases.md (tests/hostile/doc.sh assembles the page from every class's table).
#
# In a class file:
#   describe "TEXT"                 one paragraph saying what the class tries and what a right answer is
#   case_ NAME WANT KEEP CMD [RE]   one case:
#     NAME  what is tried, one line
#     WANT  the exit codes that are right, joined by '|' ("2", "0", "1|2")
#     KEEP  files or folders (relative to the scratch folder, space-separated, "" for none) that must be
#           byte-identical afterwards: nothing lost
#     CMD   a bash command line, run as `bash -c CMD` with stdin from /dev/null in the scratch folder (where the
#           class file runs too), 180 s at most;
#           $S is the salasim binary, $ROOT the source tree
#     RE    an extended regex the output (stdout and stderr together) must contain; "" for none
# A case is right when its exit code is one of WANT, its output matches RE, KEEP is unchanged and nothing temporary
# (.NAME.tmp-PID, .salasim-probe-*) is left in the scratch folder. Variables the class sets persist between cases.
set -u

hostile_cases=0
hostile_failed=0
hostile_describe=""
hostile_rows=""

describe() { hostile_describe=$1; }

hostile_sums() {
  local f
  for f in "$@"; do
    if [ -d "$f" ]; then (cd "$f" && find . -type f | LC_ALL=C sort | xargs -r md5sum); else md5sum <"$f"; fi
  done 2>/dev/null | md5sum
}

# Scratch and source paths, and what varies from run to run (process ids in temporary names), out of a text shown
# in the page, so the page is the same on every machine.
hostile_clean() {
  local t=$1
  t=${t//$W\//}
  t=${t//$W/.}
  t=${t//$ROOT\//}
  t=${t//$S/salasim}
  t=$(sed -E 's/tmp-[0-9]+/tmp-PID/g; s/probe-[0-9]+/probe-PID/g' <<<"$t")
  t=${t//|/\\|}
  printf '%s' "$t"
}

case_() {
  local name=$1 want=$2 keep=$3 cmd=$4 re=${5:-} before out rc first left lost="" ok=yes why=""
  # shellcheck disable=SC2086
  before=$(hostile_sums $keep)
  out=$(timeout 180 bash -c "$cmd" 2>&1 </dev/null)
  rc=$?
  # shellcheck disable=SC2086
  [ "$(hostile_sums $keep)" = "$before" ] || lost="$keep changed"
  left=$(cd "$W" && find . \( -name '.*.tmp-*' -o -name '.salasim-probe-*' \) -print 2>/dev/null | head -3 | tr '\n' ' ')
  [[ "|$want|" == *"|$rc|"* ]] || { ok=no; why="exit $rc, want $want"; }
  if [ -n "$re" ] && ! grep -aqE -- "$re" <<<"$out"; then ok=no; why="${why:+$why; }output does not match /$re/"; fi
  [ -z "$lost" ] || { ok=no; why="${why:+$why; }$lost"; }
  [ -z "$left" ] || { ok=no; why="${why:+$why; }left behind: $left"; }
  (cd "$W" && find . \( -name '.*.tmp-*' -o -name '.salasim-probe-*' \) -exec rm -rf {} + 2>/dev/null)
  first=$(grep -a -v -E '^\s*$' <<<"$out" | head -1)
  first=$(hostile_clean "${first:0:200}")
  local shown
  shown=$(hostile_clean "${cmd:0:160}")
  hostile_cases=$((hostile_cases + 1))
  if [ $ok = yes ]; then
    hostile_rows+="| $(hostile_clean "$name") | \`$shown\` | $rc | $first | ok |"$'\n'
  else
    hostile_failed=$((hostile_failed + 1))
    hostile_rows+="| $(hostile_clean "$name") | \`$shown\` | $rc | $first | FAIL: $(hostile_clean "$why") |"$'\n'
    echo "FAIL: $name: $why" >&2
    echo "  command: $cmd" >&2
    echo "  output: ${out:0:600}" >&2
  fi
}
