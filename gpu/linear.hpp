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

// Which path a single token's GEMM takes: the custom gemv below (the default: alone it beats cuBLAS on every decode
// shape, bench/RESULTS.md, and it alone can start under the kernel before it, gpu/pdl.cuh), or cuBLAS, kept to
// measure the two side by side (`salasim run --gemv cublas`, the op cases gemv.*.cublas).
enum class Gemv { custom, cublas };

// x: [T, in] (row stride ldx); W: [out, in]; y: [T, out] (row stride ldy); y = alpha * x W^T. A single token
// (T = 1, decode) takes the path `path` names (where the custom gemv supports the operands), more tokens cuBLAS.
void linear(const Blas& b, const bf16_t* x, int64_t ldx, const bf16_t* W, int64_t T, int in, int out, bf16_t* y,
            int64_t ldy, float alpha = 1.0f, Gemv path = Gemv::custom);

// ---- gemv.cu: y = alpha * W x for one token. x: [in]; W: [out, in]; y: [out].
bool gemv_supported(const bf16_t* x, const bf16_t* W, int in);
void gemv(const bf16_t* W, const bf16_t* x, int in, int out, bf16_t* y, float alpha, Stream s);
// The fused gate|up projection with mlp_act (ops.hpp) in its epilogue, for one token: W: [2I, in] (gate rows, then up
// rows); act: [I] = bf16(silu(g) * u) with g, u = bf16(alpha * W x) halves: the bits of gemv then mlp_act.
void gemv_mlp_act(const bf16_t* W, const bf16_t* x, int in, int I, bf16_t* act, float alpha, Stream s);
// The residual and the next norm fused into the GEMV that reads the norm, for one token: the CTAs resident at once
// each compute h_out = bf16(h + scale * b) and a_out = bf16(rmsnorm(h_out) * w), the bits of residual(h, b, 1, in,
// scale, w, eps, a_out) (ops.hpp), then stream their share of W: y = alpha * W a_out (act: W is gate|up [2I, in], out
// is I and y gets mlp_act, as gemv_mlp_act). Every CTA reads h while CTA 0 writes h_out, so h_out must not be h: a
// decode step alternates two residual-stream rows (runner.cpp). One launch where there were two, and the norm's
// input never leaves the SM.
struct GemvResidual {
  const bf16_t* h = nullptr;  // [in] residual stream
  const bf16_t* b = nullptr;  // [in] the branch
  float scale = 1.0f;
  const bf16_t* w = nullptr;  // [in] the norm's weight
  float eps = 0.0f;
  bf16_t* h_out = nullptr;    // [in] new residual stream (not h)
  bf16_t* a_out = nullptr;    // [in] its norm
};
constexpr int kGemvResidualMaxIn = 16384;  // the row lives in shared memory (2 bytes an element)
bool gemv_residual_supported(const GemvResidual& r, const bf16_t* W, int in);
void gemv_residual(const bf16_t* W, const GemvResidual& r, int in, int out, bf16_t* y, float alpha, bool act, Stream s);
// The gate fused into the output projection's GEMV, for one token: the CTAs resident at once each compute x =
// bf16(bf16(rmsnorm(a) * w) * sigmoid(z)) (w given: the Lightning o_norm and z gate, the bits of rmsnorm_gate) or
// x = bf16(a * sigmoid(z)) (w null: the sparse o_gate, the bits of gate), then stream their share of W: y = alpha W x.
// CTA 0 also writes x to x_out when given (it must not overlap a or z, which every CTA reads). One launch where there
// were two, and x never leaves the SM.
struct GemvGate {
  const bf16_t* a = nullptr;  // [in] the mixer's output
  const bf16_t* z = nullptr;  // [in] the gate's input
  const bf16_t* w = nullptr;  // [in] the norm's weight, or null: the gate alone
  float eps = 0.0f;
  bf16_t* x_out = nullptr;    // [in] the gated x, or null
};
constexpr int kGemvGateMaxIn = 16384;  // x lives in shared memory (2 bytes an element)
bool gemv_gate_supported(const GemvGate& g, const bf16_t* W, int in);
void gemv_gate(const bf16_t* W, const GemvGate& g, int in, int out, bf16_t* y, float alpha, Stream s);

}  // namespace salasim::gpu
