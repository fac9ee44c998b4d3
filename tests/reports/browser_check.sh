#!/usr/bin/env bash
# Renders the report's architecture.html in headless Chromium (Debian's `chromium`): the DOM must hold the totals
# that `salasim params` prints and the cost sections, no element may stick out of the page (or text out of its drawing) at a wide and a
# narrow window, and a screenshot is kept beside the page. Without Chromium it says "skipped" and exits 77 (ctest's
# SKIP_RETURN_CODE), never passing.
# Usage: browser_check.sh SALASIM OUT_DIR
set -euo pipefail
bin=$1
out=$2
browser=""
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" >/dev/null 2>&1; then browser=$(command -v "$b"); break; fi
done
if [ -z "$browser" ]; then
  echo "skipped: no Chromium here (Debian: apt-get install chromium; .ci/setup installs it)"
  exit 77
fi
rm -rf "$out" "$out.log"
mkdir -p "$(dirname "$out")"
# the report folder is written whole by `report` itself (an existing one would be refused), its log beside it
"$bin" report --out "$out" --context 4K,64K,1M --hw h200 --hw rtx5090 >"$out.log"

# The numbers the page must show, from `salasim params`, with thousands separators.
commas() { echo "$1" | sed ':a;s/\B[0-9]\{3\}\>/,&/;ta'; }
params=$("$bin" params)
total=$(echo "$params" | awk '$1 == "total" { gsub(",", "", $NF); print $NF }')
layers=$(echo "$params" | grep '^per full layer:' | tr -d ',')  # per full layer: lightning N (xA), sparse M (xB)
per_l=$(echo "$layers" | sed 's/.*lightning \([0-9]*\) (x\([0-9]*\)).*/\1/')
n_l=$(echo "$layers" | sed 's/.*lightning \([0-9]*\) (x\([0-9]*\)).*/\2/')
per_s=$(echo "$layers" | sed 's/.*sparse \([0-9]*\) (x\([0-9]*\)).*/\1/')
n_s=$(echo "$layers" | sed 's/.*sparse \([0-9]*\) (x\([0-9]*\)).*/\2/')
want=("$total" $((per_l * n_l)) $((per_s * n_s)) $((total - per_l * n_l - per_s * n_s)) "$per_l" "$per_s")

# A probe copy of the page (the page itself has no script): layout_probe.js writes its verdict into the DOM.
probe="$out/architecture.probe.html"
awk -v js="$(dirname "$0")/layout_probe.js" '/<\/body>/ { print "<script>"; while ((getline l < js) > 0) print l; print "</script>" } { print }' \
  "$out/architecture.html" >"$probe"

run() { timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars "$@" 2>/dev/null; }
rc=0
height=4000
for width in 1280 800; do
  dom="$out/dom_$width.html"
  run --window-size=$width,900 --dump-dom "file://$probe" >"$dom" || true
  verdict=$(grep -o '<pre id="layout-verdict">[^<]*' "$dom" | sed 's/.*>//' || true)
  [ -n "$verdict" ] || verdict="no verdict: Chromium did not render the page"
  echo "width $width: $verdict"
  case "$verdict" in "LAYOUT OK"*) ;; *) rc=1 ;; esac
  for n in "${want[@]}"; do
    if ! grep -q -- "$(commas "$n")" "$dom"; then
      echo "width $width: the DOM lacks $(commas "$n")"
      rc=1
    fi
  done
  # the cost sections: VRAM by component and the per-op table at --op-context (default 64K)
  for s in "5. VRAM by component" "6. Every op at 64K tokens" "compressed keys K1+K2" "<code>select_blocks</code>"; do
    if ! grep -qF -- "$s" "$dom"; then
      echo "width $width: the DOM lacks '$s'"
      rc=1
    fi
  done
  if [ "$width" = 1280 ]; then height=$(echo "$verdict" | grep -o 'page height [0-9]*' | grep -o '[0-9]*$' || echo 4000); fi
done
# The probe must be able to fail: the same page with one element too wide for the window.
sed 's|</main>|<div style="width:150vw">too wide</div></main>|' "$probe" >"$out/overflow.probe.html"
control=$(run --window-size=1280,900 --dump-dom "file://$out/overflow.probe.html" | grep -o '<pre id="layout-verdict">[^<]*' || true)
case "$control" in
  *"LAYOUT OVERFLOW"*) echo "control: an element too wide for the window is reported" ;;
  *) echo "control: the probe missed an element too wide for the window (${control:-no verdict})"; rc=1 ;;
esac
run --window-size=1280,"$height" --screenshot="$out/architecture.png" "file://$out/architecture.html" >/dev/null || true
if [ -s "$out/architecture.png" ]; then
  echo "screenshot: $out/architecture.png ($(stat -c %s "$out/architecture.png") bytes, 1280 x $height)"
else
  echo "no screenshot was written"
  rc=1
fi
[ "$rc" = 0 ] && echo "browser check: PASS (totals $(commas "$total") ...)" || echo "browser check: FAIL"
exit "$rc"
