// verify's peer mode compares every tap as the reference and the peer produce it (scenarios/verify.hpp
// run_truth_streaming): on the short scenario its report and its golden check equal, number for number, what the full
// runs give (a thinned or padded golden fails alike: the streaming run knows every tap it made), and the progress
// cost model adds up to the scenario's work.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "compare/source_hash.hpp"
#include "scenarios/golden.hpp"
#include "scenarios/progress.hpp"
#include "scenarios/verify.hpp"
#include "tests/compare/same_report.hpp"
#include "tests/scenarios/verify_support.hpp"
#include "tests/support/catch.hpp"
#include "tests/support/paths.hpp"

using namespace salasim;

TEST_CASE("verify: comparing taps as they come gives the full runs' report and golden check", "[verify][stream]") {
  const test::ShortRun& r = test::short_run();
  const std::string shown = "tests/golden/tiny-short.h5";
  const Golden g = read_golden(test::source_path(shown));

  struct Event {
    int64_t pos0, rows;
    int layer;
    std::string phase;
  };
  std::vector<Event> events[2];  // each run appends from its own thread
  PairOptions opt;
  opt.on_layer = [&events](bool peer, const ref::RefModel& m, int layer, int64_t rows) {
    events[peer].push_back({m.len, rows, layer, m.phase});
  };
  const StreamedTruth st = run_truth_streaming(r.s, r.w, golden_keep(g, r.s), opt);

  test::check_same_reports(st.result.report, compare_taps(r.truth.ref, &r.truth.peer, r.truth.peer));
  CHECK(st.result.report.pass());
  CHECK(st.result.kept_error.empty());

  // The streaming run keeps the golden's taps only, yet knows the whole tap set it made: names, shapes and order.
  const GoldenTruth whole = golden_truth(r.truth, r.s), streamed = golden_truth(st.result, r.s);
  auto same_headers = [](const TapHeaders& made, const TapHeaders& want) {
    REQUIRE(made.size() == want.size());
    for (const auto& [name, h] : want) {
      INFO(name);
      REQUIRE(made.count(name));
      CHECK(made.at(name).shape == h.shape);
      CHECK(made.at(name).integer == h.integer);
      CHECK(made.at(name).order == h.order);
    }
  };
  same_headers(streamed.ref_made, whole.ref_made);
  same_headers(streamed.peer_made, whole.peer_made);
  CHECK(streamed.ref.size() == g.taps.size());  // data of the golden's taps alone

  // The committed golden passes both ways alike; thinned to one tap, or with a tap the reference does not record, it
  // fails both ways alike, the streaming check naming the same missing and extra taps.
  const SourceHash h = gpu_source_hash();
  Golden thin = g, padded = g;
  const std::string kept = "/prefill/layer_03/sparse/attn/out", extra = "/decode_0000/layer_01/lightning/gla/state";
  thin.taps = {{kept, g.taps.at(kept)}};
  thin.meta.manifest = tap_shapes(thin.taps);
  padded.taps[extra] = g.taps.at("/decode_0003/layer_01/lightning/gla/state");
  padded.meta.manifest = tap_shapes(padded.taps);
  for (const Golden* gold : std::vector<const Golden*>{&g, &thin, &padded}) {
    const GoldenCheck full = check_golden(*gold, r.s, r.truth, h, shown);
    const GoldenCheck cut = check_golden(*gold, r.s, streamed, h, shown);
    INFO(format_golden_check(cut, *gold, shown));
    test::check_same_reports(cut.report, full.report);
    CHECK(cut.pass() == (gold == &g));
    CHECK(cut.pass() == full.pass());
    CHECK(cut.expected_taps == full.expected_taps);
    CHECK(cut.made.missing == full.made.missing);
    CHECK(cut.made.extra == full.made.extra);
    CHECK(cut.made.reshaped == full.made.reshaped);
    CHECK(format_golden_check(cut, *gold, shown) == format_golden_check(full, *gold, shown));
  }
  CHECK(check_golden(thin, r.s, streamed, h, shown).made.missing.size() == g.taps.size() - 1);
  CHECK(check_golden(padded, r.s, streamed, h, shown).made.extra == std::vector<std::string>{extra});

  // Every layer of every prefill piece and decode step reported once per run; fed to the progress line, they make
  // the whole job, as its last line says.
  const int64_t pieces = int64_t(prefill_cuts(r.s).size()) - 1;
  char* text = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  {
    Progress p(r.s, {"reference", "peer"}, out, false);
    for (int run = 0; run < 2; ++run) {
      CHECK(int64_t(events[run].size()) == (pieces + r.s.decode_steps) * r.s.cfg.num_hidden_layers);
      for (const Event& e : events[run]) p.layer_done(run, e.phase, e.pos0, e.rows, e.layer);
    }
  }
  std::fclose(out);
  const std::string lines(text, size);
  std::free(text);
  INFO(lines);
  CHECK(lines.find("reference: decode step 4/4 layer 4/4 | peer: decode step 4/4 layer 4/4 | 100% done") !=
        std::string::npos);
}
