// The op cards' equations (sala-spec §2-§4), written with the config's numbers.
#include "reports/op_catalog.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "model/error.hpp"
#include "model/memory.hpp"
#include "reports/op_costs.hpp"

namespace salasim::reports {

namespace {

std::string num(double v) { return fmt::format("{:.10g}", v); }

OpInfo embed(const ModelConfig& c) {
  return {"embed", "token embedding, scaled",
          {{fmt::format("h_t = E[x_t] * {}   (E: [{}, {}], scale_emb = {})", num(c.scale_emb), c.vocab_size, c.hidden_size,
                        num(c.scale_emb)),
            fmt::format("h_t = E_{{x_t}} \\cdot {}", num(c.scale_emb))}},
          {}, "gpu/embed.cu", {"embed"}, {}, ""};
}

OpInfo linear(const ModelConfig&) {
  return {"linear", "y = x W^T: every projection of the model (no biases)",
          {{"y_t = W x_t   (W: [out, in] as stored; fp32 accumulation on the GPU, bf16 out)", "y_t = W x_t"}},
          {"gemm.lightning_mixer", "gemm.sparse_mixer", "gemm.mlp"}, "gpu/linear.cpp", {"linear"}, {}, ""};
}

OpInfo rmsnorm(const ModelConfig& c) {
  return {"rmsnorm", "RMSNorm over a row, or over each head's dims with one shared weight",
          {{fmt::format("r_t = sqrt(mean_j x_(t,j)^2 + eps), eps = {}", c.rms_norm_eps),
            fmt::format("r_t = \\sqrt{{\\tfrac{{1}}{{n}}\\textstyle\\sum_{{j}} x_{{t,j}}^2 + \\varepsilon}},\\ \\varepsilon = {}",
                        c.rms_norm_eps)},
           {"y_(t,j) = x_(t,j) / r_t * w_j", "y_{t,j} = \\frac{x_{t,j}}{r_t}\\, w_j"},
           {fmt::format("per head (rmsnorm_heads): the same over each head's {} dims, w shared by the heads",
                        c.lightning_head_dim),
            fmt::format("y_{{t,h,j}} = \\frac{{x_{{t,h,j}}}}{{r_{{t,h}}}}\\, w_j,\\ j < {}", c.lightning_head_dim)}},
          {}, "gpu/rmsnorm.cu", {"rmsnorm"}, {}, ""};
}

OpInfo rope(const ModelConfig& c) {
  const int d = c.lightning_head_dim, half = d / 2;
  return {"rope", "rotary position embedding, rotate-half, on every dim of the Lightning q and k",
          {{fmt::format("inv_freq_i = {}^(-2i/{}), i = 0..{} (fp32)", num(c.rope_theta), d, half - 1),
            fmt::format("\\omega_i = {}^{{-2i/{}}},\\ i < {}", num(c.rope_theta), d, half)},
           {"angle_(p,i) = fp32(p * inv_freq_i)", "\\phi_{p,i} = \\mathrm{fp32}(p\\,\\omega_i)"},
           {fmt::format("x = [x1 | x2] (dims 0..{} | {}..{}): out = [x1 cos - x2 sin | x2 cos + x1 sin]", half - 1, half, d - 1),
            "\\mathrm{out} = [\\,x_1\\cos\\phi - x_2\\sin\\phi \\;|\\; x_2\\cos\\phi + x_1\\sin\\phi\\,]"}},
          {}, "gpu/rope.cu", {"rope"}, {}, "no parameters: theta is a config constant"};
}

OpInfo gla(const ModelConfig& c) {
  const std::vector<double> g = c.lightning_decay();
  const int d = c.lightning_head_dim;
  return {"gla", "simple gated linear attention: a decayed outer-product state per head",
          {{fmt::format("lambda_h = exp(gamma_h), gamma_h = -slope_h (ALiBi slopes of {} heads): lambda from {:.4f} (h = 0) "
                        "to {:.4f} (h = {})",
                        c.lightning_nh, std::exp(g.front()), std::exp(g.back()), c.lightning_nh - 1),
            "\\lambda_h = e^{\\gamma_h},\\ \\gamma_h = -2^{-(h+1)/4}"},
           {fmt::format("S_t = lambda_h S_(t-1) + k_t^T v_t   (S: [{}, {}] per head, fp32)", d, d),
            "S_t = \\lambda_h S_{t-1} + k_t^{\\mathsf T} v_t"},
           {fmt::format("o_t = tau q_t S_t, tau = 1/sqrt({}) = {} (inclusive of token t)", d, num(c.lightning_tau())),
            fmt::format("o_t = \\tau\\, q_t S_t,\\ \\tau = 1/\\sqrt{{{}}}", d)},
           {"chunked (C = 64, calls of >= 64 tokens): o_j = tau [e^(g_j) q_j S_c + sum_(i<=j) e^(g_j-g_i) (q_j.k_i) v_i], "
            "g_j = gamma (j+1); equal to the recurrence",
            "o_j = \\tau\\Big[e^{g_j} q_j S_c + \\sum_{i\\le j} e^{g_j-g_i}(q_j\\cdot k_i)\\, v_i\\Big],\\ g_j = \\gamma(j+1)"}},
          {"gla"}, "gpu/gla.cu", {"gla_chunked", "gla_recurrent"}, {},
          "no parameters: the decay is fixed by the config (lightning_nh); the state is per request, not in the checkpoint"};
}

OpInfo compress_k(const ModelConfig& c, int64_t context) {
  const SparseConfig& s = c.sparse;
  return {"compress_k", "mean-pooled compressed keys K1 and K2 of each kv head",
          {{fmt::format("K1_c = mean(K[{}c .. {}c+{}]), n1(L) = floor((L - {})/{}) + 1", s.kernel_stride, s.kernel_stride,
                        s.kernel_size - 1, s.kernel_size, s.kernel_stride),
            fmt::format("K1_c = \\tfrac{{1}}{{{}}}\\textstyle\\sum_{{j<{}}} K_{{{}c+j}}", s.kernel_size, s.kernel_size, s.kernel_stride)},
           {fmt::format("K2_e = mean(K[{}e .. {}e+{}]), n2(L) = floor((L - {})/{}) + 1", s.k2_stride(), s.k2_stride(),
                        s.k2_kernel() - 1, s.k2_kernel(), s.k2_stride()),
            fmt::format("K2_e = \\tfrac{{1}}{{{}}}\\textstyle\\sum_{{j<{}}} K_{{{}e+j}}", s.k2_kernel(), s.k2_kernel(), s.k2_stride())},
           {fmt::format("at L = {}: n1 = {}, n2 = {} entries per kv head and sparse layer", context,
                        k1_entries(c, context), k2_entries(c, context)),
            fmt::format("n_1({}) = {},\\ n_2({}) = {}", context, k1_entries(c, context), context, k2_entries(c, context))}},
          {}, "gpu/compress_k.cu", {"compress_k"}, {}, "no parameters: kernel sizes and strides are config constants"};
}

OpInfo select_blocks(const ModelConfig& c, int64_t context) {
  const SparseConfig& s = c.sparse;
  const int64_t p = context, qb = p / s.block_size, causal = qb + 1;
  // Forced: the local blocks [lo, qb] and the initial blocks below lo.
  const int64_t lo = std::max<int64_t>(0, qb - s.local_blocks());
  const int64_t forced = qb - lo + 1 + std::min<int64_t>(s.init_blocks, lo);
  const int64_t chosen = std::min<int64_t>(s.k_sel(), causal) - forced;
  return {"select_blocks", "InfLLM-v2 stage 1: score 64-token blocks with compressed keys, keep the top blocks",
          {{fmt::format("LSE2_h(p) = log sum over e with {}e+{} <= p of exp(tau q_h.K2_e)", s.k2_stride(), s.k2_kernel() - 1),
            fmt::format("\\mathrm{{LSE2}}_h(p) = \\log\\!\\sum_{{{}e+{}\\le p}} e^{{\\tau q_h\\cdot K2_e}}", s.k2_stride(), s.k2_kernel() - 1)},
           {fmt::format("s_g(p, c) = sum over the {} heads h of group g of exp(tau q_h.K1_c - LSE2_h(p)), for {}c+{} <= p",
                        c.group_size(), s.kernel_stride, s.kernel_size - 1),
            "s_g(p,c) = \\sum_{h\\in g} e^{\\tau q_h\\cdot K1_c - \\mathrm{LSE2}_h(p)}"},
           {"S_g(b) = max over c in {4b-1, ..., 4b+3} of s_g(p, c)   (every K1 window overlapping block b)",
            "S_g(b) = \\max_{4b-1\\le c\\le 4b+3} s_g(p,c)"},
           {fmt::format("forced: b < {} or qb-{} <= b <= qb (+inf); future b > qb (-inf); qb = p / {}", s.init_blocks,
                        s.local_blocks(), s.block_size),
            fmt::format("S_g(b) = +\\infty \\text{{ for }} b<{} \\text{{ or }} q_b-{}\\le b\\le q_b", s.init_blocks, s.local_blocks())},
           {fmt::format("Sel_g(p) = the {} highest S_g(b), ties to the lower block: min({}, qb+1) blocks", s.k_sel(), s.k_sel()),
            fmt::format("\\mathrm{{Sel}}_g(p) = \\operatorname{{top}}_{{{}}}\\, S_g(b)", s.k_sel())},
           {fmt::format("at p = {}: qb = {}, {} causal blocks, {} forced, {} chosen by score", p, qb, causal, forced,
                        std::max<int64_t>(chosen, 0)),
            fmt::format("p = {}:\\ q_b = {}", p, qb)}},
          {"select"}, "gpu/select_blocks.cu", {"select_blocks"}, {},
          "no parameters: block size, window and top-k are config constants (sparse_config)"};
}

OpInfo sparse_attn(const ModelConfig& c, int64_t context) {
  const SparseConfig& s = c.sparse;
  const double keys = sum_selected_keys(context, context + 1, s.block_size, s.k_sel());
  return {"sparse_attn", "InfLLM-v2 stage 2: softmax attention over the selected blocks' keys",
          {{fmt::format("Keys(p, g) = {{j in [{}b, {}b+{}] : b in Sel_g(p), j <= p}}, at most {} x {} = {}", s.block_size,
                        s.block_size, s.block_size - 1, s.k_sel(), s.block_size, s.k_sel() * s.block_size),
            "\\mathrm{Keys}(p,g) = \\{ j \\in \\text{block } b : b\\in\\mathrm{Sel}_g(p),\\ j\\le p \\}"},
           {fmt::format("out_h(p) = sum over j in Keys of softmax_j(tau q_h.K_j) V_j, kv head g = h / {}, tau = 1/sqrt({})",
                        c.group_size(), c.head_dim),
            "o_h(p) = \\sum_{j\\in\\mathrm{Keys}} \\operatorname{softmax}_j(\\tau\\, q_h\\cdot K_j)\\, V_j"},
           {fmt::format("at p = {}: {} keys per query head", context, num(keys)), fmt::format("|\\mathrm{{Keys}}| = {}", num(keys))}},
          {"sparse_attn"}, "gpu/sparse_attn.cu", {"sparse_attn"}, {}, "no parameters"};
}

OpInfo dense_attn(const ModelConfig& c, int64_t) {
  return {"dense_attn", "causal GQA softmax attention over every cached key (sparse layers below dense_len)",
          {{fmt::format("out_h(p) = sum over j <= p of softmax_j(tau q_h.K_(g,j)) V_(g,j), g = h / {}, tau = 1/sqrt({})",
                        c.group_size(), c.head_dim),
            "o_h(p) = \\sum_{j\\le p} \\operatorname{softmax}_j(\\tau\\, q_h\\cdot K_{g,j})\\, V_{g,j}"},
           {fmt::format("used while the keys after the call number fewer than dense_len = {}", c.sparse.dense_len),
            fmt::format("L_{{kv}} < {}", c.sparse.dense_len)}},
          {"dense_attn"}, "gpu/dense_attn.cu", {"dense_attn"}, {}, "no parameters"};
}

OpInfo gate(const ModelConfig&) {
  return {"gate", "sigmoid output gate: Lightning's z gate and the sparse o_gate",
          {{"y = x * sigmoid(z), sigmoid(z) = 1 / (1 + e^-z)", "y = x \\odot \\sigma(z)"}},
          {}, "gpu/gate.cu", {"gate"}, {}, "no parameters of its own: z comes from a projection (see linear)"};
}

OpInfo mlp(const ModelConfig& c) {
  return {"mlp", "SwiGLU activation between the MLP's projections",
          {{fmt::format("m = silu(g) * u, silu(g) = g / (1 + e^-g), g, u of width {}", c.intermediate_size),
            "m = \\operatorname{silu}(g)\\odot u,\\ \\operatorname{silu}(g) = g\\,\\sigma(g)"}},
          {}, "gpu/mlp.cu", {"mlp_act"}, {}, "no parameters of its own: g, u and the down projection are linear"};
}

OpInfo residual(const ModelConfig& c) {
  return {"residual", "scaled residual add",
          {{fmt::format("h = h + s * branch, s = scale_depth / sqrt(layers) = {} / sqrt({}) = {}", num(c.scale_depth),
                        c.num_hidden_layers, num(c.residual_scale())),
            fmt::format("h \\leftarrow h + \\tfrac{{{}}}{{\\sqrt{{{}}}}}\\, b", num(c.scale_depth), c.num_hidden_layers)}},
          {}, "gpu/residual.cu", {"residual"}, {}, "no parameters: the scale is a config constant"};
}

OpInfo logits(const ModelConfig& c) {
  return {"logits", "the output projection of the last position",
          {{fmt::format("logits = W_lm (h / {}), {} = hidden_size / dim_model_base = {} / {}", num(c.logit_divisor()),
                        num(c.logit_divisor()), c.hidden_size, c.dim_model_base),
            fmt::format("\\mathrm{{logits}} = W_{{\\mathrm{{lm}}}}\\,(h/{})", num(c.logit_divisor()))}},
          {"gemm.lm_head"}, "gpu/runner.cpp", {}, {"logit_alpha = float(1.0 / c.logit_divisor())"}, ""};
}

}  // namespace

const std::vector<std::string>& op_names() {
  static const std::vector<std::string> names{"embed", "linear", "rmsnorm", "rope", "gla", "compress_k", "select_blocks",
                                              "sparse_attn", "dense_attn", "gate", "mlp", "residual", "logits"};
  return names;
}

std::vector<OpInfo> op_catalog(const ModelConfig& c, int64_t context) {
  std::vector<OpInfo> ops{embed(c),          linear(c),     rmsnorm(c), rope(c), gla(c), compress_k(c, context),
                          select_blocks(c, context), sparse_attn(c, context), dense_attn(c, context), gate(c), mlp(c),
                          residual(c),       logits(c)};
  for (size_t i = 0; i < ops.size(); ++i)
    if (i >= op_names().size() || ops[i].name != op_names()[i]) fail("internal: op catalog entry {} is {}", i, ops[i].name);
  return ops;
}

}  // namespace salasim::reports
