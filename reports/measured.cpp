// Parser of measured-run files, with errors naming the file, the run and the field.
#include "reports/measured.hpp"

#include <filesystem>

#include "model/error.hpp"
#include "model/json_field.hpp"
#include "model/limits.hpp"
#include "model/data_path.hpp"

namespace salasim::reports {

std::string measured_file(const std::string& hw_name) { return data_path("reports/measured/" + hw_name + ".json"); }

std::vector<MeasuredRun> load_measured(const std::string& path) {
  if (!std::filesystem::exists(path)) return {};
  const json j = parse_json_file(path);
  if (!j.is_array()) fail("{}: expected a JSON array of measured runs at the top level, got {}", path, json_type_name(j));
  std::vector<MeasuredRun> runs;
  for (size_t i = 0; i < j.size(); ++i) {
    const std::string where = fmt::format("{} (run {})", path, i);
    if (!j[i].is_object()) fail("{}: expected an object, got {}", where, json_type_name(j[i]));
    JsonDoc d{j[i], where, ""};
    MeasuredRun r;
    r.date = d.string("date");
    r.gpu = d.string("gpu");
    r.command = d.string("command");
    r.config = d.string("config");
    r.context = d.integer("context", 1, kMaxContext);
    r.decode_tokens = d.integer("decode_tokens", 0, kMaxDecodeTokens);
    r.ttft_s = d.number("ttft_s");
    if (!(r.ttft_s > 0)) d.bad("ttft_s", "a positive number of seconds");
    if (r.decode_tokens > 0) {
      r.decode_ms_per_token = d.number("decode_ms_per_token");
      if (!(*r.decode_ms_per_token > 0)) d.bad("decode_ms_per_token", "a positive number (decode_tokens > 0)");
    }
    r.peak_vram_bytes = d.integer("peak_vram_bytes", 0);
    r.planner_peak_bytes = d.integer("planner_peak_bytes", 0);
    if (d.has("weights")) r.weights = d.string("weights");
    if (d.has("chunk")) r.chunk = d.integer("chunk", 1, kMaxChunk);
    if (d.has("phases")) {
      JsonDoc p = d.object("phases");
      std::array<double, kOpClasses> s{};
      for (int c = 0; c < kOpClasses; ++c) {
        const std::string key = std::string(op_class_name(op_class(c))) + "_s";
        s[c] = p.number(key.c_str());
        if (s[c] < 0) p.bad(key.c_str(), "a number of seconds >= 0");
      }
      r.phases = s;
    }
    runs.push_back(std::move(r));
  }
  return runs;
}

}  // namespace salasim::reports
