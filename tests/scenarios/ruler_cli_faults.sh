#!/usr/bin/env bash
# ruler_cli_faults.sh SALASIM CKPT WORK CASE: `salasim ruler` as a user runs it, under the faults the RULER
# commands must survive (docs/ruler-runs.md, "The results file"). CKPT is a checkpoint folder with a tokenizer.model
# (the CLI chain's); WORK a scratch folder of this case's own. Prints "ok: CASE ..." and exits 0 when every check
# holds, "FAIL: ..." and 1 otherwise, 77 when this machine cannot make the fault (no mount namespace for a small
# tmpfs). Small data (200-token samples, the float64 reference, 2 new tokens) keep each case to seconds.
set -u
S=$1 CK=$2 W=$3 CASE=$4
rm -rf "$W" && mkdir -p "$W" || exit 1
RUN=("$S" ruler run --checkpoint "$CK" --backend reference --max-new-tokens 2 --quiet)
fail() { echo "FAIL: $CASE: $*"; exit 1; }
# expect RC PATTERN CMD...: runs CMD, checks its exit code and that its output holds PATTERN (grep -E)
expect() {
  local rc=$1 pat=$2
  shift 2
  local out got
  out=$("$@" 2>&1)
  got=$?
  [ "$got" = "$rc" ] || fail "exit $got, expected $rc: $* -> $(echo "$out" | tail -3)"
  echo "$out" | grep -Eq -- "$pat" || fail "output of $* lacks /$pat/: $(echo "$out" | tail -3)"
}
# ids FILE: each id once, one per line, sorted
ids() { grep -o '"id":"[^"]*"' "$1" | sort; }
unique_ids() { [ "$(ids "$1" | uniq -d | wc -l)" = 0 ] || fail "$1 holds an id twice: $(ids "$1" | uniq -d | head -3)"; }
gen() {  # gen OUT SAMPLES: 2 tasks x 1 length of 200 tokens
  "$S" ruler generate --task niah_single_1,niah_multikey_1 --length 200 --tokens-to-generate 16 --samples "$2" \
    --tokenizer "$CK" --out "$1" > /dev/null 2>&1 || fail "ruler generate $1"
}

case "$CASE" in
same-file)  # --out that is the data file, by path, symlink, hard link or as a shard: refused, the data intact
  gen "$W/data.jsonl" 1
  sum=$(md5sum < "$W/data.jsonl")
  ln -s data.jsonl "$W/link.jsonl" && ln "$W/data.jsonl" "$W/hard.jsonl" || fail "links"
  for out in "$W/data.jsonl" "$W/link.jsonl" "$W/hard.jsonl" "$W/./data.jsonl"; do
    expect 2 "is the same file as --data" "${RUN[@]}" --data "$W/data.jsonl" --out "$out" --resume
    expect 2 "is the same file as --data" "${RUN[@]}" --data "$W/data.jsonl" --out "$out" --force
  done
  cp "$W/data.jsonl" "$W/r.shard-1-of-2.jsonl"
  expect 2 "is the same file as --data" "${RUN[@]}" --data "$W/r.shard-1-of-2.jsonl" --out "$W/r.jsonl" --shard 1/2
  expect 2 "is the same file as --data" "${RUN[@]}" --data "$W/r.shard-1-of-2.jsonl" --out "$W/r.jsonl" --gpus 2
  [ "$(md5sum < "$W/data.jsonl")" = "$sum" ] || fail "the data file changed"
  [ "$(md5sum < "$W/r.shard-1-of-2.jsonl")" = "$sum" ] || fail "the shard-named data file changed"
  # generate never writes over what it reads: the tokenizer (named by its folder or itself), the haystack text
  mkdir -p "$W/tok" && cp "$CK/tokenizer.model" "$W/tok/" && tsum=$(md5sum < "$W/tok/tokenizer.model")
  for tok in "$W/tok" "$W/tok/tokenizer.model"; do
    expect 2 "is the same file as --tokenizer" "$S" ruler generate --task niah_single_1 --length 300 --tokenizer "$tok" \
      --out "$W/tok/tokenizer.model" --force
  done
  expect 2 "is the same file as --haystack-text" "$S" ruler generate --task niah_single_2 --length 300 --tokenizer "$W/tok" \
    --haystack-text "$W/data.jsonl" --out "$W/data.jsonl" --force
  [ "$(md5sum < "$W/tok/tokenizer.model")" = "$tsum" ] || fail "the tokenizer changed"
  [ "$(md5sum < "$W/data.jsonl")" = "$sum" ] || fail "the haystack text changed"
  echo "ok: same-file refused 13 ways, data intact" ;;

resume-lines)  # a foreign complete line is refused and kept; an unterminated last line is removed and redone
  gen "$W/data.jsonl" 1
  expect 0 "2 run now" "${RUN[@]}" --data "$W/data.jsonl" --out "$W/res.jsonl"
  head -1 "$W/res.jsonl" > "$W/one.jsonl"
  cp "$W/one.jsonl" "$W/foreign.jsonl" && echo '{"note": "my own line"}' >> "$W/foreign.jsonl"
  sum=$(md5sum < "$W/foreign.jsonl")
  expect 2 "foreign.jsonl line 2: not a results line" "${RUN[@]}" --data "$W/data.jsonl" --out "$W/foreign.jsonl" --resume
  expect 2 "foreign.jsonl line 2: not a results line" "${RUN[@]}" --data "$W/data.jsonl" --out "$W/foreign.jsonl" --force
  [ "$(md5sum < "$W/foreign.jsonl")" = "$sum" ] || fail "the foreign line was touched"
  cp "$W/data.jsonl" "$W/notres.jsonl"
  expect 2 "line 1: not a results line" "${RUN[@]}" --data "$W/one.jsonl" --out "$W/notres.jsonl" --resume
  cmp -s "$W/data.jsonl" "$W/notres.jsonl" || fail "a data file given as --out was changed"
  # the second line cut short, as a kill while writing it leaves it
  cp "$W/one.jsonl" "$W/torn.jsonl" && tail -1 "$W/res.jsonl" | head -c 300 >> "$W/torn.jsonl"
  expect 0 "1 already done, 1 run now \(a torn last line was redone\)" "${RUN[@]}" --data "$W/data.jsonl" --out "$W/torn.jsonl" --resume
  unique_ids "$W/torn.jsonl"
  [ "$(wc -l < "$W/torn.jsonl")" = 2 ] || fail "torn.jsonl has $(wc -l < "$W/torn.jsonl") lines, expected 2"
  expect 2 "results exist; pass --resume to continue that run, --force to replace them" "${RUN[@]}" --data "$W/data.jsonl" --out "$W/torn.jsonl"
  expect 0 "2 run now" "${RUN[@]}" --data "$W/data.jsonl" --out "$W/torn.jsonl" --force
  [ "$(wc -l < "$W/torn.jsonl")" = 2 ] || fail "--force left $(wc -l < "$W/torn.jsonl") lines, expected 2"
  echo "ok: resume-lines: foreign lines refused and kept, a torn last line redone, --force replaces" ;;

concurrent)  # two real runs on one --out: the second is refused at once, the first ends with each id once
  gen "$W/data.jsonl" 3
  "${RUN[@]}" --data "$W/data.jsonl" --out "$W/res.jsonl" > "$W/first.log" 2>&1 &
  first=$!
  for _ in $(seq 100); do [ -e "$W/res.jsonl" ] && break; sleep 0.1; done
  [ -e "$W/res.jsonl" ] || fail "the first run never opened its results"
  t0=$(date +%s.%N)
  expect 2 "another process holds its lock" "${RUN[@]}" --data "$W/data.jsonl" --out "$W/res.jsonl" --resume
  expect 2 "another process holds its lock" "${RUN[@]}" --data "$W/data.jsonl" --out "$W/res.jsonl" --force
  expect 2 "results exist" "${RUN[@]}" --data "$W/data.jsonl" --out "$W/res.jsonl"
  took=$(echo "$(date +%s.%N) - $t0" | bc)
  [ "$(echo "$took < 5" | bc)" = 1 ] || fail "the second writers took $took s to be refused"
  wait $first || fail "the first run failed: $(tail -3 "$W/first.log")"
  kill -0 $first 2> /dev/null && fail "the first run is still there"
  unique_ids "$W/res.jsonl"
  [ "$(ids "$W/res.jsonl" | wc -l)" = 6 ] || fail "res.jsonl holds $(ids "$W/res.jsonl" | wc -l) ids, expected 6"
  echo "ok: concurrent: the second writer refused in $took s, 6 ids once each" ;;

sigkill)  # SIGKILL at random points, then --resume: nothing lost, nothing doubled
  gen "$W/data.jsonl" 3
  for i in $(seq 8); do
    "${RUN[@]}" --data "$W/data.jsonl" --out "$W/res.jsonl" --resume > /dev/null 2>&1 &
    pid=$!
    sleep "$(awk -v s="$RANDOM" 'BEGIN { srand(s); printf "%.2f", 0.1 + rand() * 2.5 }')"
    kill -9 $pid 2> /dev/null
    wait $pid 2> /dev/null
    [ -s "$W/res.jsonl" ] && [ "$(tail -c 1 "$W/res.jsonl" | od -An -c | tr -d ' ')" != '\n' ] && echo "  kill $i left an unterminated line"
  done
  expect 0 "ruler run: 6 samples in this shard" "${RUN[@]}" --data "$W/data.jsonl" --out "$W/res.jsonl" --resume
  unique_ids "$W/res.jsonl"
  [ "$(ids "$W/res.jsonl" | wc -l)" = 6 ] || fail "res.jsonl holds $(ids "$W/res.jsonl" | wc -l) ids, expected 6"
  [ "$(wc -l < "$W/res.jsonl")" = 6 ] || fail "res.jsonl has $(wc -l < "$W/res.jsonl") lines, expected 6"
  echo "ok: sigkill: 8 kills, then 6 ids once each" ;;

full-disk)  # a 64 KiB tmpfs: every command exits 2 naming the file, nothing under a final name
  gen "$W/data.jsonl" 1
  "${RUN[@]}" --data "$W/data.jsonl" --out "$W/res.jsonl" > /dev/null 2>&1 || fail "ruler run for the report's input"
  mkdir -p "$W/full"
  unshare -m true 2> /dev/null || { echo "skipped: no mount namespace here (unshare -m needs root)"; exit 77; }
  export S CK W
  unshare -m bash -c '
    mount -t tmpfs -o size=64k none "$W/full" || exit 77
    "$S" ruler generate --task niah_single_1 --length 4K --samples 8 --tokenizer "$CK" --out "$W/full/data.jsonl" > "$W/gen.log" 2>&1
    echo "generate $?" > "$W/rc"
    ls -A "$W/full" > "$W/after_generate"
    dd if=/dev/zero of="$W/full/filler" bs=1k count=64 2> /dev/null
    "$S" ruler run --checkpoint "$CK" --backend reference --max-new-tokens 2 --quiet --data "$W/data.jsonl" --out "$W/full/res.jsonl" > "$W/run.log" 2>&1
    echo "run $?" >> "$W/rc"
    ls -A "$W/full" > "$W/after_run"
    "$S" ruler report "$W/res.jsonl" --out "$W/full/report" --paper "" > "$W/report.log" 2>&1
    echo "report $?" >> "$W/rc"
    ls -A "$W/full" > "$W/after_report"
  '
  st=$?
  [ "$st" = 77 ] && { echo "skipped: cannot mount a tmpfs here"; exit 77; }
  grep -q "generate 2" "$W/rc" || fail "generate on a full disk: $(cat "$W/rc"; tail -2 "$W/gen.log")"
  grep -q "No space left on device" "$W/gen.log" || fail "generate: $(tail -2 "$W/gen.log")"
  grep -q "full/data.jsonl" "$W/gen.log" || fail "generate does not name its --out: $(tail -2 "$W/gen.log")"
  [ -s "$W/after_generate" ] && fail "generate left files: $(cat "$W/after_generate")"
  grep -q "run 2" "$W/rc" || fail "run on a full disk: $(cat "$W/rc"; tail -2 "$W/run.log")"
  grep -q "full/res.jsonl: writing a results line failed: No space left on device" "$W/run.log" || fail "run: $(tail -2 "$W/run.log")"
  [ "$(cat "$W/after_run")" = filler ] || fail "run left files: $(cat "$W/after_run")"
  grep -q "report 2" "$W/rc" || fail "report on a full disk: $(cat "$W/rc"; tail -2 "$W/report.log")"
  grep -Eq "No space left on device|a full disk" "$W/report.log" || fail "report: $(tail -2 "$W/report.log")"
  [ "$(cat "$W/after_report")" = filler ] || fail "report left files: $(cat "$W/after_report")"
  echo "ok: full-disk: generate, run and report exit 2 naming the file, nothing left under a final name" ;;

file-size)  # ulimit -f with SIGXFSZ ignored: writes fail with EFBIG; exit 2, nothing under a final name
  gen "$W/data.jsonl" 1
  "${RUN[@]}" --data "$W/data.jsonl" --out "$W/res.jsonl" > /dev/null 2>&1 || fail "ruler run for the report's input"
  trap '' XFSZ
  expect 2 "--out $W/big.jsonl: write failed: File too large; nothing was written under its name" \
    bash -c "ulimit -f 8; exec \"\$0\" ruler generate --task niah_single_1 --length 4K --samples 8 --tokenizer \"\$1\" --out \"\$2\"" "$S" "$CK" "$W/big.jsonl"
  [ -e "$W/big.jsonl" ] && fail "generate left big.jsonl"
  cp "$W/res.jsonl" "$W/part.jsonl"
  size=$(stat -c %s "$W/res.jsonl")  # two lines: room for about one of them
  expect 2 "part.jsonl: writing a results line failed: File too large" \
    bash -c "ulimit -f $(( size / 2 / 1024 + 1 )); exec \"\$@\"" sh "${RUN[@]}" --data "$W/data.jsonl" --out "$W/part.jsonl" --force
  [ ! -e "$W/part.jsonl" ] || [ "$(tail -c 1 "$W/part.jsonl" | od -An -c | tr -d ' ')" = '\n' ] || fail "part.jsonl ends in a torn line"
  expect 2 "File too large|a full disk" \
    bash -c "ulimit -f 1; exec \"\$0\" ruler report \"\$1\" --out \"\$2\" --paper ''" "$S" "$W/res.jsonl" "$W/rep"
  [ -e "$W/rep" ] && fail "report left its folder"
  ls -A "$W" | grep -q tmp && fail "temporaries left: $(ls -A "$W" | grep tmp)"
  echo "ok: file-size: generate, run and report exit 2 with EFBIG, nothing under a final name" ;;

huge-line)  # a 50 MB line declaring 231 tokens: refused before tokenizing, in seconds
  { printf '{"index": 0, "task": "niah_single_1", "length": 231, "outputs": ["1"], "answer_prefix": "x", "input": "'
    head -c 52428800 /dev/zero | tr '\0' a
    printf '"}\n'; } > "$W/huge.jsonl"
  t0=$(date +%s.%N)
  expect 2 "huge.jsonl line 1: fields 'input' \+ 'answer_prefix' are 52428801 bytes, more than field 'length' \(231 tokens\) can hold" \
    "${RUN[@]}" --data "$W/huge.jsonl" --out "$W/res.jsonl"
  took=$(echo "$(date +%s.%N) - $t0" | bc)
  [ "$(echo "$took < 20" | bc)" = 1 ] || fail "refused after $took s"
  [ -e "$W/res.jsonl" ] && fail "an empty results file was left"
  expect 2 "is not a regular file" "${RUN[@]}" --data /dev/zero --out "$W/res.jsonl"
  expect 2 "is not a regular file" "${RUN[@]}" --data "$W" --out "$W/res.jsonl"
  echo "ok: huge-line: refused in $took s" ;;

length)  # --length past what a run may have, or past this process's memory: exit 2 with the numbers, at once
  expect 2 "--length 65536K: past 2097152 tokens, the longest a run of .*minicpm-sala-9b.json may have" \
    "$S" ruler generate --task niah_single_1 --length 64M --tokenizer "$CK" --out "$W/d.jsonl"
  expect 2 "generating a sample of --length 2048K needs about 0.84 GiB, and this process may use" \
    bash -c "ulimit -v 1000000; exec \"\$0\" ruler generate --task niah_single_1 --length 2048K --tokenizer \"\$1\" --out \"\$2\"" "$S" "$CK" "$W/d.jsonl"
  echo '{"index": 0, "task": "niah_single_1", "length": 3000000, "outputs": ["1"], "answer_prefix": "x", "input": "y"}' > "$W/long.jsonl"
  expect 2 "long.jsonl line 1: field 'length'.*\[1, 2097152\]" "${RUN[@]}" --data "$W/long.jsonl" --out "$W/r.jsonl"
  [ -e "$W/r.jsonl" ] && fail "run left an empty r.jsonl"
  [ -e "$W/d.jsonl" ] && fail "generate left d.jsonl"
  echo "ok: length: past the positions and past memory refused" ;;

*) fail "unknown case" ;;
esac
