// Parser of measured-run files, with errors naming the file, the run and the field.
#include "reports/measured.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <tuple>

#include "model/error.hpp"
#include "model/json_field.hpp"
#include "model/limits.hpp"
#include "model/data_path.hpp"

namespace salasim::reports {

std::string measured_path(const std::string& hw_name) { return data_path("reports/measured/" + hw_name); }

std::string measured_path(const std::string& hw_name, const std::string& root) {
  return root.empty() ? measured_path(hw_name) : (std::filesystem::path(root) / hw_name).string();
}

namespace {

// A phase of a run: 0 (none of that class), or a time of at least kMeasuredTime's nanosecond. A positive time below
// it is not a measurement, and would make the fit's sums underflow to 0 (an infinite efficiency factor).
double measured_part(const JsonDoc& p, const char* key) {
  const double v = p.number(key, kMeasuredPart);
  if (v != 0 && !kMeasuredTime.contains(v)) p.bad(key, fmt::format("0 or {}", kMeasuredTime.text()));
  return v;
}

MeasuredRun parse_run(const json& j, const std::string& where) {
  if (!j.is_object()) fail("{}: expected an object, got {}", where, json_type_name(j));
  JsonDoc d{j, where, ""};
  MeasuredRun r;
  r.date = d.string("date");
  r.gpu = d.string("gpu");
  r.command = d.string("command");
  r.config = d.string("config");
  r.context = d.integer("context", 1, kMaxContext);
  r.decode_tokens = d.integer("decode_tokens", 0, kMaxDecodeTokens);
  // Times within kMeasuredTime / kMeasuredPart (model/limits.hpp): a fit over 1e308 s would not stay finite.
  r.ttft_s = d.number("ttft_s", kMeasuredTime);
  if (r.decode_tokens > 0) r.decode_ms_per_token = d.number("decode_ms_per_token", kMeasuredTime);
  r.peak_vram_bytes = d.integer("peak_vram_bytes", 0, kMaxHwMemoryBytes);
  r.planner_peak_bytes = d.integer("planner_peak_bytes", 0);
  if (d.has("weights")) r.weights = d.string("weights");
  if (d.has("chunk")) r.chunk = d.integer("chunk", 1, kMaxChunk);
  if (d.has("driver")) r.driver = d.string("driver");
  if (d.has("revision")) r.revision = d.string("revision");
  if (d.has("source")) r.source = d.string("source");
  if (d.has("phases")) {
    JsonDoc p = d.object("phases");
    std::array<double, kOpClasses> s{};
    for (int c = 0; c < kOpClasses; ++c) {
      const std::string key = std::string(op_class_name(op_class(c))) + "_s";
      s[c] = measured_part(p, key.c_str());
    }
    r.phases = s;
  }
  if (d.has("decode_gpu_ms_per_token")) {
    JsonDoc p = d.object("decode_gpu_ms_per_token");
    std::array<double, kOpClasses> s{};
    double sum = 0;
    for (int c = 0; c < kOpClasses; ++c) {
      const std::string key = std::string(op_class_name(op_class(c))) + "_ms";
      s[c] = measured_part(p, key.c_str());
      sum += s[c];
    }
    r.decode_profiled_total_ms = measured_part(p, "total_ms");
    // `salasim run` with fewer than 4 decode steps profiled none and wrote zeros: not a split, and not an error.
    if (sum == 0 && r.decode_profiled_total_ms == 0) return r;
    // The classes must add up to the total (as `salasim run` writes them), else the split means nothing.
    if (!(r.decode_profiled_total_ms > 0) ||
        std::abs(sum - r.decode_profiled_total_ms) > 1e-6 * r.decode_profiled_total_ms + 1e-9)
      p.bad("total_ms", fmt::format("a positive number equal to the sum of the classes ({})", sum));
    r.decode_phases_ms = s;
  }
  return r;
}

void load_file(const std::string& path, std::vector<MeasuredRun>& runs) {
  const json j = parse_json_file(path);
  if (j.is_object()) {  // one run, as `salasim run --json-out` writes it
    runs.push_back(parse_run(j, path));
    runs.back().file = path;
    return;
  }
  if (!j.is_array())
    fail("{}: expected a measured run (a JSON object) or an array of them at the top level, got {}", path,
         json_type_name(j));
  for (size_t i = 0; i < j.size(); ++i) {
    runs.push_back(parse_run(j[i], fmt::format("{} (run {})", path, i)));
    runs.back().file = path;
  }
}

}  // namespace

std::vector<MeasuredRun> load_measured(const std::string& path) {
  namespace fs = std::filesystem;
  std::vector<MeasuredRun> runs;
  std::error_code ec;
  if (!fs::exists(path, ec)) return runs;
  if (!fs::is_directory(path, ec)) {
    load_file(path, runs);
    return runs;
  }
  std::vector<std::string> files;
  for (const fs::directory_entry& e : fs::directory_iterator(path))
    if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  for (const std::string& f : files) load_file(f, runs);
  std::stable_sort(runs.begin(), runs.end(), [](const MeasuredRun& a, const MeasuredRun& b) {
    return std::tie(a.config, a.context) < std::tie(b.config, b.context);
  });
  return runs;
}

}  // namespace salasim::reports
