// config.json parsing and checks (docs/spec.md §1), and the quantities derived from it.
#include "model/config.hpp"

#include <cmath>

#include "model/error.hpp"
#include "model/json_field.hpp"

namespace salasim {

const char* mixer_name(Mixer m) { return m == Mixer::Sparse ? "sparse" : "lightning"; }

int ModelConfig::n_layers(Mixer m) const {
  int n = 0;
  for (Mixer x : layers) n += x == m;
  return n;
}
double ModelConfig::residual_scale() const { return scale_depth / std::sqrt(double(num_hidden_layers)); }
double ModelConfig::logit_divisor() const { return double(hidden_size) / double(dim_model_base); }
double ModelConfig::attn_scale() const { return 1.0 / std::sqrt(double(head_dim)); }
double ModelConfig::lightning_tau() const { return 1.0 / std::sqrt(double(lightning_head_dim)); }

std::vector<double> alibi_slopes(int n) {
  auto pow2 = [](int m) {
    double start = std::pow(2.0, -std::pow(2.0, -(std::log2(double(m)) - 3.0)));
    std::vector<double> s(m);
    for (int i = 0; i < m; ++i) s[i] = std::pow(start, i + 1);
    return s;
  };
  int closest = 1;
  while (closest * 2 <= n) closest *= 2;
  if (closest == n) return pow2(n);
  std::vector<double> s = pow2(closest);
  std::vector<double> extra = alibi_slopes(2 * closest);
  for (int i = 0; int(s.size()) < n; i += 2) s.push_back(extra[i]);
  return s;
}

std::vector<double> ModelConfig::lightning_decay() const {
  // HF builds the slopes as a float32 tensor: the model's decay is the fp32 value, negated.
  std::vector<double> g;
  for (double s : alibi_slopes(lightning_nh)) g.push_back(-double(float(s)));
  return g;
}

namespace {

void require(bool ok, const JsonDoc& d, const char* key, const std::string& expected) {
  if (!ok) d.bad(key, expected);
}

int positive(const JsonDoc& d, const char* key) { return int(d.integer(key, 1)); }

SparseConfig parse_sparse(const JsonDoc& s) {
  SparseConfig c;
  c.kernel_size = positive(s, "kernel_size");
  c.kernel_stride = positive(s, "kernel_stride");
  c.init_blocks = int(s.integer("init_blocks", 0));
  c.block_size = positive(s, "block_size");
  c.window_size = int(s.integer("window_size", 0));
  c.topk = positive(s, "topk");
  c.use_nope = s.has("use_nope") ? s.boolean("use_nope") : false;
  c.dense_len = positive(s, "dense_len");
  require(c.kernel_size % c.kernel_stride == 0, s, "kernel_size", "a multiple of kernel_stride");
  require(c.block_size % c.kernel_stride == 0, s, "block_size", "a multiple of kernel_stride");
  require(c.window_size % c.block_size == 0, s, "window_size", "a multiple of block_size");
  return c;
}

}  // namespace

static ModelConfig config_from_json(const json& j, const std::string& source) {
  if (!j.is_object()) fail("{}: expected a JSON object at the top level, got {}", source, json_type_name(j));
  JsonDoc d{j, source, ""};
  ModelConfig c;
  c.source = source;

  if (d.has("model_type")) {
    c.model_type = d.string("model_type");
    require(c.model_type == "minicpm_sala", d, "model_type", "\"minicpm_sala\"");
  }
  if (d.has("architectures")) c.architectures = d.strings("architectures");

  c.hidden_size = positive(d, "hidden_size");
  c.num_hidden_layers = positive(d, "num_hidden_layers");
  c.num_attention_heads = positive(d, "num_attention_heads");
  c.num_key_value_heads = positive(d, "num_key_value_heads");
  c.head_dim = positive(d, "head_dim");
  c.lightning_nh = positive(d, "lightning_nh");
  c.lightning_nkv = positive(d, "lightning_nkv");
  c.lightning_head_dim = positive(d, "lightning_head_dim");
  c.intermediate_size = positive(d, "intermediate_size");
  c.vocab_size = positive(d, "vocab_size");
  c.rms_norm_eps = d.number("rms_norm_eps");
  require(c.rms_norm_eps > 0, d, "rms_norm_eps", "a positive number");
  c.rope_theta = d.number("rope_theta");
  require(c.rope_theta > 1, d, "rope_theta", "a number > 1");
  c.max_position_embeddings = d.integer("max_position_embeddings", 1);
  c.scale_emb = d.number("scale_emb");
  c.dim_model_base = positive(d, "dim_model_base");
  c.scale_depth = d.number("scale_depth");
  c.mup_denominator = d.has("mup_denominator") ? int(d.integer("mup_denominator")) : 0;
  c.tie_word_embeddings = d.boolean("tie_word_embeddings");
  c.attention_bias = d.boolean("attention_bias");
  c.attn_use_rope = d.boolean("attn_use_rope");
  c.lightning_use_rope = d.boolean("lightning_use_rope");
  c.qk_norm = d.boolean("qk_norm");
  c.use_output_norm = d.boolean("use_output_norm");
  c.use_output_gate = d.boolean("use_output_gate");
  c.attn_use_output_gate = d.boolean("attn_use_output_gate");
  c.lightning_scale = d.string("lightning_scale");
  c.hidden_act = d.string("hidden_act");
  c.sparse = parse_sparse(d.object("sparse_config"));

  // Values this simulator does not model are rejected rather than silently ignored.
  require(c.hidden_act == "silu", d, "hidden_act", "\"silu\" (the only activation MiniCPM-SALA uses)");
  require(c.lightning_scale == "1/sqrt(d)", d, "lightning_scale", "\"1/sqrt(d)\"");
  require(!c.attention_bias, d, "attention_bias", "false (the model has no biases)");
  require(!c.attn_use_rope, d, "attn_use_rope", "false (sparse layers are NoPE)");
  require(c.lightning_nkv == c.lightning_nh, d, "lightning_nkv", "equal to lightning_nh (Lightning layers are plain MHA)");
  require(c.num_attention_heads % c.num_key_value_heads == 0, d, "num_key_value_heads",
          "a divisor of num_attention_heads");
  require(c.head_dim % 2 == 0, d, "head_dim", "an even number");
  require(c.lightning_head_dim % 2 == 0, d, "lightning_head_dim", "an even number (RoPE pairs dims)");
  if (d.has("rope_scaling")) d.bad("rope_scaling", "null (plain RoPE)");

  std::vector<std::string> mixers = d.strings("mixer_types");
  require(int(mixers.size()) == c.num_hidden_layers, d, "mixer_types",
          fmt::format("an array of num_hidden_layers = {} entries", c.num_hidden_layers));
  for (const std::string& m : mixers) {
    if (m == "minicpm4") c.layers.push_back(Mixer::Sparse);
    else if (m == "lightning-attn") c.layers.push_back(Mixer::Lightning);
    else d.bad("mixer_types", fmt::format("entries \"minicpm4\" or \"lightning-attn\", not \"{}\"", m));
  }

  // Descriptive fields: optional, but typed when present.
  if (d.has("dtype")) c.dtype = d.string("dtype");
  else if (d.has("torch_dtype")) c.dtype = d.string("torch_dtype");
  if (d.has("transformers_version")) c.transformers_version = d.string("transformers_version");
  if (d.has("bos_token_id")) c.bos_token_id = int(d.integer("bos_token_id", 0));
  if (d.has("eos_token_id"))
    for (int64_t e : d.integers("eos_token_id")) c.eos_token_ids.push_back(int(e));
  if (d.has("pad_token_id")) c.pad_token_id = int(d.integer("pad_token_id", 0));
  if (d.has("pretraining_tp")) c.pretraining_tp = int(d.integer("pretraining_tp", 1));
  if (d.has("initializer_range")) c.initializer_range = d.number("initializer_range");
  if (d.has("attention_dropout")) c.attention_dropout = d.number("attention_dropout");
  if (d.has("use_cache")) c.use_cache = d.boolean("use_cache");
  return c;
}

ModelConfig parse_config(const std::string& text, const std::string& source) {
  return config_from_json(parse_json_text(text, source), source);
}

ModelConfig load_config(const std::string& path) { return config_from_json(parse_json_file(path), path); }

}  // namespace salasim
