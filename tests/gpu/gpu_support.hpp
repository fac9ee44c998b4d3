// Helpers of the GPU op tests: move float64 matrices to and from bf16 device buffers, and gate a GPU result
// against the float64 reference with the project's tolerance policy (err <= 2 err(peer) + floor, compare/).
#pragma once
#include <string>
#include <vector>

#include "compare/report.hpp"
#include "gpu/common.hpp"
#include "model/bf16.hpp"
#include "reference/tensor.hpp"
#include "tests/support/catch.hpp"

namespace salasim::test {

// Rounds every element to bf16 (inputs the GPU and the reference then share exactly).
inline ref::Mat bf16_round(const ref::Mat& m) { return m.unaryExpr([](double x) { return round_bf16(x); }); }

inline std::vector<gpu::bf16_t> to_bf16_bits(const ref::Mat& m) {
  std::vector<gpu::bf16_t> v(size_t(m.size()));
  for (int64_t i = 0; i < m.size(); ++i) v[size_t(i)] = bf16_from_float(float(m.data()[i]));
  return v;
}

inline gpu::Buffer<gpu::bf16_t> upload_bf16(const ref::Mat& m, const char* what = "test input") {
  return gpu::to_device(to_bf16_bits(m), what);
}

inline ref::Mat download_bf16(const gpu::Buffer<gpu::bf16_t>& b, int64_t rows, int64_t cols) {
  std::vector<gpu::bf16_t> v = b.download();
  ref::Mat m(rows, cols);
  for (int64_t i = 0; i < rows * cols; ++i) m.data()[i] = double(float_from_bf16(v[size_t(i)]));
  return m;
}

inline ref::Mat download_f32(const gpu::Buffer<float>& b, int64_t rows, int64_t cols) {
  std::vector<float> v = b.download();
  ref::Mat m(rows, cols);
  for (int64_t i = 0; i < rows * cols; ++i) m.data()[i] = double(v[size_t(i)]);
  return m;
}

inline Tap as_tap(const ref::Mat& m) { return Tap{{m.rows(), m.cols()}, {m.data(), m.data() + m.size()}}; }

// Gates one op's GPU output against the float64 reference, the peer giving the allowance. `kind` is the tolerance
// row ("lightning/gla/out"). Prints the verdict table when it fails.
inline void check_gate(const std::string& kind, const ref::Mat& ref64, const ref::Mat& peer, const ref::Mat& got) {
  const std::string name = "/op/" + kind;
  TapMap r{{name, as_tap(ref64)}}, p{{name, as_tap(peer)}}, g{{name, as_tap(got)}};
  CompareReport rep = compare_taps(r, &p, g);
  INFO(format_report(rep));
  CHECK(rep.pass());
}

// Poisons a buffer so an unwritten element shows up as NaN (0xFFFF is a bf16 NaN).
template <class T>
void poison(gpu::Buffer<T>& b) {
  gpu::fill_bytes(b.get(), 0xff, b.size() * sizeof(T));
}

}  // namespace salasim::test
