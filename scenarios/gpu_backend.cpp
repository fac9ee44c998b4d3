// The GPU backend of `salasim verify` (CUDA builds only; the CPU build links gpu_backend_stub.cpp): the scenario
// on gpu::Runner, same pieces, same decode tokens, same tap names, teacher-forced selections when asked, and the
// hand-over of one layer's inputs and outputs for long-context spot checks.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "gpu/runner.hpp"
#include "model/error.hpp"
#include "scenarios/backend.hpp"

namespace salasim {

namespace {

constexpr int64_t kChunk = 16384;

SpotTensor tap_rows(const Tap& t, int64_t first_row, const std::vector<int64_t>& rows) {
  const int64_t per = t.numel() / t.shape[0];
  SpotTensor s;
  s.shape = t.shape;
  s.shape[0] = int64_t(rows.size());
  for (int64_t r : rows) {
    const int64_t i = r - first_row;
    if (i < 0 || i >= t.shape[0]) fail("gpu spot inputs: row {} outside the recorded window", r);
    for (int64_t k = 0; k < per; ++k) s.data.push_back(float(t.data[size_t(i * per + k)]));
  }
  return s;
}

SpotTensor whole(const Tap& t) {
  SpotTensor s;
  s.shape = t.shape;
  s.data.assign(t.data.begin(), t.data.end());
  return s;
}

// The scenario's prefill pieces, with extra cuts (window starts).
std::vector<int64_t> cuts_of(const Scenario& s, std::vector<int64_t> extra) {
  const int64_t n = int64_t(s.prompt.size()), piece = s.prefill_chunk > 0 ? s.prefill_chunk : n;
  std::vector<int64_t> cuts = std::move(extra);
  for (int64_t i = 0; i < n; i += piece) cuts.push_back(i);
  cuts.push_back(n);
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  return cuts;
}

struct GpuBackend : Backend {
  std::string device;

  std::string name() const override { return "gpu (" + device + ")"; }

  BackendRun run(const Scenario& s, const TapFilter& filter, const TapMap* forced) override {
    const int64_t n = int64_t(s.prompt.size());
    gpu::RunnerOptions o;
    o.max_context = n + int64_t(s.decode_tokens.size());
    o.chunk = kChunk;
    o.taps = filter.any();
    gpu::Runner r(s.cfg, s.weights, o);
    BackendRun out;
    out.device = device;
    TapRecorder rec{filter, &out.taps, "prefill"};
    TapRecorder* taps = filter.any() ? &rec : nullptr;
    using clock = std::chrono::steady_clock;
    auto t0 = clock::now();
    r.begin_prefill(n);
    const std::vector<int64_t> cuts = cuts_of(s, {});
    for (size_t i = 0; i + 1 < cuts.size(); ++i)
      r.prefill_piece(std::vector<int32_t>(s.prompt.begin() + cuts[i], s.prompt.begin() + cuts[i + 1]), taps, forced);
    out.times.push_back({"prefill", n, std::chrono::duration<double>(clock::now() - t0).count()});
    t0 = clock::now();
    for (int32_t t : s.decode_tokens) r.decode(t, taps, forced);
    if (!s.decode_tokens.empty())
      out.times.push_back({"decode", int64_t(s.decode_tokens.size()), std::chrono::duration<double>(clock::now() - t0).count()});
    return out;
  }

  // Prefill up to req.window_start without taps, then the window with taps of the requested layers only, so the
  // hand-over stays a few GB even at 2M tokens.
  std::vector<SpotInput> spot_inputs(const Scenario& s, const SpotRequest& req) override {
    const ModelConfig& c = s.cfg;
    const int64_t n = int64_t(s.prompt.size());
    const std::vector<std::string> patterns = spot_tap_patterns(c, req, n);
    gpu::RunnerOptions o;
    o.max_context = n;
    o.chunk = kChunk;
    o.taps = true;
    gpu::Runner r(c, s.weights, o);
    TapMap taps;
    TapRecorder rec{TapFilter{patterns}, &taps, "prefill"};
    std::vector<std::vector<float>> state0(size_t(c.num_hidden_layers));
    const std::vector<int64_t> cuts = cuts_of(s, {req.window_start});
    r.begin_prefill(n);
    for (size_t i = 0; i + 1 < cuts.size(); ++i) {
      const bool window = cuts[i] >= req.window_start;
      if (cuts[i] == req.window_start)
        for (int l : req.layers)
          if (c.layers[size_t(l)] == Mixer::Lightning) state0[size_t(l)] = r.gla_state(l);
      r.prefill_piece(std::vector<int32_t>(s.prompt.begin() + cuts[i], s.prompt.begin() + cuts[i + 1]),
                      window ? &rec : nullptr);
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
        if (it == taps.end()) fail("gpu spot inputs: layer {} recorded no '{}' (prompt of {} tokens)", l, rel, n);
        return it->second;
      };
      const int64_t w0 = req.window_start;
      if (in.mixer == Mixer::Sparse) {
        SparseSpot& sp = in.sparse;
        const int64_t G = c.num_key_value_heads, hd = c.head_dim;
        sp.q = tap_rows(tap("/sparse/proj/q"), w0, req.positions);
        sp.blocks = tap_rows(tap("/sparse/select/blocks"), w0, req.positions);
        sp.scores = tap_rows(tap("/sparse/select/scores"), w0, req.positions);
        sp.attn = tap_rows(tap("/sparse/attn/out"), w0, req.positions);
        sp.k1 = whole(tap("/sparse/compress_k/k1"));
        sp.k2 = whole(tap("/sparse/compress_k/k2"));
        const std::vector<gpu::bf16_t> K = r.kv_cache(l, false), V = r.kv_cache(l, true);
        sp.k_cache = SpotTensor::from_bf16({G, n, hd}, K.data());
        sp.v_cache = SpotTensor::from_bf16({G, n, hd}, V.data());
      } else {
        LightningSpot& lt = in.lightning;
        const int64_t H = c.lightning_nh, hd = c.lightning_head_dim;
        lt.window_start = w0;
        lt.state0 = SpotTensor::from_f32({H, hd, hd}, state0[size_t(l)].data());
        lt.q = tap_rows(tap("/lightning/qk_rope/q"), w0, req.positions);
        lt.k = whole(tap("/lightning/qk_rope/k"));
        lt.v = whole(tap("/lightning/proj/v"));
        lt.out = tap_rows(tap("/lightning/gla/out"), w0, req.positions);
        const std::vector<float> s1 = r.gla_state(l);
        lt.state1 = SpotTensor::from_f32({H, hd, hd}, s1.data());
      }
      out.push_back(std::move(in));
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<Backend> make_gpu_backend(std::string* why) {
  std::string reason;
  if (!gpu::available(&reason)) {
    if (why) *why = "no GPU: " + reason;
    return nullptr;
  }
  auto b = std::make_unique<GpuBackend>();
  b->device = gpu::device_name();
  return b;
}

}  // namespace salasim
