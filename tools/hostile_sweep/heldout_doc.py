#!/usr/bin/env python3
"""Folds the held-out sweep's table (tools/hostile_sweep/heldout.sh output) into docs/hostile-cases.md: the case table
with a column saying how each case went before the fixes, the by-class rows, and the case counts there and in
docs/input-limits.md. Usage: heldout_doc.py HELDOUT.md docs/hostile-cases.md"""
import re, sys, collections
table_md, doc = sys.argv[1], sys.argv[2]
# Cases that failed on the tree before these fixes (revision c388326). "seen": run with that binary during the sweep;
# "code": the same code path as a seen one, or read from the code.
BEFORE = {
 ("train", "--out exists, no --force: kept"): "0, overwritten (seen)",
 ("train", "--out exists, --force: replaced whole"): "2, no --force option (code)",
 ("train", "a .vocab of the user's beside --out is kept"): "0, my.vocab deleted (seen)",
 ("train", "a .train.txt of the user's beside --out is kept"): "0, overwritten then deleted (code)",
 ("train", "--out not ending in .model: nothing written"): "2, x.txt.train.txt left (seen)",
 ("train", "past ulimit -f (SIGXFSZ as the shell leaves it)"): "153, SIGXFSZ (code, as report)",
 ("train", "SIGINT mid-training: no --out or a whole one, no scratch"): "130, .train.txt left (code)",
 ("train", "two concurrent writers: one wins whole, one refused"): "0 and 0 on one file (code)",
 ("train", "into a full 64 KiB tmpfs"): "2, partial .train.txt left (code)",
 ("train", "--haystack-text a FIFO"): "124, blocked (seen)",
 ("train", "--haystack-text /dev/zero"): "124, read forever (seen)",
 ("train", "--words with a FIFO list"): "124, blocked (seen)",
 ("train", "--vocab 300 (the least the help allows) for the default text"): "2, the trainer's assertion text (seen)",
 ("signal", "ref --dump-taps past ulimit -f"): "153, temporary left (code, as report)",
 ("signal", "report past ulimit -f"): "153, .limrep.tmp-PID left (seen)",
 ("signal", "synth-checkpoint past ulimit -f"): "153, .limck.tmp-PID left (seen)",
 ("signal", "ruler generate past ulimit -f"): "153 (code, as report)",
 ("signal", "op --out past ulimit -f"): "153 (code, as report)",
 ("signal", "verify --dump-taps past ulimit -f"): "153 (code, as report)",
 ("signal", "ruler report past ulimit -f"): "153 (code, as report)",
 ("signal", "ref --dump-taps piped into head -1 (SIGPIPE mid-dump)"): "141, temporary left (code: SIGPIPE not handled)",
 ("signal", "SIGQUIT mid-report"): "temporary left when it lands mid-write (code: not handled)",
 ("signal", "SIGUSR1 mid-checkpoint"): "temporary left when it lands mid-write (code: not handled)",
 ("signal", "SIGALRM mid-dump"): "temporary left when it lands mid-write (code: not handled)",
 ("signal", "SIGUSR2 mid-generate"): "temporary left when it lands mid-write (code: not handled)",
 ("signal", "ulimit -S -t 1 (SIGXCPU) mid-verify dump"): "temporary left (code: not handled)",
 ("signal", "SIGHUP inherited as ignored (nohup): the run finishes"): "129, killed (code: the handler replaced SIG_IGN)",
 ("inputs", "op --out is --in, --force"): "0, input replaced by the output (seen)",
 ("inputs", "op --out a hard link to --in, --force"): "0, input replaced (code)",
 ("inputs", "ref --dump-taps is --scenario, --force"): "0, scenario replaced by a dump (seen)",
 ("inputs", "ref --dump-taps is the scenario's model config, --force"): "0, config replaced (code)",
 ("inputs", "report --out a folder holding its --hw, --force"): "0, hw.json deleted (seen)",
 ("inputs", "report --out a folder holding its --config, --force"): "0, config deleted (code)",
 ("inputs", "synth-checkpoint --out the folder of its --config, --force"): "0, folder replaced (seen)",
 ("stdout", "tolerances > /dev/full"): "3, internal error (seen)",
 ("stdout", "diff A.h5 B.h5 > /dev/full"): "3, internal error (seen)",
 ("readers", "generate --haystack-text a FIFO"): "124, blocked (seen)",
 ("readers", "generate --haystack-text /dev/zero"): "124, read forever (code, as train)",
 ("readers", "generate --words: adjectivelist.txt wf (fifo/zero/dir/empty)"): "124, blocked (seen)",
 ("readers", "generate --words: adjectivelist.txt wz (fifo/zero/dir/empty)"): "124, read forever (seen)",
 ("readers", "diff A a FIFO"): "124, blocked (seen)",
 ("readers", "diff B a FIFO"): "124, blocked (code, as A)",
 ("readers", "diff --peer a FIFO"): "124, blocked (seen)",
 ("readers", "golden check --golden a FIFO"): "124, blocked (seen)",
 ("readers", "op --in a FIFO"): "124, blocked (code: the same H5Fopen)",
 ("readers", "ruler run --also-done without --resume (read by nobody)"): "0, option ignored (seen)",
 ("names", "a 250-byte file name (valid; its temporary was too long)"): "2, ENAMETOOLONG for a valid name (seen)",
}
rows = []
for line in open(table_md):
    if not line.startswith("| ") or line.startswith("| class") : continue
    cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
    if len(cells) != 7: continue
    rows.append(cells)
out = ["| class | case | command | exit now | first line of the message now | lost | result | before the fixes |",
       "|---|---|---|---|---|---|---|---|"]
by = collections.OrderedDict()
for cls, name, cmd, rc, first, lost, res in rows:
    b = BEFORE.get((cls, name), "")
    out.append(f"| {cls} | {name} | {cmd} | {rc} | {first} | {lost} | {res} | {b or 'as now'} |")
    s = by.setdefault(cls, [0, 0, 0, collections.Counter()])
    s[0] += 1; s[1] += 1 if b else 0; s[2] += 1 if res == "ok" else 0; s[3][rc.split()[0]] += 1
missing = [k for k in BEFORE if k not in {(r[0], r[1]) for r in rows}]
if missing: sys.exit(f"BEFORE names cases the table lacks: {missing}")
cls_rows = [f"| held-out | {c} | {v[0]} | " + ", ".join(f"exit {k}: {n}" for k, n in sorted(v[3].items())) +
            f"; failed before: {v[1]}, ok now: {v[2]} |" for c, v in by.items()]
total, fb, okn = sum(v[0] for v in by.values()), sum(v[1] for v in by.values()), sum(v[2] for v in by.values())
print(f"{total} cases, {fb} failed before, {okn} ok now", file=sys.stderr)
text = open(doc).read()
text = re.sub(r"\n## Held-out\n.*", "\n", text, flags=re.S).rstrip("\n") + "\n"
section = f"""
## Held-out

The held-out sweep (`bash tools/hostile_sweep/heldout.sh build/salasim CKPT > OUT.md`, CKPT as for the RULER sweep):
{total} cases of the same classes that the sweeps above did not try: every writing command's outputs under a file-size
limit as a shell leaves it, under signals other than SIGINT and SIGKILL, named as one of the command's own inputs,
under odd names and places, and written by two processes at once; `ruler train-tokenizer`, a writing command the
first sweep missed; standard output on a full device for every printing command; text and HDF5 inputs that are
FIFOs, devices or folders; damaged HDF5 dumps, tokenizers, config fields and RULER data lines; option values of
every command. A case passes when its exit code is one it names, every file named for it is byte-identical
afterwards, and no temporary is left in the scratch folder. `before the fixes`: the exit code and what went wrong on
revision c388326, "seen" when that binary was run on the case, "code" when it follows from a seen one's code path;
{fb} cases failed before, from 9 problems (see the commit log of branch i35-faults), {okn} of {total} pass now.

""" + "\n".join(out) + "\n"
text += section
# the by-class table: held-out rows before "| all |"
text = re.sub(r"\n\| held-out \|[^\n]*", "", text)
first = sum(int(m) for m in re.findall(r"^\| (?:outputs|readers|RULER) \| [^|]+ \| (\d+) \|", text, flags=re.M))
text = re.sub(r"\| all \| \| [0-9]+ \| \|", "\n".join(cls_rows) + f"\n| all | | {first + total} | |", text)
open(doc, "w").write(text)
import os
for path in (doc, os.path.join(os.path.dirname(doc), "input-limits.md")):
    t = open(path).read()
    t = t.replace("HELDOUT_COUNT", str(total))
    t = re.sub(r"(- \*\*held-out\*\* \()\d+( cases)", rf"\g<1>{total}\g<2>", t)
    t = re.sub(r"(RULER files; )\d+( of the)", rf"\g<1>{total}\g<2>", t)
    open(path, "w").write(t)
