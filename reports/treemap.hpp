// A squarified treemap (Bruls, Huizing, van Wijk 2000) drawn as SVG: every rectangle's area is exactly
// proportional to its value (no padding: borders are strokes on the shared edges), children tile their parent.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace salasim::reports {

struct Rect {
  double x = 0, y = 0, w = 0, h = 0;
};

// Rectangles tiling `r` with areas proportional to `values` (all > 0), returned in the order of `values`.
std::vector<Rect> squarify(const std::vector<double>& values, Rect r);

struct TreeNode {
  std::string label;  // drawn when the rectangle has room
  std::string tip;    // tooltip (<title>)
  std::string cls;    // CSS class (colour): "lightning", "sparse", "mlp", "norm", "embed", "group", "layer"
  int64_t value = 0;  // parameters; a parent's is the sum of its children's
  bool bad = false;   // drawn in red: the checkpoint disagrees
  std::vector<TreeNode> children;
};

// The SVG (its own <style>, no ids, no script), `width` x `height` user units. Each rectangle carries
// data-params="value" and data-depth; widths and heights are written to 9 significant digits, so a reader can
// check the areas.
std::string treemap_svg(const TreeNode& root, double width, double height, const std::string& title);

}  // namespace salasim::reports
