#!/usr/bin/env bash
# The output policy under a user's mistakes and accidents (docs/input-limits.md, "Outputs"), as real processes:
# every command that writes refuses an existing output without --force and leaves it intact, refuses a target that
# is not a regular file, turns a write failure (a file-size limit, a full tmpfs) into exit 2 with nothing under the
# final name and no temporary left, and is interrupted (SIGINT, SIGKILL at random points) without leaving a file
# under its final name or damaging the one it would replace. Prints one table row per case, then
# "output_faults: OK, N cases" (exit 0) or the failed cases (exit 1).
# Usage: output_faults.sh SALASIM SOURCE_DIR SCRATCH_DIR
set -uo pipefail
S=$1
SRC=$2
T=$3
rm -rf "$T" && mkdir -p "$T"
cd "$SRC" || exit 1
RANDOM=35  # the random points are the same in every run
cases=0
failed=()

row() { printf '| %s | %s | %s | %s |\n' "$1" "$2" "$3" "$4"; }
# check CLASS NAME EXPECTED_EXIT REGEX -- command...: runs it, compares the exit code and the output
check() {
  local cls=$1 name=$2 want=$3 re=$4
  shift 5
  local out rc
  out=$("$@" 2>&1)
  rc=$?
  cases=$((cases + 1))
  if [ "$rc" = "$want" ] && grep -qE -- "$re" <<<"$out"; then
    row "$cls" "$name" "exit $rc" "ok"
  else
    row "$cls" "$name" "exit $rc (want $want)" "FAIL: $(tail -2 <<<"$out" | tr '\n' ' ' | cut -c1-200)"
    failed+=("$cls: $name")
  fi
}
# expect CLASS NAME CONDITION...: a condition on the files afterwards
expect() {
  local cls=$1 name=$2
  shift 2
  cases=$((cases + 1))
  if "$@"; then row "$cls" "$name" "-" "ok"; else row "$cls" "$name" "-" "FAIL"; failed+=("$cls: $name"); fi
}
no_temps() { ! ls -A "$1" 2>/dev/null | grep -q '\.tmp-'; }
absent() { [ ! -e "$1" ]; }
same_sum() { [ "$(cd "$1" && find . -type f | sort | xargs md5sum | md5sum)" = "$2" ]; }
sum_of() { (cd "$1" && find . -type f | sort | xargs md5sum | md5sum); }

tiny=scenarios/models/tiny.json
ref_quick=(ref --scenario scenarios/tiny-short.json --tokens 64 --decode 1)

echo "| class | case | exit | result |"
echo "|---|---|---|---|"

# ---- existing outputs: refused without --force, intact; replaced whole with it ----
"$S" synth-checkpoint --config $tiny --out "$T/ckpt" >/dev/null 2>&1
ck=$(sum_of "$T/ckpt")
check exists "synth-checkpoint over a checkpoint" 2 "--out $T/ckpt: exists already; it is kept" -- "$S" synth-checkpoint --config $tiny --out "$T/ckpt"
expect exists "  ... the checkpoint is intact" same_sum "$T/ckpt" "$ck"
check exists "synth-checkpoint --force replaces it" 0 "wrote 49 tensors" -- "$S" synth-checkpoint --config $tiny --out "$T/ckpt" --seed 2 --force
expect exists "  ... with the new weights, no temporary" bash -c "[ \"$(sum_of "$T/ckpt" 2>/dev/null)\" != '$ck' ] && ! ls -A '$T' | grep -q tmp"
"$S" report --out "$T/rep" --context 4K --hw h200 >/dev/null 2>&1
rep=$(sum_of "$T/rep")
check exists "report over a report" 2 "--out $T/rep: exists already" -- "$S" report --out "$T/rep" --context 8K --hw h200
expect exists "  ... the report is intact" same_sum "$T/rep" "$rep"
check exists "report --force" 0 "wrote [0-9]+ files" -- "$S" report --out "$T/rep" --context 8K --hw h200 --force
"$S" "${ref_quick[@]}" --dump-taps "$T/a.h5" >/dev/null 2>&1
a=$(md5sum <"$T/a.h5")
check exists "ref --dump-taps over a dump" 2 "--dump-taps $T/a.h5: exists already" -- "$S" "${ref_quick[@]}" --dump-taps "$T/a.h5"
expect exists "  ... the dump is intact" bash -c "[ \"\$(md5sum <'$T/a.h5')\" = '$a' ]"
check exists "ref --dump-taps --force" 0 "wrote [0-9]+ taps" -- "$S" "${ref_quick[@]}" --dump-taps "$T/a.h5" --force
mkdir -p "$T/vt" && echo old >"$T/vt/tiny-short-reference.h5"
check exists "verify --dump-taps over a run's dump" 2 "tiny-short-reference.h5: exists already" -- "$S" verify --scenario scenarios/tiny-short.json --backend peer --tokens 64 --dump-taps "$T/vt"
expect exists "  ... that dump is intact" grep -qx old "$T/vt/tiny-short-reference.h5"
mkdir -p "$T/vd" && echo old >"$T/vd/tiny-short-failures.h5"
check exists "verify --dump over a failure dump" 2 "tiny-short-failures.h5: exists already" -- "$S" verify --scenario scenarios/tiny-short.json --backend peer --tokens 64 --dump "$T/vd"
echo old >"$T/op.h5"
check exists "op --out over a file (before reading --in)" 2 "--out $T/op.h5: exists already" -- "$S" op gla --in "$T/none.h5" --out "$T/op.h5"
expect exists "  ... it is intact" grep -qx old "$T/op.h5"
echo old >"$T/run.json"
check exists "run --json-out over a record (before the GPU)" 2 "--json-out $T/run.json: exists already" -- "$S" run --config $tiny --context 1K --json-out "$T/run.json"
check exists "run --dump-taps over a dump (before the GPU)" 2 "--dump-taps $T/op.h5: exists already" -- "$S" run --config $tiny --context 1K --dump-taps "$T/op.h5" --taps final/
check exists "golden record --out over a golden" 2 "(exists already|needs the GPU backend)" -- "$S" golden record --scenario scenarios/tiny-short.json --out "$T/op.h5"

# ---- targets that are not regular files ----
check special "run --json-out /dev/full" 2 "/dev/full: exists and is not a regular file" -- "$S" run --config $tiny --context 1K --json-out /dev/full --force
check special "ref --dump-taps /dev/full" 2 "/dev/full: exists and is not a regular file" -- "$S" "${ref_quick[@]}" --dump-taps /dev/full --force
check special "op --out /dev/null" 2 "/dev/null: exists and is not a regular file" -- "$S" op gla --in "$T/none.h5" --out /dev/null --force
check special "report --out a file" 2 "--out $T/op.h5: exists and is not a folder" -- "$S" report --out "$T/op.h5" --force
check special "synth-checkpoint --out /dev/null" 2 "--out /dev/null: exists and is not a folder" -- "$S" synth-checkpoint --config $tiny --out /dev/null --force
mkfifo "$T/fifo"
check special "ref --dump-taps a FIFO" 2 "fifo: exists and is not a regular file" -- timeout 20 "$S" "${ref_quick[@]}" --dump-taps "$T/fifo" --force
check special "standard output on a full device" 2 "writing standard output failed" -- bash -c "'$S' params >/dev/full"

# ---- write failures: a file-size limit (SIGXFSZ ignored, so writes fail with EFBIG) ----
limited() { bash -c 'ulimit -f 1024; trap "" XFSZ; exec "$@"' limited "$@"; }
mkdir -p "$T/lim"
check write "ref --dump-taps past the limit" 2 "a.h5: .*(cannot write|cannot finish|failed)" -- limited "$S" "${ref_quick[@]}" --dump-taps "$T/lim/a.h5"
expect write "  ... no a.h5, no temporary" bash -c "[ ! -e '$T/lim/a.h5' ] && ! ls -A '$T/lim' | grep -q tmp"
check write "synth-checkpoint past the limit" 2 "write failed" -- limited "$S" synth-checkpoint --config $tiny --out "$T/lim/ck"
expect write "  ... no checkpoint folder, no temporary" bash -c "[ ! -e '$T/lim/ck' ] && ! ls -A '$T/lim' | grep -q tmp"
cp -r "$T/ckpt" "$T/lim/ck2" && ck2=$(sum_of "$T/lim/ck2")
check write "synth-checkpoint --force past the limit" 2 "write failed" -- limited "$S" synth-checkpoint --config $tiny --out "$T/lim/ck2" --force
expect write "  ... the old checkpoint is intact" same_sum "$T/lim/ck2" "$ck2"
check write "verify --dump-taps past the limit" 2 "(cannot write|cannot finish|failed)" -- limited "$S" verify --scenario scenarios/tiny-short.json --backend peer --tokens 64 --dump-taps "$T/lim/vt"
expect write "  ... no dump under its name, no temporary" bash -c "[ -z \"\$(ls -A '$T/lim/vt')\" ]"

# ---- a full file system: a small tmpfs in a private mount namespace (where this machine allows one) ----
if unshare -m true 2>/dev/null; then
  mkdir -p "$T/full"
  inside() { unshare -m bash -c "mount -t tmpfs -o size=$1 none '$T/full' && shift && exec \"\$@\"" inside "$@"; }
  check full "report into a 64 KiB file system" 2 "(write failed|did not write|cannot)" -- inside 64k "$S" report --out "$T/full/rep" --context 4K --hw h200
  check full "synth-checkpoint into a 1 MiB file system" 2 "needs 0.02 GB and its file system has 0.00 GB free" -- inside 1m "$S" synth-checkpoint --config $tiny --out "$T/full/ck"
  check full "ref --dump-taps into a 1 MiB file system" 2 "(free|cannot write|cannot finish)" -- inside 1m "$S" "${ref_quick[@]}" --dump-taps "$T/full/a.h5"
  check full "run --json-out into a full file system (refused or written whole)" 2 "(run needs|GPU|exists)" -- inside 4k "$S" run --config $tiny --context 1K --json-out "$T/full/r.json"
  expect full "  ... nothing is left in the mount point" bash -c "[ -z \"\$(ls -A '$T/full')\" ]"
else
  row full "a small tmpfs" "-" "skipped: this machine allows no private mount namespace"
fi

# ---- interrupted at random points: SIGINT removes the temporaries; SIGKILL never leaves a final name ----
# interrupt SIGNAL TARGET command...: sends the command SIGNAL, at a random 0.05-2 s or, with mid=1, as soon as its
# temporary of TARGET (".NAME.tmp-PID" beside it) exists, so that it lands while the output is being written; sets
# ended=1 when the signal ended the process (its exit status is 128 + the signal's number) and 0 when the command had
# finished first. A script's background job ignores SIGINT and SIGQUIT unless job control is on (POSIX), and salasim
# keeps an ignored SIGINT as the caller's choice, as nohup's users expect: hence set -m.
interrupt() {
  local sig=$1 target=$2 pid rc
  shift 2
  set -m
  "$@" >/dev/null 2>&1 &
  pid=$!
  set +m
  if [ "$mid" = 1 ]; then
    local tmp
    tmp="$(dirname "$target")/.$(basename "$target").tmp-$pid"
    for _ in $(seq 2000); do [ -e "$tmp" ] && break; sleep 0.002; done
  else
    sleep "$(printf '0.%02d' $((5 + RANDOM % 95)))"
    [ $((RANDOM % 2)) = 1 ] && sleep 1
  fi
  kill -s "$sig" "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  rc=$?
  ended=0
  [ "$rc" = $((128 + $(kill -l "$sig"))) ] && ended=1
  return 0
}
# landed CLASS NAME: with mid=1 the signal must have ended the command (else the case tried nothing)
landed() {
  [ "$mid" = 1 ] || return 0
  expect "$1" "  ... the signal came while it wrote (the command did not finish first)" test "$ended" = 1
}
for i in 1 2 3 4; do
  d="$T/int$i" && mkdir -p "$d"
  mid=0 && [ $i = 1 ] && mid=1
  interrupt INT "$d/a.h5" "$S" ref --scenario scenarios/tiny-short.json --tokens 300 --decode 2 --dump-taps "$d/a.h5"
  expect sigint "ref --dump-taps, SIGINT $i: a whole dump or none, no temporary" bash -c "! ls -A '$d' | grep -q tmp && { [ ! -e '$d/a.h5' ] || '$S' diff '$d/a.h5' '$d/a.h5' >/dev/null; }"
  landed sigint
  interrupt INT "$d/rep" "$S" report --out "$d/rep" --context 4K,1M --hw h200
  expect sigint "report, SIGINT $i: no folder under the name unless whole, no temporary" bash -c "{ [ ! -e '$d/rep' ] || [ -s '$d/rep/README.md' ]; } && ! ls -A '$d' | grep -q tmp"
  landed sigint
  cp -r "$T/ckpt" "$d/ck" && sck=$(sum_of "$d/ck")
  interrupt INT "$d/ck" "$S" synth-checkpoint --config scenarios/models/tiny-short.json --out "$d/ck" --force
  expect sigint "synth-checkpoint --force, SIGINT $i: the old checkpoint or a whole new one" bash -c "[ \"\$(cd '$d/ck' && find . -type f | sort | xargs md5sum | md5sum)\" = '$sck' ] || '$S' params --checkpoint '$d/ck' >/dev/null"
  landed sigint
  interrupt KILL "$d/b.h5" "$S" ref --scenario scenarios/tiny-short.json --tokens 300 --decode 2 --dump-taps "$d/b.h5"
  expect sigkill "ref --dump-taps, SIGKILL $i: no half file under the name" bash -c "[ ! -e '$d/b.h5' ] || '$S' diff '$d/b.h5' '$d/b.h5' >/dev/null"
  landed sigkill
  check sigkill "  ... the next write of it removes the dead process's temporary" 0 "wrote [0-9]+ taps" -- "$S" "${ref_quick[@]}" --dump-taps "$d/b.h5" --force
  expect sigkill "  ... and none is left" no_temps "$d"
done

# ---- the held-out classes (tools/hostile_sweep/heldout.sh): one case each ----
# ruler train-tokenizer under the policy: it wrote over an existing --out, deleted the user's <name>.vocab and left
# <out>.train.txt behind.
h="$T/held" && mkdir -p "$h"
if "$S" ruler train-tokenizer --vocab 400 --out "$h/t.model" >/dev/null 2>&1; then
  t=$(md5sum <"$h/t.model")
  check train "train-tokenizer over a tokenizer" 2 "--out $h/t.model: exists already" -- "$S" ruler train-tokenizer --vocab 400 --out "$h/t.model" --seed 2
  expect train "  ... it is intact" bash -c "[ \"\$(md5sum <'$h/t.model')\" = '$t' ]"
  echo mine >"$h/u.vocab"
  check train "train-tokenizer beside the user's u.vocab" 0 "trained a" -- "$S" ruler train-tokenizer --vocab 400 --out "$h/u.model"
  expect train "  ... u.vocab is kept, no training text or scratch left" bash -c "grep -qx mine '$h/u.vocab' && ! ls -A '$h' | grep -qE 'train.txt|tmp'"
  check train "train-tokenizer --force replaces it" 0 "trained a" -- "$S" ruler train-tokenizer --vocab 400 --out "$h/t.model" --seed 2 --force
else
  row train "train-tokenizer" "-" "skipped: no SentencePiece or word lists here"
fi
# A file-size limit as a shell leaves it (SIGXFSZ not ignored) killed the writer and left its temporary.
check signal "report past ulimit -f, SIGXFSZ as inherited" 2 "File too large" -- bash -c "ulimit -f 100; exec '$S' report --out '$h/rep' --context 4K --hw h200"
expect signal "  ... no folder, no temporary" bash -c "[ ! -e '$h/rep' ] && ! ls -A '$h' | grep -q tmp"
# SIGPIPE mid-dump (`| head`) ended the process without removing its temporary.
bash -c "'$S' ${ref_quick[*]} --dump-taps '$h/p.h5' | head -1 >/dev/null"
expect signal "ref --dump-taps piped into head -1: a whole dump or none, no temporary" bash -c "! ls -A '$h' | grep -q tmp && { [ ! -e '$h/p.h5' ] || '$S' diff '$h/p.h5' '$h/p.h5' >/dev/null; }"
# An output that is one of the command's inputs, even with --force.
"$S" op gla --random --shape T=64,H=1,hd=8 --save-inputs "$h/in.h5" >/dev/null 2>&1
i=$(md5sum <"$h/in.h5")
check inputs "op --out is --in, --force" 2 "an input of this command" -- "$S" op gla --in "$h/in.h5" --out "$h/in.h5" --force
expect inputs "  ... --in is intact" bash -c "[ \"\$(md5sum <'$h/in.h5')\" = '$i' ]"
mkdir -p "$h/rdir" && cp reports/hw/h200.json "$h/rdir/hw.json"
check inputs "report --out a folder holding its --hw, --force" 2 "holds .*hw.json, an input" -- "$S" report --out "$h/rdir" --hw "$h/rdir/hw.json" --context 4K --force
expect inputs "  ... the profile is kept" test -s "$h/rdir/hw.json"
# Standard output printed through fmt on a full device was an internal error (exit 3).
check stdout "tolerances > /dev/full" 2 "writing standard output failed" -- bash -c "'$S' tolerances >/dev/full"
# A 250-byte file name is valid; its temporary's name was not (ENAMETOOLONG).
long="$h/$(printf 'L%.0s' $(seq 250)).h5"
check names "a 250-byte --dump-taps name" 0 "wrote [0-9]+ taps" -- "$S" "${ref_quick[@]}" --dump-taps "$long"
expect names "  ... no temporary" no_temps "$h"

echo
if [ ${#failed[@]} -eq 0 ]; then
  echo "output_faults: OK, $cases cases"
  exit 0
fi
printf 'output_faults: FAILED %d of %d cases:\n' "${#failed[@]}" "$cases"
printf '  %s\n' "${failed[@]}"
exit 1
