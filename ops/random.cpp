// The generator machinery of ops/random.hpp; each op's own draws live in its definition (ops/<name>.cpp).
#include "ops/random.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "model/bf16.hpp"
#include "model/checked.hpp"
#include "model/error.hpp"
#include "model/json_field.hpp"
#include "ops/op.hpp"

namespace salasim::op {

uint64_t Draw::next() {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double Draw::normal() { return std::sqrt(-2 * std::log(uniform())) * std::cos(2 * M_PI * uniform()); }

std::vector<double>& Draw::tensor(const std::string& name, std::vector<int64_t> shape, bool integer) {
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

void Draw::normal(const std::string& name, std::vector<int64_t> shape, double scale, double mean) {
  for (double& v : tensor(name, std::move(shape))) v = mean + scale * normal();
}

void Draw::number(const std::string& name, double v, bool integer) {
  InputAttr& a = f.attrs[name];
  a.number = true, a.integer = integer, a.value = v;
}

CaseKey key(std::string name, int64_t fallback, int64_t lo, int64_t hi, std::string doc) {
  return CaseKey{std::move(name), fallback, lo, hi, std::move(doc)};
}
CaseKey rows(int64_t fallback) { return key("T", fallback, 1, kMaxSize, "rows (query positions)"); }
CaseKey width(const char* name, int64_t fallback, const char* doc) { return key(name, fallback, 1, kMaxSize, doc); }
CaseKey head_dim(int64_t fallback) { return key("hd", fallback, 1, 4096, "head dim (128 in the model)"); }
CaseKey pos0(int64_t fallback) { return key("pos0", fallback, 0, kMaxPos, "position of the first row"); }
CaseKey attn_heads() { return key("H", 16, 1, 4096, "query heads (16 per kv head in the model)"); }
CaseKey kv_heads() { return key("G", 1, 1, 4096, "kv heads (2 in the model)"); }

void attention(Draw& d) {
  const int64_t T = d["T"], H = d["H"], G = d["G"], hd = d["hd"], L = d["pos0"] + T;
  d.normal("q", {T, H * hd}, 1.0);  // after the per-head norm: unit RMS
  d.normal("k", {G, L, hd}, 1.0);
  d.normal("v", {G, L, hd}, 1.0);
  d.number("pos0", double(d["pos0"]), true);
  d.number("tau", 1 / std::sqrt(double(hd)));
}

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

namespace {

const Generator& generator(const OpSpec& s) {
  if (!s.random.make) internal_fail("op {} has no input generator (ops/{}.cpp)", s.name, s.name);
  return s.random;
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

InputFile random_file(const OpSpec& s, const CaseSizes& c, uint64_t seed, Drawn how, int64_t max_values) {
  // The stream starts from the seed and the op's name, so two ops of one seed draw different values.
  uint64_t h = 1469598103934665603ull;
  for (const char ch : s.name) h = (h ^ uint64_t(static_cast<unsigned char>(ch))) * 1099511628211ull;
  Draw d{c, seed ^ h, max_values, case_label(s, c, seed), {}};
  generator(s).make(d);
  if (how == Drawn::GpuStores)
    for (const InputSpec& i : s.inputs) {
      const auto it = d.f.datasets.find(i.name);
      if (it == d.f.datasets.end() || i.dtype != DType::Float) continue;
      // The generators draw values of order 1, far inside bf16's range: rounding keeps every value finite.
      for (double& v : it->second.data) v = i.fp32 ? round_fp32(v) : round_bf16(v);
    }
  return std::move(d.f);
}

OpInputs random_inputs(const OpSpec& s, const CaseSizes& c, uint64_t seed, Drawn how) {
  return make_op_inputs(s, random_file(s, c, seed, how), case_label(s, c, seed));
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
