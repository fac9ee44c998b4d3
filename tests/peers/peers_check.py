#!/usr/bin/env python3
"""CPU checks of tools/peers (docs/interop.md#peers) that need no torch: the infllmv2 stage-1 definition in numpy
(tools/peers/stage1.py) selects exactly what salasim's float64 reference selects, the error table's arithmetic, and a
clear exit when torch is missing.

Usage: peers_check.py SALASIM SOURCE_DIR WORK_DIR"""
import json
import math
import os
import subprocess
import sys

import numpy as np

salasim, src, work = sys.argv[1:4]
sys.path.insert(0, os.path.join(src, "tools", "peers"))
import peerlib  # noqa: E402
import stage1  # noqa: E402


def check(cond, what):
    if not cond:
        sys.exit(f"peers_check: FAILED: {what}")


# Scores are float64 on both sides, computed in different orders: a few ulps apart (one rounding per op).
SCORE_REL = 1e-12


def selection_vs_reference():
    """A sparse prefill of the HF-shaped tiny model with dense_len lowered to 512 and a 4-block window, so 1100
    tokens really choose blocks (K = 4 + 4 of up to 18)."""
    os.makedirs(work, exist_ok=True)
    with open(os.path.join(src, "scenarios", "models", "tiny-hf.json")) as f:
        cfg = json.load(f)
    cfg["sparse_config"].update({"dense_len": 512, "window_size": 256, "topk": 4})
    model = os.path.join(work, "tiny-hf-sparse.json")
    with open(model, "w") as f:
        json.dump(cfg, f)
    scen = os.path.join(work, "peers-select.json")
    with open(scen, "w") as f:
        json.dump({"name": "peers-select", "description": "peers_check.py", "model": model,
                   "weights": {"synthetic_seed": 3}, "prompt": {"random_seed": 5, "length": 1100}, "decode_steps": 0}, f)
    dump = os.path.join(work, "select.h5")
    if os.path.exists(dump):
        os.remove(dump)
    r = subprocess.run([salasim, "ref", "--scenario", scen, "--taps", "layer_00/sparse/", "layer_03/sparse/",
                        "--dump-taps", dump], capture_output=True, text=True)
    check(r.returncode == 0, f"salasim ref exited {r.returncode}: {r.stderr}")
    H, G, hd = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]
    sets = 0
    for layer in ("layer_00", "layer_03"):
        t = peerlib.read_taps(dump, [f"/prefill/{layer}/sparse/{n}" for n in
                                     ("proj/q", "compress_k/k1", "compress_k/k2", "select/scores", "select/blocks")])
        q, k1, k2, scores, blocks = t.values()
        T, nb = q.shape[0], scores.shape[2]
        check(nb == math.ceil(1100 / 64), f"{layer}: {nb} score columns")
        S, ids = stage1.select(q, 0, k1, k2, H, G, hd, hd ** -0.5, nb, local_blocks=4, topk=4)
        e = peerlib.errors(S, scores)
        check(e["inf_mismatch"] == 0, f"{layer}: {e['inf_mismatch']} forced/future (+-inf) entries differ")
        check(e["rel_rms"] <= SCORE_REL, f"{layer}: pooled scores rel-RMS {e['rel_rms']:.3g} > {SCORE_REL}")
        check(np.isfinite(scores).sum() > T, f"{layer}: too few scored (non-forced) blocks to test the pooling")
        differ = stage1.selection_sets_differ(ids, blocks)
        check(differ == 0, f"{layer}: {differ} of {T * G} selection sets differ")
        sets += T * G
        # The Python reference file's K2 mask (K1's rule on both arrays) gives other scores: the rule matters.
        S_py, _ = stage1.select(q, 0, k1, k2, H, G, hd, hd ** -0.5, nb, local_blocks=4, topk=4, k2_mask="python")
        check(peerlib.errors(S_py, scores)["rel_rms"] > 1e-6, f"{layer}: the python K2 mask changed nothing")
    return sets


def table_arithmetic():
    e = peerlib.errors([3.0, 4.0, np.inf], [3.0, 4.0, np.inf])
    check(e == {"rel_rms": 0.0, "max_abs": 0.0, "inf_mismatch": 0}, f"identical arrays: {e}")
    e = peerlib.errors([3.0, 4.5, -np.inf], [3.0, 4.0, np.inf])
    check(abs(e["rel_rms"] - 0.1) < 1e-15 and e["max_abs"] == 0.5 and e["inf_mismatch"] == 1, f"known errors: {e}")
    t = peerlib.Table("t")
    t.add("gla", "a vs b", e)
    check("| gla | a vs b | 1.00e-01 | 5.00e-01 | 1 +-inf entries differ |" in t.render(), t.render())


def missing_torch():
    try:
        import torch  # noqa: F401
        return "torch installed: not checked"
    except ImportError:
        pass
    r = subprocess.run([sys.executable, os.path.join(src, "tools", "peers", "hf_whole_model.py"), "--salasim", salasim,
                        "--modeling-dir", work, "--checkpoint", work], capture_output=True, text=True)
    check(r.returncode == 2 and "needs torch" in r.stderr, f"hf_whole_model.py without torch: {r.returncode} {r.stderr}")
    r = subprocess.run([sys.executable, os.path.join(src, "tools", "peers", "ops_peers.py"), "--salasim", salasim,
                        "--ops", "gla"], capture_output=True, text=True)
    check(r.returncode == 2 and "needs torch" in r.stderr, f"ops_peers.py without torch: {r.returncode} {r.stderr}")
    return "both scripts exit 2 naming torch"


sets = selection_vs_reference()
table_arithmetic()
print(f"peers_check: OK, {sets} selection sets equal, scores within {SCORE_REL:g}; without torch: {missing_torch()}")
