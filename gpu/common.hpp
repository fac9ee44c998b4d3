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

// A CUDA stream and how kernels are launched on it. pdl: programmatic dependent launch (gpu/pdl.cuh launch_pdl): a
// kernel may be scheduled while the one before it on the stream still runs. Off, every kernel waits for the one
// before it to end before it is even scheduled: the same results bit for bit, for measuring what the overlap buys
// (`salasim run --pdl off`, RunnerOptions::pdl). The stream converts to cudaStream_t; nullptr is the default stream,
// with PDL on.
struct Stream {
  CUstream_st* handle = nullptr;  // == cudaStream_t
  bool pdl = true;
  Stream() = default;
  Stream(std::nullptr_t) {}
  Stream(CUstream_st* h, bool pdl_on = true) : handle(h), pdl(pdl_on) {}
  operator CUstream_st*() const { return handle; }
};

// True when a CUDA device can be used; otherwise `why` says what is missing (no driver, no device, ...).
bool available(std::string* why = nullptr);
std::string device_name();
void synchronize();
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
