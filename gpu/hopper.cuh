// Hopper primitives for the selection's prefill kernels (select_wgmma.cu), sparse_attn's prefill ring
// (sparse_attn.cu) and the one-pass GLA (gla_wgmma.cu): warpgroup MMA (wgmma: the shared-memory descriptors of
// 128-byte-swizzled K-major and MN-major operands, the fences around an asynchronous group, m64n128k16 and m64n64k16
// with A in registers, m64n32k16 with A by descriptor, bf16 in, fp32 accumulate), the tensor copy
// engine (TMA: a 3-D tile into shared memory, completing on an mbarrier) and the mbarrier operations it needs. All of
// it is sm_90a only: built for another target each wrapper traps, and neither op picks these kernels there
// (wgmma_available, select_chunk.cuh).
//
// Layouts (PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate"); warp w of the warpgroup, g = lane / 4,
// c = lane % 4:
//   A (64 x 16, registers): warp w holds rows 16w .. 16w + 15 as mma.m16n8k16's A fragment (mma.cuh).
//   B (16 x N, shared memory, K-major: stored [n][k]): rows of 64 bf16 (128 B) in 1024-byte atoms of 8 rows, the
//     16-byte piece j of row n at piece j ^ (n % 8) (as TMA's 128-byte swizzle writes them); a 128-deep K is two such
//     regions, K 0..63 and 64..127, one after the other (N * 128 B each).
//   D (64 x N fp32): d[4j + 0..1] = (row 16w + g, cols 8j + 2c, +1), d[4j + 2..3] = (row 16w + g + 8, same cols).
#pragma once
#include <cuda.h>  // CUtensorMap (the type only: maps are encoded through the runtime's driver entry point)

#include <cstdint>

#include "gpu/mma.cuh"

namespace salasim::gpu::wg {

// The wrappers' inline PTX where the target has it (sm_90a), a trap elsewhere.
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define SALASIM_HOPPER_ASM(...) asm volatile(__VA_ARGS__)
#else
#define SALASIM_HOPPER_ASM(...) __trap()
#endif

// Descriptor of a K-major, 128-byte-swizzled operand starting at shared address `addr` (the region's 1024-aligned
// base plus 32 B per 16-element k-step): leading offset unused for this layout (1), stride 1024 B between 8-row
// groups, swizzle mode 1 (128 B) in bits 62-63.
__device__ __forceinline__ uint64_t desc_sw128(uint32_t addr) {
  uint64_t d = 0;
  d |= uint64_t((addr & 0x3FFFF) >> 4);
  d |= uint64_t(1) << 16;
  d |= uint64_t(1024 >> 4) << 32;
  d |= uint64_t(1) << 62;
  return d;
}

// Descriptor of an MN-major (stored [k][n]: n contiguous), 128-byte-swizzled operand at `addr` (1024-aligned region
// base plus 2048 B per 16-row k-step): rows of 64 n-elements (128 B) in 1024-byte atoms of 8 k-rows, SBO = 1024 B
// from one 8-row atom to the next along k, LBO = `n_stride` bytes from one 64-wide n-slice to the next.
__device__ __forceinline__ uint64_t desc_sw128_mn(uint32_t addr, uint32_t n_stride) {
  uint64_t d = 0;
  d |= uint64_t((addr & 0x3FFFF) >> 4);
  d |= uint64_t((n_stride & 0x3FFFF) >> 4) << 16;
  d |= uint64_t(1024 >> 4) << 32;
  d |= uint64_t(1) << 62;
  return d;
}

__device__ __forceinline__ void fence() { SALASIM_HOPPER_ASM("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void commit() { SALASIM_HOPPER_ASM("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wait() {
  SALASIM_HOPPER_ASM("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// The accumulators as the compiler's operands at this point: nothing that reads them moves above a wait before it,
// nor anything that writes them below an issue after it (no instruction is emitted).
template <int N>
__device__ __forceinline__ void fence_operand(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
template <int N>
__device__ __forceinline__ void fence_operand(uint32_t (&a)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+r"(a[i])::"memory");
}
// d (+)= A * B: m64n128k16, A in registers (a: this warp's 16 rows x 16 k), B by descriptor: K-major (desc_sw128), or
// MN-major with TransB (desc_sw128_mn; the instruction's transpose-B). accumulate = false overwrites d. The
// warpgroup's 128 threads must all call it, converged; d is the tensor cores' until a wait that covers its group.
template <bool TransB = false>
__device__ __forceinline__ void mma_m64n128k16(float (&d)[64], const uint32_t (&a)[4], uint64_t desc_b,
                                               bool accumulate) {
  SALASIM_HOPPER_ASM(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %68, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
      "{%64, %65, %66, %67}, %69, p, 1, 1, %70;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
        "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
        "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]),
        "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]),
        "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),
        "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(int(accumulate)), "l"(desc_b), "n"(int(TransB)));
}

// d (+)= A * B: m64n64k16, A in registers, B K-major by descriptor (as mma_m64n128k16, 64 columns: 32 accumulators).
__device__ __forceinline__ void mma_m64n64k16(float (&d)[32], const uint32_t (&a)[4], uint64_t desc_b,
                                              bool accumulate) {
  SALASIM_HOPPER_ASM(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %36, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
      "{%32, %33, %34, %35}, %37, p, 1, 1, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
        "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
        "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(int(accumulate)), "l"(desc_b));
}
// d (+)= A * B: m64n32k16, both operands K-major by descriptor (desc_sw128): A's 64 rows and B's 32 as 8-row atoms
// 1024 B apart. 16 accumulators in the D layout above (j = 0 .. 3).
__device__ __forceinline__ void mma_m64n32k16_ss(float (&d)[16], uint64_t desc_a, uint64_t desc_b, bool accumulate) {
  SALASIM_HOPPER_ASM(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, "
      "%16, %17, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
      : "l"(desc_a), "l"(desc_b), "r"(int(accumulate)));
}
// d (+)= A * B: m64n64k16, both operands by descriptor. A K-major (desc_sw128), or MN-major with TransA
// (desc_sw128_mn: A stored [k][m], the instruction's transpose-A); B K-major. 32 accumulators.
template <bool TransA = false>
__device__ __forceinline__ void mma_m64n64k16_ss(float (&d)[32], uint64_t desc_a, uint64_t desc_b, bool accumulate) {
  SALASIM_HOPPER_ASM(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
      "%32, %33, p, 1, 1, %35, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
        "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
        "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(desc_a), "l"(desc_b), "r"(int(accumulate)), "n"(int(TransA)));
}
// Barrier `id` (1 .. 15; 0 is __syncthreads') of `count` threads, a multiple of 32: one warpgroup's 128 threads, say.
__device__ __forceinline__ void bar_sync(int id, int count) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}
// ---- mbarrier and TMA (sm_90). A barrier of `count` arrivals whose phase also waits for `tx` bytes announced by
// arrive_expect_tx: the tensor copies complete_tx those bytes as they land, and their writes are visible to every
// proxy (the tensor cores included) once the phase is seen complete.
__device__ __forceinline__ void mbar_init(uint64_t* bar, int count) {
  SALASIM_HOPPER_ASM("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(mma::smem_addr(bar)), "r"(count) : "memory");
}
// The inits visible to the copy engine (before the CTA barrier that publishes them).
__device__ __forceinline__ void fence_mbar_init() {
  SALASIM_HOPPER_ASM("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
__device__ __forceinline__ void mbar_arrive_expect_tx(uint64_t* bar, uint32_t tx) {
  SALASIM_HOPPER_ASM("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(mma::smem_addr(bar)), "r"(tx)
                     : "memory");
}
__device__ __forceinline__ bool mbar_try_wait(uint64_t* bar, uint32_t parity) {
  uint32_t done = 1;
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
               : "=r"(done)
               : "r"(mma::smem_addr(bar)), "r"(parity)
               : "memory");
#else
  __trap();
#endif
  return done != 0;
}
// One arrival on bar (release: this thread's earlier shared-memory accesses happen before the phase completes).
__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
  SALASIM_HOPPER_ASM("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(mma::smem_addr(bar)) : "memory");
}
// Orders this thread's earlier generic-proxy shared-memory accesses (and those it has acquired from other threads)
// before its later async-proxy ones: a TMA copy issued next may overwrite what ldmatrix read.
__device__ __forceinline__ void fence_proxy_async_smem() {
  SALASIM_HOPPER_ASM("fence.proxy.async.shared::cta;\n" ::: "memory");
}
// Until the phase of parity `parity` has completed.
__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t parity) {
  while (!mbar_try_wait(bar, parity)) {}
}
// Box (c0, c1, c2) of the 3-D map into shared memory at dst (aligned as the map's swizzle needs: 1024 B for 128 B),
// counted against bar's expected bytes. Coordinates outside the map's extents read as zeros.
__device__ __forceinline__ void tma_load_3d(void* dst, const CUtensorMap* map, int c0, int c1, int c2, uint64_t* bar) {
  SALASIM_HOPPER_ASM(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n" ::
          "r"(mma::smem_addr(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(mma::smem_addr(bar))
      : "memory");
}
// L2 eviction policies for tma_load_3d_hint: evict_last keeps the lines ahead of others (data read again soon),
// evict_first lets them go first (a last read).
__device__ __forceinline__ uint64_t policy_evict_last() {
  uint64_t p = 0;
  SALASIM_HOPPER_ASM("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;\n" : "=l"(p));
  return p;
}
__device__ __forceinline__ uint64_t policy_evict_first() {
  uint64_t p = 0;
  SALASIM_HOPPER_ASM("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(p));
  return p;
}
// tma_load_3d with an L2 eviction policy (policy_evict_*) for the lines it reads.
__device__ __forceinline__ void tma_load_3d_hint(void* dst, const CUtensorMap* map, int c0, int c1, int c2,
                                                 uint64_t* bar, uint64_t policy) {
  SALASIM_HOPPER_ASM(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, {%2, "
      "%3, %4}], [%5], %6;\n" ::"r"(mma::smem_addr(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(mma::smem_addr(bar)), "l"(policy)
      : "memory");
}
#undef SALASIM_HOPPER_ASM
}  // namespace salasim::gpu::wg
