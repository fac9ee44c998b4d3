// The generators of compare/op_random.hpp: one per op of the op table, each with its keys, its sweep cases and the
// values it draws. Magnitudes follow what the op sees inside the model (docs/spec.md), so the peer's error, and the
// gate it sets, are the model's and not those of an arbitrary scale.
#include "compare/op_random.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <set>

#include "model/checked.hpp"
#include "model/error.hpp"
#include "model/json_field.hpp"
#include "model/windows.hpp"

namespace salasim::op {

namespace {

constexpr int64_t kMaxSize = int64_t(1) << 24;  // one size: far past any dimension of the model
constexpr int64_t kMaxPos = int64_t(1) << 31;   // positions, as the op table allows them

// One case being drawn: its sizes, the value stream and the file it fills.
struct Draw {
  const CaseSizes& c;
  uint64_t state;
  int64_t max_values;
  std::string label;
  InputFile f;
  int64_t values = 0;

  int64_t operator[](const std::string& key) const { return c.at(key); }
  // splitmix64: a fixed stream on every machine and standard library (std::normal_distribution is not).
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return (double(next() >> 11) + 0.5) * 0x1p-53; }  // in (0, 1)
  double normal() { return std::sqrt(-2 * std::log(uniform())) * std::cos(2 * M_PI * uniform()); }

  std::vector<double>& tensor(const std::string& name, std::vector<int64_t> shape, bool integer = false) {
    const int64_t n = checked_numel(shape, label + ": dataset " + name);
    if (n > max_values - values)
      fail("{}: the inputs would hold more than {} values (dataset '{}' alone {}); choose smaller sizes", label,
           max_values, name, n);
    values += n;
    InputDataset& d = f.datasets[name];
    d.shape = std::move(shape);
    d.type = integer ? "int64" : "float64";
    d.floating = !integer, d.integer = integer;
    d.data.assign(size_t(n), 0.0);
    return d.data;
  }
  // Normal values of mean `mean` and standard deviation `scale`.
  void normal(const std::string& name, std::vector<int64_t> shape, double scale, double mean = 0) {
    for (double& v : tensor(name, std::move(shape))) v = mean + scale * normal();
  }
  void number(const std::string& name, double v, bool integer = false) {
    InputAttr& a = f.attrs[name];
    a.number = true, a.integer = integer, a.value = v;
  }
  void text(const std::string& name, const std::string& v) { f.attrs[name].text = v; }
};

struct Generator {
  std::vector<CaseKey> keys;
  std::vector<std::string> sweep;  // --shape texts
  std::function<void(Draw&)> make;
};

CaseKey key(std::string name, int64_t fallback, int64_t lo, int64_t hi, std::string doc) {
  return CaseKey{std::move(name), fallback, lo, hi, std::move(doc)};
}
CaseKey rows(int64_t fallback) { return key("T", fallback, 1, kMaxSize, "rows (query positions)"); }
CaseKey width(const char* name, int64_t fallback, const char* doc) { return key(name, fallback, 1, kMaxSize, doc); }
CaseKey head_dim(int64_t fallback = 128) { return key("hd", fallback, 1, 4096, "head dim (128 in the model)"); }
CaseKey pos0(int64_t fallback) { return key("pos0", fallback, 0, kMaxPos, "position of the first row"); }
CaseKey attn_heads() { return key("H", 16, 1, 4096, "query heads (16 per kv head in the model)"); }
CaseKey kv_heads() { return key("G", 1, 1, 4096, "kv heads (2 in the model)"); }

// Keys of one attention head layout: queries [T, H*hd] at pos0 .. pos0+T-1, keys and values [G, pos0+T, hd].
void attention(Draw& d) {
  const int64_t T = d["T"], H = d["H"], G = d["G"], hd = d["hd"], L = d["pos0"] + T;
  d.normal("q", {T, H * hd}, 1.0);  // after the per-head norm: unit RMS
  d.normal("k", {G, L, hd}, 1.0);
  d.normal("v", {G, L, hd}, 1.0);
  d.number("pos0", double(d["pos0"]), true);
  d.number("tau", 1 / std::sqrt(double(hd)));
}

// A causal block set per (row, kv head): the query's own block and block 0 (the forced ones in the model), then
// distinct earlier blocks drawn at random, ascending, -1 in the slots left over (a query early in the sequence has
// fewer blocks than slots).
void block_sets(Draw& d, int64_t T, int64_t G, int64_t K, int64_t pos0, int64_t block) {
  std::vector<double>& b = d.tensor("blocks", {T, G, K}, true);
  for (int64_t t = 0; t < T; ++t) {
    const int64_t own = (pos0 + t) / block;
    for (int64_t g = 0; g < G; ++g) {
      std::vector<int64_t> chosen = {own};
      if (own > 0 && K > 1) chosen.push_back(0);
      const int64_t want = std::min(K, own + 1);
      if (want > int64_t(chosen.size())) {
        // a partial Fisher-Yates over the blocks between: distinct ids without building every set
        std::vector<int64_t> pool(size_t(std::max<int64_t>(own - 1, 0)));
        std::iota(pool.begin(), pool.end(), int64_t(1));
        for (int64_t i = 0; int64_t(chosen.size()) < want; ++i) {
          const size_t j = size_t(i) + size_t(d.next() % uint64_t(int64_t(pool.size()) - i));
          std::swap(pool[size_t(i)], pool[j]);
          chosen.push_back(pool[size_t(i)]);
        }
      }
      std::sort(chosen.begin(), chosen.end());
      for (int64_t s = 0; s < K; ++s)
        b[size_t((t * G + g) * K + s)] = s < int64_t(chosen.size()) ? double(chosen[size_t(s)]) : -1.0;
    }
  }
}

std::map<std::string, Generator> make_generators() {
  std::map<std::string, Generator> g;

  g["rmsnorm"] = {{rows(4), width("n", 256, "row width")}, {"T=1,n=4096", "T=16,n=128", "T=5,n=1000"}, [](Draw& d) {
                    d.normal("x", {d["T"], d["n"]}, 2.0);
                    d.normal("w", {d["n"]}, 0.1, 1.0);  // norm weights near 1
                    d.number("eps", 1e-6);
                  }};

  g["rope"] = {{rows(8), key("H", 2, 1, 4096, "heads"), head_dim(), pos0(1000)},
               {"T=1,H=2,hd=128,pos0=0", "T=64,H=4,hd=128,pos0=1000000", "T=9,H=3,hd=64,pos0=77"},
               [](Draw& d) {
                 d.normal("x", {d["T"], d["H"] * d["hd"]}, 1.0);
                 d.number("head_dim", double(d["hd"]), true);
                 d.number("pos0", double(d["pos0"]), true);
                 d.number("theta", 10000.0);  // rope_theta of the released config
                 d.text("angles", "fp32");
               }};

  g["gla"] = {{rows(100), key("H", 2, 1, 4096, "heads"), head_dim(),
               key("state", 0, 0, 1, "1: an entering state (else zeros)")},
              {"T=1,H=16,hd=128,state=1", "T=100,H=2,hd=128,state=0", "T=300,H=1,hd=128,state=1",
               "T=70,H=2,hd=64,state=0"},
              [](Draw& d) {
                const int64_t T = d["T"], H = d["H"], hd = d["hd"];
                d.normal("q", {T, H * hd}, 1.0);  // q, k after the per-head norm and RoPE: unit RMS
                d.normal("k", {T, H * hd}, 1.0);
                d.normal("v", {T, H * hd}, 1.0);
                // decays from 1e-3 (a head that remembers ~1000 tokens) to 0.7 per token, log-uniform
                for (double& v : d.tensor("gamma", {H})) v = -std::exp(std::log(1e-3) + d.uniform() * std::log(700.0));
                if (d["state"]) d.normal("state", {H, hd, hd}, 1.0);
                d.number("tau", 1 / std::sqrt(double(hd)));
                d.text("form", "auto");
              }};

  g["compress_k"] = {{kv_heads(), key("L", 300, 1, kMaxSize, "keys per kv head"), head_dim(),
                      key("kernel", 32, 1, 65536, "K1 window"), key("stride", 16, 1, 65536, "K1 stride")},
                     {"G=2,L=31,hd=128", "G=2,L=300,hd=128", "G=1,L=1000,hd=64,kernel=8,stride=4"},
                     [](Draw& d) {
                       d.normal("k", {d["G"], d["L"], d["hd"]}, 1.0);
                       d.number("kernel", double(d["kernel"]), true);
                       d.number("stride", double(d["stride"]), true);
                     }};

  g["select_blocks"] =
      {{rows(16), kv_heads(), attn_heads(), head_dim(), pos0(8000), key("k_sel", 96, 1, 4096, "blocks chosen"),
        key("init_blocks", 1, 0, 1 << 30, "forced first blocks"),
        key("local_blocks", 32, 0, 1 << 30, "forced blocks before the query's own"),
        key("kernel", 32, 1, 65536, "K1 window"), key("stride", 16, 1, 65536, "K1 stride"),
        key("block", 64, 1, 65536, "block size")},
       {"T=1,G=1,H=16,hd=128,pos0=10000", "T=16,G=2,H=32,hd=128,pos0=8000", "T=64,G=1,H=16,hd=128,pos0=6100",
        "T=8,G=1,H=4,hd=64,pos0=2000,k_sel=8,local_blocks=2"},
       [](Draw& d) {
         const int64_t T = d["T"], H = d["H"], G = d["G"], hd = d["hd"], len = d["pos0"] + T;
         const int64_t kernel = d["kernel"], stride = d["stride"];
         d.normal("q", {T, H * hd}, 1.0);
         // compressed keys are means of unit-RMS keys: smaller, K2 (4x the window) more so
         d.normal("k1", {G, n_windows(len, kernel, stride), hd}, 0.3);
         d.normal("k2", {G, n_windows(len, 4 * kernel, 4 * stride), hd}, 0.15);
         for (const char* a : {"pos0", "k_sel", "init_blocks", "local_blocks", "kernel", "stride", "block"})
           d.number(a, double(d[a]), true);
         d.number("tau", 1 / std::sqrt(double(hd)));
       }};

  g["sparse_attn"] = {{rows(16), kv_heads(), attn_heads(), head_dim(), pos0(4000),
                       key("K", 16, 1, 4096, "block slots per query and kv head"),
                       key("block", 64, 1, 65536, "block size")},
                      {"T=1,G=1,H=16,hd=128,pos0=10000,K=96", "T=32,G=2,H=32,hd=128,pos0=5000,K=64",
                       "T=5,G=1,H=2,hd=64,pos0=300,K=4"},
                      [](Draw& d) {
                        attention(d);
                        block_sets(d, d["T"], d["G"], d["K"], d["pos0"], d["block"]);
                        d.number("block", double(d["block"]), true);
                      }};

  g["dense_attn"] = {{rows(16), kv_heads(), attn_heads(), head_dim(), pos0(500)},
                     {"T=1,G=1,H=16,hd=128,pos0=4000", "T=64,G=2,H=32,hd=128,pos0=1000", "T=7,G=1,H=3,hd=64,pos0=50"},
                     attention};

  g["gate"] = {{rows(8), width("n", 512, "row width")}, {"T=1,n=4096", "T=16,n=1000"}, [](Draw& d) {
                 d.normal("x", {d["T"], d["n"]}, 2.0);
                 d.normal("z", {d["T"], d["n"]}, 2.0);
               }};

  g["mlp_act"] = {{rows(8), width("I", 512, "MLP width")}, {"T=1,I=16384", "T=16,I=1000"}, [](Draw& d) {
                    d.normal("g", {d["T"], d["I"]}, 2.0);
                    d.normal("u", {d["T"], d["I"]}, 2.0);
                  }};

  g["residual"] = {{rows(8), width("D", 512, "hidden size")}, {"T=1,D=4096", "T=16,D=1000"}, [](Draw& d) {
                     d.normal("h", {d["T"], d["D"]}, 4.0);  // the residual stream grows over the layers
                     d.normal("branch", {d["T"], d["D"]}, 1.0);
                     d.number("scale", 1.4 / std::sqrt(32.0));  // scale_depth / sqrt(layers) of the released config
                   }};

  g["logits"] = {{rows(2), width("D", 256, "hidden size"), width("V", 1000, "vocabulary")},
                 {"T=1,D=4096,V=2000", "T=3,D=256,V=5000"},
                 [](Draw& d) {
                   d.normal("h", {d["T"], d["D"]}, 1.0);  // after the final norm
                   d.normal("w", {d["V"], d["D"]}, 0.05);
                   d.number("divisor", 16.0);  // hidden_size / dim_model_base of the released config
                 }};
  return g;
}

const Generator& generator(const OpSpec& s) {
  static const std::map<std::string, Generator> g = make_generators();
  const auto it = g.find(s.name);
  if (it == g.end())
    internal_fail("op {} is in the op table but has no input generator (compare/op_random.cpp)", s.name);
  return it->second;
}

std::string key_names(const OpSpec& s) {
  std::vector<std::string> n;
  for (const CaseKey& k : case_keys(s)) n.push_back(k.name);
  return fmt::format("{}", fmt::join(n, ", "));
}

}  // namespace

const std::vector<CaseKey>& case_keys(const OpSpec& s) { return generator(s).keys; }

CaseSizes parse_case(const OpSpec& s, const std::string& text, const std::string& what) {
  CaseSizes c;
  for (const CaseKey& k : case_keys(s)) c[k.name] = k.fallback;
  std::set<std::string> named;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find(',', at);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(at, end - at);
    at = end + 1;
    const size_t eq = item.find('=');
    if (eq == std::string::npos)
      fail("{} '{}': '{}' is not KEY=SIZE; {} takes {}", what, excerpt(text), excerpt(item), s.name, key_names(s));
    const std::string name = item.substr(0, eq), value = item.substr(eq + 1);
    const auto k =
        std::find_if(case_keys(s).begin(), case_keys(s).end(), [&](const CaseKey& x) { return x.name == name; });
    if (k == case_keys(s).end())
      fail("{} '{}': {} takes no size '{}'; its keys: {}", what, excerpt(text), s.name, excerpt(name), key_names(s));
    if (!named.insert(name).second) fail("{} '{}': '{}' is given twice", what, excerpt(text), name);
    int64_t v = 0;
    size_t used = 0;
    try {
      v = std::stoll(value, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (value.empty() || used != value.size() || !(std::isdigit(static_cast<unsigned char>(value[0]))))
      fail("{} '{}': {} is '{}'; expected a whole number in [{}, {}]", what, excerpt(text), name, excerpt(value), k->lo,
           k->hi);
    if (v < k->lo || v > k->hi)
      fail("{} '{}': {} is {}; expected a whole number in [{}, {}] ({})", what, excerpt(text), name, v, k->lo, k->hi,
           k->doc);
    c[name] = v;
  }
  return c;
}

std::string format_case(const OpSpec& s, const CaseSizes& c) {
  std::vector<std::string> parts;
  for (const CaseKey& k : case_keys(s)) parts.push_back(fmt::format("{}={}", k.name, c.at(k.name)));
  return fmt::format("{}", fmt::join(parts, ","));
}

std::vector<CaseSizes> sweep_cases(const OpSpec& s) {
  std::vector<CaseSizes> v;
  for (const std::string& t : generator(s).sweep) v.push_back(parse_case(s, t, "sweep case"));
  return v;
}

std::string case_label(const OpSpec& s, const CaseSizes& c, uint64_t seed) {
  return fmt::format("random {} [{}] seed {}", s.name, format_case(s, c), seed);
}

InputFile random_file(const OpSpec& s, const CaseSizes& c, uint64_t seed, int64_t max_values) {
  // The stream starts from the seed and the op's name, so two ops of one seed draw different values.
  uint64_t h = 1469598103934665603ull;
  for (const char ch : s.name) h = (h ^ uint64_t(static_cast<unsigned char>(ch))) * 1099511628211ull;
  Draw d{c, seed ^ h, max_values, case_label(s, c, seed), {}};
  generator(s).make(d);
  return std::move(d.f);
}

OpInputs random_inputs(const OpSpec& s, const CaseSizes& c, uint64_t seed) {
  return make_op_inputs(s, random_file(s, c, seed), case_label(s, c, seed));
}

std::string random_help(const OpSpec& s) {
  std::string o = "  generated inputs (--random; --shape KEY=SIZE,...):\n";
  for (const CaseKey& k : case_keys(s))
    o += fmt::format("    {:<12} {:<22} {} (default {})\n", k.name, fmt::format("int [{}, {}]", k.lo, k.hi), k.doc,
                     k.fallback);
  o += "  sweep cases (salasim op --sweep):\n";
  for (const std::string& t : generator(s).sweep) o += "    " + t + "\n";
  return o;
}

}  // namespace salasim::op
