// Parser of the paper's latency data file.
#include "reports/paper.hpp"

#include "model/error.hpp"
#include "model/json_field.hpp"
#include "model/limits.hpp"
#include "reports/context.hpp"
#include "model/data_path.hpp"

namespace salasim::reports {

std::string paper_file() { return data_path("reports/paper/minicpm-sala-latency.json"); }

PaperData load_paper(const std::string& path) {
  const json j = parse_json_file(path);
  if (!j.is_object()) fail("{}: expected a JSON object at the top level, got {}", path, json_type_name(j));
  JsonDoc d{j, path, ""};
  PaperData p;
  p.file = path;
  p.source = d.string("source");
  p.setup = d.string("setup");
  p.decode_tokens = d.integer("decode_tokens", 1, kMaxDecodeTokens);
  if (!d.has("rows") || !j.at("rows").is_array()) d.bad("rows", "an array of published points");
  const json& rows = j.at("rows");
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::string where = fmt::format("{} (rows[{}])", path, i);
    if (!rows[i].is_object()) fail("{}: expected an object, got {}", where, json_type_name(rows[i]));
    JsonDoc r{rows[i], where, ""};
    PaperPoint pt;
    pt.gpu = r.string("gpu");
    pt.model = r.string("model");
    pt.weights = parse_weight_format(r.string("weights"), where + ": field 'weights'");
    pt.context = parse_context(r.string("context"), where + ": field 'context'");
    pt.oom = r.has("oom") && r.boolean("oom");
    if (!pt.oom) {
      pt.ttft_s = r.number("ttft_s", kMeasuredTime);
      pt.e2e_s = r.number("e2e_s", kMeasuredTime);
    }
    p.points.push_back(pt);
  }
  return p;
}

const PaperPoint* find_paper(const PaperData& d, const std::string& gpu, const std::string& model, WeightFormat w,
                             int64_t context) {
  for (const PaperPoint& p : d.points)
    if (p.gpu == gpu && p.model == model && p.weights == w && p.context == context) return &p;
  return nullptr;
}

}  // namespace salasim::reports
