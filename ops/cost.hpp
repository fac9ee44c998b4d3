// The work of one call of each op: FLOPs, bytes moved to or from device memory, and exponentials. One formula per op,
// defined beside the op (ops/<name>.cpp): the latency model (reports/op_costs.cpp) adds them up over the layers of a
// forward call, and the GPU benchmarks (bench/op_cases.cpp) report the rates a kernel achieves against them.
// Conventions: a multiply-add is 2 FLOP; causal attention counts only unmasked scores; bytes are the floor traffic
// of a straightforward kernel (each operand read once per reuse tile, outputs written once, bf16 activations); the
// memory-bound elementwise ops are counted by their bytes and exponentials alone (their few FLOPs never bound them).
#pragma once
#include <cstdint>

namespace salasim::op {

struct Work {
  double flops = 0, bytes = 0, exps = 0;
  Work& operator+=(const Work& o) {
    flops += o.flops, bytes += o.bytes, exps += o.exps;
    return *this;
  }
};
inline Work operator*(double n, Work w) { return Work{n * w.flops, n * w.bytes, n * w.exps}; }
inline Work operator+(Work a, const Work& b) { return a += b; }

namespace cost {

// T rows of embedding gather: each writes D and reads its row of D (bf16).
Work embed(double T, double D);
// T rows through matrices of `params` weights in all (in x out each) whose row inputs and outputs add up to
// `io_elems` (in + out each), weights of `weight_bytes` read once (2 params in bf16; W4A16 dequantises in the main
// loop: the same FLOPs, fewer bytes).
Work linear(double T, double params, double io_elems, double weight_bytes);
// RMSNorm of T rows of n: read and write n (bf16).
Work rmsnorm(double T, double n);
// The per-head norm and RoPE of T rows of `width` (one of q, k), in place: read and write them.
Work rope(double T, double width);
// GLA over T new tokens of H heads of hd: chunked (C = 64: intra-chunk scores and values 4 C hd, q S and k^T v
// 4 hd^2 per token and head) or, below 64 tokens, the recurrence (4 hd^2); q, k, v read and o written (bf16) and
// the fp32 state read and written; one decay exponential per token and head.
Work gla(int64_t T, int64_t H, int64_t hd);
// The compressed keys of T new keys of kv width `kv_width` (G hd): each key read twice (K1 and K2 pooling).
Work compress_k(double T, double kv_width);
// Block selection for query positions [start, end): every head scores every visible K1 entry and every K2 entry (for
// its LSE), 2 hd FLOP and one exponential each; bytes: scores written and read back by the max-pool and pooled
// block scores written and read by top-k (bf16, per kv head), the compressed keys read once per query tile of one
// block, q read. K2 windows are 4 x the K1 window and stride (docs/spec.md §4.2).
Work select_blocks(int64_t start, int64_t end, int64_t H, int64_t G, int64_t hd, int64_t kernel, int64_t stride,
                   int64_t block);
// Attention of query positions [start, end) over the selected keys (<= k_sel x block each, sum_selected_keys):
// QK and PV, one exponential per score; K and V read once per query tile of one block (whose queries share the
// local window and most chosen blocks), q read and the output written.
Work sparse_attn(int64_t start, int64_t end, int64_t H, int64_t G, int64_t hd, int64_t block, int64_t k_sel);
// Causal attention of query positions [start, end) over every key (flash-attention style tiles of 128 queries).
Work dense_attn(int64_t start, int64_t end, int64_t H, int64_t G, int64_t hd);
// x * sigmoid(z) over T rows of n: read 2n, write n; one sigmoid each.
Work gate(double T, double n);
// silu(g) * u over T rows of I: read 2I, write I; one sigmoid each.
Work mlp(double T, double I);
// h += s * branch over T rows of D: read 2D, write D; `fused_norm`: the next RMSNorm in the same pass (the GPU's
// residual kernel): read 2D, write h and the normed row.
Work residual(double T, double D, bool fused_norm = false);
// The lm_head of `rows` rows: linear with V x D weights.
Work logits(double rows, double V, double D, double weight_bytes);

}  // namespace cost

// Exact closed-form sums over query positions p in [a, b) that the formulas use.
double sum_causal_keys(int64_t a, int64_t b);  // sum of (p + 1): keys visible to a causal query at p
// sum of the complete pooling windows (length `kernel`, step `stride`) lying in [0, p]: visible K1 / K2 entries
double sum_visible_windows(int64_t a, int64_t b, int64_t kernel, int64_t stride);
double sum_causal_blocks(int64_t a, int64_t b, int64_t block);  // sum of (p / block + 1)
// sum of the keys a sparse query attends to: all p + 1 while p / block < k_sel, else (k_sel - 1) full blocks
// plus its own partial block (docs/spec.md §4.5; at most k_sel x block = 6144)
double sum_selected_keys(int64_t a, int64_t b, int64_t block, int64_t k_sel);

}  // namespace salasim::op
