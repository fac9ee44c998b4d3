// The faults of `salasim op --sensitivity` (scenarios/op_sensitivity.hpp), each made from a case's inputs and its
// reference outputs, and the gate's verdict on each.
#include "scenarios/op_sensitivity.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "model/error.hpp"
#include "ops/tensors.hpp"
#include "reference/tensor.hpp"
#include "scenarios/op_backends.hpp"

namespace salasim {

namespace {

using Clock = std::chrono::steady_clock;

// Makes the faulty output `out` of tap `tap` from the case's inputs and its reference outputs; false (with `why`)
// when this case cannot show the fault.
using MakeFault =
    std::function<bool(const op::OpInputs& x, const TapMap& ref, const std::string& tap, Tap& out, std::string* why)>;

// One fault at one op's output: what it means there and how it is made.
struct Site {
  std::string meaning;
  MakeFault make;
};

// ---- block sets: [T, G, K] ids ascending, -1 in empty slots ----
std::vector<int64_t> row_ids(const std::vector<double>& d, int64_t row, int64_t K) {
  std::vector<int64_t> ids;
  for (int64_t s = 0; s < K; ++s)
    if (d[size_t(row * K + s)] >= 0) ids.push_back(int64_t(d[size_t(row * K + s)]));
  return ids;
}
void set_row(std::vector<double>& d, int64_t row, int64_t K, std::vector<int64_t> ids) {
  std::sort(ids.begin(), ids.end());
  for (int64_t s = 0; s < K; ++s) d[size_t(row * K + s)] = s < int64_t(ids.size()) ? double(ids[size_t(s)]) : -1.0;
}
bool contains(const std::vector<int64_t>& v, int64_t b) { return std::find(v.begin(), v.end(), b) != v.end(); }

// The op on changed inputs, at float64: a fault that lives upstream of the output (a wrong position, a wrong block).
Tap rerun(const op::OpInputs& x, const std::string& tap) { return x.spec->reference(x, ref::f64()).at(tap); }

// ---- shift: a window one step off ----
bool select_shift(const op::OpInputs& x, const TapMap& ref, const std::string& tap, Tap& out, std::string*) {
  out = ref.at(tap);
  const int64_t T = out.shape[0], G = out.shape[1], K = out.shape[2];
  const int64_t block = x.i("block"), lw = x.i("local_blocks"), pos0 = x.i("pos0");
  for (int64_t t = 0; t < T; ++t)
    for (int64_t g = 0; g < G; ++g) {
      std::vector<int64_t> ids = row_ids(out.data, t * G + g, K);
      const int64_t qb = (pos0 + t) / block, early = qb - lw - 1;
      ids.erase(std::remove(ids.begin(), ids.end(), qb), ids.end());
      if (early >= 0 && !contains(ids, early)) ids.push_back(early);
      set_row(out.data, t * G + g, K, ids);
    }
  return true;
}

bool compress_shift(const op::OpInputs&, const TapMap& ref, const std::string& tap, Tap& out, std::string* why) {
  out = ref.at(tap);
  const int64_t G = out.shape[0], N = out.shape[1], hd = out.shape[2];
  if (N < 2) {
    *why = fmt::format("{} window(s) per kv head: none to shift", N);
    return false;
  }
  for (int64_t g = 0; g < G; ++g)
    for (int64_t c = 0; c + 1 < N; ++c)
      std::copy_n(ref.at(tap).data.begin() + (g * N + c + 1) * hd, hd, out.data.begin() + (g * N + c) * hd);
  return true;
}

bool sparse_shift(const op::OpInputs& x, const TapMap&, const std::string& tap, Tap& out, std::string*) {
  op::OpInputs y = x;
  InputDataset& b = y.tensors.at("blocks");
  const int64_t rows = b.shape[0] * b.shape[1], K = b.shape[2];
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<int64_t> ids;
    for (int64_t id : row_ids(b.data, r, K))
      if (id >= 1 && !contains(ids, id - 1)) ids.push_back(id - 1);
    if (ids.empty()) ids.push_back(0);  // a query keeps at least one block to attend to
    set_row(b.data, r, K, ids);
  }
  out = rerun(y, tap);
  return true;
}

// ---- position: one position off ----
// The chunked form's off-by-one (docs/spec.md §3): at row j of a 64-row chunk the carried state S_c decays by
// e^(gamma j) instead of e^(gamma (j+1)), so o_j gains tau (e^(gamma j) - e^(gamma (j+1))) q_j S_c.
bool gla_position(const op::OpInputs& x, const TapMap& ref, const std::string& tap, Tap& out, std::string* why) {
  constexpr int64_t kChunk = 64;
  out = ref.at(tap);
  const int64_t T = x.dim("T"), H = x.dim("H"), hd = x.dim("hd");
  const ref::Mat q = op::mat(x.tensor("q")), k = op::mat(x.tensor("k")), v = op::mat(x.tensor("v"));
  const std::vector<double>& gamma = x.tensor("gamma").data;
  const double tau = x.f("tau");
  bool carried = false;
  for (int64_t h = 0; h < H; ++h) {
    ref::Mat S = ref::Mat::Zero(hd, hd), Sc;
    if (x.has("state")) S = Eigen::Map<const ref::Mat>(x.tensor("state").data.data() + h * hd * hd, hd, hd);
    for (int64_t t = 0; t < T; ++t) {
      const int64_t j = t % kChunk;
      if (j == 0) Sc = S;
      carried = carried || !Sc.isZero(0);
      const double coef = tau * (std::exp(gamma[size_t(h)] * double(j)) - std::exp(gamma[size_t(h)] * double(j + 1)));
      const Eigen::RowVectorXd d = coef * (q.block(t, h * hd, 1, hd) * Sc);
      for (int64_t c = 0; c < hd; ++c) out.data[size_t(t * H * hd + h * hd + c)] += d(c);
      S = std::exp(gamma[size_t(h)]) * S + k.block(t, h * hd, 1, hd).transpose() * v.block(t, h * hd, 1, hd);
    }
  }
  if (!carried) *why = "one 64-row chunk and no entering state: no carried state to decay";
  return carried;
}

bool rope_position(const op::OpInputs& x, const TapMap&, const std::string& tap, Tap& out, std::string*) {
  op::OpInputs y = x;
  y.numbers["pos0"] += 1;
  out = rerun(y, tap);
  return true;
}

bool dense_position(const op::OpInputs& x, const TapMap&, const std::string& tap, Tap& out, std::string* why) {
  if (x.i("pos0") < 1) {
    *why = "pos0 = 0: the first query has no key but its own";
    return false;
  }
  op::OpInputs y = x;
  y.numbers["pos0"] -= 1;
  out = rerun(y, tap);
  return true;
}

// ---- neighbour: one selected block replaced by its neighbour ----
// In one (query, kv head) row, a block chosen by score (not forced) becomes its neighbour, the first such change
// that is not a tie: a swap whose two blocks both lie inside the tie band of the row's boundary score is an answer
// the model allows, not a fault.
bool select_neighbour(const op::OpInputs& x, const TapMap& ref, const std::string& tap, Tap& out, std::string* why) {
  out = ref.at(tap);
  const Tap& sc = ref.at(tap.substr(0, tap.rfind('/') + 1) + "scores");
  const int64_t T = out.shape[0], G = out.shape[1], K = out.shape[2], NB = sc.shape[2];
  const int64_t block = x.i("block"), lw = x.i("local_blocks"), init = x.i("init_blocks"), pos0 = x.i("pos0");
  const double band = tolerance_row(tolerance_table(), "sparse/select/blocks").tie_band;
  for (int64_t t = 0; t < T; ++t)
    for (int64_t g = 0; g < G; ++g) {
      const int64_t row = t * G + g, qb = (pos0 + t) / block;
      const std::vector<int64_t> ids = row_ids(out.data, row, K);
      auto forced = [&](int64_t b) { return b < init || (b >= qb - lw && b <= qb); };
      auto score = [&](int64_t b) { return sc.data[size_t(row * NB + b)]; };
      double boundary = INFINITY;
      for (int64_t b : ids)
        if (std::isfinite(score(b))) boundary = std::min(boundary, score(b));
      auto tie = [&](int64_t b) { return std::fabs(score(b) - boundary) <= band * std::fabs(boundary); };
      for (int64_t b : ids) {
        if (forced(b)) continue;
        for (int64_t n : {b + 1, b - 1}) {
          if (n < 0 || n > qb || contains(ids, n) || forced(n) || (tie(b) && tie(n))) continue;
          std::vector<int64_t> changed = ids;
          std::replace(changed.begin(), changed.end(), b, n);
          set_row(out.data, row, K, changed);
          return true;
        }
      }
    }
  *why = "no block chosen by score has a neighbour outside the selection and the tie band";
  return false;
}

bool sparse_neighbour(const op::OpInputs& x, const TapMap&, const std::string& tap, Tap& out, std::string* why) {
  op::OpInputs y = x;
  InputDataset& b = y.tensors.at("blocks");
  const int64_t T = b.shape[0], G = b.shape[1], K = b.shape[2], block = x.i("block"), pos0 = x.i("pos0");
  for (int64_t t = 0; t < T; ++t)
    for (int64_t g = 0; g < G; ++g) {
      const int64_t row = t * G + g, own = (pos0 + t) / block;
      const std::vector<int64_t> ids = row_ids(b.data, row, K);
      for (int64_t id : ids) {
        if (id == own || id == 0) continue;  // the blocks the model always attends
        for (int64_t n : {id + 1, id - 1}) {
          if (n < 0 || n > own || contains(ids, n)) continue;
          std::vector<int64_t> changed = ids;
          std::replace(changed.begin(), changed.end(), id, n);
          set_row(b.data, row, K, changed);
          out = rerun(y, tap);
          return true;
        }
      }
    }
  *why = "no selected block besides the query's own and block 0 has a free neighbour";
  return false;
}

// ---- heads: the first two heads swapped ----
// The head axis of an output: a dim "H*hd" (head blocks of hd columns), or "H" or "G" (one index a head).
bool head_axis(const op::OutputSpec& o, size_t* axis) {
  for (size_t a = 0; a < o.dims.size(); ++a)
    if (o.dims[a] == "H*hd" || o.dims[a] == "H" || o.dims[a] == "G") {
      *axis = a;
      return true;
    }
  return false;
}

bool heads_swap(const op::OpInputs& x, const TapMap& ref, const std::string& tap, Tap& out, std::string* why) {
  const op::OutputSpec& o = *std::find_if(x.spec->outputs.begin(), x.spec->outputs.end(),
                                          [&](const op::OutputSpec& u) { return u.tap == tap; });
  size_t a = 0;
  head_axis(o, &a);
  out = ref.at(tap);
  const int64_t width = o.dims[a] == "H*hd" ? x.dim("hd") : 1, count = out.shape[a] / width;
  if (count < 2) {
    *why = fmt::format("{} = 1: one head", o.dims[a] == "G" ? "G" : "H");
    return false;
  }
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < a; ++i) outer *= out.shape[i];
  for (size_t i = a + 1; i < out.shape.size(); ++i) inner *= out.shape[i];
  for (int64_t u = 0; u < outer; ++u)
    for (int64_t w = 0; w < width; ++w)
      for (int64_t i = 0; i < inner; ++i)
        std::swap(out.data[size_t((u * out.shape[a] + w) * inner + i)],
                  out.data[size_t((u * out.shape[a] + width + w) * inner + i)]);
  return true;
}

// The fault sites by "op/output". Scale applies to every float output and heads wherever an output has a head axis;
// these three are where the op has a window, a position or a block set.
const std::map<std::string, Site>& sites(const std::string& fault) {
  static const std::map<std::string, std::map<std::string, Site>> all =
      {{"shift",
        {{"select_blocks/blocks",
          {"the forced local window one block early: each row's own block qb dropped, block qb - local_blocks - 1 "
           "taken in",
           select_shift}},
         {"compress_k/k1", {"each window c holds window c + 1 (windows one stride late)", compress_shift}},
         {"compress_k/k2", {"each window c holds window c + 1 (windows one stride late)", compress_shift}},
         {"sparse_attn/out",
          {"attention over every selected block one lower (b - 1): the window and the chosen blocks one block early",
           sparse_shift}}}},
       {"position",
        {{"gla/out",
          {"the carried state decayed by e^(gamma j) instead of e^(gamma (j+1)) at row j of each 64-row chunk",
           gla_position}},
         {"rope/q", {"rotated for position p + 1", rope_position}},
         {"dense_attn/out", {"keys j <= p - 1: each query without its own key", dense_position}}}},
       {"neighbour",
        {{"select_blocks/blocks",
          {"in one (query, kv head) row, a block chosen by score replaced by its neighbour (not a tie)",
           select_neighbour}},
         {"sparse_attn/out",
          {"in one (query, kv head) row, a selected block (not the query's own, not block 0) replaced by its "
           "neighbour",
           sparse_neighbour}}}}};
  static const std::map<std::string, Site> none;
  const auto it = all.find(fault);
  return it == all.end() ? none : it->second;
}

std::string site_key(const op::OpSpec& s, const op::OutputSpec& o) { return s.name + "/" + op::output_name(o); }

Tap scaled(const Tap& t, double by) {
  Tap r = t;
  for (double& v : r.data)
    if (std::isfinite(v)) v *= 1 + by;
  return r;
}

// The gate's verdict on `faulty` in place of the reference's `tap`, the rest as the reference has it; `verdict` gets
// how a passing output passed.
bool gate_catches(const TapMap& ref, const TapMap& peer, const std::string& tap, const Tap& faulty,
                  std::string* verdict = nullptr) {
  TapMap r, p, b;
  auto keep = [&](const std::string& n) { r[n] = ref.at(n), p[n] = peer.at(n), b[n] = ref.at(n); };
  keep(tap);
  const std::string scores = tap.substr(0, tap.rfind('/') + 1) + "scores";
  if (faulty.integer && ref.count(scores)) keep(scores);  // a selection's tie band reads the reference's scores
  b[tap] = faulty;
  for (const TapResult& row : compare_taps(r, &p, b).rows) {
    if (row.name != tap) continue;
    if (verdict && row.pass)
      *verdict = row.selection
                     ? fmt::format("passes: {} block(s) differ, all inside the tie band", row.selection->in_band)
                     : fmt::format("passes at {:.2f} of the allowance (rel-RMS), {:.2f} (max-err)", row.rel_rms.ratio,
                                   row.max_err.ratio);
    return !row.pass;
  }
  internal_fail("sensitivity: the comparison has no row for {}", tap);
}

// The smallest relative scale the gate catches, by bisection on a log scale over [1e-7, 1]; 0 when 100% passes.
double smallest_scale(const TapMap& ref, const TapMap& peer, const std::string& tap) {
  double lo = 1e-7, hi = 1.0;
  if (!gate_catches(ref, peer, tap, scaled(ref.at(tap), hi))) return 0;
  if (gate_catches(ref, peer, tap, scaled(ref.at(tap), lo))) return lo;
  for (int i = 0; i < 40 && hi / lo > 1.001; ++i) {
    const double mid = std::sqrt(lo * hi);
    (gate_catches(ref, peer, tap, scaled(ref.at(tap), mid)) ? hi : lo) = mid;
  }
  return hi;
}

FaultResult judge(const std::string& fault, const op::OpInputs& x, const TapMap& ref, const TapMap& peer,
                  const op::OutputSpec& o) {
  FaultResult f;
  f.fault = fault;
  const op::OpSpec& s = *x.spec;
  if (fault_meaning(fault, s, o).empty()) return f;
  const Tap& correct = ref.at(o.tap);
  if (std::none_of(correct.data.begin(), correct.data.end(), [](double v) { return std::isfinite(v) && v != 0; })) {
    f.outcome = FaultOutcome::NotOnCase;
    f.why = correct.data.empty() ? "the output is empty on this case" : "the output holds no finite value but 0";
    return f;
  }
  if (fault == "scale") {
    f.smallest = smallest_scale(ref, peer, o.tap);
    std::string verdict;
    f.outcome = gate_catches(ref, peer, o.tap, scaled(ref.at(o.tap), kNamedScale), &verdict) ? FaultOutcome::Caught
                                                                                             : FaultOutcome::Missed;
    if (f.outcome == FaultOutcome::Missed) f.why = "a 1% scale " + verdict;
    return f;
  }
  Tap faulty;
  std::string why;
  const MakeFault make = fault == "heads" ? MakeFault(heads_swap) : sites(fault).at(site_key(s, o)).make;
  if (!make(x, ref, o.tap, faulty, &why)) {
    f.outcome = FaultOutcome::NotOnCase, f.why = why;
    return f;
  }
  if (faulty.shape == ref.at(o.tap).shape && faulty.data == ref.at(o.tap).data) {
    f.outcome = FaultOutcome::NotOnCase, f.why = "the fault changes nothing on this case";
    return f;
  }
  std::string verdict;
  f.outcome = gate_catches(ref, peer, o.tap, faulty, &verdict) ? FaultOutcome::Caught : FaultOutcome::Missed;
  if (f.outcome == FaultOutcome::Missed) f.why = verdict;
  return f;
}

std::string cell(const FaultResult& f) {
  if (f.fault != "scale" || f.outcome != FaultOutcome::Caught) {
    if (f.fault == "scale" && f.outcome == FaultOutcome::Missed)
      return f.smallest > 0 ? fmt::format("MISSED({:.2g}%)", 100 * f.smallest) : "MISSED";
    return outcome_name(f.outcome);
  }
  return fmt::format("{:.2g}%", 100 * f.smallest);
}

}  // namespace

const std::vector<FaultDef>& fault_defs() {
  static const std::vector<FaultDef> d =
      {{"scale",
        "the output times (1 + s); the cell is the smallest s the gate catches (bisection), MISSED when 1% passes"},
       {"shift", "a window one step off"},
       {"position", "one position off"},
       {"heads", "the first two heads swapped (kv heads where the output is per kv head)"},
       {"neighbour", "one selected block replaced by its neighbour"}};
  return d;
}

std::string fault_meaning(const std::string& fault, const op::OpSpec& s, const op::OutputSpec& o) {
  if (fault == "scale") return o.dtype == op::DType::Float ? "every element times (1 + s)" : "";
  if (fault == "heads") {
    size_t a = 0;
    if (!head_axis(o, &a)) return "";
    return o.dims[a] == "H*hd" ? "the columns of heads 0 and 1 swapped"
                               : fmt::format("entries {} = 0 and {} = 1 swapped", o.dims[a], o.dims[a]);
  }
  const auto& m = sites(fault);
  const auto it = m.find(site_key(s, o));
  return it == m.end() ? "" : it->second.meaning;
}

const char* outcome_name(FaultOutcome o) {
  switch (o) {
    case FaultOutcome::NotApplicable: return "-";
    case FaultOutcome::NotOnCase: return "n/a";
    case FaultOutcome::Caught: return "caught";
    case FaultOutcome::Missed: return "MISSED";
  }
  return "";
}

bool SensitivityCase::missed() const {
  for (const OutputSensitivity& o : outputs)
    for (const FaultResult& f : o.faults)
      if (f.outcome == FaultOutcome::Missed) return true;
  return false;
}

SensitivityCase sensitivity_case(const op::OpSpec& s, const op::CaseSizes& c, const SweepOptions& o) {
  const auto t0 = Clock::now();
  SensitivityCase r;
  r.op = s.name;
  r.sizes = op::format_case(s, c);
  r.seed = o.seed;
  const op::OpInputs x = op::random_inputs(s, c, o.seed, o.drawn);
  const TapMap ref = run_op_reference(x, false), peer = run_op_reference(x, true);
  for (const op::OutputSpec& out : s.outputs) {
    OutputSensitivity os;
    os.output = out.tap;
    for (const FaultDef& f : fault_defs()) os.faults.push_back(judge(f.name, x, ref, peer, out));
    r.outputs.push_back(std::move(os));
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return r;
}

std::vector<SensitivityCase> run_sensitivity(const SweepOptions& o,
                                             const std::function<void(const SensitivityCase&)>& each) {
  std::vector<const op::OpSpec*> ops;
  if (o.ops.empty())
    for (const op::OpSpec& s : op::registry()) ops.push_back(&s);
  else
    for (const std::string& n : o.ops) ops.push_back(&op::find_op(n));
  std::vector<SensitivityCase> all;
  for (const op::OpSpec* s : ops)
    for (const op::CaseSizes& c : op::sweep_cases(*s)) {
      all.push_back(sensitivity_case(*s, c, o));
      if (each) each(all.back());
    }
  return all;
}

std::string sensitivity_header() {
  std::string h = fmt::format("{:<14} {:<7}", "op", "output");
  for (const FaultDef& f : fault_defs()) h += fmt::format(" {:<9}", f.name);
  return h + " case";
}

std::string format_sensitivity(const SensitivityCase& c) {
  std::string text;
  for (const OutputSensitivity& o : c.outputs) {
    std::string line = fmt::format("{:<14} {:<7}", c.op, o.output.substr(o.output.rfind('/') + 1));
    for (const FaultResult& f : o.faults) line += fmt::format(" {:<9}", cell(f));
    text += (text.empty() ? "" : "\n") + line + " " + c.sizes;
    for (const FaultResult& f : o.faults)
      if (f.outcome == FaultOutcome::Missed) text += fmt::format("\n      MISSED {}: {}", f.fault, f.why);
  }
  return text;
}

std::string sensitivity_legend(const std::vector<std::string>& ops) {
  std::string t = "faults (\"-\": no meaning for that output; \"n/a\": this case cannot show it, --json says why):\n";
  for (const FaultDef& f : fault_defs()) {
    t += fmt::format("  {:<9} {}\n", f.name, f.summary);
    if (f.name == "scale" || f.name == "heads") continue;
    for (const std::string& n : ops) {
      const op::OpSpec& s = op::find_op(n);
      for (const op::OutputSpec& o : s.outputs)
        if (const std::string m = fault_meaning(f.name, s, o); !m.empty())
          t += fmt::format("  {:<9}   {}: {}\n", "", site_key(s, o), m);
    }
  }
  return t;
}

nlohmann::json sensitivity_json(const SensitivityCase& c) {
  nlohmann::json j = {{"op", c.op}, {"sizes", c.sizes}, {"seed", c.seed}, {"seconds", c.seconds}};
  j["outputs"] = nlohmann::json::array();
  for (const OutputSensitivity& o : c.outputs) {
    nlohmann::json faults = nlohmann::json::object();
    for (const FaultResult& f : o.faults) {
      nlohmann::json e = {{"outcome", outcome_name(f.outcome)}};
      if (!f.why.empty()) e["why"] = f.why;
      if (f.fault == "scale" && f.outcome != FaultOutcome::NotApplicable) e["smallest_caught"] = f.smallest;
      faults[f.fault] = e;
    }
    j["outputs"].push_back({{"output", o.output}, {"faults", faults}});
  }
  j["missed"] = c.missed();
  return j;
}

}  // namespace salasim
