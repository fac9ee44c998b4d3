// Builds the report bundle: every number comes from the models, the data files or measured runs.
#include "reports/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>

#include "model/error.hpp"
#include "model/output_file.hpp"
#include "reports/architecture.hpp"
#include "reports/calibrate.hpp"
#include "reports/latency.hpp"
#include "reports/measured.hpp"
#include "reports/paper.hpp"
#include "model/data_path.hpp"
#include "reports/plots.hpp"
#include "reports/report_tables.hpp"
#include "reports/sweep.hpp"

namespace salasim::reports {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
const std::vector<WeightFormat> kFormats{WeightFormat::Bf16, WeightFormat::W4A16};

struct Bundle {
  std::filesystem::path dir;
  std::vector<std::string> files;
  void write(const std::string& name, const std::string& text) {
    write_file_atomic((dir / name).string(), text, true);  // checked: a full disk is an error, not a 0-byte file
    files.push_back(name);
  }
};

// One colour per model (and a lighter one for its W4A16 variant), so lines and points of a model match.
std::string color(size_t model_index, WeightFormat f) {
  static const char* bf16[] = {"#7b2cbf", "#1b9e77", "#d95f02", "#1f78b4"};
  static const char* w4[] = {"#c77dff", "#66c2a5", "#fc8d62", "#a6cee3"};
  return (f == WeightFormat::Bf16 ? bf16 : w4)[model_index % 4];
}

Sweep sweep_for(const std::vector<Model>& models, const Card& c, const ReportOptions& o,
                std::vector<WeightFormat> formats = kFormats) {
  Sweep s;
  s.models = models;
  s.formats = std::move(formats);
  s.hw = c.hw;
  s.contexts = o.contexts;
  s.ws = o.ws;
  s.decode_tokens = o.decode_tokens;
  return s;
}

// --- plots ---------------------------------------------------------------------------------------------------

std::vector<std::pair<double, std::string>> context_tics(const std::vector<int64_t>& contexts) {
  std::vector<std::pair<double, std::string>> tics;
  for (int64_t c : contexts) tics.push_back({double(c), context_label(c)});
  return tics;
}

Plot vram_plot(const Sweep& s) {
  Plot p;
  p.stem = "vram_" + s.hw.name;
  p.title = fmt::format("Peak VRAM vs context, {} (prefill chunk {})", s.hw.name, s.ws.chunk);
  p.xlabel = "context (tokens)";
  p.ylabel = "peak VRAM (GiB)";
  p.xtics = context_tics(s.contexts);
  for (size_t mi = 0; mi < s.models.size(); ++mi)
    for (WeightFormat f : s.formats) {
      const Model& m = s.models[mi];
      PlotSeries ser{label(m, f), {}, true, color(mi, f)};
      for (int64_t ctx : s.contexts)
        ser.points.push_back({double(ctx), double(memory_breakdown(m, f, ctx, s.ws).peak()) / double(1 << 30)});
      p.series.push_back(ser);
    }
  p.hline = double(s.hw.memory_bytes) / double(1 << 30);
  p.hline_title = fmt::format("{} memory ({} GiB): above it is OOM", s.hw.name, gib(s.hw.memory_bytes));
  return p;
}

Plot ttft_plot(const Sweep& s, const Card& card, const PaperData& paper) {
  Plot p;
  p.stem = "ttft_" + s.hw.name;
  p.title =
      fmt::format("TTFT vs context, {} ({})", s.hw.name, card.fit.calibrated() ? "calibrated" : "uncalibrated floor");
  p.xlabel = "context (tokens)";
  p.ylabel = "time to first token (s)";
  p.xtics = context_tics(s.contexts);
  for (size_t mi = 0; mi < s.models.size(); ++mi) {
    const Model& m = s.models[mi];
    PlotSeries ser{label(m, WeightFormat::Bf16) + " predicted (OOM points left out)",
                   {},
                   true,
                   color(mi, WeightFormat::Bf16)};
    for (int64_t ctx : s.contexts) {
      const bool ok = fits(memory_breakdown(m, WeightFormat::Bf16, ctx, s.ws), s.hw);
      const double t =
          ok ? predict_latency(m, WeightFormat::Bf16, s.hw, card.fit.eff, ctx, 1, s.ws.chunk).ttft_s : kNaN;
      ser.points.push_back({double(ctx), t});
    }
    p.series.push_back(ser);
  }
  for (size_t mi = 0; mi < s.models.size(); ++mi) {
    const Model& m = s.models[mi];
    PlotSeries ser{label(m, WeightFormat::Bf16) + " paper", {}, false, color(mi, WeightFormat::Bf16), 6};
    for (const PaperPoint& pp : paper.points)
      if (pp.gpu == s.hw.name && pp.model == m.name && pp.weights == WeightFormat::Bf16 && !pp.oom)
        ser.points.push_back({double(pp.context), pp.ttft_s});
    if (!ser.points.empty()) p.series.push_back(ser);
  }
  for (size_t mi = 0; mi < s.models.size(); ++mi) {
    const Model& m = s.models[mi];
    PlotSeries ser{m.name + " measured", {}, false, color(mi, WeightFormat::Bf16), 13};
    for (const MeasuredRun& r : card.runs)
      if (load_model(r.config).name == m.name) ser.points.push_back({double(r.context), r.ttft_s});
    if (!ser.points.empty()) p.series.push_back(ser);
  }
  return p;
}

// --- the architecture page -------------------------------------------------------------------------------------

// architecture.html, treemap.svg and flow.svg for the first MiniCPM-SALA config, and the README's section on them.
std::string architecture_section(Bundle& b, const std::vector<Model>& models, const std::vector<Card>& cards,
                                 const ReportOptions& o, ReportOutcome& out) {
  auto sala = std::find_if(models.begin(), models.end(), [](const Model& m) { return m.kind == ModelKind::Sala; });
  if (sala == models.end()) {
    out.architecture_note = "architecture page skipped: no MiniCPM-SALA config among --config";
    if (!o.checkpoint.empty())
      fail("--checkpoint {}: the architecture page needs a MiniCPM-SALA --config", o.checkpoint);
    return "";
  }
  ArchitectureInput in;
  in.model = &*sala;
  in.checkpoint = o.checkpoint;
  in.command =
      fmt::format("salasim report --out {}{}", o.out, o.checkpoint.empty() ? "" : " --checkpoint " + o.checkpoint);
  for (const Card& c : cards) in.vram.push_back(vram_plot(sweep_for(models, c, o)));
  const ArchitectureOutcome a = write_architecture(b.dir.string(), in);
  b.files.insert(b.files.end(), a.files.begin(), a.files.end());
  out.mismatches = a.mismatches;
  out.architecture_note =
      o.checkpoint.empty() ? "architecture.html: counts from the config's inventory (no --checkpoint)"
      : a.mismatches.empty()
          ? fmt::format("architecture.html: {} counts checked against {}: all equal", a.compared, o.checkpoint)
          : fmt::format("architecture.html: checkpoint {} DISAGREES: {} problem(s), first: {}", o.checkpoint,
                        a.mismatches.size(), a.mismatches.front());
  if (!a.unresolved.empty())
    out.architecture_note +=
        fmt::format("; {} source line(s) not found, first: {}", a.unresolved.size(), a.unresolved.front());
  std::string md = fmt::format("## Architecture of `{}`\n\n", sala->name);
  md += fmt::format(
      "[architecture.html](architecture.html) (one self-contained page: open it in a browser): the "
      "parameter treemap ([treemap.svg](treemap.svg)), the forward flow of one Lightning and one sparse "
      "layer with parameters per step and the reference source lines ([flow.svg](flow.svg)), the "
      "layer-by-layer comparison and the VRAM chart. {}.\n\n",
      out.architecture_note);
  return md;
}

// --- the README ----------------------------------------------------------------------------------------------

std::string section_table(Bundle& b, const std::string& csv, const Table& t) {
  b.write(csv, to_csv(t));
  return to_markdown(t) + fmt::format("\n(CSV: [{}]({}))\n\n", csv, csv);
}

// The README's opening: what wrote it, from which configs, and each card's calibration.
std::string intro(const ReportOptions& o, const std::vector<Model>& models, const std::vector<Card>& cards,
                  ReportOutcome& out) {
  std::string md = "# MiniCPM-SALA: VRAM and latency across context lengths\n\n";
  md += fmt::format(
      "Written by `salasim report --out {}` from the analytic models in `reports/`. Configs: {}. "
      "Prefill in chunks of {} tokens; E2E = TTFT + {} generated tokens (the paper's 1K). Times are "
      "roofline floors divided by efficiency factors; GiB = 2^30 B. Every table row ends with the "
      "command that reproduces it.\n\n",
      o.out,
      [&] {
        std::string s;
        for (const Model& m : models) s += (s.empty() ? "" : ", ") + code(source_relative(m.path));
        return s;
      }(),
      o.ws.chunk, o.decode_tokens);
  md += "**Calibration.**\n\n";
  for (const Card& c : cards) {
    const std::string line = fmt::format("{}: {}", c.hw.name, c.fit.summary(c.hw.efficiency));
    out.calibration.push_back(line);
    md += "- " + line + "\n";
  }
  md += "\nThe paper's numbers are shown beside the predictions as a check; no factor is fitted to them.\n\n";
  return md;
}

// Hardware profiles and the memory model (facts, and the prefill workspace of each model).
std::string memory_sections(Bundle& b, const std::vector<Model>& models, const std::vector<Card>& cards,
                            const ReportOptions& o) {
  std::string md;
  md += "## Hardware profiles\n\n" + section_table(b, "hardware.csv", hardware_table(cards));
  for (const Card& c : cards)
    md += fmt::format("- **{}** ({}): {} *Uncertainty:* {}\n", c.hw.name, source_relative(c.hw.file), c.hw.source,
                      c.hw.uncertainty.empty() ? "none stated." : c.hw.uncertainty);
  md +=
      "\n## Memory model\n\nPeak = weights + KV cache + compressed keys K1/K2 + GLA state (all sized for the "
      "full context) + the prefill workspace of the last chunk. W4A16 is GPTQ 4-bit with group-128 fp16 scales "
      "and 4-bit zeros; embeddings, lm_head, norms, o_gate and z_proj stay bf16.\n\n";
  md += section_table(b, "memory_facts.csv", facts_table(models, o));
  for (const Model& m : models) {
    md += fmt::format(
        "Prefill workspace of `{}` at {} (buffers of different phases are never live together; the "
        "peak is the `all` rows plus the largest phase):\n\n",
        m.name, context_label(o.contexts.back()));
    md += section_table(b, fmt::format("workspace_{}.csv", m.name), workspace_table(m, o.contexts.back(), o));
  }

  return md;
}

// One section per card: peak VRAM, TTFT/decode/E2E, the paper's numbers, the measured runs; the plots they show.
std::string card_sections(Bundle& b, const std::vector<Model>& models, const std::vector<Card>& cards,
                          const ReportOptions& o, const PaperData& paper, std::vector<Plot>& plots) {
  const bool have_gnuplot = gnuplot_available();
  auto image = [&](const std::string& alt, const std::string& stem) {
    return have_gnuplot ? fmt::format("![{}]({}.svg)\n\n", alt, stem)
                        : fmt::format("(plot skipped: gnuplot is not installed; `gnuplot {}.gp` renders it)\n\n", stem);
  };
  std::string per_card;
  for (const Card& c : cards) {
    const Sweep s = sweep_for(models, c, o);
    per_card += fmt::format("## {}: {}\n\n", c.hw.name, c.hw.gpu);
    per_card +=
        fmt::format("### Peak VRAM (card: {} GiB; **OOM** where the peak exceeds it)\n\n", gib(c.hw.memory_bytes));
    per_card += section_table(b, fmt::format("vram_{}.csv", c.hw.name), vram_table(s));
    plots.push_back(vram_plot(s));
    per_card += image("peak VRAM vs context on " + c.hw.name, "vram_" + c.hw.name);
    per_card += fmt::format("### TTFT, decode and E2E ({})\n\n", c.fit.summary(c.hw.efficiency));
    per_card += section_table(b, fmt::format("latency_{}.csv", c.hw.name), latency_wide_table(s, c.fit.eff));
    plots.push_back(ttft_plot(s, c, paper));
    per_card += image("TTFT vs context on " + c.hw.name, "ttft_" + c.hw.name);
    const Table pt = paper_table(s, c.fit.eff, paper);
    if (!pt.rows.empty()) {
      per_card += "### Against the paper's published numbers (a check, not a target)\n\n";
      per_card += section_table(b, fmt::format("paper_{}.csv", c.hw.name), pt);
    }
    per_card += "### Measured runs\n\n";
    if (c.runs.empty())
      per_card += fmt::format(
          "No measured runs for {} yet ({} is empty or missing): the tables above are "
          "predictions only.\n\n",
          c.hw.name, source_relative(measured_path(c.hw.name)));
    else
      per_card += section_table(b, fmt::format("measured_{}.csv", c.hw.name), measured_table(c.runs, c.hw, c.fit.eff));
  }
  return per_card;
}

// Where the time goes on the first card, and the efficiency factors with how they were fitted.
std::string efficiency_sections(Bundle& b, const std::vector<Model>& models, const std::vector<Card>& cards,
                                const ReportOptions& o) {
  std::string md;
  const Card& first = cards.front();
  md += fmt::format("## Where the time goes: floors per op class on {} (efficiency 1)\n\n", first.hw.name);
  md += section_table(b, fmt::format("breakdown_{}.csv", first.hw.name),
                      breakdown_table(sweep_for(models, first, o, {WeightFormat::Bf16})));
  md += "## Efficiency factors\n\n";
  md +=
      "Fitted by least squares on the times (each run weighs by its duration) from the runs in "
      "`reports/measured/<profile>/` (one `salasim run --json-out` record each): per op "
      "class from phase times when runs have them, else one common prefill factor from TTFT totals (GEMM, GLA and "
      "elementwise times all grow linearly with context, so totals cannot separate them); decode per op class from "
      "the runs' profiled decode split where they have one (the \"from\" column lists those factors), else one "
      "factor from ms/token (the \"decode\" column, which then serves every class). Without runs the factors stay "
      "at the profile's values (1.0: the roofline floor).\n\n";
  md += section_table(b, "efficiency.csv", efficiency_table(cards));

  return md;
}

}  // namespace

ReportOutcome write_report(const ReportOptions& o) {
  if (o.contexts.empty()) fail("report: expected at least one context length");
  std::vector<Model> models;
  for (const std::string& c : o.configs) models.push_back(load_model(c));
  std::vector<Card> cards;
  for (const std::string& h : o.hw) {
    Card c;
    c.hw = load_hw(h);
    c.runs = load_measured(measured_path(c.hw.name));
    c.fit = fit_runs(c.runs, c.hw);
    cards.push_back(std::move(c));
  }
  const PaperData paper = load_paper(paper_file());

  Bundle b;
  b.dir = o.dir.empty() ? o.out : o.dir;
  std::filesystem::create_directories(b.dir);
  ReportOutcome out;
  std::string md = intro(o, models, cards, out);
  md += architecture_section(b, models, cards, o, out);
  md += memory_sections(b, models, cards, o);
  std::vector<Plot> plots;
  md += card_sections(b, models, cards, o, paper, plots);
  md += efficiency_sections(b, models, cards, o);

  const PlotOutcome po = render_plots(b.dir.string(), plots);
  out.plots_note = po.note;
  md += "## Plots\n\n" + po.note + ". Each plot's data (`.dat`) and gnuplot script (`.gp`) are in this folder.\n";
  b.write("README.md", md);
  out.files = b.files;
  for (const std::string& f : po.files) out.files.push_back(f);
  return out;
}

}  // namespace salasim::reports
