#!/usr/bin/env bash
# tools/hostile_sweep/heldout.sh SALASIM CKPT > OUT.md: the held-out sweep of issue 35 (cases of the same classes the
# other sweeps did not try), as a markdown table: class | case | command | exit | first line of the message | left
# behind | result. CKPT: a checkpoint folder holding a tokenizer (docs/ruler-runs.md). Each case runs in one scratch
# folder; after it, every file named for it must be byte-identical to before, and no temporary (".NAME.tmp-PID",
# a probe, a trainer's ".train.txt") may be left anywhere in the folder. A case passes when its exit code is one of
# those it names (2 for bad input; 0 for a control; 1 for a tap that fails a comparison) and nothing was lost or
# left. Ends with "heldout: N cases, M failed" and exits 1 when any failed.
set -u
S=$(realpath "$1")
CK=$(realpath "$2")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
W=${TMPDIR:-/tmp}/hostile_sweep_heldout
rm -rf "$W" && mkdir -p "$W" && cd "$W" || exit 1
export S ROOT
TINY=$ROOT/scenarios/models/tiny.json
SC=$ROOT/scenarios/tiny-short.json
REF="\$S ref --scenario $SC --tokens 64 --decode 1"
ESSAY=/usr/share/gocode/src/github.com/colinmarc/hdfs/testdata/mobydick.txt
cases=0
failed=0

sums() { for f in "$@"; do if [ -d "$f" ]; then (cd "$f" && find . -type f | sort | xargs -r md5sum); else md5sum <"$f"; fi; done 2>/dev/null | md5sum; }
# (a trainer's training text was left as <out>.train.txt; my.model.train.txt is a user's file of that name)
LEFT=(\( -name '.*.tmp-*' -o -name '.salasim-probe-*' -o \( -name '*.train.txt' ! -name my.model.train.txt \) \))
leftovers() { find . "${LEFT[@]}" -print 2>/dev/null | head -3 | tr '\n' ' '; }
# c CLASS NAME WANT KEEP CMD: WANT is exit codes joined by '|'; KEEP the files and folders that must not change.
c() {
  local cls=$1 name=$2 want=$3 keep=$4 cmd=$5 before out rc first left lost=""
  name=${name//$ROOT\//}
  # shellcheck disable=SC2086
  before=$(sums $keep)
  out=$(timeout 180 bash -c "$cmd" 2>&1 </dev/null)
  rc=$?
  first=$(grep -a -v 'LOG(INFO)' <<<"$out" | grep -a -m1 -E 'salasim: |error|--[a-z-]+:|wrote|trained|OK |ok$|FAIL|tap|Value' ||
    grep -a -v 'LOG(INFO)' <<<"$out" | head -1)
  first=${first//$W\//}
  first=${first//$ROOT\//}
  first=${first:0:200}
  first=${first//|/\\|}
  # shellcheck disable=SC2086
  [ "$(sums $keep)" = "$before" ] || lost="$keep changed"
  left=$(leftovers)
  local ok=no
  [[ "|$want|" == *"|$rc|"* ]] && [ -z "$lost" ] && [ -z "$left" ] && ok=yes
  cases=$((cases + 1))
  local shown=${cmd//$ROOT\//}
  shown=${shown//$W\//}
  shown=${shown:0:150}
  shown=${shown//|/\\|}
  if [ $ok = yes ]; then
    echo "| $cls | $name | \`$shown\` | $rc | $first | ${lost:-nothing lost} | ok |"
  else
    failed=$((failed + 1))
    echo "| $cls | $name | \`$shown\` | $rc (want $want) | $first | ${lost:-nothing lost}; left: ${left:-none} | FAIL |"
  fi
  find . "${LEFT[@]}" -exec rm -rf {} + 2>/dev/null
}

# ---- fixtures ----
cp -r "$CK" ckpt
cp ckpt/tokenizer.model keep.model
"$S" ruler generate --task niah_single_1 --length 200 --tokens-to-generate 16 --samples 1 --tokenizer ckpt \
  --out data.jsonl >/dev/null 2>&1 || { echo "setup: generate failed"; exit 1; }
"$S" ruler run --checkpoint ckpt --backend reference --max-new-tokens 2 --quiet --data data.jsonl --out res.jsonl \
  >/dev/null 2>&1 || { echo "setup: run failed"; exit 1; }
"$S" ref --scenario "$SC" --tokens 64 --decode 1 --dump-taps A.h5 >/dev/null 2>&1
"$S" ref --scenario "$SC" --tokens 64 --decode 1 --peer --dump-taps B.h5 >/dev/null 2>&1
"$S" op gla --random --save-inputs in.h5 --shape T=64,H=1,hd=8 >/dev/null 2>&1
mkfifo fifo.txt
mkdir -p folder.txt
: >empty.txt
A=$(python3 -c 'import os, wonderwords; print(os.path.dirname(wonderwords.__file__))' 2>/dev/null)/assets
for d in wf wz wd we; do mkdir -p $d && cp "$A/nounlist.txt" $d/; done
mkfifo wf/adjectivelist.txt
ln -s /dev/zero wz/adjectivelist.txt
mkdir wd/adjectivelist.txt
: >we/adjectivelist.txt
python3 -c "f=open('big.txt','w'); f.write('x'); f.truncate((64<<20)+1)"
sed "s#\"model\": *\"[^\"]*\"#\"model\": \"$ROOT/scenarios/models/tiny-short.json\"#" "$SC" >sc.json
cp "$TINY" cfg.json
mkdir -p cfgdir rdir && cp "$TINY" cfgdir/config.json && cp "$ROOT/reports/hw/h200.json" rdir/hw.json
cp "$ESSAY" essay.model && cp "$ESSAY" essay.txt
echo 'my vocab' >my.vocab
echo 'my text' >my.model.train.txt
echo keep >target.txt
ln -s target.txt link.h5
ln -s nowhere dangling.h5
/usr/bin/python3 - <<'EOF' || echo "setup: h5py missing, the HDF5 cases will fail"
import h5py, numpy as np, shutil
src = open("A.h5", "rb").read()
open("h_trunc.h5", "wb").write(src[:len(src) // 2])
open("h_trunc8.h5", "wb").write(src[:8])
open("h_zero.h5", "wb").write(b"")
with h5py.File("A.h5") as f:
    names = []
    f.visit(lambda n: names.append(n) if isinstance(f[n], h5py.Dataset) else None)
n0 = names[0]
def mk(name, fn):
    shutil.copy("A.h5", name)
    with h5py.File(name, "r+") as f: fn(f)
def repl(f, v): del f[n0]; f[n0] = v
def setflat(f, x):
    d = f[n0][()]; d.flat[0] = x; f[n0][...] = d
mk("h_int.h5", lambda f: repl(f, f[n0][()].astype(np.int32)))
mk("h_str.h5", lambda f: repl(f, "hello"))
mk("h_scalar.h5", lambda f: repl(f, 1.0))
mk("h_flat.h5", lambda f: repl(f, f[n0][()].reshape(-1)))
mk("h_nan.h5", lambda f: setflat(f, np.nan))
mk("h_inf.h5", lambda f: setflat(f, np.inf))
mk("h_negzero.h5", lambda f: setflat(f, -0.0))
mk("h_noattr.h5", lambda f: [f.attrs.__delitem__(k) for k in list(f.attrs)])
mk("h_huge.h5", lambda f: (f.__delitem__(n0), f.create_dataset(n0, shape=(2**40, 2**20), dtype="f8", chunks=(1, 16))))
mk("h_f16.h5", lambda f: repl(f, f[n0][()].astype(np.float16)))
mk("h_cplx.h5", lambda f: repl(f, f[n0][()].astype(np.complex64)))
mk("h_empty.h5", lambda f: (f.__delitem__(n0), f.create_dataset(n0, shape=(0, 8), dtype="f8")))
mk("h_soft.h5", lambda f: f.__setitem__("extra_link", h5py.SoftLink("/nonexist")))
mk("h_ext.h5", lambda f: f.__setitem__("extra_ext", h5py.ExternalLink("/etc/passwd", "/x")))
mk("h_attrarr.h5", lambda f: [f.attrs.__setitem__(k, np.arange(1000)) for k in list(f.attrs)])
mk("h_attrnum.h5", lambda f: [f.attrs.__setitem__(k, 5) for k in list(f.attrs)])
mk("h_dsattr.h5", lambda f: [f[n0].attrs.__delitem__(k) for k in list(f[n0].attrs)])
mk("h_extra.h5", lambda f: f.__setitem__("extra_dataset", np.zeros(3)))
mk("h_missing.h5", lambda f: f.__delitem__(n0))
mk("h_none.h5", lambda f: [f.__delitem__(k) for k in list(f.keys())])
mk("h_group.h5", lambda f: (f.__delitem__(n0), f.create_group(n0)))
mk("h_utf8.h5", lambda f: f.__setitem__("caf\u00e9", np.zeros(2)))
mk("h_shape.h5", lambda f: f[n0].attrs.__setitem__("shape", np.array([2**62, 2**62])))
mk("h_layout.h5", lambda f: f.attrs.__setitem__("salasim_layout", "failures"))
mk("h_version.h5", lambda f: f.attrs.__setitem__("salasim_format_version", 99))
shutil.copy("in.h5", "op_dtype.h5")
with h5py.File("op_dtype.h5", "r+") as f:
    d = f["q"][()]; del f["q"]; f["q"] = d.astype(np.int64)
shutil.copy("in.h5", "op_tau.h5")
with h5py.File("op_tau.h5", "r+") as f: del f.attrs["tau"]
shutil.copy("in.h5", "op_shape.h5")
with h5py.File("op_shape.h5", "r+") as f:
    d = f["q"][()]; del f["q"]; f["q"] = d[:, :4]
EOF
for n in trunc half garbage empty; do mkdir -p tk_$n && cp ckpt/config.json ckpt/*.safetensors* tk_$n/; done
head -c 100 ckpt/tokenizer.model >tk_trunc/tokenizer.model
head -c "$(($(stat -c %s ckpt/tokenizer.model) / 2))" ckpt/tokenizer.model >tk_half/tokenizer.model
head -c 5000 /dev/urandom >tk_garbage/tokenizer.model
: >tk_empty/tokenizer.model

echo "| class | case | command | exit | first line of the message | lost | result |"
echo "|---|---|---|---|---|---|---|"

# ---- outputs: ruler train-tokenizer, a writing command the policy did not cover ----
# TT trains with a vocabulary the default text allows; T0 is the bare command, for the cases that set --vocab
# themselves (CLI11 refuses a repeated --vocab before any value is looked at).
T0="\$S ruler train-tokenizer"
# waitfor GLOB: a loop that waits (at most 10 s) until a file or folder matching GLOB exists (an output's temporary
# ".NAME.tmp-PID", a trainer's scratch ".NAME.work.tmp-PID"), so that a signal sent next lands while the command
# writes; those cases then check that the signal ended it (exit status 128 + its number: a signal after the command
# was done would test nothing). `set -m` first: without job control a script's background job ignores SIGINT and
# SIGQUIT (POSIX), and salasim keeps an ignored signal as the caller's choice.
waitfor() { echo "for i in \$(seq 500); do ls -d $1 >/dev/null 2>&1 && break; sleep 0.02; done"; }
TT="$T0 --vocab 1000"
c train "--out exists, no --force: kept" 2 keep.model "$TT --out keep.model"
c train "--out exists, --force: replaced whole" 0 "" "$TT --out keep2.model && $TT --out keep2.model --force"
c train "a .vocab of the user's beside --out is kept" 0 my.vocab "$TT --out my.model"
c train "a .train.txt of the user's beside --out is kept" 0 my.model.train.txt "rm -f my.model; $TT --out my.model"
c train "--out a folder, --force" 2 folder.txt "mkdir -p d.model; $TT --out d.model --force"
c train "--out a symlink to /dev/full, --force" 2 "" "ln -sf /dev/full full.model; $TT --out full.model --force"
c train "--out not ending in .model: nothing written" 2 "" "$TT --out x.txt; r=\$?; [ ! -e x.txt ] || r=9; exit \$r"
c train "--out is --haystack-text, --force" 2 essay.model "$TT --out essay.model --haystack-text essay.model --force"
c train "--out under a file" 2 keep.model "$TT --out keep.model/x.model"
c train "--out in a missing folder: made" 0 "" "$TT --out newdir/t.model && [ -s newdir/t.model ]"
c train "past ulimit -f (SIGXFSZ as the shell leaves it)" 2 "" "ulimit -f 200; $TT --out lim.model; r=\$?; [ ! -e lim.model ] || r=9; exit \$r"
c train "SIGINT mid-training: no --out or a whole one, no scratch" 0 "" "set -m; $T0 --vocab 6000 --haystack-text essay.txt --out int.model & p=\$!; $(waitfor ".int.model.work.tmp-*"); kill -INT \$p; wait \$p; r=\$?; [ \$r = 130 ] || exit 7; [ ! -e int.model ] || \$S ruler generate --task niah_single_1 --length 1K --samples 1 --tokenizer int.model --out int.jsonl"
c train "SIGKILL mid-training, then again: whole" 0 "" "$T0 --vocab 6000 --haystack-text essay.txt --out kill.model & p=\$!; $(waitfor ".kill.model.work.tmp-*"); kill -KILL \$p; wait \$p; [ \$? = 137 ] || exit 7; [ ! -e kill.model ] && $TT --out kill.model >/dev/null 2>&1 && [ -s kill.model ]"
c train "two concurrent writers: one wins whole, one refused" 0 "" "$TT --out two.model >/dev/null 2>&1 & p=\$!; $TT --out two.model >/dev/null 2>&1; a=\$?; wait \$p; b=\$?; [ \$((a + b)) = 2 ] && \$S ruler generate --task niah_single_1 --length 1K --samples 1 --tokenizer two.model --out two.jsonl >/dev/null 2>&1"
c train "into a full 64 KiB tmpfs" 2 "" "mkdir -p full; unshare -m bash -c 'mount -t tmpfs -o size=64k none full && \$S ruler train-tokenizer --vocab 300 --out full/t.model; r=\$?; [ -z \"\$(ls -A full)\" ] || r=9; exit \$r'"
c train "--haystack-text a FIFO" 2 "" "$TT --out f.model --haystack-text fifo.txt"
c train "--haystack-text /dev/zero" 2 "" "$TT --out f.model --haystack-text /dev/zero"
c train "--words with a FIFO list" 2 "" "$TT --out f.model --words wf"
c train "--vocab 299" 2 "" "$T0 --out f.model --vocab 299"
c train "--vocab 300 (the least the help allows) for the default text" 2 "" "$T0 --out f.model --vocab 300"
c train "--vocab -3" 2 "" "$T0 --out f.model --vocab -3"
c train "--vocab 0x200" 2 "" "$T0 --out f.model --vocab 0x200"
c train "--seed -1" 2 "" "$TT --out f.model --seed -1"
c train "--seed 1e3" 2 "" "$TT --out f.model --seed 1e3"

# ---- signals other than SIGINT/SIGTERM/SIGKILL, and a file-size limit as a shell leaves it (SIGXFSZ not ignored) ----
c signal "ref --dump-taps past ulimit -f" 2 "" "ulimit -f 1000; $REF --dump-taps lim.h5; r=\$?; [ ! -e lim.h5 ] || r=9; exit \$r"
c signal "report past ulimit -f" 2 "" "ulimit -f 100; \$S report --out limrep --context 4K --hw h200; r=\$?; [ ! -e limrep ] || r=9; exit \$r"
c signal "synth-checkpoint past ulimit -f" 2 "" "ulimit -f 100; \$S synth-checkpoint --config $TINY --out limck; r=\$?; [ ! -e limck ] || r=9; exit \$r"
c signal "ruler generate past ulimit -f" 2 "" "ulimit -f 1; \$S ruler generate --task niah_single_1 --length 4K --samples 4 --tokenizer ckpt --out lim.jsonl; r=\$?; [ ! -e lim.jsonl ] || r=9; exit \$r"
c signal "op --out past ulimit -f" 2 "" "ulimit -f 4; \$S op gla --in in.h5 --out limop.h5; r=\$?; [ ! -e limop.h5 ] || r=9; exit \$r"
c signal "verify --dump-taps past ulimit -f" 2 "" "ulimit -f 1000; \$S verify --scenario $SC --backend peer --tokens 64 --dump-taps limv; r=\$?; [ -z \"\$(ls -A limv 2>/dev/null)\" ] || r=9; exit \$r"
c signal "ruler report past ulimit -f" 2 "" "ulimit -f 1; \$S ruler report res.jsonl --out limrr --paper ''; r=\$?; [ ! -e limrr ] || r=9; exit \$r"
c signal "ref --dump-taps piped into head -1 (SIGPIPE mid-dump)" 0 "" "set -o pipefail; $REF --dump-taps pipe.h5 | head -1 >/dev/null; [ ! -e pipe.h5 ] || \$S diff pipe.h5 pipe.h5 >/dev/null"
c signal "SIGQUIT mid-report" 0 "" "set -m; \$S report --out q --context 4K,1M --hw h200 & p=\$!; $(waitfor ".q.tmp-*"); kill -QUIT \$p; wait \$p; [ \$? = 131 ] || exit 7; [ ! -e q ] || [ -s q/README.md ]"
c signal "SIGUSR1 mid-checkpoint" 0 "" "\$S synth-checkpoint --config $ROOT/scenarios/models/tiny-short.json --out u & p=\$!; $(waitfor ".u.tmp-*"); kill -USR1 \$p; wait \$p; [ \$? = 138 ] || exit 7; [ ! -e u ] || \$S params --checkpoint u >/dev/null"
c signal "SIGALRM mid-dump" 0 "" "\$S ref --scenario $SC --tokens 300 --decode 2 --dump-taps al.h5 & p=\$!; $(waitfor ".al.h5.tmp-*"); kill -ALRM \$p; wait \$p; [ \$? = 142 ] || exit 7; [ ! -e al.h5 ] || \$S diff al.h5 al.h5 >/dev/null"
c signal "SIGUSR2 mid-generate" 0 "" "\$S ruler generate --task niah_single_1 --length 16K --samples 20 --tokenizer ckpt --out u2.jsonl & p=\$!; $(waitfor ".u2.jsonl.tmp-*"); kill -USR2 \$p; wait \$p; [ \$? = 140 ] || exit 7; [ ! -e u2.jsonl ]"
c signal "ulimit -S -t 1 (SIGXCPU) mid-verify dump" 0 "" "(ulimit -S -t 1; \$S verify --scenario $SC --backend peer --dump-taps xc >/dev/null 2>&1); true"
c signal "SIGHUP inherited as ignored (nohup): the run finishes" 0 "" "(trap '' HUP; exec \$S report --out hup --context 4K --hw h200 >/dev/null) & p=\$!; sleep 0.2; kill -HUP \$p; wait \$p && [ -s hup/README.md ]"

# ---- an output that is one of the command's own inputs, even with --force ----
c inputs "op --out is --in, --force" 2 in.h5 "\$S op gla --in in.h5 --out in.h5 --force"
c inputs "op --out a hard link to --in, --force" 2 in.h5 "ln -f in.h5 in_hard.h5; \$S op gla --in in.h5 --out in_hard.h5 --force"
c inputs "ref --dump-taps is --scenario, --force" 2 sc.json "\$S ref --scenario sc.json --tokens 64 --decode 1 --dump-taps sc.json --force"
c inputs "ref --dump-taps is the scenario's model config, --force" 2 cfg.json "sed 's#\"model\": *\"[^\"]*\"#\"model\": \"$W/cfg.json\"#' sc.json > sc2.json; \$S ref --scenario sc2.json --tokens 64 --decode 1 --dump-taps cfg.json --force"
c inputs "report --out a folder holding its --hw, --force" 2 rdir "\$S report --out rdir --hw rdir/hw.json --context 4K --force"
c inputs "report --out a folder holding its --config, --force" 2 cfgdir "\$S report --out cfgdir --config cfgdir/config.json --hw h200 --context 4K --force"
c inputs "synth-checkpoint --out the folder of its --config, --force" 2 cfgdir "\$S synth-checkpoint --config cfgdir/config.json --out cfgdir --force"
c inputs "run --json-out is --config, --force" 2 cfg.json "\$S run --config cfg.json --context 1K --json-out cfg.json --force"
c inputs "verify --dump-taps into a folder, its scenario elsewhere: fine" 0 sc.json "\$S verify --scenario sc.json --backend peer --tokens 64 --dump-taps vt >/dev/null"
c inputs "op --out another file, --force: fine" 0 in.h5 "\$S op gla --in in.h5 --out other.h5 --force"

# ---- standard output that cannot be written ----
for cmd in "tolerances" "tolerances --json" "diff A.h5 B.h5" "diff A.h5 B.h5 --json" "params --json" "explain gla" \
  "model latency --context 4K --csv" "op --sweep --ops gla" "env --json" "ruler report res.jsonl --paper ''" \
  "golden check --scenario $SC --golden A.h5" "run --plan --config $TINY --context 1K"; do
  want=2
  c stdout "$cmd > /dev/full" $want "" "\$S $cmd > /dev/full"
done

# ---- readers of text and HDF5 that did not check the kind of file ----
GEN="\$S ruler generate --task niah_single_2 --length 300 --samples 1 --tokenizer ckpt --out g.jsonl"
c readers "generate --haystack-text a FIFO" 2 "" "$GEN --haystack-text fifo.txt"
c readers "generate --haystack-text /dev/zero" 2 "" "$GEN --haystack-text /dev/zero"
c readers "generate --haystack-text a folder" 2 "" "$GEN --haystack-text folder.txt"
c readers "generate --haystack-text empty" 2 "" "$GEN --haystack-text empty.txt"
c readers "generate --haystack-text 64 MiB + 1" 2 "" "$GEN --haystack-text big.txt"
c readers "generate --haystack-text missing" 2 "" "$GEN --haystack-text none.txt"
for d in wf wz wd we; do c readers "generate --words: adjectivelist.txt $d (fifo/zero/dir/empty)" 2 "" "$GEN --words $d"; done
c readers "diff A a FIFO" 2 "" "\$S diff fifo.txt A.h5"
c readers "diff B a FIFO" 2 "" "\$S diff A.h5 fifo.txt"
c readers "diff --peer a FIFO" 2 "" "\$S diff A.h5 B.h5 --peer fifo.txt"
c readers "diff /dev/zero" 2 "" "\$S diff /dev/zero A.h5"
c readers "diff a folder" 2 "" "\$S diff folder.txt A.h5"
c readers "golden check --golden a FIFO" 2 "" "\$S golden check --scenario $SC --golden fifo.txt"
c readers "op --in a FIFO" 2 "" "\$S op gla --in fifo.txt --out o.h5"
c readers "op --in /dev/zero" 2 "" "\$S op gla --in /dev/zero --out o.h5"
c readers "op --in a folder" 2 "" "\$S op gla --in folder.txt --out o.h5"
c readers "ruler run --also-done without --resume (read by nobody)" 2 "" "\$S ruler run --checkpoint ckpt --backend reference --max-new-tokens 2 --quiet --data data.jsonl --out r.jsonl --also-done res.jsonl"
c readers "ruler run --also-done a FIFO, --resume" 2 "" "\$S ruler run --checkpoint ckpt --backend reference --max-new-tokens 2 --quiet --data data.jsonl --out r2.jsonl --also-done fifo.txt --resume"

# ---- damaged HDF5 tap dumps (diff B) ----
for h in trunc:2 trunc8:2 zero:2 int:2 str:2 scalar:2 flat:2 noattr:2 huge:2 f16:2 cplx:2 empty:2 soft:2 ext:2 \
  attrarr:2 attrnum:2 dsattr:2 extra:2 none:2 utf8:2 shape:2 layout:2 version:2 nan:1 inf:1 'negzero:0|1' missing:1 group:1; do
  c hdf5 "diff against h_${h%%:*}.h5" "${h##*:}" "h_${h%%:*}.h5" "\$S diff A.h5 h_${h%%:*}.h5"
done
c hdf5 "op --in: q as int64" 2 "" "\$S op gla --in op_dtype.h5 --out o.h5"
c hdf5 "op --in: attribute tau missing" 2 "" "\$S op gla --in op_tau.h5 --out o.h5"
c hdf5 "op --in: q of the wrong width" 2 "" "\$S op gla --in op_shape.h5 --out o.h5"
c hdf5 "golden check of a tap dump that is no golden" 2 "" "\$S golden check --scenario $SC --golden A.h5"

# ---- damaged tokenizers ----
for n in trunc half garbage empty; do
  c tokenizer "tokenizer.model $n (generate)" 2 "" "\$S ruler generate --task niah_single_1 --length 300 --samples 1 --tokenizer tk_$n --out g.jsonl"
  c tokenizer "tokenizer.model $n (run)" 2 "" "\$S ruler run --checkpoint tk_$n --backend reference --quiet --data data.jsonl --out r3.jsonl"
done
c tokenizer "a 3000-piece tokenizer for a 1024-token vocabulary" 2 "" "mkdir -p tkbig && cp ckpt/config.json ckpt/*.safetensors* tkbig/ && \$S ruler train-tokenizer --vocab 3000 --out tkbig/tokenizer.model >/dev/null 2>&1 && \$S ruler run --checkpoint tkbig --backend reference --quiet --data data.jsonl --out r4.jsonl"

# ---- output names and places ----
c names "a path with a space" 0 "" "$REF --dump-taps 'sp ace.h5' >/dev/null && [ -s 'sp ace.h5' ]"
c names "a path with a newline" 0 "" "$REF --dump-taps \$'n\\nl.h5' >/dev/null && [ -s \$'n\\nl.h5' ]"
c names "a trailing slash on a file output" 2 "" "$REF --dump-taps slash/"
c names "a 250-byte file name (valid; its temporary was too long)" 0 "" "$REF --dump-taps $(printf 'L%.0s' $(seq 250)).h5"
c names "a symlink to an existing file, --force" 2 target.txt "$REF --dump-taps link.h5 --force"
c names "a dangling symlink" 2 "" "$REF --dump-taps dangling.h5; r=\$?; [ ! -e nowhere ] || r=9; exit \$r"
c names "report --out a symlink to a folder, --force" 2 folder.txt "ln -sfn folder.txt lf; \$S report --out lf --context 4K --hw h200 --force"
c names "--out ''" 2 "" "\$S ruler generate --task niah_single_1 --length 300 --samples 1 --tokenizer ckpt --out ''"
c names "a read-only folder (a read-only mount)" 2 "" "mkdir -p ro; unshare -m bash -c 'mount -t tmpfs -o ro,size=64k none ro && exec \$S report --out ro/rep --context 4K --hw h200'"
c names "a read-only mount, synth-checkpoint" 2 "" "mkdir -p ro; unshare -m bash -c 'mount -t tmpfs -o ro,size=64k none ro && exec \$S synth-checkpoint --config $TINY --out ro/ck'"
c names "a read-only mount, op --out" 2 "" "mkdir -p ro; unshare -m bash -c 'mount -t tmpfs -o ro,size=64k none ro && exec \$S op gla --in in.h5 --out ro/o.h5'"

# ---- two concurrent writers of one output ----
two() { echo "\$S $1 >/dev/null 2>&1 & p=\$!; \$S $1 >/dev/null 2>&1; a=\$?; wait \$p; b=\$?; [ \$((a + b)) = 2 ] && $2"; }
c concurrent "ruler generate, one --out" 0 "" "$(two "ruler generate --task niah_single_1 --length 4K --samples 4 --tokenizer ckpt --out cg.jsonl" "[ \$(wc -l < cg.jsonl) = 4 ]")"
c concurrent "report, one --out" 0 "" "$(two "report --out cr --context 4K --hw h200" "[ -s cr/README.md ]")"
c concurrent "synth-checkpoint, one --out" 0 "" "$(two "synth-checkpoint --config $TINY --out cc" "\$S params --checkpoint cc >/dev/null")"
c concurrent "ref --dump-taps, one file" 0 "" "$(two "ref --scenario $SC --tokens 64 --decode 1 --dump-taps cd.h5" "\$S diff cd.h5 cd.h5 >/dev/null")"
c concurrent "op --random --save-inputs, one file" 0 "" "$(two "op gla --random --shape T=64,H=1,hd=8 --save-inputs cs.h5" "\$S op gla --in cs.h5 --out cso.h5 >/dev/null")"
c concurrent "ruler report, one --out" 0 "" "$(two "ruler report res.jsonl --out crr --paper ''" "[ -s crr/report.md ]")"

# ---- option values ----
OPR="\$S op gla --random"
for v in T=0 T=-1 T=1e3 T=+5 "T=5 " T=0x10 T=99999999999999999999 T=5,T=6 X=5 T= ,,, H=4097 hd=0 state=2 \
  T=16777216,H=4096,hd=4096; do
  c options "op --shape '$v'" 2 "" "$OPR --shape '$v'"
done
c options "op --rounds 0" 2 "" "$OPR --perf --rounds 0"
c options "op --rounds 1001" 2 "" "$OPR --perf --rounds 1001"
c options "op --seed -1" 2 "" "$OPR --seed -1"
c options "op --sweep --ops ''" 2 "" "\$S op --sweep --ops ''"
c options "op --sweep --backend cpu" 2 "" "\$S op --sweep --backend cpu"
for v in 0 -1 1.5 64K 99999999999 abc; do c options "explain gla --context $v" "$([ "$v" = 64K ] && echo 0 || echo 2)" "" "\$S explain gla --context $v"; done
for v in -1 1048577 1e3 0x10; do c options "model latency --decode-tokens $v" 2 "" "\$S model latency --context 4K --decode-tokens $v"; done
for v in 0 -64 16777217; do c options "model memory --chunk $v" 2 "" "\$S model memory --context 4K --chunk $v"; done
c options "model latency --hold-out with no such context" 2 "" "\$S model latency --context 4K --hold-out 3K"
for v in 0 -1 2000 x; do c options "verify --spot $v" 2 "" "\$S verify --scenario $SC --backend peer --spot $v"; done
c options "verify --spot-layers 99" 2 "" "\$S verify --scenario $SC --backend peer --spot 1 --spot-layers 99"
for v in 0 -2 1e2; do c options "ruler run --max-new-tokens $v" 2 "" "\$S ruler run --checkpoint ckpt --backend reference --data data.jsonl --out ro.jsonl --max-new-tokens $v"; done
for v in -1 1e1 0x8; do c options "ruler generate --tokens-to-generate $v" 2 "" "$GEN --tokens-to-generate $v"; done
c options "ruler generate --template nosuch" 2 "" "$GEN --template nosuch"
c options "ruler generate --task nosuch" 2 "" "\$S ruler generate --task nosuch --length 300 --tokenizer ckpt --out g.jsonl"
c options "ruler generate --length 300,300" 0 "" "\$S ruler generate --task niah_single_1 --length 300,300 --samples 1 --tokenizer ckpt --out g2.jsonl >/dev/null 2>&1 && [ \$(wc -l < g2.jsonl) = 1 ] || [ \$(wc -l < g2.jsonl) = 2 ]"
for v in 0 -1 1.5 99999999; do c options "synth-checkpoint --shards $v" 2 "" "\$S synth-checkpoint --config $TINY --out sh$RANDOM --shards $v"; done
for v in 0 -1 1e9; do c options "ref --tokens $v" 2 "" "\$S ref --scenario $SC --tokens $v"; done
c options "ref --decode -1" 2 "" "\$S ref --scenario $SC --decode -1"
c options "ref --tokens past max_position_embeddings" 2 "" "\$S ref --scenario $SC --tokens 600000"

# ---- config fields and RULER data lines: numbers, types and strings the first sweep did not try ----
python3 - "$TINY" <<'EOF2'
import json, sys
t = json.load(open(sys.argv[1]))
s = json.dumps(t)
def w(name, txt): open(name, "w").write(txt)
def sub(key, val): return json.dumps({**t, key: val})
L = t["num_hidden_layers"]
w("c_layers_f.json", s.replace('"num_hidden_layers": %d' % L, '"num_hidden_layers": %d.0' % L))
w("c_layers_f5.json", s.replace('"num_hidden_layers": %d' % L, '"num_hidden_layers": %d.5' % L))
w("c_vocab_e.json", s.replace('"vocab_size": %d' % t["vocab_size"], '"vocab_size": 1.024e3'))
w("c_bigint.json", s.replace('"vocab_size": %d' % t["vocab_size"], '"vocab_size": 123456789012345678901234567890'))
w("c_hidden_m0.json", s.replace('"hidden_size": %d' % t["hidden_size"], '"hidden_size": -0'))
w("c_eps_m0.json", sub("rms_norm_eps", -0.0))
w("c_theta_edge.json", sub("rope_theta", 1e12))
w("c_theta_over.json", sub("rope_theta", 1.0000001e12))
w("c_sparse_arr.json", sub("sparse_config", []))
w("c_mixer_str.json", sub("mixer_types", "minicpm4"))
w("c_act_nul.json", sub("hidden_act", "silu\u0000x"))
w("c_eos_big.json", sub("eos_token_id", 2**40))
w("c_bos_neg.json", sub("bos_token_id", -1))
w("c_topk_0.json", json.dumps({**t, "sparse_config": {**t["sparse_config"], "topk": 0}}))
w("c_bom.json", "\ufeff" + s)
w("c_ws.json", "\n\n   " + s + "   \n\n")
w("c_trailing.json", s + " {}")
w("c_comment.json", "// c\n" + s)
w("c_unknown.json", sub("x_unknown_field", {"a": [1, 2]}))
line = json.loads(open("data.jsonl").readline())
d = json.dumps(line)
def dsub(**kv): return json.dumps({**line, **kv}) + "\n"
n = line["length"]
w("d_nul_input.jsonl", dsub(input=line["input"] + "\u0000tail"))
w("d_nul_out.jsonl", dsub(outputs=["12\u00003"]))
w("d_len_m0.jsonl", d.replace('"length": %d' % n, '"length": -0') + "\n")
w("d_len_f.jsonl", d.replace('"length": %d' % n, '"length": %d.0' % n) + "\n")
w("d_idx_m0.jsonl", d.replace('"index": %d' % line["index"], '"index": -0') + "\n")
w("d_ws_num.jsonl", d.replace('"length": %d' % n, '"length":   \t %d' % n) + "\n")
w("d_bom.jsonl", "\ufeff" + d + "\n")
w("d_crlf.jsonl", d + "\r\n")
w("d_blank.jsonl", "\n\n" + d + "\n\n")
w("d_extra.jsonl", dsub(x_unknown={"deep": [1]}))
w("d_task_nl.jsonl", dsub(task="niah_single_1\nniah"))
w("d_prefix_huge.jsonl", dsub(answer_prefix="z" * (20 << 20)))
w("d_outputs_nested.jsonl", dsub(outputs=[["1"]]))
w("d_arr.jsonl", "[" + d + "]\n")
EOF2
for f in c_layers_f:2 c_layers_f5:2 c_vocab_e:2 c_bigint:2 c_hidden_m0:2 c_eps_m0:2 c_theta_edge:0 c_theta_over:2 \
  c_sparse_arr:2 c_mixer_str:2 c_act_nul:2 c_eos_big:2 c_bos_neg:2 c_topk_0:2 c_bom:0 c_ws:0 c_trailing:2 c_comment:2 \
  c_unknown:0; do
  c config "${f%%:*}" "${f##*:}" "${f%%:*}.json" "\$S params --config ${f%%:*}.json"
done
for f in d_nul_input:0 d_nul_out:0 d_len_m0:2 d_len_f:2 d_idx_m0:0 d_ws_num:0 d_bom:0 d_crlf:0 d_blank:0 d_extra:0 \
  d_task_nl:2 d_prefix_huge:2 d_outputs_nested:2 d_arr:2; do
  c data "${f%%:*}" "${f##*:}" "${f%%:*}.jsonl" "\$S ruler run --checkpoint ckpt --backend reference --max-new-tokens 2 --quiet --data ${f%%:*}.jsonl --out r_${f%%:*}.jsonl"
done

# ---- safetensors checkpoints: header lengths, offsets, shapes, dtypes and index names ----
python3 - <<'EOF2'
import struct, os, json
def st(d, header, extra=b"", hlen=None):
    os.makedirs(d, exist_ok=True)
    h = header.encode() if isinstance(header, str) else header
    open(f"{d}/model.safetensors", "wb").write(struct.pack("<Q", len(h) if hlen is None else hlen) + h + extra)
T = lambda **kv: json.dumps({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8], **kv}})
st("s_hlen_big", T(), b"\0" * 8, hlen=10**9)
st("s_hlen_huge", T(), b"\0" * 8, hlen=2**63)
st("s_hlen_zero", b"", b"", hlen=0)
st("s_hlen_short", T(), b"\0" * 8, hlen=5)
st("s_off_past", T(data_offsets=[0, 800]), b"\0" * 8)
st("s_off_rev", T(data_offsets=[8, 0]), b"\0" * 8)
st("s_off_neg", T(data_offsets=[-8, 0]), b"\0" * 8)
st("s_off_span", T(data_offsets=[0, 4]), b"\0" * 8)
st("s_shape_neg", T(shape=[-2]), b"\0" * 8)
st("s_shape_ovf", T(shape=[2**32, 2**32, 2**32]), b"\0" * 8)
st("s_dtype_bad", T(dtype="F128"), b"\0" * 8)
st("s_overlap", json.dumps({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                            "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}}), b"\0" * 12)
st("s_not_obj", "[1,2]", b"")
st("s_trunc", T(), b"\0" * 3)
for d, shard in (("s_idx_escape", "../ckpt/model-00001-of-00002.safetensors"), ("s_idx_missing", "nothere.safetensors"),
                 ("s_idx_abs", "/etc/passwd")):
    os.makedirs(d, exist_ok=True)
    open(f"{d}/model.safetensors.index.json", "w").write(json.dumps({"weight_map": {"w": shard}}))
EOF2
for d in s_hlen_big s_hlen_huge s_hlen_zero s_hlen_short s_off_past s_off_rev s_off_neg s_off_span s_shape_neg \
  s_shape_ovf s_dtype_bad s_overlap s_not_obj s_trunc s_idx_escape s_idx_missing s_idx_abs; do
  c safetensors "$d" 2 "$d" "\$S params --config $TINY --checkpoint $d"
done

echo
echo "heldout: $cases cases, $failed failed"
[ "$failed" = 0 ]
