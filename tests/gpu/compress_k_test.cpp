// compress_k on the GPU against the float64 reference: K1 and K2 windows appended piece by piece, as the runner's
// prefill chunks and decode steps append them.
#include <cmath>
#include <vector>

#include "gpu/compress_k.hpp"
#include "model/error.hpp"
#include "tests/gpu/sparse_support.hpp"

using namespace salasim;
using gpu::bf16_t;

namespace {

struct WindowKind {
  const char* tolerance;  // tolerance row and tap kind
  int kernel, stride;
};

}  // namespace

TEST_CASE("compress_k: K1 and K2 appended in pieces match the float64 reference", "[compress_k][gpu]") {
  const int G = 2, hd = 128;
  const int64_t L = 9137, cap = L + 11;
  const uint64_t seed = 4101;
  INFO("seed " << seed << ", " << L << " keys");
  const std::vector<ref::Mat> K = test::rand_heads(G, L, hd, seed, 1.5);
  const gpu::Buffer<bf16_t> Kd = test::upload_heads(K, L, cap);  // rows past L are NaN: never read
  // prefill chunks and decode steps: some complete no window; 4096 and 8192 end exactly on a K1 and a K2 window
  const std::vector<int64_t> lens = {0, 1, 31, 32, 33, 100, 4095, 4096, 8192, 8193, 9000, L};
  for (const WindowKind wk : {WindowKind{"sparse/compress_k/k1", 32, 16}, WindowKind{"sparse/compress_k/k2", 128, 64}}) {
    INFO(wk.tolerance);
    const int64_t n = ref::n_windows(L, wk.kernel, wk.stride), ccap = n + 5;
    gpu::Buffer<bf16_t> ck(size_t(G * ccap * hd), "compressed keys");
    test::poison(ck);
    for (size_t i = 1; i < lens.size(); ++i)
      gpu::compress_k(Kd.get(), cap, G, hd, lens[i - 1], lens[i], wk.kernel, wk.stride, ck.get(), ccap, nullptr);
    gpu::synchronize();
    std::vector<ref::Mat> r64, peer;
    for (const ref::Mat& k : K) {
      r64.push_back(ref::compress_k(k, L, wk.kernel, wk.stride, ref::f64()));
      peer.push_back(ref::compress_k(k, L, wk.kernel, wk.stride, ref::peer()));
    }
    test::check_gate(wk.tolerance, test::stack(r64), test::stack(peer), test::download_heads(ck, G, ccap, n, hd));
    // the slots past the last complete window are untouched
    const ref::Mat tail = test::download_heads(ck, G, ccap, ccap, hd);
    int64_t written_past = 0;
    for (int64_t g = 0; g < G; ++g)
      for (int64_t r = n; r < ccap; ++r)
        for (int64_t d = 0; d < hd; ++d) written_past += !std::isnan(tail(g * ccap + r, d));
    CHECK(written_past == 0);
  }
}

TEST_CASE("compress_k: more windows than the compressed-key capacity is an error", "[compress_k][gpu]") {
  const int G = 2, hd = 128;
  const int64_t L = 1000, cap = 1024;
  gpu::Buffer<bf16_t> K(size_t(G * cap * hd)), ck(size_t(G * 16 * hd));
  // 1000 keys complete 61 K1 windows; room for 16
  CHECK_THROWS_AS(gpu::compress_k(K.get(), cap, G, hd, 0, L, 32, 16, ck.get(), 16, nullptr), salasim::Error);
  // and more keys than the key cache holds
  CHECK_THROWS_AS(gpu::compress_k(K.get(), cap, G, hd, 0, cap + 1, 32, 16, ck.get(), 64, nullptr), salasim::Error);
}
