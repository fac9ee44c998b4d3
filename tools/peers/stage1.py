"""The infllmv2 definition of InfLLM-v2's block selection, in numpy (float64), written from how infllmv2_cuda_impl
defines it (docs/interop.md#peers says where): not its code.

Three steps, for one kv group g (its query heads h), query position p:

1. Stage-1 score of each K1 window c (infllmv2's Python reference `tests/stage1/complse_online_softmax.py`):
   a softmax over the coarse K2 keys supplies each head's normaliser, and the K1 probabilities it normalises are
   summed over the group's heads:
       LSE_h(p)  = log sum_{e in V2(p)} exp(tau q_h . K2_e)
       s_g(p, c) = sum_h exp(tau q_h . K1_c - LSE_h(p))   for c in V1(p), else 0
   The reference zeroes the NaNs of fully masked rows, so a query that sees no K2 entry gets +inf for every visible
   K1 window (exp(x - (-inf))) and 0 elsewhere.
2. Pooling to selection blocks as the CUDA `max_pooling_1d_varlen` kernel does: block b (block_size tokens) takes the
   max over the K1 windows that overlap it, c in [b*r - pad, b*r + r - 1] with r = block/stride and
   pad = kernel/stride - 1, clipped to [0, n1) of the sequence; blocks b < init_blocks and qb - local_blocks <= b <= qb
   (qb = p // block) are forced (+inf); blocks past qb are -inf.
3. HF's top-k rule (`compressed_attention` of modeling_minicpm_sala.py): K = min(topk + local_blocks, n_blocks), the K
   highest pooled scores, ids sorted ascending, ids past qb replaced by -1. Ties go to the lower block id (numpy's
   stable sort), as salasim breaks them; torch's CUDA topk leaves that order unspecified.

Visibility V1(p) / V2(p): a compressed window is visible once it lies wholly in the past (the CUDA kernel's rule,
docs/spec.md section 4.3): 16c + 31 <= p for K1 (kernel 32, stride 16), 64e + 127 <= p for K2. The Python reference
file's mask helper applies the K1 rule, right border (p - 15) // 16, to both arrays: `k2_mask="python"` reproduces
that literally (it lets a query see K2 entries not yet complete, so its LSE differs from the kernel's).

Shapes: q [T, H*hd] at positions pos0..pos0+T-1 (heads of group g are g*H/G .. (g+1)*H/G - 1), k1 [G, n1, hd],
k2 [G, n2, hd]. Everything is float64; no bf16 rounding (the peer's job, not this definition's).
"""
import numpy as np


def visible_windows(p, kernel, stride, n, rule="kernel"):
    """How many compressed windows (a prefix of the n entries) query position p sees."""
    if rule == "kernel":  # windows c with c*stride + kernel - 1 <= p
        count = (p - kernel + 1) // stride + 1 if p - kernel + 1 >= 0 else 0
    elif rule == "python":  # the reference's apply_causal_mask: entries j < (p - 15) // 16, whatever the array
        count = (p - 15) // 16
    else:
        raise ValueError(f"unknown visibility rule {rule!r} (kernel or python)")
    return int(min(max(count, 0), n))


def stage1_scores(q, pos0, k1, k2, heads, groups, hd, tau, kernel=32, stride=16, k2_mask="kernel"):
    """s[t, g, c]: the stage-1 score of every K1 window for every query row (step 1). Returns [T, G, n1] float64."""
    q = np.asarray(q, dtype=np.float64)
    T = q.shape[0]
    n1, n2 = k1.shape[1], k2.shape[1]
    per = heads // groups
    qh = q.reshape(T, heads, hd)
    out = np.zeros((T, groups, n1))
    for g in range(groups):
        a1 = tau * np.einsum("thd,cd->thc", qh[:, g * per:(g + 1) * per], k1[g])  # [T, per, n1]
        a2 = tau * np.einsum("thd,cd->thc", qh[:, g * per:(g + 1) * per], k2[g])  # [T, per, n2]
        for t in range(T):
            p = pos0 + t
            v1 = visible_windows(p, kernel, stride, n1)
            v2 = visible_windows(p, 4 * kernel, 4 * stride, n2, k2_mask)
            if v1 == 0:
                continue
            if v2 == 0:
                out[t, g, :v1] = np.inf
                continue
            row2 = a2[t, :, :v2]
            m = row2.max(axis=1, keepdims=True)
            lse = m + np.log(np.exp(row2 - m).sum(axis=1, keepdims=True))  # [per, 1]
            out[t, g, :v1] = np.exp(a1[t, :, :v1] - lse).sum(axis=0)
    return out


def pool_blocks(s, pos0, n_blocks, kernel=32, stride=16, block=64, init_blocks=1, local_blocks=32):
    """S[t, g, b]: max-pooled block scores with forced (+inf) and future (-inf) blocks (step 2). s: [T, G, n1]."""
    T, G, n1 = s.shape
    r, pad = block // stride, kernel // stride - 1
    out = np.full((T, G, n_blocks), -np.inf)
    for b in range(n_blocks):
        lo, hi = max(b * r - pad, 0), min(b * r + r - 1, n1 - 1)
        if lo <= hi:
            out[:, :, b] = s[:, :, lo:hi + 1].max(axis=2)
    for t in range(T):
        qb = (pos0 + t) // block
        out[t, :, qb + 1:] = -np.inf
        out[t, :, :min(init_blocks, qb + 1)] = np.inf
        out[t, :, max(qb - local_blocks, 0):qb + 1] = np.inf
    return out


def top_k(S, pos0, block=64, topk=64, local_blocks=32):
    """blocks[t, g, :]: HF's rule (step 3); -1 marks dropped (future) slots. S: [T, G, NB]. Returns [T, G, K] int64."""
    T, G, NB = S.shape
    K = min(topk + local_blocks, NB)
    order = np.argsort(-S, axis=2, kind="stable")[:, :, :K]
    ids = np.sort(order, axis=2).astype(np.int64)
    for t in range(T):
        ids[t][ids[t] > (pos0 + t) // block] = -1
    return ids


def select(q, pos0, k1, k2, heads, groups, hd, tau, n_blocks, kernel=32, stride=16, block=64, init_blocks=1,
           local_blocks=32, topk=64, k2_mask="kernel"):
    """The whole selection: (pooled scores [T, G, NB], block ids [T, G, K])."""
    s = stage1_scores(q, pos0, k1, k2, heads, groups, hd, tau, kernel, stride, k2_mask)
    S = pool_blocks(s, pos0, n_blocks, kernel, stride, block, init_blocks, local_blocks)
    return S, top_k(S, pos0, block, topk, local_blocks)


def selection_sets_differ(a, b):
    """How many (t, g) selection sets differ between two [T, G, K] id arrays (-1 slots ignored, order ignored)."""
    T, G = a.shape[:2]
    return sum(set(a[t, g][a[t, g] >= 0].tolist()) != set(b[t, g][b[t, g] >= 0].tolist())
               for t in range(T) for g in range(G))
