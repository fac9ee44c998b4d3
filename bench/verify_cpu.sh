#!/usr/bin/env bash
# What the main job costs on this machine: `salasim verify` (the default scenario; on a machine without a GPU, peer
# mode) under /usr/bin/time -v: wall time, CPU time, peak memory, and how busy the rest of the machine was meanwhile
# (a wall time measured while others compile says little; the CPU time and the peak memory still hold).
#   bash bench/verify_cpu.sh                      # ./build/salasim, the default scenario
#   SALASIM_BUILD=build-x bash bench/verify_cpu.sh --scenario scenarios/tiny-short.json   # more args go to verify
# Writes bench/out/verify-<UTC time>.{json,stderr,record.json} (OUT=... to change) and prints the record and a
# markdown row. Copied to reports/measured/cpu/verify.json, the record is what README's figure and bench/RESULTS.md
# show (bash tools/regen_docs.sh). A benchmark, not a test: it measures and exits with verify's status.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${SALASIM_BUILD:-build}
OUT=${OUT:-bench/out}
[ -x "$B/salasim" ] || { echo "verify_cpu: no $B/salasim: build first (bash .ci/setup)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "verify_cpu: /usr/bin/time is missing (Debian package 'time')" >&2; exit 2; }
mkdir -p "$OUT"
base="$OUT/verify-$(date -u +%Y%m%dT%H%M%SZ)"

# busy and total CPU ticks of the whole machine, from /proc/stat
ticks() { awk '/^cpu /{busy=$2+$3+$4+$7+$8+$9; print busy, busy+$5+$6}' /proc/stat; }
read -r busy0 total0 < <(ticks)
load0=$(cut -d' ' -f1-3 /proc/loadavg)
set +e
/usr/bin/time -v "$B/salasim" verify --json --progress "$@" > "$base.json" 2> "$base.stderr"
rc=$?
set -e
read -r busy1 total1 < <(ticks)
load1=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$base" "$rc" "$busy0" "$total0" "$busy1" "$total1" "$load0" "$load1" "$B" "$*" <<'EOF'
import json, os, re, subprocess, sys
base, rc, busy0, total0, busy1, total1, load0, load1, build, args = sys.argv[1:]
err = open(base + ".stderr").read()
def tv(label):  # a field of /usr/bin/time -v
    m = re.search(r"^\s*" + re.escape(label) + r": (.*)$", err, re.M)
    return m.group(1).strip() if m else None
def seconds(hms):
    parts = [float(p) for p in hms.split(":")]
    return sum(p * 60 ** i for i, p in enumerate(reversed(parts)))
wall, user, sys_s = seconds(tv("Elapsed (wall clock) time (h:mm:ss or m:ss)")), float(tv("User time (seconds)")), float(tv("System time (seconds)"))
rss_kb = int(tv("Maximum resident set size (kbytes)"))
ncpu = os.cpu_count()
machine_busy = (int(busy1) - int(busy0)) / max(1, int(total1) - int(total0))  # share of all CPUs busy
ours = (user + sys_s) / (wall * ncpu)
try:
    v = json.load(open(base + ".json"))
except Exception:
    v = {}
t = v.get("times", {})
def phase(run, name):
    return next((p["seconds"] for p in t.get(run, []) if p["phase"] == name), None)
cpu_model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
mem_gb = int(next(l.split()[1] for l in open("/proc/meminfo") if l.startswith("MemTotal"))) / 1e6
git = subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True, text=True).stdout.strip()
report = v.get("report", {})
record = {
    "command": f"/usr/bin/time -v {build}/salasim verify --json --progress {args}".strip(),
    "date_utc": os.path.basename(base).split("-", 1)[1], "git": git, "exit_status": int(rc),
    "machine": {"cpus": ncpu, "cpu_model": cpu_model, "memory_gb": round(mem_gb, 1),
                "loadavg_before": load0, "loadavg_after": load1,
                "busy_share_during_run": round(machine_busy, 3),
                "others_share_during_run": round(max(0.0, machine_busy - ours), 3)},
    "wall_s": wall, "user_s": user, "sys_s": sys_s, "cpu_s": round(user + sys_s, 2),
    "peak_rss_gb": round(rss_kb / 1e6, 3),
    "verify": {"pass": v.get("pass"), "taps": len(report.get("rows", [])),
               "golden_pass": (v.get("golden") or {}).get("pass"),
               "reference_prefill_s": phase("reference", "prefill"), "peer_prefill_s": phase("peer", "prefill"),
               "reference_cpu_s": t.get("reference_cpu_s"), "peer_cpu_s": t.get("peer_cpu_s"),
               "compare_cpu_s": t.get("compare_s"), "threads_per_run": t.get("threads_per_run"),
               "waits_s": {k: t.get(k) for k in ("peer_waited_for_selections_s", "reference_waited_for_peer_s",
                                                 "peer_waited_for_reference_s")}},
}
json.dump(record, open(base + ".record.json", "w"), indent=2)
print(json.dumps(record, indent=2))
quiet = record["machine"]["others_share_during_run"]
golden_word = {True: "PASS", False: "FAIL"}.get(record["verify"]["golden_pass"], "not checked")
print(f"\nrecord: {base}.record.json")
print("| date (UTC) | git | machine | others busy | wall | CPU (user+sys) | peak RSS | verify |")
print("|---|---|---|---|---|---|---|---|")
print(f"| {record['date_utc']} | {git} | {ncpu} x {cpu_model}, {mem_gb:.0f} GB | {100 * quiet:.0f}% | {wall:.1f} s | "
      f"{user + sys_s:.1f} s | {rss_kb / 1e6:.2f} GB | {'PASS' if v.get('pass') else 'FAIL'}, "
      f"{record['verify']['taps']} taps, golden {golden_word} |")
if quiet > 0.10:
    print(f"note: other processes kept {100 * quiet:.0f}% of this machine's CPUs busy during the run: the wall time "
          "is not that of an idle machine (CPU time and peak memory still are)")
EOF
exit "$rc"
