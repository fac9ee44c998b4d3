// The peer backend: the reference in bf16-emulating mode, run like any backend. It stands in for the GPU on a
// machine without one, for the harness's own tests, and as the model of what the GPU hands over for spot checks.
#include "scenarios/backend.hpp"

namespace salasim {

namespace {

using ref::Mat;

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
  // (pieces give the one-call result: reference/model.hpp). Every piece is recorded: taps start at position 0.
  const std::vector<int64_t> cuts = prefill_cuts(s, {req.window_start});
  std::vector<std::vector<Mat>> state0(size_t(c.num_hidden_layers));
  m.begin_prefill(n);
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    if (cuts[i] == req.window_start) state0 = m.gla_state;
    m.prefill_piece(std::vector<int32_t>(s.prompt.begin() + cuts[i], s.prompt.begin() + cuts[i + 1]), &rec);
  }

  std::vector<SpotInput> out;
  for (int l : req.layers) {
    SpotInput in = spot_input_from_taps(c, taps, req, l, n, 0, "peer");
    if (in.mixer == Mixer::Sparse) {
      in.sparse.k_cache = caches(m.kv[size_t(l)].K, n);
      in.sparse.v_cache = caches(m.kv[size_t(l)].V, n);
    } else {
      in.lightning.state0 = states(state0[size_t(l)]);
      in.lightning.state1 = states(m.gla_state[size_t(l)]);
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
