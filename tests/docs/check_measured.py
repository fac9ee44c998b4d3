#!/usr/bin/env python3
"""The measured figures README.md quotes are those of committed records.

The text between "<!-- measured: NAME -->" and "<!-- /measured -->" in README.md is generated from records:
  CARD          reports/measured/CARD/run_*.json (`salasim run` on a lent card: h200, h100): TTFT and decode per
                context, the peak memory of the longest, the records' date and revision;
  verify-cpu    reports/measured/cpu/verify.json (`bash bench/verify_cpu.sh`): the main job's wall and CPU time and
                peak memory, the machine and how busy it was, the revision.
bench/RESULTS.md, the page of every current record, is generated whole (results_page.py).
--check (the default) fails when the text is not what the records give; --write puts it there.

Usage: check_measured.py SOURCE_DIR [--write]"""
import glob
import json
import os
import re
import sys

from doc_files import finish

BLOCK = re.compile(r"<!-- measured: ([a-z0-9-]+) -->(.*?)<!-- /measured -->", re.S)


def label(tokens):
    return f"{tokens // 1048576}M" if tokens % 1048576 == 0 and tokens < 2097152 else f"{tokens // 1024}K"


def and_list(items):
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


VERIFY_CPU = os.path.join("reports", "measured", "cpu", "verify.json")


def verify_cpu(source):
    path = os.path.join(source, VERIFY_CPU)
    if not os.path.exists(path):
        sys.exit(f"check_measured: no {VERIFY_CPU} (bash bench/verify_cpu.sh writes the record)")
    with open(path, encoding="utf-8") as f:
        r = json.load(f)
    m = r["machine"]
    return (f"{r['wall_s']:.1f} s wall, {r['cpu_s']:.1f} s of CPU and {r['peak_rss_gb']:.2f} GB peak on "
            f"{m['cpus']} x {m['cpu_model']} with {m['others_share_during_run'] * 100:.0f}% of it busy with other "
            f"work, revision {r['git']} ({VERIFY_CPU})")


def card_runs(source, card):
    runs = []
    for path in glob.glob(os.path.join(source, "reports", "measured", card, "run_*.json")):
        with open(path, encoding="utf-8") as f:
            runs.append(json.load(f))
    if not runs:
        sys.exit(f"check_measured: no records in reports/measured/{card}/")
    runs.sort(key=lambda r: r["context"])
    ttft = and_list([f"{r['ttft_s']:.{2 if r['ttft_s'] < 10 else 1}f} s at {label(r['context'])}" for r in runs])
    decode = and_list([f"{r['decode_ms_per_token']:.2f}" + (" ms/token" if i == 0 else "") + f" at {label(r['context'])}"
                       for i, r in enumerate(runs)])
    last = runs[-1]
    dates = sorted({r["date"] for r in runs})
    revisions = sorted({r["revision"] for r in runs})
    return (f"TTFT {ttft}; decode {decode}; {last['peak_vram_bytes'] / 2**30:.1f} GiB peak at "
            f"{label(last['context'])} (records of {and_list(dates)}, revision {and_list(revisions)})")


CARDS = ("h200", "h100")  # the lent cards with measured records (reports/measured/CARD/)
# Each block's generator, called as gen(source).
GENERATORS = {"verify-cpu": verify_cpu}
for _card in CARDS:
    GENERATORS[_card] = lambda source, card=_card: card_runs(source, card)


def norm(text):
    """A block is a sentence: its line breaks and runs of spaces do not count."""
    return " ".join(text.split())


def check_file(source, rel, write, problems):
    """The names of the measured blocks of one file, each checked (or rewritten) against its generator."""
    path = os.path.join(source, rel)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    names, out, last = [], [], 0
    for m in BLOCK.finditer(text):
        name = m.group(1)
        if name not in GENERATORS:
            problems.append(f"{rel}: measured block '{name}': no generator (known: {', '.join(GENERATORS)})")
            continue
        names.append(name)
        want = GENERATORS[name](source)
        have = m.group(2)
        out += [text[last:m.start(2)], want if write else have]
        last = m.end(2)
        if norm(have) != norm(want) and not write:
            problems.append(f"{rel}: the '{name}' figures say\n  {norm(have)}\nthe records give\n  {norm(want)}")
    out.append(text[last:])
    if write and "".join(out) != text:
        with open(path, "w", encoding="utf-8") as f:
            f.write("".join(out))
        print(f"rewrote {rel}'s measured figures from the records")
    return names


def main():
    source = os.path.abspath(sys.argv[1])
    write = "--write" in sys.argv[2:]
    problems = []
    readme = check_file(source, "README.md", write, problems)
    if not readme:
        problems.append("README.md: no <!-- measured: NAME --> ... <!-- /measured --> block")
    finish(problems, "check_measured: FAIL (bash tools/regen_docs.sh rewrites them)",
           f"check_measured: OK, README.md quotes the records of {', '.join(readme)}")


if __name__ == "__main__":
    main()
