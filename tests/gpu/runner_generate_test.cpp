// Runner::generate and Runner::last_selection on the tiny-short model: generation equals the hand-written greedy
// loop and survives reset(); the last token's selection equals the last row of the select/blocks (and scores) taps
// of the same calls, and reads as dense below dense_len.
#include <algorithm>

#include "gpu/common.hpp"
#include "gpu/runner.hpp"
#include "model/config.hpp"
#include "model/error.hpp"
#include "model/tap_recorder.hpp"
#include "scenarios/scenario.hpp"
#include "tests/gpu/gpu_support.hpp"
#include "tests/support/paths.hpp"

using namespace salasim;

namespace {

int32_t argmax(const std::vector<float>& v) { return int32_t(std::max_element(v.begin(), v.end()) - v.begin()); }

}  // namespace

TEST_CASE("generate: Runner::generate is the greedy loop, and reset starts afresh", "[generate][gpu]") {
  const ModelConfig c = load_config(test::source_path("scenarios/models/tiny-short.json"));
  const WeightSource w = synthetic_weights(1);
  const std::vector<int32_t> prompt = random_tokens(3, 1500, c.vocab_size);
  gpu::RunnerOptions o;
  o.max_context = 1600;
  o.chunk = 704;
  o.selection_scores = true;
  gpu::Runner r(c, w, o);
  std::vector<int32_t> manual;
  {
    r.begin_prefill(int64_t(prompt.size()));
    std::vector<float> lg;
    for (size_t i = 0; i < prompt.size(); i += 704)
      lg = r.prefill_piece(std::vector<int32_t>(prompt.begin() + int64_t(i),
                                                prompt.begin() + int64_t(std::min(prompt.size(), i + 704))));
    for (int k = 0; k < 12; ++k) {
      manual.push_back(argmax(lg));
      if (k + 1 < 12) lg = r.decode(manual.back());
    }
  }
  r.reset();
  GenerateOptions go;
  go.max_new = 12;
  go.record_selection = true;
  go.selection_scores = true;
  const Generation g = r.generate(prompt, go);
  CHECK(g.tokens == manual);
  CHECK(g.token_s.size() == 12);
  CHECK(g.logits_finite);
  REQUIRE(g.selections.size() == 12);  // the last prompt token + 11 tokens fed back
  CHECK(g.selections[0].pos == 1499);
  CHECK(g.selections[11].pos == 1510);
  r.reset();
  go.stop = {manual[3]};
  const Generation s = r.generate(prompt, go);
  CHECK(s.hit_stop);
  CHECK(s.tokens == std::vector<int32_t>(manual.begin(), manual.begin() + 4));
}

// Without selections to record, Runner::generate enqueues each decode step before the token of the step before is
// back (decode_ahead / decode_wait, the token picked on the device): the tokens must be those of the synchronous
// loop, past dense_len and through a stop id, and the runner's state must say what it consumed.
TEST_CASE("generate: steps enqueued ahead give the synchronous loop's tokens", "[generate][gpu]") {
  const ModelConfig c = load_config(test::source_path("scenarios/models/tiny-short.json"));
  const WeightSource w = synthetic_weights(2);
  const std::vector<int32_t> prompt = random_tokens(4, 1010, c.vocab_size);  // decode crosses dense_len (1024)
  gpu::RunnerOptions o;
  o.max_context = 1100;
  o.chunk = 512;
  gpu::Runner r(c, w, o);
  GenerateOptions go;
  go.max_new = 40;
  go.record_selection = false;
  std::vector<int32_t> manual;
  {
    r.begin_prefill(int64_t(prompt.size()));
    std::vector<float> lg;
    for (size_t i = 0; i < prompt.size(); i += 512)
      lg = r.prefill_piece(std::vector<int32_t>(prompt.begin() + int64_t(i),
                                                prompt.begin() + int64_t(std::min(prompt.size(), i + 512))));
    for (int k = 0; k < 40; ++k) {
      manual.push_back(argmax(lg));
      if (k + 1 < 40) lg = r.decode(manual.back());
    }
  }
  CHECK_THROWS_AS(r.decode_ahead(nullptr), Error);  // the last step was synchronous: no greedy token on the device
  r.reset();
  const Generation g = r.generate(prompt, go);
  CHECK(g.tokens == manual);
  CHECK(g.token_s.size() == 40);
  CHECK(g.logits_finite);
  CHECK(r.len() == int64_t(prompt.size()) + 39);  // every generated token but the last fed back
  CHECK(r.decode_enqueue_s().size() == 39);
  // a stop id: the step after it was already enqueued, so the runner consumed the stop id too
  r.reset();
  go.stop = {manual[5]};
  const size_t first = size_t(std::find(manual.begin(), manual.end(), manual[5]) - manual.begin());
  const Generation s = r.generate(prompt, go);
  CHECK(s.hit_stop);
  CHECK(s.tokens == std::vector<int32_t>(manual.begin(), manual.begin() + int64_t(first) + 1));
  CHECK(r.len() <= int64_t(prompt.size() + s.tokens.size()));
  CHECK(r.len() >= int64_t(prompt.size() + s.tokens.size()) - 1);
  // the pair by hand: two steps in flight, the synchronous calls refused meanwhile
  r.reset();
  r.begin_prefill(int64_t(prompt.size()));
  for (size_t i = 0; i < prompt.size(); i += 512)
    r.prefill_piece(
        std::vector<int32_t>(prompt.begin() + int64_t(i), prompt.begin() + int64_t(std::min(prompt.size(), i + 512))));
  CHECK_THROWS_AS(r.decode_wait(), Error);  // nothing in flight
  r.decode_ahead(&manual[0]);
  r.decode_ahead(nullptr);
  CHECK_THROWS_AS(r.decode(manual[1]), Error);
  CHECK_THROWS_AS(r.last_selection(false), Error);
  CHECK(r.decode_wait().token == manual[1]);
  CHECK(r.decode_wait().token == manual[2]);
  const int32_t bad = c.vocab_size;
  CHECK_THROWS_AS(r.decode_ahead(&bad), Error);  // an id outside the vocabulary, refused on the host
}

// RunnerOptions::graph: each decode step captured and launched as one CUDA graph. The logits of the synchronous
// steps and the tokens of the steps enqueued ahead must be those of the kernels launched one by one, bit for bit,
// across dense_len (the selection's kernels join the step) and the compressed-key windows that complete every 16
// and 64 tokens (compress_k launches only then): every topology a decode has, each executable kept and updated.
TEST_CASE("generate: decode steps as CUDA graphs give the bits of kernels launched one by one", "[generate][gpu]") {
  const ModelConfig c = load_config(test::source_path("scenarios/models/tiny-short.json"));
  const WeightSource w = synthetic_weights(3);
  const std::vector<int32_t> prompt = random_tokens(6, 1000, c.vocab_size);  // decode crosses dense_len (1024)
  const int steps = 80;
  auto run = [&](bool graph, bool ahead, gpu::DecodeGraphStats* st) {
    gpu::RunnerOptions o;
    o.max_context = 1100;
    o.chunk = 512;
    o.graph = graph;
    gpu::Runner r(c, w, o);
    std::vector<std::vector<float>> logits;
    GenerateOptions go;
    go.max_new = steps;
    go.ahead = ahead;
    if (ahead) {
      const Generation g = r.generate(prompt, go);
      CHECK(g.logits_finite);
      for (int32_t t : g.tokens) logits.push_back({float(t)});
    } else {  // the synchronous steps: their logits, every one
      r.begin_prefill(int64_t(prompt.size()));
      std::vector<float> lg;
      for (size_t i = 0; i < prompt.size(); i += 512)
        lg = r.prefill_piece(std::vector<int32_t>(prompt.begin() + int64_t(i),
                                                  prompt.begin() + int64_t(std::min(prompt.size(), i + 512))));
      int32_t t = argmax(lg);
      for (int k = 0; k < steps; ++k) {
        logits.push_back(r.decode(t));
        t = argmax(logits.back());
      }
    }
    *st = r.decode_graph_stats();
    return logits;
  };
  for (const bool ahead : {false, true}) {
    INFO("ahead " << ahead);
    gpu::DecodeGraphStats off, on;
    const auto want = run(false, ahead, &off);
    const auto got = run(true, ahead, &on);
    REQUIRE(got.size() == want.size());
    for (size_t k = 0; k < got.size(); ++k) {
      INFO("step " << k);
      CHECK(got[k] == want[k]);
    }
    CHECK(off.steps() == 0);
    const int64_t n = ahead ? steps - 1 : steps;  // ahead: the last token is never fed back
    CHECK(on.steps() == n);
    CHECK(on.instantiated >= 2);      // the dense and the sparse step differ
    CHECK(on.instantiated * 4 <= n);  // a handful of topologies, each kept: most steps only update
  }
}

TEST_CASE("generate: last_selection is the selection the sparse layers used for the last token", "[generate][gpu]") {
  const ModelConfig c = load_config(test::source_path("scenarios/models/tiny-short.json"));
  const WeightSource w = synthetic_weights(1);
  const int64_t T = 1500;
  const std::vector<int32_t> prompt = random_tokens(5, T, c.vocab_size);
  gpu::RunnerOptions o;
  o.max_context = T + 4;
  o.chunk = 704;  // the last token sits in a chunk of its own call
  o.taps = true;
  o.selection_scores = true;
  gpu::Runner r(c, w, o);
  TapMap taps;
  TapRecorder rec{TapFilter{{"layer_00/sparse/select/", "layer_03/sparse/select/"}}, &taps};
  r.begin_prefill(T);
  for (int64_t i = 0; i < T; i += 704)
    r.prefill_piece(std::vector<int32_t>(prompt.begin() + i, prompt.begin() + std::min(T, i + 704)), &rec);
  auto check_against_taps = [&](const std::string& phase) {
    const std::vector<LayerSelection> sel = r.last_selection(true);
    REQUIRE(sel.size() == 2);
    for (const LayerSelection& s : sel) {
      INFO(phase << " layer " << s.layer);
      CHECK_FALSE(s.dense);
      CHECK(s.pos == r.len() - 1);
      const Tap& b = taps.at("/" + phase + "/layer_0" + std::to_string(s.layer) + "/sparse/select/blocks");
      const size_t per = size_t(s.groups * s.k_sel);
      REQUIRE(b.data.size() >= per);
      for (size_t i = 0; i < per; ++i) CHECK(s.blocks[i] == int32_t(b.data[b.data.size() - per + i]));
      const Tap& sc = taps.at("/" + phase + "/layer_0" + std::to_string(s.layer) + "/sparse/select/scores");
      const size_t width = size_t(s.groups * s.n_blocks);
      REQUIRE(s.scores.size() == width);
      for (size_t i = 0; i < width; ++i) CHECK(double(s.scores[i]) == sc.data[sc.data.size() - width + i]);
    }
  };
  check_against_taps("prefill");
  r.decode(prompt[7], &rec);
  check_against_taps("decode_0000");
  // below dense_len (1024) the sparse layers run dense: no selection to report
  gpu::Runner d(c, w, o);
  d.begin_prefill(600);
  d.prefill_piece(std::vector<int32_t>(prompt.begin(), prompt.begin() + 600));
  for (const LayerSelection& s : d.last_selection(true)) {
    CHECK(s.dense);
    CHECK(s.blocks.empty());
  }
}

// Every kernel of a step is launched with programmatic dependent launch (gpu/pdl.cuh): each may be scheduled
// while the one before still runs and must wait before it touches memory. Recording every tap downloads after each op
// and synchronizes, so the tapped run has no kernel overlap at all; an untapped run has it everywhere. A missing wait
// would make the untapped run read a buffer early, so its logits would differ from the tapped run's. Same kernels,
// same inputs: the two must agree bit for bit, through a chunked sparse prefill (1300 > dense_len 1024) and decode.
// The untapped run also takes the decode step's fused kernels (gemv_residual, gemv_gate, gla_recurrent_rope), the
// tapped one the separate kernels; runs with some or none of the fusions must give the same bits too.
TEST_CASE("decode: logits of back-to-back kernels equal those of a sync after every op, bit for bit",
          "[generate][gpu]") {
  const ModelConfig c = load_config(test::source_path("scenarios/models/tiny-short.json"));
  const WeightSource w = synthetic_weights(7);
  const std::vector<int32_t> prompt = random_tokens(11, 1300, c.vocab_size);
  gpu::RunnerOptions o;
  o.max_context = 1400;
  o.chunk = 512;
  auto run = [&](bool tapped, bool pdl = true, gpu::DecodeFusion fusion = {}) {
    gpu::RunnerOptions ro = o;
    ro.pdl = pdl;
    ro.fusion = fusion;
    gpu::Runner r(c, w, ro);
    TapMap m;
    TapRecorder rec;
    rec.filter = TapFilter::all();
    rec.out = &m;
    TapRecorder* t = tapped ? &rec : nullptr;
    std::vector<std::vector<float>> logits;
    r.begin_prefill(int64_t(prompt.size()));
    for (size_t i = 0; i < prompt.size(); i += 512)
      logits.push_back(r.prefill_piece(std::vector<int32_t>(prompt.begin() + int64_t(i),
                                                            prompt.begin() + int64_t(std::min(prompt.size(), i + 512))),
                                       t));
    for (int k = 0; k < 24; ++k) {
      m.clear();  // the tapped run keeps one step's taps at a time
      logits.push_back(r.decode(argmax(logits.back()), t));
    }
    return logits;
  };
  const auto synced = run(true), overlapped = run(false);
  const auto ordinary = run(false, false);  // ordinary launches: what `salasim run --pdl off` measures against
  // the decode step's fusions one by one (`salasim run --fuse`): the untapped run above took them all
  const auto residual_only = run(false, true, gpu::DecodeFusion{true, false, false});
  const auto unfused = run(false, true, gpu::DecodeFusion{false, false, false});
  REQUIRE(synced.size() == overlapped.size());
  REQUIRE(ordinary.size() == overlapped.size());
  REQUIRE(residual_only.size() == overlapped.size());
  REQUIRE(unfused.size() == overlapped.size());
  for (size_t i = 0; i < synced.size(); ++i) {
    INFO("call " << i << " (3 prefill pieces, then decode steps)");
    CHECK(synced[i] == overlapped[i]);
    CHECK(ordinary[i] == overlapped[i]);
    CHECK(residual_only[i] == overlapped[i]);
    CHECK(unfused[i] == overlapped[i]);
  }
}
