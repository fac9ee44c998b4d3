"""What the peer scripts share: the `salasim op` adapter (HDF5 in, subprocess, HDF5 out), tap-dump reading, the
error table, and a clear exit when an optional module (torch, fla, h5py) is missing.

OPS below is the one place that names `salasim op`'s datasets, attributes and output taps, as `salasim op NAME
--help` prints them (docs/op.md; tests/peers/peers_check.py fails when the two disagree). Inputs are written as
float64 (int64 for ids); every shape is row-major, as salasim's taps are.
"""
import importlib
import math
import os
import subprocess
import sys
import tempfile

# op -> (input datasets, HDF5 attributes of the input file, {key run_op returns: tap of the --out dump}). Every input
# and attribute `salasim op NAME --help` lists, no other: op takes the sizes from the shapes (no heads/groups/head_dim
# attribute) and ignores datasets and attributes it does not know, so a guessed name would be silently dropped; run_op
# refuses names not listed here instead. Shapes: T rows at positions pos0.., H query heads, G kv groups, hd head dim,
# L cached keys, n1 / n2 compressed windows, K selected blocks, NB score columns.
OPS = {
    # q, k, v [T, H*hd]; gamma [H] (natural-log decay per token, < 0); state [H, hd, hd] entering state (optional,
    # absent: zeros); form auto|chunked|recurrent (optional) -> out [T, H*hd] (before o_norm), state [H, hd, hd]
    "gla": (["q", "k", "v", "gamma", "state"], ["tau", "form"],
            {"out": "/op/lightning/gla/out", "state": "/op/lightning/gla/state"}),
    # q [T, H*hd]; k1 [G, n1, hd]; k2 [G, n2, hd] -> blocks [T, G, k_sel] (int64 ascending, -1 empty), scores [T, G, NB]
    "select_blocks": (["q", "k1", "k2"],
                      ["pos0", "tau", "kernel", "stride", "block", "init_blocks", "local_blocks", "k_sel", "n_blocks"],
                      {"blocks": "/op/sparse/select/blocks", "scores": "/op/sparse/select/scores"}),
    # q [T, H*hd]; k, v [G, L >= pos0+T, hd] -> out [T, H*hd]
    "dense_attn": (["q", "k", "v"], ["pos0", "tau"], {"out": "/op/sparse/attn/out"}),
    # q [T, H*hd]; k, v [G, L >= pos0+T, hd]; blocks [T, G, K] (-1 empty) -> out [T, H*hd]
    "sparse_attn": (["q", "k", "v", "blocks"], ["pos0", "tau", "block"], {"out": "/op/sparse/attn/out"}),
}


def fail(msg, code=2):
    """Prints `script: msg` to stderr and exits (2: bad input or a missing dependency, 1: a check failed)."""
    print(f"{os.path.basename(sys.argv[0])}: {msg}", file=sys.stderr)
    sys.exit(code)


def need(*modules, why=""):
    """Imports the modules or exits 2 naming every one missing (these scripts are optional tools: CPU tests never
    need torch or fla)."""
    missing, got = [], []
    for m in modules:
        try:
            got.append(importlib.import_module(m))
        except ImportError as e:
            missing.append(f"{m} ({e})")
    if missing:
        fail(f"needs {', '.join(missing)}{': ' + why if why else ''}. Install them (torch, fla-core, transformers, "
             "safetensors, h5py, numpy; docs/interop.md#peers) or run on a machine that has them.")
    return got if len(got) > 1 else got[0]


class SalasimError(RuntimeError):
    pass


def run_salasim(salasim, args, what):
    """Runs salasim with args; returns stdout; raises SalasimError with its stderr on a non-zero exit."""
    if not os.path.isfile(salasim) or not os.access(salasim, os.X_OK):
        raise SalasimError(f"--salasim {salasim}: not an executable file (build it: cmake --build build --target salasim)")
    r = subprocess.run([salasim, *args], capture_output=True, text=True)
    if r.returncode != 0:
        err = r.stderr.strip()
        last = err.splitlines()[-1] if err else "(no message)"
        raise SalasimError(f"{what}: exit {r.returncode}: {last}\n`{' '.join([salasim, *args])}`:\n{err}")
    return r.stdout


def run_op(salasim, name, inputs, attrs, backend="reference", workdir=None):
    """`salasim op NAME --in X.h5 --out Y.h5 --backend B` on numpy arrays; returns {key: array} for the keys of
    OPS[name]'s outputs (gla: out, state; select_blocks: blocks, scores; dense_attn, sparse_attn: out)."""
    import h5py
    import numpy as np

    if name not in OPS:
        raise ValueError(f"run_op: unknown op {name!r}; OPS knows {sorted(OPS)}")
    names, attr_names, outs = OPS[name]
    unknown = (set(inputs) - set(names)) | (set(attrs) - set(attr_names))
    if unknown:
        raise ValueError(f"run_op {name}: {sorted(unknown)} are not in OPS[{name!r}] (inputs {names}, attributes {attr_names})")
    with tempfile.TemporaryDirectory(dir=workdir) as d:
        x, y = os.path.join(d, f"{name}-in.h5"), os.path.join(d, f"{name}-out.h5")
        with h5py.File(x, "w") as f:
            for k, v in inputs.items():
                v = np.asarray(v)
                f.create_dataset(k, data=v.astype(np.int64 if v.dtype.kind in "iu" else np.float64))
            for k, v in attrs.items():
                f.attrs[k] = v
        run_salasim(salasim, ["op", name, "--in", x, "--out", y, "--backend", backend], f"salasim op {name}")
        try:
            taps = read_taps(y, list(outs.values()))
        except SalasimError as e:
            raise SalasimError(f"salasim op {name}: {e}; align OPS in {__file__} with `salasim op {name} --help`") from None
        return {key: taps[tap] for key, tap in outs.items()}


def read_taps(path, names):
    """{name: array} of the named taps of a tap dump (docs/formats.md#tap-dump); a missing one is an error that
    lists what the file holds under the deepest group of its path that exists."""
    import h5py

    out = {}
    with h5py.File(path, "r") as f:
        for n in names:
            if n not in f:
                parent = "/" + n.strip("/")
                while parent != "/" and not (parent in f and isinstance(f[parent], h5py.Group)):
                    parent = parent.rsplit("/", 1)[0] or "/"
                have = sorted(f[parent].keys())
                raise SalasimError(f"{path}: no tap {n} (under {parent}: {have[:12]}{' ...' if len(have) > 12 else ''})")
            out[n] = f[n][()]
    return out


def errors(x, ref):
    """rel-RMS ||x - ref|| / ||ref|| and max |x - ref|, in float64, over the finite entries of ref (block scores
    carry +-inf for forced and future blocks: those must agree exactly and are counted apart)."""
    import numpy as np

    x, ref = np.asarray(x, dtype=np.float64), np.asarray(ref, dtype=np.float64)
    if x.shape != ref.shape:
        raise ValueError(f"shapes differ: {x.shape} vs {ref.shape}")
    fin = np.isfinite(ref)
    inf_mismatch = int(np.count_nonzero(~fin & (x != ref)))
    d = x[fin] - ref[fin]
    den = math.sqrt(float(np.sum(ref[fin] ** 2)))
    num = math.sqrt(float(np.sum(d ** 2)))
    rel = num / den if den > 0 else (0.0 if num == 0 else math.inf)
    return {"rel_rms": rel, "max_abs": float(np.max(np.abs(d))) if d.size else 0.0, "inf_mismatch": inf_mismatch}


class Table:
    """Rows of (what, against, rel-RMS, max abs, note), printed as a Markdown table."""

    def __init__(self, title, columns=("op", "compared", "rel-RMS", "max abs", "note")):
        self.title, self.columns, self.rows = title, columns, []

    def add(self, op, compared, err, note=""):
        if err.get("inf_mismatch"):
            note = (note + "; " if note else "") + f"{err['inf_mismatch']} +-inf entries differ"
        self.rows.append((op, compared, f"{err['rel_rms']:.2e}", f"{err['max_abs']:.2e}", note))

    def add_text(self, op, compared, rel, mx, note=""):
        self.rows.append((op, compared, rel, mx, note))

    def render(self):
        lines = [self.title, "", "| " + " | ".join(self.columns) + " |", "|" + "---|" * len(self.columns)]
        lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in self.rows]
        return "\n".join(lines)
