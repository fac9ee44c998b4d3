// The architecture page: treemap areas proportional to parameter counts, well-formed HTML and SVG that name the
// totals, and the checkpoint check (a matching checkpoint passes, a mismatched one is drawn red and fails).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "model/weights.hpp"
#include "reports/architecture.hpp"
#include "reports/architecture_costs.hpp"
#include "reports/latency.hpp"
#include "ops/op.hpp"
#include "reports/report.hpp"
#include "reports/table.hpp"
#include "tests/support/catch.hpp"
#include "tests/support/html_check.hpp"
#include "tests/support/paths.hpp"

using namespace salasim;
using namespace salasim::reports;

namespace {

using test::read_file;

struct DrawnRect {
  int64_t params = 0;
  int depth = 0;
  Rect r;
};

// Every <rect> with data-params, as the SVG says it.
std::vector<DrawnRect> drawn_rects(const std::string& svg) {
  static const std::regex rect(
      R"re(<rect class="[^"]*" data-params="(\d+)" data-depth="(\d+)" x="([-\d.e+]+)" y="([-\d.e+]+)" width="([-\d.e+]+)" height="([-\d.e+]+)")re");
  std::vector<DrawnRect> out;
  for (std::sregex_iterator m(svg.begin(), svg.end(), rect), end; m != end; ++m)
    out.push_back({std::stoll((*m)[1]),
                   std::stoi((*m)[2]),
                   {std::stod((*m)[3]), std::stod((*m)[4]), std::stod((*m)[5]), std::stod((*m)[6])}});
  return out;
}

bool overlap(const Rect& a, const Rect& b) {
  const double eps = 1e-4;  // positions are written to 6 decimals, sizes to 9 digits
  return a.x + eps < b.x + b.w && b.x + eps < a.x + a.w && a.y + eps < b.y + b.h && b.y + eps < a.y + a.h;
}

// A small checkpoint of `config` (synthetic weights) in a scratch folder.
std::string tiny_checkpoint(const std::string& name, const std::string& config) {
  const std::string dir = test::scratch_dir(name);
  const ModelConfig c = load_config(config);
  export_checkpoint(dir, c, tensor_inventory(c), synthetic_weights(1), 2);
  return dir;
}

}  // namespace

TEST_CASE("treemap: squarify tiles the rectangle with areas proportional to the values", "[treemap]") {
  const std::vector<double> v{7, 1, 1e-4, 300, 3, 3, 42, 0.5, 1e6, 2};
  const Rect box{10, 20, 640, 360};
  const std::vector<Rect> rs = squarify(v, box);
  REQUIRE(rs.size() == v.size());
  double sum = 0, area = 0;
  for (double x : v) sum += x;
  for (size_t i = 0; i < v.size(); ++i) {
    INFO(i);
    CHECK(std::fabs(rs[i].w * rs[i].h / (box.w * box.h) - v[i] / sum) <= 1e-9 * (v[i] / sum) + 1e-15);
    CHECK(rs[i].x >= box.x - 1e-9);
    CHECK(rs[i].y >= box.y - 1e-9);
    CHECK(rs[i].x + rs[i].w <= box.x + box.w + 1e-9);
    CHECK(rs[i].y + rs[i].h <= box.y + box.h + 1e-9);
    for (size_t j = 0; j < i; ++j) CHECK(!overlap(rs[i], rs[j]));
    area += rs[i].w * rs[i].h;
  }
  CHECK(std::fabs(area - box.w * box.h) < 1e-6);
}

TEST_CASE("treemap: rectangle areas are proportional to parameter counts within 0.5%", "[treemap]") {
  for (const std::string& path : {test::real_config(), test::tiny_config()}) {
    INFO(path);
    const ModelConfig c = load_config(path);
    const std::vector<TensorSpec> inv = tensor_inventory(c);
    CountCheck k = count_check(inv, "");
    const double W = 1160, H = 700;
    const std::string svg = treemap_svg(parameter_tree(c, inv, k), W, H, "test");
    CHECK(test::html_problems(svg, true) == "");
    const std::vector<DrawnRect> rects = drawn_rects(svg);
    const int64_t total = count_params(c, inv).total;
    // One rectangle per tensor, per layer, per region and the whole.
    CHECK(rects.size() == inv.size() + size_t(c.num_hidden_layers) + 3 + 1);
    std::map<int, double> area_at_depth;
    std::map<int, std::vector<Rect>> at_depth;
    for (const DrawnRect& d : rects) {
      const double want = double(d.params) / double(total), got = d.r.w * d.r.h / (W * H);
      INFO("depth " << d.depth << ", " << d.params << " parameters: area share " << got << ", count share " << want);
      CHECK(std::fabs(got / want - 1) <= 0.005);
      CHECK(d.r.x >= -1e-6);
      CHECK(d.r.y >= -1e-6);
      CHECK(d.r.x + d.r.w <= W + 1e-3);
      CHECK(d.r.y + d.r.h <= H + 1e-3);
      area_at_depth[d.depth] += d.r.w * d.r.h;
      at_depth[d.depth].push_back(d.r);
    }
    // The regions tile the whole, and siblings never overlap.
    CHECK(std::fabs(area_at_depth[1] - W * H) < 1e-3 * W * H);
    for (int depth : {1, 2}) {
      const std::vector<Rect>& rs = at_depth[depth];
      for (size_t i = 0; i < rs.size(); ++i)
        for (size_t j = 0; j < i; ++j) CHECK(!overlap(rs[i], rs[j]));
    }
  }
}

TEST_CASE("treemap: labels never cover a rectangle they do not name", "[treemap]") {
  for (const std::string& path : {test::real_config(), test::tiny_config()}) {
    INFO(path);
    const ModelConfig c = load_config(path);
    const std::vector<TensorSpec> inv = tensor_inventory(c);
    CountCheck k = count_check(inv, "");
    const TreeNode tree = parameter_tree(c, inv, k);
    const double W = 1160, H = 700;
    const std::vector<DrawnRect> rects = drawn_rects(treemap_svg(tree, W, H, "test"));
    const std::vector<TreeLabel> labels = treemap_labels(tree, W, H);
    size_t regions = 0, layers = 0;
    for (size_t i = 0; i < labels.size(); ++i) {
      const TreeLabel& l = labels[i];
      INFO(l.text);
      if (l.depth == 1) {  // a region: in the band above or below the map (or the key line), never on it
        ++regions;
        if (!l.in_key) CHECK((l.box.y + l.box.h <= 0 || l.box.y >= H));
        if (!l.in_key) CHECK((l.box.x >= 0 && l.box.x + l.box.w <= W));
        continue;
      }
      ++layers;
      // Inside one rectangle of the deepest level it is over, and over no other of that level.
      int deepest = 0;
      for (const DrawnRect& d : rects)
        if (overlap(l.box, d.r)) deepest = std::max(deepest, d.depth);
      int hosts = 0, others = 0;
      for (const DrawnRect& d : rects) {
        if (d.depth != deepest || !overlap(l.box, d.r)) continue;
        const bool in = l.box.x >= d.r.x && l.box.y >= d.r.y && l.box.x + l.box.w <= d.r.x + d.r.w &&
                        l.box.y + l.box.h <= d.r.y + d.r.h;
        (in ? hosts : others) += 1;
      }
      CHECK(hosts == 1);
      CHECK(others == 0);
      for (size_t j = 0; j < i; ++j)
        if (!labels[j].in_key) CHECK(!overlap(l.box, labels[j].box));
    }
    CHECK(regions == tree.children.size());
    CHECK(layers >= size_t(c.num_hidden_layers));  // the layers of both configs have room for their names
  }
}

TEST_CASE("architecture: the per-op table is explain's counts timed by the latency model's roofline",
          "[architecture]") {
  const Model m = load_model(test::real_config());
  const HwProfile hw = load_hw("h200");
  for (int64_t ctx : {int64_t(4096), int64_t(1048576)}) {
    INFO(ctx);
    const std::vector<OpFloor> rows = op_floors(m, ctx, 16384, hw);
    const std::vector<op::OpSpec>& ops = op::registry();
    REQUIRE(rows.size() == ops.size() + 1);
    double prefill_s = 0, decode_s = 0, flops = 0, bytes = 0;
    for (size_t i = 0; i < ops.size(); ++i) {
      const OpFloor& r = rows[i];
      INFO(r.op);
      CHECK(r.op == ops[i].name);
      const OpCard card = explain(m, r.op, ctx);
      CHECK(r.prefill.flops == card.cost_total.prefill.flops * double(ctx));
      CHECK(r.prefill.bytes == card.cost_total.prefill.bytes * double(ctx));
      CHECK(r.decode.flops == card.cost_total.decode.flops);
      CHECK(r.decode.bytes == card.cost_total.decode.bytes);
      OpCost o;
      o.flops = r.prefill.flops, o.bytes = r.prefill.bytes, o.exps = r.prefill.exps;
      if (r.prefill.flops + r.prefill.bytes + r.prefill.exps > 0) {
        CHECK(r.prefill_s == roofline_seconds(o, hw));
        CHECK(r.prefill_bound == roofline_bound(o, hw));
      }
      prefill_s += r.prefill_s, decode_s += r.decode_s, flops += r.prefill.flops, bytes += r.decode.bytes;
    }
    const OpFloor& total = rows.back();
    CHECK(total.op == "total");
    CHECK(total.prefill_s == prefill_s);
    CHECK(std::fabs(flops / total.prefill.flops - 1) < 1e-9);  // the op cards add up to the model card
    CHECK(std::fabs(bytes / total.decode.bytes - 1) < 1e-9);
    // The ops' floors add up to the latency model's: its TTFT floor (rooflines per chunk and entry) and decode step.
    const LatencyPrediction p = predict_latency(m, WeightFormat::Bf16, hw, Efficiency{}, ctx, 1, 16384);
    double ttft_floor = 0;
    for (double s : p.prefill_floor_s) ttft_floor += s;
    CHECK(std::fabs(prefill_s / ttft_floor - 1) < 0.01);
    CHECK(std::fabs(decode_s / decode_step_floor(m, WeightFormat::Bf16, hw, ctx) - 1) < 0.01);
  }
}

TEST_CASE("architecture: the page shows VRAM by component and every op at the chosen context", "[architecture]") {
  ReportOptions o;
  o.out = test::scratch_dir("architecture_costs");
  o.contexts = {4096, 65536, 1048576, 2097152};
  o.hw = {"rtx5090", "h200"};
  o.op_context = 262144;
  write_report(o);
  const std::string html = read_file(std::filesystem::path(o.out) / "architecture.html");
  CHECK(test::html_problems(html) == "");
  CHECK(html.find("5. VRAM by component") != std::string::npos);
  CHECK(html.find("6. Every op at 256K tokens: FLOPs, bytes, intensity, bound and time at the floor on rtx5090") !=
        std::string::npos);
  for (const op::OpSpec& op : op::registry())
    CHECK(html.find("<code>" + op.name + "</code></td>") != std::string::npos);
  // The components at the chosen context, as the memory model gives them (the bar of 256K is added to the sweep).
  const Model m = load_model(test::real_config());
  const MemoryBreakdown b = memory_breakdown(m, WeightFormat::Bf16, 262144, o.ws);
  for (int64_t v :
       {b.weight_bytes, b.kv_bytes, b.compressed_key_bytes, b.gla_state_bytes, b.workspace_bytes, b.peak()}) {
    INFO(v);
    CHECK(html.find("<td>" + commas(v) + "</td>") != std::string::npos);
  }
  CHECK(html.find("font-weight=\"700\">256K</text>") != std::string::npos);
  // A card's memory is drawn where it is on the bars' scale: the RTX 5090's 32 GiB under SALA's 37 GiB at 2048K.
  const size_t bars = html.find("5. VRAM by component"), table = html.find("<table class=\"vram\">");
  REQUIRE(table != std::string::npos);
  CHECK(html.substr(bars, table - bars).find("rtx5090 memory 32.00 GiB") != std::string::npos);
  CHECK(html.substr(bars, table - bars).find("h200 memory") == std::string::npos);
  const std::string md = read_file(std::filesystem::path(o.out) / "README.md");
  CHECK(md.find("at 256K tokens on rtx5090 (`--op-context`)") != std::string::npos);
}

TEST_CASE("architecture: the report's page is well-formed, self-contained and names the totals", "[architecture]") {
  ReportOptions o;
  o.out = test::scratch_dir("architecture_bundle");
  o.contexts = {4096, 65536, 1048576};
  o.hw = {"h200", "rtx5090"};
  const ReportOutcome r = write_report(o);
  CHECK(r.mismatches.empty());
  namespace fs = std::filesystem;
  for (const char* f : {"architecture.html", "treemap.svg", "flow.svg"}) {
    INFO(f);
    CHECK(std::find(r.files.begin(), r.files.end(), f) != r.files.end());
  }
  const std::string html = read_file(fs::path(o.out) / "architecture.html");
  CHECK(test::html_problems(html) == "");
  CHECK(test::html_problems(read_file(fs::path(o.out) / "treemap.svg"), true) == "");
  CHECK(test::html_problems(read_file(fs::path(o.out) / "flow.svg"), true) == "");
  // Self-contained: no script, no external resource.
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("src=") == std::string::npos);
  CHECK(html.find("href=\"http") == std::string::npos);
  CHECK(html.find("@import") == std::string::npos);
  // The totals, computed here from the inventory.
  const ModelConfig c = load_config(test::real_config());
  const ParamCount pc = count_params(c, tensor_inventory(c));
  for (int64_t n : {pc.total, pc.lightning_layer * pc.n_lightning, pc.sparse_layer * pc.n_sparse,
                    pc.total - pc.lightning_layer * pc.n_lightning - pc.sparse_layer * pc.n_sparse, pc.lightning_layer,
                    pc.sparse_layer}) {
    INFO(n);
    CHECK(html.find(commas(n)) != std::string::npos);
  }
  // Source lines with their file:line, none missing; the VRAM chart; the README links the SVGs.
  CHECK(html.find("reference/lightning.cpp:") != std::string::npos);
  CHECK(html.find("reference/sparse.cpp:") != std::string::npos);
  CHECK(html.find("NOT FOUND") == std::string::npos);
  CHECK(html.find("rtx5090 memory") != std::string::npos);
  const std::string md = read_file(fs::path(o.out) / "README.md");
  CHECK(md.find("[treemap.svg](treemap.svg)") != std::string::npos);
  CHECK(md.find("[flow.svg](flow.svg)") != std::string::npos);
  CHECK(md.find("[architecture.html](architecture.html)") != std::string::npos);
}

TEST_CASE("architecture: a matching checkpoint passes, a mismatched one is drawn red and fails", "[architecture]") {
  const std::string ckpt = tiny_checkpoint("architecture_ckpt", test::tiny_config());
  const Model tiny = load_model(test::tiny_config());
  ArchitectureInput in;
  in.model = &tiny;
  in.checkpoint = ckpt;
  in.command = "test";
  const std::string good_dir = test::scratch_dir("architecture_good");
  const ArchitectureOutcome good = write_architecture(good_dir, in);
  CHECK(good.mismatches.empty());
  CHECK(good.compared > 100);
  const std::string good_html = read_file(std::filesystem::path(good_dir) / "architecture.html");
  CHECK(test::html_problems(good_html) == "");
  CHECK(good_html.find("class=\"banner ok\"") != std::string::npos);
  CHECK(good_html.find("class=\"n bad\"") == std::string::npos);

  // A checkpoint whose MLP is narrower than the config's: every MLP count and every sum over it disagrees.
  std::ifstream cfg(test::tiny_config());
  nlohmann::json j = nlohmann::json::parse(cfg);
  j["intermediate_size"] = 512;
  const std::string narrow = test::scratch_dir("architecture_narrow_cfg") + "/config.json";
  std::ofstream(narrow) << j.dump(2);
  in.checkpoint = tiny_checkpoint("architecture_narrow", narrow);
  const std::string bad_dir = test::scratch_dir("architecture_bad");
  const ArchitectureOutcome bad = write_architecture(bad_dir, in);
  REQUIRE(!bad.mismatches.empty());
  const std::string bad_html = read_file(std::filesystem::path(bad_dir) / "architecture.html");
  CHECK(test::html_problems(bad_html) == "");
  CHECK(bad_html.find("class=\"banner bad\"") != std::string::npos);
  CHECK(bad_html.find("class=\"n bad\"") != std::string::npos);
  CHECK(bad_html.find("mlp.down_proj.weight is [256, 512], expected [256, 768]") != std::string::npos);
  CHECK(read_file(std::filesystem::path(bad_dir) / "treemap.svg").find(" bad\"") != std::string::npos);
  CHECK(read_file(std::filesystem::path(bad_dir) / "flow.svg").find("class=\"bad\"") != std::string::npos);
  // The norms still match: only what differs is red.
  bool norm_ok = false;
  for (const std::string& s : bad.mismatches) norm_ok = norm_ok || s.find("layernorm") != std::string::npos;
  CHECK(!norm_ok);
}

TEST_CASE("html_check: well-formed pages pass, unclosed and crossed tags fail", "[architecture]") {
  CHECK(test::html_problems(
            "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><style>a<b{}</style></head><body><p>a &amp; "
            "b &#10003;<br></p><svg viewBox=\"0 0 1 1\"><rect x=\"0\"/><text>t</text></svg></body></html>") == "");
  CHECK(test::html_problems("<html><body><div><p>x</div></body></html>").find("</div> while <p> is open") !=
        std::string::npos);
  CHECK(test::html_problems("<html><body><div></body></html>").find("</body> while <div>") != std::string::npos);
  CHECK(test::html_problems("<html><body></body></html></p>").find("closes nothing") != std::string::npos);
  CHECK(test::html_problems("<html><body>a & b</body></html>").find("bare '&'") != std::string::npos);
  CHECK(test::html_problems("<html><body><div/></body></html>").find("not a void element") != std::string::npos);
  CHECK(test::html_problems("<html><body><p class=x>y</p></body></html>").find("unquoted") != std::string::npos);
  CHECK(test::html_problems("<html><body><p>").find("still open") != std::string::npos);
  CHECK(test::html_problems("<svg><g><rect/></svg>", true).find("</svg> while <g>") != std::string::npos);
}
