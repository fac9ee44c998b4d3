// gemv: the single-token case of linear (decode), y = alpha * W x with W [out, in] bf16 row-major, fp32 accumulate,
// bf16 out. Decode streams every weight once per token, so this is a pure bandwidth kernel: what matters is bytes in
// flight per SM from the first cycle, and how soon the last of them land. A warp takes two rows (x's loads shared by
// both) over a slice of their columns; per batch a lane issues kUnroll 16-byte loads per row (8 weights each, streamed
// past the caches: each is read once a token) and the matching 16-byte pieces of x (from L1/L2: x is at most 96 KiB
// and every warp of the SM reads it), all before the first FMA. No shared-memory staging of x: the barrier it needed
// held every weight load back until x had arrived.
// gemv_mlp_act: the gate|up projection with mlp_act in its epilogue: a warp's two rows are gate row c and up row
// I + c, so it writes act[c] = bf16(silu(g) * u) from the bf16-rounded g and u, the bits of gemv then mlp_act, one
// launch and no gu round trip fewer per layer.
// cuBLAS stays available (linear.hpp: set_gemv) so the two are measured side by side (bench/op_cases: gemv.*).
#include "gpu/check.cuh"
#include "gpu/kernels.cuh"
#include "gpu/linear.hpp"

namespace salasim::gpu {

namespace {

constexpr int kWarps = 8, kUnroll = 4, kRows = 2;
constexpr int kStep = 32 * 8;  // elements a warp covers per load

// The weights of batch `base` (kUnroll 16-byte loads per row and lane; 0 at and past `end`).
__device__ __forceinline__ void load_weights(const uint16_t* const (&w)[kRows], int base, int end,
                                             uint4 (&wv)[kRows][kUnroll]) {
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const int i = base + u * kStep;
#pragma unroll
    for (int r = 0; r < kRows; ++r) wv[r][u] = i < end ? __ldcs(reinterpret_cast<const uint4*>(w[r] + i)) : make_uint4(0, 0, 0, 0);
  }
}

// acc[r] += sum over [begin, end) of w[r][i] * x[i], the lane's share (lane * 8 + k * kStep); wv holds the first batch.
__device__ __forceinline__ void dot_rows(const uint16_t* const (&w)[kRows], const uint16_t* __restrict__ x, int begin,
                                         int end, int lane, uint4 (&wv)[kRows][kUnroll], float (&acc)[kRows]) {
  for (int base = begin + lane * 8; base < end; base += kUnroll * kStep) {
    if (base != begin + lane * 8) load_weights(w, base, end, wv);
    uint4 xv[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int i = base + u * kStep;
      xv[u] = i < end ? __ldg(reinterpret_cast<const uint4*>(x + i)) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      float xf[8];
      unpack_bf16x8(xv[u], xf);
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        float wf[8];
        unpack_bf16x8(wv[r][u], wf);
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[r] += wf[j] * xf[j];
      }
    }
  }
}

// Grid ceil(pairs / (kWarps / S)), kWarps * 32 threads: a CTA takes kWarps / S row pairs and splits each over S
// warps; warp w takes pair w / S of the CTA's and the columns [s * len, (s + 1) * len), s = w % S, len = in / S
// rounded up to 8, both rows at once; the S partial sums of a row are added in warp order after a barrier
// (deterministic). Act: W is the fused gate|up [2I, in] and "out" is I; pair c is rows c and I + c and writes
// act[c] (above); otherwise pair p is rows 2p, 2p + 1 of y.
// Why split every row: a warp streams at about 2 GB/s (its loads in flight over the memory latency), so a warp that
// owned whole rows lived for ~8 us, and the last wave's CTAs, finishing one by one, left the GPU part idle for about
// that long at the end of every GEMV: 129 GEMVs a token. A warp owning 1024 columns (4096-wide rows: one batch of
// loads) or 2048 (16384-wide) lives ~2 us, and the tail shrinks with it.
// Launched with programmatic dependent launch (pdl.cuh): the first batch of weights, which no kernel writes, is
// loaded before pdl_wait(), while the kernel that writes x (a norm, a gate, the MLP activation) still runs; x is read,
// and y written, only after it.
template <int S, bool Act>
__global__ void __launch_bounds__(kWarps * 32, 4) gemv_kernel(const uint16_t* __restrict__ W, const uint16_t* __restrict__ x,
                                                           int in, int out, float alpha, uint16_t* __restrict__ y) {
  constexpr int kPairs = kWarps / S;
  __shared__ float part[kWarps][kRows];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, sl = warp % S;
  const int64_t n_pairs = Act ? out : (out + 1) / 2;
  const int64_t p = int64_t(blockIdx.x) * kPairs + warp / S;
  const int64_t pp = std::min<int64_t>(p, n_pairs - 1);  // a pair past the last one repeats it (and is not written)
  const int len = (in / S + 7) / 8 * 8, begin = std::min(in, sl * len), end = std::min(in, begin + len);
  int64_t row[kRows];
  row[0] = Act ? pp : 2 * pp;
  row[1] = Act ? out + pp : std::min<int64_t>(2 * pp + 1, out - 1);  // a missing last row repeats one
  const uint16_t* w[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) w[r] = W + row[r] * in;
  uint4 wv[kRows][kUnroll];
  load_weights(w, begin + lane * 8, end, wv);
  pdl_wait();
  pdl_trigger();  // the small kernel after this one may now be scheduled; it waits for this one to end
  float acc[kRows] = {};
  dot_rows(w, x, begin, end, lane, wv, acc);
#pragma unroll
  for (int r = 0; r < kRows; ++r) acc[r] = warp_sum(acc[r]);
  if (lane == 0)
#pragma unroll
    for (int r = 0; r < kRows; ++r) part[warp][r] = acc[r];
  __syncthreads();
  const int t = threadIdx.x;  // Act: one thread per pair; otherwise one per row (pair t / kRows, row t % kRows)
  if (t >= kPairs * (Act ? 1 : kRows)) return;
  const int tp = Act ? t : t / kRows;
  const int64_t q = int64_t(blockIdx.x) * kPairs + tp;
  if (q >= n_pairs) return;
  float sum[kRows] = {};
#pragma unroll
  for (int r = 0; r < kRows; ++r)
#pragma unroll
    for (int s = 0; s < S; ++s) sum[r] += part[tp * S + s][r];
  if (Act) {  // mlp_act of the rounded projections, the expression of mlp.cu
    const float g = round_bf16_dev(alpha * sum[0]), u = round_bf16_dev(alpha * sum[1]);
    st_bf16(y + q, g / (1.0f + expf(-g)) * u);
  } else {
    const int64_t r = 2 * q + t % kRows;
    if (r < out) st_bf16(y + r, alpha * sum[t % kRows]);
  }
}

// Warps a row is split over: one batch of loads a warp up to 4096-wide rows, two for the 16384-wide down projection;
// set_gemv_split(false): whole rows a warp up to 8192 wide, quarter rows past it (for the side-by-side measurement).
bool split_rows = true;
int split_of(int in) { return split_rows ? (in > 8192 ? 8 : 4) : (in > 8192 ? 4 : 1); }

template <bool Act>
cudaError_t launch_gemv(const bf16_t* W, const bf16_t* x, int in, int out, bf16_t* y, float alpha, Stream s) {
  const int64_t pairs = Act ? out : (out + 1) / 2;
  const auto* w = reinterpret_cast<const uint16_t*>(W);
  const auto* xx = reinterpret_cast<const uint16_t*>(x);
  auto* yy = reinterpret_cast<uint16_t*>(y);
  // Programmatic stream serialization (pdl.cuh launch_pdl): the kernel waits before it touches x or y.
  switch (split_of(in)) {
    case 8: return launch_pdl(gemv_kernel<8, Act>, grid_1d(pairs, kWarps / 8), kWarps * 32, 0, s, w, xx, in, out, alpha, yy);
    case 4: return launch_pdl(gemv_kernel<4, Act>, grid_1d(pairs, kWarps / 4), kWarps * 32, 0, s, w, xx, in, out, alpha, yy);
    default: return launch_pdl(gemv_kernel<1, Act>, grid_1d(pairs, kWarps), kWarps * 32, 0, s, w, xx, in, out, alpha, yy);
  }
}

}  // namespace

void set_gemv_split(bool split) { split_rows = split; }
bool gemv_split() { return split_rows; }

bool gemv_supported(const bf16_t* x, const bf16_t* W, int in) {
  return in % 8 == 0 && vec8_ok(x, in, in) && vec8_ok(W, in, in);
}

void gemv(const bf16_t* W, const bf16_t* x, int in, int out, bf16_t* y, float alpha, Stream s) {
  const auto op = [&] { return op_desc("gemv", {{"in", in}, {"out", out}}); };
  ARG_CHECK(gemv_supported(x, W, in), op, "gemv needs in % 8 == 0 and 16-byte aligned x and W");
  if (out <= 0) return;
  CUDA_CHECK(launch_gemv<false>(W, x, in, out, y, alpha, s), op);
}

void gemv_mlp_act(const bf16_t* W, const bf16_t* x, int in, int I, bf16_t* act, float alpha, Stream s) {
  const auto op = [&] { return op_desc("gemv_mlp_act", {{"in", in}, {"I", I}}); };
  ARG_CHECK(gemv_supported(x, W, in), op, "gemv_mlp_act needs in % 8 == 0 and 16-byte aligned x and W");
  if (I <= 0) return;
  CUDA_CHECK(launch_gemv<true>(W, x, in, I, act, alpha, s), op);
}

}  // namespace salasim::gpu
