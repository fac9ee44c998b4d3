// `salasim op --sensitivity` (scenarios/op_sensitivity.hpp): each fault is defined where it means something and
// changes the output there, the gate catches every one on the sweep cases of the ops that have them, the smallest
// scale caught is the edge of what the gate lets through, and a fault the gate misses is reported, not hidden.
#include <nlohmann/json.hpp>

#include "scenarios/op_sensitivity.hpp"
#include "tests/support/catch.hpp"

using namespace salasim;

namespace {

const FaultResult& result(const SensitivityCase& c, const std::string& output, const std::string& fault) {
  for (const OutputSensitivity& o : c.outputs)
    if (o.output == output)
      for (const FaultResult& f : o.faults)
        if (f.fault == fault) return f;
  FAIL("no result for " << output << " " << fault);
  throw;
}

}  // namespace

TEST_CASE("sensitivity: each fault is defined where it has a meaning and says so, and nowhere else") {
  const op::OpSpec &gla = op::find_op("gla"), &sel = op::find_op("select_blocks"), &mlp = op::find_op("mlp");
  CHECK(!fault_meaning("position", gla, gla.outputs[0]).empty());
  CHECK(fault_meaning("position", gla, gla.outputs[1]).empty());  // the state has no chunk-row decay of its own
  CHECK(fault_meaning("shift", gla, gla.outputs[0]).empty());
  CHECK(!fault_meaning("heads", gla, gla.outputs[1]).empty());  // [H, hd, hd]
  CHECK(fault_meaning("scale", sel, sel.outputs[0]).empty());   // block ids are not scaled
  CHECK(!fault_meaning("neighbour", sel, sel.outputs[0]).empty());
  CHECK(!fault_meaning("scale", mlp, mlp.outputs[0]).empty());
  for (const char* f : {"shift", "position", "heads", "neighbour"})
    CHECK(fault_meaning(f, mlp, mlp.outputs[0]).empty());
  const std::string legend = sensitivity_legend({"gla", "select_blocks"});
  CHECK(legend.find("gla/out: the carried state decayed by e^(gamma j)") != std::string::npos);
  CHECK(legend.find("select_blocks/blocks: the forced local window one block early") != std::string::npos);
}

TEST_CASE("sensitivity: the gate catches every fault that applies, on every sweep case of the ops with them") {
  SweepOptions o;
  o.ops = {"gla", "compress_k", "select_blocks", "sparse_attn", "dense_attn", "rope"};
  int caught = 0;
  for (const SensitivityCase& c : run_sensitivity(o, nullptr)) {
    INFO(c.op << " " << c.sizes << "\n" << format_sensitivity(c));
    CHECK(!c.missed());
    for (const OutputSensitivity& out : c.outputs)
      for (const FaultResult& f : out.faults) {
        caught += f.outcome == FaultOutcome::Caught;
        if (f.fault == "scale" && f.outcome == FaultOutcome::Caught) {
          CHECK(f.smallest > 0);
          CHECK(f.smallest <= kNamedScale);
        }
      }
    if (c.op == "gla") CHECK(result(c, "/op/lightning/gla/out", "position").outcome == FaultOutcome::Caught);
  }
  CHECK(caught > 50);
}

TEST_CASE("sensitivity: faults a case cannot show are n/a with the reason, never caught or missed") {
  SweepOptions o;
  const op::OpSpec& gla = op::find_op("gla");
  // one chunk, no entering state: nothing is carried, so the carried state's decay cannot be off
  const SensitivityCase one = sensitivity_case(gla, op::parse_case(gla, "T=20,H=1,hd=16,state=0"), o);
  const FaultResult& pos = result(one, "/op/lightning/gla/out", "position");
  CHECK(pos.outcome == FaultOutcome::NotOnCase);
  CHECK(pos.why == "one 64-row chunk and no entering state: no carried state to decay");
  CHECK(result(one, "/op/lightning/gla/out", "heads").why == "H = 1: one head");
  CHECK(result(one, "/op/lightning/gla/out", "shift").outcome == FaultOutcome::NotApplicable);
  const nlohmann::json j = sensitivity_json(one);
  CHECK(j["outputs"][0]["faults"]["position"]["outcome"] == "n/a");
  CHECK(j["outputs"][0]["faults"]["shift"]["outcome"] == "-");
}

TEST_CASE("sensitivity: a fault the gate misses is reported on its line and in the JSON") {
  SensitivityCase c;
  c.op = "gla", c.sizes = "T=1,H=2,hd=128,state=1";
  FaultResult missed;
  missed.fault = "heads", missed.outcome = FaultOutcome::Missed, missed.why = "passes at 0.40 of the allowance";
  c.outputs = {{"/op/lightning/gla/out", {missed}}};
  CHECK(c.missed());
  CHECK(format_sensitivity(c).find("MISSED heads: passes at 0.40 of the allowance") != std::string::npos);
  CHECK(sensitivity_json(c)["missed"] == true);
}
