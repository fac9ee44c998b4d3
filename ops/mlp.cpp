// mlp: the SwiGLU activation silu(g) * u between the MLP's projections (docs/spec.md §2.1; the projections are
// linear), its one definition (ops/op.hpp).
#include <fmt/format.h>

#include "ops/op.hpp"
#include "ops/tensors.hpp"
#include "reference/ops.hpp"

namespace salasim::op {

Work cost::mlp(double T, double I) { return {0, T * 6 * I, T * I}; }

namespace {

TapMap reference(const OpInputs& x, const ref::Num& n) {
  return {{"/op/mlp/act", tap(ref::mlp_act(mat(x.tensor("g")), mat(x.tensor("u")), n), {x.dim("T"), x.dim("I")})}};
}

}  // namespace

OpSpec mlp_op() {
  OpSpec s;
  s.name = "mlp";
  s.section = "§2.1";
  s.summary = "act = silu(g) * u, the MLP's activation";
  s.library = "ref::mlp_act";
  s.reference_functions = {"mlp_act"};
  s.inputs = {in("g", {"T", "I"}, "gate projection"), in("u", {"T", "I"}, "up projection")};
  s.outputs = {out("/op/mlp/act", {"T", "I"}, "silu(g) * u")};
  s.reference = reference;
  s.random = {{rows(8), width("I", 512, "MLP width")}, {"T=1,I=16384", "T=16,I=1000"}, [](Draw& d) {
                d.normal("g", {d["T"], d["I"]}, 2.0);
                d.normal("u", {d["T"], d["I"]}, 2.0);
              }};
  s.taps = {{"mlp/act",
             "bf16",
             TapGate::Float,
             "silu(W_gate b) * (W_up b): two fp32-accumulated GEMMs, each rounded, then the product",
             {"post_norm/out"}}};
  s.card = {"SwiGLU activation between the MLP's projections",
            [](const ModelConfig& c, int64_t) -> std::vector<EqStep> {
              return {{fmt::format("m = silu(g) * u, silu(g) = g / (1 + e^-g), g, u of width {}", c.intermediate_size),
                       "m = \\operatorname{silu}(g)\\odot u,\\ \\operatorname{silu}(g) = g\\,\\sigma(g)"}};
            },
            "no parameters of its own: g, u and the down projection are linear",
            "gpu/mlp.cu",
            {"mlp_act"}};
  s.cost = [](const CaseSizes& c) { return cost::mlp(double(c.at("T")), double(c.at("I"))); };
  return s;
}

}  // namespace salasim::op
