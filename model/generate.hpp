// Greedy generation, one loop for every backend (the CUDA runner's Runner::generate, the float64 reference's
// ref::generate, and through them `salasim run --decode` and `salasim ruler run`): prefill the prompt in pieces,
// then pick the argmax token and feed it back until a stop id or the token limit.
//
// Selections (needle-block recall): with record_selection, after the prefill and after each decode step the
// backend hands over, per sparse layer, the block selection of the LAST token it processed (the query at `pos`).
#pragma once
#include <algorithm>
#include <chrono>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <functional>
#include <vector>

namespace salasim {

// One sparse layer's selection for one query token.
struct LayerSelection {
  int layer = 0;        // model layer index
  int64_t pos = 0;      // absolute position of the query token
  bool dense = false;   // the layer ran dense for this token (sequence shorter than dense_len): every block visible
  int groups = 0;       // kv groups G
  int k_sel = 0;        // slots per group
  int64_t n_blocks = 0; // width of `scores` (blocks of the call's sequence)
  std::vector<int32_t> blocks;  // [G, k_sel] chosen block ids ascending, -1 in unused slots (empty when dense)
  std::vector<float> scores;    // [G, n_blocks] pooled block scores: +inf forced, -inf future (empty unless asked)
};

struct StepSelection {
  int64_t pos = 0;                   // the query token's position
  std::vector<LayerSelection> layers;  // one per sparse layer, in layer order
};

struct GenerateOptions {
  int64_t max_new = 128;             // tokens to generate at most (the first comes from the prefill's logits)
  std::vector<int32_t> stop;         // generation ends once one of these is generated (it is kept in `tokens`)
  int64_t piece = 0;                 // prompt tokens per prefill call (0: the whole prompt in one call)
  bool record_selection = false;     // fill Generation::selections
  bool selection_scores = false;     // ... with the pooled scores (for ranks)
  bool ahead = true;                 // a model that offers it runs its decode steps one ahead (below); false: never
  // Called after each prefill piece with (prompt tokens done, prompt length); returning false stops the
  // generation there (Generation::prefill_stopped), e.g. a time limit.
  std::function<bool(int64_t, int64_t)> on_prefill;
  // Called before each decode step with its index (0, 1, ...), e.g. to switch profiling on for the last steps.
  std::function<void(int64_t)> before_decode;
};

// One greedy decode step's result, for a model that picks the token itself (the CUDA runner's decode_ahead).
struct GreedyStep {
  int32_t token = 0;
  bool finite = true;  // every logit of the step was finite
};

struct Generation {
  std::vector<int32_t> tokens;        // generated ids, the stop id included when one was hit
  bool hit_stop = false;
  bool prefill_stopped = false;       // on_prefill asked to stop: no token was generated
  double prefill_s = 0;               // time to the first token's logits
  std::vector<double> token_s;        // per generated token: [0] = prefill_s, [i] = the decode step that produced token i
  std::vector<StepSelection> selections;  // [0] the last prompt token, then one per decode step (its input token)
  bool logits_finite = true;          // every logits vector seen was finite
};

// Index of the largest finite value (the lowest index among equals); clears *finite when a value is not finite.
template <class T>
int32_t greedy_token(const T* logits, int64_t n, bool* finite) {
  int32_t best = -1;
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(double(logits[i]))) {
      *finite = false;
      continue;
    }
    if (best < 0 || logits[i] > logits[best]) best = int32_t(i);
  }
  return best < 0 ? 0 : best;
}

// The loop. Model provides:
//   void begin_prefill(int64_t n);  L prefill_piece(const std::vector<int32_t>&);  L decode(int32_t);
//   std::vector<LayerSelection> last_selection(bool scores);   where L has data() and size() (logits [V])
// and is prepared by the caller for selection recording when o.record_selection. A model that can pick the greedy
// token itself and run a step ahead also provides
//   void decode_ahead(const int32_t* token);  GreedyStep decode_wait();
// (gpu/runner.hpp): then, unless selections are recorded (they are read between steps), the decode steps are
// enqueued one ahead of the step whose token is awaited, so the device never waits on the host between steps; each
// token's time is then the host time between two tokens' arrivals (the first: from its step's enqueue). The tokens
// are the same: the device applies greedy_token's rule.
template <class Model>
Generation generate_loop(Model& m, const std::vector<int32_t>& prompt, const GenerateOptions& o) {
  using clock = std::chrono::steady_clock;
  Generation g;
  const int64_t n = int64_t(prompt.size());
  const int64_t piece = o.piece > 0 ? o.piece : n;
  auto t0 = clock::now();
  m.begin_prefill(n);
  int32_t next = 0;
  for (int64_t done = 0; done < n;) {
    const int64_t len = std::min(piece, n - done);
    auto lg = m.prefill_piece(std::vector<int32_t>(prompt.begin() + done, prompt.begin() + done + len));
    done += len;
    if (done == n) next = greedy_token(lg.data(), int64_t(lg.size()), &g.logits_finite);
    if (o.on_prefill && !o.on_prefill(done, n) && done < n) {
      g.prefill_stopped = true;
      g.prefill_s = std::chrono::duration<double>(clock::now() - t0).count();
      return g;
    }
  }
  g.prefill_s = std::chrono::duration<double>(clock::now() - t0).count();
  auto record = [&] {
    if (!o.record_selection) return;
    StepSelection s;
    s.layers = m.last_selection(o.selection_scores);
    s.pos = s.layers.empty() ? 0 : s.layers.front().pos;
    g.selections.push_back(std::move(s));
  };
  record();
  if (o.max_new <= 0) return g;
  g.tokens.push_back(next);
  g.token_s.push_back(g.prefill_s);
  auto stops = [&](int32_t t) {
    for (int32_t s : o.stop)
      if (s == t) return true;
    return false;
  };
  if constexpr (requires(const int32_t* t) {
                  m.decode_ahead(t);
                  { m.decode_wait() } -> std::same_as<GreedyStep>;
                }) {
    if (o.ahead && !o.record_selection) {
      int64_t queued = 0;  // steps enqueued whose token has not been read
      auto enqueue = [&] {
        if (o.before_decode) o.before_decode(int64_t(g.tokens.size()) - 1 + queued);
        m.decode_ahead(g.tokens.size() == 1 && queued == 0 ? &next : nullptr);  // the first step: the prefill's token
        ++queued;
      };
      auto last = clock::now();
      g.hit_stop = stops(next);
      while (!g.hit_stop && int64_t(g.tokens.size()) < o.max_new) {
        while (queued < 2 && int64_t(g.tokens.size()) + queued < o.max_new) enqueue();
        const GreedyStep s = m.decode_wait();
        --queued;
        const auto now = clock::now();
        g.token_s.push_back(std::chrono::duration<double>(now - last).count());
        last = now;
        g.logits_finite = g.logits_finite && s.finite;
        g.tokens.push_back(s.token);
        g.hit_stop = stops(s.token);
      }
      for (; queued > 0; --queued) (void)m.decode_wait();  // a step fed the stop id: its token is not generated
      return g;
    }
  }
  while (!(g.hit_stop = stops(next)) && int64_t(g.tokens.size()) < o.max_new) {
    if (o.before_decode) o.before_decode(int64_t(g.tokens.size()) - 1);
    auto s0 = clock::now();
    auto lg = m.decode(next);
    next = greedy_token(lg.data(), int64_t(lg.size()), &g.logits_finite);
    g.token_s.push_back(std::chrono::duration<double>(clock::now() - s0).count());
    g.tokens.push_back(next);
    record();
  }
  return g;
}

}  // namespace salasim
