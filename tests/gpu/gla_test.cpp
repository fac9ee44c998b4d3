// GPU GLA, chunked and recurrent, against the float64 reference, outputs and the carried fp32 state.
#include <cmath>

#include "gpu/gla.hpp"
#include "gpu/ops.hpp"
#include "gpu/tensor_map.hpp"
#include "model/config.hpp"
#include "reference/ops.hpp"
#include "tests/gpu/gpu_support.hpp"
#include "tests/support/paths.hpp"
#include "tests/support/random.hpp"

using namespace salasim;
using namespace salasim::test;
using ref::Mat;

namespace {
Mat states_as_mat(const std::vector<Mat>& S) {
  Mat m(int64_t(S.size()) * S[0].rows(), S[0].cols());
  for (size_t h = 0; h < S.size(); ++h) m.middleRows(int64_t(h) * S[0].rows(), S[0].rows()) = S[h];
  return m;
}

// The chunked engines this GPU runs: mma_sync everywhere, wgmma on an sm_90a build on Hopper.
std::vector<gpu::GlaEngine> chunked_engines() {
  std::vector<gpu::GlaEngine> e{gpu::GlaEngine::mma_sync};
  if (gpu::wgmma_available()) e.push_back(gpu::GlaEngine::wgmma);
  return e;
}
const char* engine_name(gpu::GlaEngine e) { return e == gpu::GlaEngine::wgmma ? "wgmma" : "mma_sync"; }
}  // namespace

TEST_CASE("gla: chunked and recurrent kernels within tolerance, state carried", "[gla][gpu]") {
  const int hd = 128;
  std::vector<double> gamma = load_config(real_config()).lightning_decay();
  gamma.resize(6);
  gamma.push_back(-std::pow(2.0, -8.0));  // the slowest real head
  const int H = int(gamma.size());
  const int64_t ld = 3 * H * hd + 128;  // q | k | v side by side with a gap, as in the fused projection
  std::vector<float> g32(gamma.begin(), gamma.end());
  auto dg = gpu::to_device(g32);
  const double tau = 1.0 / std::sqrt(double(hd));
  // 33000 tokens: 65 segments of the one-pass engine's chain, each ring slot rewritten 32 times
  for (int64_t T : {int64_t(1), int64_t(63), int64_t(64), int64_t(65), int64_t(1000), int64_t(4097), int64_t(33000)}) {
    std::vector<std::pair<bool, gpu::GlaEngine>> runs;
    if (T <= 1000) runs.push_back({true, gpu::GlaEngine::automatic});
    for (gpu::GlaEngine e : chunked_engines()) runs.push_back({false, e});
    for (const auto& [recurrent, engine] : runs) {
      INFO("T = " << T << (recurrent ? " recurrent" : " chunked, engine ") << (recurrent ? "" : engine_name(engine)));
      const Mat P = bf16_round(randn(T, ld, 30 + uint64_t(T)));
      const Mat q = P.middleCols(0, H * hd), k = P.middleCols(H * hd, H * hd), v = P.middleCols(2 * H * hd, H * hd);
      std::vector<Mat> S64, Sbf;
      for (int h = 0; h < H; ++h)
        S64.push_back(randn(hd, hd, 40 + uint64_t(h)).unaryExpr([](double x) { return double(float(x)); }));
      Sbf = S64;
      std::vector<float> s0;
      for (const Mat& s : S64) s0.insert(s0.end(), s.data(), s.data() + s.size());
      auto dP = upload_bf16(P);
      auto dS = gpu::to_device(s0);
      gpu::Buffer<gpu::bf16_t> o(size_t(T * H * hd));
      poison(o);
      gpu::Buffer<uint8_t> ws(gpu::gla_workspace_bytes(T, H, hd));
      if (recurrent)
        gpu::gla_recurrent(dP.get(), dP.get() + H * hd, dP.get() + 2 * H * hd, ld, T, H, hd, dg.get(), float(tau),
                           dS.get(), o.get(), H * hd, nullptr);
      else
        gpu::gla_chunked(dP.get(), dP.get() + H * hd, dP.get() + 2 * H * hd, ld, T, H, hd, dg.get(), float(tau),
                         dS.get(), o.get(), H * hd, ws.get(), nullptr, engine);
      const Mat o64 = ref::gla_chunked(q, k, v, gamma, tau, S64, ref::f64());
      const Mat obf = recurrent ? ref::gla_recurrent(q, k, v, gamma, tau, Sbf, ref::peer())
                                : ref::gla_chunked(q, k, v, gamma, tau, Sbf, ref::peer());
      check_gate("lightning/gla/out", o64, obf, download_bf16(o, T, H * hd));
      check_gate("lightning/gla/state", states_as_mat(S64), states_as_mat(Sbf), download_f32(dS, int64_t(H) * hd, hd));
    }
  }
}

// The model's 32 heads in calls of 1000 then 3000 tokens on one workspace (the one-pass engine resets its flags and
// ticket per call), the state carried from the first to the second: as one call over 4000 tokens.
TEST_CASE("gla: chunked calls of 32 heads, one after another on one workspace, within tolerance", "[gla][gpu]") {
  const int hd = 128;
  const std::vector<double> gamma = load_config(real_config()).lightning_decay();
  const int H = int(gamma.size());
  REQUIRE(H == 32);
  std::vector<float> g32(gamma.begin(), gamma.end());
  auto dg = gpu::to_device(g32);
  const double tau = 1.0 / std::sqrt(double(hd));
  const int64_t T = 4000, T1 = 1000, ld = 3 * H * hd;
  const Mat P = bf16_round(randn(T, ld, 77));
  const Mat q = P.middleCols(0, H * hd), k = P.middleCols(H * hd, H * hd), v = P.middleCols(2 * H * hd, H * hd);
  for (gpu::GlaEngine engine : chunked_engines()) {
    INFO("engine " << engine_name(engine));
    std::vector<Mat> S64(size_t(H), Mat::Zero(hd, hd)), Sbf = S64;
    auto dP = upload_bf16(P);
    gpu::Buffer<float> dS(size_t(H) * hd * hd);
    gpu::fill_bytes(dS.get(), 0, dS.size() * 4);
    gpu::Buffer<gpu::bf16_t> o(size_t(T * H * hd));
    poison(o);
    gpu::Buffer<uint8_t> ws(gpu::gla_workspace_bytes(T, H, hd));
    for (const auto& [t0, n] : {std::pair<int64_t, int64_t>{0, T1}, {T1, T - T1}}) {
      const gpu::bf16_t* base = dP.get() + t0 * ld;
      gpu::gla_chunked(base, base + H * hd, base + 2 * H * hd, ld, n, H, hd, dg.get(), float(tau), dS.get(),
                       o.get() + t0 * H * hd, H * hd, ws.get(), nullptr, engine);
    }
    const Mat o64 = ref::gla_chunked(q, k, v, gamma, tau, S64, ref::f64());
    const Mat obf = ref::gla_chunked(q, k, v, gamma, tau, Sbf, ref::peer());
    check_gate("lightning/gla/out", o64, obf, download_bf16(o, T, H * hd));
    check_gate("lightning/gla/state", states_as_mat(S64), states_as_mat(Sbf), download_f32(dS, int64_t(H) * hd, hd));
  }
}

TEST_CASE("gla_recurrent_rope: the bits of rope_qk then gla_recurrent, q and k left as they were", "[gla][rope][gpu]") {
  const int hd = 128, H = 5;
  std::vector<float> g32;
  for (double g : load_config(real_config()).lightning_decay()) g32.push_back(float(g));
  g32.resize(H);
  auto dg = gpu::to_device(g32);
  const ref::RopeTable tab = ref::rope_table(hd, 10000.0, ref::RopeAngles::Fp32);
  auto inv = gpu::to_device(tab.inv_freq32);
  auto wq = upload_bf16(bf16_round(Mat(randn(1, hd, 51, 0.5).array() + 1.0)));
  auto wk = upload_bf16(bf16_round(Mat(randn(1, hd, 52, 0.5).array() + 1.0)));
  const int64_t ld = 4 * H * hd;  // the Lightning projection row: q | k | v | z
  const float tau = float(1.0 / std::sqrt(double(hd)));
  // T = 1 at a long position (decode), a short piece at 0 and at 2M; with the norm and without
  for (const auto& [T, pos0] : {std::pair<int64_t, int64_t>{1, 70001}, {7, 0}, {3, 2000000}}) {
    for (const bool norm : {true, false}) {
      INFO("T = " << T << ", pos0 = " << pos0 << (norm ? ", qk-norm" : ", no norm"));
      const Mat P = bf16_round(randn(T, ld, 53 + uint64_t(T), 2.0));
      std::vector<float> s0;
      for (int h = 0; h < H; ++h) {
        const Mat s = randn(hd, hd, 60 + uint64_t(h));
        for (int64_t i = 0; i < s.size(); ++i) s0.push_back(float(s.data()[i]));
      }
      auto one = upload_bf16(P), two = upload_bf16(P);
      auto S1 = gpu::to_device(s0), S2 = gpu::to_device(s0);
      gpu::Buffer<gpu::bf16_t> o1(size_t(T * H * hd)), o2(size_t(T * H * hd));
      poison(o1);
      poison(o2);
      const gpu::bf16_t* nq = norm ? wq.get() : nullptr;
      const gpu::bf16_t* nk = norm ? wk.get() : nullptr;
      gpu::rope_qk(one.get(), ld, T, H, hd, nq, nk, 1e-6f, pos0, inv.get(), nullptr);
      gpu::gla_recurrent(one.get(), one.get() + H * hd, one.get() + 2 * H * hd, ld, T, H, hd, dg.get(), tau, S1.get(),
                         o1.get(), H * hd, nullptr);
      const gpu::GlaRope r{nq, nk, 1e-6f, pos0, inv.get()};
      gpu::gla_recurrent_rope(two.get(), two.get() + H * hd, two.get() + 2 * H * hd, ld, T, H, hd, r, dg.get(), tau,
                              S2.get(), o2.get(), H * hd, nullptr);
      CHECK((download_bf16(o1, T, H * hd) - download_bf16(o2, T, H * hd)).cwiseAbs().maxCoeff() == 0.0);
      CHECK(S1.download() == S2.download());
      CHECK((download_bf16(two, T, ld) - P).cwiseAbs().maxCoeff() == 0.0);  // q and k in memory as they were
      // the rotation did something (at position 0 without the norm it is the identity)
      if (norm || pos0 > 0) CHECK((download_bf16(one, T, ld) - P).cwiseAbs().maxCoeff() > 0.0);
    }
  }
}
