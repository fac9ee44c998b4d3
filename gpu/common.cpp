// Device discovery, memory and error reporting (host code: compiled by the host compiler, so fmt is fine here).
#include <fmt/format.h>

#include "gpu/check.cuh"
#include "gpu/common.hpp"
#include "model/error.hpp"

namespace salasim::gpu {

// Device failures are DeviceError: the salasim command exits 3 (internal or device error), not 2 (bad input).
// The error is reported here: it is cleared from the runtime's last-error state, or the next launch check would
// report it again as another op's (a failed copy in one test once failed the next test's first launch).
void cuda_fail(cudaError_t e, const char* call, const std::string& op, const char* file, int line) {
  (void)cudaGetLastError();
  throw DeviceError(fmt::format("CUDA error in {}: {} ({}) from {} at {}:{}", op, cudaGetErrorString(e),
                                cudaGetErrorName(e), call, file, line));
}

void cublas_fail(cublasStatus_t s, const char* call, const std::string& op, const char* file, int line) {
  throw DeviceError(fmt::format("cuBLAS error in {}: status {} ({}) from {} at {}:{}", op, int(s),
                                cublasGetStatusString(s), call, file, line));
}

std::string op_desc(const char* op, std::initializer_list<std::pair<const char*, int64_t>> dims) {
  std::string s = std::string(op) + "(";
  bool first = true;
  for (auto& [k, v] : dims) {
    s += fmt::format("{}{}={}", first ? "" : ", ", k, v);
    first = false;
  }
  return s + ")";
}

bool available(std::string* why) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    if (why) *why = fmt::format("no usable CUDA driver or device ({})", cudaGetErrorString(e));
    cudaGetLastError();  // clear the sticky error
    return false;
  }
  if (n == 0) {
    if (why) *why = "no CUDA device";
    return false;
  }
  return true;
}

std::string device_name() {
  cudaDeviceProp p{};
  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev), "device_name");
  CUDA_CHECK(cudaGetDeviceProperties(&p, dev), "device_name");
  return fmt::format("{} (sm_{}{}, {} SMs, {:.1f} GiB)", p.name, p.major, p.minor, p.multiProcessorCount,
                     double(p.totalGlobalMem) / double(1ull << 30));
}

void synchronize() { CUDA_CHECK(cudaDeviceSynchronize(), "synchronize"); }

void mem_info(size_t* free_bytes, size_t* total_bytes) {
  CUDA_CHECK(cudaMemGetInfo(free_bytes, total_bytes), "mem_info");
}

void* dev_alloc(size_t bytes, const char* what) {
  void* p = nullptr;
  cudaError_t e = cudaMalloc(&p, bytes);
  if (e != cudaSuccess) {
    cudaGetLastError();
    size_t f = 0, t = 0;
    cudaMemGetInfo(&f, &t);  // best effort, for the message only: the failure reported is cudaMalloc's
    throw DeviceError(fmt::format("cudaMalloc of {} bytes ({:.2f} GiB) for {} failed: {} (free {:.2f} of {:.2f} GiB)",
                                  bytes, double(bytes) / double(1ull << 30), what, cudaGetErrorString(e),
                                  double(f) / double(1ull << 30), double(t) / double(1ull << 30)));
  }
  return p;
}

void dev_free(void* p) {
  if (p) cudaFree(p);  // errors here would mask the exception in flight; the next checked call reports them
}

void copy_to_device(void* dst, const void* src, size_t bytes) {
  CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), fmt::format("upload of {} bytes", bytes));
}
void copy_to_host(void* dst, const void* src, size_t bytes) {
  CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), fmt::format("download of {} bytes", bytes));
}
void copy_device(void* dst, const void* src, size_t bytes) {
  CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice), fmt::format("device copy of {} bytes", bytes));
}
void fill_bytes(void* dst, int value, size_t bytes) {
  CUDA_CHECK(cudaMemset(dst, value, bytes), fmt::format("memset of {} bytes", bytes));
}

}  // namespace salasim::gpu
