// Tap and row selections of a run, checked against the run's tap list before anything runs.
#include "model/tap_select.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include "model/error.hpp"
#include "model/json_field.hpp"
#include "model/windows.hpp"

namespace salasim {

namespace {

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t") - a + 1);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::stringstream ss(s);
  while (std::getline(ss, item, sep)) out.push_back(item);
  if (!s.empty() && s.back() == sep) out.emplace_back();
  return out;
}

bool parse_int(const std::string& s, int64_t* v) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && end == s.data() + s.size();
}

}  // namespace

// ---- row lists ----

RowList parse_row_list(const std::string& text, const std::string& option) {
  RowList r;
  r.text = text;
  const std::string t = trim(text);
  if (t == "all") return r;
  r.all = false;
  if (t.empty()) fail("{} '{}': empty; expected rows such as 0,100,-1 or 0:16 (or all)", option, excerpt(text));
  for (const std::string& raw : split(t, ',')) {
    RowItem it;
    it.text = trim(raw);
    auto bad = [&](const std::string& why) {
      fail("{} '{}': item '{}' {}; expected N, A:B or A:B:S (negative counts from the end: -1 = the last prompt token)",
           option, excerpt(text), excerpt(it.text), why);
    };
    if (it.text.empty()) bad("is empty");
    const std::vector<std::string> p = split(it.text, ':');
    if (p.size() == 1) {
      if (!parse_int(it.text, &it.index)) bad("is not a whole number");
    } else if (p.size() <= 3) {
      it.range = true;
      const std::string a = trim(p[0]), b = trim(p[1]);
      if ((it.has_start = !a.empty()) && !parse_int(a, &it.start)) bad("has a start that is not a whole number");
      if ((it.has_stop = !b.empty()) && !parse_int(b, &it.stop)) bad("has a stop that is not a whole number");
      if (p.size() == 3 && (!parse_int(trim(p[2]), &it.step) || it.step < 1))
        bad("has a step that is not a whole number >= 1");
    } else {
      bad("has more than two ':'");
    }
    r.items.push_back(it);
  }
  return r;
}

std::vector<int64_t> RowList::resolve(int64_t n) const {
  std::vector<int64_t> out;
  if (all) {
    out.resize(size_t(n));
    for (int64_t i = 0; i < n; ++i) out[size_t(i)] = i;
    return out;
  }
  auto at = [n](int64_t v) { return v < 0 ? v + n : v; };
  for (const RowItem& it : items) {
    if (!it.range) {
      const int64_t r = at(it.index);
      if (r < 0 || r >= n)
        fail("--rows '{}': row {} is outside the prompt's {} rows (0 .. {}, or -{} .. -1 from the end)", excerpt(text),
             it.index, n, n - 1, n);
      out.push_back(r);
      continue;
    }
    const int64_t a = it.has_start ? at(it.start) : 0, b = it.has_stop ? at(it.stop) : n;
    if (a < 0 || b > n || a >= b)
      fail("--rows '{}': range '{}' is rows {} .. {} of a prompt of {} rows: {}", excerpt(text), excerpt(it.text), a,
           b - 1, n, a >= b ? "it selects no row" : "it reaches outside the prompt");
    // r += step would overflow for a step near INT64_MAX (a user's '0::9223372036854775807'): stop when the next row
    // would pass b, computed without the addition.
    for (int64_t r = a;; r += it.step) {
      out.push_back(r);
      if (b - r <= it.step) break;
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// ---- the tap list ----

std::vector<TapSpec> tap_catalog(const ModelConfig& c, int64_t prompt, int decode_steps, bool scores) {
  std::vector<TapSpec> out;
  const int64_t D = c.hidden_size, I = c.intermediate_size, Ld = c.lightning_dim();
  const int64_t Q = int64_t(c.num_attention_heads) * c.head_dim, KV = int64_t(c.num_key_value_heads) * c.head_dim;
  const int64_t G = c.num_key_value_heads, hd = c.head_dim, K = c.sparse.k_sel(), B = c.sparse.block_size;
  // One forward call of T tokens whose sequence ends at `len`, sparse or dense, with n_blocks block scores.
  auto phase = [&](const std::string& ph, int64_t T, int64_t len, bool sparse, int64_t n_blocks) {
    auto add = [&](const std::string& rel, std::vector<int64_t> shape, bool integer = false) {
      out.push_back(TapSpec{"/" + ph + "/" + rel, std::move(shape), integer});
    };
    add("embed/out", {T, D});
    for (int l = 0; l < c.num_hidden_layers; ++l) {
      const std::string L = layer_dir(l) + "/";
      add(L + "input_norm/out", {T, D});
      if (c.layers[size_t(l)] == Mixer::Lightning) {
        const std::string P = L + "lightning/";
        for (const char* t : {"proj/q", "proj/k", "proj/v"}) add(P + t, {T, Ld});
        if (c.use_output_gate) add(P + "proj/z", {T, Ld});
        add(P + "qk_rope/q", {T, Ld});
        add(P + "qk_rope/k", {T, Ld});
        add(P + "gla/out", {T, Ld});
        add(P + "gla/state", {c.lightning_nh, c.lightning_head_dim, c.lightning_head_dim});
        if (c.use_output_norm) add(P + "o_norm/out", {T, Ld});
        if (c.use_output_gate) add(P + "gate/out", {T, Ld});
        add(P + "o_proj/out", {T, D});
      } else {
        const std::string P = L + "sparse/";
        add(P + "proj/q", {T, Q});
        add(P + "proj/k", {T, KV});
        add(P + "proj/v", {T, KV});
        if (c.attn_use_output_gate) add(P + "proj/g", {T, Q});
        add(P + "compress_k/k1", {G, n_windows(len, c.sparse.kernel_size, c.sparse.kernel_stride), hd});
        add(P + "compress_k/k2", {G, n_windows(len, c.sparse.k2_kernel(), c.sparse.k2_stride()), hd});
        if (sparse) {
          add(P + "select/blocks", {T, G, K}, true);
          if (scores) add(P + "select/scores", {T, G, n_blocks});
        }
        add(P + "attn/out", {T, Q});
        if (c.attn_use_output_gate) add(P + "gate/out", {T, Q});
        add(P + "o_proj/out", {T, D});
      }
      for (const char* t : {"residual/mid", "post_norm/out"}) add(L + t, {T, D});
      add(L + "mlp/act", {T, I});
      add(L + "mlp/out", {T, D});
      add(L + "residual/h", {T, D});
    }
    add("final/norm", {T, D});
    add("final/logits", {1, c.vocab_size});
  };
  // The rules of reference/model.hpp: a prefill is sparse iff its total length >= dense_len; decode at position p
  // iff p + 1 >= dense_len; block counts from the call's sequence length.
  auto blocks = [B](int64_t len) { return (len + B - 1) / B; };
  phase("prefill", prompt, prompt, prompt >= c.sparse.dense_len, blocks(prompt));
  for (int k = 0; k < decode_steps; ++k) {
    const int64_t len = prompt + k + 1;
    phase(decode_phase(k), 1, len, len >= c.sparse.dense_len, blocks(len));
  }
  return out;
}

std::vector<std::string> split_patterns(const std::string& text, const std::string& option) {
  std::vector<std::string> out;
  for (const std::string& raw : split(text, ',')) {
    const std::string p = trim(raw);
    if (p.empty())
      fail(
          "{} '{}': an empty pattern; expected tap names or globs such as layer_03/lightning/gla/out, "
          "layer_*/residual/h, /prefill/final/",
          option, excerpt(text));
    out.push_back(p);
  }
  if (out.empty()) fail("{}: no pattern given", option);
  return out;
}

void check_patterns(const std::vector<std::string>& patterns, const std::vector<TapSpec>& catalog,
                    const std::string& option) {
  std::vector<std::string> unmatched;
  for (const std::string& p : patterns) {
    const TapFilter one{{p}};
    if (std::none_of(catalog.begin(), catalog.end(), [&](const TapSpec& t) { return one.match(t.name); }))
      unmatched.push_back(p);
  }
  if (unmatched.empty()) return;
  // A few names to show: the distinct names after the phase, of the prefill and of layer 0 and the last layer.
  std::vector<std::string> shown_names;
  for (const TapSpec& t : catalog) {
    if (tap_phase(t.name) != "prefill") break;
    const int l = tap_layer(t.name);
    if (l > 1) continue;
    shown_names.push_back(t.name.substr(t.name.find('/', 1) + 1));
  }
  int layers = 0;
  for (const TapSpec& t : catalog) layers = std::max(layers, tap_layer(t.name) + 1);
  std::string list;
  for (size_t i = 0; i < unmatched.size(); ++i) list += fmt::format("{}'{}'", i ? ", " : "", unmatched[i]);
  list = excerpt(list);  // the user's patterns: any length
  std::string names;
  for (const std::string& n : shown_names) names += "\n  " + n;
  fail(
      "{}: {} match{} no tap of this run ({} taps). Patterns match the start of a tap's name after its phase "
      "('*' within one part, '?' one character), or of the full name when they start with '/'. The names of layers "
      "0 and 1 (layer_00 .. layer_{:02d} in all; decode steps' taps as /decode_0000/...):{}",
      option, list, unmatched.size() == 1 ? "es" : "", catalog.size(), layers - 1, names);
}

// ---- budget ----

DumpBudget dump_budget(const std::vector<TapSpec>& catalog, const TapFilter& filter, int64_t prompt,
                       const std::vector<int64_t>& rows, int64_t chunk) {
  DumpBudget b;
  std::map<std::string, double> state_by_phase;  // held until the phase ends
  const int64_t T = std::min(chunk, prompt);
  for (const TapSpec& t : catalog) {
    if (!filter.match(t.name)) continue;
    SelectedTap s{t.name, t.shape, 0};
    const int64_t per_row = shape_numel(t.shape) / std::max<int64_t>(t.shape[0], 1);
    const bool prefill = tap_phase(t.name) == "prefill";
    if (t.per_token() && prefill) s.shape[0] = int64_t(rows.size());
    s.file_bytes = 8.0 * double(shape_numel(s.shape));
    b.file_bytes += s.file_bytes;
    // The device hands a tap over as one slab per forward call: bf16 taps 2 bytes a value, block ids and scores 4,
    // then float64 (8) for the recorder; a state tap is the whole state (the new value arrives while the old one is
    // held: counted twice below).
    double download;
    if (t.per_token()) {
      const bool wide = tap_kind(t.name) == "sparse/select/scores" || t.integer;
      download = double(prefill ? T : 1) * double(per_row) * ((wide ? 4.0 : 2.0) + 8.0);
    } else {
      download = s.file_bytes * (10.0 / 8.0);
      state_by_phase[tap_phase(t.name)] += s.file_bytes;
    }
    if (download > b.download_bytes) {
      b.download_bytes = download;
      b.largest_download = t.name;
    }
    b.taps.push_back(std::move(s));
  }
  double held = 0;
  for (const auto& [ph, bytes] : state_by_phase) held = std::max(held, bytes);
  b.held_bytes = held + b.download_bytes;
  return b;
}

// ---- host memory ----

int64_t parse_mem_available(const std::string& meminfo) {
  std::istringstream in(meminfo);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("MemAvailable:", 0) != 0) continue;
    std::istringstream f(line.substr(13));
    int64_t kb = -1;
    std::string unit;
    if (!(f >> kb) || kb < 0) return -1;
    if (kb > std::numeric_limits<int64_t>::max() / 1024) return -1;  // not a real machine; kb * 1024 would overflow
    f >> unit;
    return unit == "kB" || unit.empty() ? kb * 1024 : -1;
  }
  return -1;
}

int64_t mem_available_bytes() {
  const char* hook = std::getenv("SALASIM_TEST_MEMINFO");
  std::ifstream f(hook && *hook ? hook : "/proc/meminfo");
  if (!f) return -1;
  std::stringstream ss;
  ss << f.rdbuf();
  return parse_mem_available(ss.str());
}

void check_host_memory(double need, const std::string& what, const std::string& detail) {
  const int64_t have = mem_available_bytes();
  if (have < 0 || need <= 0.9 * double(have)) return;
  fail(
      "{} needs about {:.2f} GB of host memory, and this machine has {:.2f} GB available (MemAvailable; at most 90% "
      "of it is used):\n{}",
      what, need / 1e9, double(have) / 1e9, detail);
}

}  // namespace salasim
