// GPU elementwise ops, GEMM and the synthetic generator against the float64 reference (gate: err <= 2 err(peer)
// + floor), on fresh random inputs of odd sizes, outputs poisoned first.
#include <cuda_runtime.h>

#include <cmath>
#include <limits>

#include "gpu/linear.hpp"
#include "gpu/ops.hpp"
#include "model/config.hpp"
#include "model/error.hpp"
#include "model/generate.hpp"
#include "model/inventory.hpp"
#include "model/weights.hpp"
#include "reference/ops.hpp"
#include "tests/gpu/gpu_support.hpp"
#include "tests/support/paths.hpp"
#include "tests/support/random.hpp"

using namespace salasim;
using namespace salasim::test;
using ref::Mat;

TEST_CASE("synth: the GPU generator is bit-identical to the CPU one", "[synth][gpu]") {
  for (const std::string& path : {tiny_config(), real_config()}) {
    const ModelConfig c = load_config(path);
    const auto inv = tensor_inventory(c);
    for (const TensorSpec& t : inv) {
      if (t.layer > 1) continue;  // the first layers cover every tensor kind
      const int64_t n = std::min<int64_t>(t.numel(), int64_t(1) << 22), rows = n / t.cols();
      if (rows == 0) continue;
      gpu::Buffer<gpu::bf16_t> b(size_t(rows * t.cols()));
      poison(b);
      const SynthParams p = synth_params(7, t);
      gpu::synth_fill(b.get(), rows * t.cols(), 0, p.key, p.amp, p.ones, nullptr);
      std::vector<gpu::bf16_t> got = b.download(), want(got.size());
      weight_rows_bf16(synthetic_weights(7), t, 0, rows, want.data());
      INFO(t.name);
      CHECK(got == want);
    }
  }
}

TEST_CASE("embed: rows times scale within tolerance", "[embed][gpu]") {
  const int V = 301, D = 257;
  const Mat E = bf16_round(randn(V, D, 1, 0.1));
  std::vector<int32_t> toks = {0, 5, 300, 17, 17, 250, 1};
  auto dE = upload_bf16(E);
  auto dt = gpu::to_device(toks);
  gpu::Buffer<gpu::bf16_t> h(toks.size() * D);
  poison(h);
  gpu::embed(dE.get(), dt.get(), int64_t(toks.size()), D, V, 12.0f, h.get(), nullptr);
  check_gate("embed/out", ref::embed(E, toks, 12.0, ref::f64()), ref::embed(E, toks, 12.0, ref::peer()),
             download_bf16(h, int64_t(toks.size()), D));
  std::vector<int32_t> bad = {3, V};
  auto db = gpu::to_device(bad);
  CHECK_THROWS_AS(gpu::embed(dE.get(), db.get(), 2, D, V, 12.0f, h.get(), nullptr), Error);
}

// The device form of model/generate.hpp's greedy_token must pick the same id, or generation on the GPU would differ
// from the loop the reference runs: ties to the lowest index, non-finite logits skipped (and reported), 0 when none
// is finite; on the vocabulary's width and on sizes around a warp, a block and a thread's stride.
TEST_CASE("greedy_token: the host rule's id, ties to the lowest index, non-finite values skipped", "[greedy_token][gpu]") {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  int32_t* out = nullptr;  // host-mapped [2], as the runner uses it
  REQUIRE(cudaHostAlloc(reinterpret_cast<void**>(&out), 8, cudaHostAllocMapped) == cudaSuccess);
  int32_t* out_dev = nullptr;
  REQUIRE(cudaHostGetDevicePointer(reinterpret_cast<void**>(&out_dev), out, 0) == cudaSuccess);
  gpu::Buffer<int32_t> tok(1);
  int cases = 0;
  for (int64_t n : {int64_t(1), int64_t(31), int64_t(1023), int64_t(1025), int64_t(4097), int64_t(73448)}) {
    for (int kind = 0; kind < 6; ++kind) {
      Mat m = bf16_round(randn(1, n, 40 + uint64_t(n) + uint64_t(kind), 3.0));
      std::vector<float> v(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) v[size_t(i)] = float(m(0, i));
      if (kind == 1) {  // the maximum at several places, the last thread's stride included
        const float top = 100.0f;
        for (int64_t i : {n - 1, n / 2, n / 3 + 1, int64_t(7)}) v[size_t(i % n)] = top;
      } else if (kind == 2) {  // every value equal
        std::fill(v.begin(), v.end(), -2.5f);
      } else if (kind == 3) {  // a NaN and +inf above the finite maximum, -inf elsewhere
        v[size_t(n / 2)] = nan;
        v[size_t(n - 1)] = inf;
        v[0] = -inf;
      } else if (kind == 4) {  // nothing finite
        for (int64_t i = 0; i < n; ++i) v[size_t(i)] = i % 2 ? nan : -inf;
      } else if (kind == 5) {  // negative values only, the largest late
        for (float& x : v) x = -std::fabs(x) - 1.0f;
        v[size_t(n - 1)] = -0.5f;
      }
      std::vector<gpu::bf16_t> bits(v.size());
      for (size_t i = 0; i < v.size(); ++i) bits[i] = bf16_from_float(v[i]);
      gpu::Buffer<gpu::bf16_t> d(bits.size());
      d.upload(bits);
      std::vector<float> back(v.size());  // what the host sees after the bf16 download: the same values
      for (size_t i = 0; i < v.size(); ++i) back[i] = float_from_bf16(bits[i]);
      bool finite = true;
      const int32_t want = greedy_token(back.data(), n, &finite);
      out[0] = -7;
      out[1] = -7;
      gpu::greedy_token(d.get(), n, tok.get(), out_dev, nullptr);
      gpu::synchronize();
      INFO("n " << n << " kind " << kind);
      CHECK(tok.download()[0] == want);
      CHECK(out[0] == want);
      CHECK(out[1] == (finite ? 1 : 0));
      ++cases;
    }
  }
  CHECK(cases == 36);
  cudaFreeHost(out);
}

TEST_CASE("rmsnorm: rows and strided rows within tolerance", "[rmsnorm][gpu]") {
  for (int n : {4096, 255}) {
    const int64_t T = 67, ld = n + 9;
    const Mat x = bf16_round(randn(T, ld, 2 + uint64_t(n), 1.7));
    const Mat w = bf16_round(randn(1, n, 3, 1.0));
    auto dx = upload_bf16(x);
    auto dw = upload_bf16(w);
    gpu::Buffer<gpu::bf16_t> y(size_t(T * n));
    poison(y);
    gpu::rmsnorm(dx.get(), ld, dw.get(), T, n, 1e-6f, y.get(), n, nullptr);
    const Mat xs = x.leftCols(n);
    const ref::Vec wv = w.row(0).transpose();
    INFO("n = " << n);
    check_gate("input_norm/out", ref::rmsnorm(xs, wv, 1e-6, ref::f64()), ref::rmsnorm(xs, wv, 1e-6, ref::peer()),
               download_bf16(y, T, n));
  }
}

TEST_CASE("rmsnorm_gate: the bits of rmsnorm then gate, in place, with and without the norm's output", "[rmsnorm][gpu]") {
  // n = 4096 (the Lightning width) and 4104 (a ragged last pass of the 256 threads); z inside a wider row
  for (const int n : {4096, 4104}) {
    const int T = 5;
    const int64_t ldz = 3 * int64_t(n) + 8;
    const Mat x = bf16_round(randn(T, n, 81, 3.0)), zz = bf16_round(randn(T, ldz, 82, 2.0));
    const Mat w = bf16_round(Mat(randn(1, n, 83, 0.2).array() + 1.0));
    auto dw = upload_bf16(w), dz = upload_bf16(zz);
    const gpu::bf16_t* z = dz.get() + 2 * n + 8;
    auto two = upload_bf16(x);
    gpu::rmsnorm(two.get(), n, dw.get(), T, n, 1e-6f, two.get(), n, nullptr);
    const Mat norm = download_bf16(two, T, n);
    gpu::gate(two.get(), n, z, ldz, T, n, two.get(), n, nullptr);
    const Mat want = download_bf16(two, T, n);
    for (const bool with_norm : {false, true}) {
      auto one = upload_bf16(x);
      gpu::Buffer<gpu::bf16_t> normed(size_t(T) * n);
      poison(normed);
      gpu::rmsnorm_gate(one.get(), n, dw.get(), z, ldz, T, n, 1e-6f, one.get(), n, with_norm ? normed.get() : nullptr,
                        nullptr);
      INFO("n " << n << ", norm output " << with_norm);
      CHECK((download_bf16(one, T, n) - want).cwiseAbs().maxCoeff() == 0.0);
      const Mat got_norm = download_bf16(normed, T, n);
      if (with_norm) CHECK((got_norm - norm).cwiseAbs().maxCoeff() == 0.0);
      else CHECK(got_norm.array().isNaN().all());  // not written
    }
  }
}

TEST_CASE("residual: h + s b then the next rmsnorm, within tolerance", "[residual][gpu]") {
  const int64_t T = 33;
  const int D = 1000;
  const Mat h = bf16_round(randn(T, D, 4)), b = bf16_round(randn(T, D, 5)), w = bf16_round(randn(1, D, 6));
  auto dh = upload_bf16(h);
  auto db = upload_bf16(b);
  auto dw = upload_bf16(w);
  gpu::Buffer<gpu::bf16_t> y(size_t(T * D));
  poison(y);
  gpu::residual(dh.get(), db.get(), T, D, 0.2474873734f, dw.get(), 1e-6f, y.get(), nullptr);
  Mat h64 = h, hbf = h;
  ref::residual(h64, b, 0.2474873734, ref::f64());
  ref::residual(hbf, b, 0.2474873734, ref::peer());
  check_gate("residual/h", h64, hbf, download_bf16(dh, T, D));
  const ref::Vec wv = w.row(0).transpose();
  check_gate("post_norm/out", ref::rmsnorm(h64, wv, 1e-6, ref::f64()), ref::rmsnorm(hbf, wv, 1e-6, ref::peer()),
             download_bf16(y, T, D));
}

TEST_CASE("rope: qk-norm then RoPE within tolerance up to position 2M", "[rope][gpu]") {
  const int H = 5, hd = 128;
  const int64_t T = 63, ld = H * hd + 64;
  const ref::RopeTable tab = ref::rope_table(hd, 10000.0, ref::RopeAngles::Fp32);
  auto inv = gpu::to_device(tab.inv_freq32);
  const Mat wn = bf16_round(randn(1, hd, 9, 0.5)).array() + 1.0;
  const Mat wnb = bf16_round(wn);
  auto dwn = upload_bf16(wnb);
  for (int64_t pos0 : {int64_t(0), int64_t(8190), int64_t(2000000)}) {
    const Mat x = bf16_round(randn(T, ld, 10 + uint64_t(pos0)));
    auto dx = upload_bf16(x);
    gpu::rope(dx.get(), ld, T, H, hd, dwn.get(), 1e-6f, pos0, inv.get(), nullptr);
    Mat r64 = ref::rmsnorm_heads(x.leftCols(H * hd), wnb.row(0).transpose(), hd, 1e-6, ref::f64());
    Mat rbf = ref::rmsnorm_heads(x.leftCols(H * hd), wnb.row(0).transpose(), hd, 1e-6, ref::peer());
    ref::rope(r64, pos0, tab, ref::f64());
    ref::rope(rbf, pos0, tab, ref::peer());
    const Mat got = download_bf16(dx, T, ld);
    INFO("pos0 = " << pos0);
    check_gate("lightning/qk_rope/q", r64, rbf, got.leftCols(H * hd));
    CHECK((got.rightCols(64) - x.rightCols(64)).cwiseAbs().maxCoeff() == 0.0);  // the stride gap is untouched
  }
}

TEST_CASE("rope: rope_qk equals rope on q and rope on k, bit for bit", "[rope][gpu]") {
  const int H = 3, hd = 128;
  const int64_t T = 37, ld = 4 * H * hd;  // the Lightning projection row: q | k | v | z
  const ref::RopeTable tab = ref::rope_table(hd, 10000.0, ref::RopeAngles::Fp32);
  auto inv = gpu::to_device(tab.inv_freq32);
  auto wq = upload_bf16(bf16_round(Mat(randn(1, hd, 21, 0.5).array() + 1.0)));
  auto wk = upload_bf16(bf16_round(Mat(randn(1, hd, 22, 0.5).array() + 1.0)));
  const Mat x = bf16_round(randn(T, ld, 23, 3.0));
  auto one = upload_bf16(x), two = upload_bf16(x);
  gpu::rope_qk(one.get(), ld, T, H, hd, wq.get(), wk.get(), 1e-6f, 70001, inv.get(), nullptr);
  gpu::rope(two.get(), ld, T, H, hd, wq.get(), 1e-6f, 70001, inv.get(), nullptr);
  gpu::rope(two.get() + H * hd, ld, T, H, hd, wk.get(), 1e-6f, 70001, inv.get(), nullptr);
  const Mat a = download_bf16(one, T, ld), b = download_bf16(two, T, ld);
  CHECK((a - b).cwiseAbs().maxCoeff() == 0.0);
  CHECK((a.rightCols(2 * H * hd) - x.rightCols(2 * H * hd)).cwiseAbs().maxCoeff() == 0.0);  // v and z untouched
  CHECK((a.leftCols(2 * H * hd) - x.leftCols(2 * H * hd)).cwiseAbs().maxCoeff() > 0.0);
}

TEST_CASE("gemv: y = alpha W x within one bf16 rounding of float64, odd sizes and both splits", "[gemv][gpu]") {
  // in = 4104: rows split over 4 warps, the last slice shorter and a ragged last batch; in = 16392 and 16384: over 8
  // warps; in = 8: three of the four slices empty; out odd and not a multiple of a CTA's rows
  for (const auto& [in, out] : {std::pair<int, int>{4104, 37}, {4104, 1001}, {16392, 45}, {16384, 4093}, {8, 3}}) {
    const Mat W = bf16_round(randn(out, in, 31 + uint64_t(in), 0.05)), x = bf16_round(randn(1, in, 32));
    auto dW = upload_bf16(W), dx = upload_bf16(x);
    gpu::Buffer<gpu::bf16_t> dy(size_t(out) + 8);
    poison(dy);
    const float alpha = 0.0625f;
    gpu::gemv(dW.get(), dx.get(), in, out, dy.get(), alpha, nullptr);
    const Mat got = download_bf16(dy, 1, out + 8);
    const ref::Vec exact = double(alpha) * (W * x.transpose());
    const ref::Vec mag = double(alpha) * (W.cwiseAbs() * x.transpose().cwiseAbs());
    INFO("in " << in << ", out " << out);
    for (int i = 0; i < out; ++i) {
      INFO("row " << i);
      CHECK(std::abs(got(0, i) - exact(i)) <= std::ldexp(std::abs(exact(i)), -8) + 1e-5 * mag(i));
    }
    for (int i = out; i < out + 8; ++i) CHECK(std::isnan(got(0, i)));  // rows past out are not written
  }
}

TEST_CASE("gemv: reads x only once the kernel that writes it has finished (programmatic dependent launch)", "[gemv][gpu]") {
  // The GEMV may start while mlp_act (which triggers its dependents as it begins) still writes x: the last row of a
  // 256-row activation, written by the last CTAs. Each round writes new values, so a GEMV that read x before its
  // pdl_wait would see the previous round's row.
  const int T = 256, I = 4096, out = 1003;
  const Mat W = bf16_round(randn(out, I, 51, 0.05));
  auto dW = upload_bf16(W);
  gpu::Buffer<gpu::bf16_t> act(size_t(T) * I), dy{size_t(out)};
  const float alpha = 0.5f;
  for (int round = 0; round < 8; ++round) {
    const Mat gu = bf16_round(randn(T, 2 * I, 60 + uint64_t(round), 2.0));
    auto dgu = upload_bf16(gu);
    poison(dy);
    gpu::mlp_act(dgu.get(), T, I, act.get(), nullptr);
    gpu::gemv(dW.get(), act.get() + int64_t(T - 1) * I, I, out, dy.get(), alpha, nullptr);
    const Mat x = download_bf16(act, T, I).bottomRows(1), got = download_bf16(dy, 1, out);
    const ref::Vec exact = double(alpha) * (W * x.transpose());
    const ref::Vec mag = double(alpha) * (W.cwiseAbs() * x.transpose().cwiseAbs());
    int64_t wrong = 0;
    for (int i = 0; i < out; ++i) wrong += !(std::abs(got(0, i) - exact(i)) <= std::ldexp(std::abs(exact(i)), -8) + 1e-5 * mag(i));
    INFO("round " << round);
    CHECK(wrong == 0);
  }
}

TEST_CASE("gemv_mlp_act: the bits of gemv then mlp_act, and within one bf16 rounding of float64", "[gemv][gpu]") {
  for (const auto& [in, I] : {std::pair<int, int>{4104, 37}, {4096, 1003}, {8, 8}}) {
    const Mat W = bf16_round(randn(2 * I, in, 71 + uint64_t(in), 0.05)), x = bf16_round(randn(1, in, 72, 2.0));
    auto dW = upload_bf16(W), dx = upload_bf16(x);
    gpu::Buffer<gpu::bf16_t> fused{size_t(I) + 8}, gu{size_t(2 * I)}, two{size_t(I)};
    poison(fused);
    const float alpha = 0.75f;
    gpu::gemv_mlp_act(dW.get(), dx.get(), in, I, fused.get(), alpha, nullptr);
    gpu::gemv(dW.get(), dx.get(), in, 2 * I, gu.get(), alpha, nullptr);
    gpu::mlp_act(gu.get(), 1, I, two.get(), nullptr);
    const Mat got = download_bf16(fused, 1, I + 8), ref2 = download_bf16(two, 1, I);
    const Mat g = double(alpha) * (W.topRows(I) * x.transpose()), u = double(alpha) * (W.bottomRows(I) * x.transpose());
    INFO("in " << in << ", I " << I);
    CHECK((got.leftCols(I) - ref2).cwiseAbs().maxCoeff() == 0.0);
    for (int i = I; i < I + 8; ++i) CHECK(std::isnan(got(0, i)));  // nothing past I written
    int64_t wrong = 0;
    for (int i = 0; i < I; ++i) {  // g and u each rounded once, then the product: a few bf16 steps at most
      const double gi = g(i), exact = gi / (1 + std::exp(-gi)) * u(i);
      wrong += !(std::abs(got(0, i) - exact) <= std::ldexp(std::abs(exact), -6) + 1e-4);
    }
    CHECK(wrong == 0);
  }
}

TEST_CASE("gemv_residual: the bits of residual then gemv or gemv_mlp_act, h left as it was", "[gemv][gemv_residual][gpu]") {
  // in = 4096: the fast prologue (gemv.cu residual_norm_fast), the others residual_norm_row's; out = 9001 and 20011,
  // I = 3001 and 5003: more items than the CTAs resident at once, so a CTA takes several in turn; 4104: ragged
  // slices; in = 8: three of four slices empty; outputs past out must stay unwritten
  struct Case {
    int in, out;
    bool act;
  };
  for (const Case& k : {Case{4096, 1003, false}, Case{4096, 9001, false}, Case{4096, 3001, true}, Case{1000, 20011, false}, Case{1000, 5003, true}, Case{4104, 37, true},
                        Case{8, 3, false}}) {
    const int rows = k.act ? 2 * k.out : k.out;
    const Mat W = bf16_round(randn(rows, k.in, 81 + uint64_t(k.in), 0.05));
    const Mat h = bf16_round(randn(1, k.in, 82, 2.0)), b = bf16_round(randn(1, k.in, 83, 3.0));
    const Mat wn = bf16_round(Mat(randn(1, k.in, 84, 0.3).array() + 1.0));
    auto dW = upload_bf16(W), dh = upload_bf16(h), dh1 = upload_bf16(h), db = upload_bf16(b), dwn = upload_bf16(wn);
    gpu::Buffer<gpu::bf16_t> a1{size_t(k.in)}, y1{size_t(k.out)}, h_out{size_t(k.in)}, a_out{size_t(k.in)},
        y2{size_t(k.out) + 8};
    poison(y2);
    poison(h_out);
    poison(a_out);
    const float scale = 0.2474873734f, eps = 1e-6f, alpha = 0.0625f;
    gpu::residual(dh1.get(), db.get(), 1, k.in, scale, dwn.get(), eps, a1.get(), nullptr);
    if (k.act) gpu::gemv_mlp_act(dW.get(), a1.get(), k.in, k.out, y1.get(), alpha, nullptr);
    else gpu::gemv(dW.get(), a1.get(), k.in, k.out, y1.get(), alpha, nullptr);
    gpu::GemvResidual r;
    r.h = dh.get();
    r.b = db.get();
    r.scale = scale;
    r.w = dwn.get();
    r.eps = eps;
    r.h_out = h_out.get();
    r.a_out = a_out.get();
    gpu::gemv_residual(dW.get(), r, k.in, k.out, y2.get(), alpha, k.act, nullptr);
    INFO("in " << k.in << ", out " << k.out << (k.act ? ", gate|up" : ""));
    CHECK((download_bf16(h_out, 1, k.in) - download_bf16(dh1, 1, k.in)).cwiseAbs().maxCoeff() == 0.0);
    CHECK((download_bf16(a_out, 1, k.in) - download_bf16(a1, 1, k.in)).cwiseAbs().maxCoeff() == 0.0);
    const Mat got = download_bf16(y2, 1, k.out + 8);
    CHECK((got.leftCols(k.out) - download_bf16(y1, 1, k.out)).cwiseAbs().maxCoeff() == 0.0);
    for (int i = k.out; i < k.out + 8; ++i) CHECK(std::isnan(got(0, i)));  // nothing past out written
    CHECK((download_bf16(dh, 1, k.in) - h).cwiseAbs().maxCoeff() == 0.0);  // the stream it read is untouched
    CHECK(download_bf16(dh1, 1, k.in).cwiseAbs().maxCoeff() > 0.0);
  }
  // the new stream must go to another row: every CTA reads h while CTA 0 writes h_out
  const Mat W = bf16_round(randn(16, 64, 85)), x = bf16_round(randn(1, 64, 86));
  auto dW = upload_bf16(W), dx = upload_bf16(x), dx2 = upload_bf16(x);
  gpu::Buffer<gpu::bf16_t> a{64}, y{16};
  gpu::GemvResidual r;
  r.h = dx.get();
  r.b = dx2.get();
  r.w = dx2.get();
  r.h_out = dx.get();
  r.a_out = a.get();
  CHECK_FALSE(gpu::gemv_residual_supported(r, dW.get(), 64));
  std::string what;
  try {
    gpu::gemv_residual(dW.get(), r, 64, 16, y.get(), 1.0f, false, nullptr);
  } catch (const std::exception& e) {
    what = e.what();
  }
  CHECK(what.find("h_out != h") != std::string::npos);
}

TEST_CASE("gemv_gate: the bits of rmsnorm_gate or gate then gemv, a and z left as they were", "[gemv][gemv_gate][gpu]") {
  // in = 4096: the fast prologue (gemv.cu gate_fast), the others rmsnorm_gate_row's or the plain gate loop; out =
  // 9001: more items than the CTAs resident at once; 4104: ragged slices; in = 8: three of four slices empty
  for (const auto& [in, out] : {std::pair<int, int>{4096, 4096}, {4096, 9001}, {1000, 20011}, {4104, 37}, {8, 3}}) {
    for (const bool norm : {true, false}) {
      const Mat W = bf16_round(randn(out, in, 91 + uint64_t(in), 0.05));
      const Mat a = bf16_round(randn(1, in, 92, 2.0)), z = bf16_round(randn(1, in, 93, 3.0));
      const Mat wn = bf16_round(Mat(randn(1, in, 94, 0.3).array() + 1.0));
      auto dW = upload_bf16(W), da = upload_bf16(a), dz = upload_bf16(z), dwn = upload_bf16(wn);
      gpu::Buffer<gpu::bf16_t> x1{size_t(in)}, y1{size_t(out)}, x_out{size_t(in)}, y2{size_t(out) + 8};
      poison(y2);
      poison(x_out);
      const float eps = 1e-6f, alpha = 0.75f;
      if (norm) gpu::rmsnorm_gate(da.get(), in, dwn.get(), dz.get(), in, 1, in, eps, x1.get(), in, nullptr, nullptr);
      else gpu::gate(da.get(), in, dz.get(), in, 1, in, x1.get(), in, nullptr);
      gpu::gemv(dW.get(), x1.get(), in, out, y1.get(), alpha, nullptr);
      gpu::GemvGate g;
      g.a = da.get();
      g.z = dz.get();
      g.w = norm ? dwn.get() : nullptr;
      g.eps = eps;
      g.x_out = x_out.get();
      REQUIRE(gpu::gemv_gate_supported(g, dW.get(), in));
      gpu::gemv_gate(dW.get(), g, in, out, y2.get(), alpha, nullptr);
      INFO("in " << in << ", out " << out << (norm ? ", rmsnorm then gate" : ", gate"));
      const Mat x = download_bf16(x1, 1, in), got = download_bf16(y2, 1, out + 8);
      CHECK((download_bf16(x_out, 1, in) - x).cwiseAbs().maxCoeff() == 0.0);
      CHECK((got.leftCols(out) - download_bf16(y1, 1, out)).cwiseAbs().maxCoeff() == 0.0);
      for (int i = out; i < out + 8; ++i) CHECK(std::isnan(got(0, i)));  // nothing past out written
      CHECK((download_bf16(da, 1, in) - a).cwiseAbs().maxCoeff() == 0.0);  // its inputs are untouched
      CHECK((download_bf16(dz, 1, in) - z).cwiseAbs().maxCoeff() == 0.0);
      // and the gate itself is what the float64 reference computes, to within its bf16 roundings
      Mat want = a;
      if (norm) want = bf16_round(ref::rmsnorm(a, wn.row(0).transpose(), eps, ref::f64()));
      int64_t wrong = 0;
      for (int i = 0; i < in; ++i) {
        const double e = want(0, i) / (1 + std::exp(-z(0, i)));
        wrong += !(std::abs(x(0, i) - e) <= std::ldexp(std::abs(e), -6) + 1e-6);  // a bf16 step in, one out
      }
      CHECK(wrong == 0);
    }
  }
  // x_out is written by CTA 0 while every CTA reads a: it must not overlap a or z
  const Mat W = bf16_round(randn(16, 64, 95)), x = bf16_round(randn(1, 64, 96));
  auto dW = upload_bf16(W), dx = upload_bf16(x), dz = upload_bf16(x);
  gpu::Buffer<gpu::bf16_t> y{16};
  gpu::GemvGate g;
  g.a = dx.get();
  g.z = dz.get();
  g.x_out = dx.get();
  CHECK_FALSE(gpu::gemv_gate_supported(g, dW.get(), 64));
  std::string what;
  try {
    gpu::gemv_gate(dW.get(), g, 64, 16, y.get(), 1.0f, nullptr);
  } catch (const std::exception& e) {
    what = e.what();
  }
  CHECK(what.find("x_out apart from a and z") != std::string::npos);
}

TEST_CASE("kv_append: the call's rows land in every group's cache rows, bit for bit, nothing else written", "[kv_append][gpu]") {
  const int G = 3, hd = 128;
  const int64_t ld = 5 * G * hd + 8, cap = 300;  // keys and values inside a wider projection row
  for (const auto& [T, pos0] : {std::pair<int64_t, int64_t>{1, 0}, {1, 299}, {57, 100}, {300, 0}}) {
    const Mat proj = bf16_round(randn(T, ld, 41 + uint64_t(T)));
    auto dp = upload_bf16(proj);
    gpu::Buffer<gpu::bf16_t> Kc(size_t(G * cap * hd)), Vc(size_t(G * cap * hd));
    poison(Kc);
    poison(Vc);
    const int64_t k0 = 2 * G * hd + 8, v0 = k0 + G * hd;  // column offsets of k and v (16-byte aligned)
    gpu::kv_append(dp.get() + k0, dp.get() + v0, ld, T, G, hd, Kc.get(), Vc.get(), cap, pos0, nullptr);
    const Mat K = download_bf16(Kc, G * cap, hd), V = download_bf16(Vc, G * cap, hd);
    INFO("T " << T << ", pos0 " << pos0);
    int64_t written = 0, wrong = 0;
    for (int j = 0; j < G; ++j)
      for (int64_t r = 0; r < cap; ++r) {
        const int64_t t = r - pos0;
        const bool in = t >= 0 && t < T;
        for (int d = 0; d < hd; ++d) {
          const double kv = K(j * cap + r, d), vv = V(j * cap + r, d);
          if (in) {
            wrong += kv != proj(t, k0 + j * hd + d) || vv != proj(t, v0 + j * hd + d);
            ++written;
          } else {
            wrong += !std::isnan(kv) || !std::isnan(vv);
          }
        }
      }
    CHECK(written == T * G * hd);
    CHECK(wrong == 0);
  }
  gpu::Buffer<gpu::bf16_t> small(size_t(G * 4 * hd));
  CHECK_THROWS_AS(gpu::kv_append(small.get(), small.get(), G * hd, 2, G, hd, small.get(), small.get(), 4, 3, nullptr),
                  DeviceError);  // rows past the capacity are refused
}

TEST_CASE("gate: x times sigmoid(z), mlp_act: silu(g) times u, within tolerance", "[gate][mlp][gpu]") {
  const int64_t T = 41;
  const int n = 513;
  const Mat x = bf16_round(randn(T, n, 11)), z = bf16_round(randn(T, 2 * n, 12, 2.0));
  auto dx = upload_bf16(x);
  auto dz = upload_bf16(z);
  gpu::Buffer<gpu::bf16_t> y(size_t(T * n));
  poison(y);
  gpu::gate(dx.get(), n, dz.get() + n, 2 * n, T, n, y.get(), n, nullptr);
  const Mat zr = z.rightCols(n);
  check_gate("lightning/gate/out", ref::gate(x, zr, ref::f64()), ref::gate(x, zr, ref::peer()), download_bf16(y, T, n));
  gpu::Buffer<gpu::bf16_t> act(size_t(T * n));
  poison(act);
  gpu::mlp_act(dz.get(), T, n, act.get(), nullptr);
  const Mat g = z.leftCols(n), u = z.rightCols(n);
  check_gate("mlp/act", ref::mlp_act(g, u, ref::f64()), ref::mlp_act(g, u, ref::peer()), download_bf16(act, T, n));
}

TEST_CASE("linear: cuBLAS is exact on small integers and within tolerance on random data", "[linear][gpu]") {
  gpu::Blas blas(nullptr);
  const int64_t T = 37;
  const int in = 300, out = 129;
  // small integers: every product and partial sum is exact in fp32 and the result fits bf16
  Mat xi = randn(T, in, 20, 2.0).array().round(), wi = randn(out, in, 21, 1.0).array().round();
  xi = xi.cwiseMax(-3).cwiseMin(3);
  wi = wi.cwiseMax(-1).cwiseMin(1);
  auto dx = upload_bf16(xi);
  auto dw = upload_bf16(wi);
  gpu::Buffer<gpu::bf16_t> y(size_t(T * out));
  poison(y);
  gpu::linear(blas, dx.get(), in, dw.get(), T, in, out, y.get(), out);
  gpu::synchronize();
  const Mat exact = xi * wi.transpose();
  REQUIRE(exact.cwiseAbs().maxCoeff() <= 256);  // representable exactly in bf16
  CHECK((download_bf16(y, T, out) - exact).cwiseAbs().maxCoeff() == 0.0);
  const Mat x = bf16_round(randn(T, in, 22)), w = bf16_round(randn(out, in, 23, 0.06));
  auto dx2 = upload_bf16(x);
  auto dw2 = upload_bf16(w);
  poison(y);
  gpu::linear(blas, dx2.get(), in, dw2.get(), T, in, out, y.get(), out);
  gpu::synchronize();
  check_gate("lightning/proj/q", ref::linear(x, w, ref::f64()), ref::linear(x, w, ref::peer()), download_bf16(y, T, out));
}
