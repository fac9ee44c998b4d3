// The peer backend: the reference in bf16-emulating mode, run like any backend. It stands in for the GPU on a
// machine without one, for the harness's own tests, and as the model of what the GPU hands over for spot checks.
#include <fmt/format.h>

#include <algorithm>

#include "model/error.hpp"
#include "scenarios/backend.hpp"

namespace salasim {

namespace {

using ref::Mat;

// Rows of a [T, ...] tap as a SpotTensor [rows.size(), ...].
SpotTensor tap_rows(const Tap& t, const std::vector<int64_t>& rows) {
  const int64_t per = t.numel() / t.shape[0];
  SpotTensor s;
  s.shape = t.shape;
  s.shape[0] = int64_t(rows.size());
  for (int64_t r : rows) s.data.insert(s.data.end(), t.data.begin() + r * per, t.data.begin() + (r + 1) * per);
  return s;
}

std::vector<int64_t> range(int64_t a, int64_t b) {
  std::vector<int64_t> v;
  for (int64_t i = a; i < b; ++i) v.push_back(i);
  return v;
}

SpotTensor whole(const Tap& t) { return tap_rows(t, range(0, t.shape[0])); }

// Per-group caches [len, hd] -> [G, len, hd].
SpotTensor caches(const std::vector<Mat>& per_group, int64_t len) {
  SpotTensor s;
  s.shape = {int64_t(per_group.size()), len, per_group.at(0).cols()};
  for (const Mat& m : per_group)
    for (int64_t i = 0; i < len * m.cols(); ++i) s.data.push_back(float(m.data()[i]));
  return s;
}

SpotTensor states(const std::vector<Mat>& per_head) {
  SpotTensor s;
  s.shape = {int64_t(per_head.size()), per_head.at(0).rows(), per_head.at(0).cols()};
  for (const Mat& m : per_head) s.data.insert(s.data.end(), m.data(), m.data() + m.size());
  return s;
}

struct PeerBackend : Backend {
  std::shared_ptr<const ref::RefWeights> w;

  std::string name() const override { return "peer (bf16-emulating reference)"; }

  std::shared_ptr<const ref::RefWeights> weights(const Scenario& s) const {
    return w ? w : ref::load_ref_weights(s.cfg, s.weights);
  }

  BackendRun run(const Scenario& s, const TapFilter& filter, const TapMap* forced) override {
    ref::RefOptions opt;
    opt.num = ref::peer();
    opt.forced_selection = forced;
    RefRun r = run_reference(s, opt, filter, weights(s));
    return BackendRun{std::move(r.taps), std::move(r.times), "CPU"};
  }

  std::vector<SpotInput> spot_inputs(const Scenario& s, const SpotRequest& req) override;
};

std::vector<SpotInput> PeerBackend::spot_inputs(const Scenario& s, const SpotRequest& req) {
  const ModelConfig& c = s.cfg;
  const int64_t n = int64_t(s.prompt.size());
  const std::vector<std::string> patterns = spot_tap_patterns(c, req, n);
  ref::RefOptions opt;
  opt.num = ref::peer();
  ref::RefModel m(c, weights(s), opt);
  TapMap taps;
  ref::TapRecorder rec{TapFilter{patterns}, &taps, "prefill"};

  // The scenario's pieces, with one more cut at window_start so the GLA state entering it can be copied there
  // (pieces give the one-call result: reference/model.hpp).
  std::vector<int64_t> cuts;
  const int64_t piece = s.prefill_chunk > 0 ? s.prefill_chunk : n;
  for (int64_t i = 0; i < n; i += piece) cuts.push_back(i);
  cuts.push_back(req.window_start);
  cuts.push_back(n);
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  std::vector<std::vector<Mat>> state0(size_t(c.num_hidden_layers));
  m.begin_prefill(n);
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    if (cuts[i] == req.window_start) state0 = m.gla_state;
    m.prefill_piece(std::vector<int32_t>(s.prompt.begin() + cuts[i], s.prompt.begin() + cuts[i + 1]), &rec);
  }

  std::vector<SpotInput> out;
  for (int l : req.layers) {
    SpotInput in;
    in.layer = l;
    in.mixer = c.layers[size_t(l)];
    in.len = n;
    in.positions = req.positions;
    const std::string P = "/prefill/" + layer_dir(l);
    auto tap = [&](const std::string& rel) -> const Tap& {
      auto it = taps.find(P + rel);
      if (it == taps.end())
        fail("peer spot inputs: layer {} recorded no '{}' (a sparse layer runs dense below dense_len {}: the prompt "
             "has {} tokens)",
             l, rel, c.sparse.dense_len, n);
      return it->second;
    };
    if (in.mixer == Mixer::Sparse) {
      SparseSpot& sp = in.sparse;
      sp.q = tap_rows(tap("/sparse/proj/q"), req.positions);
      sp.blocks = tap_rows(tap("/sparse/select/blocks"), req.positions);
      sp.scores = tap_rows(tap("/sparse/select/scores"), req.positions);
      sp.attn = tap_rows(tap("/sparse/attn/out"), req.positions);
      sp.k1 = whole(tap("/sparse/compress_k/k1"));
      sp.k2 = whole(tap("/sparse/compress_k/k2"));
      sp.k_cache = caches(m.kv[size_t(l)].K, n);
      sp.v_cache = caches(m.kv[size_t(l)].V, n);
    } else {
      LightningSpot& lt = in.lightning;
      lt.window_start = req.window_start;
      lt.state0 = states(state0[size_t(l)]);
      lt.q = tap_rows(tap("/lightning/qk_rope/q"), req.positions);
      lt.k = tap_rows(tap("/lightning/qk_rope/k"), range(req.window_start, n));
      lt.v = tap_rows(tap("/lightning/proj/v"), range(req.window_start, n));
      lt.out = tap_rows(tap("/lightning/gla/out"), req.positions);
      lt.state1 = states(m.gla_state[size_t(l)]);
    }
    out.push_back(std::move(in));
  }
  return out;
}

}  // namespace

std::unique_ptr<Backend> make_peer_backend(std::shared_ptr<const ref::RefWeights> weights) {
  auto b = std::make_unique<PeerBackend>();
  b->w = std::move(weights);
  return b;
}

}  // namespace salasim
