"""select_blocks in numpy, from docs/spec.md sections 4.3-4.4: InfLLM-v2's block scores, max-pooled to blocks,
forced blocks and top-k, for `salasim op select_blocks --backend py:examples/op/select_blocks.py:select_blocks`
(docs/check-your-implementation.md).

select_blocks is correct. select_blocks_short_window has a bug: its forced local window holds local_blocks blocks
before the query's own instead of local_blocks + 1 (the spec's test includes both ends)."""
import numpy as np


def windows(length, kernel, stride):
    """Complete compressed windows of `length` keys."""
    return 0 if length < kernel else (length - kernel) // stride + 1


def select(q, k1, k2, pos0, tau, kernel, stride, block, init_blocks, local_blocks, k_sel, n_blocks, local_first):
    T, G, hd = q.shape[0], k1.shape[0], k1.shape[2]
    H = q.shape[1] // hd
    per_group = H // G
    NB = n_blocks or -(-(pos0 + T) // block)
    q, k1, k2 = (a.astype(np.float64) for a in (q, k1, k2))
    blocks = np.full((T, G, k_sel), -1, dtype=np.int64)
    scores = np.full((T, G, NB), -np.inf)
    for t in range(T):
        p = pos0 + t
        n1, n2 = windows(p + 1, kernel, stride), windows(p + 1, 4 * kernel, 4 * stride)
        qb = p // block
        for g in range(G):
            s = np.zeros(n1) if n2 else np.full(n1, np.inf)  # no K2 window yet: +inf (every block is forced then)
            heads = range(g * per_group, (g + 1) * per_group) if n2 else range(0)
            for h in heads:
                qh = q[t, h * hd:(h + 1) * hd]
                l2 = tau * (k2[g, :n2] @ qh)
                lse = l2.max() + np.log(np.exp(l2 - l2.max()).sum())
                s += np.exp(tau * (k1[g, :n1] @ qh) - lse)
            forced, candidates = [], []
            for b in range(qb + 1):
                if b < init_blocks or qb - local_first <= b <= qb:
                    scores[t, g, b] = np.inf
                    forced.append(b)
                    continue
                lo = max(0, (block * b - kernel) // stride + 1)
                hi = min(n1 - 1, (block * b + block - 1) // stride)
                scores[t, g, b] = max(0.0, s[lo:hi + 1].max()) if hi >= lo else 0.0
                candidates.append((-scores[t, g, b], b))  # highest score first, ties to the lower block
            chosen = forced + [b for _, b in sorted(candidates)[:max(0, k_sel - len(forced))]]
            ids = sorted(chosen)[:k_sel]
            blocks[t, g, :len(ids)] = ids
    return {"blocks": blocks, "scores": scores}


def select_blocks(q, k1, k2, pos0, tau, kernel, stride, block, init_blocks, local_blocks, k_sel, n_blocks):
    return select(q, k1, k2, pos0, tau, kernel, stride, block, init_blocks, local_blocks, k_sel, n_blocks,
                  local_first=local_blocks)


def select_blocks_short_window(q, k1, k2, pos0, tau, kernel, stride, block, init_blocks, local_blocks, k_sel,
                               n_blocks):
    return select(q, k1, k2, pos0, tau, kernel, stride, block, init_blocks, local_blocks, k_sel, n_blocks,
                  local_first=local_blocks - 1)
