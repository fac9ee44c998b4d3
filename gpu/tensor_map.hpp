// Tensor maps for the copy engine (TMA) over the caches' row layout [G, cap, 128] bf16 (row r of kv head g at
// base + (g cap + r) 256 B): the keys and values of sparse_attn's prefill kernel and the compressed keys of the
// selection's wgmma kernels; and over a projection's [T, ld] rows of heads (the one-pass GLA's q, k, v). Encoded
// through the runtime's driver entry point, so nothing links against libcuda.
#pragma once
#include <cuda.h>  // CUtensorMap
#include <cuda_runtime.h>

#include <cstdint>

namespace salasim::gpu {

// Whether the driver offers cuTensorMapEncodeTiled (looked up once).
bool tensor_maps_available();

// Whether this build and this device run the Hopper kernels (wgmma, the tensor copy engine): an sm_90a build on a
// compute capability 9.0 GPU whose driver encodes tensor maps (gpu/select_wgmma.cu). The selection's wgmma engine and
// sparse_attn's ring kernel run only then.
bool wgmma_available();

// The map of rows 0 .. rows - 1 of each of G heads of 128 bf16 (head stride cap rows): boxes of 64 dims x box_rows
// rows x 1 head, 128-byte swizzle (the 16-byte piece j of box row n lands at piece j ^ (n % 8) of its 128-byte line,
// in 1024-byte atoms: what a wgmma descriptor and the swizzled ldmatrix addresses of sparse_attn read). Rows at or
// past `rows` (and negative ones) read as zeros, so a box that runs past the written part of a cache brings zeros,
// never what lies beyond.
cudaError_t bf16_rows_map(CUtensorMap* map, const void* base, int64_t cap, int64_t rows, int G, int box_rows);

// The map of a projection's heads: T token rows (row stride ld elements) of H heads of 128 bf16 side by side from
// base; boxes of 64 dims x 1 head x box_rows tokens, swizzled as above, so a box is a [token][64 dims] tile; tokens
// at or past T read as zeros (the GLA's last chunk, gpu/gla_wgmma.cu). base 16-byte aligned, ld a multiple of 8.
cudaError_t bf16_token_heads_map(CUtensorMap* map, const void* base, int64_t T, int64_t ld, int H, int box_rows);

}  // namespace salasim::gpu
