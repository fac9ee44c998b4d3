// Scenario -> reference run with taps and phase timings.
#include "scenarios/run_reference.hpp"

#include <algorithm>
#include <chrono>

namespace salasim {

RefRun run_reference(const Scenario& s, const ref::RefOptions& opt, const TapFilter& filter,
                     std::shared_ptr<const ref::RefWeights> weights) {
  TapMap taps;
  TapMapSink sink(&taps);
  RefRun run = run_reference_to(s, opt, filter, sink, std::move(weights));
  run.taps = std::move(taps);
  return run;
}

RefRun run_reference_to(const Scenario& s, const ref::RefOptions& opt, const TapFilter& filter, TapSink& sink,
                        std::shared_ptr<const ref::RefWeights> weights) {
  if (!weights) weights = ref::load_ref_weights(s.cfg, s.weights);
  ref::RefModel m(s.cfg, weights, opt);
  RefRun run;
  ref::TapRecorder rec{filter, &sink, "prefill"};
  ref::TapRecorder* taps = filter.any() ? &rec : nullptr;
  using clock = std::chrono::steady_clock;

  auto t0 = clock::now();
  const int64_t n = int64_t(s.prompt.size());
  const int64_t piece = s.prefill_chunk > 0 ? s.prefill_chunk : n;
  m.begin_prefill(n);
  ref::Mat lg;
  for (int64_t i = 0; i < n; i += piece) {
    std::vector<int32_t> part(s.prompt.begin() + i, s.prompt.begin() + std::min(n, i + piece));
    lg = m.prefill_piece(part, taps);
  }
  run.logits.push_back(lg);
  run.times.push_back({"prefill", n, std::chrono::duration<double>(clock::now() - t0).count()});

  t0 = clock::now();
  for (int32_t tok : s.decode_tokens) run.logits.push_back(m.decode(tok, taps));
  if (!s.decode_tokens.empty())
    run.times.push_back({"decode", int64_t(s.decode_tokens.size()), std::chrono::duration<double>(clock::now() - t0).count()});
  return run;
}

}  // namespace salasim
