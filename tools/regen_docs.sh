#!/usr/bin/env bash
# Regenerates what README.md, docs/ and bench/RESULTS.md show of the program's output and of the measured records:
#   - the output under every "$ ./build/salasim ..." a CPU runs in seconds (tests/docs/check_commands.py --write:
#     lines that differ only in their numbers are rewritten; any other difference is listed for a person), run in
#     each page's order in a scratch folder laid out as a checkout;
#   - README.md's measured figures from reports/measured/h200/, h100/ and cpu/ (tests/docs/check_measured.py);
#   - bench/RESULTS.md whole, one section per card of reports/measured/, with `salasim model compare`'s table where
#     a card has a comparator's records (tests/docs/results_page.py).
# The ctests "docs: ..." run the same scripts without --write and fail while the docs and the program disagree.
#   bash tools/regen_docs.sh [BUILD_DIR]      (default build; the binary is BUILD_DIR/salasim)
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
[ -x "$B/salasim" ] || { echo "regen_docs: no $B/salasim: build first (bash .ci/setup)" >&2; exit 2; }
python3 tests/docs/check_measured.py . --write
python3 tests/docs/results_page.py . --write --salasim "$B/salasim"
python3 tests/docs/check_commands.py . "$B/salasim" "$B" --write
