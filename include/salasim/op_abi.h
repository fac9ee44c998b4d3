/* clang-format off */
/* salasim op ABI: an op implementation in a shared library, checked against salasim's float64 reference with
 * the project's tolerance table by `salasim op NAME --backend lib:PATH.so` and `salasim op --sweep --backend
 * lib:PATH.so` (docs/check-your-implementation.md).
 *
 * Generated from salasim's op registry (ops/<name>.cpp) by `salasim op --abi-header`; a test keeps this copy equal
 * to it. Plain C (C99 or C++); build a library against it, for example
 *     c++ -std=c++17 -O2 -shared -fPIC -I include my_ops.cpp -o my_ops.so
 *
 * A library defines salasim_op_abi_version(), returning the SALASIM_OP_ABI_VERSION it was built with, and one
 * function per op it implements:
 *     int salasim_op_NAME(salasim_call* call, const salasim_NAME_args* args);
 * salasim looks each up by name, so a library implements any subset of the ops (an op it lacks is skipped, with a
 * line saying so, when a sweep reaches it).
 *
 * The call:
 *   - call->device is SALASIM_DEVICE_CPU (what `salasim op` passes): every pointer is host memory and call->stream
 *     is NULL; or SALASIM_DEVICE_CUDA: every pointer is memory of the current CUDA device and call->stream is the
 *     cudaStream_t to enqueue on (salasim synchronizes it after the call returns).
 *   - Inputs are read-only. Outputs are memory of their own (never overlapping an input), filled with NaN (integer
 *     outputs: INT32_MIN) before the call, so an output left unwritten fails its check.
 *   - Return SALASIM_OP_OK with every output written, except those whose bits (SALASIM_<OP>_<OUTPUT>) the function
 *     sets in call->not_written: those are skipped (reported, not compared): an implementation without a final
 *     state or without block scores sets their bits. SALASIM_OP_UNSUPPORTED: these sizes or attributes are not
 *     supported (the case is skipped; call->message says why). SALASIM_OP_ERROR: the call failed (the case fails;
 *     call->message says why).
 *   - Calls come one at a time, from one thread.
 *
 * Tensors: `data` points at element [0, ..., 0]; shape[i] and stride[i] (in elements) for i < rank. The last
 * dimension is contiguous (stride 1); other strides may be larger than a packed tensor's (a view of a wider
 * buffer): an implementation that needs packed tensors checks and returns SALASIM_OP_UNSUPPORTED otherwise. Element
 * types are those of salasim's CUDA path: SALASIM_BF16 (the upper 16 bits of an IEEE float, round to nearest even:
 * salasim_bf16_from_float), SALASIM_F32, SALASIM_I32. Attributes are int64_t, double, or a NUL-terminated choice;
 * sizes are the symbols of the op's table (`salasim op NAME --help`), as int64_t.
 */
#ifndef SALASIM_OP_ABI_H
#define SALASIM_OP_ABI_H

#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SALASIM_OP_ABI_VERSION 1

/* element types of salasim_tensor.dtype */
#define SALASIM_BF16 1
#define SALASIM_F32 2
#define SALASIM_I32 3

/* salasim_call.device */
#define SALASIM_DEVICE_CPU 0
#define SALASIM_DEVICE_CUDA 1

/* what an op function returns */
#define SALASIM_OP_OK 0
#define SALASIM_OP_UNSUPPORTED 1
#define SALASIM_OP_ERROR 2

#define SALASIM_MAX_RANK 4
#define SALASIM_MESSAGE_BYTES 512

typedef struct salasim_tensor {
  void* data;    /* element [0, ..., 0]; NULL: an optional input that is absent */
  int32_t dtype; /* SALASIM_BF16, SALASIM_F32 or SALASIM_I32 */
  int32_t rank;
  int64_t shape[SALASIM_MAX_RANK];
  int64_t stride[SALASIM_MAX_RANK]; /* in elements; stride[rank - 1] == 1 */
} salasim_tensor;

typedef struct salasim_call {
  int32_t abi_version;                 /* SALASIM_OP_ABI_VERSION of the salasim calling */
  int32_t device;                      /* SALASIM_DEVICE_CPU or SALASIM_DEVICE_CUDA */
  void* stream;                        /* cudaStream_t under SALASIM_DEVICE_CUDA, else NULL */
  uint32_t not_written;                /* out: bits of the outputs left out (skipped, not compared) */
  char message[SALASIM_MESSAGE_BYTES]; /* out: why, with SALASIM_OP_UNSUPPORTED or SALASIM_OP_ERROR */
} salasim_call;

/* bf16 <-> float: bf16 is the upper half of an IEEE float; rounding to nearest, ties to even, NaN kept NaN. */
static inline float salasim_float_from_bf16(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}
static inline uint16_t salasim_bf16_from_float(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

int32_t salasim_op_abi_version(void);

/* embed: h = E[x] * scale, a row of the embedding per token (docs/spec.md section 2 step 1) */
typedef struct salasim_embed_args {
  struct {
    salasim_tensor E;          /* [V, D] bf16: embedding matrix */
    salasim_tensor tokens;     /* [T] i32: token ids in [0, V) */
  } in;
  struct {
    double scale;              /* in [1e-06, 1000000]: scale_emb (12 in the model) */
  } attr;
  struct {
    int64_t V, D, T;
  } size;
  struct {
    salasim_tensor out;        /* [T, D] bf16, SALASIM_EMBED_OUT: scaled embedding rows */
  } out;
} salasim_embed_args;
#define SALASIM_EMBED_OUT (1u << 0)
int salasim_op_embed(salasim_call* call, const salasim_embed_args* args);

/* linear: y = x W^T, a projection without bias (docs/spec.md section 2, section 3, section 4) */
typedef struct salasim_linear_args {
  struct {
    salasim_tensor x;          /* [T, in] bf16: input rows */
    salasim_tensor w;          /* [out, in] bf16: weight as stored (rows are outputs) */
  } in;
  struct {
    int64_t T, in, out;
  } size;
  struct {
    salasim_tensor out;        /* [T, out] bf16, SALASIM_LINEAR_OUT: x W^T (the tap kind of the MLP's down projection) */
  } out;
} salasim_linear_args;
#define SALASIM_LINEAR_OUT (1u << 0)
int salasim_op_linear(salasim_call* call, const salasim_linear_args* args);

/* rmsnorm: y = x / sqrt(mean(x^2) + eps) * w, per row (docs/spec.md section 2.1) */
typedef struct salasim_rmsnorm_args {
  struct {
    salasim_tensor x;          /* [T, n] bf16: rows to normalise */
    salasim_tensor w;          /* [n] bf16: norm weight */
  } in;
  struct {
    double eps;                /* in [1e-12, 0.1]: added to the mean of squares */
  } attr;
  struct {
    int64_t T, n;
  } size;
  struct {
    salasim_tensor out;        /* [T, n] bf16, SALASIM_RMSNORM_OUT: normalised rows */
  } out;
} salasim_rmsnorm_args;
#define SALASIM_RMSNORM_OUT (1u << 0)
int salasim_op_rmsnorm(salasim_call* call, const salasim_rmsnorm_args* args);

/* rope: rotate-half RoPE on all head dims, in place (docs/spec.md section 2.1) */
typedef struct salasim_rope_args {
  struct {
    salasim_tensor x;          /* [T, H*hd] bf16: q or k rows, H heads of hd */
  } in;
  struct {
    int64_t head_dim;          /* [2, 4096]: hd, even */
    int64_t pos0;              /* [0, 2147483648]: absolute position of the first row (queries at pos0 .. pos0+T-1) */
    double theta;              /* in (1, 1e+12]: RoPE base (rope_theta) */
    const char* angles;        /* "fp32", "exact": angle table: fp32 (the model's) or exact (float64) */
  } attr;
  struct {
    int64_t T, H, hd;
  } size;
  struct {
    salasim_tensor q;          /* [T, H*hd] bf16, SALASIM_ROPE_Q: rotated rows */
  } out;
} salasim_rope_args;
#define SALASIM_ROPE_Q (1u << 0)
int salasim_op_rope(salasim_call* call, const salasim_rope_args* args);

/* gla: simple GLA, constant per-head decay, inclusive of the current token (docs/spec.md section 3 step 6) */
typedef struct salasim_gla_args {
  struct {
    salasim_tensor q;          /* [T, H*hd] bf16: queries (after RoPE) */
    salasim_tensor k;          /* [T, H*hd] bf16: keys (after RoPE) */
    salasim_tensor v;          /* [T, H*hd] bf16: values */
    salasim_tensor gamma;      /* [H] f32: natural-log decay per head and token (< 0) */
    salasim_tensor state;      /* [H, hd, hd] f32: entering state per head, key dim x value dim (absent: zeros); optional: data NULL when absent */
  } in;
  struct {
    double tau;                /* in [1e-06, 1]: output scale (head_dim^-0.5 in the model) */
    const char* form;          /* "auto", "chunked", "recurrent": auto: recurrent below 64 rows, else chunked (the model's and HF's dispatch) */
  } attr;
  struct {
    int64_t T, H, hd;
  } size;
  struct {
    salasim_tensor out;        /* [T, H*hd] bf16, SALASIM_GLA_OUT: o before o_norm */
    salasim_tensor state;      /* [H, hd, hd] f32, SALASIM_GLA_STATE: state after the last row */
  } out;
} salasim_gla_args;
#define SALASIM_GLA_OUT (1u << 0)
#define SALASIM_GLA_STATE (1u << 1)
int salasim_op_gla(salasim_call* call, const salasim_gla_args* args);

/* compress_k: mean-pooled compressed keys K1 (kernel/stride) and K2 (4 x both) (docs/spec.md section 4.2) */
typedef struct salasim_compress_k_args {
  struct {
    salasim_tensor k;          /* [G, L, hd] bf16: raw keys of positions 0 .. L-1, per kv head */
  } in;
  struct {
    int64_t kernel;            /* [1, 65536]: K1 window (32 in the model) */
    int64_t stride;            /* [1, 65536]: K1 stride (16) */
  } attr;
  struct {
    int64_t G, L, hd, N1, N2;
  } size;
  struct {
    salasim_tensor k1;         /* [G, N1, hd] bf16, SALASIM_COMPRESS_K_K1: window c = mean of keys [stride c, stride c + kernel) */
    salasim_tensor k2;         /* [G, N2, hd] bf16, SALASIM_COMPRESS_K_K2: the same with 4 x kernel, 4 x stride */
  } out;
} salasim_compress_k_args;
#define SALASIM_COMPRESS_K_K1 (1u << 0)
#define SALASIM_COMPRESS_K_K2 (1u << 1)
int salasim_op_compress_k(salasim_call* call, const salasim_compress_k_args* args);

/* select_blocks: InfLLM-v2 stage-1 block scores, max-pool, forced blocks, top-k (docs/spec.md section 4.3-4.4) */
typedef struct salasim_select_blocks_args {
  struct {
    salasim_tensor q;          /* [T, H*hd] bf16: queries at positions pos0 .. */
    salasim_tensor k1;         /* [G, N1, hd] bf16: K1 compressed keys */
    salasim_tensor k2;         /* [G, N2, hd] bf16: K2 compressed keys */
  } in;
  struct {
    int64_t pos0;              /* [0, 2147483648]: absolute position of the first row (queries at pos0 .. pos0+T-1) */
    double tau;                /* in [1e-06, 1]: score scale (head_dim^-0.5 in the model) */
    int64_t kernel;            /* [1, 65536]: K1 window (32) (default 32) */
    int64_t stride;            /* [1, 65536]: K1 stride (16) (default 16) */
    int64_t block;             /* [1, 65536]: block size (64) (default 64) */
    int64_t init_blocks;       /* [0, 2147483647]: forced first blocks (1) (default 1) */
    int64_t local_blocks;      /* [0, 2147483647]: forced blocks before the query's own (32) (default 32) */
    int64_t k_sel;             /* [1, 4096]: blocks chosen per query and kv head (96) (default 96) */
    int64_t n_blocks;          /* [0, 2147483647]: width of the scores (0: ceil((pos0 + T) / block)) (default 0) */
  } attr;
  struct {
    int64_t T, H, hd, G, N1, N2, k_sel, NB;
  } size;
  struct {
    salasim_tensor blocks;     /* [T, G, k_sel] i32, SALASIM_SELECT_BLOCKS_BLOCKS: chosen block ids ascending, -1 in unused slots */
    salasim_tensor scores;     /* [T, G, NB] f32, SALASIM_SELECT_BLOCKS_SCORES: pooled scores: +inf forced, -inf future blocks */
  } out;
} salasim_select_blocks_args;
#define SALASIM_SELECT_BLOCKS_BLOCKS (1u << 0)
#define SALASIM_SELECT_BLOCKS_SCORES (1u << 1)
int salasim_op_select_blocks(salasim_call* call, const salasim_select_blocks_args* args);

/* sparse_attn: softmax attention over the selected blocks, causal (docs/spec.md section 4.5) */
typedef struct salasim_sparse_attn_args {
  struct {
    salasim_tensor q;          /* [T, H*hd] bf16: queries at positions pos0 .. */
    salasim_tensor k;          /* [G, L, hd] bf16: cached keys */
    salasim_tensor v;          /* [G, L, hd] bf16: cached values */
    salasim_tensor blocks;     /* [T, G, K] i32: selected block ids per query and kv head, -1 = empty slot */
  } in;
  struct {
    int64_t pos0;              /* [0, 2147483648]: absolute position of the first row (queries at pos0 .. pos0+T-1) */
    double tau;                /* in [1e-06, 1]: softmax scale (head_dim^-0.5) */
    int64_t block;             /* [1, 65536]: block size (64) (default 64) */
  } attr;
  struct {
    int64_t T, H, hd, G, L, K;
  } size;
  struct {
    salasim_tensor out;        /* [T, H*hd] bf16, SALASIM_SPARSE_ATTN_OUT: attention output */
  } out;
} salasim_sparse_attn_args;
#define SALASIM_SPARSE_ATTN_OUT (1u << 0)
int salasim_op_sparse_attn(salasim_call* call, const salasim_sparse_attn_args* args);

/* dense_attn: causal GQA softmax attention over every key j <= p (docs/spec.md section 4.1) */
typedef struct salasim_dense_attn_args {
  struct {
    salasim_tensor q;          /* [T, H*hd] bf16: queries at positions pos0 .. */
    salasim_tensor k;          /* [G, L, hd] bf16: cached keys */
    salasim_tensor v;          /* [G, L, hd] bf16: cached values */
  } in;
  struct {
    int64_t pos0;              /* [0, 2147483648]: absolute position of the first row (queries at pos0 .. pos0+T-1) */
    double tau;                /* in [1e-06, 1]: softmax scale (head_dim^-0.5) */
  } attr;
  struct {
    int64_t T, H, hd, G, L;
  } size;
  struct {
    salasim_tensor out;        /* [T, H*hd] bf16, SALASIM_DENSE_ATTN_OUT: attention output */
  } out;
} salasim_dense_attn_args;
#define SALASIM_DENSE_ATTN_OUT (1u << 0)
int salasim_op_dense_attn(salasim_call* call, const salasim_dense_attn_args* args);

/* gate: y = x * sigmoid(z), Lightning's z gate and the sparse o_gate (docs/spec.md section 3 step 8, section 4 step 3) */
typedef struct salasim_gate_args {
  struct {
    salasim_tensor x;          /* [T, n] bf16: gated rows */
    salasim_tensor z;          /* [T, n] bf16: gate, before the sigmoid */
  } in;
  struct {
    int64_t T, n;
  } size;
  struct {
    salasim_tensor out;        /* [T, n] bf16, SALASIM_GATE_OUT: x * sigmoid(z) */
  } out;
} salasim_gate_args;
#define SALASIM_GATE_OUT (1u << 0)
int salasim_op_gate(salasim_call* call, const salasim_gate_args* args);

/* mlp: act = silu(g) * u, the MLP's activation (docs/spec.md section 2.1) */
typedef struct salasim_mlp_args {
  struct {
    salasim_tensor g;          /* [T, I] bf16: gate projection */
    salasim_tensor u;          /* [T, I] bf16: up projection */
  } in;
  struct {
    int64_t T, I;
  } size;
  struct {
    salasim_tensor act;        /* [T, I] bf16, SALASIM_MLP_ACT: silu(g) * u */
  } out;
} salasim_mlp_args;
#define SALASIM_MLP_ACT (1u << 0)
int salasim_op_mlp(salasim_call* call, const salasim_mlp_args* args);

/* residual: h + scale * branch (docs/spec.md section 2 step 2) */
typedef struct salasim_residual_args {
  struct {
    salasim_tensor h;          /* [T, D] bf16: residual stream */
    salasim_tensor branch;     /* [T, D] bf16: mixer or MLP output */
  } in;
  struct {
    double scale;              /* in [1e-06, 100]: branch scale (scale_depth / sqrt(layers) in the model) */
  } attr;
  struct {
    int64_t T, D;
  } size;
  struct {
    salasim_tensor h;          /* [T, D] bf16, SALASIM_RESIDUAL_H: h + scale * branch */
  } out;
} salasim_residual_args;
#define SALASIM_RESIDUAL_H (1u << 0)
int salasim_op_residual(salasim_call* call, const salasim_residual_args* args);

/* logits: logits = W (h / divisor) (docs/spec.md section 2 step 4) */
typedef struct salasim_logits_args {
  struct {
    salasim_tensor h;          /* [T, D] bf16: final-normed rows */
    salasim_tensor w;          /* [V, D] bf16: lm_head weight */
  } in;
  struct {
    double divisor;            /* in [1, 1048576]: hidden_size / dim_model_base (16 in the model) */
  } attr;
  struct {
    int64_t T, D, V;
  } size;
  struct {
    salasim_tensor logits;     /* [T, V] bf16, SALASIM_LOGITS_LOGITS: logits */
  } out;
} salasim_logits_args;
#define SALASIM_LOGITS_LOGITS (1u << 0)
int salasim_op_logits(salasim_call* call, const salasim_logits_args* args);

#ifdef __cplusplus
}
#endif

#endif /* SALASIM_OP_ABI_H */
