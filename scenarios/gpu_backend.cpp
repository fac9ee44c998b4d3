// The GPU backend of `salasim verify` (CUDA builds only; the CPU build links gpu_backend_stub.cpp): the scenario
// on gpu::Runner, same pieces, same decode tokens, same tap names, teacher-forced selections when asked, and the
// hand-over of one layer's inputs and outputs for long-context spot checks.
#include <chrono>

#include "gpu/runner.hpp"
#include "scenarios/backend.hpp"
#include "scenarios/no_gpu.hpp"

namespace salasim {

namespace {

constexpr int64_t kChunk = 16384;

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
    const std::vector<int64_t> cuts = prefill_cuts(s);
    for (size_t i = 0; i + 1 < cuts.size(); ++i)
      r.prefill_piece(std::vector<int32_t>(s.prompt.begin() + cuts[i], s.prompt.begin() + cuts[i + 1]), taps, forced);
    out.times.push_back({"prefill", n, std::chrono::duration<double>(clock::now() - t0).count()});
    t0 = clock::now();
    for (int32_t t : s.decode_tokens) r.decode(t, taps, forced);
    if (!s.decode_tokens.empty())
      out.times.push_back(
          {"decode", int64_t(s.decode_tokens.size()), std::chrono::duration<double>(clock::now() - t0).count()});
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
    const std::vector<int64_t> cuts = prefill_cuts(s, {req.window_start});
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
      SpotInput in = spot_input_from_taps(c, taps, req, l, n, req.window_start, "gpu");
      if (in.mixer == Mixer::Sparse) {
        const int64_t G = c.num_key_value_heads, hd = c.head_dim;
        const std::vector<gpu::bf16_t> K = r.kv_cache(l, false), V = r.kv_cache(l, true);
        in.sparse.k_cache = SpotTensor::from_bf16({G, n, hd}, K.data());
        in.sparse.v_cache = SpotTensor::from_bf16({G, n, hd}, V.data());
      } else {
        const int64_t H = c.lightning_nh, hd = c.lightning_head_dim;
        in.lightning.state0 = SpotTensor::from_f32({H, hd, hd}, state0[size_t(l)].data());
        const std::vector<float> s1 = r.gla_state(l);
        in.lightning.state1 = SpotTensor::from_f32({H, hd, hd}, s1.data());
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
    if (why) *why = "no GPU: " + plain_no_gpu_reason(reason);
    return nullptr;
  }
  auto b = std::make_unique<GpuBackend>();
  b->device = gpu::device_name();
  return b;
}

}  // namespace salasim
