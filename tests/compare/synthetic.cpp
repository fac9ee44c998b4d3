// Synthetic tap sets (see synthetic.hpp). The perturbation sizes model the precisions of the tolerance rows:
// bf16 taps: peer = bf16(r (1 + a)), a ~ U(+-2^-20) (an fp32 accumulation over a few hundred terms);
//            backend = bf16(r (1 + d)), d ~ U(+-2^-9) (an upstream error of its own, then its own rounding).
// fp32 taps: both carry an independent input error of bf16 size, U(+-2^-9), rounded to fp32.
#include "tests/compare/synthetic.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <random>

#include "compare/tolerance.hpp"
#include "model/bf16.hpp"
#include "model/config.hpp"
#include "model/windows.hpp"
#include "tests/support/paths.hpp"

namespace salasim::test {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Gen {
  std::mt19937_64 rng;
  Synthetic out;
  int64_t order = 0;

  double uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); }
  double normal() { return std::normal_distribution<double>(0.0, 1.0)(rng); }

  double round_to(const std::string& stored, double x) { return stored == "fp32" ? round_fp32(x) : round_bf16(x); }

  // Adds one tap to all three maps; `ref_value(i)` draws reference element i.
  void add(const std::string& name, std::vector<int64_t> shape, const std::function<double(int64_t)>& ref_value) {
    const std::string stored = tolerance_row(tolerance_table(), tap_kind(name)).stored;
    const double peer_rel = stored == "fp32" ? 0x1p-9 : 0x1p-20, backend_rel = 0x1p-9;
    Tap r{shape, {}, false, order++};
    Tap p = r, b = r;
    const int64_t n = r.numel();
    r.data.resize(size_t(n)), p.data.resize(size_t(n)), b.data.resize(size_t(n));
    for (int64_t i = 0; i < n; ++i) {
      const double v = ref_value(i);
      r.data[size_t(i)] = v;
      p.data[size_t(i)] = std::isfinite(v) ? round_to(stored, v * (1 + uniform(-peer_rel, peer_rel))) : v;
      b.data[size_t(i)] = std::isfinite(v) ? round_to(stored, v * (1 + uniform(-backend_rel, backend_rel))) : v;
    }
    out.ref[name] = std::move(r);
    out.peer[name] = std::move(p);
    out.backend[name] = std::move(b);
  }

  // A float tap of Gaussian values with an RMS drawn in [0.37, 4.5]; never zero.
  void gaussian(const std::string& name, std::vector<int64_t> shape) {
    const double scale = std::exp(uniform(-1.0, 1.5));
    add(name, std::move(shape), [&](int64_t) {
      const double v = scale * normal();
      return v != 0 ? v : scale;
    });
  }

  // Block ids of each map selected from that map's own scores, as each side would do.
  void blocks(const std::string& name, const std::string& scores_name, int64_t T, int64_t G, int64_t NB, int64_t K) {
    for (TapMap* m : {&out.ref, &out.peer, &out.backend}) {
      const Tap& s = m->at(scores_name);
      Tap t{{T, G, K}, std::vector<double>(size_t(T * G * K)), true, order};
      for (int64_t q = 0; q < T; ++q)
        for (int64_t g = 0; g < G; ++g)
          select_top_k(&s.data[size_t((q * G + g) * NB)], NB, (out.first_pos + q) / 64, K,
                       &t.data[size_t((q * G + g) * K)]);
      (*m)[name] = std::move(t);
    }
    ++order;
  }
};

}  // namespace

void select_top_k(const double* scores, int64_t nb, int64_t qb, int64_t k, double* out) {
  std::vector<int64_t> ids(static_cast<size_t>(nb));
  std::iota(ids.begin(), ids.end(), 0);
  const int64_t take = std::min(k, nb);
  std::partial_sort(ids.begin(), ids.begin() + take, ids.end(), [&](int64_t a, int64_t b) {
    return scores[a] != scores[b] ? scores[a] > scores[b] : a < b;
  });
  std::sort(ids.begin(), ids.begin() + take);
  int64_t j = 0;
  for (int64_t i = 0; i < take; ++i)
    if (ids[size_t(i)] <= qb) out[j++] = double(ids[size_t(i)]);
  for (; j < k; ++j) out[j] = -1;
}

Synthetic make_synthetic(uint64_t seed, int tokens) {
  const ModelConfig c = load_config(tiny_config());
  const int64_t T = tokens, D = c.hidden_size, I = c.intermediate_size, V = c.vocab_size;
  const int64_t Hl = c.lightning_nh, dl = c.lightning_head_dim, H = c.num_attention_heads, G = c.num_key_value_heads;
  const int64_t d = c.head_dim;
  const SparseConfig& sp = c.sparse;
  Gen g{std::mt19937_64(seed), {}, 0};
  g.out.first_pos = sp.dense_len + 61;  // a chunk past dense_len: every query is sparse
  const int64_t L = g.out.first_pos + T;  // keys after this chunk
  const int64_t n1 = n_windows(L, sp.kernel_size, sp.kernel_stride), n2 = n_windows(L, sp.k2_kernel(), sp.k2_stride());
  const int64_t NB = (L + sp.block_size - 1) / sp.block_size, K = sp.k_sel();

  const std::string ph = "/prefill/";
  g.gaussian(ph + "embed/out", {T, D});
  for (int l = 0; l < int(c.layers.size()); ++l) {
    const std::string p = ph + layer_dir(l) + "/";
    g.gaussian(p + "input_norm/out", {T, D});
    if (c.layers[size_t(l)] == Mixer::Lightning) {
      for (const char* t : {"proj/q", "proj/k", "proj/v"}) g.gaussian(p + "lightning/" + t, {T, Hl, dl});
      g.gaussian(p + "lightning/proj/z", {T, Hl * dl});
      for (const char* t : {"qk_rope/q", "qk_rope/k", "gla/out"}) g.gaussian(p + "lightning/" + t, {T, Hl, dl});
      g.gaussian(p + "lightning/gla/state", {Hl, dl, dl});
      for (const char* t : {"o_norm/out", "gate/out"}) g.gaussian(p + "lightning/" + t, {T, Hl * dl});
      g.gaussian(p + "lightning/o_proj/out", {T, D});
    } else {
      g.gaussian(p + "sparse/proj/q", {T, H, d});
      g.gaussian(p + "sparse/proj/k", {T, G, d});
      g.gaussian(p + "sparse/proj/v", {T, G, d});
      g.gaussian(p + "sparse/proj/g", {T, H * d});
      g.gaussian(p + "sparse/compress_k/k1", {n1, G, d});
      g.gaussian(p + "sparse/compress_k/k2", {n2, G, d});
      // [T, G, NB]: +inf for block 0 and the 33 local blocks, -inf past the query's block, else a log-normal score
      // (sums of 16 heads' probabilities spread over decades).
      g.add(p + "sparse/select/scores", {T, G, NB}, [&](int64_t i) {
        const int64_t b = i % NB, qb = (g.out.first_pos + i / (G * NB)) / sp.block_size;
        if (b < sp.init_blocks || (b >= qb - sp.local_blocks() && b <= qb)) return kInf;
        if (b > qb) return -kInf;
        return std::exp(1.5 * g.normal());
      });
      g.blocks(p + "sparse/select/blocks", p + "sparse/select/scores", T, G, NB, K);
      g.gaussian(p + "sparse/attn/out", {T, H, d});
      g.gaussian(p + "sparse/gate/out", {T, H * d});
      g.gaussian(p + "sparse/o_proj/out", {T, D});
    }
    g.gaussian(p + "residual/mid", {T, D});
    g.gaussian(p + "post_norm/out", {T, D});
    g.gaussian(p + "mlp/act", {T, I});
    g.gaussian(p + "mlp/out", {T, D});
    g.gaussian(p + "residual/h", {T, D});
  }
  g.gaussian(ph + "final/norm", {T, D});
  g.gaussian(ph + "final/logits", {T, V});
  return std::move(g.out);
}

}  // namespace salasim::test
