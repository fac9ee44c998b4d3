// The RULER report: tables, heatmap, recall plot, paper numbers.
#include "scenarios/ruler/report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>

#include <unistd.h>

#include "model/error.hpp"
#include "model/json_field.hpp"
#include "model/limits.hpp"
#include "model/output_file.hpp"
#include "reports/context.hpp"
#include "reports/plots.hpp"
#include "scenarios/ruler/lines.hpp"
#include "scenarios/ruler/niah.hpp"
#include "scenarios/ruler/recall_plot.hpp"
#include "scenarios/ruler/results_file.hpp"
#include "scenarios/ruler/sample_io.hpp"
#include "scenarios/ruler/score.hpp"

namespace salasim::ruler {

namespace fs = std::filesystem;

namespace {

struct Result {
  std::string id, task, prediction, where;
  int64_t length = 0;
  double score = 0;
  bool null = false;
  std::vector<std::string> outputs;
  std::vector<double> depths;
  // per sparse layer: recall of the last prompt token (absent when dense), mean over decode steps
  std::map<int, double> prompt_recall, decode_recall;
  std::map<int, int64_t> prompt_rank;
  bool dense = false;
  double sample_s = 0, prefill_s = 0;
  // where the line came from (absent in lines of older runs: "")
  std::string backend, data, config, weights, tokenizer, revision;
};

bool integer_in(const nlohmann::json& v, int64_t lo, int64_t hi) {
  if (!v.is_number_integer()) return false;
  if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX)) return false;
  return v.get<int64_t>() >= lo && v.get<int64_t>() <= hi;
}

double fraction(const nlohmann::json& v, const std::string& where, const std::string& field) {
  if (!v.is_number() || !(v.get<double>() >= 0 && v.get<double>() <= 1))
    fail("{}: field '{}' is {}, expected a number in [0, 1]", where, field,
         v.is_number() ? excerpt(v) : json_type_name(v));
  return v.get<double>();
}

double seconds(const nlohmann::json& j, const char* k, const std::string& where) {
  if (!j.contains(k)) return 0;
  const nlohmann::json& v = j.at(k);
  if (!v.is_number() || !(v.get<double>() >= 0 && v.get<double>() <= 1e9))
    fail("{}: field '{}' is {}, expected seconds in [0, 1e9]", where, k,
         v.is_number() ? excerpt(v) : json_type_name(v));
  return v.get<double>();
}

// One results line, every field the report uses range-checked (the line was checked as a results line first).
Result parse_result(const nlohmann::json& j, const std::string& where) {
  const std::string problem = results_line_problem(j);
  if (!problem.empty()) fail("{}: not a results line of `salasim ruler run`: {}", where, problem);
  Result r;
  r.where = where;
  r.id = j.at("id").get<std::string>();
  r.task = j.at("task").get<std::string>();
  r.length = j.at("length").get<int64_t>();
  r.prediction = j.at("prediction").get<std::string>();
  r.score = j.at("score").get<double>();
  const nlohmann::json& outs = j.at("outputs");
  if (int64_t(outs.size()) > kMaxOutputs)
    fail("{}: field 'outputs' has {} entries, expected at most {}", where, outs.size(), kMaxOutputs);
  for (const auto& v : outs) {
    if (!v.is_string()) fail("{}: field 'outputs' holds {}, expected strings", where, json_type_name(v));
    r.outputs.push_back(v.get<std::string>());
  }
  if (j.contains("depths")) r.depths = parse_depths(j.at("depths"), where);
  r.sample_s = seconds(j, "sample_s", where);
  auto text = [&](const char* k) {
    return j.contains(k) && j.at(k).is_string() ? j.at(k).get<std::string>() : std::string();
  };
  r.backend = text("backend"), r.data = text("data"), r.config = text("config");
  r.weights = text("weights"), r.tokenizer = text("tokenizer"), r.revision = text("revision");
  r.prefill_s = seconds(j, "prefill_s", where);
  if (j.contains("selection")) {
    const nlohmann::json& steps = j.at("selection");
    if (!steps.is_array())
      fail("{}: field 'selection' is {}, expected an array of steps", where, json_type_name(steps));
    std::map<int, std::pair<double, int64_t>> dec;
    for (size_t st = 0; st < steps.size(); ++st) {
      const std::string at = fmt::format("{}: field 'selection[{}]", where, st);
      if (!steps[st].is_object() || !steps[st].contains("layers") || !steps[st].at("layers").is_array())
        fail("{}' is not an object with an array 'layers'", at);
      for (const auto& l : steps[st].at("layers")) {
        if (!l.is_object() || !l.contains("layer") || !integer_in(l.at("layer"), 0, kMaxLayers - 1))
          fail("{}.layers' holds an entry without a 'layer' in [0, {}]", at, kMaxLayers - 1);
        const int layer = int(l.at("layer").get<int64_t>());
        if (l.contains("dense")) {
          if (st == 0) r.dense = true;
          continue;
        }
        if (!l.contains("recall")) fail("{}.layers' holds layer {} with neither 'dense' nor 'recall'", at, layer);
        const double v = fraction(l.at("recall"), where, fmt::format("selection[{}].recall", st));
        if (st == 0) {
          r.prompt_recall[layer] = v;
          if (l.contains("rank")) {
            if (!integer_in(l.at("rank"), 1, kMaxSampleLength))
              fail("{}.layers' holds layer {} with a 'rank' that is not an integer in [1, {}]", at, layer,
                   kMaxSampleLength);
            r.prompt_rank[layer] = l.at("rank").get<int64_t>();
          }
        } else {
          dec[layer].first += v;
          dec[layer].second += 1;
        }
      }
    }
    for (auto& [l, p] : dec) r.decode_recall[l] = p.first / double(p.second);
  }
  r.null = r.prediction.empty();
  return r;
}

std::vector<Result> read_results(const std::vector<std::string>& files) {
  std::vector<Result> out;
  std::map<std::string, std::string> seen;
  for (const std::string& f : files) {
    int64_t size = 0;
    const int fd = open_regular_file(f, f, &size);
    struct Closer {
      int fd;
      ~Closer() { ::close(fd); }
    } closer{fd};
    LineReader lr(fd, f, kMaxResultsLineBytes);
    std::string line;
    bool terminated = false;
    while (lr.next(&line, &terminated)) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      const std::string where = fmt::format("{} line {}", f, lr.line_number());
      nlohmann::json j;
      try {
        j = parse_json_text(line, where);
      } catch (const Error& e) {
        if (!terminated)
          fail("{} (an unterminated last line: a run stopped while writing it; `salasim ruler run --resume` redoes it)",
               e.what());
        throw;
      }
      Result r = parse_result(j, where);
      auto [it, fresh] = seen.emplace(r.id, where);
      if (!fresh)
        fail(
            "sample {} appears twice: {} and {} (shards merge by concatenation; do not list a merged file with its shards)",
            excerpt(r.id), it->second, where);
      out.push_back(std::move(r));
    }
  }
  if (out.empty()) fail("no results in {}", fmt::join(files, ", "));
  return out;
}

int64_t paper_tokens(const std::string& label) {
  if (label == "1000K") return int64_t(1) << 20;  // the paper's "1000K" column sits beside our 1M (1024K)
  return reports::parse_context(label, "paper length");
}

// The head of a markdown table with a row a depth bin and a column a context length: "| depth | 4K | ... |" and its
// rule.
std::string depth_table_head(const std::set<int64_t>& lengths) {
  std::string h = "| depth |";
  for (int64_t L : lengths) h += fmt::format(" {} |", reports::context_label(L));
  h += "\n|---|";
  for (size_t i = 0; i < lengths.size(); ++i) h += "---|";
  return h + "\n";
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? NAN : s / double(v.size());
}

std::string cell(double v, int prec = 2) { return std::isfinite(v) ? fmt::format("{:.{}f}", v, prec) : "–"; }

// A report folder replaced with --force is deleted whole: an input inside it would go with it.
void refuse_inputs_inside(const std::string& dir, const std::vector<std::string>& inputs) {
  std::error_code ec;
  const fs::path d = fs::weakly_canonical(fs::absolute(dir, ec), ec);
  if (ec) return;
  for (const std::string& f : inputs) {
    std::error_code e2;
    const fs::path p = fs::weakly_canonical(fs::absolute(f, e2), e2);
    if (e2) continue;
    const auto [a, b] = std::mismatch(d.begin(), d.end(), p.begin(), p.end());
    if (a == d.end())
      fail(
          "--out {}: holds the input {}; the report folder is built new and replaces the old one whole, so it "
          "cannot hold its own inputs: choose another --out (nothing was changed)",
          dir, f);
  }
}

// Each plot file complete: gnuplot can exit 0 on a full disk after writing part of an image.
void check_rendered(const std::string& dir, const std::vector<std::string>& files) {
  for (const std::string& name : files) {
    const std::string p = (fs::path(dir) / name).string();
    std::error_code ec;
    const auto size = fs::file_size(p, ec);
    if (ec || size == 0) fail("{} was not written ({})", name, ec ? ec.message() : "empty");
    const std::string ext = fs::path(name).extension().string();
    if (ext != ".svg" && ext != ".png") continue;
    std::ifstream in(p, std::ios::binary);
    const std::streamoff tail = std::min<std::streamoff>(std::streamoff(size), 64);
    in.seekg(-tail, std::ios::end);
    std::string end(size_t(tail), '\0');
    in.read(end.data(), tail);
    const bool ok = ext == ".svg" ? end.find("</svg>") != std::string::npos : end.find("IEND") != std::string::npos;
    if (!in || !ok) fail("{} is cut short (gnuplot's output ended early: a full disk?)", name);
  }
}

// A finite number, or JSON null (a table's empty cell).
nlohmann::json num(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

// The machine-readable summary (summary.json, summary.csv) beside report.md: what lm-evaluation-harness and RULER's
// own scripts give, so a run can be compared without parsing markdown. The CSV is long-form, one number a row:
// metric,task,layer,length,value,n,nulls.
struct Summary {
  nlohmann::json j = nlohmann::json::object();
  std::string csv = "metric,task,layer,length,value,n,nulls\n";
  void row(const std::string& metric, const std::string& task, const std::string& layer, int64_t length, double v,
           const std::string& n = "", const std::string& nulls = "") {
    csv += fmt::format("{},{},{},{},{},{},{}\n", metric, task, layer, length,
                       std::isfinite(v) ? fmt::format("{}", v) : "", n, nulls);
  }
};

// Where the results came from: every distinct value of each provenance field over the lines ("" = not recorded).
nlohmann::json provenance(const std::vector<Result>& rs) {
  std::map<std::string, std::set<std::string>> seen;
  for (const Result& r : rs)
    for (const auto& [k, v] : {std::pair{"backend", &r.backend},
                               {"data", &r.data},
                               {"config", &r.config},
                               {"weights", &r.weights},
                               {"tokenizer", &r.tokenizer},
                               {"revision", &r.revision}})
      seen[k].insert(v->empty() ? "(not recorded)" : *v);
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, vs] : seen) j[k] = std::vector<std::string>(vs.begin(), vs.end());
  return j;
}

// What the report's sections read and build: the results, the tasks and lengths in them, the markdown, the
// machine-readable summary and the plots' data.
struct Tables {
  const std::vector<Result>& rs;
  std::vector<std::string> tasks;
  std::set<int64_t> lengths;
  std::string md;
  Summary sum;
  std::map<int64_t, std::vector<double>> task_scores_at;  // length -> each task's score
  std::string heat_dat;                                   // heatmap.dat
  RecallGrid recall;                                      // recall.svg, a panel per layer
};

void score_section(Tables& tb) {
  // ---- score per task x length ----
  tb.md += "## Score per task and length (string_match_all x 100; n samples; nulls = empty predictions)\n\n| task |";
  for (int64_t L : tb.lengths) tb.md += fmt::format(" {} |", reports::context_label(L));
  tb.md += "\n|---|";
  for (size_t i = 0; i < tb.lengths.size(); ++i) tb.md += "---|";
  tb.md += "\n";
  for (const std::string& t : tb.tasks) {
    tb.md += fmt::format("| {} |", t);
    for (int64_t L : tb.lengths) {
      std::vector<double> per;
      std::vector<std::string> preds;
      for (const Result& r : tb.rs)
        if (r.task == t && r.length == L) per.push_back(r.score), preds.push_back(r.prediction);
      if (per.empty()) {
        tb.md += " |";
        continue;
      }
      const TaskScore s = task_score(per, preds);
      tb.task_scores_at[L].push_back(s.score);
      tb.sum.j["scores"].push_back({{"task", t}, {"length", L}, {"score", s.score}, {"n", s.n}, {"nulls", s.nulls}});
      tb.sum.row("score", t, "", L, s.score, std::to_string(s.n), std::to_string(s.nulls));
      tb.md += fmt::format(" {:.2f} (n {}, nulls {}) |", s.score, s.n, s.nulls);
    }
    tb.md += "\n";
  }
  tb.md += "| **NIAH average** |";
  for (int64_t L : tb.lengths) {
    tb.md += fmt::format(" **{}** |", cell(mean(tb.task_scores_at[L])));
    tb.sum.j["niah_average"].push_back(
        {{"length", L}, {"score", num(mean(tb.task_scores_at[L]))}, {"tasks", tb.task_scores_at[L].size()}});
    tb.sum.row("niah_average", "", "", L, mean(tb.task_scores_at[L]), std::to_string(tb.task_scores_at[L].size()));
  }
  tb.md += "\n\n";
}

void paper_section(Tables& tb, const std::string& paper) {
  // ---- paper numbers ----
  try {
    const nlohmann::json p = parse_json_file(paper);
    if (!p.contains("rows") || !p.at("rows").is_array()) fail("{}: field 'rows' is missing or not an array", paper);
    tb.md += "## Beside the paper's RULER numbers\n\n";
    tb.md += fmt::format("Source: {}\n\n**Caveat:** {}\n\n", p.value("source", std::string("?")),
                         p.value("caveat", std::string("?")));
    tb.md +=
        "| model | table | paper length | paper score | ours at that length (NIAH average of the tasks run) |\n|---|---|---|---|---|\n";
    for (const auto& row : p.at("rows")) {
      const std::string label = row.at("length").get<std::string>();
      const int64_t L = paper_tokens(label);
      tb.md += fmt::format("| {} | {} | {} | {:.2f} | {} |\n", row.at("model").get<std::string>(),
                           row.at("table").get<int>(), label, row.at("score").get<double>(),
                           tb.task_scores_at.count(L) ? cell(mean(tb.task_scores_at[L])) : "not run");
    }
    tb.md += "\n";
  } catch (const nlohmann::json::exception& e) {  // a row without a field, or a field of the wrong type
    fail("--paper {}: a row is not {{\"model\", \"table\", \"length\", \"score\"}} of the expected types ({})", paper,
         e.what());
  }
}

void depth_section(Tables& tb) {
  // ---- depth x length (per needle: its value found in the prediction) ----
  std::map<std::pair<int, int64_t>, std::vector<double>> heat;  // (depth bin, length) -> hits
  for (const Result& r : tb.rs)
    for (size_t i = 0; i < r.depths.size() && i < r.outputs.size(); ++i) {
      const int bin = std::min(9, int(r.depths[i] / 10.0));
      heat[{bin, r.length}].push_back(string_match_all(r.prediction, {r.outputs[i]}));
    }
  tb.md += "## Needles found by depth and length (% of needles whose value is in the prediction)\n\n";
  tb.md += depth_table_head(tb.lengths);
  for (int bin = 0; bin < 10; ++bin) {
    tb.md += fmt::format("| {}–{}% |", bin * 10, bin * 10 + 10);
    int xi = 0;
    for (int64_t L : tb.lengths) {
      auto it = heat.find({bin, L});
      const double v = it == heat.end() ? NAN : 100.0 * mean(it->second);
      tb.md += fmt::format(" {} |", it == heat.end() ? "" : fmt::format("{} (n {})", cell(v, 0), it->second.size()));
      tb.heat_dat += fmt::format("{} {} {}\n", xi++, bin * 10 + 5, std::isfinite(v) ? fmt::format("{:.2f}", v) : "NaN");
    }
    tb.md += "\n";
    tb.heat_dat += "\n";
  }
  tb.md += "\n";
}

void recall_section(Tables& tb) {
  // ---- selection recall per layer x length, and per depth ----
  std::set<int> layers;
  for (const Result& r : tb.rs)
    for (auto& [l, v] : r.prompt_recall) layers.insert(l);
  tb.md +=
      "## Needle-block selection recall (InfLLM-v2 top-k of the sparse layers)\n\n"
      "Fraction of (kv group, needle block) pairs among the selected blocks, for the last prompt token and averaged "
      "over the generated tokens; best rank = median over samples of the best needle block's rank by pooled score "
      "(1 = first). `dense` = every sample at that length ran the sparse layers dense (shorter than dense_len: all "
      "blocks visible).\n\n| layer |";
  for (int64_t L : tb.lengths) tb.md += fmt::format(" {} prompt / decode (best rank) |", reports::context_label(L));
  tb.md += "\n|---|";
  for (size_t i = 0; i < tb.lengths.size(); ++i) tb.md += "---|";
  tb.md += "\n";
  for (int l : layers) {
    tb.md += fmt::format("| {} |", l);
    size_t xi = 0;
    for (int64_t L : tb.lengths) {
      std::vector<double> pr, dr, rk;
      bool all_dense = true;
      for (const Result& r : tb.rs) {
        if (r.length != L) continue;
        all_dense = all_dense && r.dense;
        if (r.prompt_recall.count(l)) pr.push_back(r.prompt_recall.at(l));
        if (r.decode_recall.count(l)) dr.push_back(r.decode_recall.at(l));
        if (r.prompt_rank.count(l)) rk.push_back(double(r.prompt_rank.at(l)));
      }
      std::sort(rk.begin(), rk.end());
      const double best = rk.empty() ? NAN : rk[rk.size() / 2];
      tb.sum.j["recall"].push_back({{"layer", l},
                                    {"length", L},
                                    {"dense", pr.empty() && all_dense},
                                    {"prompt", num(mean(pr))},
                                    {"decode", num(mean(dr))},
                                    {"best_rank", num(best)},
                                    {"n", pr.size()}});
      tb.sum.row("recall_prompt", "", std::to_string(l), L, mean(pr), std::to_string(pr.size()));
      tb.sum.row("recall_decode", "", std::to_string(l), L, mean(dr), std::to_string(dr.size()));
      if (pr.empty() && all_dense) tb.md += " dense |";
      else
        tb.md += fmt::format(" {} / {} ({}) |", cell(mean(pr), 3), cell(mean(dr), 3),
                             rk.empty() ? "–" : fmt::format("{:.0f}", rk[rk.size() / 2]));
      tb.recall.cells[{l, xi++}] = {mean(pr), mean(dr), pr.empty() && all_dense};
    }
    tb.md += "\n";
    tb.recall.layers.push_back(l);
  }
  for (int64_t L : tb.lengths) tb.recall.length_labels.push_back(reports::context_label(L));
  if (layers.empty())
    tb.md += "| – | no sparse selection in these results (every sample ran dense, or no selections recorded) |\n";
  tb.md += "\n";  // (not "\n" + head: GCC 12 warns -Wrestrict, a false positive, on char* + std::string&&)
  tb.md += depth_table_head(tb.lengths);
  for (int bin = 0; bin < 10; ++bin) {
    tb.md += fmt::format("| {}–{}% |", bin * 10, bin * 10 + 10);
    for (int64_t L : tb.lengths) {
      std::vector<double> v;
      for (const Result& r : tb.rs)
        if (r.length == L && !r.depths.empty() && std::min(9, int(r.depths[0] / 10.0)) == bin)
          for (auto& [l, x] : r.prompt_recall) v.push_back(x);
      tb.md += fmt::format(" {} |", v.empty() ? "" : cell(mean(v), 3));
    }
    tb.md += "\n";
  }
  tb.md +=
      "\n(per depth: the first answer needle's depth; the mean over sparse layers of the last prompt token's recall)\n\n";
}

void time_section(Tables& tb) {
  // ---- time per sample ----
  tb.md += "## Time per sample\n\n| length | samples | mean prefill s | mean sample s |\n|---|---|---|---|\n";
  for (int64_t L : tb.lengths) {
    std::vector<double> p, s;
    for (const Result& r : tb.rs)
      if (r.length == L) p.push_back(r.prefill_s), s.push_back(r.sample_s);
    tb.md += fmt::format("| {} | {} | {:.2f} | {:.2f} |\n", reports::context_label(L), p.size(), mean(p), mean(s));
    tb.sum.j["time"].push_back(
        {{"length", L}, {"samples", p.size()}, {"prefill_s", num(mean(p))}, {"sample_s", num(mean(s))}});
    tb.sum.row("prefill_s", "", "", L, mean(p), std::to_string(p.size()));
    tb.sum.row("sample_s", "", "", L, mean(s), std::to_string(s.size()));
  }
}

// The report folder: plots rendered and checked, summary.json, summary.csv and report.md written, renamed into
// place whole; a failed write names --out.
void write_bundle(Tables& tb, OutputFolder& folder, const ReportOptions& o) {
  try {
    const std::string dir = folder.temp();
    std::vector<std::string> files;
    std::string xt;
    int xi = 0;
    for (int64_t L : tb.lengths) xt += fmt::format("{}\"{}\" {}", xi ? ", " : "", reports::context_label(L), xi), ++xi;
    const std::string heat_cmd = fmt::format(
        "set title 'NIAH: needles found (%) by depth and length'\nset xlabel 'length'\nset ylabel 'needle depth (%)'\n"
        "set xtics ({})\nset yrange [0:100]\nset xrange [-0.5:{}]\nset cbrange [0:100]\n"
        "set palette defined (0 '#d73027', 50 '#fee08b', 100 '#1a9850')\nset datafile missing 'NaN'\n"
        "set style fill solid 1.0 noborder\n"
        "plot 'heatmap.dat' using 1:2:(0.48):(5):3 with boxxyerror lc palette notitle, \\\n"
        "     'heatmap.dat' using 1:2:(sprintf('%.0f', $3)) with labels notitle\n",
        xt, double(tb.lengths.size()) - 0.5);
    std::string notes;
    const reports::PlotOutcome h = reports::render_script(dir, "heatmap", tb.heat_dat, heat_cmd);
    files.insert(files.end(), h.files.begin(), h.files.end());
    notes += h.note.empty() ? "" : h.note + "\n";
    if (!tb.recall.layers.empty()) {
      const reports::PlotOutcome r =
          reports::render_script(dir, "recall", recall_plot_data(tb.recall), recall_plot_commands(tb.recall));
      files.insert(files.end(), r.files.begin(), r.files.end());
      notes += r.note.empty() ? "" : r.note + "\n";
    }
    tb.md += "\n## Plots\n\n![needles found by depth and length](heatmap.svg)\n\n";
    if (!tb.recall.layers.empty()) tb.md += "![selection recall per sparse layer vs length](recall.svg)\n\n";
    tb.md += notes;
    check_rendered(dir, files);
    write_file_atomic((fs::path(dir) / "summary.json").string(), tb.sum.j.dump(2) + "\n", false, "--out");
    write_file_atomic((fs::path(dir) / "summary.csv").string(), tb.sum.csv, false, "--out");
    tb.md +=
        "\nThe same numbers, machine-readable: `summary.json` (with where the results came from: backend, data, "
        "config, weights, tokenizer, revision) and `summary.csv` (one number a row).\n";
    write_file_atomic((fs::path(dir) / "report.md").string(), tb.md, false, "--out");
    folder.commit();
  } catch (const Error& e) {
    // a write of the bundle failed: name the option, not only the temporary folder (the policy's own message may
    // say already that nothing was written)
    const std::string why = e.what();
    fail("--out {}: {}{}", o.out_dir, why,
         why.find("nothing was written") == std::string::npos ? "; nothing was written under --out" : "");
  }
}

}  // namespace

std::string ruler_report(const ReportOptions& o) {
  std::unique_ptr<OutputFolder> folder;  // checked and made before any results are read
  if (!o.out_dir.empty()) {
    std::vector<std::string> inputs = o.results;
    if (!o.paper.empty()) inputs.push_back(o.paper);
    refuse_inputs_inside(o.out_dir, inputs);
    folder = std::make_unique<OutputFolder>(o.out_dir, o.force, "--out");
  }
  const std::vector<Result> rs = read_results(o.results);
  Tables tb{rs, {}, {}, {}, {}, {}, {}, {}};
  for (const Task& t : niah_tasks())
    for (const Result& r : tb.rs)
      if (r.task == t.name) {
        tb.tasks.push_back(t.name);
        break;
      }
  for (const Result& r : tb.rs) {
    tb.lengths.insert(r.length);
    if (std::find(tb.tasks.begin(), tb.tasks.end(), r.task) == tb.tasks.end()) tb.tasks.push_back(r.task);
  }
  tb.md = fmt::format("# RULER NIAH results\n\n{} samples from {}.\n\n", tb.rs.size(), fmt::join(o.results, ", "));
  tb.sum.j["samples"] = tb.rs.size();
  tb.sum.j["results_files"] = o.results;
  tb.sum.j["report_revision"] = o.revision;
  tb.sum.j["provenance"] = provenance(tb.rs);
  tb.sum.j["scores"] = tb.sum.j["niah_average"] = tb.sum.j["recall"] = tb.sum.j["time"] = nlohmann::json::array();

  score_section(tb);
  if (!o.paper.empty()) paper_section(tb, o.paper);
  depth_section(tb);
  recall_section(tb);
  time_section(tb);
  if (folder) write_bundle(tb, *folder, o);
  return tb.md;
}

}  // namespace salasim::ruler
