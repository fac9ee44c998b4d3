// architecture.html and its SVG files: every count from the inventory (and, when given, the checkpoint's headers),
// every source line from the source tree, every chart from the models.
#include "reports/architecture.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "model/data_path.hpp"
#include "model/error.hpp"
#include "model/output_file.hpp"
#include "model/memory.hpp"
#include "model/weights.hpp"
#include "reports/svg.hpp"
#include "reports/table.hpp"

namespace salasim::reports {

CountCheck count_check(const std::vector<TensorSpec>& inv, const std::string& checkpoint) {
  CountCheck k;
  k.checkpoint = checkpoint;
  for (const TensorSpec& t : inv) k.expected[t.name] = t.numel();
  if (checkpoint.empty()) return k;
  const Checkpoint ck(checkpoint);  // reads the headers; a malformed file is an error naming it
  for (const StTensor* t : ck.tensors()) k.actual[t->name] = t->numel();
  for (const CheckpointIssue& i : check_checkpoint(ck, inv).issues)
    k.issues.push_back(fmt::format("{} {} {}", i.kind, i.name, i.detail));
  return k;
}

Checked check_sum(CountCheck& k, const std::string& what, const std::function<bool(const std::string&)>& keep) {
  Checked c;
  for (const auto& [name, n] : k.expected)
    if (keep(name)) c.expected += n;
  if (!k.on()) return c;
  for (const auto& [name, n] : k.actual)
    if (keep(name)) c.actual += n;
  c.checked = true;
  c.ok = c.actual == c.expected;
  ++k.compared;
  if (!c.ok)
    k.failed.push_back(fmt::format("{}: config {}, checkpoint {}", what, commas(c.expected), commas(c.actual)));
  return c;
}

int tensor_layer(const std::string& name) {
  const std::string p = "model.layers.";
  if (name.rfind(p, 0) != 0) return -1;
  const size_t dot = name.find('.', p.size());
  try {
    return std::stoi(name.substr(p.size(), dot - p.size()));
  } catch (const std::exception&) {
    return -1;
  }
}

namespace {

std::string tensor_class(const std::string& name, Mixer m) {
  if (name.find("embed_tokens") != std::string::npos) return "embed";
  if (name.find("lm_head") != std::string::npos) return "head";
  if (name.find("norm") != std::string::npos) return "norm";
  if (name.find("mlp.down_proj") != std::string::npos) return "mlp-down";
  if (name.find("mlp.") != std::string::npos) return "mlp";
  const bool out = name.find("o_proj") != std::string::npos || name.find("z_proj") != std::string::npos ||
                   name.find("o_gate") != std::string::npos;
  return std::string(m == Mixer::Lightning ? "lightning" : "sparse") + (out ? "-o" : "");
}

std::string shape_str(const std::vector<int64_t>& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) out += (i ? " x " : "") + std::to_string(s[i]);
  return "[" + out + "]";
}

std::string pct(int64_t part, int64_t whole) { return fmt::format("{:.1f}%", 100.0 * double(part) / double(whole)); }

// A count as HTML: plain, or with the checkpoint's verdict.
std::string count_html(const Checked& c) {
  if (!c.checked) return fmt::format("<span class=\"n\">{}</span>", commas(c.expected));
  if (c.ok)
    return fmt::format("<span class=\"n ok\" title=\"equal to the checkpoint's\">{} &#10003;</span>",
                       commas(c.expected));
  return fmt::format("<span class=\"n bad\" title=\"the checkpoint disagrees\">{} &#8800; checkpoint {}</span>",
                     commas(c.expected), commas(c.actual));
}

std::string write_file(const std::filesystem::path& p, const std::string& text) {
  write_file_atomic(p.string(), text, true);  // checked: a full disk is an error, not a 0-byte file
  return p.filename().string();
}

const char* kCss = R"(
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:0;color:#1b1b1b;background:#f7f7f5}
main{max-width:1200px;margin:0 auto;padding:12px 20px 40px}
h1{font-size:26px;margin:10px 0 4px}h2{font-size:20px;margin:28px 0 8px;border-bottom:2px solid #ddd}
p{margin:6px 0}.sub{color:#555}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(210px,1fr));gap:12px;margin:12px 0}
.card{background:#fff;border:1px solid #ddd;border-radius:8px;padding:10px 14px;min-width:0}
.card .big{font-size:21px;font-weight:700;overflow-wrap:anywhere}.card .what{color:#555;font-size:13px}
figure{margin:8px 0;background:#fff;border:1px solid #ddd;border-radius:8px;padding:8px}
figcaption{color:#555;font-size:13px;margin-top:4px}
svg{max-width:100%;height:auto;display:block}
table{border-collapse:collapse;width:100%;background:#fff;font-size:13px;table-layout:fixed}
td,th{border:1px solid #ddd;padding:3px 6px;text-align:right;overflow-wrap:anywhere}
td:first-child,th:first-child{text-align:left}th{background:#f0f0ee}
.n.ok{color:#137333}.bad,.n.bad{color:#c5221f;font-weight:700}
.banner{padding:8px 12px;border-radius:6px;margin:10px 0;overflow-wrap:anywhere}
.banner.ok{background:#e6f4ea;border:1px solid #9bd3ae}.banner.bad{background:#fce8e6;border:1px solid #e8a29c}
.legend span{display:inline-block;margin-right:14px;font-size:13px}
.legend i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-1px}
code{font-family:"DejaVu Sans Mono",ui-monospace,monospace;font-size:12.5px;overflow-wrap:anywhere}
)";

std::string legend(bool checked) {
  const std::pair<const char*, const char*> items[] = {{"#4c78a8", "Lightning q, k, v"},
                                                       {"#72a0cf", "Lightning o_proj, z_proj"},
                                                       {"#f58518", "sparse q, k, v"},
                                                       {"#ffb066", "sparse o_proj, o_gate"},
                                                       {"#54a24b", "MLP gate, up"},
                                                       {"#88d27a", "MLP down"},
                                                       {"#9d9d9d", "norms"},
                                                       {"#b279a2", "embed_tokens"},
                                                       {"#d6a5c9", "lm_head"}};
  std::string s = "<p class=\"legend\">";
  for (const auto& [color, what] : items)
    s += fmt::format("<span><i style=\"background:{}\"></i>{}</span>", color, what);
  if (checked)
    s +=
        "<span><i style=\"background:#d62728\"></i>differs from the checkpoint (red border: a sum that differs)</span>";
  return s + "</p>\n";
}

// The Lightning-vs-sparse table: one row per tensor of either layer type, per layer.
std::string comparison_table(const ModelConfig& c, const std::vector<TensorSpec>& inv, CountCheck& k) {
  const std::vector<int> ll = part_layers(c, Part::Lightning), sl = part_layers(c, Part::Sparse);
  if (ll.empty() || sl.empty()) return "<p>This config has one layer type only.</p>\n";
  std::vector<std::string> suffixes;
  auto collect = [&](int layer) {
    for (const TensorSpec& t : inv)
      if (t.layer == layer) {
        const std::string s = t.name.substr(layer_prefix(layer).size());
        if (std::find(suffixes.begin(), suffixes.end(), s) == suffixes.end()) suffixes.push_back(s);
      }
  };
  collect(ll.front());
  collect(sl.front());
  auto cell = [&](int layer, const std::string& suffix) -> std::pair<std::string, int64_t> {
    const TensorSpec* t = find_tensor(inv, layer_prefix(layer) + suffix);
    if (!t) return {"&mdash;", 0};
    const std::string full = t->name;
    // The count shown once stands for every layer of the type: each must match.
    std::vector<int> same = c.layers[size_t(layer)] == Mixer::Lightning ? ll : sl;
    Checked all{t->numel(), t->numel(), false, true};
    for (int l : same) {
      const std::string n = layer_prefix(l) + suffix;
      const Checked one = check_sum(k, n, [&](const std::string& x) { return x == n; });
      all.checked = one.checked;
      if (!one.ok && all.ok) all = one;
    }
    return {fmt::format("{} {}", shape_str(t->shape), count_html(all)), t->numel()};
  };
  std::string s = fmt::format(
      "<table><thead><tr><th>tensor (in model.layers.N.)</th><th>Lightning layer ({})</th><th>sparse layer ({})</th>"
      "<th>Lightning &minus; sparse</th></tr></thead><tbody>\n",
      ll.size(), sl.size());
  int64_t lt = 0, st = 0;
  for (const std::string& suf : suffixes) {
    const auto [lc, ln] = cell(ll.front(), suf);
    const auto [sc, sn] = cell(sl.front(), suf);
    lt += ln;
    st += sn;
    s += fmt::format("<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td></tr>\n", xml_escape(suf), lc, sc,
                     commas(ln - sn));
  }
  const Checked lsum =
      check_sum(k, "one Lightning layer", [&](const std::string& n) { return tensor_layer(n) == ll.front(); });
  const Checked ssum =
      check_sum(k, "one sparse layer", [&](const std::string& n) { return tensor_layer(n) == sl.front(); });
  s += fmt::format("<tr><th>per layer</th><th>{}</th><th>{}</th><th>{}</th></tr>\n", count_html(lsum), count_html(ssum),
                   commas(lt - st));
  s += "</tbody></table>\n";
  // Where the difference comes from, computed from the rows.
  std::string why;
  for (const std::string& suf : suffixes) {
    const TensorSpec* a = find_tensor(inv, layer_prefix(ll.front()) + suf);
    const TensorSpec* b = find_tensor(inv, layer_prefix(sl.front()) + suf);
    const int64_t d = (a ? a->numel() : 0) - (b ? b->numel() : 0);
    if (d != 0) why += fmt::format("{}<code>{}</code> {}", why.empty() ? "" : ", ", xml_escape(suf), commas(d));
  }
  s += fmt::format(
      "<p>A Lightning layer holds {} more parameters than a sparse one ({} vs {} kv heads of {} dims, "
      "plus its q/k/o norms): {}.</p>\n",
      commas(lt - st), c.lightning_nkv, c.num_key_value_heads, c.head_dim, why.empty() ? "none" : why);
  return s;
}

}  // namespace

TreeNode parameter_tree(const ModelConfig& c, const std::vector<TensorSpec>& inv, CountCheck& k) {
  const ParamCount pc = count_params(c, inv);
  TreeNode root{"MiniCPM-SALA", "", "root", 0, false, {}};
  const Checked all = check_sum(k, "total", [](const std::string&) { return true; });
  root.value = all.expected;
  root.bad = !all.ok;
  root.tip = fmt::format("MiniCPM-SALA: {} parameters", commas(all.expected));
  auto leaf = [&](const TensorSpec& t, Mixer m) {
    const Checked one = check_sum(k, t.name, [&](const std::string& n) { return n == t.name; });
    const std::string label = t.layer < 0 ? t.name : t.name.substr(layer_prefix(t.layer).size());
    return TreeNode{label.substr(0, label.rfind(".weight")),
                    fmt::format("{} {}: {} parameters{}", t.name, shape_str(t.shape), commas(t.numel()),
                                one.ok ? "" : fmt::format(" (checkpoint: {})", commas(one.actual))),
                    tensor_class(t.name, m),
                    t.numel(),
                    !one.ok,
                    {}};
  };
  for (Mixer m : {Mixer::Lightning, Mixer::Sparse}) {
    const std::vector<int> layers = part_layers(c, m == Mixer::Lightning ? Part::Lightning : Part::Sparse);
    if (layers.empty()) continue;
    const char* kind = m == Mixer::Lightning ? "Lightning" : "sparse";
    const int64_t each = m == Mixer::Lightning ? pc.lightning_layer : pc.sparse_layer;
    const Checked g = check_sum(k, fmt::format("{} layers", kind), [&](const std::string& n) {
      return std::find(layers.begin(), layers.end(), tensor_layer(n)) != layers.end();
    });
    TreeNode group{fmt::format("{} {} layers: {}", layers.size(), kind, commas(g.expected)),
                   fmt::format("{} {} layers x {} = {} parameters", layers.size(), kind, commas(each),
                               commas(g.expected)),
                   "group",
                   g.expected,
                   !g.ok,
                   {}};
    for (int l : layers) {
      const Checked lc =
          check_sum(k, fmt::format("layer {}", l), [&](const std::string& n) { return tensor_layer(n) == l; });
      TreeNode layer{fmt::format("{}{}", m == Mixer::Lightning ? "L" : "S", l),
                     fmt::format("layer {} ({}): {} parameters", l, kind, commas(lc.expected)),
                     "layer",
                     lc.expected,
                     !lc.ok,
                     {}};
      for (const TensorSpec& t : inv)
        if (t.layer == l) layer.children.push_back(leaf(t, m));
      group.children.push_back(layer);
    }
    root.children.push_back(group);
  }
  const Checked nl = check_sum(k, "non-layer tensors", [](const std::string& n) { return tensor_layer(n) < 0; });
  TreeNode outer{fmt::format("non-layer: {}", commas(nl.expected)),
                 fmt::format("embedding, final norm, lm_head: {} parameters", commas(nl.expected)),
                 "group",
                 nl.expected,
                 !nl.ok,
                 {}};
  for (const TensorSpec& t : inv)
    if (t.layer < 0) outer.children.push_back(leaf(t, Mixer::Lightning));
  root.children.push_back(outer);
  return root;
}

namespace {

// The page's head and its totals (all parameters, each layer type, the non-layer tensors), each count compared with
// the checkpoint's when there is one; a placeholder for the banner that says how the comparisons went.
std::string page_head(const Model& m, const ArchitectureInput& in, CountCheck& k) {
  const ModelConfig& c = m.sala;
  const ParamCount pc = count_params(c, m.inventory);
  const std::vector<int> ll = part_layers(c, Part::Lightning), sl = part_layers(c, Part::Sparse);
  auto in_set = [](const std::vector<int>& s) {
    return [s](const std::string& n) { return std::find(s.begin(), s.end(), tensor_layer(n)) != s.end(); };
  };
  const Checked total = check_sum(k, "total (page header)", [](const std::string&) { return true; });
  const Checked light = check_sum(k, "Lightning layers (page header)", in_set(ll));
  const Checked sparse = check_sum(k, "sparse layers (page header)", in_set(sl));
  const Checked outer =
      check_sum(k, "non-layer tensors (page header)", [](const std::string& n) { return tensor_layer(n) < 0; });

  std::string h =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  h += fmt::format("<title>{}: {} parameters, architecture</title>\n<style>{}</style>\n</head>\n<body>\n<main>\n",
                   xml_escape(m.name), commas(pc.total), kCss);
  h += fmt::format("<h1>{}: architecture and parameters</h1>\n", xml_escape(m.name));
  h += fmt::format(
      "<p class=\"sub\">Generated by <code>{}</code> from <code>{}</code>: every count is a sum over the "
      "config's tensor inventory ({} tensors), every source line was read from the source tree when the "
      "page was written. Treemap areas are strictly proportional to parameter counts.</p>\n",
      xml_escape(in.command), xml_escape(source_relative(m.path)), m.inventory.size());
  if (k.on()) h += "<!--CHECK-->";  // the banner, written once every count on the page has been compared
  h += "<div class=\"cards\">\n";
  h += fmt::format(
      "<div class=\"card\"><div class=\"what\">total parameters</div><div class=\"big\">{}</div>"
      "<div class=\"what\">bf16 {} GiB ({} B); GPTQ W4A16 {} GiB (model/memory.hpp)</div></div>\n",
      count_html(total), gib(pc.bf16_bytes), commas(pc.bf16_bytes), gib(weight_bytes_w4a16(c)));
  h += fmt::format(
      "<div class=\"card\"><div class=\"what\">Lightning layers (linear attention, GLA)</div><div class=\"big\">{}"
      "</div><div class=\"what\">{} layers x {} = {} of the parameters</div></div>\n",
      count_html(light), ll.size(), commas(pc.lightning_layer), pct(light.expected, pc.total));
  h += fmt::format(
      "<div class=\"card\"><div class=\"what\">sparse layers (InfLLM-v2)</div><div class=\"big\">{}</div>"
      "<div class=\"what\">{} layers x {} = {} of the parameters</div></div>\n",
      count_html(sparse), sl.size(), commas(pc.sparse_layer), pct(sparse.expected, pc.total));
  h += fmt::format(
      "<div class=\"card\"><div class=\"what\">non-layer (embed_tokens, lm_head, final norm)</div>"
      "<div class=\"big\">{}</div><div class=\"what\">{} of the parameters</div></div>\n</div>\n",
      count_html(outer), pct(outer.expected, pc.total));
  return h;
}

// Section 4, the VRAM sweep, and the page's foot (where the source lines were read, what was not found).
std::string vram_and_foot(const ModelConfig& c, const ArchitectureInput& in,
                          const std::vector<std::string>& unresolved) {
  std::string h = "<h2 id=\"vram\">4. VRAM per context length (one request)</h2>\n";
  if (!in.vram.empty()) {
    h += "<figure>\n" + vram_svg(in.vram) +
         fmt::format(
             "<figcaption>Peak memory from the memory model (weights, KV cache {} B/token, compressed keys "
             "K1+K2, GLA state {} B, prefill workspace), the data of this bundle's <code>{}.svg</code>; dashed: "
             "each card's memory.</figcaption></figure>\n",
             commas(kv_bytes_per_token(c)), commas(gla_state_bytes(c)), in.vram.front().stem);
  } else {
    h += "<p>No VRAM sweep was given.</p>\n";
  }
  h += "<p class=\"sub\">Source lines read from <code>" +
       xml_escape(std::filesystem::absolute(data_path("reference/ops.hpp")).parent_path().parent_path().string()) +
       "</code>.";
  if (!unresolved.empty())
    h += fmt::format(" <span class=\"bad\">{} source location(s) not found: {}</span>", unresolved.size(),
                     xml_escape(unresolved.front()));
  return h + "</p>\n</main>\n</body>\n</html>\n";
}

// The banner, once every count on the page has been compared: all equal, or the problems (at most 20 listed).
std::string check_banner(const CountCheck& k, ArchitectureOutcome& out) {
  out.mismatches = k.issues;
  out.mismatches.insert(out.mismatches.end(), k.failed.begin(), k.failed.end());
  out.compared = k.compared;
  if (out.mismatches.empty())
    return fmt::format(
        "<div class=\"banner ok\">Checked against the safetensors headers of <code>{}</code>: {} "
        "tensors, {} counts compared, all equal.</div>\n",
        xml_escape(k.checkpoint), k.actual.size(), k.compared);
  std::string banner = fmt::format(
      "<div class=\"banner bad\">Checked against the safetensors headers of <code>{}</code>: {} "
      "tensors; {} tensor problem(s) and {} of {} counts disagree (in red below).<ul>\n",
      xml_escape(k.checkpoint), k.actual.size(), k.issues.size(), k.failed.size(), k.compared);
  const size_t shown = std::min<size_t>(out.mismatches.size(), 20);
  for (size_t i = 0; i < shown; ++i) banner += "<li>" + xml_escape(out.mismatches[i]) + "</li>\n";
  if (shown < out.mismatches.size()) banner += fmt::format("<li>... and {} more</li>\n", out.mismatches.size() - shown);
  return banner + "</ul></div>\n";
}

}  // namespace

ArchitectureOutcome write_architecture(const std::string& dir, const ArchitectureInput& in) {
  if (!in.model || in.model->kind != ModelKind::Sala) fail("architecture page: expected a MiniCPM-SALA config");
  const Model& m = *in.model;
  const ModelConfig& c = m.sala;
  const std::vector<TensorSpec>& inv = m.inventory;
  const ParamCount pc = count_params(c, inv);
  CountCheck k = count_check(inv, in.checkpoint);
  ArchitectureOutcome out;

  const std::string tree_svg =
      treemap_svg(parameter_tree(c, inv, k), 1160, 700,
                  fmt::format("Parameter treemap of {}: area proportional to parameters", m.name));
  const std::string flow = flow_svg(c, inv, k, &out.unresolved);
  const std::string bars = layer_bars_svg(c, inv, k);
  const std::string table = comparison_table(c, inv, k);

  std::string h = page_head(m, in, k);
  h += "<h2 id=\"treemap\">1. Parameter treemap</h2>\n";
  h += fmt::format(
      "<p>Area is parameter count: the whole is {} parameters; the {} Lightning layers, the {} sparse "
      "layers and the non-layer tensors are the three regions, each layer holds its tensors (norms of a "
      "few thousand parameters are specks). Hover a rectangle for its tensor, shape and count. Also as "
      "<a href=\"treemap.svg\">treemap.svg</a>.</p>\n",
      commas(pc.total), pc.n_lightning, pc.n_sparse);
  h += "<figure>\n" + tree_svg + legend(k.on()) + "</figure>\n";

  h += "<h2 id=\"flow\">2. Forward flow: parameters per step beside the reference code</h2>\n";
  h += "<p>Each step names the op that computes it (<code>salasim explain OP</code> has its card), its "
       "shapes with this config's numbers, its parameters per instance and over every instance, and the reference "
       "statement that computes it as file:line (found in the source tree when this page was written). Also as "
       "<a href=\"flow.svg\">flow.svg</a>.</p>\n";
  h += "<figure>\n" + flow + "</figure>\n";

  h += "<h2 id=\"layers\">3. Layer by layer</h2>\n";
  h += "<figure>\n" + bars + "<figcaption>Parameters of each of the " + std::to_string(c.num_hidden_layers) +
       " layers, split into mixer, MLP and norms.</figcaption></figure>\n";
  h += table;
  h += vram_and_foot(c, in, out.unresolved);
  if (k.on()) h.replace(h.find("<!--CHECK-->"), 12, check_banner(k, out));

  const std::filesystem::path d(dir);
  out.files.push_back(write_file(d / "architecture.html", h));
  out.files.push_back(write_file(d / "treemap.svg", "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + tree_svg));
  out.files.push_back(write_file(d / "flow.svg", "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + flow));
  return out;
}

}  // namespace salasim::reports
