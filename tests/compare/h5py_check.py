#!/usr/bin/env python3
"""Checks that h5py reads salasim's HDF5 dumps as docs/formats.md describes them.

Usage: h5py_check.py WRITER OUT_DIR  (WRITER is salasim_h5_example, which writes known dumps into OUT_DIR)."""
import math
import os
import subprocess
import sys

import h5py
import numpy as np


def check(cond, what):
    if not cond:
        sys.exit(f"h5py_check: FAILED: {what}")


def check_file_attrs(f, layout):
    a = f.attrs
    check(a["salasim_layout"] == layout, f"salasim_layout is {a['salasim_layout']!r}")
    check(int(a["salasim_format_version"]) == 1, "salasim_format_version")
    for key, want in [("scenario", "h5py-check"), ("git_revision", "abc123"), ("backend", "example"), ("seed", "42")]:
        check(isinstance(a[key], str) and a[key] == want, f"file attribute {key} = {a[key]!r}, expected {want!r}")
    check(isinstance(a["created"], str) and a["created"].endswith("Z"), "created is an ISO 8601 UTC string")


def check_taps(path, float_dtype):
    with h5py.File(path, "r") as f:
        check_file_attrs(f, "taps")
        e = f["/prefill/embed/out"]
        check(e.dtype == float_dtype, f"{path}: embed/out dtype {e.dtype}")
        check(e.shape == (3, 4), f"embed/out shape {e.shape}")
        check(np.array_equal(e[()], (np.arange(12) * 0.5 - 1).reshape(3, 4)), "embed/out values")
        check(list(e.attrs["shape"]) == [3, 4], "shape attribute")
        check(e.attrs["dtype"] == str(np.dtype(float_dtype)), f"dtype attribute {e.attrs['dtype']!r}")
        check(int(e.attrs["integer"]) == 0 and int(e.attrs["order"]) == 0, "integer/order attributes")
        b = f["/prefill/layer_00/sparse/select/blocks"]
        check(b.dtype == np.int64 and int(b.attrs["integer"]) == 1, "blocks are int64 with integer = 1")
        check(b[()].tolist() == [[[0, 1, -1], [2, -1, -1]]], f"blocks values {b[()].tolist()}")
        s = f["/prefill/layer_00/sparse/select/scores"][()]
        check(s[0, 0, 0] == math.inf and s[0, 0, 2] == -math.inf and s[0, 1, 1] == 3.5, "scores keep +-inf")
        names = []
        f.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
        check(sorted(names) == ["prefill/embed/out", "prefill/layer_00/sparse/select/blocks",
                                "prefill/layer_00/sparse/select/scores"], f"datasets {names}")


def check_failures(path):
    with h5py.File(path, "r") as f:
        check_file_attrs(f, "failures")
        g = f["/prefill/layer_00/mlp/out"]
        check(isinstance(g, h5py.Group), "a failing tap is a group")
        ref, be, diff = g["reference"][()], g["backend"][()], g["difference"][()]
        check(np.array_equal(diff, be - ref), "difference = backend - reference")
        check(int(g["reference"].attrs["order"]) == 7, "order of the reference")
        check(np.array_equal(g["inputs/b"][()], [0.5, -0.5]), "inputs/b")


def check_rows(path):
    with h5py.File(path, "r") as f:
        check_file_attrs(f, "taps")
        check(f.attrs["tap_selection"] == "embed/,final/", "tap_selection attribute")
        t = f["/prefill/embed/out"]
        check(list(t.attrs["rows"]) == [1, 3], "rows of embed/out")
        check(np.array_equal(t[()], [[10, 11], [30, 31]]), "chosen rows' values")
        check(list(t.attrs["shape"]) == [2, 2], "shape of the chosen rows")
        n = f["/prefill/final/norm"]
        check(np.array_equal(n.attrs["rows"], np.arange(0, 80000, 2)), "a rows list past 64 KiB")


def main():
    writer, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    subprocess.run([writer, out], check=True)
    check_taps(os.path.join(out, "taps.h5"), np.float64)
    check_taps(os.path.join(out, "taps32.h5"), np.float32)
    check_failures(os.path.join(out, "failures.h5"))
    check_rows(os.path.join(out, "rows.h5"))
    print("h5py_check: OK (h5py", h5py.__version__ + ")")


if __name__ == "__main__":
    main()
