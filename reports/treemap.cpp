// Squarified layout and its SVG.
#include "reports/treemap.hpp"

#include <fmt/format.h>

#include <algorithm>
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

void draw(std::string& out, const TreeNode& n, const Rect& r, int depth) {
  // A disagreeing leaf is filled red; a disagreeing parent gets a red border (drawn over its children below).
  const std::string cls = n.cls + (n.bad && n.children.empty() ? " bad" : "");
  out += fmt::format("<g><rect class=\"{}\" data-params=\"{}\" data-depth=\"{}\" x=\"{:.6f}\" y=\"{:.6f}\" width=\"{:.9g}\" "
                     "height=\"{:.9g}\"><title>{}</title></rect>",
                     cls, n.value, depth, r.x, r.y, r.w, r.h, xml_escape(n.tip));
  if (!n.children.empty()) {
    std::vector<double> v;
    for (const TreeNode& c : n.children) v.push_back(double(c.value));
    const std::vector<Rect> rs = squarify(v, r);
    for (size_t i = 0; i < n.children.size(); ++i) draw(out, n.children[i], rs[i], depth + 1);
    // The parent's border on top of its children (no data-params: it is not an area of its own).
    out += fmt::format("<rect class=\"edge e{}{}\" x=\"{:.6f}\" y=\"{:.6f}\" width=\"{:.9g}\" height=\"{:.9g}\"/>", depth,
                       n.bad ? " edgebad" : "", r.x, r.y, r.w, r.h);
  }
  // Labels after the children, so they sit on top, only where they fit (about 0.62 em per character): a layer's
  // (or a non-layer tensor's) at its top-left corner, a region's at its bottom-right corner on a white plate, so
  // the two never meet. Tensors inside layers go unlabelled: the legend and the tooltips name them.
  const double size = depth == 1 ? 14 : 11;
  const double tw = 0.62 * size * double(n.label.size()) + 6;
  if (!n.label.empty() && depth == 2 && r.w >= tw && r.h >= size + 6)
    out += fmt::format("<text class=\"label d2\" x=\"{:.2f}\" y=\"{:.2f}\">{}</text>", r.x + 3, r.y + size + 1,
                       xml_escape(n.label));
  if (!n.label.empty() && depth == 1 && r.w >= tw + 8 && r.h >= 3 * size)
    out += fmt::format("<rect class=\"plate\" x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\"/>"
                       "<text class=\"label d1\" x=\"{:.2f}\" y=\"{:.2f}\" text-anchor=\"end\">{}</text>",
                       r.x + r.w - tw - 6, r.y + r.h - size - 12, tw + 2, size + 8, r.x + r.w - 6, r.y + r.h - 9,
                       xml_escape(n.label));
  out += "</g>\n";
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

std::string treemap_svg(const TreeNode& root, double width, double height, const std::string& title) {
  std::string s = svg_open(width, height, title);
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
       ".tm .label.d1{font-size:14px;fill:#111}.tm .plate{fill:#fff;fill-opacity:0.92;stroke:#111;stroke-width:1}"
       "</style>\n<g class=\"tm\">\n";
  std::string body;
  draw(body, root, Rect{0, 0, width, height}, 0);
  s += body + "</g>\n</svg>\n";
  return s;
}

}  // namespace salasim::reports
