// rmsnorm: x / sqrt(mean(x^2) + eps) * w per row, or per head with one shared weight (docs/spec.md §2.1), its one
// definition (ops/op.hpp).
#include <fmt/format.h>

#include "ops/op.hpp"
#include "ops/tensors.hpp"
#include "reference/ops.hpp"

namespace salasim::op {

Work cost::rmsnorm(double T, double n) { return {0, T * 4 * n, 0}; }

namespace {

TapMap reference(const OpInputs& x, const ref::Num& n) {
  const ref::Mat w = mat(x.tensor("w"));
  const ref::Mat y = ref::rmsnorm(mat(x.tensor("x")), w.row(0).transpose(), x.f("eps"), n);
  return {{"/op/input_norm/out", tap(y, {x.dim("T"), x.dim("n")})}};
}

std::vector<EqStep> equation(const ModelConfig& c, int64_t) {
  return {{fmt::format("r_t = sqrt(mean_j x_(t,j)^2 + eps), eps = {}", c.rms_norm_eps),
           fmt::format("r_t = \\sqrt{{\\tfrac{{1}}{{n}}\\textstyle\\sum_{{j}} x_{{t,j}}^2 + \\varepsilon}},\\ "
                       "\\varepsilon = {}",
                       c.rms_norm_eps)},
          {"y_(t,j) = x_(t,j) / r_t * w_j", "y_{t,j} = \\frac{x_{t,j}}{r_t}\\, w_j"},
          {fmt::format("per head (rmsnorm_heads): the same over each head's {} dims, w shared by the heads",
                       c.lightning_head_dim),
           fmt::format("y_{{t,h,j}} = \\frac{{x_{{t,h,j}}}}{{r_{{t,h}}}}\\, w_j,\\ j < {}", c.lightning_head_dim)}};
}

}  // namespace

OpSpec rmsnorm_op() {
  OpSpec s;
  s.name = "rmsnorm";
  s.section = "§2.1";
  s.summary = "y = x / sqrt(mean(x^2) + eps) * w, per row";
  s.library = "ref::rmsnorm";
  s.reference_functions = {"rmsnorm", "rmsnorm_heads"};
  s.inputs = {in("x", {"T", "n"}, "rows to normalise"), in("w", {"n"}, "norm weight")};
  s.attrs = {num("eps", "added to the mean of squares", kRmsNormEps)};
  s.outputs = {out("/op/input_norm/out", {"T", "n"}, "normalised rows")};
  s.reference = reference;
  s.random = {{rows(4), width("n", 256, "row width")}, {"T=1,n=4096", "T=16,n=128", "T=5,n=1000"}, [](Draw& d) {
                d.normal("x", {d["T"], d["n"]}, 2.0);
                d.normal("w", {d["n"]}, 0.1, 1.0);  // norm weights near 1
                d.number("eps", 1e-6);
              }};
  s.taps = {
      {"input_norm/out",
       "bf16",
       TapGate::Float,
       "RMSNorm: fp32 mean of squares, x*rsqrt*w rounded once to bf16 (the GPU kernel and the peer alike)",
       {"<prev>"}},
      {"post_norm/out",
       "bf16",
       TapGate::Float,
       "RMSNorm as input_norm, after the mixer's residual add",
       {"residual/mid"}},
      {"lightning/o_norm/out",
       "bf16",
       TapGate::Float,
       "GLA output cast to bf16, RMSNorm over all heads' features jointly",
       {"lightning/gla/out"}},
      {"final/norm", "bf16", TapGate::Float, "final RMSNorm of the last residual", {"<last>"}},
  };
  s.card = {"RMSNorm over a row, or over each head's dims with one shared weight",
            equation,
            "",
            "gpu/rmsnorm.cu",
            {"rmsnorm"}};
  s.cost = [](const CaseSizes& c) { return cost::rmsnorm(double(c.at("T")), double(c.at("n"))); };
  return s;
}

}  // namespace salasim::op
