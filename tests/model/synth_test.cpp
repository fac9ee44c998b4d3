// Synthetic weights: a pure function of (seed, tensor, index), pinned values, and the statistics of a large draw.
#include <cmath>
#include <vector>

#include "model/config.hpp"
#include "model/inventory.hpp"
#include "model/synth.hpp"
#include "model/weights.hpp"
#include "tests/support/catch.hpp"
#include "tests/support/paths.hpp"

using namespace salasim;

TEST_CASE("synth: values are pinned (the GPU generator must reproduce these bits)", "[synth]") {
  // Changing the formula changes these; the GPU test compares its kernel against the same function.
  const uint64_t key = synth_key(1, fnv1a64("model.layers.0.self_attn.q_proj.weight"));
  CHECK(fnv1a64("") == 0xcbf29ce484222325ull);
  CHECK(fnv1a64("a") == 0xaf63dc4c8601ec8cull);
  CHECK(mix64(0) == 0);
  CHECK(mix64(1) == 0x5692161d100b05e5ull);
  // unit values are exact multiples of 2^-23 in [-1, 1)
  for (uint64_t i = 0; i < 1000; ++i) {
    float u = synth_unit(key, i);
    CHECK(u >= -1.0f);
    CHECK(u < 1.0f);
    CHECK(std::ldexp(double(u), 23) == std::round(std::ldexp(double(u), 23)));
  }
}

TEST_CASE("synth: element i depends only on (seed, tensor, i)", "[synth]") {
  ModelConfig c = load_config(test::tiny_config());
  auto inv = tensor_inventory(c);
  const TensorSpec& t = *find_tensor(inv, "model.layers.1.self_attn.v_proj.weight");
  WeightSource w = synthetic_weights(7);
  std::vector<double> all = weight_tensor(w, t);
  std::vector<double> rows(3 * size_t(t.cols()));
  weight_rows(w, t, 100, 3, rows.data());  // random access equals the sequential fill
  for (size_t i = 0; i < rows.size(); ++i) CHECK(rows[i] == all[100 * size_t(t.cols()) + i]);
  CHECK(weight_tensor(synthetic_weights(7), t) == all);   // deterministic
  CHECK(weight_tensor(synthetic_weights(8), t) != all);   // seed matters
  const TensorSpec& k = *find_tensor(inv, "model.layers.1.self_attn.k_proj.weight");
  std::vector<double> other = weight_tensor(w, k);
  int same = 0;
  for (size_t i = 0; i < other.size(); ++i) same += other[i] == all[i];
  CHECK(same < int(all.size() / 50));  // different tensors draw different values (bf16 collisions only)
  std::vector<uint16_t> bits(size_t(t.numel()));
  weight_rows_bf16(w, t, 0, t.rows(), bits.data());
  for (size_t i = 0; i < bits.size(); ++i) CHECK(double(float_from_bf16(bits[i])) == all[i]);
}

TEST_CASE("synth: norm weights are one", "[synth]") {
  ModelConfig c = load_config(test::tiny_config());
  auto inv = tensor_inventory(c);
  for (const char* n : {"model.norm.weight", "model.layers.1.self_attn.q_norm.weight", "model.layers.2.input_layernorm.weight"})
    for (double v : weight_tensor(synthetic_weights(3), *find_tensor(inv, n))) CHECK(v == 1.0);
}

TEST_CASE("synth: a large draw is uniform with the asked standard deviation", "[synth]") {
  const uint64_t key = synth_key(42, fnv1a64("stats"));
  const int64_t n = 1 << 22;
  const int bins = 64;
  std::vector<int64_t> hist(bins, 0);
  double sum = 0, sum2 = 0, lag = 0;
  float prev = 0;
  for (int64_t i = 0; i < n; ++i) {
    float u = synth_unit(key, uint64_t(i));
    sum += u;
    sum2 += double(u) * u;
    lag += double(u) * prev;
    prev = u;
    hist[size_t((u + 1.0f) * 0.5f * bins)]++;
  }
  const double mean = sum / n, var = sum2 / n - mean * mean, se = std::sqrt(1.0 / 3.0 / n);
  // Uniform on [-1, 1): mean 0, variance 1/3; bounds are 6 standard errors of the estimate.
  CHECK(std::abs(mean) < 6 * se);
  CHECK(std::abs(var - 1.0 / 3.0) < 6 * std::sqrt(4.0 / 45.0 / n));
  CHECK(std::abs(lag / n) < 6 * (1.0 / 3.0) / std::sqrt(double(n)));  // no lag-1 correlation
  double chi2 = 0, expect = double(n) / bins;
  for (int64_t h : hist) chi2 += (h - expect) * (h - expect) / expect;
  // chi-square with 63 degrees of freedom: mean 63, sd ~11.2; 63 + 6 sd
  CHECK(chi2 < 63 + 6 * std::sqrt(2.0 * 63));

  // bf16 weights keep the inventory's std (amp = std * sqrt 3)
  ModelConfig c = load_config(test::tiny_config());
  auto inv = tensor_inventory(c);
  const TensorSpec& t = *find_tensor(inv, "model.layers.0.self_attn.o_proj.weight");
  std::vector<double> w = weight_tensor(synthetic_weights(1), t);
  double s2 = 0;
  for (double v : w) s2 += v * v;
  double sd = std::sqrt(s2 / double(w.size()));
  CHECK(std::abs(sd / t.init_std - 1) < 6 * std::sqrt(0.2 / double(w.size())) + 1.0 / 256);  // + bf16 rounding
}
