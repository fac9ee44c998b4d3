// verify's peer mode compares every tap as the reference and the peer produce it (scenarios/verify.hpp
// run_truth_streaming): on the short scenario its report and its golden check equal, number for number, what the full
// runs give, and the progress cost model adds up to the scenario's work.
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
  const StreamedTruth st = run_truth_streaming(r.s, r.w, golden_keep(g), opt);

  test::check_same_reports(st.result.report, compare_taps(r.truth.ref, &r.truth.peer, r.truth.peer));
  CHECK(st.result.report.pass());
  CHECK(st.result.kept_error.empty());
  const SourceHash h = gpu_source_hash();
  const GoldenCheck full = check_golden(g, r.truth, h, shown);
  const GoldenCheck cut = check_golden_cut(g, st.result.ref_kept, st.result.peer_kept, h, shown);
  test::check_same_reports(cut.report, full.report);
  CHECK(cut.report.rows.size() == g.taps.size());

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
