// Squarified layout and its SVG.
#include "reports/treemap.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "model/error.hpp"
#include "reports/svg.hpp"

namespace salasim::reports {

namespace {

// The worst aspect ratio of a row of areas laid along a side of length `side`.
double worst(double sum, double lo, double hi, double side) {
  const double s2 = sum * sum, w2 = side * side;
  return std::max(w2 * hi / s2, s2 / (w2 * lo));
}

// Rectangles and borders only; the labels are drawn afterwards, on top (treemap_labels).
std::vector<Rect> child_rects(const TreeNode& n, const Rect& r) {
  std::vector<double> v;
  for (const TreeNode& c : n.children) v.push_back(double(c.value));
  return squarify(v, r);
}

void draw(std::string& out, const TreeNode& n, const Rect& r, int depth) {
  // A disagreeing leaf is filled red; a disagreeing parent gets a red border (drawn over its children below).
  const std::string cls = n.cls + (n.bad && n.children.empty() ? " bad" : "");
  out += fmt::format(
      "<g><rect class=\"{}\" data-params=\"{}\" data-depth=\"{}\" x=\"{:.6f}\" y=\"{:.6f}\" width=\"{:.9g}\" "
      "height=\"{:.9g}\"><title>{}</title></rect>",
      cls, n.value, depth, r.x, r.y, r.w, r.h, xml_escape(n.tip));
  if (!n.children.empty()) {
    const std::vector<Rect> rs = child_rects(n, r);
    for (size_t i = 0; i < n.children.size(); ++i) draw(out, n.children[i], rs[i], depth + 1);
    // The parent's border on top of its children (no data-params: it is not an area of its own).
    out += fmt::format("<rect class=\"edge e{}{}\" x=\"{:.6f}\" y=\"{:.6f}\" width=\"{:.9g}\" height=\"{:.9g}\"/>",
                       depth, n.bad ? " edgebad" : "", r.x, r.y, r.w, r.h);
  }
  out += "</g>\n";
}

double text_width(const std::string& s, double size) { return 0.62 * size * double(s.size()) + 6; }

bool inside(const Rect& a, const Rect& b) {  // a within b
  return a.x >= b.x - 1e-6 && a.y >= b.y - 1e-6 && a.x + a.w <= b.x + b.w + 1e-6 && a.y + a.h <= b.y + b.h + 1e-6;
}

// A layer's label (depth 2): inside the child at its top-left corner (or itself, for a leaf), only where it fits
// there, so it names that corner's layer and crosses no edge.
void inner_label(std::vector<TreeLabel>& out, const TreeNode& n, const Rect& r) {
  if (n.label.empty()) return;
  Rect host = r;
  if (!n.children.empty())
    for (const Rect& c : child_rects(n, r))
      if (std::fabs(c.x - r.x) < 1e-6 && std::fabs(c.y - r.y) < 1e-6) host = c;
  const Rect box{host.x + 2, host.y + 2, text_width(n.label, 11), 15};
  if (inside(box, host)) out.push_back({n.label, 2, box, {}, false});
}

// A region's label: in the band above or below the map over the region's span, or in the key line.
void region_label(std::vector<TreeLabel>& out, const TreeNode& n, const Rect& r, double height) {
  const double tw = text_width(n.label, 14);
  const bool fits = tw <= r.w - 8;
  if (fits && r.y < 1e-6)
    out.push_back({n.label, 1, {r.x + (r.w - tw) / 2, -kTreemapBand + 2, tw, 18}, {r.x, -6, r.w, 0}, false});
  else if (fits && r.y + r.h > height - 1e-6)
    out.push_back({n.label, 1, {r.x + (r.w - tw) / 2, height + 10, tw, 18}, {r.x, height + 6, r.w, 0}, false});
  else out.push_back({n.label, 1, {}, {}, true});
}

}  // namespace

std::vector<Rect> squarify(const std::vector<double>& values, Rect r) {
  const double total = std::accumulate(values.begin(), values.end(), 0.0);
  for (double v : values)
    if (!(v > 0)) fail("internal: treemap value {} is not positive", v);
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return values[a] > values[b]; });
  const double scale = r.w * r.h / total;
  std::vector<Rect> out(values.size());
  size_t i = 0;
  while (i < order.size()) {
    const double side = std::min(r.w, r.h);
    // Grow the row while its worst aspect ratio improves.
    size_t j = i;
    double sum = 0, lo = 0, hi = 0;
    while (j < order.size()) {
      const double a = values[order[j]] * scale;
      const double s2 = sum + a, lo2 = j == i ? a : std::min(lo, a), hi2 = j == i ? a : std::max(hi, a);
      if (j > i && worst(s2, lo2, hi2, side) > worst(sum, lo, hi, side)) break;
      sum = s2;
      lo = lo2;
      hi = hi2;
      ++j;
    }
    // The last row takes the whole remaining rectangle, so rounding never leaves a sliver.
    const bool last = j == order.size();
    const bool vertical = r.w >= r.h;  // a column along the left edge, else a row along the top
    const double thick = last ? (vertical ? r.w : r.h) : sum / side;
    double at = vertical ? r.y : r.x;
    for (size_t k = i; k < j; ++k) {
      const double a = values[order[k]] * scale;
      const double len = k + 1 == j ? (vertical ? r.y + r.h : r.x + r.w) - at : a / thick;
      out[order[k]] = vertical ? Rect{r.x, at, thick, len} : Rect{at, r.y, len, thick};
      at += len;
    }
    if (vertical) {
      r.x += thick;
      r.w -= thick;
    } else {
      r.y += thick;
      r.h -= thick;
    }
    i = j;
  }
  return out;
}

std::vector<TreeLabel> treemap_labels(const TreeNode& root, double width, double height) {
  std::vector<TreeLabel> out;
  const Rect all{0, 0, width, height};
  if (root.children.empty()) return out;
  const std::vector<Rect> regions = child_rects(root, all);
  for (size_t i = 0; i < root.children.size(); ++i) {
    const TreeNode& g = root.children[i];
    region_label(out, g, regions[i], height);
    if (g.children.empty()) continue;
    const std::vector<Rect> items = child_rects(g, regions[i]);
    for (size_t j = 0; j < g.children.size(); ++j) inner_label(out, g.children[j], items[j]);
  }
  return out;
}

std::string treemap_svg(const TreeNode& root, double width, double height, const std::string& title) {
  const std::vector<TreeLabel> labels = treemap_labels(root, width, height);
  std::string key;
  for (const TreeLabel& l : labels)
    if (l.in_key) key += (key.empty() ? "" : "; ") + l.text;
  const double below = kTreemapBand + (key.empty() ? 0 : 20);
  std::string s = svg_open(width, height + kTreemapBand + below, title);
  s += "<style>"
       ".tm rect{stroke:#fff;stroke-width:0.4}"
       ".tm .edge{fill:none;pointer-events:none}.tm .e0{stroke:#333;stroke-width:2}.tm .e1{stroke:#111;stroke-width:3}"
       ".tm .e2{stroke:#222;stroke-width:1.2}.tm .edge.edgebad{stroke:#d62728;stroke-width:4}"
       ".tm .group,.tm .layer,.tm .root{fill:#fff}"
       ".tm .lightning{fill:#4c78a8}.tm .lightning-o{fill:#72a0cf}.tm .sparse{fill:#f58518}.tm .sparse-o{fill:#ffb066}"
       ".tm .mlp{fill:#54a24b}.tm .mlp-down{fill:#88d27a}.tm .norm{fill:#9d9d9d}.tm .embed{fill:#b279a2}"
       ".tm .head{fill:#d6a5c9}"
       ".tm rect.bad{fill:#d62728}"
       ".tm .label{font:600 11px \"DejaVu Sans\",sans-serif;fill:#fff;pointer-events:none}"
       ".tm .label.d1{font-size:14px;fill:#111}.tm .span{stroke:#111;stroke-width:1.5;fill:none}"
       "</style>\n";
  s += fmt::format("<g class=\"tm\" transform=\"translate(0 {})\">\n", kTreemapBand);
  std::string body;
  draw(body, root, Rect{0, 0, width, height}, 0);
  s += body;
  for (const TreeLabel& l : labels) {
    if (l.in_key) continue;
    if (l.depth == 1) {  // a bracket over the region's span, the name centred on it
      const double y = l.span.y, tip = y < 0 ? 5 : -5;
      s += fmt::format("<path class=\"span\" d=\"M{:.2f} {:.2f}V{:.2f}H{:.2f}V{:.2f}\"/>", l.span.x + 1, y + tip, y,
                       l.span.x + l.span.w - 1, y + tip);
      s += fmt::format("<rect x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" fill=\"#fff\"/>", l.box.x,
                       l.box.y, l.box.w, l.box.h);
    }
    s += fmt::format("<text class=\"label d{}\" x=\"{:.2f}\" y=\"{:.2f}\"{}>{}</text>\n", l.depth,
                     l.depth == 1 ? l.box.x + l.box.w / 2 : l.box.x + 3, l.box.y + (l.depth == 1 ? 14 : 12),
                     l.depth == 1 ? " text-anchor=\"middle\"" : "", xml_escape(l.text));
  }
  if (!key.empty())
    s += fmt::format("<text class=\"label d1\" x=\"0\" y=\"{:.2f}\">{}</text>\n", height + kTreemapBand + 14,
                     xml_escape("regions too narrow to label: " + key));
  s += "</g>\n</svg>\n";
  return s;
}

}  // namespace salasim::reports
