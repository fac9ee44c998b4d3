// Every CUDA and cuBLAS call is checked; a failure throws salasim::DeviceError (model/error.hpp: exit code 3)
// naming the op and its shapes.
// This header is included by .cu files, which must not include fmt (nvcc cannot compile its consteval checks):
// describe ops with op_desc(), whose formatting lives in check.cpp.
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>

namespace salasim::gpu {

[[noreturn]] void cuda_fail(cudaError_t e, const char* call, const std::string& op, const char* file, int line);
[[noreturn]] void cublas_fail(cublasStatus_t s, const char* call, const std::string& op, const char* file, int line);
// "rmsnorm(T=9000, n=4096)"
std::string op_desc(const char* op, std::initializer_list<std::pair<const char*, int64_t>> dims);
// The op named in a failure message: a string, or a callable that builds it. Hot paths (decode launches hundreds
// of ops a token) pass a lambda, so the description is formatted only when something fails.
inline const std::string& op_text(const std::string& s) { return s; }
inline std::string op_text(const char* s) { return s; }
template <class F>
std::string op_text(const F& f) {
  return f();
}

}  // namespace salasim::gpu

// CUDA_CHECK(call, op): op is a std::string or literal naming the operation and shapes for the message.
#define CUDA_CHECK(call, op)                                                                \
  do {                                                                                      \
    cudaError_t e_ = (call);                                                                \
    if (e_ != cudaSuccess) ::salasim::gpu::cuda_fail(e_, #call, ::salasim::gpu::op_text(op), __FILE__, __LINE__); \
  } while (0)

#define CUBLAS_CHECK(call, op)                                                                           \
  do {                                                                                                   \
    cublasStatus_t s_ = (call);                                                                          \
    if (s_ != CUBLAS_STATUS_SUCCESS) ::salasim::gpu::cublas_fail(s_, #call, ::salasim::gpu::op_text(op), __FILE__, __LINE__); \
  } while (0)

// After a kernel launch: launch-configuration errors surface here, naming the op.
#define CHECK_LAUNCH(op) CUDA_CHECK(cudaGetLastError(), (op))

// ARG_CHECK(cond, op, why): a bad argument to a GPU op throws salasim::DeviceError naming the op, its shapes and
// `why` (a literal), before anything is launched: the caller's bug, exit 3. (cudaErrorInvalidValue is the code the
// message carries.)
#define ARG_CHECK(cond, op, why)                                                                            \
  do {                                                                                                      \
    if (!(cond)) ::salasim::gpu::cuda_fail(cudaErrorInvalidValue, "argument check: " why, ::salasim::gpu::op_text(op), __FILE__, __LINE__); \
  } while (0)
