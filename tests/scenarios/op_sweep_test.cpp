// `salasim op --sweep` and `--random` (scenarios/op_sweep.hpp): the peer agrees with the reference on every sweep
// case, a backend that errs by more than the allowance fails, refusals of the backend are skips, device errors are
// not swallowed.
#include <nlohmann/json.hpp>

#include "model/error.hpp"
#include "scenarios/op_backends.hpp"
#include "scenarios/op_sweep.hpp"
#include "tests/support/catch.hpp"

using namespace salasim;

namespace {

// A backend that returns the peer's outputs scaled by (1 + rel): what a kernel with a systematic error gives.
OpBackend scaled_peer(double rel) {
  return [rel](const op::OpInputs& x) {
    OpRun r;
    r.taps = run_op_reference(x, true);
    for (auto& [n, tap] : r.taps)
      if (!tap.integer)
        for (double& v : tap.data) v *= 1 + rel;
    return r;
  };
}

}  // namespace

TEST_CASE("op_sweep: every sweep case of every op passes on the peer at seeds 0 and 1") {
  for (uint64_t seed : {0, 1}) {
    SweepOptions o;
    o.seed = seed;
    int cases = 0;
    const std::vector<OpCaseResult> rs = run_op_sweep(o, [&](const OpCaseResult&) { ++cases; });
    CHECK(cases == int(rs.size()));
    CHECK(rs.size() >= 2 * op::registry().size());
    for (const OpCaseResult& r : rs) {
      INFO(r.op << " " << r.sizes << ": " << r.why);
      CHECK(r.verdict == CaseVerdict::Ok);
      CHECK(r.backend == "peer");
      CHECK(r.worst_ratio < 1);
      CHECK(!r.report.rows.empty());
    }
  }
}

TEST_CASE(
    "op_sweep: a backend 2% off fails the gate (the allowance at these sizes is about 1%), the peer's own outputs pass it") {
  SweepOptions o;
  o.backend = "test";
  for (const char* name : {"rmsnorm", "gla", "sparse_attn", "logits"}) {
    INFO(name);
    const op::OpSpec& s = op::find_op(name);
    const op::CaseSizes c = op::sweep_cases(s)[0];
    const OpCaseResult good = run_op_case(s, c, o, scaled_peer(0));
    CHECK(good.verdict == CaseVerdict::Ok);
    const OpCaseResult bad = run_op_case(s, c, o, scaled_peer(0.02));
    CHECK(bad.verdict == CaseVerdict::Fail);
    CHECK(bad.worst_ratio > 1);
    CHECK(bad.why.find("> allowed") != std::string::npos);
  }
}

TEST_CASE("op_sweep: the peer gate is the rel-RMS floor: a peer 1% off fails it, max-err is not gated") {
  const ToleranceTable t = peer_sweep_table();
  const op::OpSpec& s = op::find_op("gate");
  const op::OpInputs x = op::random_inputs(s, op::sweep_cases(s)[1], 0);
  const TapMap ref = run_op_reference(x, false);
  TapMap off = ref;
  for (auto& [n, tap] : off)
    for (double& v : tap.data) v *= 1.01;
  CHECK(!compare_taps(ref, nullptr, off, t).pass());
  // one element far off moves max-err, not rel-RMS: the peer gate lets it through, the harness's does not
  TapMap spike = ref;
  spike.begin()->second.data[3] += 0.05 * spike.begin()->second.data[3] + 0.05;
  CHECK(compare_taps(ref, nullptr, spike, t).pass());
  CHECK(!compare_taps(ref, nullptr, spike).pass());
}

TEST_CASE("op_sweep: a backend's skip and failure make the case's verdict with their reason, errors propagate") {
  SweepOptions o;
  o.backend = "test";
  const op::OpSpec& s = op::find_op("rope");
  const op::CaseSizes c = op::sweep_cases(s)[0];
  const OpBackend refusing = [](const op::OpInputs&) {
    OpRun r;
    r.skip = "kernels want hd = 128";
    return r;
  };
  const OpBackend failing = [](const op::OpInputs&) {
    OpRun r;
    r.failed = "the kernel returned an error";
    return r;
  };
  const OpBackend bad = [](const op::OpInputs&) -> OpRun { fail("no such program"); };
  const OpBackend broken = [](const op::OpInputs&) -> OpRun { throw DeviceError("launch failed"); };
  const OpBackend buggy = [](const op::OpInputs&) -> OpRun { internal_fail("a bug"); };
  const OpCaseResult r = run_op_case(s, c, o, refusing);
  CHECK(r.verdict == CaseVerdict::Skip);
  CHECK(r.why == "kernels want hd = 128");
  CHECK(case_json(r)["verdict"] == "SKIP");
  const OpCaseResult f = run_op_case(s, c, o, failing);
  CHECK(f.verdict == CaseVerdict::Fail);
  CHECK(format_case_line(f, false).find("the kernel returned an error") != std::string::npos);
  CHECK_THROWS_AS(run_op_case(s, c, o, bad), Error);
  CHECK_THROWS_AS(run_op_case(s, c, o, broken), DeviceError);
  CHECK_THROWS_AS(run_op_case(s, c, o, buggy), InternalError);
}

TEST_CASE("op_sweep: outputs a user's implementation leaves out are skipped with a line, the rest still gated") {
  const op::OpSpec& s = op::find_op("gla");
  const op::CaseSizes c = op::sweep_cases(s)[1];
  SweepOptions o;
  o.backend = "py:user_gla";  // a user's implementation: outputs it does not hand back are skipped
  auto only_out = [](double rel) {
    return [rel](const op::OpInputs& x) {
      OpRun r;
      Tap t = run_op_reference(x, true).at("/op/lightning/gla/out");
      for (double& v : t.data) v *= 1 + rel;
      r.taps["/op/lightning/gla/out"] = t;
      return r;
    };
  };
  const OpCaseResult good = run_op_case(s, c, o, only_out(0));
  CHECK(good.verdict == CaseVerdict::Ok);
  CHECK(good.skipped_outputs == std::vector<std::string>{"/op/lightning/gla/state"});
  CHECK(good.report.rows.size() == 1);
  CHECK(format_case_line(good, false)
            .find("skipped output /op/lightning/gla/state: the implementation does not "
                  "produce it") != std::string::npos);
  CHECK(case_json(good)["skipped_outputs"][0] == "/op/lightning/gla/state");
  CHECK(run_op_case(s, c, o, only_out(0.02)).verdict == CaseVerdict::Fail);
  // producing nothing at all is a failure, not a pass with every output skipped
  const OpCaseResult none = run_op_case(s, c, o, [](const op::OpInputs&) { return OpRun{}; });
  CHECK(none.verdict == CaseVerdict::Fail);
  CHECK(none.why == "the implementation produced none of gla's outputs");
  // the peer and the CUDA path are no user's implementation: a missing output fails there
  o.backend = "test";
  CHECK(run_op_case(s, c, o, only_out(0)).verdict == CaseVerdict::Fail);
}

TEST_CASE("op_sweep: a user's implementation that ran on no case checked nothing: exit 2, not a pass") {
  SweepOptions o;
  o.backend = "exec:true";
  OpCaseResult skipped;
  skipped.op = "gla", skipped.sizes = "T=1", skipped.verdict = CaseVerdict::Skip, skipped.why = "not mine";
  CHECK_THROWS_AS(require_some_case_ran({skipped, skipped}, o), Error);
  OpCaseResult ok = skipped;
  ok.verdict = CaseVerdict::Ok;
  CHECK_NOTHROW(require_some_case_ran({skipped, ok}, o));
  o.backend = "gpu";
  CHECK_NOTHROW(require_some_case_ran({skipped}, o));
}

TEST_CASE("op_sweep: --perf times every backend, the JSON holds the verdict, the taps and the times") {
  SweepOptions o;
  o.perf = true;
  o.rounds = 3;
  o.ops = {"mlp"};
  const std::vector<OpCaseResult> rs = run_op_sweep(o, nullptr);
  REQUIRE(!rs.empty());
  for (const OpCaseResult& r : rs) {
    CHECK(r.ref_ms > 0);
    CHECK(r.peer_ms > 0);
    const nlohmann::json j = case_json(r);
    CHECK(j["verdict"] == "OK");
    CHECK(j["op"] == "mlp");
    CHECK(j["ms"]["reference"].get<double>() > 0);
    CHECK(j["taps"].size() == 1);
    CHECK(format_case_line(r, true).find("reference ") != std::string::npos);
  }
}
