#!/usr/bin/env python3
"""CPU checks of tools/peers (docs/interop.md#peers) that need no torch: the infllmv2 stage-1 definition in numpy
(tools/peers/stage1.py) selects exactly what salasim's float64 reference selects; peerlib.OPS names what `salasim op
NAME --help` names, and peerlib.run_op drives the real `salasim op` for gla, select_blocks, dense_attn and sparse_attn
(results checked against numpy definitions written here, so a rename in op breaks this test); the error table's
arithmetic; a clear exit when torch is missing.

Usage: peers_check.py SALASIM SOURCE_DIR WORK_DIR"""
import argparse
import json
import math
import os
import subprocess
import sys

import numpy as np

salasim, src, work = sys.argv[1:4]
sys.path.insert(0, os.path.join(src, "tools", "peers"))
import ops_peers  # noqa: E402  (imports torch only in main)
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


def help_table():
    """{op: (inputs, attributes, output taps)} as `salasim op --help` lists them (the op registry, ops/<name>.cpp;
    one call for every op: each salasim start costs a few tenths of a second on a busy machine)."""
    r = subprocess.run([salasim, "op", "--help"], capture_output=True, text=True)
    check(r.returncode == 0, f"salasim op --help exited {r.returncode}: {r.stderr}")
    table, op, section = {}, None, None
    for line in r.stdout.splitlines():
        head = line.split(": ")[0]
        if line[:1].strip() and head.isidentifier() and head.islower():  # "gla: simple GLA, ..." opens an op's part
            op, section = head, None
            table[op] = {"inputs": [], "attributes": [], "outputs": []}
        elif op and line.startswith("  ") and line[2:3] != " " and line.split()[0] in table[op]:
            section = line.split()[0]
        elif op and section and line.startswith("    "):
            table[op][section].append(line.split()[0])
        else:
            section = None
    return {op: (t["inputs"], t["attributes"], t["outputs"]) for op, t in table.items()}


def ops_table_vs_help():
    """Every op in peerlib.OPS takes exactly the datasets and attributes op lists and reads the taps op writes: op
    ignores names it does not know, so a guessed or stale name would otherwise be dropped without a word."""
    listed = help_table()
    for op, (inputs, attrs, outs) in peerlib.OPS.items():
        check(op in listed, f"peerlib.OPS has {op!r}; salasim op --help lists {sorted(listed)}")
        h_in, h_attrs, h_outs = listed[op]
        check(h_in and h_outs, f"salasim op --help: no inputs or outputs parsed for {op}")
        check(inputs == h_in, f"peerlib.OPS[{op!r}] inputs {inputs}; salasim op {op} --help lists {h_in}")
        check(attrs == h_attrs, f"peerlib.OPS[{op!r}] attributes {attrs}; salasim op {op} --help lists {h_attrs}")
        check(sorted(outs.values()) == sorted(h_outs), f"peerlib.OPS[{op!r}] outputs {outs}; salasim op {op} --help lists {h_outs}")
    check(len(listed) >= 11 and listed["rmsnorm"] == (["x", "w"], ["eps"], ["/op/input_norm/out"]),
          f"salasim op --help parsed as {listed}")


def attention64(q, k, v, pos0, heads, tau, allowed=None):
    """Causal GQA softmax attention in float64: q [T, H*hd] at positions pos0.., k, v [G, L, hd]; allowed [T, G, L]
    bool or None (every key j <= p). Returns [T, H*hd]."""
    T, (G, L, hd) = q.shape[0], k.shape
    out = np.zeros((T, heads * hd))
    for t in range(T):
        for h in range(heads):
            g = h // (heads // G)
            ok = np.arange(L) <= pos0 + t
            if allowed is not None:
                ok &= allowed[t, g]
            a = tau * k[g, ok] @ q[t, h * hd:(h + 1) * hd]
            w = np.exp(a - a.max())
            out[t, h * hd:(h + 1) * hd] = (w / w.sum()) @ v[g, ok]
    return out


# Both sides float64, different summation orders (chunked GLA, blocked softmax): a few ulps per step.
OP_REL = 1e-12


def run_op_vs_numpy():
    """peerlib.run_op on the real binary, --backend reference, small random inputs."""
    rng = np.random.default_rng(11)
    # gla: 70 rows (op's auto form takes the chunked path from 64 rows) from a random entering state.
    T, H, hd = 70, 2, 8
    q, k, v = (rng.standard_normal((T, H * hd)) for _ in range(3))
    gamma, S0, tau = np.array([-0.05, -0.7]), rng.standard_normal((H, hd, hd)), hd ** -0.5
    got = peerlib.run_op(salasim, "gla", {"q": q, "k": k, "v": v, "gamma": gamma, "state": S0}, {"tau": tau}, workdir=work)
    o, S = np.zeros((T, H * hd)), S0.copy()
    for t in range(T):  # S_t = exp(gamma) S_{t-1} + k_t^T v_t, o_t = tau q_t S_t (docs/spec.md section 3 step 6)
        for h in range(H):
            c = slice(h * hd, (h + 1) * hd)
            S[h] = np.exp(gamma[h]) * S[h] + np.outer(k[t, c], v[t, c])
            o[t, c] = tau * q[t, c] @ S[h]
    for key, want in (("out", o), ("state", S)):
        e = peerlib.errors(got[key], want)["rel_rms"]
        check(e <= OP_REL, f"run_op gla {key}: rel-RMS {e:.3g} vs the numpy recurrence > {OP_REL}")

    # select_blocks through ops_peers.run_select (its real call), then with a 2-block window so blocks are chosen.
    a = argparse.Namespace(heads=4, groups=2, head_dim=16, select_len=6400, select_rows=6, seed=3, salasim=salasim)
    table = peerlib.Table("t")
    ops_peers.run_select(a, np, table)
    row = table.rows[0]
    check(len(table.rows) == 1 and row[2] != "-" and float(row[2]) <= OP_REL and row[4].startswith("0 of 12 "),
          f"ops_peers.run_select: {table.render()}")
    H, G, hd, L, T = 4, 2, 16, 700, 5
    pos0, nb, tau = L - T, -(-L // 64), hd ** -0.5
    q, k, v = 2.0 * rng.standard_normal((T, H * hd)), 2.0 * rng.standard_normal((G, L, hd)), rng.standard_normal((G, L, hd))
    k1, k2 = ops_peers.compress(np, k, 32, 16), ops_peers.compress(np, k, 128, 64)
    S, ids = stage1.select(q, pos0, k1, k2, H, G, hd, tau, nb, local_blocks=2, topk=3)
    got = peerlib.run_op(salasim, "select_blocks", {"q": q, "k1": k1, "k2": k2},
                         {"pos0": pos0, "tau": tau, "local_blocks": 2, "k_sel": 5, "n_blocks": nb}, workdir=work)
    e = peerlib.errors(got["scores"], S)
    check(e["inf_mismatch"] == 0 and e["rel_rms"] <= OP_REL, f"run_op select_blocks scores vs stage1.py: {e}")
    check(got["blocks"].shape == (T, G, 5) and got["blocks"].dtype.kind == "i", f"blocks {got['blocks'].shape} {got['blocks'].dtype}")
    differ = stage1.selection_sets_differ(ids, got["blocks"])
    check(differ == 0, f"run_op select_blocks: {differ} of {T * G} selection sets differ from stage1.py")

    # dense_attn and sparse_attn on the same keys, sparse over the blocks just selected.
    got = peerlib.run_op(salasim, "dense_attn", {"q": q, "k": k, "v": v}, {"pos0": pos0, "tau": tau}, workdir=work)
    e = peerlib.errors(got["out"], attention64(q, k, v, pos0, H, tau))["rel_rms"]
    check(e <= OP_REL, f"run_op dense_attn: rel-RMS {e:.3g} vs numpy softmax > {OP_REL}")
    got = peerlib.run_op(salasim, "sparse_attn", {"q": q, "k": k, "v": v, "blocks": ids}, {"pos0": pos0, "tau": tau, "block": 64},
                         workdir=work)
    allowed = ops_peers.block_mask(np, ids, L)
    check(allowed.sum() < T * G * L / 2, "sparse_attn case selects most keys: not a sparse check")
    e = peerlib.errors(got["out"], attention64(q, k, v, pos0, H, tau, allowed))["rel_rms"]
    check(e <= OP_REL, f"run_op sparse_attn: rel-RMS {e:.3g} vs numpy masked softmax > {OP_REL}")
    # run_op refuses a name OPS does not list (op itself would ignore it).
    try:
        peerlib.run_op(salasim, "gla", {"q": q, "S": S0}, {"tau": tau})
        check(False, "run_op accepted dataset S")
    except ValueError as e:
        check("'S'" in str(e), str(e))
    return len(peerlib.OPS)


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
ops_table_vs_help()
n_ops = run_op_vs_numpy()
table_arithmetic()
print(f"peers_check: OK, {sets} selection sets equal, scores within {SCORE_REL:g}; run_op agrees with salasim op "
      f"--help and with numpy for {n_ops} ops; without torch: {missing_torch()}")
