// The architecture page's drawings besides the treemap: the forward flow beside its source lines, the per-layer
// parameter bars and the VRAM chart. Hand-written SVG: text is measured by character count (0.6 em per
// monospace character), so nothing is cut; the viewBox scales each drawing to the page.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "reports/architecture.hpp"
#include "reports/svg.hpp"
#include "reports/source_lines.hpp"
#include "reports/table.hpp"

namespace salasim::reports {

namespace {

constexpr double kMargin = 16, kBoxW = 440, kGap = 26, kLine = 15.5, kCodeChar = 6.65;
constexpr size_t kLeftChars = 62, kCodeChars = 104;

// One line of text made of spans, each with its CSS class.
struct Span {
  std::string text, cls;
};
using Line = std::vector<Span>;

std::string text_line(double x, double y, const Line& line, const std::string& cls) {
  std::string s = fmt::format("<text class=\"{}\" x=\"{:.1f}\" y=\"{:.1f}\">", cls, x, y);
  for (const Span& sp : line)
    s += sp.cls.empty() ? xml_escape(sp.text)
                        : fmt::format("<tspan class=\"{}\">{}</tspan>", sp.cls, xml_escape(sp.text));
  return s + "</text>\n";
}

const char* part_class(Part p) {
  switch (p) {
    case Part::Lightning: return "lightning";
    case Part::Sparse: return "sparse";
    case Part::Entry:
    case Part::Exit: return "entry";
    default: return "every";
  }
}

// A step's parameters, checked instance by instance and in total.
Line params_line(const std::vector<TensorSpec>& inv, CountCheck& k, const FlowStep& s, const std::vector<int>& layers) {
  if (s.tensors.empty()) return {{"no parameters", "muted"}};
  int64_t each = 0;
  for (const std::string& t : s.tensors) each += find_tensor(inv, tensor_at(t, layers.front()))->numel();
  bool each_ok = true;
  int64_t bad_actual = 0;
  std::vector<std::string> all;
  for (int l : layers) {
    std::vector<std::string> names;
    for (const std::string& t : s.tensors) names.push_back(tensor_at(t, l));
    all.insert(all.end(), names.begin(), names.end());
    const Checked one =
        check_sum(k, fmt::format("{} ({})", s.label, l < 0 ? "model" : fmt::format("layer {}", l)),
                  [&](const std::string& n) { return std::find(names.begin(), names.end(), n) != names.end(); });
    if (!one.ok && each_ok) bad_actual = one.actual;
    each_ok = each_ok && one.ok;
  }
  Line line{{commas(each) + " params", each_ok ? "" : "bad"}};
  if (!each_ok) line.push_back({fmt::format(" (checkpoint {})", commas(bad_actual)), "bad"});
  if (layers.size() > 1) {
    const Checked sum = check_sum(k, s.label + " (all layers)", [&](const std::string& n) {
      return std::find(all.begin(), all.end(), n) != all.end();
    });
    line.push_back({fmt::format(" x {} layers = ", layers.size()), ""});
    line.push_back({commas(sum.expected), sum.ok ? "" : "bad"});
    if (!sum.ok) line.push_back({fmt::format(" (checkpoint {})", commas(sum.actual)), "bad"});
  }
  if (k.on() && each_ok) line.push_back({"  \u2713 checkpoint", "ok"});
  return line;
}

struct Block {
  std::vector<Line> left;
  std::vector<Line> right;  // the code column: file:line headers and statement lines
  std::string cls;
  double height() const { return double(std::max(left.size(), right.size())) * kLine + 12; }
};

Block step_block(const std::vector<TensorSpec>& inv, CountCheck& k, const FlowStep& s, const std::vector<int>& layers,
                 std::vector<std::string>* unresolved) {
  Block b;
  b.cls = part_class(s.part);
  b.left.push_back({{s.label, "t"}, {s.op.empty() ? "" : "   " + s.op, "op"}});
  for (const std::string& w : wrap(s.in + " \u2192 " + s.out, kLeftChars)) b.left.push_back({{w, ""}});
  b.left.push_back(params_line(inv, k, s, layers));
  if (!s.tensors.empty()) {
    std::string names;
    for (const std::string& t : s.tensors) names += (names.empty() ? "" : ", ") + t.substr(0, t.rfind(".weight"));
    for (const std::string& w : wrap(names, kLeftChars + 4)) b.left.push_back({{w, "tensor"}});
  }
  if (!s.note.empty())
    for (const std::string& w : wrap(s.note, kLeftChars + 4)) b.left.push_back({{w, "note"}});
  const SourceLine l = step_source(s);
  if (!l.found()) {
    b.right.push_back({{"NOT FOUND: " + l.error, "bad"}});
    if (unresolved) unresolved->push_back(l.error);
    return b;
  }
  b.right.push_back({{l.where(), "loc"}});
  size_t from = 0;
  while (from <= l.text.size()) {
    const size_t nl = std::min(l.text.find('\n', from), l.text.size());
    for (const std::string& w : wrap(l.text.substr(from, nl - from), kCodeChars)) b.right.push_back({{w, "code"}});
    from = nl + 1;
  }
  return b;
}

// A panel: a heading, then the blocks joined by arrows. Returns the SVG and advances y.
std::string panel(const std::string& title, const std::string& sub, const std::vector<Block>& blocks, double code_w,
                  double& y) {
  std::string s = text_line(kMargin, y + 18, {{title, ""}}, "h");
  s += text_line(kMargin, y + 36, {{sub, ""}}, "sub");
  y += 48;
  for (size_t i = 0; i < blocks.size(); ++i) {
    const Block& b = blocks[i];
    const double h = b.height();
    s += fmt::format("<rect class=\"box {}\" x=\"{}\" y=\"{:.1f}\" width=\"{}\" height=\"{:.1f}\" rx=\"6\"/>\n", b.cls,
                     kMargin, y, kBoxW, h);
    for (size_t j = 0; j < b.left.size(); ++j)
      s += text_line(kMargin + 10, y + 17 + double(j) * kLine, b.left[j], j == 0 ? "step" : "detail");
    if (!b.right.empty()) {
      const double cx = kMargin + kBoxW + kGap;
      s += fmt::
          format("<rect class=\"codebg\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" rx=\"4\"/>\n", cx,
                 y, code_w, h);
      s += fmt::format("<line class=\"link\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\"/>\n",
                       kMargin + kBoxW, y + h / 2, cx, y + h / 2);
      for (size_t j = 0; j < b.right.size(); ++j)
        s += text_line(cx + 8, y + 17 + double(j) * kLine, b.right[j], "codeline");
    }
    y += h;
    if (i + 1 < blocks.size()) {
      const double x = kMargin + kBoxW / 2;
      s += fmt::format(
          "<line class=\"arrow\" x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\"/>"
          "<polygon class=\"head\" points=\"{3:.1f},{2:.1f} {4:.1f},{2:.1f} {0:.1f},{5:.1f}\"/>\n",
          x, y + 1, y + 12, x - 5, x + 5, y + 17);
      y += 18;
    }
  }
  y += 20;
  return s;
}

double code_width(const std::vector<Block>& blocks) {
  size_t chars = 0;
  for (const Block& b : blocks)
    for (const Line& l : b.right)
      for (const Span& sp : l) chars = std::max(chars, sp.text.size());
  return double(chars) * kCodeChar + 20;
}

}  // namespace

std::string flow_svg(const ModelConfig& c, const std::vector<TensorSpec>& inv, CountCheck& k,
                     std::vector<std::string>* unresolved) {
  const std::vector<FlowStep> flow = forward_flow(c);
  const ParamCount pc = count_params(c, inv);
  std::vector<Block> outer, light, sparse;
  for (const FlowStep& s : flow)
    if (s.part == Part::Entry) outer.push_back(step_block(inv, k, s, {-1}, unresolved));
  Block repeat;
  repeat.cls = "every";
  repeat.left = {{{fmt::format("{} decoder layers", c.num_hidden_layers), "t"}},
                 {{fmt::format("{} Lightning and {} sparse, in the order of mixer_types (below)", pc.n_lightning,
                               pc.n_sparse),
                   ""}}};
  for (const std::string& w :
       wrap(fmt::format("h = h + {0:.10g} * Mixer(RMSNorm(h)); h = h + {0:.10g} * MLP(RMSNorm(h))", c.residual_scale()),
            kLeftChars + 4))
    repeat.left.push_back({{w, "note"}});
  outer.push_back(repeat);
  for (const FlowStep& s : flow)
    if (s.part == Part::Exit) outer.push_back(step_block(inv, k, s, {-1}, unresolved));
  const std::vector<int> ll = part_layers(c, Part::Lightning), sl = part_layers(c, Part::Sparse);
  if (!ll.empty())
    for (const FlowStep& s : layer_steps(flow, Mixer::Lightning))
      light.push_back(step_block(inv, k, s, ll, unresolved));
  if (!sl.empty())
    for (const FlowStep& s : layer_steps(flow, Mixer::Sparse)) sparse.push_back(step_block(inv, k, s, sl, unresolved));

  double code_w = std::max({code_width(outer), code_width(light), code_width(sparse), 300.0});
  const double width = kMargin + kBoxW + kGap + code_w + kMargin;
  std::string body;
  double y = kMargin;
  const int64_t non_layer = pc.total - pc.lightning_layer * pc.n_lightning - pc.sparse_layer * pc.n_sparse;
  body += panel("Entry and exit", fmt::format("non-layer parameters: {}", commas(non_layer)), outer, code_w, y);
  if (!light.empty())
    body += panel(fmt::format("Lightning layer (linear attention): layers {}", layer_ranges(ll)),
                  fmt::format("{} parameters per layer x {} = {}", commas(pc.lightning_layer), ll.size(),
                              commas(pc.lightning_layer * int64_t(ll.size()))),
                  light, code_w, y);
  if (!sparse.empty())
    body += panel(fmt::format("Sparse layer (InfLLM-v2, NoPE, GQA {}:1): layers {}", c.group_size(), layer_ranges(sl)),
                  fmt::format("{} parameters per layer x {} = {}", commas(pc.sparse_layer), sl.size(),
                              commas(pc.sparse_layer * int64_t(sl.size()))),
                  sparse, code_w, y);
  std::string s =
      svg_open(width, y, "Forward flow of MiniCPM-SALA with parameters per step and the reference source lines");
  s += "<style>"
       ".fl text{font:12.5px \"DejaVu Sans\",sans-serif;fill:#222}.fl .h{font-size:17px;font-weight:700}"
       ".fl .sub{fill:#555}.fl .t{font-weight:700}.fl .op{fill:#777;font-size:11.5px}"
       ".fl .note{fill:#666;font-style:italic;font-size:11.5px}.fl .tensor{fill:#444;font-size:11.5px}"
       ".fl .muted{fill:#777}.fl .ok{fill:#137333}.fl .bad{fill:#c5221f;font-weight:700}"
       ".fl .codeline{font:11px \"DejaVu Sans Mono\",monospace}.fl .loc{fill:#1a5fb4}"
       ".fl .box{stroke-width:1.2}.fl .lightning{fill:#eef3fa;stroke:#4c78a8}.fl .sparse{fill:#fff4e8;stroke:#f58518}"
       ".fl .every{fill:#f1f8ef;stroke:#54a24b}.fl .entry{fill:#f6eef4;stroke:#b279a2}"
       ".fl .codebg{fill:#f6f6f4;stroke:#dcdcd6}.fl .link{stroke:#bbb;stroke-dasharray:3 3}"
       ".fl .arrow{stroke:#777;stroke-width:1.5}.fl .head{fill:#777}"
       "</style>\n<g class=\"fl\">\n";
  return s + body + "</g>\n</svg>\n";
}

std::string layer_bars_svg(const ModelConfig& c, const std::vector<TensorSpec>& inv, CountCheck& k) {
  const double W = 1160, H = 350, left = 90, right = 16, top = 36, bottom = 44;
  const int L = c.num_hidden_layers;
  std::vector<int64_t> mixer(size_t(L), 0), mlp(size_t(L), 0), norms(size_t(L), 0);
  for (const TensorSpec& t : inv) {
    if (t.layer < 0) continue;
    (t.component == Component::Mlp ? mlp : t.shape.size() == 1 ? norms : mixer)[size_t(t.layer)] += t.numel();
  }
  int64_t top_value = 1;
  for (int l = 0; l < L; ++l) top_value = std::max(top_value, mixer[size_t(l)] + mlp[size_t(l)] + norms[size_t(l)]);
  // A round axis top: 1, 2 or 5 x 10^k above the tallest bar.
  double step = std::pow(10.0, std::floor(std::log10(double(top_value) / 5)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (double(top_value) / (m * step) <= 6) {
      step *= m;
      break;
    }
  const double ymax = std::ceil(double(top_value) / step) * step;
  const double pw = W - left - right, ph = H - top - bottom, slot = pw / L;
  auto Y = [&](double v) { return top + ph - v / ymax * ph; };
  std::string s = svg_open(W, H, "Parameters per layer: mixer, MLP and norms");
  s += "<style>.lb text{font:12px \"DejaVu Sans\",sans-serif;fill:#333}.lb .grid{stroke:#e4e4e0}"
       ".lb .mix-l{fill:#4c78a8}.lb .mix-s{fill:#f58518}.lb .mlp{fill:#54a24b}.lb .norm{fill:#9d9d9d}"
       ".lb .bad{stroke:#c5221f;stroke-width:3;fill:none}.lb .axis{stroke:#555}</style>\n<g class=\"lb\">\n";
  for (double v = 0; v <= ymax * (1 + 1e-9); v += step)
    s += fmt::format(
        "<line class=\"grid\" x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\"/><text x=\"{}\" y=\"{:.1f}\" "
        "text-anchor=\"end\">{}M</text>\n",
        left, Y(v), W - right, Y(v), left - 6, Y(v) + 4, fmt::format("{:g}", v / 1e6));
  for (int l = 0; l < L; ++l) {
    const bool light = c.layers[size_t(l)] == Mixer::Lightning;
    const double x = left + slot * l + slot * 0.12, w = slot * 0.76;
    double base = 0;
    const std::pair<int64_t, const char*> segs[] = {{norms[size_t(l)], "norm"},
                                                    {mlp[size_t(l)], "mlp"},
                                                    {mixer[size_t(l)], light ? "mix-l" : "mix-s"}};
    for (const auto& [v, cls] : segs) {
      if (v == 0) continue;
      s += fmt::format(
          "<rect class=\"{}\" x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\"><title>layer {} "
          "{}: {}</title></rect>\n",
          cls, x, Y(base + double(v)), w, Y(base) - Y(base + double(v)), l,
          std::string(cls) == "norm"  ? "norms"
          : std::string(cls) == "mlp" ? "MLP"
                                      : "mixer",
          commas(v));
      base += double(v);
    }
    const Checked lc =
        check_sum(k, fmt::format("layer {} (bars)", l), [&](const std::string& n) { return tensor_layer(n) == l; });
    if (!lc.ok)
      s += fmt::format(
          "<rect class=\"bad\" x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\"><title>checkpoint: "
          "{}</title></rect>\n",
          x, Y(base), w, Y(0) - Y(base), commas(lc.actual));
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>", x + w / 2, H - bottom + 15, l);
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", x + w / 2, H - bottom + 30,
                     light ? "L" : "S");
  }
  s += fmt::format("<line class=\"axis\" x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\"/>\n", left, Y(0), W - right,
                   Y(0));
  s += fmt::format(
      "<text x=\"{}\" y=\"{}\">parameters (millions); L = Lightning (blue mixer), S = sparse (orange "
      "mixer), green MLP, grey norms</text>\n",
      left, 16);
  return s + "</g>\n</svg>\n";
}

std::string vram_svg(const std::vector<Plot>& vram) {
  const Plot& p = vram.front();
  const double W = 1160, H = 540, left = 80, right = 20, top = 20, bottom = 56;
  double xlo = INFINITY, xhi = 0, ylo = INFINITY, yhi = 0;
  for (const PlotSeries& s : p.series)
    for (const auto& [x, y] : s.points) {
      xlo = std::min(xlo, x);
      xhi = std::max(xhi, x);
      if (std::isfinite(y) && y > 0) {
        ylo = std::min(ylo, y);
        yhi = std::max(yhi, y);
      }
    }
  for (const Plot& q : vram)
    if (q.hline) {
      ylo = std::min(ylo, *q.hline);
      yhi = std::max(yhi, *q.hline);
    }
  ylo /= 2.5;  // room under the lowest curve for the key (bottom right)
  yhi *= 1.3;
  if (!(xhi > xlo)) xhi = xlo * 2;
  const double pw = W - left - right, ph = H - top - bottom;
  auto X = [&](double x) { return left + std::log(x / xlo) / std::log(xhi / xlo) * pw; };
  auto Y = [&](double y) { return top + ph - std::log(y / ylo) / std::log(yhi / ylo) * ph; };
  std::string s = svg_open(W, H, p.title);
  s += "<style>.vr text{font:12px \"DejaVu Sans\",sans-serif;fill:#333}.vr .grid{stroke:#e4e4e0}.vr .axis{stroke:#555}"
       ".vr .card{stroke-dasharray:7 5;stroke-width:1.6}.vr .series{fill:none;stroke-width:2.2}"
       ".vr .legend{fill:#fff;fill-opacity:0.9;stroke:#ccc}</style>\n<g class=\"vr\">\n";
  for (double t : log_ticks(ylo, yhi))
    s += fmt::format(
        "<line class=\"grid\" x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\"/><text x=\"{}\" y=\"{:.1f}\" "
        "text-anchor=\"end\">{:g}</text>\n",
        left, Y(t), W - right, Y(t), left - 6, Y(t) + 4, t);
  for (const auto& [x, label] : p.xtics)
    s += fmt::format(
        "<line class=\"grid\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\"/><text x=\"{0:.1f}\" "
        "y=\"{3:.1f}\" text-anchor=\"middle\">{4}</text>\n",
        X(x), top, top + ph, top + ph + 16, xml_escape(label));
  s += fmt::format("<rect class=\"axis\" fill=\"none\" x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{:.1f}\"/>\n", left,
                   top, pw, ph);
  s += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", left + pw / 2, H - 14,
                   xml_escape(p.xlabel));
  s +=
      fmt::format("<text transform=\"translate(18 {:.1f}) rotate(-90)\" text-anchor=\"middle\">{} (log scale)</text>\n",
                  top + ph / 2, xml_escape(p.ylabel));
  for (const Plot& q : vram) {
    if (!q.hline) continue;
    s += fmt::format(
        "<line class=\"card\" stroke=\"#c5221f\" x1=\"{}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\"/>"
        "<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n",
        left, Y(*q.hline), left + pw, Y(*q.hline), left + 6, Y(*q.hline) - 5, xml_escape(q.hline_title));
  }
  // The key at the bottom right, the cards' labels at the left end of their lines: where the curves are not (every
  // curve rises with the context from well under the smallest card's memory).
  const double lh = 18, lx = left + pw - 312, ly = top + ph - lh * double(p.series.size()) - 22;
  s += fmt::format("<rect class=\"legend\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{:.1f}\"/>\n", lx, ly, 300,
                   lh * double(p.series.size()) + 10);
  for (size_t i = 0; i < p.series.size(); ++i) {
    const PlotSeries& ser = p.series[i];
    const std::string color = ser.color.empty() ? "#333" : ser.color;
    std::string pts;
    for (const auto& [x, y] : ser.points) {
      if (!std::isfinite(y) || y <= 0) continue;
      pts += fmt::format("{:.1f},{:.1f} ", X(x), Y(y));
      if (ser.measured)  // a measurement: a square ringed in black, drawn where a model point may lie under it
        s += fmt::format(
            "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"11\" height=\"11\" fill=\"{}\" stroke=\"#000\" "
            "stroke-width=\"1.6\"><title>{}: {:.2f} GiB at {}</title></rect>\n",
            X(x) - 5.5, Y(y) - 5.5, color, xml_escape(ser.title), y, x);
      else
        s += fmt::format(
            "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.2\" fill=\"{}\"><title>{}: {:.2f} GiB at {}</title></circle>\n",
            X(x), Y(y), color, xml_escape(ser.title), y, x);
    }
    if (ser.line) s += fmt::format("<polyline class=\"series\" stroke=\"{}\" points=\"{}\"/>\n", color, pts);
    const double yy = ly + 16 + lh * double(i);
    if (ser.measured)
      s += fmt::format(
          "<rect x=\"{}\" y=\"{:.1f}\" width=\"11\" height=\"11\" fill=\"{}\" stroke=\"#000\" "
          "stroke-width=\"1.6\"/>",
          lx + 13, yy - 9.5, color);
    else
      s += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"2.5\"/>",
                       lx + 8, yy - 4, lx + 30, yy - 4, color);
    s += fmt::format("<text x=\"{}\" y=\"{:.1f}\">{}</text>\n", lx + 38, yy, xml_escape(ser.title));
  }
  return s + "</g>\n</svg>\n";
}

}  // namespace salasim::reports
