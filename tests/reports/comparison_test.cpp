// MiniCPM-SALA beside Qwen3-8B as measured: the ratio table from records a test writes into its scratch folder
// (never into reports/measured/: these numbers are made up), "not measured" where a record is missing, the paper's
// figures beside them, and the records' points in the bundle's plots.
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "reports/comparison.hpp"
#include "reports/report.hpp"
#include "tests/support/catch.hpp"
#include "tests/support/paths.hpp"

using namespace salasim;
using namespace salasim::reports;

namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A record in the schema of reports/measured.hpp; the comparator's with the extra fields bench/qwen3_hf.py writes.
void record(const fs::path& file, const std::string& config, int64_t context, double ttft, int64_t peak, bool hf) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << fmt::format(
      R"({{"date": "2026-12-05", "gpu": "test GPU", "command": "test", "config": "{}", "context": {}, )"
      R"("decode_tokens": 0, "ttft_s": {}, "peak_vram_bytes": {}, "planner_peak_bytes": 0, "revision": "test"{}}})",
      config, context, ttft, peak,
      hf ? R"(, "ttft_rounds_s": [1, 2], "torch_peak_allocated_bytes": 5, "logits_finite": true)" : "");
}

// SALA at 64K and 256K, Qwen3-8B at 64K and 128K: one length with both, one with each alone, one (16K) with none.
std::string records(const std::string& name) {
  const fs::path root = test::scratch_dir(name);
  const std::string sala = "scenarios/models/minicpm-sala-9b.json", qwen = "scenarios/models/qwen3-8b.json";
  record(root / "h200" / "run_64K.json", sala, 65536, 2.5, int64_t(20) << 30, false);
  record(root / "h200" / "run_256K.json", sala, 262144, 10, int64_t(22) << 30, false);
  record(root / "h200" / "qwen3-8b" / "run_64K.json", qwen, 65536, 4, int64_t(30) << 30, true);
  record(root / "h200" / "qwen3-8b" / "run_128K.json", qwen, 131072, 11, int64_t(40) << 30, true);
  return root.string();
}

}  // namespace

TEST_CASE("comparison: the ratio table reads both models' records and says 'not measured' where one is missing",
          "[report]") {
  ComparisonInput in;
  in.root = records("comparison_table");
  const PaperData paper = load_paper(paper_file());
  const Comparison c = load_comparison(in, paper);
  CHECK(c.sala_records == 2);
  CHECK(c.other_records == 2);
  CHECK(c.measured_pairs() == 1);
  const Table t = comparison_table(c);
  REQUIRE(t.rows.size() == 4);
  // context, SALA TTFT, Qwen TTFT, ratio, SALA peak, Qwen peak, ratio, paper SALA, paper Qwen, paper ratio, records,
  // command
  CHECK(t.rows[0] == std::vector<std::string>{"16K", "not measured", "not measured", "-", "not measured",
                                              "not measured", "-", "not in the paper", "not in the paper", "-", "-, -",
                                              "`salasim model compare --hw h200 --context 16K`"});
  CHECK(t.rows[1][1] == "2.50");
  CHECK(t.rows[1][2] == "4.00");
  CHECK(t.rows[1][3] == "1.60");
  CHECK(t.rows[1][4] == "20.00");
  CHECK(t.rows[1][5] == "30.00");
  CHECK(t.rows[1][6] == "1.50");
  CHECK(t.rows[1][10] == "run_64K.json, qwen3-8b/run_64K.json");
  CHECK(t.rows[2][1] == "not measured");
  CHECK(t.rows[2][2] == "11.0");
  CHECK(t.rows[2][3] == "-");
  CHECK(t.rows[3][2] == "not measured");
  CHECK(t.rows[3][6] == "-");
  // The paper's columns are its A6000D figures, from reports/paper/minicpm-sala-latency.json, never retyped.
  for (size_t i = 1; i < 4; ++i) {
    const int64_t ctx = comparison_contexts()[i];
    const PaperPoint* s = find_paper(paper, "a6000d", "minicpm-sala-9b", WeightFormat::Bf16, ctx);
    const PaperPoint* q = find_paper(paper, "a6000d", "qwen3-8b", WeightFormat::Bf16, ctx);
    REQUIRE(s);
    REQUIRE(q);
    CHECK(t.rows[i][7] == seconds(s->ttft_s));
    CHECK(t.rows[i][8] == seconds(q->ttft_s));
    CHECK(t.rows[i][9] == ratio(q->ttft_s / s->ttft_s));
  }
  // JSON: nulls where nothing was measured.
  const nlohmann::json j = comparison_json(c);
  CHECK(j["rows"][0]["ttft_ratio"].is_null());
  CHECK(std::fabs(j["rows"][1]["ttft_ratio"].get<double>() - 1.6) < 1e-12);
  CHECK(j["rows"][2]["measured"]["minicpm-sala-9b"].is_null());
}

TEST_CASE("comparison: with no records at all every measured cell says 'not measured'", "[report]") {
  ComparisonInput in;
  in.root = test::scratch_dir("comparison_empty");
  const Comparison c = load_comparison(in, load_paper(paper_file()));
  CHECK(c.measured_pairs() == 0);
  for (const std::vector<std::string>& r : comparison_table(c).rows) {
    INFO(r[0]);
    for (size_t i : {1, 2, 4, 5}) CHECK(r[i] == "not measured");
    for (size_t i : {3, 6}) CHECK(r[i] == "-");
  }
  CHECK(comparison_plot(c).series.size() == 1);  // the paper's ratios alone
}

TEST_CASE("report: the bundle shows the measured comparison, its plot, and both models' points in the TTFT plot",
          "[report]") {
  ReportOptions o;
  o.out = test::scratch_dir("comparison_bundle");
  o.measured = records("comparison_bundle_records");
  o.contexts = {16384, 65536, 131072, 262144};
  o.hw = {"h200", "rtx5090"};
  const ReportOutcome r = write_report(o);
  const std::string md = read(fs::path(o.out) / "README.md");
  CHECK(md.find("### qwen3-8b beside minicpm-sala-9b, measured on h200") != std::string::npos);
  CHECK(md.find("not measured") != std::string::npos);
  CHECK(md.find("![qwen3-8b / minicpm-sala-9b vs context](compare_h200.svg)") != std::string::npos);
  CHECK(fs::exists(fs::path(o.out) / "compare_h200.csv"));
  CHECK(fs::file_size(fs::path(o.out) / "compare_h200.svg") > 1000);
  CHECK(!fs::exists(fs::path(o.out) / "compare_rtx5090.csv"));  // no records for that card: no table
  REQUIRE(r.comparison.size() == 1);
  CHECK(r.comparison[0].find("TTFT ratio 64K x1.60") != std::string::npos);
  // The comparator's records are shown, never fitted: the calibration counts SALA's two.
  CHECK(r.calibration[0].find("calibrated from 2 measured runs") != std::string::npos);
  // Measured points of both models in the TTFT and VRAM plots, drawn after every prediction.
  const std::string ttft = read(fs::path(o.out) / "ttft_h200.dat");
  CHECK(ttft.find("# qwen3-8b bf16 measured\n65536 4\n131072 11\n") != std::string::npos);
  CHECK(ttft.find("# minicpm-sala-9b bf16 measured\n65536 2.5\n262144 10\n") != std::string::npos);
  CHECK(read(fs::path(o.out) / "vram_h200.dat").find("# qwen3-8b bf16 measured\n65536 30\n131072 40\n") !=
        std::string::npos);
  const std::string gp = read(fs::path(o.out) / "ttft_h200.gp");
  const size_t ring = gp.find("pt 5 ps 2.5 lc rgb 'black'");
  REQUIRE(ring != std::string::npos);
  CHECK(gp.find("predicted", ring) == std::string::npos);
  CHECK(gp.find(" paper\"", ring) == std::string::npos);
}
