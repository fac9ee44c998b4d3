// The plain C++ face of the CUDA path: device pointers, streams and buffers, usable from code compiled
// without CUDA headers (tests, the CLI). bf16 data is passed as its 16-bit pattern (bf16_t), fp32 as float.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

struct CUstream_st;  // what cudaStream_t points to, so this header needs no CUDA include

namespace salasim::gpu {

using bf16_t = uint16_t;
using Stream = CUstream_st*;  // == cudaStream_t; nullptr is the default stream

// True when a CUDA device can be used; otherwise `why` says what is missing (no driver, no device, ...).
bool available(std::string* why = nullptr);
std::string device_name();
void synchronize();
// Whether kernels are launched with programmatic dependent launch (gpu/pdl.cuh launch_pdl; on by default).
// Off, every kernel waits for the one before it to end before it is even scheduled: the same results bit for bit,
// for measuring what the overlap buys (`salasim run --pdl off`).
void set_pdl(bool on);
bool pdl_enabled();
// Which kernel fusions a decode step without taps takes (gpu/runner.cpp; all by default): the residual and the next
// norm inside the GEMV that reads the norm (gemv_residual); each mixer's gate inside its output projection's GEMV
// (gemv_gate); the qk-norm and RoPE inside the recurrent GLA kernel (gla_recurrent_rope). Each gives the same bits;
// the choice exists to measure what each buys (`salasim run --fuse on|off|residual,gate,rope`). Taps and T > 1
// always take the separate kernels.
struct DecodeFusion {
  bool residual = true, gate = true, rope = true;
};
void set_decode_fusion(DecodeFusion f);
DecodeFusion decode_fusion();
// Free and total device memory in bytes.
void mem_info(size_t* free_bytes, size_t* total_bytes);

// Raw device memory (throws salasim::DeviceError, exit 3, naming `what` and the size when the allocation fails).
void* dev_alloc(size_t bytes, const char* what);
void dev_free(void* p);
void copy_to_device(void* dst, const void* src, size_t bytes);
void copy_to_host(void* dst, const void* src, size_t bytes);
void copy_device(void* dst, const void* src, size_t bytes);
void fill_bytes(void* dst, int value, size_t bytes);

// An owned device allocation of n elements of T.
template <class T>
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(size_t n, const char* what = "buffer") : n_(n), p_(n ? static_cast<T*>(dev_alloc(n * sizeof(T), what)) : nullptr) {}
  ~Buffer() { dev_free(p_); }
  Buffer(Buffer&& o) noexcept : n_(o.n_), p_(o.p_) { o.n_ = 0, o.p_ = nullptr; }
  Buffer& operator=(Buffer&& o) noexcept {
    if (this != &o) {
      dev_free(p_);
      n_ = o.n_, p_ = o.p_;
      o.n_ = 0, o.p_ = nullptr;
    }
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  T* get() const { return p_; }
  size_t size() const { return n_; }
  void upload(const std::vector<T>& v) { copy_to_device(p_, v.data(), v.size() * sizeof(T)); }
  std::vector<T> download() const {
    std::vector<T> v(n_);
    copy_to_host(v.data(), p_, n_ * sizeof(T));
    return v;
  }

 private:
  size_t n_ = 0;
  T* p_ = nullptr;
};

template <class T>
Buffer<T> to_device(const std::vector<T>& v, const char* what = "buffer") {
  Buffer<T> b(v.size(), what);
  b.upload(v);
  return b;
}

}  // namespace salasim::gpu
