// Tensor maps over the caches' row layout (gpu/tensor_map.hpp).
#include "gpu/tensor_map.hpp"

#include <algorithm>

namespace salasim::gpu {

namespace {

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                 const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                 CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

EncodeTiled encode_tiled() {
  static const EncodeTiled fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
      p = nullptr;
    return reinterpret_cast<EncodeTiled>(p);
  }();
  return fn;
}

}  // namespace

bool tensor_maps_available() { return encode_tiled() != nullptr; }

cudaError_t bf16_rows_map(CUtensorMap* map, const void* base, int64_t cap, int64_t rows, int G, int box_rows) {
  const EncodeTiled enc = encode_tiled();
  if (!enc) return cudaErrorNotSupported;
  if (box_rows < 1 || box_rows > 256 || cap < 1 || G < 1) return cudaErrorInvalidValue;
  const cuuint64_t dims[3] = {128, cuuint64_t(std::max<int64_t>(rows, 1)), cuuint64_t(G)};
  const cuuint64_t strides[2] = {128 * 2, cuuint64_t(cap) * 128 * 2};  // bytes, dims 1 and 2
  const cuuint32_t box[3] = {64, cuuint32_t(box_rows), 1}, unit[3] = {1, 1, 1};
  const CUresult r = enc(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, const_cast<void*>(base), dims, strides, box, unit,
                         CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                         CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

cudaError_t bf16_token_heads_map(CUtensorMap* map, const void* base, int64_t T, int64_t ld, int H, int box_rows) {
  const EncodeTiled enc = encode_tiled();
  if (!enc) return cudaErrorNotSupported;
  if (box_rows < 1 || box_rows > 256 || T < 1 || H < 1 || ld < int64_t(H) * 128 || ld % 8) return cudaErrorInvalidValue;
  const cuuint64_t dims[3] = {128, cuuint64_t(H), cuuint64_t(T)};
  const cuuint64_t strides[2] = {128 * 2, cuuint64_t(ld) * 2};  // bytes, dims 1 (head) and 2 (token)
  const cuuint32_t box[3] = {64, 1, cuuint32_t(box_rows)}, unit[3] = {1, 1, 1};
  const CUresult r = enc(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, const_cast<void*>(base), dims, strides, box, unit,
                         CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                         CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

}  // namespace salasim::gpu
