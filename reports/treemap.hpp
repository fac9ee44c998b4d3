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

// Where a label goes, in the map's coordinates (the map is [0, width] x [0, height]). A label never covers a
// rectangle it does not name: a layer's sits inside its largest tensor, a leaf's inside itself, each only where it
// fits; a region's (depth 1) sits in the band above the map (y < 0) over the region's span when the region meets
// the top edge, else in the band below (y > height) when it meets the bottom edge, else in the key line under it.
struct TreeLabel {
  std::string text;
  int depth = 0;
  Rect box;             // the text's extent (estimated at 0.62 em a character)
  Rect span;            // a region label's bracket (the region's x extent); w = 0 for other labels
  bool in_key = false;  // a region with no room on either edge: listed in the key line
};
std::vector<TreeLabel> treemap_labels(const TreeNode& root, double width, double height);

// The SVG (its own <style>, no ids, no script): the map of `width` x `height` user units with a band for the
// region labels above and below it. Each rectangle carries data-params="value" and data-depth, in the map's
// coordinates (the map is translated down by the top band); widths and heights are written to 9 significant
// digits, so a reader can check the areas.
std::string treemap_svg(const TreeNode& root, double width, double height, const std::string& title);
inline constexpr double kTreemapBand = 28;  // height of the label band above and of the one below the map

}  // namespace salasim::reports
