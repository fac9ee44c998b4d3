"""salasim's driver of a Python op implementation (`salasim op NAME --backend py:MODULE[:FUNCTION]`,
docs/check-your-implementation.md). salasim runs it once per case in a Python that imports h5py, numpy and the
module; it reads the op's inputs from the file salasim wrote, calls the function with every input and attribute by
name, and writes what the function returns as the outputs salasim reads back.

The call: float inputs are float32 numpy arrays holding the values the CUDA path stores (bf16, or fp32 where the
op's table says so), integer inputs int64 arrays, integer attributes int, float attributes float, choices str; an
optional input that is absent is not passed. The function returns a dict from output names (the last part of the
tap path, "out", "state"; or the whole path) to arrays, a tuple or list of arrays in the table's order (shorter
leaves the rest out), or one array (the first output). numpy arrays, torch tensors and anything numpy.asarray takes
will do. An output left out is skipped by salasim, with a line saying so.

Exit status: 0 outputs written; 77 the function does not take this case (it raised NotImplementedError, or the
module has no function named after the op): skipped; 1 the function raised, or returned no outputs it could write:
the case fails; 2 the module cannot be imported or FUNCTION is not a callable of it: salasim stops.

Usage: python3 op_driver.py --call MODULE[:FUNCTION] --op NAME --outputs TAP,TAP --in X.h5 --out Y.h5"""
import argparse
import importlib
import importlib.util
import os
import sys
import traceback

SKIP, FAILED, BAD_SPEC = 77, 1, 2


def load(module):
    """The module: a file path (ends in .py or holds a '/') or a module name importable from the working folder."""
    if module.endswith(".py") or "/" in module:
        name = os.path.splitext(os.path.basename(module))[0]
        spec = importlib.util.spec_from_file_location(name, module)
        if spec is None or not os.path.isfile(module):
            raise ImportError(f"no Python file {module}")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        sys.path.insert(0, os.path.dirname(os.path.abspath(module)))
        spec.loader.exec_module(mod)
        return mod
    sys.path.insert(0, os.getcwd())
    return importlib.import_module(module)


def read_inputs(path):
    import h5py
    import numpy as np
    kwargs = {}
    with h5py.File(path, "r") as f:
        for name, d in f.items():
            a = d[()]
            kwargs[name] = a.astype(np.float32) if a.dtype.kind == "f" else a.astype(np.int64)
        for name, v in f.attrs.items():
            if isinstance(v, bytes):
                v = v.decode()
            elif hasattr(v, "dtype"):
                v = int(v) if v.dtype.kind in "iu" else float(v)
            kwargs[name] = v
    return kwargs


def as_array(v):
    """A numpy array of a returned value: torch tensors (any device) through the CPU."""
    import numpy as np
    if hasattr(v, "detach") and hasattr(v, "cpu"):
        t = v.detach().cpu()
        if t.is_floating_point():
            t = t.float()
        v = t.numpy()
    return np.asarray(v)


def outputs_by_tap(result, taps, op):
    """{tap: value} from what the function returned."""
    short = {t.rsplit("/", 1)[1]: t for t in taps}
    if isinstance(result, dict):
        out = {}
        for k, v in result.items():
            tap = short.get(k, k if k in taps else None)
            if tap is None:
                raise ValueError(f"returned an output named {k!r}, not an output of {op} "
                                 f"(its outputs: {', '.join(short)})")
            out[tap] = v
        return out
    if isinstance(result, (tuple, list)):
        if len(result) > len(taps):
            raise ValueError(f"returned {len(result)} values; {op} has {len(taps)} outputs ({', '.join(short)})")
        return dict(zip(taps, result))
    if result is None:
        raise ValueError("returned None; expected its outputs (a dict by name, a tuple, or one array)")
    return {taps[0]: result}


def write_outputs(path, outputs):
    import h5py
    import numpy as np
    with h5py.File(path, "w") as f:
        for tap, v in outputs.items():
            if v is None:
                continue
            a = as_array(v)
            if a.dtype.kind not in "fiub":
                raise ValueError(f"output {tap}: an array of {a.dtype}; expected numbers")
            f.create_dataset(tap, data=a.astype(np.int64 if a.dtype.kind in "iub" else np.float64))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--call", required=True)
    p.add_argument("--op", required=True)
    p.add_argument("--outputs", required=True)
    p.add_argument("--in", dest="inp", required=True)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    module, _, function = a.call.rpartition(":") if ":" in a.call else (a.call, "", "")
    try:
        mod = load(module)
    except Exception:
        print(f"py:{a.call}: cannot import {module}:\n{traceback.format_exc()}", file=sys.stderr)
        return BAD_SPEC
    f = getattr(mod, function or a.op, None)
    if f is None and not function:
        print(f"module {module} has no function {a.op}", file=sys.stderr)
        return SKIP
    if not callable(f):
        print(f"py:{a.call}: {module} has no callable {function}", file=sys.stderr)
        return BAD_SPEC
    try:
        result = f(**read_inputs(a.inp))
    except NotImplementedError as e:
        print(f"{f.__name__} does not take this case: {e}", file=sys.stderr)
        return SKIP
    except Exception:
        traceback.print_exc()
        return FAILED
    try:
        write_outputs(a.out, outputs_by_tap(result, a.outputs.split(","), a.op))
    except Exception as e:
        print(f"{f.__name__}: {e}", file=sys.stderr)
        return FAILED
    return 0


if __name__ == "__main__":
    sys.exit(main())
