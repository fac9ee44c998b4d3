// The whole reference model: pieces equal one call, decode equals a longer prefill, logits are alive,
// and the bf16 peer differs from float64 by bf16-sized amounts.
#include <cmath>

#include "model/config.hpp"
#include "reference/model.hpp"
#include "scenarios/scenario.hpp"
#include "tests/support/catch.hpp"
#include "tests/support/paths.hpp"
#include "tests/support/random.hpp"
#include "tests/support/tolerances.hpp"

using namespace salasim;
using namespace salasim::ref;
using test::kFloat64Identity;

namespace {

// tiny cut to two layers (sparse, Lightning): every mechanism, half the cost of the 16K-capable tiny model
ModelConfig two_layer() {
  ModelConfig c = load_config(test::tiny_config());
  c.num_hidden_layers = 2;
  c.layers = {Mixer::Sparse, Mixer::Lightning};
  return c;
}

double tap_err(const Tap& a, const Tap& b, int64_t rows) {
  const int64_t per = a.numel() / a.shape[0];
  double num = 0, den = 0;
  for (int64_t i = 0; i < rows * per; ++i) {
    num += (a.data[size_t(i)] - b.data[size_t(i)]) * (a.data[size_t(i)] - b.data[size_t(i)]);
    den += b.data[size_t(i)] * b.data[size_t(i)];
  }
  return den == 0 ? std::sqrt(num) : std::sqrt(num / den);
}

// Prefill `pieces` then one decode step, vs one prefill of all tokens: the decode's logits and the
// prefill taps' common rows must agree.
void check_pieces_and_decode(const ModelConfig& c, int64_t N, std::vector<int64_t> pieces) {
  auto w = load_ref_weights(c, synthetic_weights(3));
  std::vector<int32_t> tokens = random_tokens(17, N + 1, c.vocab_size);
  std::vector<int32_t> prompt(tokens.begin(), tokens.end() - 1);

  RefModel one(c, w);
  TapMap taps_one;
  ref::TapRecorder rec_one{TapFilter::all(), &taps_one};
  Mat logits_one = one.prefill(tokens, &rec_one);

  RefModel split(c, w);
  TapMap taps_split;
  ref::TapRecorder rec_split{TapFilter::all(), &taps_split};
  split.begin_prefill(N);
  int64_t at = 0;
  for (int64_t n : pieces) {
    split.prefill_piece(std::vector<int32_t>(prompt.begin() + at, prompt.begin() + at + n), &rec_split);
    at += n;
  }
  REQUIRE(at == N);
  Mat logits_dec = split.decode(tokens.back(), &rec_split);

  INFO("N = " << N);
  CHECK(test::rel_err(logits_dec, logits_one) <= kFloat64Identity.value);
  int compared = 0;
  for (const auto& [name, t] : taps_split) {
    if (tap_phase(name) != "prefill" || t.integer) continue;
    const Tap& o = taps_one.at(name);
    if (t.shape.size() < 2 || t.shape[0] != N || o.shape[0] != N + 1) continue;  // row-per-token taps
    INFO(name);
    if (tap_kind(name) == "sparse/select/scores") {  // +-inf (forced / future blocks) must match exactly
      const int64_t per = t.numel() / t.shape[0];
      double worst = 0;
      int64_t inf_mismatch = 0;
      for (int64_t i = 0; i < N * per; ++i) {
        const double a = t.data[size_t(i)], b = o.data[size_t(i)];
        if (std::isinf(a) || std::isinf(b)) inf_mismatch += a != b;
        else worst = std::max(worst, std::abs(a - b) / std::max(std::abs(b), 1e-300));
      }
      CHECK(inf_mismatch == 0);
      CHECK(worst <= kFloat64Identity.value);
      continue;
    }
    CHECK(tap_err(t, o, N) <= kFloat64Identity.value);
    ++compared;
  }
  CHECK(compared > 20);
  // the selections of the common rows agree exactly
  for (const auto& [name, t] : taps_split)
    if (t.integer && tap_phase(name) == "prefill") {
      const Tap& o = taps_one.at(name);
      const int64_t per = t.numel() / t.shape[0];
      CHECK(std::equal(t.data.begin(), t.data.begin() + N * per, o.data.begin()));
    }
}

}  // namespace

TEST_CASE("model: pieces equal one call and decode equals a longer prefill (dense, N < 6144)", "[model][reference]") {
  check_pieces_and_decode(two_layer(), 300, {100, 1, 63, 136});
}

TEST_CASE("model: pieces equal one call and decode equals a longer prefill (sparse, N >= 8192)", "[model][reference]") {
  check_pieces_and_decode(two_layer(), 8200, {4096, 37, 4067});
}

TEST_CASE("model: the dense/sparse rule follows the prompt's total length, not each piece", "[model][reference]") {
  const ModelConfig c = two_layer();
  auto w = load_ref_weights(c, synthetic_weights(3));
  RefModel m(c, w);
  TapMap taps;
  ref::TapRecorder rec{TapFilter{{"layer_00/sparse/select/blocks"}}, &taps};
  m.begin_prefill(8192);
  std::vector<int32_t> toks = random_tokens(5, 8192, c.vocab_size);
  m.prefill_piece(std::vector<int32_t>(toks.begin(), toks.begin() + 100), &rec);  // 100 < dense_len, still sparse
  REQUIRE(taps.count("/prefill/layer_00/sparse/select/blocks"));
  CHECK(taps.at("/prefill/layer_00/sparse/select/blocks").shape[0] == 100);
  RefModel d(c, w);
  TapMap dt;
  ref::TapRecorder drec{TapFilter{{"layer_00/sparse/select/blocks"}}, &dt};
  d.prefill(std::vector<int32_t>(toks.begin(), toks.begin() + 8191), &drec);  // 8191 < 8192: dense
  CHECK(dt.empty());
  d.decode(toks[8191], &drec);  // p + 1 = 8192: sparse
  CHECK(dt.count("/decode_0000/layer_00/sparse/select/blocks"));
}

TEST_CASE("model: tiny logits are finite and change with the input", "[model][reference]") {
  const ModelConfig c = load_config(test::tiny_config());
  auto w = load_ref_weights(c, synthetic_weights(1));
  RefModel a(c, w), b(c, w);
  std::vector<int32_t> t1 = random_tokens(1, 200, c.vocab_size), t2 = t1;
  t2[50] = (t2[50] + 1) % c.vocab_size;
  Mat la = a.prefill(t1), lb = b.prefill(t2);
  REQUIRE(la.cols() == c.vocab_size);
  CHECK(la.allFinite());
  CHECK(lb.allFinite());
  const double rms = la.norm() / std::sqrt(double(la.size()));
  CHECK(rms > 0.1);  // O(1) logits, as the synthetic scales intend
  CHECK(rms < 10);
  CHECK(test::rel_err(lb, la) > 1e-6);  // one token 150 positions back changes the last logits
  Mat la2 = a.decode(3), lb2 = b.decode(3);
  CHECK(la2.allFinite());
  CHECK(test::rel_err(la2, la) > 1e-6);
}

TEST_CASE("model: synthetic weights keep activations O(1) through the released 32-layer map", "[model][reference]") {
  // The released depth and layer map (24 Lightning, 8 sparse; residual scale 1.4/sqrt(32)) on the tiny widths: the
  // synthetic scales are set per tensor from its fan-in, so depth is what could make the residual stream drift.
  ModelConfig c = load_config(test::tiny_config());
  const ModelConfig real = load_config(test::real_config());
  c.layers = real.layers;
  c.num_hidden_layers = real.num_hidden_layers;
  REQUIRE(c.n_layers(Mixer::Lightning) == 24);
  REQUIRE(c.n_layers(Mixer::Sparse) == 8);
  RefModel m(c, load_ref_weights(c, synthetic_weights(1)));
  TapMap taps;
  auto branch = [&](int l) { return std::string(c.layers[size_t(l)] == Mixer::Sparse ? "sparse" : "lightning") + "/o_proj/out"; };
  TapFilter filter{{"final/logits"}};
  for (int l = 0; l < c.num_hidden_layers; ++l)
    for (const std::string& k : {std::string("residual/h"), std::string("mlp/out"), branch(l)})
      filter.patterns.push_back(layer_dir(l) + "/" + k);
  ref::TapRecorder rec{filter, &taps};
  m.prefill(random_tokens(3, 300, c.vocab_size), &rec);
  auto rms = [](const Tap& t) {
    double s = 0;
    for (double v : t.data) s += v * v;
    return std::sqrt(s / double(t.data.size()));
  };
  int seen = 0;
  for (int l = 0; l < c.num_hidden_layers; ++l) {
    const std::string P = "/prefill/" + layer_dir(l) + "/";
    const double h = rms(taps.at(P + "residual/h"));
    const double mlp = rms(taps.at(P + "mlp/out"));
    const double mix = rms(taps.at(P + branch(l)));
    INFO("layer " << l << ": residual RMS " << h << ", mixer branch " << mix << ", MLP branch " << mlp);
    CHECK(h > 0.5);  // the stream starts at RMS 1 (embedding x scale_emb) and neither collapses ...
    CHECK(h < 4);    // ... nor grows past a few units over 32 scaled residual adds
    CHECK(mix > 0.05);
    CHECK(mix < 5);
    CHECK(mlp > 0.05);
    CHECK(mlp < 5);
    ++seen;
  }
  CHECK(seen == 32);
  const double logits = rms(taps.at("/prefill/final/logits"));
  CHECK(logits > 0.1);
  CHECK(logits < 10);
}

TEST_CASE("peer: differs from float64 on each tap by a bf16-sized amount", "[peer][reference]") {
  const ModelConfig c = load_config(test::tiny_config());
  auto w = load_ref_weights(c, synthetic_weights(2));
  std::vector<int32_t> toks = random_tokens(9, 400, c.vocab_size);
  TapMap t64, tbf;
  RefModel m64(c, w, RefOptions{f64()}), mbf(c, w, RefOptions{peer()});
  ref::TapRecorder r64{TapFilter::all(), &t64}, rbf{TapFilter::all(), &tbf};
  m64.prefill(toks, &r64);
  mbf.prefill(toks, &rbf);
  m64.decode(5, &r64);
  mbf.decode(5, &rbf);
  int checked = 0;
  for (const auto& [name, t] : t64) {
    if (t.integer) continue;
    const double e = tap_err(tbf.at(name), t, t.shape[0]);
    INFO(name << ": relative RMS error " << e);
    CHECK(e >= test::kPeerLow.value);
    CHECK(e <= test::kPeerHigh.value);
    ++checked;
  }
  CHECK(checked > 60);
}

TEST_CASE("peer: each op alone differs from float64 by a bf16-sized amount", "[peer][reference]") {
  const int hd = 128, H = 4, T = 130;
  Mat x = test::randn(T, H * hd, 1), z = test::randn(T, H * hd, 2), W = test::randn(64, H * hd, 3, 0.05);
  std::vector<double> gamma = {-0.5, -0.1, -0.02, -0.004};
  auto band = [](const Mat& a, const Mat& b) {
    const double e = test::rel_err(a, b);
    INFO("relative error " << e);
    CHECK(e >= test::kPeerLow.value);
    CHECK(e <= test::kPeerHigh.value);
  };
  band(linear(x, W, peer()), linear(x, W, f64()));
  band(rmsnorm(x, Vec::Ones(H * hd), 1e-6, peer()), rmsnorm(x, Vec::Ones(H * hd), 1e-6, f64()));
  band(gate(x, z, peer()), gate(x, z, f64()));
  band(mlp_act(x, z, peer()), mlp_act(x, z, f64()));
  RopeTable rt = rope_table(hd, 1e4, RopeAngles::Fp32);
  Mat a = x, b = x;
  rope(a, 100, rt, peer());
  rope(b, 100, rt, f64());
  band(a, b);
  std::vector<Mat> S1(H, Mat::Zero(hd, hd)), S2 = S1;
  band(gla_chunked(x, z, x, gamma, 0.088, S1, peer()), gla_chunked(x, z, x, gamma, 0.088, S2, f64()));
  band(compress_k(x, T, 32, 16, peer()), compress_k(x, T, 32, 16, f64()));
}

TEST_CASE("model: teacher forcing attends with the given selection and records its own", "[model][reference]") {
  ModelConfig c = two_layer();
  auto w = load_ref_weights(c, synthetic_weights(4));
  const std::vector<int32_t> toks = random_tokens(8, 8200, c.vocab_size);
  TapMap own;
  {
    RefModel m(c, w);
    ref::TapRecorder rec(TapFilter{{"layer_00/sparse/"}}, &own);
    m.prefill(toks, &rec);
  }
  // force a different (valid) selection on the last query: drop its highest chosen unforced block for block 1
  TapMap forced = own;
  Tap& b = forced.at("/prefill/layer_00/sparse/select/blocks");
  const int64_t per = b.shape[1] * b.shape[2], last = (b.shape[0] - 1) * per;
  REQUIRE(b.data[size_t(last + 1)] > 1);  // slot 1 holds an unforced block: replace it by block 1
  b.data[size_t(last + 1)] = 1;
  std::sort(b.data.begin() + last, b.data.begin() + last + b.shape[2]);
  TapMap got;
  RefOptions o;
  o.forced_selection = &forced;
  RefModel m(c, w, o);
  ref::TapRecorder rec(TapFilter{{"layer_00/sparse/"}}, &got);
  m.prefill(toks, &rec);
  CHECK(got.at("/prefill/layer_00/sparse/select/blocks").data == own.at("/prefill/layer_00/sparse/select/blocks").data);
  const Tap& a0 = own.at("/prefill/layer_00/sparse/attn/out");
  const Tap& a1 = got.at("/prefill/layer_00/sparse/attn/out");
  const int64_t row = a0.numel() / a0.shape[0];
  // every other query is unchanged (up to GEMM regrouping inside its query tile); the forced one moved
  Tap head0 = a0, head1 = a1, last0, last1;
  head0.shape[0] = head1.shape[0] = a0.shape[0] - 1;
  head0.data.resize(head0.data.size() - size_t(row));
  head1.data.resize(head1.data.size() - size_t(row));
  last0 = Tap{{1, row}, {a0.data.end() - row, a0.data.end()}};
  last1 = Tap{{1, row}, {a1.data.end() - row, a1.data.end()}};
  CHECK(tap_err(head1, head0, head0.shape[0]) <= kFloat64Identity.value);
  CHECK(tap_err(last1, last0, 1) > 1e-6);
}
