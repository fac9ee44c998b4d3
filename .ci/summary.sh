#!/usr/bin/env bash
# summary.sh CTEST_LOG [GPU_TESTS_FILE]: one line counting the tests ctest ran as passed, failed and skipped, naming
# the skipped ones (without a GPU, the gpu-labelled tests exit 77, which ctest reports as Skipped but counts inside
# its "100% tests passed"). GPU_TESTS_FILE lists the gpu-labelled test names one a line (from ctest -N -L gpu),
# to say which skipped tests are GPU tests. Prints "ctest did not run" when the log has no ctest summary.
set -euo pipefail
log=$1
gpu_list=${2:-}
summary=$(grep -E "^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+" "$log" | tail -1 || true)
if [ -z "$summary" ]; then
  echo "CI summary: ctest did not run"
  exit 0
fi
failed=$(sed -E 's/.* ([0-9]+) tests? failed out of.*/\1/' <<<"$summary")
total=$(sed -E 's/.*failed out of ([0-9]+).*/\1/' <<<"$summary")
# "The following tests did not run:" lists "\t  12 - name (Skipped)"; a test that did not run for another reason
# (Disabled) is neither passed nor failed either.
skipped=()
not_run=0
while IFS= read -r line; do
  name=$(sed -E 's/^[[:space:]]*[0-9]+ - (.*) \(([A-Za-z ]+)\)$/\1/' <<<"$line")
  why=$(sed -E 's/^[[:space:]]*[0-9]+ - (.*) \(([A-Za-z ]+)\)$/\2/' <<<"$line")
  if [ "$why" = Skipped ]; then skipped+=("$name"); else not_run=$((not_run + 1)); fi
done < <(awk '/^The following tests did not run:/ {f = 1; next} f && /^\t/ {print; next} {f = 0}' "$log")
passed=$((total - failed - ${#skipped[@]} - not_run))
gpu=()
other=()
for n in "${skipped[@]+"${skipped[@]}"}"; do
  if [ -n "$gpu_list" ] && grep -qxF -- "$n" "$gpu_list"; then gpu+=("$n"); else other+=("$n"); fi
done
line="CI summary: $passed passed, $failed failed, ${#skipped[@]} skipped of $total tests"
[ "$not_run" -gt 0 ] && line+=", $not_run disabled"
join() { local IFS=';'; local s="$*"; echo "${s//;/; }"; }
[ ${#gpu[@]} -gt 0 ] && line+=" | skipped, GPU tests without a GPU (${#gpu[@]}): $(join "${gpu[@]}")"
[ ${#other[@]} -gt 0 ] && line+=" | skipped (${#other[@]}): $(join "${other[@]}")"
echo "$line"
