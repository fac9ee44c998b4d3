// gla: simple gated linear attention with a constant per-head decay, inclusive of the current token (docs/spec.md §3
// step 6), its one definition (ops/op.hpp).
#include <fmt/format.h>

#include <cmath>
#include <numeric>

#include "model/error.hpp"
#include "ops/op.hpp"
#include "ops/tensors.hpp"
#include "reference/ops.hpp"

namespace salasim::op {

Work cost::gla(int64_t T, int64_t H, int64_t hd) {
  constexpr int64_t kChunk = 64;  // fla's chunk_simple_gla; fla's per-chunk states are left to the efficiency
  const double per_token_head = T >= kChunk ? 4.0 * kChunk * hd + 4.0 * hd * hd : 4.0 * hd * hd;
  return {double(T) * H * per_token_head, double(T) * 4 * H * hd * 2 + double(H) * hd * hd * 4 * 2, double(T) * H};
}

namespace {

// gamma is a natural-log decay per token, < 0 as --help says: at 0 the state never decays, and above it every
// step multiplies the state by exp(gamma) > 1, so the output grows without bound (1e30 at a few hundred rows).
void check_decays(OpInputs& x) {
  const InputDataset& g = x.tensor("gamma");
  for (size_t h = 0; h < g.data.size(); ++h)
    if (!(g.data[h] < 0))
      fail(
          "{}: dataset 'gamma': element [{}] is {}; expected a natural-log decay < 0 per head and token (the state "
          "is multiplied by exp(gamma) < 1 each row)",
          x.file, h, g.data[h]);
}

TapMap reference(const OpInputs& x, const ref::Num& n) {
  const int64_t T = x.dim("T"), H = x.dim("H"), hd = x.dim("hd");
  const InputDataset& g = x.tensor("gamma");
  const std::vector<double> gamma(g.data.begin(), g.data.end());
  std::vector<ref::Mat> S(size_t(H), ref::Mat::Zero(hd, hd));
  if (x.has("state")) S = heads(x.tensor("state"));
  const ref::Mat q = mat(x.tensor("q")), k = mat(x.tensor("k")), v = mat(x.tensor("v"));
  const std::string& form = x.choice("form");
  const bool recurrent = form == "recurrent" || (form == "auto" && T < 64);
  const ref::Mat o = recurrent ? ref::gla_recurrent(q, k, v, gamma, x.f("tau"), S, n)
                               : ref::gla_chunked(q, k, v, gamma, x.f("tau"), S, n);
  return {{"/op/lightning/gla/out", tap(o, {T, H * hd})}, {"/op/lightning/gla/state", stacked(S, {H, hd, hd})}};
}

// The exponent -num (of) / den in its simplest form: "-(h+1)/4" for 8/32, "-2(h+1)" for 8/4.
std::string exponent(int64_t num, int64_t den, const std::string& of) {
  const int64_t g = std::gcd(num, den);
  num /= g, den /= g;
  const std::string n = num == 1 ? "(" + of + ")" : fmt::format("{}({})", num, of);
  return den == 1 ? "-" + n : fmt::format("-{}/{}", n, den);
}

// The ALiBi slopes of n heads as the config's decays use them (model/config.hpp alibi_slopes): for a power of two,
// slope_h = 2^(-8(h+1)/n); otherwise the first p heads (p the largest power of two below n) take the slopes of p
// heads and the rest every other slope of 2p heads, 2^(-4(2(h-p)+1)/p).
EqStep decay_formula(int n) {
  int64_t p = 1;
  while (p * 2 <= n) p *= 2;
  if (p == n)
    return {fmt::format("gamma_h = -2^({})", exponent(8, n, "h+1")),
            fmt::format("\\gamma_h = -2^{{{}}}", exponent(8, n, "h+1"))};
  return {fmt::format("gamma_h = -2^({}) for h < {}, -2^({}) for h >= {}", exponent(8, p, "h+1"), p,
                      exponent(4, p, fmt::format("2(h-{})+1", p)), p),
          fmt::format("\\gamma_h = \\begin{{cases}} -2^{{{}}} & h < {} \\\\ -2^{{{}}} & h \\ge {} \\end{{cases}}",
                      exponent(8, p, "h+1"), p, exponent(4, p, fmt::format("2(h-{})+1", p)), p)};
}

std::vector<EqStep> equation(const ModelConfig& c, int64_t) {
  const std::vector<double> g = c.lightning_decay();
  const int d = c.lightning_head_dim;
  const EqStep decay = decay_formula(c.lightning_nh);
  return {{fmt::format("lambda_h = exp(gamma_h), {} (ALiBi slopes of {} heads): lambda from {:.4f} (h = 0) to {:.4f} "
                       "(h = {})",
                       decay.text, c.lightning_nh, std::exp(g.front()), std::exp(g.back()), c.lightning_nh - 1),
           "\\lambda_h = e^{\\gamma_h},\\ " + decay.latex},
          {fmt::format("S_t = lambda_h S_(t-1) + k_t^T v_t   (S: [{}, {}] per head, fp32)", d, d),
           "S_t = \\lambda_h S_{t-1} + k_t^{\\mathsf T} v_t"},
          {fmt::format("o_t = tau q_t S_t, tau = 1/sqrt({}) = {} (inclusive of token t)", d, eq_num(c.lightning_tau())),
           fmt::format("o_t = \\tau\\, q_t S_t,\\ \\tau = 1/\\sqrt{{{}}}", d)},
          {"chunked (C = 64, calls of >= 64 tokens): o_j = tau [e^(g_j) q_j S_c + sum_(i<=j) e^(g_j-g_i) (q_j.k_i) "
           "v_i], g_j = gamma (j+1); equal to the recurrence",
           "o_j = \\tau\\Big[e^{g_j} q_j S_c + \\sum_{i\\le j} e^{g_j-g_i}(q_j\\cdot k_i)\\, v_i\\Big],\\ g_j = "
           "\\gamma(j+1)"}};
}

void draw(Draw& d) {
  const int64_t T = d["T"], H = d["H"], hd = d["hd"];
  d.normal("q", {T, H * hd}, 1.0);  // q, k after the per-head norm and RoPE: unit RMS
  d.normal("k", {T, H * hd}, 1.0);
  d.normal("v", {T, H * hd}, 1.0);
  // decays from 1e-3 (a head that remembers ~1000 tokens) to 0.7 per token, log-uniform
  for (double& v : d.tensor("gamma", {H})) v = -std::exp(std::log(1e-3) + d.uniform() * std::log(700.0));
  if (d["state"]) d.normal("state", {H, hd, hd}, 1.0);
  d.number("tau", 1 / std::sqrt(double(hd)));
  d.text("form", "auto");
}

}  // namespace

OpSpec gla_op() {
  OpSpec s;
  s.name = "gla";
  s.section = "§3 step 6";
  s.summary = "simple GLA, constant per-head decay, inclusive of the current token";
  s.library = "ref::gla_chunked (C = 64) / ref::gla_recurrent";
  s.reference_functions = {"gla_recurrent", "gla_chunked", "gla_closed_form"};
  s.inputs = {in("q", {"T", "H*hd"}, "queries (after RoPE)"), in("k", {"T", "H*hd"}, "keys (after RoPE)"),
              in("v", {"T", "H*hd"}, "values"), in("gamma", {"H"}, "natural-log decay per head and token (< 0)"),
              in("state", {"H", "hd", "hd"}, "entering state per head, key dim x value dim (absent: zeros)")};
  s.inputs[3].fp32 = s.inputs[4].fp32 = true;  // the decays and the state are fp32 on the GPU
  s.inputs[4].optional = true;
  s.attrs = {num("tau", "output scale (head_dim^-0.5 in the model)", kHeadScale),
             choice("form", "auto: recurrent below 64 rows, else chunked (the model's and HF's dispatch)",
                    {"auto", "chunked", "recurrent"})};
  s.outputs = {out("/op/lightning/gla/out", {"T", "H*hd"}, "o before o_norm"),
               out("/op/lightning/gla/state", {"H", "hd", "hd"}, "state after the last row")};
  s.outputs[1].fp32 = true;
  s.notes = {"the two forms are equal in exact arithmetic; the GPU keeps the state in fp32 (the peer rounds it there)"};
  s.check = check_decays;
  s.reference = reference;
  s.random = {{rows(100), key("H", 2, 1, 4096, "heads"), head_dim(),
               key("state", 0, 0, 1, "1: an entering state (else zeros)")},
              {"T=1,H=16,hd=128,state=1", "T=100,H=2,hd=128,state=0", "T=300,H=1,hd=128,state=1",
               "T=70,H=2,hd=64,state=0"},
              draw};
  s.taps = {{"lightning/gla/out",
             "fp32",
             TapGate::Float,
             "GLA output in fp32 from bf16 q/k/v: the inputs' bf16 error dominates",
             {"lightning/qk_rope/q", "lightning/qk_rope/k", "lightning/proj/v"}},
            {"lightning/gla/state",
             "fp32",
             TapGate::Float,
             "fp32 128x128 state per head, a decayed sum over every token of bf16 k, v",
             {"lightning/qk_rope/k", "lightning/proj/v"}}};
  s.card = {"simple gated linear attention: a decayed outer-product state per head",
            equation,
            "no parameters: the decay is fixed by the config (lightning_nh); the state is per request, not in the "
            "checkpoint",
            "gpu/gla.cu",
            {"gla_chunked", "gla_recurrent"}};
  s.cost = [](const CaseSizes& c) { return cost::gla(c.at("T"), c.at("H"), c.at("hd")); };
  return s;
}

}  // namespace salasim::op
