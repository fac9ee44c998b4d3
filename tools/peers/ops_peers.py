#!/usr/bin/env python3
"""Feeds the same random inputs to salasim's ops and to peers no one here wrote, and prints the error table:

  gla            fla's naive_recurrent_simple_gla and chunk_simple_gla (the fla-core wheel, fp32; chunk needs CUDA)
                 against `salasim op gla` (float64 reference), output and final state;
  select_blocks  the infllmv2 definition (tools/peers/stage1.py: infllmv2's Python stage-1 reference, pooled as its
                 CUDA max_pooling_1d_varlen kernel does, HF's top-k rule) against `salasim op select_blocks`: pooled
                 scores and how many selection sets differ (numpy only: runs without torch);
  dense_attn     torch SDPA in float64 against `salasim op dense_attn`;
  sparse_attn    torch SDPA in float64, masked to the selected blocks, against `salasim op sparse_attn`;
  GPU kernels    with --lib build/bench/libsalasim_capi.so: salasim's CUDA gla_chunked and dense_attn on the same
                 (bf16) inputs against the same float64 results.

Every input is rounded to bf16 first, so the bf16 GPU kernels see exactly what the float64 paths see.

  python3 tools/peers/ops_peers.py --salasim build/salasim [--lib build/bench/libsalasim_capi.so] [--ops gla,select_blocks]
"""
import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peerlib  # noqa: E402
import stage1  # noqa: E402


def alibi_slopes(n):
    """ALiBi's get_slopes(n), from which HF builds the Lightning decays (docs/spec.md section 3)."""
    def pow2(m):
        start = 2.0 ** (-(2.0 ** -(math.log2(m) - 3)))
        return [start * start ** i for i in range(m)]
    if math.log2(n).is_integer():
        return pow2(n)
    c = 2 ** math.floor(math.log2(n))
    return pow2(c) + alibi_slopes(2 * c)[0::2][:n - c]


def bf16(np, x):
    """Rounds a float array to bf16 (round to nearest even), kept as float64."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return u.astype(np.uint32).view(np.float32).astype(np.float64)


def compress(np, k, kernel, stride):
    """Mean-pooled compressed keys of one sequence: k [G, L, hd] -> [G, n, hd] (docs/spec.md section 4.2)."""
    G, L, hd = k.shape
    n = (L - kernel) // stride + 1 if L >= kernel else 0
    return np.stack([k[:, c * stride:c * stride + kernel].mean(axis=1) for c in range(n)], axis=1) if n else np.zeros((G, 0, hd))


def block_mask(np, ids, L, block=64):
    """allowed[t, g, j]: key j lies in a block selected for row t and kv head g. ids [T, G, K] (-1 empty) -> [T, G, L]."""
    T, G = ids.shape[:2]
    allowed = np.zeros((T, G, L), dtype=bool)
    for t in range(T):
        for g in range(G):
            for b in ids[t, g][ids[t, g] >= 0]:
                allowed[t, g, b * block:(b + 1) * block] = True
    return allowed


def op_or_note(a, table, op, name, inputs, attrs, backend="reference"):
    try:
        return peerlib.run_op(a.salasim, name, inputs, attrs, backend)
    except peerlib.SalasimError as e:
        table.add_text(op, f"salasim op {name} --backend {backend}", "-", "-", f"not run: {str(e).splitlines()[0]}")
        print(e, file=sys.stderr)
        return None


def run_select(a, np, table):
    H, G, hd = a.heads, a.groups, a.head_dim
    tau, L, T = hd ** -0.5, a.select_len, a.select_rows
    rng = np.random.default_rng(a.seed)
    # Peaked scores, as in a trained model (salasim's synthetic weights use 2/sqrt(D) for the same reason).
    q = bf16(np, 2.0 * rng.standard_normal((T, H * hd)))
    k = bf16(np, 2.0 * rng.standard_normal((G, L, hd)))
    k1, k2 = compress(np, k, 32, 16), compress(np, k, 128, 64)
    pos0, nb = L - T, -(-L // 64)
    S, ids = stage1.select(q, pos0, k1, k2, H, G, hd, tau, nb)
    got = op_or_note(a, table, "select_blocks", "select_blocks", {"q": q, "k1": k1, "k2": k2},
                     {"pos0": pos0, "tau": tau, "kernel": 32, "stride": 16, "block": 64, "init_blocks": 1,
                      "local_blocks": 32, "k_sel": min(96, nb), "n_blocks": nb})
    if got is None:
        return
    sets = T * G
    diff = stage1.selection_sets_differ(ids, got["blocks"])
    table.add("select_blocks", "infllmv2 definition vs salasim reference: pooled scores", peerlib.errors(got["scores"], S),
              f"{diff} of {sets} selection sets differ; {L} tokens, rows {pos0}..{L - 1}")


def run_gla(a, np, torch, table, gpu):
    H, hd, T = a.lightning_heads, a.lightning_head_dim, a.gla_tokens
    tau = hd ** -0.5
    gamma = np.array([-float(np.float32(s)) for s in alibi_slopes(H)])  # HF's fp32 slopes, negated
    rng = np.random.default_rng(a.seed + 1)
    q, k, v = (bf16(np, rng.standard_normal((T, H * hd))) for _ in range(3))
    ref = op_or_note(a, table, "gla", "gla", {"q": q, "k": k, "v": v, "gamma": gamma, "state": np.zeros((H, hd, hd))},
                     {"tau": tau})
    if ref is None:
        return
    o64, S64 = ref["out"], ref["state"]
    from fla.ops.simple_gla import chunk_simple_gla
    from fla.ops.simple_gla.naive import naive_recurrent_simple_gla

    dev = "cuda" if torch.cuda.is_available() else "cpu"
    as_t = lambda x: torch.tensor(x, dtype=torch.float32, device=dev).view(1, T, H, hd)  # noqa: E731
    qt, kt, vt = as_t(q), as_t(k), as_t(v)
    g = torch.tensor(gamma, dtype=torch.float32, device=dev).view(1, 1, H).expand(1, T, H).contiguous()
    o, S = naive_recurrent_simple_gla(qt, kt, vt, g, scale=tau, output_final_state=True)
    out = lambda x: x.detach().double().cpu().numpy().reshape(T, H * hd)  # noqa: E731
    st = lambda x: x.detach().double().cpu().numpy().reshape(H, hd, hd)  # noqa: E731
    note = f"fp32, {T} tokens, {H} heads x {hd}"
    table.add("gla", "fla naive_recurrent_simple_gla vs salasim reference: state", peerlib.errors(st(S), S64), note)
    table.add("gla", "fla naive_recurrent_simple_gla vs salasim reference: output", peerlib.errors(out(o), o64), note)
    if dev == "cuda":
        o, S = chunk_simple_gla(qt, kt, vt, g_gamma=torch.tensor(gamma, dtype=torch.float32, device=dev), scale=tau,
                                output_final_state=True)
        table.add("gla", "fla chunk_simple_gla vs salasim reference: state", peerlib.errors(st(S), S64), note)
        table.add("gla", "fla chunk_simple_gla vs salasim reference: output", peerlib.errors(out(o), o64), note)
    else:
        table.add_text("gla", "fla chunk_simple_gla", "-", "-", "not run: Triton needs a CUDA device")
    if gpu is not None:
        lib, check = gpu
        qb, kb, vb = (torch.tensor(x, dtype=torch.float32, device="cuda").bfloat16().contiguous() for x in (q, k, v))
        gam = torch.tensor(gamma, dtype=torch.float32, device="cuda")
        Sg = torch.zeros(H, hd, hd, dtype=torch.float32, device="cuda")
        og = torch.empty(T, H * hd, dtype=torch.bfloat16, device="cuda")
        ws = torch.empty(lib.salasim_gla_workspace_bytes(T, H, hd), dtype=torch.uint8, device="cuda")
        check(lib, lib.salasim_gla_chunked(qb.data_ptr(), kb.data_ptr(), vb.data_ptr(), H * hd, T, H, hd, gam.data_ptr(),
                                           tau, Sg.data_ptr(), og.data_ptr(), H * hd, ws.data_ptr(),
                                           torch.cuda.current_stream().cuda_stream))
        torch.cuda.synchronize()
        note = f"bf16 in/out, fp32 state, {T} tokens"
        table.add("gla", "salasim CUDA gla_chunked vs salasim reference: state", peerlib.errors(st(Sg), S64), note)
        table.add("gla", "salasim CUDA gla_chunked vs salasim reference: output", peerlib.errors(out(og), o64), note)


def sdpa64(torch, q, K, V, pos0, H, G, hd, tau, allowed=None):
    """torch SDPA in float64: q [T, H*hd] at positions pos0.., K, V [G, L, hd]; allowed: [T, G, L] bool or None
    (causal). Returns [T, H*hd]."""
    T, L = q.shape[0], K.shape[1]
    qt = torch.tensor(q, dtype=torch.float64).view(T, H, hd).transpose(0, 1).unsqueeze(0)  # [1, H, T, hd]
    Kt = torch.tensor(K, dtype=torch.float64).repeat_interleave(H // G, 0).unsqueeze(0)  # [1, H, L, hd]
    Vt = torch.tensor(V, dtype=torch.float64).repeat_interleave(H // G, 0).unsqueeze(0)
    causal = torch.arange(L)[None, :] <= (pos0 + torch.arange(T))[:, None]  # [T, L]
    mask = causal[None] if allowed is None else (torch.tensor(allowed).transpose(0, 1).repeat_interleave(H // G, 0) & causal[None])
    o = torch.nn.functional.scaled_dot_product_attention(qt, Kt, Vt, attn_mask=mask.unsqueeze(0), scale=tau)
    return o[0].transpose(0, 1).reshape(T, H * hd).numpy()


def run_attn(a, np, torch, table, gpu):
    H, G, hd = a.heads, a.groups, a.head_dim
    tau, L, T = hd ** -0.5, a.select_len, a.select_rows
    rng = np.random.default_rng(a.seed + 2)
    q = bf16(np, 2.0 * rng.standard_normal((T, H * hd)))
    K = bf16(np, 2.0 * rng.standard_normal((G, L, hd)))
    V = bf16(np, rng.standard_normal((G, L, hd)))
    pos0, nb = L - T, -(-L // 64)
    attrs = {"pos0": pos0, "tau": tau}
    note = f"{L} keys, rows {pos0}..{L - 1}, GQA {H}:{G}"
    got = op_or_note(a, table, "dense_attn", "dense_attn", {"q": q, "k": K, "v": V}, attrs)
    if got is not None:
        table.add("dense_attn", "torch SDPA float64 vs salasim reference", peerlib.errors(got["out"], sdpa64(torch, q, K, V, pos0, H, G, hd, tau)), note)
    _, ids = stage1.select(q, pos0, compress(np, K, 32, 16), compress(np, K, 128, 64), H, G, hd, tau, nb)
    got = op_or_note(a, table, "sparse_attn", "sparse_attn", {"q": q, "k": K, "v": V, "blocks": ids}, {**attrs, "block": 64})
    if got is not None:
        allowed = block_mask(np, ids, L)
        table.add("sparse_attn", "torch SDPA float64 (selected blocks) vs salasim reference",
                  peerlib.errors(got["out"], sdpa64(torch, q, K, V, pos0, H, G, hd, tau, allowed)), note)
    if gpu is not None:
        lib, check = gpu
        Tg = a.gpu_attn_tokens  # the capi kernel takes a whole causal prefill from position 0
        qg = bf16(np, 2.0 * rng.standard_normal((Tg, H * hd)))
        Kg, Vg = (bf16(np, rng.standard_normal((G, Tg, hd))) for _ in range(2))
        dev = lambda x: torch.tensor(x, dtype=torch.float32, device="cuda").bfloat16().contiguous()  # noqa: E731
        qd, Kd, Vd = dev(qg), dev(Kg), dev(Vg)
        od = torch.empty(Tg, H * hd, dtype=torch.bfloat16, device="cuda")
        check(lib, lib.salasim_dense_attn(qd.data_ptr(), H * hd, Tg, Kd.data_ptr(), Vd.data_ptr(), Tg, H, G, hd, tau,
                                          od.data_ptr(), H * hd, torch.cuda.current_stream().cuda_stream))
        torch.cuda.synchronize()
        ref = sdpa64(torch, qg, Kg, Vg, 0, H, G, hd, tau)
        table.add("dense_attn", "salasim CUDA dense_attn vs torch SDPA float64", peerlib.errors(od.double().cpu().numpy(), ref),
                  f"bf16 in/out, {Tg} tokens from position 0")


def load_lib(path):
    """libsalasim_capi.so through bench/peers.py's ctypes bindings (one set of argument types for both scripts):
    (library, checked) where checked(lib, rc) raises with the library's message on a non-zero rc."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
    import peers as bench_peers  # bench/peers.py imports torch: called only where torch is present

    return bench_peers.load_lib(path), bench_peers.checked


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--salasim", required=True, help="the salasim binary (build/salasim)")
    ap.add_argument("--lib", help="build/bench/libsalasim_capi.so: add salasim's CUDA kernels to the table")
    ap.add_argument("--ops", default="gla,select_blocks,attn", help="which comparisons (gla, select_blocks, attn)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--heads", type=int, default=32, help="sparse layers' query heads")
    ap.add_argument("--groups", type=int, default=2, help="sparse layers' kv heads")
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--lightning-heads", type=int, default=32)
    ap.add_argument("--lightning-head-dim", type=int, default=128)
    ap.add_argument("--gla-tokens", type=int, default=1024)
    ap.add_argument("--select-len", type=int, default=16384, help="sequence length of the selection and attention cases")
    ap.add_argument("--select-rows", type=int, default=96, help="query rows (the last ones of the sequence)")
    ap.add_argument("--gpu-attn-tokens", type=int, default=4096, help="prefill length of the CUDA dense_attn case")
    a = ap.parse_args()
    ops = set(filter(None, a.ops.split(",")))
    bad = ops - {"gla", "select_blocks", "attn"}
    if bad:
        peerlib.fail(f"--ops {a.ops}: unknown {sorted(bad)}; expected gla, select_blocks, attn")
    h5py, np = peerlib.need("h5py", "numpy", why="salasim op takes and gives HDF5")
    torch = peerlib.need("torch", "fla", "einops", why="the GLA and attention peers")[0] if ops & {"gla", "attn"} or a.lib else None
    gpu = None
    if a.lib:
        if not torch.cuda.is_available():
            peerlib.fail("--lib needs a CUDA device for torch")
        gpu = load_lib(a.lib)
    table = peerlib.Table(f"salasim ops vs peers (seed {a.seed}; rel-RMS and max abs over finite entries, float64)")
    if "select_blocks" in ops:
        run_select(a, np, table)
    if "gla" in ops:
        run_gla(a, np, torch, table, gpu)
    if "attn" in ops:
        run_attn(a, np, torch, table, gpu)
    print(table.render())
    if torch is not None:
        import fla
        print(f"\ntorch {torch.__version__}, fla {getattr(fla, '__version__', '?')}"
              + (f", {torch.cuda.get_device_name()}" if torch.cuda.is_available() else ", CPU"))
    return 1 if any(r[2] == "-" for r in table.rows) else 0


if __name__ == "__main__":
    sys.exit(main())
