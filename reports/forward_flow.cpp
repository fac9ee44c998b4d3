// The forward flow's steps (sala-spec §2-§4), written once with the config's numbers filled in.
#include "reports/forward_flow.hpp"

#include <fmt/format.h>

#include "model/error.hpp"
#include "ops/op.hpp"

namespace salasim::reports {

const char* part_name(Part p) {
  switch (p) {
    case Part::Entry: return "entry";
    case Part::LayerPre: return "every layer";
    case Part::Lightning: return "lightning";
    case Part::Sparse: return "sparse";
    case Part::LayerPost: return "every layer";
    case Part::Exit: return "exit";
  }
  return "?";
}

namespace {

std::string num(double v) { return fmt::format("{:.10g}", v); }

// Shapes: "[T, 4096]"; per-head "[T, 32 x 128]".
std::string rows(int64_t n) { return fmt::format("[T, {}]", n); }
std::string heads(int64_t h, int64_t d) { return fmt::format("[T, {} x {}]", h, d); }

FlowStep step(Part part, std::string op, std::string label, std::string text, std::string latex, std::string in,
              std::string out, std::vector<std::string> tensors, std::vector<std::string> taps, std::string file,
              std::string definition, std::string note) {
  return {part,
          std::move(op),
          std::move(label),
          std::move(text),
          std::move(latex),
          std::move(in),
          std::move(out),
          std::move(tensors),
          std::move(taps),
          std::move(file),
          std::move(definition),
          std::move(note)};
}

void entry_steps(const ModelConfig& c, std::vector<FlowStep>& f) {
  const int64_t D = c.hidden_size;
  f.push_back(step(Part::Entry, "embed", "embed_tokens", fmt::format("h = E[x] * {}", num(c.scale_emb)),
                   fmt::format("h = E_{{x}} \\cdot {}", num(c.scale_emb)), "token ids [T]", "h " + rows(D),
                   {tensor_name_embed()}, {"embed/out"}, "reference/model.cpp", "",
                   fmt::format("scale_emb = {} is a config constant, not a parameter", num(c.scale_emb))));
}

void layer_pre_steps(const ModelConfig& c, std::vector<FlowStep>& f) {
  const int64_t D = c.hidden_size;
  f.push_back(step(Part::LayerPre, "rmsnorm", "input_layernorm",
                   fmt::format("a = RMSNorm(h; w_in), eps {}", c.rms_norm_eps),
                   "a = \\operatorname{RMSNorm}(h; w_{\\mathrm{in}})", "h " + rows(D), "a " + rows(D),
                   {"input_layernorm.weight"}, {"input_norm/out"}, "reference/model.cpp", "", ""));
}

void lightning_steps(const ModelConfig& c, std::vector<FlowStep>& f) {
  const int64_t D = c.hidden_size, H = c.lightning_nh, d = c.lightning_head_dim, L = c.lightning_dim();
  const std::string file = "reference/lightning.cpp", shared = "reference/model.cpp";  // project_qkv, gate_o_proj
  const Part P = Part::Lightning;
  f.push_back(step(P, "linear", "q, k, v projections", "q = W_q a, k = W_k a, v = W_v a",
                   "q = W_q a,\\; k = W_k a,\\; v = W_v a", "a " + rows(D), "q, k, v " + heads(H, d) + " each",
                   {"self_attn.q_proj.weight", "self_attn.k_proj.weight", "self_attn.v_proj.weight"},
                   {"lightning/proj/q", "lightning/proj/k", "lightning/proj/v"}, shared, "",
                   fmt::format("{} heads, each with its own key and value head (no GQA)", H)));
  if (c.use_output_gate)
    f.push_back(step(P, "linear", "z_proj (output gate)", "z = W_z a", "z = W_z a", "a " + rows(D), "z " + rows(L),
                     {"self_attn.z_proj.weight"}, {"lightning/proj/z"}, file, "",
                     "reads the layer input a, not the attention output"));
  if (c.qk_norm)
    f.push_back(
        {P,
         "rmsnorm",
         "q_norm, k_norm (per head)",
         fmt::format("q_h = RMSNorm(q_h; w_qn), k_h = RMSNorm(k_h; w_kn) over each head's {} dims", d),
         "q_h \\leftarrow \\operatorname{RMSNorm}(q_h; w_{qn}),\\; k_h \\leftarrow \\operatorname{RMSNorm}(k_h; w_{kn})",
         "q, k " + heads(H, d),
         "q, k " + heads(H, d),
         {"self_attn.q_norm.weight", "self_attn.k_norm.weight"},
         {"lightning/qk_rope/q", "lightning/qk_rope/k"},
         file,
         "",
         fmt::format("one [{}] weight shared by the {} heads", d, H)});
  if (c.lightning_use_rope)
    f.push_back(step(P, "rope", "RoPE",
                     fmt::format("q, k = RoPE(q, k; p), theta {}, rotate-half over all {} dims", num(c.rope_theta), d),
                     fmt::format("q, k \\leftarrow \\operatorname{{RoPE}}_{{\\theta={}}}(q, k; p)", num(c.rope_theta)),
                     "q, k " + heads(H, d), "q, k " + heads(H, d), {}, {"lightning/qk_rope/q", "lightning/qk_rope/k"},
                     file, "", "angles from the fp32 table fp32 code builds; no parameters"));
  f.push_back(step(P, "gla", "simple GLA",
                   fmt::format("S_t = lambda_h S_(t-1) + k_t^T v_t, o_t = tau q_t S_t, tau = 1/sqrt({})", d),
                   "S_t = \\lambda_h S_{t-1} + k_t^{\\mathsf T} v_t,\\quad o_t = \\tau\\, q_t S_t",
                   "q, k, v " + heads(H, d), "o " + heads(H, d), {}, {"lightning/gla/out", "lightning/gla/state"}, file,
                   "",
                   fmt::format("state S [{}, {}, {}] fp32 per request ({} KiB per layer); decay fixed by the config, "
                               "no parameters",
                               H, d, d, H * d * d * 4 / 1024)));
  if (c.use_output_norm)
    f.push_back(step(P, "rmsnorm", "o_norm (all heads jointly)",
                     fmt::format("o = RMSNorm(o; w_on) over all {} features", L),
                     "o \\leftarrow \\operatorname{RMSNorm}(o; w_{on})", "o " + rows(L), "o " + rows(L),
                     {"self_attn.o_norm.weight"}, {"lightning/o_norm/out"}, file, "", ""));
  if (c.use_output_gate)
    f.push_back(step(P, "gate", "z gate", "o = o * sigmoid(z)", "o \\leftarrow o \\odot \\sigma(z)", "o, z " + rows(L),
                     "o " + rows(L), {}, {"lightning/gate/out"}, shared, "", ""));
  f.push_back(step(P, "linear", "o_proj", "y = W_o o", "y = W_o\\, o", "o " + rows(L), "y " + rows(D),
                   {"self_attn.o_proj.weight"}, {"lightning/o_proj/out"}, shared, "", ""));
}

void sparse_steps(const ModelConfig& c, std::vector<FlowStep>& f) {
  const int64_t D = c.hidden_size, H = c.num_attention_heads, G = c.num_key_value_heads, d = c.head_dim;
  const SparseConfig& sp = c.sparse;
  const std::string file = "reference/sparse.cpp", shared = "reference/model.cpp";  // project_qkv, gate_o_proj
  const Part P = Part::Sparse;
  f.push_back(step(P, "linear", "q, k, v projections",
                   fmt::format("q = W_q a ({} heads), k = W_k a, v = W_v a ({} kv heads); head h reads kv head h / {}",
                               H, G, c.group_size()),
                   "q = W_q a,\\; k = W_k a,\\; v = W_v a", "a " + rows(D),
                   fmt::format("q {}, k, v {} each", heads(H, d), heads(G, d)),
                   {"self_attn.q_proj.weight", "self_attn.k_proj.weight", "self_attn.v_proj.weight"},
                   {"sparse/proj/q", "sparse/proj/k", "sparse/proj/v"}, shared, "",
                   fmt::format("NoPE: no RoPE and no q/k norm; GQA {}:1", c.group_size())));
  if (c.attn_use_output_gate)
    f.push_back(step(P, "linear", "o_gate projection", "g = W_og a", "g = W_{og}\\, a", "a " + rows(D),
                     "g " + rows(c.q_dim()), {"self_attn.o_gate.weight"}, {"sparse/proj/g"}, file, "",
                     "reads the layer input a, as Lightning's z_proj does"));
  f.push_back(step(P, "", "KV cache append", "K, V caches += k, v", "K \\mathrel{+}= k,\\; V \\mathrel{+}= v",
                   fmt::format("k, v {}", heads(G, d)), fmt::format("K, V [{}, L, {}]", G, d), {}, {}, file,
                   "cache_append",
                   fmt::format("every token's k and v kept in bf16: {} B per token per layer", 2 * G * d * 2)));
  f.push_back(
      {P,
       "compress_k",
       "compressed keys K1, K2",
       fmt::format("K1_c = mean(K[{}c, {}c+{})), K2_e = mean(K[{}e, {}e+{}))", sp.kernel_stride, sp.kernel_stride,
                   sp.kernel_size, sp.k2_stride(), sp.k2_stride(), sp.k2_kernel()),
       fmt::format(
           "K1_c = \\tfrac{{1}}{{{0}}}\\sum_{{j<{0}}} K_{{{1}c+j}},\\; K2_e = \\tfrac{{1}}{{{2}}}\\sum_{{j<{2}}} K_{{{3}e+j}}",
           sp.kernel_size, sp.kernel_stride, sp.k2_kernel(), sp.k2_stride()),
       fmt::format("K [{}, L, {}]", G, d),
       fmt::format("K1 [{}, n1(L), {}], K2 [{}, n2(L), {}]", G, d, G, d),
       {},
       {"sparse/compress_k/k1", "sparse/compress_k/k2"},
       file,
       "",
       "mean pools, no parameters; appended as windows complete"});
  f.push_back(
      {P,
       "select_blocks",
       "block selection",
       fmt::format("Sel_g(p) = top-{} {}-token blocks of max-pooled sum over {} heads of exp(tau q_h.K1 - LSE2_h); "
                   "block 0 and {} local blocks forced",
                   sp.k_sel(), sp.block_size, c.group_size(), sp.local_blocks() + 1),
       fmt::format("\\mathrm{{Sel}}_g(p) = \\operatorname{{top}}_{{{}}}\\, \\max\\text{{-pool}} \\sum_{{h\\in g}} "
                   "e^{{\\tau q_h\\cdot K1_c - \\mathrm{{LSE2}}_h(p)}}",
                   sp.k_sel()),
       fmt::format("q {}, K1, K2", heads(H, d)),
       fmt::format("blocks [T, {}, {}]", G, sp.k_sel()),
       {},
       {"sparse/select/scores", "sparse/select/blocks"},
       file,
       "",
       fmt::format("runs when the keys reach dense_len {}", sp.dense_len)});
  f.push_back(step(P, "sparse_attn", "sparse attention",
                   fmt::format("A_h(p) = sum over j in Sel of softmax(tau q_h.K_j) V_j, at most {} keys",
                               sp.k_sel() * sp.block_size),
                   "A_h(p) = \\sum_{j\\in \\mathrm{Sel}_g(p)} \\operatorname{softmax}_j(\\tau\\, q_h\\cdot K_j)\\, V_j",
                   fmt::format("q {}, K, V, blocks", heads(H, d)), "A " + heads(H, d), {}, {"sparse/attn/out"}, file,
                   "", fmt::format("from L_kv >= {} (every query of the call)", sp.dense_len)));
  f.push_back(step(P, "dense_attn", "dense attention", "A_h(p) = sum over j <= p of softmax(tau q_h.K_j) V_j",
                   "A_h(p) = \\sum_{j\\le p} \\operatorname{softmax}_j(\\tau\\, q_h\\cdot K_j)\\, V_j",
                   fmt::format("q {}, K, V", heads(H, d)), "A " + heads(H, d), {}, {"sparse/attn/out"}, file, "",
                   fmt::format("while L_kv < {}", sp.dense_len)));
  if (c.attn_use_output_gate)
    f.push_back(step(P, "gate", "o_gate", "A = A * sigmoid(g)", "A \\leftarrow A \\odot \\sigma(g)",
                     "A, g " + rows(c.q_dim()), "A " + rows(c.q_dim()), {}, {"sparse/gate/out"}, shared, "", ""));
  f.push_back(step(P, "linear", "o_proj", "y = W_o A", "y = W_o A", "A " + rows(c.q_dim()), "y " + rows(D),
                   {"self_attn.o_proj.weight"}, {"sparse/o_proj/out"}, shared, "", ""));
}

void layer_post_steps(const ModelConfig& c, std::vector<FlowStep>& f) {
  const int64_t D = c.hidden_size, I = c.intermediate_size;
  const std::string file = "reference/model.cpp", s = num(c.residual_scale());
  const Part P = Part::LayerPost;
  const std::string why =
      fmt::format("{} = scale_depth / sqrt(layers) = {} / sqrt({})", s, num(c.scale_depth), c.num_hidden_layers);
  f.push_back(step(P, "residual", "residual add (mixer)", fmt::format("h = h + {} * y", s),
                   fmt::format("h \\leftarrow h + {}\\, y", s), "h, y " + rows(D), "h " + rows(D), {}, {"residual/mid"},
                   file, "", why));
  f.push_back(step(P, "rmsnorm", "post_attention_layernorm", "b = RMSNorm(h; w_post)",
                   "b = \\operatorname{RMSNorm}(h; w_{\\mathrm{post}})", "h " + rows(D), "b " + rows(D),
                   {"post_attention_layernorm.weight"}, {"post_norm/out"}, file, "", ""));
  f.push_back(step(P, "linear", "MLP gate and up projections", "g = W_gate b, u = W_up b",
                   "g = W_{\\mathrm{gate}} b,\\; u = W_{\\mathrm{up}} b", "b " + rows(D),
                   fmt::format("g, u {} each", rows(I)), {"mlp.gate_proj.weight", "mlp.up_proj.weight"}, {"mlp/act"},
                   file, "", ""));
  f.push_back(step(P, "mlp", "SiLU gate", "m = silu(g) * u, silu(g) = g sigmoid(g)",
                   "m = \\operatorname{silu}(g)\\odot u", fmt::format("g, u {}", rows(I)), "m " + rows(I), {},
                   {"mlp/act"}, file, "", ""));
  f.push_back(step(P, "linear", "MLP down projection", "y = W_down m", "y = W_{\\mathrm{down}}\\, m", "m " + rows(I),
                   "y " + rows(D), {"mlp.down_proj.weight"}, {"mlp/out"}, file, "", ""));
  f.push_back(step(P, "residual", "residual add (MLP)", fmt::format("h = h + {} * y", s),
                   fmt::format("h \\leftarrow h + {}\\, y", s), "h, y " + rows(D), "h " + rows(D), {}, {"residual/h"},
                   file, "", why));
}

void exit_steps(const ModelConfig& c, std::vector<FlowStep>& f) {
  const int64_t D = c.hidden_size, V = c.vocab_size;
  const std::string file = "reference/model.cpp", div = num(c.logit_divisor());
  f.push_back(step(Part::Exit, "rmsnorm", "final norm", "h = RMSNorm(h; w_final)",
                   "h \\leftarrow \\operatorname{RMSNorm}(h; w_{\\mathrm{final}})", "h " + rows(D), "h " + rows(D),
                   {tensor_name_final_norm()}, {"final/norm"}, file, "", ""));
  // Tied embeddings: the logits read the embedding matrix, which the embed step already counts.
  std::vector<std::string> head;
  if (!c.tie_word_embeddings) head.push_back(tensor_name_lm_head(c));
  f.push_back(step(Part::Exit, "logits", "lm_head", fmt::format("logits = W_lm (h / {})", div),
                   fmt::format("\\mathrm{{logits}} = W_{{\\mathrm{{lm}}}}\\, (h / {})", div),
                   fmt::format("h [1, {}] (last position)", D), fmt::format("logits [1, {}]", V), head,
                   {"final/logits"}, file, "",
                   fmt::format("{} = hidden_size / dim_model_base = {} / {}{}", div, D, c.dim_model_base,
                               c.tie_word_embeddings ? "; tied: reads model.embed_tokens.weight" : "")));
}

}  // namespace

std::vector<FlowStep> forward_flow(const ModelConfig& c) {
  std::vector<FlowStep> f;
  entry_steps(c, f);
  layer_pre_steps(c, f);
  lightning_steps(c, f);
  sparse_steps(c, f);
  layer_post_steps(c, f);
  exit_steps(c, f);
  return f;
}

std::vector<FlowStep> layer_steps(const std::vector<FlowStep>& flow, Mixer m) {
  const Part mixer = m == Mixer::Lightning ? Part::Lightning : Part::Sparse;
  std::vector<FlowStep> out;
  for (Part p : {Part::LayerPre, mixer, Part::LayerPost})
    for (const FlowStep& s : flow)
      if (s.part == p) out.push_back(s);
  return out;
}

SourceLine step_source(const FlowStep& s) {
  if (!s.definition.empty()) {
    const std::vector<SourceLine> d = find_definitions(s.file, s.definition);
    if (!d.empty()) return d.front();
    return SourceLine{s.file, 0, s.definition, "", fmt::format("{}: no definition of {}()", s.file, s.definition)};
  }
  return find_step(s.file, s.taps, op::find_op(s.op).reference_functions);
}

std::vector<int> part_layers(const ModelConfig& c, Part p) {
  if (p == Part::Entry || p == Part::Exit) return {-1};
  std::vector<int> out;
  for (int l = 0; l < c.num_hidden_layers; ++l) {
    const Mixer m = c.layers[size_t(l)];
    if ((p == Part::Lightning && m != Mixer::Lightning) || (p == Part::Sparse && m != Mixer::Sparse)) continue;
    out.push_back(l);
  }
  return out;
}

std::string tensor_at(const std::string& tensor, int layer) {
  return layer < 0 ? tensor : layer_prefix(layer) + tensor;
}

std::string layer_ranges(const std::vector<int>& layers) {
  std::string out;
  for (size_t i = 0; i < layers.size();) {
    size_t j = i;
    while (j + 1 < layers.size() && layers[j + 1] == layers[j] + 1) ++j;
    out +=
        (out.empty() ? "" : ", ") + (j == i ? std::to_string(layers[i]) : fmt::format("{}-{}", layers[i], layers[j]));
    i = j + 1;
  }
  return out.empty() ? "-" : out;
}

StepParams step_params(const std::vector<TensorSpec>& inv, const FlowStep& s, const std::vector<int>& layers) {
  StepParams p;
  for (int l : layers) {
    int64_t n = 0;
    for (const std::string& t : s.tensors) {
      const TensorSpec* spec = find_tensor(inv, tensor_at(t, l));
      if (!spec) fail("internal: step '{}' reads {}, which the inventory lacks", s.label, tensor_at(t, l));
      n += spec->numel();
      if (p.instances == 0) p.first.push_back(spec);
    }
    if (p.instances > 0 && n != p.each)
      fail("internal: step '{}' has {} parameters in layer {} but {} in the first", s.label, n, l, p.each);
    p.each = n;
    ++p.instances;
    p.total += n;
  }
  return p;
}

}  // namespace salasim::reports
