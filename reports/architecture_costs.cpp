// VRAM by component and the per-op floor table of architecture.html: explain's counts, the memory model's terms,
// the latency model's roofline; this file only lays them out.
#include "reports/architecture_costs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "ops/op.hpp"
#include "reports/context.hpp"
#include "reports/latency.hpp"
#include "reports/svg.hpp"
#include "reports/table.hpp"

namespace salasim::reports {

namespace {

// 1.23G, 456M: counts on the page (three significant digits).
std::string eng(double v) {
  if (v == 0) return "0";
  static const char* units[] = {"", "k", "M", "G", "T", "P", "E"};
  int u = 0;
  while (std::fabs(v) >= 999.5 && u < 6) v /= 1000, ++u;
  return fmt::format("{:.3g}{}", v, units[u]);
}

std::string duration(double s) {
  if (s >= 1) return fmt::format("{:.3g} s", s);
  if (s >= 1e-3) return fmt::format("{:.3g} ms", s * 1e3);
  if (s >= 1e-6) return fmt::format("{:.3g} &micro;s", s * 1e6);
  return fmt::format("{:.3g} ns", s * 1e9);
}

std::string intensity(double flops, double bytes) {
  if (!(bytes > 0)) return "-";
  const double v = flops / bytes;
  return v >= 100 ? fmt::format("{:.0f}", v) : fmt::format("{:.3g}", v);
}

OpCost as_op(const Cost& c) {
  OpCost o;
  o.flops = c.flops, o.bytes = c.bytes, o.exps = c.exps;
  return o;
}

bool runs(const Cost& c) { return c.flops + c.bytes + c.exps > 0; }

OpFloor floor_of(const OpCard& card, int64_t context, const HwProfile& hw) {
  OpFloor f;
  f.op = card.name;
  f.title = card.title;
  const double n = double(context);
  f.prefill = {card.cost_total.prefill.flops * n, card.cost_total.prefill.bytes * n, card.cost_total.prefill.exps * n};
  f.decode = card.cost_total.decode;
  if (runs(f.prefill))
    f.prefill_s = roofline_seconds(as_op(f.prefill), hw), f.prefill_bound = roofline_bound(as_op(f.prefill), hw);
  if (runs(f.decode))
    f.decode_s = roofline_seconds(as_op(f.decode), hw), f.decode_bound = roofline_bound(as_op(f.decode), hw);
  return f;
}

// Five cells of one phase: FLOP, bytes, FLOP per byte, bound, time at the floor.
std::string phase_cells(const Cost& c, double s, const std::string& bound, bool total) {
  if (!runs(c)) return "<td colspan=\"5\" class=\"none\">does not run at this context</td>";
  return fmt::format("<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>", eng(c.flops), eng(c.bytes),
                     intensity(c.flops, c.bytes), total ? "&mdash;" : bound, duration(s));
}

// --- VRAM by component ----------------------------------------------------------------------------------------

struct Component {
  const char* name;
  const char* color;
  int64_t MemoryBreakdown::*bytes;
};
const Component kComponents[] = {{"weights (bf16)", "#4c78a8", &MemoryBreakdown::weight_bytes},
                                 {"KV cache", "#f58518", &MemoryBreakdown::kv_bytes},
                                 {"compressed keys K1+K2", "#e45756", &MemoryBreakdown::compressed_key_bytes},
                                 {"GLA state", "#54a24b", &MemoryBreakdown::gla_state_bytes},
                                 {"prefill workspace", "#b279a2", &MemoryBreakdown::workspace_bytes}};

double to_gib(int64_t b) { return double(b) / double(1 << 30); }

// A tick step of 1, 2 or 5 x 10^k giving at most 8 intervals up to `hi`.
double tick_step(double hi) {
  double step = std::pow(10.0, std::floor(std::log10(hi)));
  for (double m : {0.1, 0.2, 0.5, 1.0, 2.0, 5.0})
    if (hi / (step * m) <= 8) return step * m;
  return step * 10;
}

// One card's memory from a bundle VRAM plot: ("rtx5090", GiB).
std::pair<std::string, double> card_memory(const Plot& p) {
  return {p.stem.substr(p.stem.find('_') + 1), p.hline ? *p.hline : 0};
}

std::string legend_svg(double x, double y) {
  std::string s;
  for (const Component& c : kComponents) {
    s += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{:.1f}\" "
        "y=\"{:.1f}\">{}</text>\n",
        x, y, c.color, x + 16, y + 11, c.name);
    x += 28 + 7.0 * double(std::string(c.name).size());
  }
  return s;
}

// One bar: the components left to right; a value is written inside its segment only where it fits.
std::string bar_svg(const MemoryBreakdown& b, double y, double h, double left, double scale, bool marked) {
  const char* bold = marked ? " font-weight=\"700\"" : "";
  std::string s = fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\"{}>{}</text>\n", left - 8,
                              y + h / 2 + 4, bold, context_label(b.context));
  double x = left;
  for (const Component& c : kComponents) {
    const double w = to_gib(b.*c.bytes) * scale;
    if (w <= 0) continue;
    s += fmt::format(
        "<rect x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.1f}\" fill=\"{}\"><title>{} at {}: "
        "{} B ({} GiB)</title></rect>\n",
        x, y, w, h, c.color, c.name, context_label(b.context), commas(b.*c.bytes), gib(b.*c.bytes));
    const std::string v = gib(b.*c.bytes);
    if (w >= 7.0 * double(v.size()) + 8)
      s += fmt::format("<text class=\"in\" x=\"{:.2f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", x + w / 2,
                       y + h / 2 + 4, v);
    x += w;
  }
  return s +
         fmt::format("<text x=\"{:.2f}\" y=\"{:.1f}\"{}>{} GiB</text>\n", x + 6, y + h / 2 + 4, bold, gib(b.peak()));
}

std::string components_svg(const std::vector<MemoryBreakdown>& bars, int64_t at, const std::vector<Plot>& vram) {
  double top_gib = 0;
  for (const MemoryBreakdown& b : bars) top_gib = std::max(top_gib, to_gib(b.peak()));
  std::vector<std::pair<std::string, double>> cards;  // drawn where on the scale (within 1.5 x the largest peak)
  for (const Plot& p : vram)
    if (p.hline && *p.hline <= 1.5 * top_gib) cards.push_back(card_memory(p)), top_gib = std::max(top_gib, *p.hline);
  const double W = 1160, left = 70, right = 110, top = 40 + 18.0 * double(cards.size()), row = 30, bh = 22;
  const double H = top + row * double(bars.size()) + 44, pw = W - left - right, step = tick_step(top_gib * 1.05);
  const double xmax = std::ceil(top_gib * 1.05 / step) * step, scale = pw / xmax;
  std::string s = svg_open(W, H, "Peak VRAM by component against context (memory model)");
  s += "<style>.vc text{font:12px \"DejaVu Sans\",sans-serif;fill:#333}.vc .in{fill:#fff;font-weight:600}"
       ".vc .grid{stroke:#e4e4e0}.vc .card{stroke:#c5221f;stroke-dasharray:7 5;stroke-width:1.6}</style>\n"
       "<g class=\"vc\">\n";
  s += legend_svg(left, 8);
  const double bottom = top + row * double(bars.size());
  for (double t = 0; t <= xmax + 1e-9; t += step)
    s += fmt::format(
        "<line class=\"grid\" x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\"/><text "
        "x=\"{0:.1f}\" y=\"{3:.1f}\" text-anchor=\"middle\">{4:g}</text>\n",
        left + t * scale, top - 4, bottom, bottom + 16, t);
  s +=
      fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">GiB (2^30 B)</text>\n", left + pw / 2, H - 8);
  for (size_t i = 0; i < bars.size(); ++i)
    s += bar_svg(bars[i], top + row * double(i) + (row - bh) / 2, bh, left, scale, bars[i].context == at);
  for (size_t i = 0; i < cards.size(); ++i) {  // each card's label on a line of its own above the bars
    const double x = left + cards[i].second * scale, ty = 40 + 18.0 * double(i);
    s += fmt::format(
        "<line class=\"card\" x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\"/><text "
        "x=\"{3:.1f}\" y=\"{4:.1f}\" text-anchor=\"end\" fill=\"#c5221f\">{5} memory {6:.2f} GiB</text>\n",
        x, ty - 10, bottom, x - 4, ty, xml_escape(cards[i].first), cards[i].second);
  }
  return s + "</g>\n</svg>\n";
}

std::string components_table(const Model& m, const MemoryBreakdown& b) {
  const WorkspaceTerm* largest = nullptr;
  for (const WorkspaceTerm& t : b.workspace_terms)
    if (!largest || t.bytes > largest->bytes) largest = &t;
  const std::string biggest =
      largest ? fmt::format(", the largest {} ({} GiB)", largest->name, gib(largest->bytes)) : std::string();
  const std::string what[] =
      {fmt::format("{} parameters, 2 B each", commas(model_weight_bytes(m, WeightFormat::Bf16) / 2)),
       fmt::format("{} B/token x {} tokens (the sparse layers only)", commas(model_kv_bytes_per_token(m)),
                   commas(b.context)),
       "the compressed keys of the block selection, sized for the context",
       "the fp32 state of every Lightning layer: the same at every context",
       fmt::format("the {} buffers of one prefill chunk of {} tokens{} (salasim model memory --json lists them)",
                   b.workspace_terms.size(), commas(b.chunk), biggest)};
  std::string s = fmt::format(
      "<table class=\"vram\"><thead><tr><th>component at {}</th><th>bytes</th><th>GiB</th><th>share</th><th>what it "
      "is</th></tr></thead><tbody>\n",
      context_label(b.context));
  for (size_t i = 0; i < std::size(kComponents); ++i) {
    const int64_t v = b.*kComponents[i].bytes;
    s += fmt::
        format("<tr><td><i style=\"background:{}\"></i>{}</td><td>{}</td><td>{}</td><td>{:.1f}%</td><td>{}</td></tr>\n",
               kComponents[i].color, kComponents[i].name, commas(v), gib(v), 100.0 * double(v) / double(b.peak()),
               xml_escape(what[i]));
  }
  s += fmt::format(
      "<tr class=\"total\"><td>peak</td><td>{}</td><td>{}</td><td>100%</td><td>the sum: "
      "<code>salasim model memory --context {}</code></td></tr>\n</tbody></table>\n",
      commas(b.peak()), gib(b.peak()), context_label(b.context));
  return s;
}

}  // namespace

std::string vram_components_html(const Model& m, const std::vector<int64_t>& contexts, int64_t at,
                                 const WorkspaceParams& ws, const std::vector<Plot>& vram) {
  std::vector<int64_t> cs = contexts;
  if (std::find(cs.begin(), cs.end(), at) == cs.end()) cs.push_back(at);
  std::sort(cs.begin(), cs.end());
  std::vector<MemoryBreakdown> bars;
  for (int64_t c : cs) bars.push_back(memory_breakdown(m, WeightFormat::Bf16, c, ws));
  const MemoryBreakdown here = memory_breakdown(m, WeightFormat::Bf16, at, ws);
  return "<figure>\n" + components_svg(bars, at, vram) +
         fmt::format(
             "<figcaption>Peak memory of one request by component (memory model, bf16 weights, prefill chunk "
             "{}); {} in bold is the table's context. Dashed: a card's memory, where it is on this scale."
             "</figcaption></figure>\n",
             commas(ws.chunk), context_label(at)) +
         components_table(m, here);
}

std::vector<OpFloor> op_floors(const Model& m, int64_t context, int64_t chunk, const HwProfile& hw) {
  std::vector<OpFloor> rows;
  OpFloor total;
  total.op = "total";
  for (const op::OpSpec& spec : op::registry()) {
    rows.push_back(floor_of(explain(m, spec.name, context, chunk), context, hw));
    total.prefill_s += rows.back().prefill_s;
    total.decode_s += rows.back().decode_s;
  }
  const OpFloor model = floor_of(explain(m, "model", context, chunk), context, hw);
  total.title = model.title;
  total.prefill = model.prefill;
  total.decode = model.decode;
  rows.push_back(total);
  return rows;
}

std::string op_floor_table_html(const std::vector<OpFloor>& rows, int64_t context, int64_t chunk, const HwProfile& hw) {
  std::string s = fmt::format(
      "<table class=\"ops\"><thead><tr><th rowspan=\"2\">op</th><th colspan=\"5\">prefill of {} tokens (chunks of {})"
      "</th><th colspan=\"5\">one decode token at position {}</th></tr>\n<tr>",
      commas(context), commas(chunk), commas(context));
  for (int i = 0; i < 2; ++i) s += "<th>FLOP</th><th>bytes</th><th>FLOP/B</th><th>bound</th><th>floor</th>";
  s += "</tr></thead><tbody>\n";
  for (const OpFloor& r : rows) {
    const bool total = r.op == "total";
    s += fmt::format("<tr{}><td title=\"{}\"><code>{}</code></td>{}{}</tr>\n", total ? " class=\"total\"" : "",
                     xml_escape(r.title), xml_escape(r.op), phase_cells(r.prefill, r.prefill_s, r.prefill_bound, total),
                     phase_cells(r.decode, r.decode_s, r.decode_bound, total));
  }
  s += "</tbody></table>\n";
  s += fmt::format(
      "<p class=\"sub\">Counts from <code>salasim explain OP --context {}</code> (bf16 weights; an op's FLOPs and bytes "
      "over every layer it runs in). Floor = max(FLOP / {:.0f} TFLOP/s, bytes / {:.2f} TB/s, exp / {:.2g} exp/s) of the "
      "op's totals on the {} profile, the latency model's roofline before any efficiency factor; bound names the "
      "largest of the three (compute, memory, exp). FLOP/B above the card's {:.0f} FLOP/B is compute-bound. The total "
      "row's floor is the sum of the ops'.</p>\n",
      context_label(context), hw.bf16_flops / 1e12, hw.bandwidth / 1e12, hw.exp_per_s, xml_escape(hw.name),
      hw.bf16_flops / hw.bandwidth);
  return s;
}

}  // namespace salasim::reports
