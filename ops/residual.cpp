// residual: h + scale * branch, in place (docs/spec.md §2 step 2), its one definition (ops/op.hpp).
#include <fmt/format.h>

#include <cmath>

#include "ops/op.hpp"
#include "ops/tensors.hpp"
#include "reference/ops.hpp"

namespace salasim::op {

Work cost::residual(double T, double D, bool fused_norm) { return {0, T * (fused_norm ? 8 : 6) * D, 0}; }

namespace {

TapMap reference(const OpInputs& x, const ref::Num& n) {
  ref::Mat h = mat(x.tensor("h"));
  ref::residual(h, mat(x.tensor("branch")), x.f("scale"), n);
  return {{"/op/residual/h", tap(h, {x.dim("T"), x.dim("D")})}};
}

}  // namespace

OpSpec residual_op() {
  OpSpec s;
  s.name = "residual";
  s.section = "§2 step 2";
  s.summary = "h + scale * branch";
  s.library = "ref::residual";
  s.reference_functions = {"residual"};
  s.inputs = {in("h", {"T", "D"}, "residual stream"), in("branch", {"T", "D"}, "mixer or MLP output")};
  s.attrs = {num("scale", "branch scale (scale_depth / sqrt(layers) in the model)", kResidualScale)};
  s.outputs = {out("/op/residual/h", {"T", "D"}, "h + scale * branch")};
  s.reference = reference;
  s.random = {{rows(8), width("D", 512, "hidden size")}, {"T=1,D=4096", "T=16,D=1000"}, [](Draw& d) {
                d.normal("h", {d["T"], d["D"]}, 4.0);  // the residual stream grows over the layers
                d.normal("branch", {d["T"], d["D"]}, 1.0);
                d.number("scale", 1.4 / std::sqrt(32.0));  // scale_depth / sqrt(layers) of the released config
              }};
  s.taps = {{"residual/mid",
             "bf16",
             TapGate::Float,
             "h + s*mixer rounded to bf16: carries the whole stack's error, as the peer's does",
             {"<prev>", "lightning/o_proj/out", "sparse/o_proj/out"}},
            {"residual/h",
             "bf16",
             TapGate::Float,
             "h + s*mlp at the layer's end: the running error of the stack, gated against the peer's",
             {"residual/mid", "mlp/out"}}};
  s.card = {"scaled residual add",
            [](const ModelConfig& c, int64_t) -> std::vector<EqStep> {
              return {{fmt::format("h = h + s * branch, s = scale_depth / sqrt(layers) = {} / sqrt({}) = {}",
                                   eq_num(c.scale_depth), c.num_hidden_layers, eq_num(c.residual_scale())),
                       fmt::format("h \\leftarrow h + \\tfrac{{{}}}{{\\sqrt{{{}}}}}\\, b", eq_num(c.scale_depth),
                                   c.num_hidden_layers)}};
            },
            "no parameters: the scale is a config constant",
            "gpu/residual.cu",
            {"residual"}};
  s.cost = [](const CaseSizes& c) { return cost::residual(double(c.at("T")), double(c.at("D"))); };
  return s;
}

}  // namespace salasim::op
