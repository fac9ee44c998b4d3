// gla: chunked (C = 64) and recurrent forms of simple GLA with a constant per-head decay, in fp32.
//
// Chunked, three launches (docs/spec.md §3.1, with g_j = gamma (j+1) inside a chunk of L tokens):
//   chunk_kv  grid (chunks, H): W_c = sum_i exp(gamma (L-1-i)) k_i^T v_i               -> workspace [c, h]
//   scan      grid (H, hd*hd/256): S_c entering each chunk; S <- exp(gamma L) S + W_c     (workspace[c] := S_c)
//   chunk_out grid (chunks, H): o_j = tau (exp(g_j) q_j S_c + sum_{i<=j} exp(gamma (j-i)) (q_j.k_i) v_i)
// Per (chunk, head) ~3M fp32 FMA on CUDA cores (1M in chunk_kv, 2M in chunk_out): ~2.5e7 FLOP/token/layer, a
// few seconds over 24 layers at 2M tokens; the state stays fp32 (no bf16 chunk states as in fla).
#include <algorithm>

#include "gpu/check.cuh"
#include "gpu/gla.hpp"
#include "gpu/kernels.cuh"
#include "model/runner_plan.hpp"

namespace salasim::gpu {

namespace {

constexpr int kHd = 128, kC = 64, kThreads = 256;

// [64][128] bf16 rows of one head of one chunk into shared fp32, rows >= L zero.
__device__ void load_rows(float* dst, const uint16_t* src, int64_t ld, int L) {
  for (int e = threadIdx.x; e < kC * kHd; e += blockDim.x) {
    const int r = e / kHd, c = e % kHd;
    dst[e] = r < L ? ld_bf16(src + int64_t(r) * ld + c) : 0.0f;
  }
}

__global__ void __launch_bounds__(kThreads) chunk_kv_kernel(const uint16_t* k, const uint16_t* v, int64_t ld, int64_t T,
                                                            const float* gamma, float* W) {
  extern __shared__ float sm[];
  float* Ks = sm;              // [64][128]
  float* Vs = sm + kC * kHd;   // [64][128], rows scaled by exp(gamma (L-1-i))
  const int64_t c = blockIdx.x;
  const int h = blockIdx.y, H = gridDim.y;
  const int64_t t0 = c * kC;
  const int L = int((T - t0 < kC ? T - t0 : kC));
  const float g = gamma[h];
  load_rows(Ks, k + t0 * ld + h * kHd, ld, L);
  load_rows(Vs, v + t0 * ld + h * kHd, ld, L);
  __syncthreads();
  for (int e = threadIdx.x; e < kC * kHd; e += blockDim.x) {
    const int i = e / kHd;
    if (i < L) Vs[e] *= expf(g * float(L - 1 - i));
  }
  __syncthreads();
  const int ty = threadIdx.x / 16, tx = threadIdx.x % 16;  // rows a = 8 ty.., cols b = 8 tx..
  float acc[8][8] = {};
  for (int i = 0; i < L; ++i) {
    float kr[8], vr[8];
#pragma unroll
    for (int r = 0; r < 8; ++r) kr[r] = Ks[i * kHd + ty * 8 + r];
#pragma unroll
    for (int q = 0; q < 8; ++q) vr[q] = Vs[i * kHd + tx * 8 + q];
#pragma unroll
    for (int r = 0; r < 8; ++r)
#pragma unroll
      for (int q = 0; q < 8; ++q) acc[r][q] += kr[r] * vr[q];
  }
  float* out = W + (c * H + h) * int64_t(kHd * kHd);
#pragma unroll
  for (int r = 0; r < 8; ++r)
#pragma unroll
    for (int q = 0; q < 8; ++q) out[(ty * 8 + r) * kHd + tx * 8 + q] = acc[r][q];
}

__global__ void scan_kernel(int64_t n_chunks, int64_t T, const float* gamma, float* S, float* W) {
  const int h = blockIdx.x, H = gridDim.x;
  const int e = blockIdx.y * blockDim.x + threadIdx.x;  // element of the [hd, hd] state
  const float g = gamma[h];
  float s = S[int64_t(h) * kHd * kHd + e];
  for (int64_t c = 0; c < n_chunks; ++c) {
    const int L = int((T - c * kC < kC ? T - c * kC : kC));
    float* w = W + (c * H + h) * int64_t(kHd * kHd) + e;
    const float wc = *w;
    *w = s;  // the state entering chunk c, for chunk_out
    s = expf(g * float(L)) * s + wc;
  }
  S[int64_t(h) * kHd * kHd + e] = s;
}

__global__ void __launch_bounds__(kThreads) chunk_out_kernel(const uint16_t* q, const uint16_t* k, const uint16_t* v,
                                                             int64_t ld, int64_t T, const float* gamma, float tau,
                                                             const float* W, uint16_t* o, int64_t ldo) {
  extern __shared__ float sm[];
  float* Qs = sm;                 // [64][128]
  float* Ks = Qs + kC * kHd;      // [64][128]
  float* Vs = Ks + kC * kHd;      // [64][128]
  float* Ss = Vs + kC * kHd;      // [128][128] state entering the chunk
  float* As = Ss + kHd * kHd;     // [64][65] decayed causal q.k (padded row)
  const int64_t c = blockIdx.x;
  const int h = blockIdx.y, H = gridDim.y;
  const int64_t t0 = c * kC;
  const int L = int((T - t0 < kC ? T - t0 : kC));
  const float g = gamma[h];
  load_rows(Qs, q + t0 * ld + h * kHd, ld, L);
  load_rows(Ks, k + t0 * ld + h * kHd, ld, L);
  load_rows(Vs, v + t0 * ld + h * kHd, ld, L);
  const float* Sc = W + (c * H + h) * int64_t(kHd * kHd);
  for (int e = threadIdx.x; e < kHd * kHd; e += blockDim.x) Ss[e] = Sc[e];
  __syncthreads();
  {  // A[j][i] = exp(gamma (j - i)) q_j . k_i for i <= j, else 0; thread: rows 4 tj.., cols 4 ti..
    const int tj = threadIdx.x / 16, ti = threadIdx.x % 16;
    float acc[4][4] = {};
    for (int d = 0; d < kHd; ++d) {
      float qa[4], kb[4];
#pragma unroll
      for (int r = 0; r < 4; ++r) qa[r] = Qs[(tj * 4 + r) * kHd + d];
#pragma unroll
      for (int r = 0; r < 4; ++r) kb[r] = Ks[(ti * 4 + r) * kHd + d];
#pragma unroll
      for (int r = 0; r < 4; ++r)
#pragma unroll
        for (int s2 = 0; s2 < 4; ++s2) acc[r][s2] += qa[r] * kb[s2];
    }
#pragma unroll
    for (int r = 0; r < 4; ++r)
#pragma unroll
      for (int s2 = 0; s2 < 4; ++s2) {
        const int j = tj * 4 + r, i = ti * 4 + s2;
        As[j * (kC + 1) + i] = i <= j ? acc[r][s2] * expf(g * float(j - i)) : 0.0f;
      }
  }
  __syncthreads();
  // O[j][b]: thread rows 8 tj.. (tj = warp), cols 4 tb..
  const int tj = threadIdx.x / 32, tb = threadIdx.x % 32;
  float inter[8][4] = {}, intra[8][4] = {};
  for (int a = 0; a < kHd; ++a) {
    float qr[8], sr[4];
#pragma unroll
    for (int r = 0; r < 8; ++r) qr[r] = Qs[(tj * 8 + r) * kHd + a];
#pragma unroll
    for (int x = 0; x < 4; ++x) sr[x] = Ss[a * kHd + tb * 4 + x];
#pragma unroll
    for (int r = 0; r < 8; ++r)
#pragma unroll
      for (int x = 0; x < 4; ++x) inter[r][x] += qr[r] * sr[x];
  }
  for (int i = 0; i < L; ++i) {
    float ar[8], vr[4];
#pragma unroll
    for (int r = 0; r < 8; ++r) ar[r] = As[(tj * 8 + r) * (kC + 1) + i];
#pragma unroll
    for (int x = 0; x < 4; ++x) vr[x] = Vs[i * kHd + tb * 4 + x];
#pragma unroll
    for (int r = 0; r < 8; ++r)
#pragma unroll
      for (int x = 0; x < 4; ++x) intra[r][x] += ar[r] * vr[x];
  }
#pragma unroll
  for (int r = 0; r < 8; ++r) {
    const int j = tj * 8 + r;
    if (j >= L) continue;
    const float dj = expf(g * float(j + 1));
#pragma unroll
    for (int x = 0; x < 4; ++x)
      st_bf16(o + (t0 + j) * ldo + h * kHd + tb * 4 + x, tau * (dj * inter[r][x] + intra[r][x]));
  }
}

// One block per head, thread b owns column b of the state in registers.
__global__ void __launch_bounds__(kHd) recurrent_kernel(const uint16_t* q, const uint16_t* k, const uint16_t* v,
                                                        int64_t ld, int64_t T, const float* gamma, float tau, float* S,
                                                        uint16_t* o, int64_t ldo) {
  __shared__ float qs[kHd], ks[kHd];
  const int h = blockIdx.x, b = threadIdx.x;
  float* Sh = S + int64_t(h) * kHd * kHd;
  float s[kHd];
#pragma unroll
  for (int a = 0; a < kHd; ++a) s[a] = Sh[a * kHd + b];
  const float lambda = expf(gamma[h]);
  for (int64_t t = 0; t < T; ++t) {
    const int64_t base = t * ld + h * kHd;
    qs[b] = ld_bf16(q + base + b);
    ks[b] = ld_bf16(k + base + b);
    const float vb = ld_bf16(v + base + b);
    __syncthreads();
    float acc = 0;
#pragma unroll
    for (int a = 0; a < kHd; ++a) {
      s[a] = lambda * s[a] + ks[a] * vb;
      acc += qs[a] * s[a];
    }
    st_bf16(o + t * ldo + h * kHd + b, tau * acc);
    __syncthreads();
  }
#pragma unroll
  for (int a = 0; a < kHd; ++a) Sh[a * kHd + b] = s[a];
}

constexpr size_t kKvSmem = 2 * kC * kHd * sizeof(float);
constexpr size_t kOutSmem = (3 * kC * kHd + kHd * kHd + kC * (kC + 1)) * sizeof(float);

}  // namespace

size_t gla_workspace_bytes(int64_t T, int H, int hd) { return gla_chunk_states_bytes(T, H, hd); }

void gla_chunked(const bf16_t* q, const bf16_t* k, const bf16_t* v, int64_t ld, int64_t T, int H, int hd,
                 const float* gamma, float tau, float* S, bf16_t* o, int64_t ldo, void* workspace, Stream s) {
  const std::string op = op_desc("gla_chunked", {{"T", T}, {"H", H}, {"hd", hd}});
  if (hd != kHd) cuda_fail(cudaErrorInvalidValue, "gla needs head_dim 128", op, __FILE__, __LINE__);
  if (T == 0) return;
  static bool attrs = false;  // raise the dynamic shared-memory limits once per process
  if (!attrs) {
    CUDA_CHECK(cudaFuncSetAttribute(chunk_kv_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kKvSmem)), op);
    CUDA_CHECK(cudaFuncSetAttribute(chunk_out_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kOutSmem)), op);
    attrs = true;
  }
  const int64_t n_chunks = (T + kC - 1) / kC;
  float* W = static_cast<float*>(workspace);
  chunk_kv_kernel<<<dim3(unsigned(n_chunks), unsigned(H)), kThreads, kKvSmem, s>>>(k, v, ld, T, gamma, W);
  CHECK_LAUNCH(op + " chunk_kv");
  scan_kernel<<<dim3(unsigned(H), unsigned(kHd * kHd / kThreads)), kThreads, 0, s>>>(n_chunks, T, gamma, S, W);
  CHECK_LAUNCH(op + " scan");
  chunk_out_kernel<<<dim3(unsigned(n_chunks), unsigned(H)), kThreads, kOutSmem, s>>>(q, k, v, ld, T, gamma, tau, W, o, ldo);
  CHECK_LAUNCH(op + " chunk_out");
}

void gla_recurrent(const bf16_t* q, const bf16_t* k, const bf16_t* v, int64_t ld, int64_t T, int H, int hd,
                   const float* gamma, float tau, float* S, bf16_t* o, int64_t ldo, Stream s) {
  const std::string op = op_desc("gla_recurrent", {{"T", T}, {"H", H}, {"hd", hd}});
  if (hd != kHd) cuda_fail(cudaErrorInvalidValue, "gla needs head_dim 128", op, __FILE__, __LINE__);
  if (T == 0) return;
  recurrent_kernel<<<unsigned(H), kHd, 0, s>>>(q, k, v, ld, T, gamma, tau, S, o, ldo);
  CHECK_LAUNCH(op);
}

}  // namespace salasim::gpu
