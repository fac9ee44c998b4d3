#!/usr/bin/env bash
# The style check of CI: every C++ / CUDA file changed since the revision in .ci/format-base (the tree before
# .clang-format existed) must be as clang-format leaves it (.clang-format: the style in use). Files untouched since
# keep their layout until they are next changed, so the check never forces an unrelated reformat; a reformat of a
# gpu/ file cannot move the golden hash, which counts tokens, not layout (docs/goldens.md).
# Usage: .ci/format.sh [--fix]   (--fix rewrites the offending files in place)
set -uo pipefail
cd "$(dirname "$0")/.."
fix=${1:-}
base=$(sed -n 's/^\([0-9a-f]\{7,40\}\).*/\1/p' .ci/format-base | head -1)
command -v clang-format >/dev/null || { echo "format: clang-format is not installed (.ci/setup installs it)"; exit 1; }
if ! git cat-file -e "$base^{commit}" 2>/dev/null; then
  echo "format: base revision $base is not in this clone (shallow?): checking the files of the last commit only"
  base=HEAD~1
fi
mapfile -t files < <(git diff --name-only --diff-filter=ACMR "$base" -- '*.cpp' '*.hpp' '*.cu' '*.cuh' '*.h' | sort -u)
bad=()
for f in "${files[@]}"; do
  [ -f "$f" ] || continue
  if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then
    if [ "$fix" = --fix ]; then clang-format -i "$f"; else bad+=("$f"); fi
  fi
done
if [ ${#bad[@]} -gt 0 ]; then
  echo "format: ${#bad[@]} of ${#files[@]} changed files differ from clang-format (.clang-format); run .ci/format.sh --fix:"
  printf '  %s\n' "${bad[@]}"
  exit 1
fi
echo "format: ${#files[@]} files changed since $base, all as clang-format leaves them"
