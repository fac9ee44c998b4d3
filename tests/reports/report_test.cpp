// The report bundle: README, CSV tables and gnuplot plots for every card, every table row with its command,
// and an honest calibration status.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "reports/measured.hpp"
#include "reports/report.hpp"
#include "tests/support/catch.hpp"
#include "tests/support/paths.hpp"

using namespace salasim;
using namespace salasim::reports;

namespace {

using test::read_file;

}  // namespace

TEST_CASE("report: the bundle has README, CSV tables and SVG plots for every card", "[report]") {
  ReportOptions o;
  o.out = test::scratch_dir("report_bundle");
  o.contexts = {4096, 65536, 1048576};
  const ReportOutcome r = write_report(o);
  namespace fs = std::filesystem;
  CHECK(fs::exists(fs::path(o.out) / "README.md"));
  for (const char* hw : {"h200", "h100", "a6000d", "rtx5090"}) {
    INFO(hw);
    CHECK(fs::exists(fs::path(o.out) / fmt::format("vram_{}.csv", hw)));
    CHECK(fs::exists(fs::path(o.out) / fmt::format("latency_{}.csv", hw)));
    // gnuplot is installed by .ci/setup, so the plots must be there.
    CHECK(fs::file_size(fs::path(o.out) / fmt::format("vram_{}.svg", hw)) > 1000);
    CHECK(fs::file_size(fs::path(o.out) / fmt::format("ttft_{}.svg", hw)) > 1000);
  }
  CHECK(fs::exists(fs::path(o.out) / "paper_a6000d.csv"));
  CHECK(r.plots_note.find("rendered") != std::string::npos);
  // The outcome names every file written (what `salasim report` counts), and only those.
  size_t on_disk = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(o.out)) on_disk += e.is_regular_file() ? 1 : 0;
  CHECK(r.files.size() == on_disk);
  for (const std::string& f : r.files) CHECK(fs::exists(fs::path(o.out) / f));

  const std::string md = read_file(fs::path(o.out) / "README.md");
  // Measured runs are never invented: with reports/measured/h200/ empty the report says so; else it says how many.
  const size_t measured = load_measured(measured_path("h200")).size();
  if (measured == 0)
    CHECK(md.find("uncalibrated: efficiency factors 1.0 (the floor); no measured runs yet") != std::string::npos);
  else CHECK(md.find(fmt::format("calibrated from {} measured runs", measured)) != std::string::npos);
  CHECK(md.find("![peak VRAM vs context on h200](vram_h200.svg)") != std::string::npos);
  CHECK(md.find("**OOM**") != std::string::npos);  // Qwen3-8B at 1M on every card

  // Every data row of every table carries the command that reproduces it.
  std::istringstream lines(md);
  std::string line;
  int rows = 0;
  while (std::getline(lines, line)) {
    if (line.rfind("| ", 0) != 0) continue;
    std::string next;
    if (line.find("| command |") != std::string::npos) continue;  // a header row
    INFO(line);
    CHECK(line.find("`salasim ") != std::string::npos);
    ++rows;
  }
  CHECK(rows > 30);
}
