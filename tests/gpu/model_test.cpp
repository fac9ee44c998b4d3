// The whole tiny model on the GPU against the float64 reference: prefill at 1K (dense) and 16K (sparse, in four
// runner chunks) then 64 decode steps; every tap within tolerance, selections teacher-forced (reference/model.hpp).
#include "compare/report.hpp"
#include "gpu/runner.hpp"
#include "model/config.hpp"
#include "reference/model.hpp"
#include "scenarios/scenario.hpp"
#include "tests/gpu/gpu_support.hpp"
#include "tests/support/paths.hpp"

using namespace salasim;

namespace {

void run_case(int64_t T, int decode_steps, int64_t chunk) {
  const ModelConfig c = load_config(test::tiny_config());
  const WeightSource w = synthetic_weights(1);
  auto rw = ref::load_ref_weights(c, w);
  const std::vector<int32_t> prompt = random_tokens(3, T, c.vocab_size);
  const std::vector<int32_t> gen = random_tokens(4, decode_steps, c.vocab_size);

  TapMap R, P, G;
  {
    ref::RefModel m(c, rw);
    ref::TapRecorder rec(TapFilter::all(), &R);
    m.prefill(prompt, &rec);
    for (int32_t t : gen) m.decode(t, &rec);
  }
  {
    ref::RefOptions o;
    o.num = ref::peer();
    o.forced_selection = &R;
    ref::RefModel m(c, rw, o);
    ref::TapRecorder rec(TapFilter::all(), &P);
    m.prefill(prompt, &rec);
    for (int32_t t : gen) m.decode(t, &rec);
  }
  {
    gpu::RunnerOptions o;
    o.max_context = T + decode_steps;
    o.chunk = chunk;
    o.taps = true;
    gpu::Runner r(c, w, o);
    TapRecorder rec{TapFilter::all(), &G};
    r.begin_prefill(T);
    r.prefill_piece(prompt, &rec, &R);
    for (int32_t t : gen) r.decode(t, &rec, &R);
  }
  CompareReport rep = compare_taps(R, &P, G);
  INFO("T = " << T << "\n" << format_report(rep, PrintOptions{true}));
  CHECK(rep.pass());
  CHECK(rep.rows.size() > 100);
}

}  // namespace

TEST_CASE("model: tiny at T = 1K then 64 decode steps, every tap within tolerance", "[model][gpu]") {
  run_case(1024, 64, 1024);
}

TEST_CASE("model: tiny at T = 16K in four chunks then 64 decode steps, every tap within tolerance", "[model][gpu]") {
  run_case(16384, 64, 4096);
}
