#!/usr/bin/env python3
"""Peers measured beside salasim's kernels, in one process on the same inputs (docs/performance.md):

  gla:  fla's chunk_simple_gla (Triton, the fla-core wheel) against salasim's gla_chunked, B=1, H=32, head dim 128,
        bf16 q/k/v, the model's per-head decays (g_gamma), scale 128^-0.5, with the final state;
  attn: torch's scaled_dot_product_attention (causal, bf16, GQA 32:2) against salasim's dense_attn (the kernel that
        also runs sparse_attn) at the sparse layers' shapes.

Times are medians of CUDA-event timings after warm-up; outputs are compared with each other (rel-RMS) and with a
float64 recomputation (GLA: the final state at every length and the output up to 16K tokens; attention: sampled
query rows). salasim's kernels come through libsalasim_capi.so (bench/capi.cpp).

  python3 bench/peers.py --lib build/bench/libsalasim_capi.so --gla 16K,256K,1M --attn '' \
      --json reports/measured/h100/peers/gla_fla.json --revision "$(build/salasim --version | head -1)"
"""
import argparse
import ctypes
import json
import math
import statistics
import sys
import time

import torch
import torch.nn.functional as F

from qwen3_hf import revision_of  # the revision as salasim run records it (bench/, beside this script)


def parse_lengths(text):
    out = []
    for part in filter(None, text.split(",")):
        unit = {"K": 1 << 10, "M": 1 << 20}.get(part[-1].upper(), 1)
        out.append(int(part[:-1] if unit > 1 else part) * unit)
    return out


def name(n):
    return f"{n >> 20}M" if n % (1 << 20) == 0 else f"{n >> 10}K"


def median_ms(fn, warm=3, reps=10):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def rel_rms(x, ref, rows=1 << 16):
    """||x - ref|| / ||ref|| in float64, over blocks of rows (a 1M-token tensor in float64 would need 32 GiB)."""
    num = den = 0.0
    for i in range(0, x.shape[0], rows):
        a, b = x[i:i + rows].double(), ref[i:i + rows].double()
        num += (a - b).pow(2).sum().item()
        den += b.pow(2).sum().item()
    return math.sqrt(num / den)


def load_lib(path):
    lib = ctypes.CDLL(path)
    p, i64, i32, f32 = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int, ctypes.c_float
    lib.salasim_last_error.restype = ctypes.c_char_p
    lib.salasim_gla_workspace_bytes.restype = ctypes.c_size_t
    lib.salasim_gla_workspace_bytes.argtypes = [i64, i32, i32]
    lib.salasim_gla_chunked.argtypes = [p, p, p, i64, i64, i32, i32, p, f32, p, p, i64, p, p]
    lib.salasim_dense_attn.argtypes = [p, i64, i64, p, p, i64, i32, i32, i32, f32, p, i64, p]
    return lib


def checked(lib, rc):
    if rc != 0:
        raise RuntimeError(lib.salasim_last_error().decode())


def gla_state_fp64(k, v, gamma, step=1 << 16):
    """S[h] = sum_t lambda_h^(T-1-t) k_t^T v_t in float64, over blocks of tokens (k, v: [T, H, D])."""
    T, H, D = k.shape
    S = torch.zeros(H, D, D, dtype=torch.float64, device=k.device)
    lam = gamma.double().exp()
    for t0 in range(0, T, step):
        kb, vb = k[t0:t0 + step].double(), v[t0:t0 + step].double()
        L = kb.shape[0]
        w = lam[None, :] ** torch.arange(L - 1, -1, -1, device=k.device, dtype=torch.float64)[:, None]  # [L, H]
        S = S * (lam ** L)[:, None, None] + torch.einsum("th,thk,thv->hkv", w, kb, vb)
    return S


def gla_out_fp64(q, k, v, gamma, tau, block=256):
    """o_t = tau sum_{s<=t} lambda^(t-s) (q_t.k_s) v_s in float64, block by block with the carried state."""
    T, H, D = q.shape
    lam = gamma.double().exp()
    S = torch.zeros(H, D, D, dtype=torch.float64, device=q.device)
    out = torch.empty(T, H, D, dtype=torch.float64, device=q.device)
    idx = torch.arange(block, device=q.device, dtype=torch.float64)
    for t0 in range(0, T, block):
        qb, kb, vb = (x[t0:t0 + block].double() for x in (q, k, v))
        L = qb.shape[0]
        i = idx[:L]
        decay = lam[:, None, None] ** (i[None, :, None] - i[None, None, :])  # [H, t, s]
        mask = (i[:, None] >= i[None, :]).double()
        scores = torch.einsum("thd,shd->hts", qb, kb) * decay * mask
        intra = torch.einsum("hts,shv->thv", scores, vb)
        inter = torch.einsum("thk,hkv->thv", qb, S) * (lam[None, :, None] ** (i[:, None, None] + 1))
        out[t0:t0 + L] = tau * (intra + inter)
        w = lam[None, :] ** (L - 1 - i)[:, None]
        S = S * (lam ** L)[:, None, None] + torch.einsum("th,thk,thv->hkv", w, kb, vb)
    return out


def run_gla(lib, lengths, rows):
    from fla.ops.simple_gla import chunk_simple_gla

    H, D = 32, 128
    tau = D ** -0.5
    gamma = torch.tensor([-(2.0 ** (-(h + 1) / 4)) for h in range(H)], dtype=torch.float32, device="cuda")
    stream = torch.cuda.current_stream().cuda_stream
    for T in lengths:
        g = torch.Generator(device="cuda").manual_seed(T)
        q, k, v = (torch.randn(1, T, H, D, device="cuda", generator=g).bfloat16() for _ in range(3))
        o = torch.empty(T, H * D, dtype=torch.bfloat16, device="cuda")
        S = torch.zeros(H, D, D, dtype=torch.float32, device="cuda")
        ws = torch.empty(lib.salasim_gla_workspace_bytes(T, H, D), dtype=torch.uint8, device="cuda")

        def ours():
            checked(lib, lib.salasim_gla_chunked(q.data_ptr(), k.data_ptr(), v.data_ptr(), H * D, T, H, D,
                                                 gamma.data_ptr(), tau, S.data_ptr(), o.data_ptr(), H * D,
                                                 ws.data_ptr(), stream))

        def fla():
            return chunk_simple_gla(q, k, v, g_gamma=gamma, scale=tau, output_final_state=True)

        t_ours = median_ms(ours)
        S.zero_()
        ours()
        torch.cuda.synchronize()
        try:
            t_fla = median_ms(fla)
            o_fla, s_fla = fla()
            torch.cuda.synchronize()
        except torch.cuda.OutOfMemoryError as e:  # fla keeps every chunk's state: say so with the numbers, go on
            print(f"gla {name(T)}: fla out of memory ({str(e).splitlines()[0]}); allocated "
                  f"{torch.cuda.memory_allocated() / 2**30:.1f} GiB, reserved {torch.cuda.memory_reserved() / 2**30:.1f} GiB",
                  flush=True)
            row = {"op": "gla", "tokens": T, "salasim_ms": t_ours, "fla_ms": None, "fla_error": "out of memory",
                   "state_salasim_vs_fp64": rel_rms(S, gla_state_fp64(k[0], v[0], gamma))}
            rows.append(row)
            print(json.dumps(row), flush=True)
            del q, k, v, o, S, ws
            torch.cuda.empty_cache()
            continue
        s64 = gla_state_fp64(k[0], v[0], gamma)
        row = {"op": "gla", "tokens": T, "salasim_ms": t_ours, "fla_ms": t_fla, "fla_over_salasim": t_fla / t_ours,
               "out_salasim_vs_fla": rel_rms(o.view(T, H, D), o_fla[0]),
               "state_salasim_vs_fp64": rel_rms(S, s64), "state_fla_vs_fp64": rel_rms(s_fla[0], s64)}
        if T <= 16384:
            o64 = gla_out_fp64(q[0], k[0], v[0], gamma, tau)
            row["out_salasim_vs_fp64"] = rel_rms(o.view(T, H, D), o64)
            row["out_fla_vs_fp64"] = rel_rms(o_fla[0], o64)
        rows.append(row)
        print(json.dumps(row), flush=True)
        del q, k, v, o, S, ws, o_fla, s_fla
        torch.cuda.empty_cache()


def run_attn(lib, lengths, rows):
    H, G, D = 32, 2, 128
    tau = D ** -0.5
    stream = torch.cuda.current_stream().cuda_stream
    for T in lengths:
        g = torch.Generator(device="cuda").manual_seed(T + 1)
        q = torch.randn(1, H, T, D, device="cuda", generator=g).bfloat16()
        k = torch.randn(1, G, T, D, device="cuda", generator=g).bfloat16()
        v = torch.randn(1, G, T, D, device="cuda", generator=g).bfloat16()
        q_rows = q[0].transpose(0, 1).reshape(T, H * D).contiguous()
        K, V = k[0].contiguous(), v[0].contiguous()
        out = torch.empty(T, H * D, dtype=torch.bfloat16, device="cuda")

        def ours():
            checked(lib, lib.salasim_dense_attn(q_rows.data_ptr(), H * D, T, K.data_ptr(), V.data_ptr(), T, H, G, D,
                                                tau, out.data_ptr(), H * D, stream))

        def sdpa():
            return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True, scale=tau)

        t_ours, t_sdpa = median_ms(ours), median_ms(sdpa)
        ours()
        o_sdpa = sdpa()[0].transpose(0, 1).reshape(T, H * D)
        sample = torch.cat([torch.arange(0, 32), torch.arange(T // 2, T // 2 + 32), torch.arange(T - 32, T)]).cuda()
        ref = []
        for t in sample.tolist():  # float64 attention of the sampled query rows
            kk = k[0, :, :t + 1].double().repeat_interleave(H // G, 0)
            vv = v[0, :, :t + 1].double().repeat_interleave(H // G, 0)
            p = torch.softmax(torch.einsum("hd,hsd->hs", q[0, :, t].double(), kk) * tau, dim=-1)
            ref.append(torch.einsum("hs,hsd->hd", p, vv).reshape(H * D))
        ref = torch.stack(ref)
        flops = 4.0 * H * D * T * (T + 1) / 2
        row = {"op": "attn", "tokens": T, "salasim_ms": t_ours, "sdpa_ms": t_sdpa, "sdpa_over_salasim": t_sdpa / t_ours,
               "salasim_tflops": flops / t_ours * 1e-9, "sdpa_tflops": flops / t_sdpa * 1e-9,
               "out_salasim_vs_sdpa": rel_rms(out, o_sdpa),
               "rows_salasim_vs_fp64": rel_rms(out[sample], ref), "rows_sdpa_vs_fp64": rel_rms(o_sdpa[sample], ref)}
        rows.append(row)
        print(json.dumps(row), flush=True)
        del q, k, v, q_rows, K, V, out, o_sdpa
        torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lib", required=True, help="build/bench/libsalasim_capi.so")
    ap.add_argument("--gla", default="16K,256K,1M", help="token counts for the GLA comparison ('' to skip)")
    ap.add_argument("--attn", default="16K,64K", help="token counts for the attention comparison ('' to skip)")
    ap.add_argument("--json", help="write the rows here (a record of reports/measured/<card>/peers/)")
    ap.add_argument("--revision", default="", help="the revision of the library's build (salasim --version)")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        print("peers.py: no CUDA device for torch", file=sys.stderr)
        return 77
    lib = load_lib(a.lib)
    rows = []
    if a.gla:
        run_gla(lib, parse_lengths(a.gla), rows)
    if a.attn:
        run_attn(lib, parse_lengths(a.attn), rows)
    meta = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "date": time.strftime("%Y-%m-%d"),
            "revision": revision_of(a.revision), "command": " ".join(["python3"] + sys.argv)}
    try:
        import fla
        meta["fla"] = getattr(fla, "__version__", "?")
    except ImportError:
        pass
    print("\n| op | tokens | salasim ms | peer ms | peer / salasim | salasim vs peer (rel-RMS) | salasim vs fp64 | peer vs fp64 |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        if r["op"] == "gla":
            print(f"| gla vs fla chunk_simple_gla | {name(r['tokens'])} | {r['salasim_ms']:.2f} | {r['fla_ms']:.2f} | "
                  f"{r['fla_over_salasim']:.2f} | {r['out_salasim_vs_fla']:.2e} | state {r['state_salasim_vs_fp64']:.2e} | "
                  f"state {r['state_fla_vs_fp64']:.2e} |")
        else:
            print(f"| dense_attn vs SDPA | {name(r['tokens'])} | {r['salasim_ms']:.2f} | {r['sdpa_ms']:.2f} | "
                  f"{r['sdpa_over_salasim']:.2f} | {r['out_salasim_vs_sdpa']:.2e} | {r['rows_salasim_vs_fp64']:.2e} | "
                  f"{r['rows_sdpa_vs_fp64']:.2e} |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
