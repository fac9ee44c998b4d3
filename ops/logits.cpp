// logits: W_lm (h / divisor) of the last position after the final norm (docs/spec.md §2 step 4), its one definition
// (ops/op.hpp).
#include <fmt/format.h>

#include "ops/op.hpp"
#include "ops/tensors.hpp"
#include "reference/ops.hpp"

namespace salasim::op {

Work cost::logits(double rows, double V, double D, double weight_bytes) {
  return cost::linear(rows, V * D, V + D, weight_bytes);
}

namespace {

TapMap reference(const OpInputs& x, const ref::Num& n) {
  return {{"/op/final/logits",
           tap(ref::logits(mat(x.tensor("h")), mat(x.tensor("w")), x.f("divisor"), n), {x.dim("T"), x.dim("V")})}};
}

std::vector<EqStep> equation(const ModelConfig& c, int64_t) {
  return {{fmt::format("logits = W_lm (h / {}), {} = hidden_size / dim_model_base = {} / {}", eq_num(c.logit_divisor()),
                       eq_num(c.logit_divisor()), c.hidden_size, c.dim_model_base),
           fmt::format("\\mathrm{{logits}} = W_{{\\mathrm{{lm}}}}\\,(h/{})", eq_num(c.logit_divisor()))}};
}

}  // namespace

OpSpec logits_op() {
  OpSpec s;
  s.name = "logits";
  s.section = "§2 step 4";
  s.summary = "logits = W (h / divisor)";
  s.library = "ref::logits";
  s.reference_functions = {"logits"};
  s.inputs = {in("h", {"T", "D"}, "final-normed rows"), in("w", {"V", "D"}, "lm_head weight")};
  s.attrs = {num("divisor", "hidden_size / dim_model_base (16 in the model)", kLogitDivisor)};
  s.outputs = {out("/op/final/logits", {"T", "V"}, "logits")};
  s.reference = reference;
  s.random = {{rows(2), width("D", 256, "hidden size"), width("V", 1000, "vocabulary")},
              {"T=1,D=4096,V=2000", "T=3,D=256,V=5000"},
              [](Draw& d) {
                d.normal("h", {d["T"], d["D"]}, 1.0);  // after the final norm
                d.normal("w", {d["V"], d["D"]}, 0.05);
                d.number("divisor", 16.0);  // hidden_size / dim_model_base of the released config
              }};
  s.taps = {{"final/logits",
             "bf16",
             TapGate::Float,
             "W_lm (h/16) rounded to bf16; the max-err gate matters: one wrong logit can move the argmax",
             {"final/norm"}}};
  // On the GPU the lm_head is the runner's GEMM (GEMV in decode) with 1 / divisor as its alpha.
  s.card = {"the output projection of the last position", equation, "", "gpu/runner.cpp", {"forward", "logits"}};
  s.cost = [](const CaseSizes& c) {
    const double V = double(c.at("V")), D = double(c.at("D"));
    return cost::logits(double(c.at("T")), V, D, 2 * V * D);
  };
  return s;
}

}  // namespace salasim::op
