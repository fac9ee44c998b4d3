// The op table of `salasim op` (compare/op_table.hpp) and the checks it drives. Shapes follow reference/ops.hpp;
// output paths are "/op/" + the tap kind the model records the same tensor under, so the tolerance table
// (compare/tolerance.cpp) applies to them and `salasim diff` compares two outputs as it compares two runs.
#include "compare/op_table.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <cmath>
#include <set>

#include "model/bf16.hpp"
#include "model/checked.hpp"
#include "model/error.hpp"
#include "model/json_field.hpp"
#include "model/windows.hpp"

namespace salasim::op {

namespace {

constexpr int64_t kMaxPos = int64_t(1) << 31;  // positions: far past any context (4 x 524,288 with extrapolation)
constexpr int64_t kMaxInt = 0x7fffffff;

InputSpec in(std::string name, std::vector<std::string> dims, std::string doc, DType t = DType::Float) {
  return InputSpec{std::move(name), std::move(dims), t, std::move(doc), false};
}
AttrSpec attr(std::string name, AttrKind kind, std::string doc, std::string fallback = "") {
  AttrSpec a;
  a.name = std::move(name), a.kind = kind, a.doc = std::move(doc), a.fallback = std::move(fallback);
  return a;
}
// A float attribute in `range`: the model's range for the quantity it stands for (its config field or the scale
// derived from one), so the op refuses what the model could never be given.
AttrSpec num(std::string name, std::string doc, const FloatRange& range) {
  AttrSpec a = attr(std::move(name), AttrKind::Float, std::move(doc));
  a.range = range;
  return a;
}
AttrSpec whole(std::string name, int64_t lo, int64_t hi, std::string doc, std::string fallback = "") {
  AttrSpec a = attr(std::move(name), AttrKind::Int, std::move(doc), std::move(fallback));
  a.lo = lo, a.hi = hi;
  return a;
}
AttrSpec choice(std::string name, std::string doc, std::vector<std::string> choices) {
  AttrSpec a = attr(std::move(name), AttrKind::Choice, std::move(doc), choices.at(0));  // the first is the default
  a.choices = std::move(choices);
  return a;
}
OutputSpec out(std::string tap, std::vector<std::string> dims, std::string doc, DType t = DType::Float) {
  return OutputSpec{std::move(tap), std::move(dims), t, std::move(doc)};
}

// A per-(row, group) list of block ids must be a set of causal blocks: the reference attends to each listed block
// once per listing, and an id past the query's own block would index keys that do not exist yet.
void check_blocks(OpInputs& x) {
  const InputDataset& b = x.tensor("blocks");
  const int64_t T = x.dim("T"), G = x.dim("G"), K = x.dim("K"), pos0 = x.i("pos0"), block = x.i("block");
  for (int64_t t = 0; t < T; ++t) {
    const int64_t qb = (pos0 + t) / block;
    for (int64_t g = 0; g < G; ++g) {
      std::set<int64_t> seen;
      for (int64_t s = 0; s < K; ++s) {
        const double v = b.data[size_t((t * G + g) * K + s)];
        if (v == -1) continue;
        if (v < 0 || v > double(qb))
          fail(
              "{}: dataset 'blocks': [{}, {}, {}] is {}; expected -1 (an empty slot) or a causal block id in [0, {}] "
              "(query {} is at position {} = pos0 + {}, block {})",
              x.file, t, g, s, v, qb, t, pos0 + t, t, qb);
        if (!seen.insert(int64_t(v)).second)
          fail("{}: dataset 'blocks': row [{}, {}] lists block {} twice; a selection is a set", x.file, t, g, v);
      }
    }
  }
}

// gamma is a natural-log decay per token, < 0 as --help says: at 0 the state never decays, and above it every
// step multiplies the state by exp(gamma) > 1, so the output grows without bound (1e30 at a few hundred rows).
void check_decays(OpInputs& x) {
  const InputDataset& g = x.tensor("gamma");
  for (size_t h = 0; h < g.data.size(); ++h)
    if (!(g.data[h] < 0))
      fail(
          "{}: dataset 'gamma': element [{}] is {}; expected a natural-log decay < 0 per head and token (the state "
          "is multiplied by exp(gamma) < 1 each row)",
          x.file, h, g.data[h]);
}

void check_heads_per_group(const OpInputs& x) {
  if (x.dim("H") % x.dim("G") != 0)
    fail(
        "{}: {} query heads (H from dataset 'q') do not split evenly over {} kv heads (G from the keys): H must be "
        "a multiple of G",
        x.file, x.dim("H"), x.dim("G"));
}

void check_cache(const OpInputs& x) {
  const int64_t need = x.i("pos0") + x.dim("T");
  if (x.dim("L") < need)
    fail("{}: datasets 'k' and 'v' hold {} cached positions; queries at pos0 = {} .. {} need keys 0 .. {} (L >= {})",
         x.file, x.dim("L"), x.i("pos0"), need - 1, need - 1, need);
}

std::vector<OpSpec> make_table() {
  const std::string pos0_doc = "absolute position of the first row (queries at pos0 .. pos0+T-1)";
  std::vector<OpSpec> t;

  t.push_back({"rmsnorm",
               "y = x / sqrt(mean(x^2) + eps) * w, per row (spec §2.1)",
               "ref::rmsnorm",
               {in("x", {"T", "n"}, "rows to normalise"), in("w", {"n"}, "norm weight")},
               {num("eps", "added to the mean of squares", kRmsNormEps)},
               {out("/op/input_norm/out", {"T", "n"}, "normalised rows")},
               {},
               nullptr});

  OpSpec rope{
      "rope",
      "rotate-half RoPE on all head dims, in place (spec §2.1)",
      "ref::rope (table: ref::rope_table)",
      {in("x", {"T", "H*hd"}, "q or k rows, H heads of hd")},
      {whole("head_dim", 2, 4096, "hd, even"), whole("pos0", 0, kMaxPos, pos0_doc),
       num("theta", "RoPE base (rope_theta)", kRopeTheta)},
      {out("/op/lightning/qk_rope/q", {"T", "H*hd"}, "rotated rows")},
      {"angles: angle = fp32(float(p) * inv_freq[i]) with fp32 inv_freq, as HF and the GPU build them; "
       "attribute angles = \"exact\" takes float64 angles instead (reference and peer only)",
       "the model's per-head q/k norm before RoPE is op rmsnorm (per row of hd) or part of the GPU's fused kernel; "
       "here RoPE alone"},
      [](OpInputs& x) {
        if (x.dim("hd") % 2)
          fail("{}: attribute 'head_dim' is {}; RoPE pairs dims, so it must be even", x.file, x.dim("hd"));
      }};
  rope.attrs[0].binds = "hd";  // H follows from x's width
  rope.attrs.push_back(choice("angles", "angle table: fp32 (the model's) or exact (float64)", {"fp32", "exact"}));
  t.push_back(rope);

  OpSpec
      gla{"gla",
          "simple GLA, constant per-head decay, inclusive of the current token (spec §3 step 6)",
          "ref::gla_chunked (C = 64) / ref::gla_recurrent",
          {in("q", {"T", "H*hd"}, "queries (after RoPE)"), in("k", {"T", "H*hd"}, "keys (after RoPE)"),
           in("v", {"T", "H*hd"}, "values"), in("gamma", {"H"}, "natural-log decay per head and token (< 0)"),
           in("state", {"H", "hd", "hd"}, "entering state per head, key dim x value dim (absent: zeros)")},
          {num("tau", "output scale (head_dim^-0.5 in the model)", kHeadScale),
           choice("form", "auto: recurrent below 64 rows, else chunked (the model's and HF's dispatch)",
                  {"auto", "chunked", "recurrent"})},
          {out("/op/lightning/gla/out", {"T", "H*hd"}, "o before o_norm"),
           out("/op/lightning/gla/state", {"H", "hd", "hd"}, "state after the last row")},
          {"the two forms are equal in exact arithmetic; the GPU keeps the state in fp32 (the peer rounds it there)"},
          check_decays};
  gla.inputs[3].fp32 = gla.inputs[4].fp32 = true;  // the decays and the state are fp32 on the GPU
  gla.inputs[4].optional = true;
  t.push_back(gla);

  t.push_back(
      {"compress_k",
       "mean-pooled compressed keys K1 (kernel/stride) and K2 (4 x both) (spec §4.2)",
       "ref::compress_k per kv head",
       {in("k", {"G", "L", "hd"}, "raw keys of positions 0 .. L-1, per kv head")},
       {whole("kernel", 1, 65536, "K1 window (32 in the model)"), whole("stride", 1, 65536, "K1 stride (16)")},
       {out("/op/sparse/compress_k/k1", {"G", "N1", "hd"}, "window c = mean of keys [stride c, stride c + kernel)"),
        out("/op/sparse/compress_k/k2", {"G", "N2", "hd"}, "the same with 4 x kernel, 4 x stride")},
       {"N1 = floor((L - kernel) / stride) + 1 complete windows (0 when L < kernel); N2 likewise with 4 x both"},
       [](OpInputs& x) {
         const int64_t L = x.dim("L"), k = x.i("kernel"), s = x.i("stride");
         x.dims["N1"] = n_windows(L, k, s);
         x.dims["N2"] = n_windows(L, 4 * k, 4 * s);
       }});

  t.push_back(
      {"select_blocks",
       "InfLLM-v2 stage-1 block scores, max-pool, forced blocks, top-k (spec §4.3-4.4)",
       "ref::select_blocks (want_scores = true)",
       {in("q", {"T", "H*hd"}, "queries at positions pos0 .."), in("k1", {"G", "N1", "hd"}, "K1 compressed keys"),
        in("k2", {"G", "N2", "hd"}, "K2 compressed keys")},
       {whole("pos0", 0, kMaxPos, pos0_doc), num("tau", "score scale (head_dim^-0.5 in the model)", kHeadScale),
        whole("kernel", 1, 65536, "K1 window (32)", "32"), whole("stride", 1, 65536, "K1 stride (16)", "16"),
        whole("block", 1, 65536, "block size (64)", "64"),
        whole("init_blocks", 0, kMaxInt, "forced first blocks (1)", "1"),
        whole("local_blocks", 0, kMaxInt, "forced blocks before the query's own (32)", "32"),
        whole("k_sel", 1, 4096, "blocks chosen per query and kv head (96)", "96"),
        whole("n_blocks", 0, kMaxInt, "width of the scores (0: ceil((pos0 + T) / block))", "0")},
       {out("/op/sparse/select/blocks", {"T", "G", "k_sel"}, "chosen block ids ascending, -1 in unused slots",
            DType::Int),
        out("/op/sparse/select/scores", {"T", "G", "NB"}, "pooled scores: +inf forced, -inf future blocks")},
       {"k1 needs N1 >= the K1 windows of pos0 + T keys, k2 likewise; NB = n_blocks",
        "H must be a multiple of G (query head h uses kv head h / (H/G))"},
       [](OpInputs& x) {
         check_heads_per_group(x);
         const int64_t len = x.i("pos0") + x.dim("T"), k = x.i("kernel"), s = x.i("stride");
         for (const auto& [name, need] :
              {std::pair<std::string, int64_t>{"k1", n_windows(len, k, s)}, {"k2", n_windows(len, 4 * k, 4 * s)}})
           if (x.tensor(name).shape[1] < need)
             fail(
                 "{}: dataset '{}' holds {} windows per kv head; queries up to position {} need {} (kernel {}, "
                 "stride {}{})",
                 x.file, name, x.tensor(name).shape[1], len - 1, need, name == "k1" ? k : 4 * k,
                 name == "k1" ? s : 4 * s, name == "k1" ? "" : ": 4 x the K1 rule");
         const int64_t causal = (len + x.i("block") - 1) / x.i("block");
         int64_t nb = x.i("n_blocks");
         if (nb == 0) nb = causal;
         if (nb < causal)
           fail(
               "{}: attribute 'n_blocks' is {}; the queries see {} blocks (ceil((pos0 + T) / block)), so it must "
               "be at least that, or 0",
               x.file, nb, causal);
         x.dims["NB"] = nb;
         x.dims["k_sel"] = x.i("k_sel");
       }});

  t.push_back(
      {"sparse_attn",
       "softmax attention over the selected blocks, causal (spec §4.5)",
       "ref::sparse_attn",
       {in("q", {"T", "H*hd"}, "queries at positions pos0 .."), in("k", {"G", "L", "hd"}, "cached keys"),
        in("v", {"G", "L", "hd"}, "cached values"),
        in("blocks", {"T", "G", "K"}, "selected block ids per query and kv head, -1 = empty slot", DType::Int)},
       {whole("pos0", 0, kMaxPos, pos0_doc), num("tau", "softmax scale (head_dim^-0.5)", kHeadScale),
        whole("block", 1, 65536, "block size (64)", "64")},
       {out("/op/sparse/attn/out", {"T", "H*hd"}, "attention output")},
       {"L >= pos0 + T; each row's ids are distinct, -1 or in [0, (pos0 + t) / block]; the query attends to keys "
        "j <= pos0 + t of its blocks"},
       [](OpInputs& x) {
         check_heads_per_group(x);
         check_cache(x);
         check_blocks(x);
       }});

  t.push_back({"dense_attn",
               "causal GQA softmax attention over every key j <= p (spec §4.1)",
               "ref::dense_attn",
               {in("q", {"T", "H*hd"}, "queries at positions pos0 .."), in("k", {"G", "L", "hd"}, "cached keys"),
                in("v", {"G", "L", "hd"}, "cached values")},
               {whole("pos0", 0, kMaxPos, pos0_doc), num("tau", "softmax scale (head_dim^-0.5)", kHeadScale)},
               {out("/op/sparse/attn/out", {"T", "H*hd"}, "attention output")},
               {"L >= pos0 + T"},
               [](OpInputs& x) {
                 check_heads_per_group(x);
                 check_cache(x);
               }});

  t.push_back({"gate",
               "y = x * sigmoid(z) (Lightning z gate §3 step 8, sparse o_gate §4 step 3)",
               "ref::gate",
               {in("x", {"T", "n"}, "gated rows"), in("z", {"T", "n"}, "gate, before the sigmoid")},
               {},
               {out("/op/lightning/gate/out", {"T", "n"}, "x * sigmoid(z)")},
               {},
               nullptr});

  t.push_back({"mlp_act",
               "act = silu(g) * u (spec §2.1)",
               "ref::mlp_act",
               {in("g", {"T", "I"}, "gate projection"), in("u", {"T", "I"}, "up projection")},
               {},
               {out("/op/mlp/act", {"T", "I"}, "silu(g) * u")},
               {},
               nullptr});

  t.push_back({"residual",
               "h + scale * branch (spec §2 step 2)",
               "ref::residual",
               {in("h", {"T", "D"}, "residual stream"), in("branch", {"T", "D"}, "mixer or MLP output")},
               {num("scale", "branch scale (scale_depth / sqrt(layers) in the model)", kResidualScale)},
               {out("/op/residual/h", {"T", "D"}, "h + scale * branch")},
               {},
               nullptr});

  t.push_back({"logits",
               "logits = W (h / divisor) (spec §2 step 4)",
               "ref::logits",
               {in("h", {"T", "D"}, "final-normed rows"), in("w", {"V", "D"}, "lm_head weight")},
               {num("divisor", "hidden_size / dim_model_base (16 in the model)", kLogitDivisor)},
               {out("/op/final/logits", {"T", "V"}, "logits")},
               {},
               nullptr});
  return t;
}

bool product(const std::string& d, std::string* a, std::string* b) {
  const size_t star = d.find('*');
  if (star == std::string::npos) return false;
  *a = d.substr(0, star), *b = d.substr(star + 1);
  return true;
}

std::string dtype_name(DType t) { return t == DType::Float ? "float" : "integer"; }

std::string shape_text(const std::vector<int64_t>& s) { return fmt::format("[{}]", fmt::join(s, ", ")); }

// Element `flat` of a row-major tensor of `shape` as its index, "[2, 3]".
std::string index_of(size_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = int64_t(flat % size_t(shape[d]));
    flat /= size_t(shape[d]);
  }
  return shape_text(idx);
}

// Binds the symbols of one dataset's dims. Returns false when a product has neither factor bound yet (retried
// after the other datasets); throws when a size disagrees with what is bound.
bool bind(OpInputs& x, std::map<std::string, std::string>& origin, const InputSpec& s, const InputDataset& d) {
  auto expected = [&] {
    std::vector<std::string> v;
    for (const std::string& dim : s.dims) {
      std::string a, b;
      if (product(dim, &a, &b))
        v.push_back(x.dims.count(a) && x.dims.count(b) ? std::to_string(x.dims[a] * x.dims[b]) : dim);
      else v.push_back(x.dims.count(dim) ? std::to_string(x.dims[dim]) : dim);
    }
    return fmt::format("[{}]", fmt::join(v, ", "));
  };
  auto bad = [&](size_t i, const std::string& why) {
    fail("{}: dataset '{}': expected shape {} = {}, found {}: dim {} {}", x.file, s.name, format_dims(s.dims),
         expected(), shape_text(d.shape), i, why);
  };
  auto set = [&](const std::string& sym, int64_t v, size_t i) {
    const auto it = x.dims.find(sym);
    if (it == x.dims.end()) {
      x.dims[sym] = v;
      origin[sym] = fmt::format("dataset '{}' dim {}", s.name, i);
    } else if (it->second != v) {
      bad(i, fmt::format("is {}, but {} = {} (from {})", v, sym, it->second, origin[sym]));
    }
  };
  for (size_t i = 0; i < s.dims.size(); ++i) {
    std::string a, b;
    if (!product(s.dims[i], &a, &b)) continue;
    const bool ha = x.dims.count(a) > 0, hb = x.dims.count(b) > 0;
    if (!ha && !hb) return false;
  }
  for (size_t i = 0; i < s.dims.size(); ++i) {
    const int64_t v = d.shape[i];
    std::string a, b;
    if (!product(s.dims[i], &a, &b)) {
      set(s.dims[i], v, i);
      continue;
    }
    if (x.dims.count(a) && x.dims.count(b)) {
      if (x.dims[a] * x.dims[b] != v)
        bad(i, fmt::format("is {}, but {} = {} x {} = {} ({} from {}, {} from {})", v, s.dims[i], x.dims[a], x.dims[b],
                           x.dims[a] * x.dims[b], a, origin[a], b, origin[b]));
      continue;
    }
    const std::string& known = x.dims.count(a) ? a : b;
    const std::string& other = x.dims.count(a) ? b : a;
    if (x.dims[known] <= 0 || v % x.dims[known] != 0)
      bad(i, fmt::format("is {}, not a multiple of {} = {} (from {})", v, known, x.dims[known], origin[known]));
    set(other, v / x.dims[known], i);
  }
  return true;
}

void check_attrs(OpInputs& x, const OpSpec& s, const InputFile& f, std::map<std::string, std::string>& origin) {
  for (const AttrSpec& a : s.attrs) {
    const auto it = f.attrs.find(a.name);
    const std::string need = fmt::format("{} needs attribute '{}' ({}: {})", s.name, a.name,
                                         a.kind == AttrKind::Int     ? "integer"
                                         : a.kind == AttrKind::Float ? "float"
                                                                     : "string",
                                         a.doc);
    if (it == f.attrs.end() && a.fallback.empty())
      fail("{}: attribute '{}' is missing from the root group: {}", x.file, a.name, need);
    if (a.kind == AttrKind::Choice) {
      const std::string v = it == f.attrs.end() ? a.fallback : it->second.text;
      if (it != f.attrs.end() && it->second.number)
        fail("{}: attribute '{}' is a number; expected a string, one of: {}", x.file, a.name,
             fmt::join(a.choices, ", "));
      bool ok = false;
      for (const std::string& c : a.choices) ok = ok || c == v;
      if (!ok)
        fail("{}: attribute '{}' is '{}'; expected one of: {}", x.file, a.name, excerpt(v), fmt::join(a.choices, ", "));
      x.choices[a.name] = v;
      continue;
    }
    double v = 0;
    if (it == f.attrs.end()) {
      v = std::stod(a.fallback);
    } else {
      if (!it->second.number)
        fail("{}: attribute '{}' is a string ('{}'); {}", x.file, a.name, excerpt(it->second.text), need);
      v = it->second.value;
    }
    if (!std::isfinite(v)) fail("{}: attribute '{}' is {}; expected a finite number", x.file, a.name, v);
    if (a.kind == AttrKind::Int) {
      if (v != std::floor(v)) fail("{}: attribute '{}' is {}; expected a whole number", x.file, a.name, v);
      if (v < double(a.lo) || v > double(a.hi))
        fail("{}: attribute '{}' is {:.0f}; expected a whole number in [{}, {}]", x.file, a.name, v, a.lo, a.hi);
      if (!a.binds.empty()) {
        x.dims[a.binds] = int64_t(v);
        origin[a.binds] = "attribute '" + a.name + "'";
      }
    } else if (!a.range.contains(v)) {
      fail("{}: attribute '{}' is {}; expected a float in {} ({}): {}", x.file, a.name, v, a.range.interval(),
           a.range.why, need);
    }
    x.numbers[a.name] = v;
  }
}

void check_headers(OpInputs& x, const OpSpec& s, const InputFile& f) {
  std::map<std::string, std::string> origin;
  check_attrs(x, s, f, origin);
  std::vector<const InputSpec*> pending;
  for (const InputSpec& i : s.inputs) {
    const auto it = f.datasets.find(i.name);
    if (it == f.datasets.end()) {
      if (i.optional) continue;
      fail("{}: dataset '{}' is missing: {} needs {} {} ({}: {}) at the root of the file", x.file, i.name, s.name,
           i.name, format_dims(i.dims), dtype_name(i.dtype), i.doc);
    }
    const InputDataset& d = it->second;
    const bool type_ok = i.dtype == DType::Float ? d.floating : d.integer;
    if (!type_ok)
      fail("{}: dataset '{}': expected dtype {} ({}), found {}", x.file, i.name, dtype_name(i.dtype),
           i.dtype == DType::Float ? "float16, float32 or float64, read as float64"
                                   : "int8 .. int64 or uint8 .. uint64",
           d.type);
    if (d.shape.size() != i.dims.size())
      fail("{}: dataset '{}': expected rank {} {}, found rank {} {}", x.file, i.name, i.dims.size(),
           format_dims(i.dims), d.shape.size(), shape_text(d.shape));
    pending.push_back(&i);
  }
  if (!f.unlisted.empty()) {  // a misspelt name must not be ignored (an optional input would silently default)
    std::vector<std::string> ds, as;
    for (const InputSpec& i : s.inputs) ds.push_back(i.name);
    for (const AttrSpec& a : s.attrs) as.push_back(a.name);
    fail("{}: {} at the root: not an input of {} (datasets: {}; attributes: {}; `salasim op {} --help`)", x.file,
         excerpt(fmt::format("{}", fmt::join(f.unlisted, ", "))), s.name, fmt::join(ds, ", "),
         as.empty() ? "none" : fmt::format("{}", fmt::join(as, ", ")), s.name);
  }
  // Bind in table order; a product whose factors are both unknown waits for a later dataset.
  while (!pending.empty()) {
    std::vector<const InputSpec*> later;
    for (const InputSpec* i : pending)
      if (!bind(x, origin, *i, f.datasets.at(i->name))) later.push_back(i);
    if (later.size() == pending.size())
      internal_fail("op {}: the dims of dataset '{}' cannot be resolved from the table", s.name, later[0]->name);
    pending = later;
  }
  static const std::set<std::string> may_be_zero = {"N1", "N2"};
  for (const auto& [sym, v] : x.dims)
    if (v <= 0 && !may_be_zero.count(sym))
      fail("{}: {} = 0 (from {}); {} needs at least one", x.file, sym, origin[sym], sym);
}

}  // namespace

const InputDataset& OpInputs::tensor(const std::string& input) const {
  const auto it = tensors.find(input);
  if (it == tensors.end()) internal_fail("op {}: input '{}' was not read", spec->name, input);
  return it->second;
}
int64_t OpInputs::i(const std::string& attr) const { return int64_t(f(attr)); }
double OpInputs::f(const std::string& attr) const {
  const auto it = numbers.find(attr);
  if (it == numbers.end()) internal_fail("op {}: attribute '{}' was not read", spec->name, attr);
  return it->second;
}
const std::string& OpInputs::choice(const std::string& attr) const {
  const auto it = choices.find(attr);
  if (it == choices.end()) internal_fail("op {}: attribute '{}' was not read", spec->name, attr);
  return it->second;
}
int64_t OpInputs::dim(const std::string& symbol) const {
  const auto it = dims.find(symbol);
  if (it == dims.end()) internal_fail("op {}: size {} is not bound", spec->name, symbol);
  return it->second;
}

const std::vector<OpSpec>& op_table() {
  static const std::vector<OpSpec> t = make_table();
  return t;
}

std::string op_names() {
  std::vector<std::string> n;
  for (const OpSpec& s : op_table()) n.push_back(s.name);
  return fmt::format("{}", fmt::join(n, ", "));
}

const OpSpec& find_op(const std::string& name) {
  for (const OpSpec& s : op_table())
    if (s.name == name) return s;
  fail("unknown op '{}'; known: {} (salasim op --help lists their inputs)", excerpt(name), op_names());
}

std::string format_dims(const std::vector<std::string>& dims) { return fmt::format("[{}]", fmt::join(dims, ", ")); }

std::string op_help(const OpSpec& s) {
  std::string o =
      fmt::format("{}: {}\n  wraps {}\n  inputs (datasets at the root of --in):\n", s.name, s.summary, s.library);
  for (const InputSpec& i : s.inputs)
    o += fmt::format("    {:<8} {:<14} {:<8} {}{}{}\n", i.name, format_dims(i.dims), dtype_name(i.dtype), i.doc,
                     i.optional ? " (optional)" : "", i.fp32 ? " [fp32 on the GPU]" : "");
  if (!s.attrs.empty()) o += "  attributes (of the root group):\n";
  for (const AttrSpec& a : s.attrs) {
    std::string kind = a.kind == AttrKind::Int     ? fmt::format("int [{}, {}]", a.lo, a.hi)
                       : a.kind == AttrKind::Float ? "float in " + a.range.interval()
                                                   : fmt::format("{}", fmt::join(a.choices, "|"));
    o += fmt::format("    {:<12} {:<22} {}{}\n", a.name, kind, a.doc,
                     a.fallback.empty() ? "" : fmt::format(" (default {})", a.fallback));
  }
  o += "  outputs (datasets of the --out tap dump, float64 or int64):\n";
  for (const OutputSpec& u : s.outputs)
    o += fmt::format("    {:<26} {:<14} {:<8} {}\n", u.tap, format_dims(u.dims), dtype_name(u.dtype), u.doc);
  for (const std::string& n : s.notes) o += "  note: " + n + "\n";
  return o;
}

std::string all_ops_help() {
  std::string o;
  for (const OpSpec& s : op_table()) {
    if (!o.empty()) o += '\n';
    o += op_help(s);
  }
  return o;
}

namespace {

// What the op will hold, its inputs and its outputs as float64, refused before anything is read or made when it
// would not fit in this machine's memory.
void check_fits(const std::string& path, double bytes, double share, const std::string& what) {
  const double have = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGE_SIZE));
  if (have > 0 && bytes > share * have)
    fail("{}: {} need {:.1f} GB as float64, and this machine has {:.1f} GB", path, what, bytes / 1e9, have / 1e9);
}

void check_input_sizes(const std::string& path, const InputFile& h) {
  double bytes = 0;
  for (const auto& [n, d] : h.datasets) bytes += 8.0 * double(checked_numel(d.shape, path + ": dataset " + n));
  check_fits(path, bytes, 0.8, "the inputs");
}

// The checks that follow the headers, for a file read and for inputs made in memory alike: every value finite, the
// op's own rules, the outputs' size.
OpInputs finish_inputs(OpInputs x, InputFile& f) {
  const OpSpec& s = *x.spec;
  for (auto& [n, d] : f.datasets) {
    for (size_t i = 0; i < d.data.size(); ++i)
      if (!std::isfinite(d.data[i]))
        fail("{}: dataset '{}': element {} is {}; the op's inputs must be finite", x.file, n, index_of(i, d.shape),
             d.data[i]);
    x.tensors[n] = std::move(d);
  }
  if (s.check) s.check(x);
  double out_bytes = 0;
  for (const OutputSpec& u : s.outputs) {
    double n = 8;
    for (const std::string& dim : u.dims) {
      std::string a, b;
      n *= product(dim, &a, &b) ? double(x.dim(a)) * double(x.dim(b)) : double(x.dim(dim));
    }
    out_bytes += n;
  }
  check_fits(x.file, out_bytes, 0.5, s.name + "'s outputs");
  return x;
}

}  // namespace

OpInputs read_op_inputs(const OpSpec& s, const std::string& path, bool guarded) {
  std::vector<std::string> datasets, attrs;
  for (const InputSpec& i : s.inputs) datasets.push_back(i.name);
  for (const AttrSpec& a : s.attrs) attrs.push_back(a.name);
  OpInputs x;
  x.spec = &s;
  x.file = path;
  const auto read = guarded ? read_input_file : read_input_file_unguarded;
  InputFile f = read(path, datasets, attrs, [&](const InputFile& h) {
    x.dims.clear();
    x.numbers.clear();
    x.choices.clear();
    check_headers(x, s, h);
    check_input_sizes(path, h);
  });
  return finish_inputs(std::move(x), f);
}

OpInputs make_op_inputs(const OpSpec& s, InputFile f, const std::string& label) {
  OpInputs x;
  x.spec = &s;
  x.file = label;
  for (const auto& [n, d] : f.datasets)
    if (d.data.size() != size_t(checked_numel(d.shape, label + ": dataset " + n)))
      internal_fail("{}: dataset '{}' holds {} values for shape {}", label, n, d.data.size(), shape_text(d.shape));
  check_headers(x, s, f);
  check_input_sizes(label, f);
  return finish_inputs(std::move(x), f);
}

OpInputs as_gpu_stores(const OpInputs& x) {
  OpInputs r = x;
  for (const InputSpec& i : x.spec->inputs) {
    auto it = r.tensors.find(i.name);
    if (it == r.tensors.end() || i.dtype != DType::Float) continue;
    for (size_t k = 0; k < it->second.data.size(); ++k) {
      double& v = it->second.data[k];
      const double was = v;
      v = i.fp32 ? round_fp32(v) : round_bf16(v);
      if (!std::isfinite(v))
        fail("{}: dataset '{}': element {} is {:g}, past the largest finite {} the CUDA path stores it in", x.file,
             i.name, index_of(k, it->second.shape), was, i.fp32 ? "fp32" : "bf16");
    }
  }
  return r;
}

}  // namespace salasim::op
