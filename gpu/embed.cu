// embed: h = bf16(E[token] * scale_emb). One block per token, threads over the hidden size.
// Checked (the default): an id outside [0, V) is an error, which costs a download and a wait for the kernel.
// Unchecked: for ids the caller has checked on the host, or that greedy_token wrote (always in range), so a decode
// step enqueues without waiting on the GPU; an id out of range still gets a zero row, never a read outside E.
#include "gpu/check.cuh"
#include "gpu/kernels.cuh"
#include "gpu/ops.hpp"

namespace salasim::gpu {

namespace {
__global__ void embed_kernel(const uint16_t* E, const int32_t* tokens, int D, int V, float scale, uint16_t* h,
                             int* bad) {
  pdl_begin();  // launched with launch_pdl (pdl.cuh)
  const int64_t t = blockIdx.x;
  const int tok = tokens[t];
  if (tok < 0 || tok >= V) {  // reported by the host after the launch; the row stays poisoned-free zero
    if (threadIdx.x == 0 && bad) atomicExch(bad, 1);
    for (int i = threadIdx.x; i < D; i += blockDim.x) st_bf16(h + t * D + i, 0.0f);
    return;
  }
  for (int i = threadIdx.x; i < D; i += blockDim.x) st_bf16(h + t * D + i, ld_bf16(E + int64_t(tok) * D + i) * scale);
}
}  // namespace

void embed(const bf16_t* E, const int32_t* tokens, int64_t T, int D, int V, float scale, bf16_t* h, Stream s,
           bool checked) {
  if (T == 0) return;
  const std::string op = op_desc("embed", {{"T", T}, {"D", D}, {"V", V}});
  if (!checked) {
    CUDA_CHECK(launch_pdl(embed_kernel, unsigned(T), 256, 0, s, E, tokens, D, V, scale, h, static_cast<int*>(nullptr)), op);
    return;
  }
  int* bad = nullptr;
  CUDA_CHECK(cudaMallocAsync(&bad, sizeof(int), s), op);
  CUDA_CHECK(cudaMemsetAsync(bad, 0, sizeof(int), s), op);
  CUDA_CHECK(launch_pdl(embed_kernel, unsigned(T), 256, 0, s, E, tokens, D, V, scale, h, bad), op);
  int flag = 0;
  CUDA_CHECK(cudaMemcpyAsync(&flag, bad, sizeof(int), cudaMemcpyDeviceToHost, s), op);
  CUDA_CHECK(cudaFreeAsync(bad, s), op);
  CUDA_CHECK(cudaStreamSynchronize(s), op);
  if (flag) cuda_fail(cudaErrorInvalidValue, "token id outside the vocabulary", op, __FILE__, __LINE__);
}

}  // namespace salasim::gpu
