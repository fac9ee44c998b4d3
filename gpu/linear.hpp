// linear: y = x W^T through cuBLAS (bf16 in, fp32 accumulate, bf16 out), W stored [out, in] as in the checkpoint.
#pragma once
#include <memory>

#include "gpu/common.hpp"

namespace salasim::gpu {

// One cuBLAS handle bound to a stream, with its workspace.
class Blas {
 public:
  explicit Blas(Stream s);
  ~Blas();
  Blas(const Blas&) = delete;
  Blas& operator=(const Blas&) = delete;
  void* handle() const { return handle_; }
  Stream stream() const { return stream_; }
  static constexpr size_t kWorkspaceBytes = size_t(32) << 20;  // == kCublasWorkspace of model/runner_plan.hpp

 private:
  void* handle_ = nullptr;
  Stream stream_ = nullptr;
  Buffer<uint8_t> workspace_;
};

// x: [T, in] (row stride ldx); W: [out, in]; y: [T, out] (row stride ldy); y = alpha * x W^T.
void linear(const Blas& b, const bf16_t* x, int64_t ldx, const bf16_t* W, int64_t T, int in, int out, bf16_t* y,
            int64_t ldy, float alpha = 1.0f);

}  // namespace salasim::gpu
