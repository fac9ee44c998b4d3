// The NIAH generator: keys, values, needles, haystacks, depths, templates and the fitting of the haystack.
#include "scenarios/ruler/niah.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "model/error.hpp"
#include "reports/context.hpp"

namespace salasim::ruler {

const std::vector<Task>& niah_tasks() {
  using H = Haystack;
  using K = Kind;
  static const std::vector<Task> t = {
      {"niah_single_1", H::Noise, K::Words, K::Numbers, 1, 1, 1},
      {"niah_single_2", H::Essay, K::Words, K::Numbers, 1, 1, 1},
      {"niah_single_3", H::Essay, K::Words, K::Uuids, 1, 1, 1},
      {"niah_multikey_1", H::Essay, K::Words, K::Numbers, 4, 1, 1},
      {"niah_multikey_2", H::Needle, K::Words, K::Numbers, 1, 1, 1},
      {"niah_multikey_3", H::Needle, K::Uuids, K::Uuids, 1, 1, 1},
      {"niah_multivalue", H::Essay, K::Words, K::Numbers, 1, 4, 1},
      {"niah_multiquery", H::Essay, K::Words, K::Numbers, 1, 1, 4},
  };
  return t;
}

const Task& task_named(const std::string& name) {
  std::string names;
  for (const Task& t : niah_tasks()) {
    if (t.name == name) return t;
    names += (names.empty() ? "" : ", ") + t.name;
  }
  std::string shown = name.size() > 60 ? name.substr(0, 57) + "..." : name;  // a hostile name can be megabytes
  for (char& c : shown)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  fail("unknown task '{}': expected one of {} (or all)", shown, names);
}

std::vector<Task> parse_tasks(const std::string& list) {
  if (list == "all") return niah_tasks();
  std::vector<Task> out;
  for (const std::string& e : reports::split_list(list)) {
    if (e.empty()) fail("--task '{}': empty entry", list);
    out.push_back(task_named(e));
  }
  return out;
}

std::vector<int> depth_grid() {
  std::vector<int> g;
  for (int i = 0; i < 40; ++i) g.push_back(int(std::nearbyint(100.0 * i / 39.0)));  // default rounding: half to even
  return g;
}

std::string apply_template(const std::string& name, const std::string& task_text) {
  if (name == "base") return task_text;
  if (name == "chatml") return "<|im_start|>user\n" + task_text + "<|im_end|>\n<|im_start|>assistant\n";
  fail("--template '{}': expected base or chatml", name);
}

namespace {

const char* kNoiseUnit = "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again.";

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
  return s;
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

struct Rng {
  std::mt19937_64 g;
  int64_t uniform(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(g); }
  double unit() { return std::uniform_real_distribution<double>(0.0, 1.0)(g); }
};

Rng rng_for(uint64_t seed, const std::string& task, int64_t length, int64_t index, uint64_t stream) {
  std::seed_seq ss{uint32_t(seed),        uint32_t(seed >> 32),
                   uint32_t(fnv1a(task)), uint32_t(fnv1a(task) >> 32),
                   uint32_t(length),      uint32_t(uint64_t(length) >> 32),
                   uint32_t(index),       uint32_t(stream)};
  return Rng{std::mt19937_64(ss)};
}

std::string uuid4(Rng& r) {  // uuid.UUID(int=getrandbits(128), version=4): version and variant bits set
  uint64_t hi = r.g(), lo = r.g();
  hi = (hi & ~0xF000ull) | 0x4000ull;
  lo = (lo & ~(0xC000ull << 48)) | (0x8000ull << 48);
  const std::string h = fmt::format("{:016x}{:016x}", hi, lo);
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) + "-" + h.substr(20, 12);
}

std::string draw(Kind k, Rng& r, const WordLists& w) {
  switch (k) {
    case Kind::Numbers: return std::to_string(r.uniform(1000000, 9999999));
    case Kind::Uuids: return uuid4(r);
    case Kind::Words:
      return w.adjectives[size_t(r.uniform(0, int64_t(w.adjectives.size()) - 1))] + "-" +
             w.nouns[size_t(r.uniform(0, int64_t(w.nouns.size()) - 1))];
  }
  return "";
}

const char* plural(Kind k) { return k == Kind::Uuids ? "uuids" : "numbers"; }
std::string needle_text(Kind value, const std::string& key, const std::string& v) {
  return fmt::format("One of the special magic {} for {} is: {}.", plural(value), key, v);
}

// What a sample is apart from its haystack size: drawn once, so every probe of the size search differs only in N.
struct Draft {
  std::vector<std::string> needles;       // in insertion order (after RULER's fixed-seed shuffle)
  std::vector<std::string> needle_value;  // value each needle carries
  std::vector<double> where;              // per needle: essay depth percent, or a uniform fraction for the others
  std::string query;
  std::vector<std::string> outputs;
  std::string type_v;  // value type as the template says it (singular when q*v == 1)
  bool singular = false;
};

Draft make_draft(const Task& t, Rng& r, const WordLists& w) {
  Draft d;
  const int nk = std::max(t.keys, t.queries);
  std::vector<std::string> keys;
  while (int(keys.size()) < nk) {
    std::string k = draw(t.key, r, w);
    if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  }
  std::vector<std::vector<std::string>> values(keys.size());
  for (size_t i = 0; i < keys.size(); ++i)
    for (int j = 0; j < t.values; ++j) {
      values[i].push_back(draw(t.value, r, w));
      d.needles.push_back(needle_text(t.value, keys[i], values[i].back()));
      d.needle_value.push_back(values[i].back());
    }
  // RULER shuffles the needles with a Random(seed) made afresh each time: the permutation depends only on their count.
  std::mt19937_64 fixed(42);
  std::vector<size_t> perm(d.needles.size());
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = i;
  std::shuffle(perm.begin(), perm.end(), fixed);
  Draft shuffled = d;
  for (size_t i = 0; i < perm.size(); ++i) {
    shuffled.needles[i] = d.needles[perm[i]];
    shuffled.needle_value[i] = d.needle_value[perm[i]];
  }
  d = shuffled;
  // queried keys: q of the k keys, at random
  std::vector<size_t> order(keys.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), r.g);
  order.resize(size_t(t.queries));
  std::vector<std::string> qk;
  for (size_t i : order) {
    qk.push_back(keys[i]);
    for (const std::string& v : values[i]) d.outputs.push_back(v);
  }
  if (qk.size() == 1) d.query = qk[0];
  else {
    for (size_t i = 0; i + 1 < qk.size(); ++i) d.query += qk[i] + ", ";
    d.query += "and " + qk.back();
  }
  d.singular = t.queries * t.values == 1;
  d.type_v = d.singular ? (t.value == Kind::Uuids ? "uuid" : "number") : plural(t.value);
  if (t.haystack == Haystack::Essay) {  // depths drawn without replacement from the 40-point grid
    std::vector<int> grid = depth_grid();
    std::shuffle(grid.begin(), grid.end(), r.g);
    for (size_t i = 0; i < d.needles.size(); ++i) d.where.push_back(grid[i]);
  } else {
    for (size_t i = 0; i < d.needles.size(); ++i) d.where.push_back(r.unit());
  }
  return d;
}

// RULER's task template and answer prefix, with the singular rewrite applied to the template before the context.
void render_template(const Draft& d, std::string* task_before_ctx, std::string* task_after_ctx, std::string* prefix) {
  std::string tmpl =
      "Some special magic {V} are hidden within the following text. Make sure to memorize it. I will quiz you about the "
      "{V} afterwards.\n{CTX}\nWhat are all the special magic {V} for {Q} mentioned in the provided text?";
  std::string ap = " The special magic {V} for {Q} mentioned in the provided text are";
  if (d.singular)
    for (std::string* s : {&tmpl, &ap}) {
      *s = replace_all(*s, "Some", "A");
      *s = replace_all(*s, "are all", "is");
      *s = replace_all(*s, "are", "is");
      *s = replace_all(*s, "answers", "answer");
    }
  for (std::string* s : {&tmpl, &ap}) *s = replace_all(replace_all(*s, "{V}", d.type_v), "{Q}", d.query);
  const size_t c = tmpl.find("{CTX}");
  *task_before_ctx = tmpl.substr(0, c);
  *task_after_ctx = tmpl.substr(c + 5);
  *prefix = ap;
}

struct Built {
  std::string input, prefix;
  std::vector<std::pair<int64_t, int64_t>> needle_chars;  // per needle (insertion order), in input
  std::vector<double> depth;                              // per needle
};

// The haystack of n units with the needles in it, inside the template.
Built build(const Task& t, const Draft& d, int64_t n, const GenOptions& o, const GenSources& s,
            uint64_t distractor_seed) {
  std::vector<std::string> parts;                        // haystack pieces with needles inserted
  std::vector<int64_t> needle_at(d.needles.size(), -1);  // index into parts
  std::vector<double> depth(d.needles.size());
  std::string sep;
  if (t.haystack == Haystack::Essay) {
    parts = essay_sentences(*s.essay, n);
    sep = " ";
    // needles at sentence index int(n_sents * depth / 100), sorted, inserted in order (each shifts the later ones)
    std::vector<std::pair<int64_t, size_t>> at;
    for (size_t i = 0; i < d.needles.size(); ++i)
      at.emplace_back(int64_t(double(parts.size()) * d.where[i] / 100.0), i);
    std::stable_sort(at.begin(), at.end());
    int64_t shift = 0;
    for (auto& [idx, i] : at) {
      parts.insert(parts.begin() + idx + shift, d.needles[i]);
      depth[i] = d.where[i];
      ++shift;
    }
    for (size_t k = 0, found = 0; k < parts.size() && found < d.needles.size(); ++k)
      for (size_t i = 0; i < d.needles.size(); ++i)
        if (needle_at[i] < 0 && parts[k] == d.needles[i]) {
          needle_at[i] = int64_t(k);
          ++found;
          break;
        }
  } else {
    sep = "\n";
    if (t.haystack == Haystack::Noise) {
      parts.assign(size_t(n), kNoiseUnit);
    } else {  // distractor needles with fresh keys and values; the i-th is the same for every n
      Rng dr{std::mt19937_64(distractor_seed)};
      for (int64_t i = 0; i < n; ++i) {
        std::string k = draw(t.key, dr, *s.words), v = draw(t.value, dr, *s.words);
        if (d.query.find(k) != std::string::npos) k = draw(t.key, dr, *s.words);
        parts.push_back(needle_text(t.value, k, v));
      }
    }
    // RULER: indices random.sample(range(N), k), inserted from the highest down
    std::vector<std::pair<int64_t, size_t>> at;
    for (size_t i = 0; i < d.needles.size(); ++i) at.emplace_back(int64_t(d.where[i] * double(n)), i);
    std::stable_sort(at.begin(), at.end(), [](auto& a, auto& b) { return a.first > b.first; });
    for (auto& [idx, i] : at) {
      parts.insert(parts.begin() + idx, d.needles[i]);
      depth[i] = n > 0 ? std::round(1000.0 * double(idx) / double(n)) / 10.0 : 0.0;
    }
    for (size_t k = 0; k < parts.size(); ++k)
      for (size_t i = 0; i < d.needles.size(); ++i)
        if (needle_at[i] < 0 && parts[k] == d.needles[i]) needle_at[i] = int64_t(k);
  }
  std::string before, after, prefix;
  render_template(d, &before, &after, &prefix);
  const std::string wrapped = apply_template(o.template_name, before + "\x01" + after);
  const size_t ctx_at = wrapped.find('\x01');
  Built b;
  b.input = wrapped.substr(0, ctx_at);
  b.needle_chars.assign(d.needles.size(), {-1, -1});
  for (size_t k = 0; k < parts.size(); ++k) {
    if (k) b.input += sep;
    for (size_t i = 0; i < d.needles.size(); ++i)
      if (needle_at[i] == int64_t(k))
        b.needle_chars[i] = {int64_t(b.input.size()), int64_t(b.input.size() + parts[k].size())};
    b.input += parts[k];
  }
  b.input += wrapped.substr(ctx_at + 1);
  b.prefix = prefix;
  b.depth = depth;
  return b;
}

}  // namespace

std::vector<NeedleSpan> locate_needles(const std::string& text, const std::vector<std::string>& values,
                                       const Encoded& enc) {
  std::vector<NeedleSpan> out;
  for (const std::string& v : values) {
    NeedleSpan s;
    s.value = v;
    const size_t at = text.find("is: " + v + ".");
    if (at != std::string::npos) {
      const size_t start = text.rfind("One of the special magic", at);
      s.char_begin = int64_t(start == std::string::npos || at - start > 200 ? at : start);
      s.char_end = int64_t(at + 4 + v.size() + 1);
      for (size_t i = 0; i < enc.spans.size(); ++i) {
        if (s.token_begin < 0 && int64_t(enc.spans[i].second) > s.char_begin) s.token_begin = int64_t(i);
        if (int64_t(enc.spans[i].first) < s.char_end) s.token_end = int64_t(i) + 1;
      }
    }
    out.push_back(s);
  }
  return out;
}

Sample generate_sample(const Task& t, int64_t L, int64_t index, const GenOptions& o, const GenSources& s) {
  if (!s.tokenizer || !s.words || (t.haystack == Haystack::Essay && !s.essay)) fail("generate_sample: missing sources");
  Rng r = rng_for(o.seed, t.name, L, index, 0);
  const Draft d = make_draft(t, r, *s.words);
  const uint64_t distractor_seed = rng_for(o.seed, t.name, L, index, 1).g();
  const int64_t budget = L - o.tokens_to_generate;
  auto tokens = [&](int64_t n) {
    const Built b = build(t, d, n, o, s, distractor_seed);
    return int64_t(s.tokenizer->encode(b.input + b.prefix).size());
  };
  // The largest n with tokens(n) <= budget (and tokens(n + 1) > budget): secant steps on the measured counts.
  const int64_t c0 = tokens(0);
  if (c0 > budget)
    fail("{} at length {}: the prompt without haystack is already {} tokens (+ {} to generate)", t.name, L, c0,
         o.tokens_to_generate);
  const int64_t probe = t.haystack == Haystack::Essay ? 500 : 25;
  const int64_t cp = tokens(probe);
  double per_unit = std::max(1e-3, double(cp - c0) / double(probe));
  int64_t lo = 0, hi = -1;  // tokens(lo) fits; tokens(hi) does not (-1: none known)
  int64_t n = std::max<int64_t>(0, int64_t(double(budget - c0) / per_unit));
  if (cp <= budget) lo = probe;
  else hi = probe;
  for (int iter = 0; iter < 60; ++iter) {
    if (hi >= 0 && hi == lo + 1) break;
    if (n <= lo || (hi >= 0 && n >= hi)) n = hi < 0 ? lo * 2 + 1 : lo + (hi - lo) / 2;
    const int64_t c = tokens(n);
    if (c <= budget) lo = n;
    else hi = n;
    per_unit = std::max(per_unit * 0.5, double(c - c0) / double(std::max<int64_t>(n, 1)));
    // next guess: where the measured rate says the budget is met; probe one past a fit to prove it largest
    const int64_t guess = n + int64_t(std::floor(double(budget - c) / per_unit));
    n = c <= budget ? std::max(guess, n + 1) : std::min(guess, n - 1);
  }
  if (hi != lo + 1) fail("{} at length {}: the haystack size search did not converge", t.name, L);
  const Built b = build(t, d, lo, o, s, distractor_seed);
  const Encoded enc = s.tokenizer->encode_with_spans(b.input + b.prefix);
  Sample out;
  out.index = index;
  out.input = b.input;
  out.answer_prefix = b.prefix;
  out.outputs = d.outputs;
  out.length = int64_t(enc.ids.size()) + o.tokens_to_generate;
  out.task = t.name;
  out.max_seq_length = L;
  out.haystack_units = lo;
  out.template_name = o.template_name;
  out.seed = o.seed;
  for (const std::string& v : d.outputs) {  // spans and depths of the needles holding the answers, in output order
    size_t i = size_t(std::find(d.needle_value.begin(), d.needle_value.end(), v) - d.needle_value.begin());
    const auto [cb, ce] = b.needle_chars[i];
    int64_t tb = -1, te = -1;
    for (size_t k = 0; k < enc.spans.size(); ++k) {
      if (tb < 0 && int64_t(enc.spans[k].second) > cb) tb = int64_t(k);
      if (int64_t(enc.spans[k].first) < ce) te = int64_t(k) + 1;
    }
    out.needle_token_spans.emplace_back(tb, te);
    out.depths.push_back(b.depth[i]);
  }
  return out;
}

std::string tokenizer_training_text(const WordLists& words, const Essay* essay, uint64_t seed) {
  std::string out;
  Rng r{std::mt19937_64(seed)};
  for (int rep = 0; rep < 40; ++rep)
    for (const Task& t : niah_tasks()) {
      const Draft d = make_draft(t, r, words);
      std::string before, after, prefix;
      render_template(d, &before, &after, &prefix);
      out += replace_all(before, "\n", " ") + "\n" + replace_all(after + prefix, "\n", " ") + "\n";
      for (const std::string& n : d.needles) out += n + "\n";
    }
  for (int i = 0; i < 3000; ++i) {
    const Kind k = i % 3 == 0 ? Kind::Uuids : Kind::Words;
    const Kind v = i % 2 == 0 ? Kind::Numbers : Kind::Uuids;
    out += needle_text(v, draw(k, r, words), draw(v, r, words)) + "\n";
  }
  for (int i = 0; i < 200; ++i) out += std::string(kNoiseUnit) + "\n";
  if (essay)
    for (const std::string& s : essay_sentences(*essay, std::min<int64_t>(int64_t(essay->words.size()), 60000)))
      if (s.size() < 2000) out += s + "\n";
  return out;
}

}  // namespace salasim::ruler
