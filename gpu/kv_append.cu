// kv_append: a call's keys and values into the sparse layer's caches, one launch for K and V of every kv group.
// It replaces 2 G cudaMemcpy2DAsync calls per layer, whose fixed cost per call dominated a decode step's copy of
// 2 x 2 x 256 bytes (docs/performance.md, "Measured reasons behind kernel choices"); the copy itself is exact (bits
// moved, nothing computed).
#include "gpu/check.cuh"
#include "gpu/kernels.cuh"
#include "gpu/ops.hpp"

namespace salasim::gpu {

namespace {
// One thread per 16-byte piece: (row t, group j, K or V, piece) with hd / 8 pieces per row.
__global__ void kv_append_kernel(const uint16_t* __restrict__ k, const uint16_t* __restrict__ v, int64_t ld, int64_t T,
                                 int G, int hd, uint16_t* __restrict__ Kc, uint16_t* __restrict__ Vc, int64_t cap,
                                 int64_t pos0) {
  pdl_begin();  // launched with launch_pdl (pdl.cuh)
  const int per_row = hd / 8;
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= T * G * 2 * per_row) return;
  const int piece = int(i % per_row);
  const int64_t rest = i / per_row;
  const int which = int(rest % 2), j = int((rest / 2) % G);
  const int64_t t = rest / (2 * G);
  const uint16_t* src = (which ? v : k) + t * ld + int64_t(j) * hd + piece * 8;
  uint16_t* dst = (which ? Vc : Kc) + (int64_t(j) * cap + pos0 + t) * hd + piece * 8;
  *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(src);
}
}  // namespace

void kv_append(const bf16_t* k, const bf16_t* v, int64_t ld, int64_t T, int G, int hd, bf16_t* Kc, bf16_t* Vc,
               int64_t cap, int64_t pos0, Stream s) {
  const auto op = [&] { return op_desc("kv_append", {{"T", T}, {"G", G}, {"hd", hd}, {"ld", ld}, {"cap", cap}, {"pos0", pos0}}); };
  ARG_CHECK(T >= 0 && pos0 >= 0 && pos0 + T <= cap, op, "rows pos0 .. pos0 + T - 1 must lie in the cache capacity");
  ARG_CHECK(hd % 8 == 0 && ld % 8 == 0 && ld >= int64_t(G) * hd, op, "hd and ld must be multiples of 8, ld >= G hd");
  ARG_CHECK(vec8_ok(k, hd, ld) && vec8_ok(v, hd, ld) && vec8_ok(Kc, hd, hd) && vec8_ok(Vc, hd, hd), op,
            "k, v and the caches must be 16-byte aligned");
  if (T == 0) return;
  const int64_t n = T * G * 2 * (hd / 8);
  CUDA_CHECK(launch_pdl(kv_append_kernel, grid_1d(n, 256), 256, 0, s, reinterpret_cast<const uint16_t*>(k),
                        reinterpret_cast<const uint16_t*>(v), ld, T, G, hd, reinterpret_cast<uint16_t*>(Kc),
                        reinterpret_cast<uint16_t*>(Vc), cap, pos0),
             op);
}

}  // namespace salasim::gpu
