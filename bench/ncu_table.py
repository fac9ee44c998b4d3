#!/usr/bin/env python3
"""Per-kernel table of an Nsight Compute CSV (ncu --metrics gpu__time_duration.sum --print-units base --csv), as
bench/device.sh's decode_ncu step writes it: launches and microseconds per decode step, by kernel, longest first.

  python3 bench/ncu_table.py decode_ncu_1M.csv 2      (2: the decode steps the profiler range held)
"""
import collections
import csv
import sys


def table(path, steps):
    rows = [r for r in csv.reader(l for l in open(path) if l.startswith('"'))]
    if not rows:
        sys.exit(f"{path}: no CSV rows (did ncu run, with --csv?)")
    head, body = rows[0], rows[1:]
    ki, vi, ui = head.index("Kernel Name"), head.index("Metric Value"), head.index("Metric Unit")
    tot, cnt = collections.defaultdict(float), collections.Counter()
    for r in body:
        if r[ui] != "ns":
            sys.exit(f"{path}: metric unit {r[ui]!r}, expected ns (run ncu with --print-units base)")
        name = r[ki].replace("(anonymous namespace)::", "").replace("<unnamed>::", "").removeprefix("void ").split("(")[0]
        tot[name] += float(r[vi].replace(",", ""))
        cnt[name] += 1
    out = [f"{'kernel':64s} {'launches/step':>13s} {'us/step':>10s}"]
    for name, ns in sorted(tot.items(), key=lambda kv: -kv[1]):
        out.append(f"{name[:64]:64s} {cnt[name] / steps:13.1f} {ns / 1e3 / steps:10.1f}")
    out.append(f"{'TOTAL':64s} {sum(cnt.values()) / steps:13.1f} {sum(tot.values()) / 1e3 / steps:10.1f}")
    return "\n".join(out)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    print(table(sys.argv[1], int(sys.argv[2])))
