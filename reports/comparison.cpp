// The measured SALA-vs-comparator table: records found, never numbers made up.
#include "reports/comparison.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <tuple>

#include "model/data_path.hpp"
#include "model/error.hpp"
#include "reports/context.hpp"

namespace salasim::reports {

namespace {

std::string stem(const std::string& path) { return std::filesystem::path(path).stem().string(); }

// The newest bf16 record of `model` at `context` (by date, then the later file), if any.
std::optional<MeasuredRun> newest(const std::vector<MeasuredRun>& runs, const std::string& model, int64_t context) {
  std::optional<MeasuredRun> best;
  for (const MeasuredRun& r : runs) {
    if (r.context != context || r.weights != "bf16" || stem(r.config) != model) continue;
    if (!best || std::tie(r.date, r.file) >= std::tie(best->date, best->file)) best = r;
  }
  return best;
}

int records_of(const std::vector<MeasuredRun>& runs, const std::string& model) {
  int n = 0;
  for (const MeasuredRun& r : runs) n += stem(r.config) == model && r.weights == "bf16";
  return n;
}

std::optional<PaperPoint> paper_point(const PaperData& paper, const std::string& gpu, const std::string& model,
                                      int64_t context) {
  const PaperPoint* p = find_paper(paper, gpu, model, WeightFormat::Bf16, context);
  return p ? std::optional<PaperPoint>(*p) : std::nullopt;
}

std::string measured_ttft(const std::optional<MeasuredRun>& r) { return r ? seconds(r->ttft_s) : "not measured"; }
std::string measured_peak(const std::optional<MeasuredRun>& r) {
  return r && r->peak_vram_bytes > 0 ? gib(r->peak_vram_bytes) : "not measured";
}
std::string paper_ttft(const std::optional<PaperPoint>& p) {
  return !p ? "not in the paper" : p->oom ? "OOM" : seconds(p->ttft_s);
}

// "a / b" of two present values, else "-".
std::string ratio_of(bool have, double a, double b) { return have && b > 0 ? ratio(a / b) : "-"; }

// A record's file, relative to the card's folder (run_64K.json, qwen3-8b/run_64K.json).
std::string where(const std::optional<MeasuredRun>& r, const std::string& dir) {
  return r ? std::filesystem::path(r->file).lexically_relative(dir).string() : "-";
}

}  // namespace

std::vector<int64_t> comparison_contexts() { return {16384, 65536, 131072, 262144}; }

int Comparison::measured_pairs() const {
  int n = 0;
  for (const ComparisonRow& r : rows) n += r.sala && r.other;
  return n;
}

Comparison load_comparison(const ComparisonInput& in, const PaperData& paper) {
  Comparison c;
  c.hw = in.hw;
  c.paper_gpu = in.paper_gpu;
  c.sala = load_model(in.sala_config);
  c.other = load_model(in.other_config);
  if (c.sala.kind != ModelKind::Sala)
    fail("{}: expected a MiniCPM-SALA config (model_type minicpm_sala)", in.sala_config);
  if (c.other.kind != ModelKind::Dense) fail("{}: expected the dense comparator's config", in.other_config);
  c.sala_dir = measured_path(in.hw, in.root);
  c.other_dir = (std::filesystem::path(c.sala_dir) / c.other.name).string();
  const std::vector<MeasuredRun> sala_runs = load_measured(c.sala_dir);
  const std::vector<MeasuredRun> other_runs = load_measured(c.other_dir);
  c.sala_records = records_of(sala_runs, c.sala.name);
  c.other_records = records_of(other_runs, c.other.name);
  for (int64_t ctx : in.contexts)
    c.rows.push_back({ctx, newest(sala_runs, c.sala.name, ctx), newest(other_runs, c.other.name, ctx),
                      paper_point(paper, in.paper_gpu, c.sala.name, ctx),
                      paper_point(paper, in.paper_gpu, c.other.name, ctx)});
  return c;
}

std::string comparison_command(const Comparison& c, int64_t context) {
  return fmt::format("salasim model compare --hw {} --context {}", c.hw, context_label(context));
}

Table comparison_table(const Comparison& c) {
  const std::string s = c.sala.name, o = c.other.name;
  Table t;
  t.header = {"context",
              fmt::format("{} TTFT s", s),
              fmt::format("{} TTFT s", o),
              "TTFT ratio",
              fmt::format("{} peak GiB", s),
              fmt::format("{} peak GiB", o),
              "peak ratio",
              fmt::format("paper {} TTFT s", s),
              fmt::format("paper {} TTFT s", o),
              "paper TTFT ratio",
              "records",
              "command"};
  for (const ComparisonRow& r : c.rows) {
    const bool both = r.sala && r.other;
    const bool peaks = both && r.sala->peak_vram_bytes > 0 && r.other->peak_vram_bytes > 0;
    const bool paper = r.paper_sala && r.paper_other && !r.paper_sala->oom && !r.paper_other->oom;
    t.rows.push_back(
        {context_label(r.context), measured_ttft(r.sala), measured_ttft(r.other),
         ratio_of(both, both ? r.other->ttft_s : 0, both ? r.sala->ttft_s : 0), measured_peak(r.sala),
         measured_peak(r.other),
         ratio_of(peaks, peaks ? double(r.other->peak_vram_bytes) : 0, peaks ? double(r.sala->peak_vram_bytes) : 0),
         paper_ttft(r.paper_sala), paper_ttft(r.paper_other),
         ratio_of(paper, paper ? r.paper_other->ttft_s : 0, paper ? r.paper_sala->ttft_s : 0),
         fmt::format("{}, {}", where(r.sala, c.sala_dir), where(r.other, c.sala_dir)),
         code(comparison_command(c, r.context))});
  }
  return t;
}

nlohmann::json comparison_json(const Comparison& c) {
  auto run = [](const std::optional<MeasuredRun>& r) -> nlohmann::json {
    if (!r) return nullptr;
    return {{"ttft_s", r->ttft_s},     {"peak_vram_bytes", r->peak_vram_bytes}, {"date", r->date},      {"gpu", r->gpu},
            {"revision", r->revision}, {"file", source_relative(r->file)},      {"command", r->command}};
  };
  auto paper = [](const std::optional<PaperPoint>& p) -> nlohmann::json {
    if (!p) return nullptr;
    return p->oom ? nlohmann::json{{"oom", true}} : nlohmann::json{{"ttft_s", p->ttft_s}, {"e2e_s", p->e2e_s}};
  };
  nlohmann::json j = {{"hw", c.hw},
                      {"paper_gpu", c.paper_gpu},
                      {"models", {c.sala.name, c.other.name}},
                      {"records",
                       {{c.sala.name, source_relative(c.sala_dir)}, {c.other.name, source_relative(c.other_dir)}}},
                      {"rows", nlohmann::json::array()}};
  for (const ComparisonRow& r : c.rows) {
    nlohmann::json row = {{"context", r.context},
                          {"measured", {{c.sala.name, run(r.sala)}, {c.other.name, run(r.other)}}},
                          {"paper", {{c.sala.name, paper(r.paper_sala)}, {c.other.name, paper(r.paper_other)}}}};
    row["ttft_ratio"] = r.sala && r.other ? nlohmann::json(r.other->ttft_s / r.sala->ttft_s) : nlohmann::json(nullptr);
    row["peak_ratio"] = r.sala && r.other && r.sala->peak_vram_bytes > 0 && r.other->peak_vram_bytes > 0
                            ? nlohmann::json(double(r.other->peak_vram_bytes) / double(r.sala->peak_vram_bytes))
                            : nlohmann::json(nullptr);
    j["rows"].push_back(row);
  }
  return j;
}

Plot comparison_plot(const Comparison& c) {
  Plot p;
  p.stem = "compare_" + c.hw;
  p.title = fmt::format("{} / {}: time to first token and peak memory (above 1: {} is faster, smaller)", c.other.name,
                        c.sala.name, c.sala.name);
  p.xlabel = "context (tokens)";
  p.ylabel = fmt::format("{} / {}", c.other.name, c.sala.name);
  p.log_y = false;
  PlotSeries ttft{fmt::format("TTFT ratio, measured on {}", c.hw), {}, false, "#d95f02"};
  PlotSeries peak{fmt::format("peak memory ratio, measured on {}", c.hw), {}, false, "#1b9e77"};
  PlotSeries paper{fmt::format("TTFT ratio, the paper on {}", c.paper_gpu), {}, false, "#444444", 6};
  ttft.measured = peak.measured = true;
  double top = 1;
  for (const ComparisonRow& r : c.rows) {
    p.xtics.emplace_back(double(r.context), context_label(r.context));
    const double x = double(r.context);
    if (r.sala && r.other) ttft.points.push_back({x, r.other->ttft_s / r.sala->ttft_s});
    if (r.sala && r.other && r.sala->peak_vram_bytes > 0 && r.other->peak_vram_bytes > 0)
      peak.points.push_back({x, double(r.other->peak_vram_bytes) / double(r.sala->peak_vram_bytes)});
    if (r.paper_sala && r.paper_other && !r.paper_sala->oom && !r.paper_other->oom)
      paper.points.push_back({x, r.paper_other->ttft_s / r.paper_sala->ttft_s});
  }
  for (const PlotSeries* s : {&ttft, &peak, &paper})
    for (const auto& [x, y] : s->points) top = std::max(top, y);
  p.yrange = std::make_pair(0.0, 1.2 * top);
  p.hline = 1.0;
  p.hline_title = "equal (ratio 1)";
  p.hline_color = "#888888";
  if (!c.rows.empty()) {  // the whole span of the lengths asked for, measured or not
    const auto [lo, hi] =
        std::minmax_element(c.rows.begin(), c.rows.end(),
                            [](const ComparisonRow& a, const ComparisonRow& b) { return a.context < b.context; });
    p.xrange = std::make_pair(double(lo->context) / 1.4, double(hi->context) * 1.4);
  }
  for (const PlotSeries* s : {&paper, &ttft, &peak})
    if (!s->points.empty()) p.series.push_back(*s);
  return p;
}

}  // namespace salasim::reports
