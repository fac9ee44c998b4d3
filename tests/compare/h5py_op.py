#!/usr/bin/env python3
"""The h5py example of docs/op.md runs as shown: its first python block, with ./build/salasim pointing at this build,
run in a scratch folder, must print the line its last comment shows.

Usage: h5py_op.py SOURCE_DIR SALASIM_BIN SCRATCH_DIR"""
import os
import re
import subprocess
import sys


def main():
    source, binary, scratch = (os.path.abspath(a) for a in sys.argv[1:4])
    with open(os.path.join(source, "docs", "op.md"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"```python\n(.*?)```", text, re.S)
    if not m:
        sys.exit("h5py_op: docs/op.md has no python block")
    code = m.group(1)
    shown = [l[2:] for l in code.splitlines() if l.startswith("# ")]
    if not shown:
        sys.exit("h5py_op: the python block of docs/op.md shows no output (a last line '# ...')")
    os.makedirs(scratch, exist_ok=True)
    r = subprocess.run([sys.executable, "-c", code.replace("./build/salasim", binary)], cwd=scratch,
                       capture_output=True, text=True, timeout=300)
    printed = r.stdout.strip().splitlines()
    if r.returncode != 0 or printed != [shown[-1]]:
        sys.exit(f"h5py_op: the example of docs/op.md exited {r.returncode} and printed {printed}; the docs show "
                 f"{shown[-1]!r}\n{r.stderr[-3000:]}")
    print(f"h5py_op: OK, the example of docs/op.md printed: {printed[0]}")


if __name__ == "__main__":
    main()
