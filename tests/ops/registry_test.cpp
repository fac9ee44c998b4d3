// The op registry (ops/op.hpp): every definition is complete (its reference functions exist, its outputs are tap
// kinds with tolerance rows, its generator, cost and card are there), every tap kind the model records is declared
// by exactly one op, and every list of ops (`salasim op`, `salasim explain`, the forward flow, the latency model)
// names the registry's ops and no others.
#include <cmath>
#include <map>
#include <set>

#include "compare/tolerance.hpp"
#include "model/config.hpp"
#include "model/tap_select.hpp"
#include "ops/op.hpp"
#include "reports/explain.hpp"
#include "reports/forward_flow.hpp"
#include "reports/op_costs.hpp"
#include "reports/source_lines.hpp"
#include "tests/support/catch.hpp"
#include "tests/support/errors.hpp"
#include "tests/support/paths.hpp"

using namespace salasim;

namespace {

std::vector<std::string> registry_names() {
  std::vector<std::string> n;
  for (const op::OpSpec& s : op::registry()) n.push_back(s.name);
  return n;
}

// Every tap kind a run records on `c`: a dense prefill, a sparse one and a decode step, scores included.
std::set<std::string> recorded_kinds(const ModelConfig& c) {
  std::set<std::string> kinds;
  for (int64_t prompt : {int64_t(100), int64_t(c.sparse.dense_len) + 100})
    for (const TapSpec& t : tap_catalog(c, prompt, 1, true)) kinds.insert(tap_kind(t.name));
  return kinds;
}

}  // namespace

TEST_CASE("registry: every op's definition is complete", "[registry]") {
  const ModelConfig c = load_config(test::real_config());
  for (const op::OpSpec& s : op::registry()) {
    INFO(s.name);
    CHECK(!s.section.empty());
    CHECK(!s.summary.empty());
    CHECK(!s.library.empty());
    // its reference functions: declared in reference/ops.hpp, defined in reference/<name>.cpp
    REQUIRE(!s.reference_functions.empty());
    for (const std::string& f : s.reference_functions) {
      INFO(f);
      CHECK(reports::find_declaration("reference/ops.hpp", f).found());
      CHECK(!reports::find_definitions("reference/" + s.name + ".cpp", f).empty());
    }
    // `salasim op`: inputs and outputs, each output a declared tap kind (so the tolerance table gates it)
    CHECK(!s.inputs.empty());
    REQUIRE(!s.outputs.empty());
    for (const op::OutputSpec& o : s.outputs) {
      INFO(o.tap);
      REQUIRE(o.tap.rfind("/op/", 0) == 0);
      CHECK(op::find_tap(o.tap.substr(4)) != nullptr);
    }
    CHECK(s.reference != nullptr);
    // generated inputs and the sweep's cases, and the cost of each case
    CHECK(!s.random.keys.empty());
    CHECK(s.random.sweep.size() >= 2);
    CHECK(s.random.make != nullptr);
    REQUIRE(s.cost != nullptr);
    for (const op::CaseSizes& k : op::sweep_cases(s)) {
      const op::Work w = s.cost(k);
      INFO(op::format_case(s, k) << ": " << w.flops << " FLOP, " << w.bytes << " bytes, " << w.exps << " exp");
      CHECK(w.bytes > 0);
      CHECK((std::isfinite(w.flops) && w.flops >= 0 && std::isfinite(w.exps) && w.exps >= 0));
    }
    // the explain card: an equation with the config's numbers, the GPU code it names
    CHECK(!s.card.title.empty());
    REQUIRE(s.card.equation != nullptr);
    CHECK(!s.card.equation(c, 65536).empty());
    REQUIRE(!reports::source_file(s.card.gpu_file).empty());
    for (const std::string& f : s.card.gpu_functions) {
      INFO(s.card.gpu_file << ": " << f);
      CHECK(!reports::find_definitions(s.card.gpu_file, f).empty());
    }
    // its tap kinds: a tolerance row each, and failure-dump inputs that are kinds some op declares
    for (const op::TapDef& t : s.taps) {
      INFO(t.kind);
      CHECK(tolerance_row(tolerance_table(), t.kind).reason == t.reason);
      CHECK(!t.reason.empty());
      for (const std::string& i : t.inputs) CHECK((i == "<prev>" || i == "<last>" || op::find_tap(i) != nullptr));
    }
  }
}

TEST_CASE("registry: every tap kind the model records is declared by exactly one op, and has a row", "[registry]") {
  std::map<std::string, int> declared;
  for (const op::OpSpec& s : op::registry())
    for (const op::TapDef& t : s.taps) ++declared[t.kind];
  std::set<std::string> kinds;
  for (const auto& [kind, n] : declared) {
    INFO(kind);
    CHECK(n == 1);
    kinds.insert(kind);
  }
  CHECK(kinds == recorded_kinds(load_config(test::real_config())));
  CHECK(tolerance_table().size() == declared.size());
  // a kind no op declares has no row, and says where rows come from
  CHECK(test::error_of([] {
          tolerance_row(tolerance_table(), "lightning/nothing/out");
        }).find("compare/tolerance.cpp") != std::string::npos);
}

TEST_CASE("registry: salasim op, explain, the forward flow and the latency model name the registry's ops",
          "[registry]") {
  const std::vector<std::string> ops = registry_names();
  REQUIRE(ops.size() == 13);
  // `salasim explain` lists the ops in the registry's order, then the composite cards
  std::vector<std::string> cards = reports::explain_names();
  cards.resize(ops.size());
  CHECK(cards == ops);
  // `salasim op NAME` finds each, and nothing else
  for (const std::string& n : ops) CHECK(op::find_op(n).name == n);
  CHECK(test::error_of([] { op::find_op("mlp_act"); }).find("known: embed, linear, rmsnorm") != std::string::npos);
  // the forward flow's steps are the registry's ops (or bookkeeping) and record declared kinds
  std::set<std::string> used;
  for (const reports::FlowStep& s : reports::forward_flow(load_config(test::real_config()))) {
    INFO(s.label);
    if (!s.op.empty()) CHECK(op::find_op(s.op).name == s.op);
    used.insert(s.op);
    for (const std::string& t : s.taps) CHECK(op::find_tap(t) != nullptr);
  }
  used.erase("");
  CHECK(used == std::set<std::string>(ops.begin(), ops.end()));
  // each latency-model entry is an op's NAME or NAME.site (or the elementwise bucket), each term an op
  const reports::Model m = reports::load_model(test::real_config());
  for (int64_t end : {int64_t(4096), int64_t(65536)})
    for (const reports::OpCost& o : reports::call_costs(m, reports::WeightFormat::Bf16, end - 1, end, true)) {
      const std::string e = o.op;
      INFO(e);
      if (e == "other.elementwise") continue;
      CHECK_NOTHROW(op::find_op(e.substr(0, e.find('.'))));
    }
  for (const reports::ElementwiseTerm& t : reports::sala_elementwise_terms(m.sala)) CHECK_NOTHROW(op::find_op(t.op));
}

TEST_CASE("registry: an op's cost through its generator's sizes is its cost formula", "[registry]") {
  const op::OpSpec& gla = op::find_op("gla");
  const op::Work a = gla.cost(op::parse_case(gla, "T=100,H=2,hd=128")), b = op::cost::gla(100, 2, 128);
  CHECK(a.flops == b.flops);
  CHECK(a.bytes == b.bytes);
  CHECK(a.exps == b.exps);
  const op::OpSpec& sel = op::find_op("select_blocks");
  const op::Work s = sel.cost(op::parse_case(sel, "T=16,G=2,H=32,hd=128,pos0=8000"));
  CHECK(s.flops == op::cost::select_blocks(8000, 8016, 32, 2, 128, 32, 16, 64).flops);
}
