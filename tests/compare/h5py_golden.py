#!/usr/bin/env python3
"""Reads every golden listed in tests/golden/LIST with h5py, as a user's Python would, and checks it is what
docs/goldens.md describes: a tap dump (salasim_layout "taps", version 1) of golden_format 2 whose manifest
(golden_taps, JSON {"<tap name>": [shape]}) names exactly its datasets, with their shapes; float taps float32,
integer taps int64; every dataset carrying shape, dtype, integer and order attributes; the scenario attribute the
name of the scenario it is listed with.

Usage: h5py_golden.py SOURCE_DIR"""
import json
import os
import sys

import h5py
import numpy as np


def check(cond, what):
    if not cond:
        sys.exit(f"h5py_golden: FAILED: {what}")


def listed(source):
    with open(os.path.join(source, "tests/golden/LIST")) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                name, scenario = line.split()
                yield os.path.join(source, "tests/golden", name), os.path.join(source, scenario)


def check_golden(path, scenario_path):
    check(os.path.exists(path), f"{path} is listed in tests/golden/LIST but missing")
    with open(scenario_path) as f:
        scenario = json.load(f)["name"]
    with h5py.File(path, "r") as f:
        a = f.attrs
        check(a["salasim_layout"] == "taps" and int(a["salasim_format_version"]) == 1, f"{path}: not a tap dump")
        check(a["golden_format"] == "2", f"{path}: golden_format {a['golden_format']!r}, expected '2'")
        check(a["scenario"] == scenario, f"{path}: scenario {a['scenario']!r}, listed with {scenario!r}")
        for key in ("golden_device", "golden_gpu_source_hash", "golden_scenario_path", "golden_prefill_rows",
                    "golden_manifest_source", "backend", "git_revision", "created"):
            check(isinstance(a[key], str) and a[key], f"{path}: file attribute {key} is not a non-empty string")
        manifest = json.loads(a["golden_taps"])
        datasets = {}
        f.visititems(lambda n, o: datasets.__setitem__("/" + n, o) if isinstance(o, h5py.Dataset) else None)
        missing = sorted(set(manifest) - set(datasets))
        extra = sorted(set(datasets) - set(manifest))
        check(not missing and not extra, f"{path}: manifest lacks {extra[:5]}, datasets lack {missing[:5]}")
        orders = set()
        for name, d in datasets.items():
            check(list(d.shape) == manifest[name], f"{path}: {name} has shape {d.shape}, manifest {manifest[name]}")
            check(list(d.attrs["shape"]) == manifest[name], f"{path}: {name}: shape attribute {d.attrs['shape']}")
            integer = int(d.attrs["integer"]) == 1
            want = np.int64 if integer else np.float32
            check(d.dtype == want and d.attrs["dtype"] == str(np.dtype(want)), f"{path}: {name} is {d.dtype}")
            orders.add(int(d.attrs["order"]))
            if not integer:
                check(np.isfinite(d[()]).all() or name.endswith("/select/scores"), f"{path}: {name} not finite")
        check(len(orders) == len(datasets), f"{path}: recording orders are not distinct")
    print(f"h5py_golden: {os.path.relpath(path)}: {len(datasets)} taps, the manifest names exactly its datasets")


def main():
    source = sys.argv[1]
    n = 0
    for path, scenario in listed(source):
        check_golden(path, scenario)
        n += 1
    check(n > 0, "tests/golden/LIST lists no golden")
    print(f"h5py_golden: OK, {n} goldens (h5py {h5py.__version__})")


if __name__ == "__main__":
    main()
