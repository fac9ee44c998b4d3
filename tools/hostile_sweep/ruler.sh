#!/usr/bin/env bash
# tools/hostile_sweep/ruler.sh NEW_SALASIM CKPT [OLD_SALASIM]: the hostile-input and fault sweep of `salasim ruler`,
# as a markdown table on stdout (class | case | command | exit | first line of the message | lost anything? | before
# the fix). CKPT: a checkpoint folder holding a tokenizer (docs/ruler-runs.md: synth-checkpoint of
# scenarios/models/tiny-short.json, then ruler train-tokenizer into it).
# Each case runs in a fresh copy of a base folder (data.jsonl: 2 samples of 200 tokens, res.jsonl: their results,
# ckpt/: tiny-short + a 1000-piece tokenizer).
set -u
NEW=$1 CK=$2 OLD=${3:-}
W=${TMPDIR:-/tmp}/hostile_sweep_ruler
rm -rf "$W" && mkdir -p "$W/base"
B=$W/base
"$NEW" ruler generate --task niah_single_1,niah_multikey_1 --length 200 --tokens-to-generate 16 --samples 1 \
  --tokenizer "$CK" --out "$B/data.jsonl" > /dev/null 2>&1 || { echo "setup: generate failed"; exit 1; }
"$NEW" ruler run --checkpoint "$CK" --backend reference --max-new-tokens 2 --quiet --data "$B/data.jsonl" \
  --out "$B/res.jsonl" > /dev/null 2>&1 || { echo "setup: run failed"; exit 1; }
"$NEW" ruler generate --task niah_single_1,niah_multikey_1 --length 200 --tokens-to-generate 16 --samples 4 \
  --tokenizer "$CK" --out "$B/data8.jsonl" > /dev/null 2>&1 || { echo "setup: generate 8 failed"; exit 1; }
python3 - "$B" <<'EOF'
import json, sys
b = sys.argv[1]
line = json.loads(open(b + "/data.jsonl").readline())
def w(name, **kv):
    j = dict(line); j.update(kv)
    open(f"{b}/{name}", "w").write(json.dumps(j) + "\n")
for k, v in {"len_neg": -1, "len_zero": 0, "len_frac": 1.5, "len_str": "231", "len_i64": 9223372036854775808,
             "len_u64": 18446744073709551615, "len_3M": 3000000, "len_2p26": 67108865, "len_2p40": 2**40}.items():
    w(k + ".jsonl", length=v)
open(f"{b}/len_1e3.jsonl", "w").write(json.dumps(line).replace('"length": %d' % line["length"], '"length": 1e3') + "\n")
for k, v in {"idx_neg": -1, "idx_2p31": 2**31, "idx_float": 1e20}.items(): w(k + ".jsonl", index=v)
w("msl_neg.jsonl", max_seq_length=-5); w("msl_small.jsonl", max_seq_length=100)
w("hu_neg.jsonl", haystack_units=-1); w("seed_neg.jsonl", seed=-1); w("seed_frac.jsonl", seed=1.5)
w("depth_huge.jsonl", depths=[1e308]); w("depth_neg.jsonl", depths=[-0.5])
w("span_rev.jsonl", needle_token_spans=[[3, 1]]); w("span_huge.jsonl", needle_token_spans=[[0, 10**20]])
w("out_empty.jsonl", outputs=[]); w("out_many.jsonl", outputs=["1"] * 65); w("out_int.jsonl", outputs=[1])
w("task_huge.jsonl", task="n" * 1000000); w("tmpl_bad.jsonl", template="x")
open(f"{b}/dupkey.jsonl", "w").write(json.dumps(line)[:-1] + ', "length": 5}\n')
open(f"{b}/deep.jsonl", "w").write('{"index": 0, "x": ' + "[" * 10000 + "]" * 10000 + "}\n")
w("huge50.jsonl", input="a" * (50 << 20), length=231)
with open(f"{b}/huge65.jsonl", "w") as f:
    f.write('{"input": "'); f.write("b" * (65 << 20))
open(f"{b}/garbage.jsonl", "wb").write(bytes(range(256)) * 10 + b"\n")
open(f"{b}/badutf8.jsonl", "wb").write(json.dumps(line).replace("One of", "One \\u0000of").encode().replace(b"\\u0000", b"\xff\xfe") + b"\n")
ruler = {"index": 0, "input": line["input"], "outputs": line["outputs"], "length": 2**40, "answer_prefix": "x"}
import os; os.makedirs(f"{b}/niah_single_1", exist_ok=True)
open(f"{b}/niah_single_1/validation.jsonl", "w").write(json.dumps(ruler) + "\n")
res = open(b + "/res.jsonl").read().splitlines()
open(f"{b}/res_big.jsonl", "w").write(res[0] + "\n" + json.dumps({"id": "a", "x": "y" * (70 << 20)}) + "\n")
r0 = json.loads(res[0])
def rw(name, **kv):
    j = dict(r0); j.update(kv)
    open(f"{b}/{name}", "w").write(json.dumps(j) + "\n")
rw("rep_layer.jsonl", selection=[{"layers": [{"layer": 99999999999, "recall": 0.5}]}])
rw("rep_depth.jsonl", depths=[1e300]); rw("rep_score.jsonl", score=float("1e10")); rw("rep_len.jsonl", length=-3)
open(f"{b}/paper_bad.json", "w").write(json.dumps({"rows": [{"model": 1, "table": "x", "length": "4K", "score": "y"}]}))
EOF
printf '%s\n' "$(head -1 "$B/res.jsonl")" > "$B/one.jsonl"
mkfifo "$B/fifo.jsonl"
mkdir -p "$B/folder.jsonl"
printf 'my notes' > "$B/notes.txt"
awk '{ printf "%s\r\n", $0 }' "$B/res.jsonl" > "$B/res_crlf.jsonl"
{ cat "$B/one.jsonl"; echo '{"a": 1}'; } > "$B/res_foreign.jsonl"
{ cat "$B/one.jsonl"; echo; tail -1 "$B/res.jsonl"; } > "$B/res_blank.jsonl"
{ cat "$B/res.jsonl"; cat "$B/one.jsonl"; } > "$B/res_dup.jsonl"
{ cat "$B/one.jsonl"; tail -1 "$B/res.jsonl" | sed 's/"id":"[^"]*"/"id":"wrong\/1\/0"/'; } > "$B/res_idbad.jsonl"
{ cat "$B/one.jsonl"; tail -1 "$B/res.jsonl" | sed 's/"score":[0-9.e+-]*/"score":2/'; } > "$B/res_score.jsonl"
{ cat "$B/one.jsonl"; tail -1 "$B/res.jsonl" | head -c 200; } > "$B/res_torn.jsonl"
{ cat "$B/one.jsonl"; printf 'plain text'; } > "$B/res_torntext.jsonl"
{ cat "$B/one.jsonl"; printf '{"a": 1}'; } > "$B/res_tornjson.jsonl"
cp "$B/data.jsonl" "$B/datacopy.jsonl"
head -c 300 "$B/res.jsonl" > "$B/res_onlytorn.jsonl"

N=0
RUNARGS="--checkpoint ckpt --backend reference --max-new-tokens 2 --quiet"
# c CLASS "CASE" "KEEP files" "CHECK (bash, prints what was lost)" COMMAND (a bash string; $S is the binary)
c() {
  local class=$1 name=$2 keep=$3 check=$4 cmd=$5
  N=$((N + 1))
  local res="" old=""
  for which in new old; do
    local S=$NEW
    [ "$which" = old ] && { [ -n "$OLD" ] || continue; S=$OLD; }
    local d=$W/c$N-$which
    rm -rf "$d" && cp -a "$B" "$d" && cp -rl "$CK" "$d/ckpt"
    (
      cd "$d" || exit 1
      declare -A before
      for f in $keep; do before[$f]=$(md5sum < "$f" 2> /dev/null); done
      local t0 out rc took lost="" msg
      t0=$(date +%s.%N)
      out=$(S=$S timeout 120 bash -c "$cmd" 2>&1)
      rc=$?
      took=$(printf '%.1f' "$(echo "$(date +%s.%N) - $t0" | bc)")
      for f in $keep; do [ "$(md5sum < "$f" 2> /dev/null)" = "${before[$f]}" ] || lost+="$f changed; "; done
      [ -n "$check" ] && lost+=$(bash -c "$check" 2>&1)
      msg=$(echo "$out" | grep -m1 -E "error|FAIL" || echo "$out" | grep -m1 -E "salasim|ok:|merged|samples in this shard|wrote" || echo "$out" | head -1)
      msg=$(echo "$msg" | cut -c1-230 | sed 's/|/\\|/g; s/`//g')
      echo "$rc|$msg|${lost:-nothing lost}|$took"
    ) > "$W/c$N-$which.res"
    rm -rf "$d"  # each case copies the base (some 200 MB of large lines): one at a time on disk
  done
  IFS='|' read -r rc msg lost took < "$W/c$N-new.res"
  local before_col="–"
  if [ -n "$OLD" ]; then
    IFS='|' read -r orc omsg olost otook < "$W/c$N-old.res"
    before_col="exit $orc: $(echo "$omsg" | cut -c1-90)${olost:+ ($olost)}"
    [ "$olost" = "nothing lost" ] && before_col="exit $orc: $(echo "$omsg" | cut -c1-90)"
  fi
  printf '| %s | %s | %s | `%s` | %s | %s | %s | %s |\n' "$N" "$class" "$name" "$(echo "$cmd" | sed 's/\$S/S/g; s/'"$RUNARGS"'/RUN/g; s/|/\\|/g' | cut -c1-150)" \
    "$rc" "$msg" "$lost" "$before_col"
}
R="\$S ruler run $RUNARGS"
gone() { echo "[ -e $1 ] && echo '$1 left behind; '"; }

echo "| # | class | case | command (S = salasim, RUN = --checkpoint ckpt --backend reference --max-new-tokens 2 --quiet) | exit | first line of the message | lost anything? | before the fix |"
echo "|---|---|---|---|---|---|---|---|"
# ---- 1. results file: never the data file ----
c same "--out is --data, --resume" "data.jsonl" "" "$R --data data.jsonl --out data.jsonl --resume"
c same "--out is --data, --force" "data.jsonl" "" "$R --data data.jsonl --out data.jsonl --force"
c same "--out is --data, no flag" "data.jsonl" "" "$R --data data.jsonl --out data.jsonl"
c same "--out a symlink to --data, --resume" "data.jsonl" "" "ln -s data.jsonl l.jsonl; $R --data data.jsonl --out l.jsonl --resume"
c same "--out a hard link to --data, --resume" "data.jsonl" "" "ln data.jsonl h.jsonl; $R --data data.jsonl --out h.jsonl --resume"
c same "--out sub/../data.jsonl, --resume" "data.jsonl" "" "mkdir sub; $R --data data.jsonl --out sub/../data.jsonl --resume"
c same "--out absolute, --data relative" "data.jsonl" "" "$R --data data.jsonl --out \$PWD/data.jsonl --resume"
c same "--data a symlink, --out the target" "data.jsonl" "" "ln -s data.jsonl l.jsonl; $R --data l.jsonl --out data.jsonl --resume"
c same "--shard 0/2 whose shard file is --data" "data.jsonl" "cmp -s data.jsonl r.shard-0-of-2.jsonl || echo 'the shard-named data changed; '" "cp data.jsonl r.shard-0-of-2.jsonl; $R --data r.shard-0-of-2.jsonl --out r.jsonl --shard 0/2 --resume"
c same "--gpus 2 whose shard 1 is --data" "data.jsonl" "cmp -s data.jsonl r.shard-1-of-2.jsonl || echo 'the shard-named data changed; '" "cp data.jsonl r.shard-1-of-2.jsonl; $R --data r.shard-1-of-2.jsonl --out r.jsonl --gpus 2 --resume"
c same "--out is an --also-done file" "res.jsonl" "" "$R --data data.jsonl --out res.jsonl --also-done res.jsonl --resume"
# ---- 2. results file: only results in it ----
c exists "existing results, no flag" "res.jsonl" "" "$R --data data.jsonl --out res.jsonl"
c exists "existing results, --force: replaced" "" "[ \$(wc -l < res.jsonl) = 2 ] || echo 'res.jsonl not 2 lines; '" "$R --data data.jsonl --out res.jsonl --force"
c exists "--resume and --force together" "res.jsonl" "" "$R --data data.jsonl --out res.jsonl --resume --force"
c exists "a text file, --resume" "notes.txt" "" "$R --data data.jsonl --out notes.txt --resume"
c exists "a text file, --force" "notes.txt" "" "$R --data data.jsonl --out notes.txt --force"
c exists "a copy of the data file, --resume" "datacopy.jsonl" "" "$R --data data.jsonl --out datacopy.jsonl --resume"
c exists "a foreign complete JSON line, --resume" "res_foreign.jsonl" "" "$R --data data.jsonl --out res_foreign.jsonl --resume"
c exists "a blank line in the middle, --resume" "res_blank.jsonl" "" "$R --data data.jsonl --out res_blank.jsonl --resume"
c exists "CRLF line ends (results lines still)" "res_crlf.jsonl" "" "$R --data data.jsonl --out res_crlf.jsonl --resume"
c exists "an id twice, --resume" "res_dup.jsonl" "" "$R --data data.jsonl --out res_dup.jsonl --resume"
c exists "an id not task/length/index, --resume" "res_idbad.jsonl" "" "$R --data data.jsonl --out res_idbad.jsonl --resume"
c exists "a score of 2, --resume" "res_score.jsonl" "" "$R --data data.jsonl --out res_score.jsonl --resume"
c exists "an unterminated cut-short line, --resume: redone" "" "[ \$(wc -l < res_torn.jsonl) = 2 ] && [ \$(grep -o '\"id\":\"[^\"]*\"' res_torn.jsonl | sort -u | wc -l) = 2 ] || echo 'not 2 unique lines; '" "$R --data data.jsonl --out res_torn.jsonl --resume"
c exists "an unterminated plain-text line, --resume" "res_torntext.jsonl" "" "$R --data data.jsonl --out res_torntext.jsonl --resume"
c exists "an unterminated complete foreign JSON line, --resume" "res_tornjson.jsonl" "" "$R --data data.jsonl --out res_tornjson.jsonl --resume"
c exists "only an unterminated cut-short line, --resume" "" "[ \$(wc -l < res_onlytorn.jsonl) = 2 ] || echo 'not 2 lines; '" "$R --data data.jsonl --out res_onlytorn.jsonl --resume"
c exists "one line 'my notes', no newline, --resume" "notes.txt" "" "$R --data data.jsonl --out notes.txt --resume"
c exists "--out a folder" "" "" "$R --data data.jsonl --out folder.jsonl --force"
c exists "--out a FIFO (no writer: must not block)" "" "" "$R --data data.jsonl --out fifo.jsonl --resume"
c exists "--out /dev/null" "" "" "$R --data data.jsonl --out /dev/null --force"
c exists "--out a symlink to a results file" "res.jsonl" "" "ln -s res.jsonl l.jsonl; $R --data data.jsonl --out l.jsonl --resume"
c exists "--out under a file (data.jsonl/x.jsonl)" "data.jsonl" "" "$R --data data.jsonl --out data.jsonl/x.jsonl"
c exists "--out ''" "" "" "$R --data data.jsonl --out ''"
c exists "a 70 MB line in the results, --resume" "res_big.jsonl" "" "$R --data data.jsonl --out res_big.jsonl --resume"
c exists "an --also-done file that is not results" "notes.txt" "" "$R --data data.jsonl --out new.jsonl --also-done notes.txt --resume"
c exists "a new --out in a missing folder (refused, as every output)" "" "" "$R --data data.jsonl --out a/b/r.jsonl"
c exists "a run refused before its first sample leaves no empty --out" "" "$(gone r.jsonl)" "$R --data len_3M.jsonl --out r.jsonl"
# ---- 3. one writer ----
c lock "two runs, the second --resume" "" "[ \$(grep -o '\"id\":\"[^\"]*\"' r.jsonl | sort | uniq -d | wc -l) = 0 ] && [ \$(wc -l < r.jsonl) = 8 ] || echo 'ids twice or not 8 lines; '" \
  "$R --data data8.jsonl --out r.jsonl & for i in \$(seq 100); do [ -s r.jsonl ] && break; sleep 0.1; done; $R --data data8.jsonl --out r.jsonl --resume; rc=\$?; wait; exit \$rc"
c lock "two runs, the second --force (the first's lines kept)" "" "[ \$(wc -l < r.jsonl) = 8 ] || echo 'r.jsonl not 8 lines; '" \
  "$R --data data8.jsonl --out r.jsonl & for i in \$(seq 100); do [ -s r.jsonl ] && break; sleep 0.1; done; $R --data data8.jsonl --out r.jsonl --force; rc=\$?; wait; exit \$rc"
c lock "two --gpus 2 launches on one --out" "" "[ \$(wc -l < r.jsonl) = 8 ] || echo 'r.jsonl not 8 lines; '" \
  "$R --data data8.jsonl --out r.jsonl --gpus 2 & for i in \$(seq 100); do [ -s r.shard-1-of-2.jsonl ] && break; sleep 0.1; done; $R --data data8.jsonl --out r.jsonl --gpus 2 --resume; rc=\$?; wait; exit \$rc"
c lock "a --shard writer on a --gpus worker's shard" "" "[ \$(wc -l < r.jsonl) = 8 ] || echo 'r.jsonl not 8 lines; '" \
  "$R --data data8.jsonl --out r.jsonl --gpus 2 & for i in \$(seq 100); do [ -s r.shard-1-of-2.jsonl ] && break; sleep 0.1; done; $R --data data8.jsonl --out r.jsonl --shard 1/2 --resume; rc=\$?; wait; exit \$rc"
# ---- 4. faults ----
c fault "SIGKILL x6 at random points, then --resume" "" "[ \$(wc -l < r.jsonl) = 2 ] && [ \$(grep -o '\"id\":\"[^\"]*\"' r.jsonl | sort -u | wc -l) = 2 ] || echo 'not 2 unique lines; '" \
  "for i in 1 2 3 4 5 6; do $R --data data.jsonl --out r.jsonl --resume & p=\$!; sleep 0.\$((RANDOM % 9 + 1)); kill -9 \$p; wait \$p; done; $R --data data.jsonl --out r.jsonl --resume"
c fault "SIGTERM mid-run, then --resume" "" "[ \$(wc -l < r.jsonl) = 2 ] || echo 'not 2 lines; '" \
  "$R --data data.jsonl --out r.jsonl & p=\$!; sleep 2.5; kill -TERM \$p; wait \$p; $R --data data.jsonl --out r.jsonl --resume"
c fault "SIGKILL of a --gpus launch, then --resume" "" "[ \$(wc -l < r.jsonl) = 2 ] && ! ls r.shard* 2>/dev/null || echo 'not 2 lines or shards left; '" \
  "setsid $R --data data.jsonl --out r.jsonl --gpus 2 & p=\$!; sleep 2.5; kill -9 -\$p; sleep 0.5; $R --data data.jsonl --out r.jsonl --gpus 2 --resume"
c fault "generate on a full 64k tmpfs" "" "[ -s after ] && echo \"full/ holds \$(cat after); \""  \
  "mkdir full; unshare -m bash -c 'mount -t tmpfs -o size=64k none full && { \$0 ruler generate --task niah_single_1 --length 4K --samples 8 --tokenizer ckpt --out full/d.jsonl; rc=\$?; ls -A full > after; exit \$rc; }' \$S"
c fault "run on a full tmpfs" "" "[ \"\$(cat after)\" != filler ] && echo \"full/ holds \$(cat after); \"" \
  "mkdir full; unshare -m bash -c 'mount -t tmpfs -o size=64k none full && dd if=/dev/zero of=full/filler bs=1k count=64 2>/dev/null; \$0 ruler run $RUNARGS --data data.jsonl --out full/r.jsonl; rc=\$?; ls -A full > after; exit \$rc' \$S"
c fault "run on a tmpfs that fills mid-run (8 samples, one 4 KiB page free)" "" "[ -e after ] && echo 'a torn line left; '" \
  "mkdir full; unshare -m bash -c 'mount -t tmpfs -o size=64k none full && dd if=/dev/zero of=full/filler bs=1k count=60 2>/dev/null; \$0 ruler run $RUNARGS --data data8.jsonl --out full/r.jsonl; rc=\$?; echo \$(wc -l < full/r.jsonl) complete lines > lines; [ \"\$(tail -c 1 full/r.jsonl | od -An -c | tr -d \" \")\" = \"\\\\n\" ] || echo torn > after; cat lines; exit \$rc' \$S"
c fault "report on a full tmpfs" "" "[ \"\$(cat after)\" != filler ] && echo \"full/ holds \$(cat after); \"" \
  "mkdir full; unshare -m bash -c 'mount -t tmpfs -o size=64k none full && dd if=/dev/zero of=full/filler bs=1k count=64 2>/dev/null; \$0 ruler report res.jsonl --out full/rep --paper \"\"; rc=\$?; ls -A full > after; exit \$rc' \$S"
c fault "generate under ulimit -f 8 (SIGXFSZ ignored)" "" "$(gone d.jsonl)" \
  "trap '' XFSZ; ulimit -f 8; \$S ruler generate --task niah_single_1 --length 4K --samples 8 --tokenizer ckpt --out d.jsonl"
c fault "run under ulimit -f 1 (second line fails)" "" "[ \"\$(tail -c 1 r.jsonl | od -An -c | tr -d ' ')\" = '\\n' ] || echo 'torn line left; '" \
  "trap '' XFSZ; ulimit -f 1; $R --data data.jsonl --out r.jsonl"
c fault "report under ulimit -f 1" "" "$(gone rep)" "trap '' XFSZ; ulimit -f 1; \$S ruler report res.jsonl --out rep --paper ''"
c fault "run of the reference under ulimit -v 400 MB (fits)" "" "" "ulimit -v 400000; $R --data data.jsonl --out r.jsonl"
c fault "run of the reference under ulimit -v 250 MB (fits)" "" "" "ulimit -v 250000; $R --data data.jsonl --out r.jsonl"
c fault "run of the reference under ulimit -v 150 MB" "" "$(gone r.jsonl)" "ulimit -v 150000; $R --data data.jsonl --out r.jsonl"
# ---- 5. data lines ----
for f in len_neg len_zero len_frac len_1e3 len_str len_i64 len_u64 len_3M len_2p26 idx_neg idx_2p31 idx_float msl_neg msl_small hu_neg seed_neg seed_frac depth_huge depth_neg span_rev span_huge out_empty out_many out_int task_huge tmpl_bad dupkey deep; do
  c data "field: $f" "$f.jsonl" "$(gone r.jsonl)" "$R --data $f.jsonl --out r.jsonl"
done
c data "RULER file, length 2^40 (no max_seq_length)" "" "$(gone r.jsonl)" "$R --data niah_single_1/validation.jsonl --out r.jsonl"
c data "a 50 MB line declaring 231 tokens" "" "$(gone r.jsonl)" "$R --data huge50.jsonl --out r.jsonl"
c data "a 65 MB line (no newline)" "" "$(gone r.jsonl)" "$R --data huge65.jsonl --out r.jsonl"
c data "--data /dev/zero" "" "$(gone r.jsonl)" "$R --data /dev/zero --out r.jsonl"
c data "--data a folder" "" "$(gone r.jsonl)" "$R --data folder.jsonl --out r.jsonl"
c data "--data a FIFO (no writer)" "" "$(gone r.jsonl)" "$R --data fifo.jsonl --out r.jsonl"
c data "--data a symlink to /dev/zero" "" "$(gone r.jsonl)" "ln -s /dev/zero z.jsonl; $R --data z.jsonl --out r.jsonl"
c data "--data missing" "" "$(gone r.jsonl)" "$R --data nope.jsonl --out r.jsonl"
c data "--data empty" "" "$(gone r.jsonl)" ": > e.jsonl; $R --data e.jsonl --out r.jsonl"
c data "--data binary garbage" "" "$(gone r.jsonl)" "$R --data garbage.jsonl --out r.jsonl"
c data "--data invalid UTF-8 in input" "" "$(gone r.jsonl)" "$R --data badutf8.jsonl --out r.jsonl"
c data "--length 64M for a RULER file" "" "$(gone r.jsonl)" "$R --data niah_single_1/validation.jsonl --out r.jsonl --length 64M"
# ---- 6. generate: lengths and memory ----
G="\$S ruler generate --task niah_single_1 --tokenizer ckpt"
c length "--length 64M" "" "$(gone d.jsonl)" "$G --length 64M --out d.jsonl"
c length "--length 2049K" "" "$(gone d.jsonl)" "$G --length 2049K --out d.jsonl"
c length "--length 4096M" "" "$(gone d.jsonl)" "$G --length 4096M --out d.jsonl"
c length "--length 0" "" "$(gone d.jsonl)" "$G --length 0 --out d.jsonl"
c length "--length -5" "" "$(gone d.jsonl)" "$G --length -5 --out d.jsonl"
c length "--length 1e3" "" "$(gone d.jsonl)" "$G --length 1e3 --out d.jsonl"
c length "--length 100 with 128 to generate" "" "$(gone d.jsonl)" "$G --length 100 --out d.jsonl"
c length "--length 2048K under ulimit -v 600 MB" "" "$(gone d.jsonl)" "ulimit -v 600000; $G --length 2048K --out d.jsonl"
c length "--length 8K for a 1024-position config" "" "$(gone d.jsonl)" "sed 's/\"max_position_embeddings\": 524288/\"max_position_embeddings\": 1024/' ckpt/config.json > c.json; $G --length 8K --config c.json --out d.jsonl"
c length "--samples 0" "" "$(gone d.jsonl)" "$G --length 4K --samples 0 --out d.jsonl"
c length "--samples 2^31" "" "$(gone d.jsonl)" "$G --length 4K --samples 2147483648 --out d.jsonl"
# ---- 7. outputs ----
c output "generate --out exists" "data.jsonl" "" "$G --length 300 --samples 1 --out data.jsonl"
c output "generate --out exists, --force: replaced" "" "[ \$(wc -l < data.jsonl) = 1 ] || echo 'not replaced; '" "$G --length 300 --samples 1 --out data.jsonl --force"
c output "generate --out is the tokenizer (given as its folder), --force" "ckpt/tokenizer.model" "" "$G --length 300 --out ckpt/tokenizer.model --force"
c output "generate --out is the tokenizer (given as the file), --force" "ckpt/tokenizer.model" "" "\$S ruler generate --task niah_single_1 --tokenizer ckpt/tokenizer.model --length 300 --out ckpt/tokenizer.model --force"
c output "generate --out is --haystack-text, --force" "notes.txt" "" "\$S ruler generate --task niah_single_2 --tokenizer ckpt --haystack-text notes.txt --length 300 --out notes.txt --force"
c output "generate --out a folder" "" "" "$G --length 300 --out folder.jsonl"
c output "generate --out /dev/full" "" "" "$G --length 300 --out /dev/full --force"
c output "generate --out under a file" "data.jsonl" "" "$G --length 300 --out data.jsonl/x.jsonl"
c output "generate SIGKILLed mid-way, then again" "" "[ \$(ls -A | grep -c '\\.tmp-') = 0 ] || echo 'a temporary left; '" \
  "$G --length 16K --samples 50 --out d.jsonl & p=\$!; sleep 1; kill -9 \$p; wait \$p; [ -e d.jsonl ] && echo 'd.jsonl exists after the kill'; $G --length 300 --samples 1 --out d.jsonl"
c output "generate SIGTERMed mid-way" "" "[ \$(ls -A | grep -c -e '\\.tmp-' -e '^d.jsonl') = 0 ] || echo 'a file left; '" \
  "$G --length 16K --samples 50 --out d.jsonl & p=\$!; sleep 1; kill -TERM \$p; wait \$p"
c output "report --out exists" "" "" "mkdir rep; \$S ruler report res.jsonl --out rep --paper ''"
c output "report --out exists, --force: replaced" "" "[ -s rep/report.md ] || echo 'no rep/report.md; '" "mkdir rep; touch rep/old; \$S ruler report res.jsonl --out rep --paper '' --force; [ ! -e rep/old ]"
c output "report --out holds its input, --force" "res.jsonl" "" "mkdir rep; cp res.jsonl rep/; \$S ruler report rep/res.jsonl --out rep --paper '' --force"
c output "report --out . (holds the input), --force" "res.jsonl data.jsonl" "" "\$S ruler report res.jsonl --out . --paper '' --force"
c output "report --out is a file" "notes.txt" "" "\$S ruler report res.jsonl --out notes.txt --paper ''"
c output "report of /dev/zero" "" "" "\$S ruler report /dev/zero --paper ''"
c output "report of a torn last line" "" "" "\$S ruler report res_torn.jsonl --paper ''"
c output "report: layer 99999999999" "" "" "\$S ruler report rep_layer.jsonl --paper ''"
c output "report: depth 1e300" "" "" "\$S ruler report rep_depth.jsonl --paper ''"
c output "report: score 1e10" "" "" "\$S ruler report rep_score.jsonl --paper ''"
c output "report: length -3" "" "" "\$S ruler report rep_len.jsonl --paper ''"
c output "report: a sample in two files" "" "" "\$S ruler report res.jsonl one.jsonl --paper ''"
c output "report: --paper with mistyped rows" "" "" "\$S ruler report res.jsonl --paper paper_bad.json"
c output "report: a data file as results" "" "" "\$S ruler report data.jsonl --paper ''"
# ---- 8. --gpus / --shard options ----
for g in 0 65 2x "' 2'" -1; do c options "--gpus $g" "" "$(gone r.jsonl)" "$R --data data.jsonl --out r.jsonl --gpus $g"; done
c options "--gpus 2 --shard 0/2" "" "$(gone r.jsonl)" "$R --data data.jsonl --out r.jsonl --gpus 2 --shard 0/2"
for sh in 2/2 0/0 a/b 1/-2 0/99999999999; do c options "--shard $sh" "" "$(gone r.jsonl)" "$R --data data.jsonl --out r.jsonl --shard $sh"; done
c options "--gpus 2 merge, then --resume (nothing doubled)" "" "[ \$(wc -l < r.jsonl) = 2 ] || echo 'not 2 lines; '" "$R --data data.jsonl --out r.jsonl --gpus 2 && $R --data data.jsonl --out r.jsonl --gpus 2 --resume"
