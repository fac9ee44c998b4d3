#!/usr/bin/python3
"""Migrates a format-1 golden (tests/golden/*.h5) to format 2 in place, on a CPU, without touching its taps.

Format 2 adds the tap manifest: file attribute golden_taps = {"<tap name>": [shape], ...} (JSON), the tap set the
golden was made with, and golden_manifest_source, which says where the manifest came from. A format-1 golden has no
record of its tap set, so the manifest written here is derived from the file's own datasets, and
golden_manifest_source says exactly that: it cannot certify that nothing was lost before the migration. What
`salasim golden check` relies on is unchanged by it: the golden must hold exactly the golden subset of the
reference's run on its scenario. Re-recording the golden on a GPU (`salasim golden record`) replaces the migrated
manifest with a recorded one.

Usage (Debian's python3, which has h5py): /usr/bin/python3 tools/golden_migrate_format2.py tests/golden/NAME.h5 ...
"""
import datetime
import json
import sys

import h5py


def migrate(path):
    with h5py.File(path, "r+") as f:
        fmt = f.attrs.get("golden_format")
        if fmt != "1":
            sys.exit(f"{path}: golden_format is {fmt!r}: only format-1 goldens are migrated")
        manifest = {}

        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                shape = [int(d) for d in obj.shape]
                if [int(d) for d in obj.attrs["shape"]] != shape:
                    sys.exit(f"{path}: /{name}: its 'shape' attribute disagrees with the dataset's shape {shape}")
                manifest["/" + name] = shape

        f.visititems(visit)
        if not manifest:
            sys.exit(f"{path}: no datasets")
        today = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
        f.attrs["golden_taps"] = json.dumps(dict(sorted(manifest.items())), separators=(",", ":"))
        f.attrs["golden_manifest_source"] = (
            f"migrated from format 1 on {today} by tools/golden_migrate_format2.py: derived from this file's own "
            f"{len(manifest)} datasets, not recorded with the GPU run; re-record the golden on a GPU to replace it")
        f.attrs["golden_format"] = "2"
    print(f"{path}: format 2, manifest of {len(manifest)} taps derived from its datasets")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for p in sys.argv[1:]:
        migrate(p)
