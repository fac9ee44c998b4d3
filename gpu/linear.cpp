// linear through cublasGemmEx. Row-major Y[T, out] = X[T, in] W^T is, column-major, Y^T = W X^T with W read
// transposed: the classic row-major trick, no copies.
#include "gpu/linear.hpp"

#include "gpu/check.cuh"

namespace salasim::gpu {

Blas::Blas(Stream s) : stream_(s), workspace_(kWorkspaceBytes, "cuBLAS workspace") {
  cublasHandle_t h = nullptr;
  CUBLAS_CHECK(cublasCreate(&h), "cublasCreate");
  handle_ = h;
  CUBLAS_CHECK(cublasSetStream(h, s), "cublasSetStream");
  CUBLAS_CHECK(cublasSetWorkspace(h, workspace_.get(), kWorkspaceBytes), "cublasSetWorkspace");
  CUBLAS_CHECK(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
}

Blas::~Blas() {
  if (handle_) cublasDestroy(static_cast<cublasHandle_t>(handle_));
}

void linear(const Blas& b, const bf16_t* x, int64_t ldx, const bf16_t* W, int64_t T, int in, int out, bf16_t* y,
            int64_t ldy, float alpha, Gemv path) {
  if (T == 0) return;
  if (T == 1 && path == Gemv::custom && gemv_supported(x, W, in)) return gemv(W, x, in, out, y, alpha, b.stream());
  const float beta = 0.0f;
  CUBLAS_CHECK(cublasGemmEx(static_cast<cublasHandle_t>(b.handle()), CUBLAS_OP_T, CUBLAS_OP_N, out, int(T), in, &alpha,
                            W, CUDA_R_16BF, in, x, CUDA_R_16BF, int(ldx), &beta, y, CUDA_R_16BF, int(ldy),
                            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
               op_desc("linear", {{"T", T}, {"in", in}, {"out", out}, {"ldx", ldx}, {"ldy", ldy}}));
}

}  // namespace salasim::gpu
