// model/generate.hpp's loop on toy models (no GPU): the loop that runs decode steps ahead must give the tokens,
// stop handling, times and finite flag of the synchronous loop, and must feed back exactly the tokens it generated.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "model/generate.hpp"
#include "tests/support/catch.hpp"

using namespace salasim;

namespace {

constexpr int kVocab = 11;

// The next token is a fixed function of the previous one; logits peak there (a tie at a higher index, to test the
// rule). `bad_at`: the step fed that token also shows a NaN logit.
struct Toy {
  int bad_at = -1;
  std::vector<int32_t> fed;  // every token given to decode, in order
  int64_t prompt_len = 0;
  static int32_t next_of(int32_t t) { return (t * 7 + 3) % kVocab; }
  std::vector<float> logits_after(int32_t t) const {
    std::vector<float> l(kVocab, 0.0f);
    const int32_t n = next_of(t);
    l[size_t(n)] = 5.0f;
    if (n + 1 < kVocab) l[size_t(n + 1)] = 5.0f;  // equal, higher index: loses
    if (t == bad_at) l[0] = std::numeric_limits<float>::quiet_NaN();
    return l;
  }
  void begin_prefill(int64_t n) { prompt_len = n; }
  std::vector<float> prefill_piece(const std::vector<int32_t>& p) { return logits_after(p.back()); }
  std::vector<float> decode(int32_t t) {
    fed.push_back(t);
    return logits_after(t);
  }
  std::vector<LayerSelection> last_selection(bool) const { return {}; }
};

// The same model, picking its own token and holding up to `depth` steps in flight (as the CUDA runner does).
struct ToyAhead : Toy {
  std::vector<GreedyStep> flight;
  int32_t last = -1;
  size_t most_in_flight = 0;
  void decode_ahead(const int32_t* t) {
    const int32_t in = t ? *t : last;
    REQUIRE(in >= 0);
    const std::vector<float> l = decode(in);
    bool finite = true;
    last = greedy_token(l.data(), int64_t(l.size()), &finite);
    flight.push_back({last, finite});
    most_in_flight = std::max(most_in_flight, flight.size());
  }
  GreedyStep decode_wait() {
    REQUIRE(!flight.empty());
    const GreedyStep s = flight.front();
    flight.erase(flight.begin());
    return s;
  }
};

}  // namespace

TEST_CASE("generate: the loop run ahead gives the synchronous loop's tokens, stops and flags", "[generate]") {
  const std::vector<int32_t> prompt = {4, 9, 2};
  for (int64_t max_new : {0, 1, 2, 3, 17}) {
    for (int stop : {-1, 3, 6, 10}) {
      for (int bad : {-1, 6}) {
        GenerateOptions o;
        o.max_new = max_new;
        o.piece = 2;
        if (stop >= 0) o.stop = {stop};
        Toy sync;
        sync.bad_at = bad;
        ToyAhead ahead;
        ahead.bad_at = bad;
        const Generation a = generate_loop(sync, prompt, o);
        const Generation b = generate_loop(ahead, prompt, o);
        INFO("max_new " << max_new << " stop " << stop << " bad " << bad);
        CHECK(a.tokens == b.tokens);
        CHECK(a.hit_stop == b.hit_stop);
        CHECK(a.token_s.size() == b.token_s.size());
        CHECK(a.logits_finite == b.logits_finite);
        CHECK(ahead.flight.empty());  // every step waited for
        CHECK(ahead.most_in_flight <= 2);
        if (max_new >= 3 && a.tokens.size() > 1) CHECK(ahead.most_in_flight == 2);  // it did run ahead
        // the synchronous loop feeds back every token but the last; the loop run ahead may also have fed the
        // stop id (the step after it was already enqueued), never anything past it
        const std::vector<int32_t> want(a.tokens.begin(), a.tokens.end() - (a.tokens.empty() ? 0 : 1));
        CHECK(sync.fed == want);
        if (a.hit_stop && ahead.fed.size() == a.tokens.size()) CHECK(ahead.fed == a.tokens);
        else CHECK(ahead.fed == want);
        // ahead = false, or recording selections: the synchronous loop
        o.ahead = false;
        ToyAhead off;
        off.bad_at = bad;
        CHECK(generate_loop(off, prompt, o).tokens == a.tokens);
        CHECK(off.most_in_flight == 0);
      }
    }
  }
}
