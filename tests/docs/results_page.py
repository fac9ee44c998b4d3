#!/usr/bin/env python3
"""bench/RESULTS.md is generated: the current measurements, one section per card, each row from a committed record
of reports/measured/CARD/ with the command that made it.

  run_*.json           `salasim run --json-out` (bash bench/device.sh "measure N"): TTFT by op class, decode,
                       peak memory;
  <comparator>/        bench/qwen3_hf.py's records beside them: the table `salasim model compare --hw CARD
                       --markdown` prints (so the page needs --salasim);
  peers/*.json         bench/peers.py --json: salasim's kernels beside fla and torch SDPA in one process;
  ceilings/*.json      bench/ceilings.py: the card's GEMM, copy and memory ceilings;
  verify.json          bash bench/verify_cpu.sh (the card "cpu"): what the main job costs on a CPU.

A file there that no table shows is a failure, so a record is never silently left out. The cards the device tool
lends come first (h100, h200), then the others by name. The kernel choices behind the numbers, each with its
measured ratio and commit, are docs/decisions.md (hand-written, linked from the page).

--check (the default) fails when bench/RESULTS.md is not what the records give, showing the first lines that
differ; --write puts it there; --print prints it.

Usage: results_page.py SOURCE_DIR --salasim BIN [--write | --print]"""
import difflib
import glob
import json
import os
import subprocess
import sys

from check_measured import label

PAGE = os.path.join("bench", "RESULTS.md")
FIRST_CARDS = ("h100", "h200")  # the cards the device tool lends, in the order the page shows them
CLASSES = ("gemm", "select", "sparse_attn", "dense_attn", "gla", "other")  # the run record's op classes


class Problem(Exception):
    pass


def load(path, source):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise Problem(f"{os.path.relpath(path, source)}: not a readable JSON record ({e})")


def cell(text):
    """A table cell: a pipe inside would end it."""
    return str(text).replace("|", "\\|")


def code(text):
    return f"`{cell(text)}`"


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(cell(c) if not c.startswith("`") else c for c in r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def field(record, name, rel):
    if name not in record:
        raise Problem(f"{rel}: no field '{name}'")
    return record[name]


def runs_section(source, card, paths):
    runs = []
    for p in paths:
        r = load(p, source)
        rel = os.path.relpath(p, source)
        runs.append((field(r, "context", rel), r, rel))
    runs.sort(key=lambda t: t[0])
    classes = [c for c in CLASSES if any(r.get("phases", {}).get(c + "_s", 0) > 0 for _, r, _ in runs)]
    rows = []
    for ctx, r, rel in runs:
        ph = r.get("phases", {})
        host = r.get("decode_host_enqueue_ms")
        rows.append([label(ctx), f"{field(r, 'ttft_s', rel):.2f}", " / ".join(f"{ph.get(c + '_s', 0):.3f}" for c in classes),
                     f"{field(r, 'decode_ms_per_token', rel):.2f}", "-" if host is None else f"{host:.2f}",
                     f"{field(r, 'peak_vram_bytes', rel) / 2**30:.2f} / {r.get('planner_peak_bytes', 0) / 2**30:.2f}",
                     r.get("revision", "-"), r.get("date", "-"), code(field(r, "command", rel))])
    head = (f"### The whole model: `salasim run`\n\nMiniCPM-SALA, the full 9.48B config with synthetic weights, batch 1, "
            f"prefill in chunks, decode the median of the unprofiled steps; one record a row "
            f"(`reports/measured/{card}/run_<context>.json`).\n\n")
    return head + table(["context", "TTFT s", "prefill s: " + " / ".join(classes), "decode ms/token",
                         "host ms to enqueue a step", "peak GiB measured / planned", "revision", "date", "command"],
                        rows)


def compare_section(source, card, salasim, comparators):
    if not salasim:
        raise Problem(f"reports/measured/{card}/ has a comparator's records: the page needs --salasim BIN "
                      f"(salasim model compare prints that table)")
    run = subprocess.run([salasim, "model", "compare", "--hw", card, "--markdown"], cwd=source, capture_output=True,
                         text=True)
    if run.returncode != 0:
        raise Problem(f"salasim model compare --hw {card} failed: {run.stderr.strip()}")
    return (f"### Beside the dense comparator: `salasim model compare --hw {card} --markdown`\n\n"
            f"TTFT and peak memory of MiniCPM-SALA (the records above) and of Qwen3-8B through Hugging Face "
            f"transformers with torch SDPA (`bench/qwen3_hf.py`, synthetic bf16 weights), ratios comparator / "
            f"MiniCPM-SALA, with the paper's figures of its own card beside them; *not measured* marks a length "
            f"without a record. The comparator's records were written by "
            + "; ".join(code(c) for c in comparator_commands(source, card, comparators)) + ".\n\n" + run.stdout)


def comparator_commands(source, card, comparators):
    """The distinct commands that wrote the comparator's records, in the order of their files."""
    out = []
    for e in comparators:
        for p in sorted(glob.glob(os.path.join(source, "reports", "measured", card, e, "run_*.json"))):
            c = field(load(p, source), "command", os.path.relpath(p, source))
            if c not in out:
                out.append(c)
    return out


PEERS = {  # op: (what, peer's time field, ours vs float64, the peer's vs float64)
    "gla": ("GLA (`gla_chunked`) beside fla `chunk_simple_gla`", "fla_ms", "state_salasim_vs_fp64",
            "state_fla_vs_fp64"),
    "attn": ("causal attention (`dense_attn`) beside torch SDPA", "sdpa_ms", "rows_salasim_vs_fp64",
             "rows_sdpa_vs_fp64"),
}


def peers_section(source, paths):
    rows = []
    for p in paths:
        rel = os.path.relpath(p, source)
        rec = load(p, source)
        meta = field(rec, "meta", rel)
        for r in field(rec, "rows", rel):
            op = field(r, "op", rel)
            if op not in PEERS:
                raise Problem(f"{rel}: a row of op '{op}', which the page does not know (known: {', '.join(PEERS)})")
            what, peer_ms, ours_err, peer_err = PEERS[op]
            ours, peer = field(r, "salasim_ms", rel), field(r, peer_ms, rel)
            rows.append([what, label(field(r, "tokens", rel)), f"{ours:.2f}", f"{peer:.2f}", f"{peer / ours:.2f}",
                         f"{field(r, ours_err, rel):.1e}", f"{field(r, peer_err, rel):.1e}",
                         meta.get("revision") or "-", meta.get("date", "-"), code(field(meta, "command", rel))])
    head = ("### Single ops beside their peers: `bench/peers.py`\n\nOne process, the same inputs, medians of 10 "
            "CUDA-event timings after 3 warm-ups; the GLA at the model's shapes (32 heads of 128, the per-head "
            "decays), attention at the sparse layers' (GQA 32:2, head dim 128). Errors are relative RMS against "
            "float64: the GLA's final state, attention's sampled rows; peer / salasim above 1: salasim is the faster. "
            "Records: `peers/*.json`.\n\n")
    return head + table(["op", "tokens", "salasim ms", "peer ms", "peer / salasim", "salasim vs float64",
                         "peer vs float64", "revision", "date", "command"], rows)


def ceilings_section(source, paths):
    rows = []
    for p in paths:
        rel = os.path.relpath(p, source)
        c = load(p, source)
        rows.append([f"{field(c, 'gemm_tflops', rel):.1f}", f"{field(c, 'copy_tb_per_s', rel):.2f}",
                     f"{field(c, 'memory_total_bytes', rel) / 2**30:.1f}", str(field(c, "sms", rel)),
                     c.get("torch", "-"), c.get("date", "-"), code(field(c, "command", rel))])
    head = ("### The card's ceilings: `bench/ceilings.py`\n\nA bf16 GEMM 8192³ with fp32 accumulate, a 4 GiB "
            "device-to-device copy counted as read + write, the memory cudaMemGetInfo reports; medians of CUDA-event "
            "timings. `reports/hw/<card>.json` quotes them. Records: `ceilings/*.json`.\n\n")
    return head + table(["bf16 GEMM TFLOP/s", "copy TB/s", "memory GiB", "SMs", "torch", "date", "command"], rows)


def verify_section(source, path):
    rel = os.path.relpath(path, source)
    r = load(path, source)
    m = field(r, "machine", rel)
    v = r.get("verify", {})
    verdict = "PASS" if v.get("pass") else "FAIL"
    d = r.get("date_utc", "")
    if "taps" in v:
        verdict += f", {v['taps']} taps"
    row = [f"{field(r, 'wall_s', rel):.1f}", f"{field(r, 'cpu_s', rel):.1f}", f"{field(r, 'peak_rss_gb', rel):.2f}",
           f"{m['cpus']} x {m['cpu_model']}, {m['memory_gb']:.0f} GB", f"{m['others_share_during_run'] * 100:.0f}%",
           verdict, r.get("git", "-"), f"{d[:4]}-{d[4:6]}-{d[6:8]}" if len(d) >= 8 else "-", code(field(r, "command", rel))]
    head = ("### The main job on a CPU: `bash bench/verify_cpu.sh`\n\n`salasim verify` on the default scenario under "
            "`/usr/bin/time -v`, with how busy the rest of the machine was meanwhile (a wall time is the idle "
            "machine's only when that share is near 0; the CPU time and the peak memory hold either way). Record: "
            "`verify.json`.\n\n")
    return head + table(["wall s", "CPU s", "peak GB", "machine", "others busy", "verify", "revision", "date",
                         "command"], [row])


def card_section(source, card, salasim):
    d = os.path.join(source, "reports", "measured", card)
    entries = sorted(os.listdir(d))
    runs = [os.path.join(d, e) for e in entries if e.startswith("run_") and e.endswith(".json")]
    parts, shown = [], set(os.path.basename(p) for p in runs)
    gpu = None
    if runs:
        gpu = load(runs[0], source).get("gpu")
        parts.append(runs_section(source, card, runs))
    comparators = [e for e in entries if os.path.isdir(os.path.join(d, e)) and e not in ("peers", "ceilings")]
    if comparators:
        for e in comparators:
            if not glob.glob(os.path.join(d, e, "run_*.json")):
                raise Problem(f"reports/measured/{card}/{e}/: no run_*.json, and no table shows what it holds")
        parts.append(compare_section(source, card, salasim, comparators))
        shown.update(comparators)
    for sub, section in (("peers", peers_section), ("ceilings", ceilings_section)):
        files = sorted(glob.glob(os.path.join(d, sub, "*.json")))
        if os.path.isdir(os.path.join(d, sub)):
            if len(files) != len(os.listdir(os.path.join(d, sub))):
                raise Problem(f"reports/measured/{card}/{sub}/: only *.json records belong there")
            parts.append(section(source, files))
            shown.add(sub)
    if "verify.json" in entries:
        parts.append(verify_section(source, os.path.join(d, "verify.json")))
        shown.add("verify.json")
    left = [e for e in entries if e not in shown]
    if left:
        raise Problem(f"reports/measured/{card}/: no table of bench/RESULTS.md shows {', '.join(left)}")
    title = f"## {card}" + (f": {gpu}" if gpu else "")
    return title + "\n\n" + "\n".join(parts)


def page(source, salasim):
    root = os.path.join(source, "reports", "measured")
    cards = sorted((c for c in os.listdir(root) if os.path.isdir(os.path.join(root, c))),
                   key=lambda c: (FIRST_CARDS.index(c) if c in FIRST_CARDS else len(FIRST_CARDS), c))
    head = ("# Measured results\n\n"
            "<!-- Generated from reports/measured/ by `bash tools/regen_docs.sh` (tests/docs/results_page.py); a ctest "
            "fails while this file and the records disagree. Edit the records or the generator, not this file. -->\n\n"
            "The current measurements of salasim, one section per card, every row from a committed record of "
            "`reports/measured/<card>/` and with the command that made it (a record is written by that command on "
            "the lent machine and committed as written). What each number is held against (the ceilings, the floors "
            "and the gaps) is [docs/performance.md](../docs/performance.md); which kernel choices these numbers "
            "rest on, each with the ratio that decided it and its commit, is [docs/decisions.md]"
            "(../docs/decisions.md). Earlier measurements are in the git history.\n\n")
    return head + "\n".join(card_section(source, c, salasim) for c in cards)


def main():
    source = os.path.abspath(sys.argv[1])
    args = sys.argv[2:]
    salasim = os.path.abspath(args[args.index("--salasim") + 1]) if "--salasim" in args else ""
    try:
        text = page(source, salasim)
    except Problem as e:
        sys.exit(f"results_page: FAIL: {e}")
    path = os.path.join(source, PAGE)
    if "--print" in args:
        sys.stdout.write(text)
        return
    if "--write" in args:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"results_page: wrote {PAGE} from the records")
        return
    with open(path, encoding="utf-8") as f:
        have = f.read()
    if have != text:
        diff = list(difflib.unified_diff(have.splitlines(), text.splitlines(), PAGE, "the records", lineterm="", n=1))
        print("\n".join(diff[:40]))
        sys.exit(f"results_page: FAIL: {PAGE} is not what the records give (bash tools/regen_docs.sh rewrites it)")
    print(f"results_page: OK, {PAGE} is what the records of reports/measured/ give")


if __name__ == "__main__":
    main()
