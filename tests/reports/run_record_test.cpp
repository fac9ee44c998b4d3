// The record `salasim run` writes: its decode statistics leave out the steps they must, and what it writes is what
// reports/measured.hpp reads back (one schema, owned by reports/run_record.hpp).
#include <filesystem>
#include <fstream>

#include "reports/measured.hpp"
#include "reports/run_record.hpp"
#include "tests/support/catch.hpp"
#include "tests/support/paths.hpp"

using namespace salasim;
using namespace salasim::reports;

TEST_CASE("run_record: decode statistics leave out token 0 and the step before the profiled quarter", "[measured]") {
  CHECK(profiled_steps(128) == 8);
  CHECK(profiled_steps(16) == 4);
  CHECK(profiled_steps(3) == 0);
  // 13 tokens: token 0 from the prefill, then the decode steps' tokens 1..12; of 12 steps the last 3 are profiled
  std::vector<double> token_s = {9.0, 0.005, 0.006, 0.004, 0.007, 0.005, 0.006, 0.005, 0.006, 0.050, 0.5, 0.5, 0.5};
  std::vector<double> enq_s = {0.001, 0.002, 0.001, 0.003, 0.001, 0.001, 0.001, 0.001, 0.001, 0.4, 0.4, 0.4};
  const DecodeStats d = decode_stats(token_s, enq_s, 12);
  CHECK(d.profiled == 3);
  // tokens 1 .. 12 - 3 - 1 = 8: token 9 (0.050 s, awaited across the first profiled step's enqueue) is left out
  REQUIRE(d.step_ms.size() == 8);
  CHECK(d.min_ms == Approx(4.0));
  CHECK(d.max_ms == Approx(7.0));
  CHECK(d.median_ms == Approx(6.0));  // the upper median of {4, 5, 5, 5, 6, 6, 6, 7}
  REQUIRE(d.enqueue_ms.size() == 9);  // steps 0 .. 8: every unprofiled step's enqueue
  CHECK(d.enqueue_median_ms == Approx(1.0));
  const DecodeStats none = decode_stats({1.0}, {}, 0);
  CHECK(none.step_ms.empty());
  CHECK(none.median_ms == 0);
}

TEST_CASE("run_record: what run writes, load_measured reads back field for field", "[measured]") {
  RunRecord r;
  r.date = "2026-12-04";
  r.gpu = "NVIDIA H200 (sm_90, 132 SMs, 139.8 GiB)";
  r.driver = "580.159.04";
  r.revision = "779200d";
  r.command = "salasim run --context 64K";
  r.config = "scenarios/models/minicpm-sala-9b.json";
  r.context = 65536;
  r.decode_tokens = 128;
  r.chunk = 16384;
  r.ttft_s = 2.53;
  r.decode = decode_stats(std::vector<double>(129, 0.005), std::vector<double>(128, 0.0009), 128);
  r.gemv = "custom", r.pdl = "on", r.fusion = "on", r.ahead = "on";
  r.peak_vram_bytes = int64_t(21) << 30;
  r.planner_peak_bytes = int64_t(20) << 30;
  r.prefill_s = {1.2, 0.3, 0.4, 0.0, 0.2, 0.1};
  r.decode_gpu_ms = ClassTimes{4.5, 0.25, 0.1, 0.0, 0.2, 0.05};
  const std::string dir = test::scratch_dir("run_record");
  std::ofstream(dir + "/run_64K.json") << run_record_json(r).dump(2) << "\n";
  const std::vector<MeasuredRun> back = load_measured(dir);
  REQUIRE(back.size() == 1);
  const MeasuredRun& m = back[0];
  CHECK(m.gpu == r.gpu);
  CHECK(m.driver == r.driver);
  CHECK(m.revision == r.revision);
  CHECK(m.context == 65536);
  CHECK(m.decode_tokens == 128);
  CHECK(m.chunk == 16384);
  CHECK(m.ttft_s == Approx(2.53));
  REQUIRE(m.decode_ms_per_token);
  CHECK(*m.decode_ms_per_token == Approx(5.0));
  CHECK(m.peak_vram_bytes == r.peak_vram_bytes);
  REQUIRE(m.phases);
  CHECK((*m.phases)[0] == Approx(1.2));
  REQUIRE(m.decode_phases_ms);
  CHECK((*m.decode_phases_ms)[0] == Approx(4.5));
  CHECK(m.decode_profiled_total_ms == Approx(5.1));
}
