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
#include "reports/comparison.hpp"
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

// The measured points of `m` on a card (its `salasim run` records, or a comparator's), as (context, value).
std::vector<std::pair<double, double>> measured_points(const Card& card, const Model& m,
                                                       double (*value)(const MeasuredRun&)) {
  std::vector<std::pair<double, double>> pts;
  for (const std::vector<MeasuredRun>* runs : {&card.runs, &card.comparator_runs})
    for (const MeasuredRun& r : *runs)
      if (std::filesystem::path(r.config).stem().string() == m.name && r.weights == "bf16")
        pts.push_back({double(r.context), value(r)});
  std::sort(pts.begin(), pts.end());
  return pts;
}

double run_ttft(const MeasuredRun& r) { return r.ttft_s; }
double run_peak_gib(const MeasuredRun& r) {
  return r.peak_vram_bytes > 0 ? double(r.peak_vram_bytes) / double(1 << 30) : kNaN;
}

// Peak VRAM per model and format against context; with `card`, its measured peaks on top.
Plot vram_plot(const Sweep& s, const Card* card = nullptr) {
  Plot p;
  p.stem = "vram_" + s.hw.name;
  p.title = fmt::format("Peak VRAM vs context, {} (prefill chunk {})", s.hw.name, s.ws.chunk);
  p.xlabel = "context (tokens)";
  p.ylabel = "peak VRAM (GiB)";
  p.xtics = context_tics(s.contexts);
  for (size_t mi = 0; mi < s.models.size(); ++mi)
    for (WeightFormat f : s.formats) {
      const Model& m = s.models[mi];
      PlotSeries ser{label(m, f) + " model", {}, true, color(mi, f)};
      for (int64_t ctx : s.contexts)
        ser.points.push_back({double(ctx), double(memory_breakdown(m, f, ctx, s.ws).peak()) / double(1 << 30)});
      p.series.push_back(ser);
    }
  for (size_t mi = 0; card && mi < s.models.size(); ++mi) {
    PlotSeries ser{s.models[mi].name + " bf16 measured", measured_points(*card, s.models[mi], run_peak_gib), false,
                   color(mi, WeightFormat::Bf16)};
    ser.measured = true;
    if (!ser.points.empty()) p.series.push_back(ser);
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
    PlotSeries ser{s.models[mi].name + " bf16 measured", measured_points(card, s.models[mi], run_ttft), false,
                   color(mi, WeightFormat::Bf16)};
    ser.measured = true;
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
      fmt::format("salasim report --out {}{}{}", o.out,
                  o.op_context == ReportOptions{}.op_context ? "" : " --op-context " + context_label(o.op_context),
                  o.checkpoint.empty() ? "" : " --checkpoint " + o.checkpoint);
  for (const Card& c : cards) in.vram.push_back(vram_plot(sweep_for(models, c, o), &c));
  in.contexts = o.contexts;
  in.op_context = o.op_context;
  in.ws = o.ws;
  in.hw = cards.front().hw;
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
      "layer-by-layer comparison, the VRAM chart, VRAM by component and every op's FLOPs, bytes, bound and time "
      "at the floor at {} tokens on {} (`--op-context`). {}.\n\n",
      context_label(o.op_context), cards.front().hw.name, out.architecture_note);
  return md;
}

// --- the README ----------------------------------------------------------------------------------------------

std::string section_table(Bundle& b, const std::string& csv, const Table& t) {
  b.write(csv, to_csv(t));
  return to_markdown(t) + fmt::format("\n(CSV: [{}]({}))\n\n", csv, csv);
}

// The README's image of a plot, or why there is none (gnuplot is looked for once per process).
std::string image(const std::string& alt, const std::string& stem) {
  static const bool have_gnuplot = gnuplot_available();
  return have_gnuplot ? fmt::format("![{}]({}.svg)\n\n", alt, stem)
                      : fmt::format("(plot skipped: gnuplot is not installed; `gnuplot {}.gp` renders it)\n\n", stem);
}

// --- MiniCPM-SALA beside the comparator, measured ------------------------------------------------------------

// One line for the CLI: the lengths each model was measured at, and the ratios where both were.
std::string comparison_line(const Comparison& cmp) {
  std::string sala, other, both;
  for (const ComparisonRow& r : cmp.rows) {
    const std::string at = context_label(r.context);
    if (r.sala) sala += (sala.empty() ? "" : ", ") + at;
    if (r.other) other += (other.empty() ? "" : ", ") + at;
    if (r.sala && r.other)
      both += fmt::format("{}{} x{}", both.empty() ? "" : ", ", at, ratio(r.other->ttft_s / r.sala->ttft_s));
  }
  auto list = [](const std::string& s) { return s.empty() ? std::string("none") : s; };
  return fmt::format(
      "{}: {} / {} measured: {} at {}, {} at {} of {}; TTFT ratio {}", cmp.hw, cmp.other.name, cmp.sala.name,
      cmp.sala.name, list(sala), cmp.other.name, list(other),
      [&] {
        std::string all;
        for (const ComparisonRow& r : cmp.rows) all += (all.empty() ? "" : ", ") + context_label(r.context);
        return all;
      }(),
      both.empty() ? "at none (no length has both records)" : both);
}

// The ratio table and its plot for a card where either model has a record (reports/measured/<card>/ and
// <card>/<comparator>/); nothing for a card without records.
std::string comparison_section(Bundle& b, const std::vector<Model>& models, const Card& c, const ReportOptions& o,
                               const PaperData& paper, std::vector<Plot>& plots, ReportOutcome& out) {
  auto kind = [&](ModelKind k) {
    return std::find_if(models.begin(), models.end(), [k](const Model& m) { return m.kind == k; });
  };
  if (kind(ModelKind::Sala) == models.end() || kind(ModelKind::Dense) == models.end()) return "";
  ComparisonInput in;
  in.root = o.measured;
  in.hw = c.hw.name;
  in.sala_config = kind(ModelKind::Sala)->path;
  in.other_config = kind(ModelKind::Dense)->path;
  const Comparison cmp = load_comparison(in, paper);
  if (cmp.sala_records + cmp.other_records == 0) return "";
  out.comparison.push_back(comparison_line(cmp));
  std::string md = fmt::format("### {} beside {}, measured on {}\n\n", cmp.other.name, cmp.sala.name, c.hw.name);
  md += fmt::format(
      "TTFT and peak device memory from the records: `{}` (`salasim run --json-out`) and `{}` "
      "(`bench/qwen3_hf.py`: Hugging Face transformers, torch SDPA, synthetic bf16 weights); ratios are {} / {}. "
      "The paper's {} figures are beside them (it gives no memory figures). A length without a record says "
      "*not measured*.\n\n",
      source_relative(cmp.sala_dir), source_relative(cmp.other_dir), cmp.other.name, cmp.sala.name, cmp.paper_gpu);
  md += section_table(b, fmt::format("compare_{}.csv", c.hw.name), comparison_table(cmp));
  const Plot p = comparison_plot(cmp);
  if (!p.series.empty()) {
    plots.push_back(p);
    md += image(fmt::format("{} / {} vs context", cmp.other.name, cmp.sala.name), p.stem);
  }
  return md;
}

// Every card with its `salasim run` records, the comparators' records beside them, and the fit.
std::vector<Card> load_cards(const std::vector<Model>& models, const ReportOptions& o) {
  std::vector<Card> cards;
  for (const std::string& h : o.hw) {
    Card c;
    c.hw = load_hw(h);
    c.runs = load_measured(measured_path(c.hw.name, o.measured));
    for (const Model& m : models)  // a comparator's records sit in a folder of its own: never in the fit
      if (m.kind == ModelKind::Dense) {
        const std::vector<MeasuredRun> r =
            load_measured((std::filesystem::path(measured_path(c.hw.name, o.measured)) / m.name).string());
        c.comparator_runs.insert(c.comparator_runs.end(), r.begin(), r.end());
      }
    c.fit = fit_runs(c.runs, c.hw);
    cards.push_back(std::move(c));
  }
  return cards;
}

// One card's part of the README: VRAM, latency, the paper, SALA beside the comparator as measured, the runs.
std::string card_section(Bundle& b, const std::vector<Model>& models, const Card& c, const ReportOptions& o,
                         const PaperData& paper, std::vector<Plot>& plots, ReportOutcome& out) {
  const Sweep s = sweep_for(models, c, o);
  std::string md = fmt::format("## {}: {}\n\n", c.hw.name, c.hw.gpu);
  md += fmt::format("### Peak VRAM (card: {} GiB; **OOM** where the peak exceeds it)\n\n", gib(c.hw.memory_bytes));
  md += section_table(b, fmt::format("vram_{}.csv", c.hw.name), vram_table(s));
  plots.push_back(vram_plot(s, &c));
  md += image("peak VRAM vs context on " + c.hw.name, "vram_" + c.hw.name);
  md += fmt::format("### TTFT, decode and E2E ({})\n\n", c.fit.summary(c.hw.efficiency));
  md += section_table(b, fmt::format("latency_{}.csv", c.hw.name), latency_wide_table(s, c.fit.eff));
  plots.push_back(ttft_plot(s, c, paper));
  md += image("TTFT vs context on " + c.hw.name, "ttft_" + c.hw.name);
  const Table pt = paper_table(s, c.fit.eff, paper);
  if (!pt.rows.empty()) {
    md += "### Against the paper's published numbers (a check, not a target)\n\n";
    md += section_table(b, fmt::format("paper_{}.csv", c.hw.name), pt);
  }
  md += comparison_section(b, models, c, o, paper, plots, out);
  md += "### Measured runs\n\n";
  if (c.runs.empty())
    md +=
        fmt::format("No measured runs for {} yet ({} is empty or missing): the tables above are predictions only.\n\n",
                    c.hw.name, source_relative(measured_path(c.hw.name, o.measured)));
  else md += section_table(b, fmt::format("measured_{}.csv", c.hw.name), measured_table(c.runs, c.hw, c.fit.eff));
  return md;
}

}  // namespace

ReportOutcome write_report(const ReportOptions& o) {
  if (o.contexts.empty()) fail("report: expected at least one context length");
  std::vector<Model> models;
  for (const std::string& c : o.configs) models.push_back(load_model(c));
  const std::vector<Card> cards = load_cards(models, o);
  const PaperData paper = load_paper(paper_file());

  Bundle b;
  b.dir = o.dir.empty() ? o.out : o.dir;
  std::filesystem::create_directories(b.dir);
  ReportOutcome out;

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
  md += architecture_section(b, models, cards, o, out);

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

  std::vector<Plot> plots;
  for (const Card& c : cards) md += card_section(b, models, c, o, paper, plots, out);

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

  const PlotOutcome po = render_plots(b.dir.string(), plots);
  out.plots_note = po.note;
  md += "## Plots\n\n" + po.note + ". Each plot's data (`.dat`) and gnuplot script (`.gp`) are in this folder.\n";
  b.write("README.md", md);
  out.files = b.files;
  for (const std::string& f : po.files) out.files.push_back(f);
  return out;
}

}  // namespace salasim::reports
