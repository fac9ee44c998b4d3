#!/usr/bin/env bash
# tests/hostile/run.sh CLASS SALASIM ROOT WORK: runs the cases of tests/hostile/CLASS.sh (tests/hostile/lib.sh says
# how a case is written) in the fresh scratch folder WORK/CLASS, and writes the class's section of
# docs/hostile-cases.md to WORK/CLASS.md. Prints "hostile CLASS: N cases, M failed"; exits 1 when any case failed.
set -u
class=$1
S=$(realpath "$2")
ROOT=$(realpath "$3")
work=$(realpath -m "$4")
W=$work/$class
rm -rf "$W" && mkdir -p "$W" || exit 3
export S ROOT W
# shellcheck source=tests/hostile/lib.sh
source "$ROOT/tests/hostile/lib.sh"
cd "$W" || exit 3
# shellcheck disable=SC1090
source "$ROOT/tests/hostile/$class.sh"
{
  echo "## $class"
  echo
  echo "$hostile_describe"
  echo
  echo "| case | command | exit | first line of the output | result |"
  echo "|---|---|---|---|---|"
  printf '%s' "$hostile_rows"
  echo
} >"$work/$class.md"
echo "hostile $class: $hostile_cases cases, $hostile_failed failed"
[ "$hostile_failed" -eq 0 ]
