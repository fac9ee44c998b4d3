// gate: y = x * sigmoid(z), Lightning's z gate (docs/spec.md §3 step 8) and the sparse o_gate (§4 step 3), its one
// definition (ops/op.hpp).
#include "ops/op.hpp"
#include "ops/tensors.hpp"
#include "reference/ops.hpp"

namespace salasim::op {

Work cost::gate(double T, double n) { return {0, T * 6 * n, T * n}; }

namespace {

TapMap reference(const OpInputs& x, const ref::Num& n) {
  return {
      {"/op/lightning/gate/out", tap(ref::gate(mat(x.tensor("x")), mat(x.tensor("z")), n), {x.dim("T"), x.dim("n")})}};
}

}  // namespace

OpSpec gate_op() {
  OpSpec s;
  s.name = "gate";
  s.section = "§3 step 8, §4 step 3";
  s.summary = "y = x * sigmoid(z), Lightning's z gate and the sparse o_gate";
  s.library = "ref::gate";
  s.reference_functions = {"gate"};
  s.inputs = {in("x", {"T", "n"}, "gated rows"), in("z", {"T", "n"}, "gate, before the sigmoid")};
  s.outputs = {out("/op/lightning/gate/out", {"T", "n"}, "x * sigmoid(z)")};
  s.reference = reference;
  s.random = {{rows(8), width("n", 512, "row width")}, {"T=1,n=4096", "T=16,n=1000"}, [](Draw& d) {
                d.normal("x", {d["T"], d["n"]}, 2.0);
                d.normal("z", {d["T"], d["n"]}, 2.0);
              }};
  s.taps = {{"lightning/gate/out",
             "bf16",
             TapGate::Float,
             "o_norm(o) * sigmoid(z), rounded to bf16",
             {"lightning/o_norm/out", "lightning/proj/z"}},
            {"sparse/gate/out",
             "bf16",
             TapGate::Float,
             "attn * sigmoid(g), rounded to bf16",
             {"sparse/attn/out", "sparse/proj/g"}}};
  s.card = {"sigmoid output gate: Lightning's z gate and the sparse o_gate",
            [](const ModelConfig&, int64_t) -> std::vector<EqStep> {
              return {{"y = x * sigmoid(z), sigmoid(z) = 1 / (1 + e^-z)", "y = x \\odot \\sigma(z)"}};
            },
            "no parameters of its own: z comes from a projection (see linear)",
            "gpu/gate.cu",
            {"gate"}};
  s.cost = [](const CaseSizes& c) { return cost::gate(double(c.at("T")), double(c.at("n"))); };
  return s;
}

}  // namespace salasim::op
