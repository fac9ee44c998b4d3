#!/usr/bin/env python3
"""The measured figures README.md quotes are those of committed records.

The text between "<!-- measured: NAME -->" and "<!-- /measured -->" in README.md is generated from records:
  h200        reports/measured/h200/run_*.json (`salasim run` on the H200): TTFT and decode per context, the peak
              memory of the longest, the records' date and revision;
  verify-cpu  the newest bench/results/*/verify*.record.json (`bash bench/verify_cpu.sh`): the main job's wall and
              CPU time and peak memory, the machine and how busy it was, the revision.
--check (the default) fails when the README's text is not what the records give; --write puts it there.

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


def verify_cpu(source):
    paths = sorted(glob.glob(os.path.join(source, "bench", "results", "*", "verify*.record.json")))
    if not paths:
        sys.exit("check_measured: no bench/results/*/verify*.record.json")
    with open(paths[-1], encoding="utf-8") as f:
        r = json.load(f)
    m = r["machine"]
    return (f"{r['wall_s']:.1f} s wall, {r['cpu_s']:.1f} s of CPU and {r['peak_rss_gb']:.2f} GB peak on "
            f"{m['cpus']} x {m['cpu_model']} with {m['others_share_during_run'] * 100:.0f}% of it busy with other "
            f"work, revision {r['git']} ({os.path.relpath(paths[-1], source)})")


def h200(source):
    runs = []
    for path in glob.glob(os.path.join(source, "reports", "measured", "h200", "run_*.json")):
        with open(path, encoding="utf-8") as f:
            runs.append(json.load(f))
    if not runs:
        sys.exit("check_measured: no records in reports/measured/h200/")
    runs.sort(key=lambda r: r["context"])
    ttft = and_list([f"{r['ttft_s']:.{2 if r['ttft_s'] < 10 else 1}f} s at {label(r['context'])}" for r in runs])
    decode = and_list([f"{r['decode_ms_per_token']:.2f}" + (" ms/token" if i == 0 else "") + f" at {label(r['context'])}"
                       for i, r in enumerate(runs)])
    last = runs[-1]
    dates = sorted({r["date"] for r in runs})
    revisions = sorted({r["revision"] for r in runs})
    return (f"TTFT {ttft}; decode {decode}; {last['peak_vram_bytes'] / 2**30:.1f} GiB peak at "
            f"{label(last['context'])} (records of {and_list(dates)}, revision {and_list(revisions)})")


GENERATORS = {"h200": h200, "verify-cpu": verify_cpu}


def main():
    source = os.path.abspath(sys.argv[1])
    write = "--write" in sys.argv[2:]
    path = os.path.join(source, "README.md")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    problems, names, out, last = [], [], [], 0
    for m in BLOCK.finditer(text):
        name = m.group(1)
        if name not in GENERATORS:
            problems.append(f"README.md: measured block '{name}': no generator (known: {', '.join(GENERATORS)})")
            continue
        names.append(name)
        want, have = GENERATORS[name](source), " ".join(m.group(2).split())
        out += [text[last:m.start(2)], want if write else m.group(2)]
        last = m.end(2)
        if have != want and not write:
            problems.append(f"README.md: the '{name}' figures say\n  {have}\nthe records give\n  {want}")
    out.append(text[last:])
    if not names:
        problems.append("README.md: no <!-- measured: NAME --> ... <!-- /measured --> block")
    if write and not problems and "".join(out) != text:
        with open(path, "w", encoding="utf-8") as f:
            f.write("".join(out))
        print("rewrote README.md's measured figures from the records")
    finish(problems, "check_measured: FAIL (bash tools/regen_docs.sh rewrites them)",
           f"check_measured: OK, README.md quotes the records of {', '.join(names)}")


if __name__ == "__main__":
    main()
