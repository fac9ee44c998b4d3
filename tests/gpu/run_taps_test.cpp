// `salasim run --dump-taps --taps --rows` on the device: the runner records through the row-choosing sink into a tap
// dump, and that file's taps equal the reference's same taps and rows within the tolerance table (selections teacher-
// forced, as verify runs the GPU), compared the way `salasim diff` compares it with a `ref --dump-taps` file.
#include <filesystem>

#include "compare/dump_align.hpp"
#include "compare/report.hpp"
#include "compare/row_select_sink.hpp"
#include "gpu/runner.hpp"
#include "model/config.hpp"
#include "model/tap_select.hpp"
#include "reference/model.hpp"
#include "scenarios/scenario.hpp"
#include "tests/gpu/gpu_support.hpp"
#include "tests/support/paths.hpp"

using namespace salasim;

namespace {

// The reference (float64) and the peer (bf16, the reference's selections) of `prompt`, every tap, dumped to files as
// `salasim ref --dump-taps` and `ref --peer --dump-taps` write them.
void reference_dumps(const ModelConfig& c, const WeightSource& w, const std::vector<int32_t>& prompt,
                     const std::vector<int32_t>& gen, const std::string& dir, TapMap* R) {
  auto rw = ref::load_ref_weights(c, w);
  TapMap P;
  {
    ref::RefModel m(c, rw);
    ref::TapRecorder rec(TapFilter::all(), R);
    m.prefill(prompt, &rec);
    for (int32_t t : gen) m.decode(t, &rec);
  }
  {
    ref::RefOptions o;
    o.num = ref::peer();
    o.forced_selection = R;
    ref::RefModel m(c, rw, o);
    ref::TapRecorder rec(TapFilter::all(), &P);
    m.prefill(prompt, &rec);
    for (int32_t t : gen) m.decode(t, &rec);
  }
  DumpInfo info;
  info.backend = "reference";
  write_taps(dir + "/ref.h5", *R, info);
  info.backend = "peer";
  write_taps(dir + "/peer.h5", P, info);
}

void run_case(int64_t T, int64_t chunk, const std::string& taps, const std::string& rows, int decode_steps) {
  const ModelConfig c = load_config(test::tiny_config());
  const WeightSource w = synthetic_weights(1);
  const std::vector<int32_t> prompt = random_tokens(3, T, c.vocab_size);
  const std::vector<int32_t> gen = random_tokens(4, decode_steps, c.vocab_size);
  const std::string dir = test::scratch_dir("gpu_run_taps_" + std::to_string(T));
  TapMap R;
  reference_dumps(c, w, prompt, gen, dir, &R);

  const std::vector<std::string> patterns = split_patterns(taps);
  check_patterns(patterns, tap_catalog(c, T, decode_steps, true));
  double peak = 0;
  int written = 0;
  {
    gpu::RunnerOptions o;
    o.max_context = T + decode_steps;
    o.chunk = chunk;
    o.taps = true;
    gpu::Runner r(c, w, o);
    DumpInfo info;
    info.backend = "cuda";
    info.extra = {{kTapSelectionAttr, taps}, {kRowSelectionAttr, rows}};
    TapFileSink file(dir + "/run.h5", info, true);
    RowSelectSink sink(file, parse_row_list(rows).resolve(T), false);
    TapRecorder rec{TapFilter{patterns}, nullptr, "prefill", &sink};
    r.begin_prefill(T);
    r.prefill_piece(prompt, &rec, &R);
    for (int32_t t : gen) r.decode(t, &rec, &R);
    written = sink.close();
    peak = sink.peak_held_bytes();
  }
  const TapDump run = read_taps(dir + "/run.h5"), ref = read_taps(dir + "/ref.h5"), peer = read_taps(dir + "/peer.h5");
  const std::vector<int64_t> want_rows = parse_row_list(rows).resolve(T);
  CHECK(int(run.taps.size()) == written);
  for (const auto& [name, t] : run.taps) {
    INFO(name);
    CHECK(TapFilter{patterns}.match(name));
    if (tap_phase(name) == "prefill" && !whole_sequence_tap(name)) CHECK(run.rows.at(name) == want_rows);
  }
  const AlignedDumps al = align_dumps(ref, &peer, run);
  CHECK(al.notes.empty());
  CHECK(al.cut > 0);
  const CompareReport rep = compare_taps(al.ref, &*al.peer, al.backend);
  INFO("T = " << T << ", taps " << taps << ", rows " << rows << ", recorder held at most " << peak << " bytes\n"
              << format_report(rep, PrintOptions{true}));
  CHECK(rep.pass());
  CHECK(int(rep.rows.size()) == written);
  std::filesystem::remove_all(dir);
}

}  // namespace

TEST_CASE("run taps: chosen taps and rows of a dense prefill equal the reference's", "[model][gpu][run_taps]") {
  run_case(1024, 512, "layer_*/residual/h,layer_01/lightning/gla/,/prefill/final/norm", "0,100,511:514,-1", 2);
}

TEST_CASE("run taps: chosen taps and rows of a sparse prefill in chunks equal the reference's",
          "[model][gpu][run_taps]") {
  // The selection's scores go with its blocks: the comparison allows a different pick only inside the tie band the
  // reference's scores define (without them it is exact, and bf16 near-ties on the GPU pick otherwise).
  run_case(9000, 4096,
           "layer_*/sparse/select/blocks,layer_*/sparse/select/scores,layer_*/sparse/attn/out,layer_*/mlp/out,"
           "layer_*/sparse/compress_k",
           "0:4,6143:6146,-2:", 1);
}
