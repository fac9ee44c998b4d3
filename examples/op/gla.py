"""gla in numpy, from docs/spec.md section 3 step 6: the chunked form of simple gated linear attention, for
`salasim op gla --backend py:examples/op/gla.py:gla` (docs/check-your-implementation.md).

gla is correct. gla_decay_off_by_one has a bug a real kernel had: in each 64-row chunk the carried state decays by
e^(gamma j) at row j instead of e^(gamma (j+1)); the two differ in that one exponent."""
import numpy as np

CHUNK = 64


def chunked(q, k, v, gamma, tau, state, first):
    """o_j = tau [e^(gamma (j + first)) q_j S_c + sum_(i <= j) e^(gamma (j - i)) (q_j . k_i) v_i] per chunk, S_c the
    state the chunk starts from; first = 1 is the model's."""
    T, H = q.shape[0], gamma.shape[0]
    hd = q.shape[1] // H
    q, k, v = (a.astype(np.float64).reshape(T, H, hd) for a in (q, k, v))  # [T, H, hd]
    g = gamma.astype(np.float64)  # [H]
    S = np.zeros((H, hd, hd)) if state is None else state.astype(np.float64).copy()  # [H, hd (key), hd (value)]
    out = np.empty((T, H, hd))
    for c0 in range(0, T, CHUNK):
        n = min(CHUNK, T - c0)
        Q, K, V = q[c0:c0 + n], k[c0:c0 + n], v[c0:c0 + n]
        j = np.arange(n)
        diff = j[:, None] - j[None, :]  # [n, n]: j - i
        decay = np.where(diff >= 0, np.exp(g[:, None, None] * np.maximum(diff, 0)), 0.0)  # [H, n, n]
        scores = np.einsum("jhd,ihd->hji", Q, K) * decay
        intra = np.einsum("hji,ihd->jhd", scores, V)
        carried = np.exp(g[None, :, None] * (j[:, None, None] + first)) * np.einsum("jhd,hde->jhe", Q, S)
        out[c0:c0 + n] = tau * (carried + intra)
        S = np.exp(g * n)[:, None, None] * S + np.einsum("ihd,ihe,hi->hde", K, V, np.exp(g[:, None] * (n - 1 - j)))
    return {"out": out.reshape(T, H * hd), "state": S}


def gla(q, k, v, gamma, tau, form="auto", state=None):
    return chunked(q, k, v, gamma, tau, state, first=1)


def gla_decay_off_by_one(q, k, v, gamma, tau, form="auto", state=None):
    return chunked(q, k, v, gamma, tau, state, first=0)
