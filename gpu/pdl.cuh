// Programmatic dependent launch for every .cu file: the launch helper and the two device-side controls.
#pragma once
#include <cuda_runtime.h>

#include <utility>

#include "gpu/common.hpp"

namespace salasim::gpu {

// Programmatic dependent launch (sm_90; no-ops elsewhere and in kernels launched the ordinary way). A kernel launched
// with launch_pdl (programmatic stream serialization) may be scheduled while the kernel before it on the stream still
// runs: it must call pdl_wait() before it reads anything the kernel before it wrote or writes anything an earlier one
// reads. What no kernel writes (weights, gemv.cu) it may read before, and so what a kernel two or more launches back
// wrote: that kernel had finished when the one before this passed its own pdl_wait, which it does before the
// pdl_trigger that let this one start (score_pool's queries and K1, split_kernel's queries). That holds because every
// kernel here either is launched with launch_pdl and waits before it triggers, or is an ordinary launch (then the
// next starts only after it ends); a kernel that triggered before waiting would break it. pdl_trigger() is what
// lets the next kernel be scheduled early. A decode step is a long chain of kernels, each too short to hide its own
// launch and ramp (docs/performance.md, "Measured reasons behind kernel choices"), so those would otherwise sit
// between them on the GPU: every kernel of the decode path is launched with launch_pdl and begins `pdl_wait();
// pdl_trigger();` (pdl_begin; split_kernel and score_pool after their early reads, gemv after its first weights), so
// the next kernel's CTAs are resident and waiting by the time this one ends, and at most one kernel waits ahead (it
// triggers only once its own predecessor has finished).
__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void pdl_trigger() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
// Both, at the top of a kernel launched with launch_pdl: before them, only the reads allowed above.
__device__ __forceinline__ void pdl_begin() {
  pdl_wait();
  pdl_trigger();
}

// kernel<<<grid, block, smem, s>>>(args...) with programmatic stream serialization allowed (see above) where the
// stream asks for it (Stream::pdl).
template <class... P, class... A>
cudaError_t launch_pdl(void (*kernel)(P...), dim3 grid, dim3 block, size_t smem, Stream s, A&&... args) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = s.handle;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = s.pdl ? 1 : 0;  // off: an ordinary launch
  return cudaLaunchKernelEx(&cfg, kernel, std::forward<A>(args)...);
}

}  // namespace salasim::gpu
