// Tensor-core and async-copy primitives shared by the gla, sparse_attn and select_blocks kernels: mma.sync
// m16n8k16 (bf16 in, fp32 accumulate), ldmatrix fragment loads, cp.async 16-byte copies with zero fill, and the
// hi/lo splits that let an fp32 operand pass through bf16 tensor cores without losing its precision.
//
// Fragment layouts of mma.m16n8k16 (PTX ISA), g = lane / 4, c = lane % 4:
//   A (16 x 16, row-major):  a[0] = (g, 2c..2c+1)  a[1] = (g+8, 2c..)  a[2] = (g, 2c+8..)  a[3] = (g+8, 2c+8..)
//   B (16 x 8,  k x n):      b[0] = (k 2c..2c+1, n g)  b[1] = (k 2c+8.., n g)
//   C (16 x 8):              c[0..1] = (g, 2c..2c+1)  c[2..3] = (g+8, 2c..2c+1)
// So the C tiles of n-tiles 2s and 2s+1 are, element for element, the A fragment of k-step s (k = their columns):
// an accumulator becomes the next product's A operand without leaving registers.
#pragma once
#include <cuda_bf16.h>

#include <cstdint>

namespace salasim::gpu::mma {

// d += a * b, one m16n8k16 tile.
__device__ __forceinline__ void mma16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ uint32_t smem_addr(const void* p) { return uint32_t(__cvta_generic_to_shared(p)); }

// Four 8x8 b16 matrices; lane l gives the address of row l % 8 of matrix l / 8. Register j of lane l holds
// (row l/4, cols 2(l%4), 2(l%4)+1) of matrix j; with .trans, of matrix j transposed.
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}

// Lane addresses for the common cases (tile origin `base`, row stride `ld` elements, lane l):
// A fragment of a 16 x 16 tile stored row-major [m][k]:                   row (l%8) + 8((l/8)%2), col 8(l/16)
__device__ __forceinline__ const __nv_bfloat16* frag_a_addr(const __nv_bfloat16* base, int ld, int lane) {
  return base + ((lane & 7) + 8 * ((lane >> 3) & 1)) * ld + 8 * (lane >> 4);
}
// B fragments of two n-tiles (16 n x 16 k) stored [n][k] (k contiguous), non-transposed load:
// regs {0,1} = n-tile 0, {2,3} = n-tile 1.                               row (n) (l%8) + 8(l/16), col (k) 8((l/8)%2)
__device__ __forceinline__ const __nv_bfloat16* frag_b_nk_addr(const __nv_bfloat16* base, int ld, int lane) {
  return base + ((lane & 7) + 8 * (lane >> 4)) * ld + 8 * ((lane >> 3) & 1);
}
// B fragments of two n-tiles stored [k][n] (n contiguous), transposed load:
// regs {0,1} = n-tile 0, {2,3} = n-tile 1.                               row (k) (l%8) + 8((l/8)%2), col (n) 8(l/16)
__device__ __forceinline__ const __nv_bfloat16* frag_b_kn_addr(const __nv_bfloat16* base, int ld, int lane) {
  return base + ((lane & 7) + 8 * ((lane >> 3) & 1)) * ld + 8 * (lane >> 4);
}
// A fragment of a 16 x 16 tile stored transposed [k][m] (m contiguous), transposed load:
//                                                                        row (k) (l%8) + 8(l/16), col (m) 8((l/8)%2)
__device__ __forceinline__ const __nv_bfloat16* frag_a_km_addr(const __nv_bfloat16* base, int ld, int lane) {
  return base + ((lane & 7) + 8 * (lane >> 4)) * ld + 8 * ((lane >> 3) & 1);
}

// Two floats as a bf16x2 register (lo in the low half), rounded to nearest.
__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&v);
}
__device__ __forceinline__ float2 unpack_bf16(uint32_t r) {
  __nv_bfloat162 v = *reinterpret_cast<__nv_bfloat162*>(&r);
  return __bfloat1622float2(v);
}
// x = hi + lo (+ rest): hi = bf16(x), lo = bf16(x - hi). Two bf16 terms keep ~16 significant bits, three ~24.
__device__ __forceinline__ void split2(float x0, float x1, uint32_t& hi, uint32_t& lo) {
  hi = pack_bf16(x0, x1);
  const float2 h = unpack_bf16(hi);
  lo = pack_bf16(x0 - h.x, x1 - h.y);
}
__device__ __forceinline__ void split3(float x0, float x1, uint32_t& hi, uint32_t& mid, uint32_t& lo) {
  hi = pack_bf16(x0, x1);
  const float2 h = unpack_bf16(hi);
  const float r0 = x0 - h.x, r1 = x1 - h.y;
  mid = pack_bf16(r0, r1);
  const float2 m = unpack_bf16(mid);
  lo = pack_bf16(r0 - m.x, r1 - m.y);
}

// 2^x in one MUFU.EX2 (exp2f adds a denormal fix-up around it): results below 2^-126 flush to 0, which no sum it
// feeds can notice (the selection's head sums are ~1/n2 and the LSE terms are relative to their max, 1).
__device__ __forceinline__ float exp2_ftz(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// 16-byte global -> shared copy; src_bytes = 0 zero-fills the destination (src must still be a valid address).
__device__ __forceinline__ void cp_async16(void* dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

}  // namespace salasim::gpu::mma
