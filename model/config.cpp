// config.json parsing and checks (docs/spec.md §1), and the quantities derived from it.
#include "model/config.hpp"

#include <cmath>

#include "model/checked.hpp"
#include "model/error.hpp"
#include "model/inventory.hpp"
#include "model/json_field.hpp"
#include "model/limits.hpp"
#include "model/memory.hpp"

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

// An integer field in [lo, hi] (model/limits.hpp), checked in 64 bits before it is narrowed to int.
int ranged(const JsonDoc& d, const char* key, int64_t lo, int64_t hi) { return int(d.integer(key, lo, hi)); }

SparseConfig parse_sparse(const JsonDoc& s) {
  SparseConfig c;
  c.kernel_size = ranged(s, "kernel_size", 1, kMaxBlock);
  c.kernel_stride = ranged(s, "kernel_stride", 1, kMaxBlock);
  c.init_blocks = ranged(s, "init_blocks", 0, kMaxPositions);
  c.block_size = ranged(s, "block_size", 1, kMaxBlock);
  c.window_size = ranged(s, "window_size", 0, kMaxPositions);
  c.topk = ranged(s, "topk", 1, kMaxPositions);
  c.use_nope = s.has("use_nope") ? s.boolean("use_nope") : false;
  c.dense_len = ranged(s, "dense_len", 1, kExtrapolationFactor * kMaxPositions);
  require(c.kernel_size % c.kernel_stride == 0, s, "kernel_size", "a multiple of kernel_stride");
  require(c.block_size % c.kernel_stride == 0, s, "block_size", "a multiple of kernel_stride");
  require(c.window_size % c.block_size == 0, s, "window_size", "a multiple of block_size");
  return c;
}

// The ranges above keep every derived size in 64 bits; this recomputes the ones that grow by products (each tensor,
// the parameter total and its float64 bytes, the per-token cache and the GLA state) with overflow checks, so a
// config that loads can be counted, planned and modelled without wrapping.
void check_sizes(const ModelConfig& c) {
  int64_t total = 0;
  for (const TensorSpec& t : tensor_inventory(c))
    total = checked_add(total, checked_numel(t.shape, c.source + ": tensor " + t.name), c.source + ": parameter count");
  checked_mul(total, 8, c.source + ": float64 bytes of the parameters");
  kv_bytes_per_token(c);
  compressed_key_entry_bytes(c);
  gla_state_bytes(c);
}

// The scales the forward pass derives from the fields above: each must be a finite positive number in fp32 too
// (the CUDA path's), and the Lightning decays finite and negative. The field ranges guarantee it; this says which
// field is to blame should a range ever be widened past that.
void check_derived_scales(const ModelConfig& c) {
  auto normal_fp32 = [](double v) { return std::isfinite(v) && v > 0 && std::isnormal(float(v)); };
  if (!normal_fp32(c.residual_scale()))
    fail("{}: scale_depth / sqrt(num_hidden_layers) = {:g} / sqrt({}) is not a positive fp32 number", c.source,
         c.scale_depth, c.num_hidden_layers);
  if (!kLogitDivisor.contains(c.logit_divisor()))
    fail("{}: hidden_size / dim_model_base = {} / {}; expected {}", c.source, c.hidden_size, c.dim_model_base,
         kLogitDivisor.text());
  if (!normal_fp32(c.attn_scale()) || !normal_fp32(c.lightning_tau()))
    fail("{}: head_dim {} / lightning_head_dim {} give a softmax or GLA scale outside fp32", c.source, c.head_dim,
         c.lightning_head_dim);
  for (double g : c.lightning_decay())
    if (!(std::isfinite(g) && g < 0))
      fail("{}: lightning_nh = {} gives a Lightning decay of {}; expected a finite negative log-decay", c.source,
           c.lightning_nh, g);
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

  c.hidden_size = ranged(d, "hidden_size", 1, kMaxWidth);
  c.num_hidden_layers = ranged(d, "num_hidden_layers", 1, kMaxLayers);
  c.num_attention_heads = ranged(d, "num_attention_heads", 1, kMaxHeads);
  c.num_key_value_heads = ranged(d, "num_key_value_heads", 1, kMaxHeads);
  c.head_dim = ranged(d, "head_dim", 1, kMaxHeadDim);
  c.lightning_nh = ranged(d, "lightning_nh", 1, kMaxHeads);
  c.lightning_nkv = ranged(d, "lightning_nkv", 1, kMaxHeads);
  c.lightning_head_dim = ranged(d, "lightning_head_dim", 1, kMaxHeadDim);
  c.intermediate_size = ranged(d, "intermediate_size", 1, kMaxWidth);
  c.vocab_size = ranged(d, "vocab_size", 1, kMaxVocab);
  // Every floating field in the range its meaning allows (model/limits.hpp): a finite but absurd value (a
  // scale_depth of 1e308 or -5) would run and give all-zero or non-finite logits with exit 0.
  c.rms_norm_eps = d.number("rms_norm_eps", kRmsNormEps);
  c.rope_theta = d.number("rope_theta", kRopeTheta);
  c.max_position_embeddings = d.integer("max_position_embeddings", 1, kMaxPositions);
  c.scale_emb = d.number("scale_emb", kScaleEmb);
  c.dim_model_base = ranged(d, "dim_model_base", 1, kMaxWidth);
  require(c.dim_model_base <= c.hidden_size, d, "dim_model_base",
          fmt::format("an integer in [1, hidden_size = {}] (the logits are divided by hidden_size / dim_model_base, "
                      "muP's width multiplier; a base wider than the model would multiply them)",
                      c.hidden_size));
  c.scale_depth = d.number("scale_depth", kScaleDepth);
  c.mup_denominator = d.has("mup_denominator") ? ranged(d, "mup_denominator", 1, INT32_MAX) : 0;
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
  require(c.lightning_nkv == c.lightning_nh, d, "lightning_nkv",
          "equal to lightning_nh (Lightning layers are plain MHA)");
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
    else d.bad("mixer_types", fmt::format("entries \"minicpm4\" or \"lightning-attn\", not \"{}\"", excerpt(m)));
  }

  // Descriptive fields: optional, but typed when present.
  if (d.has("dtype")) c.dtype = d.string("dtype");
  else if (d.has("torch_dtype")) c.dtype = d.string("torch_dtype");
  if (d.has("transformers_version")) c.transformers_version = d.string("transformers_version");
  const std::string token_ids = fmt::format("token ids in [0, vocab_size = {})", c.vocab_size);
  if (d.has("bos_token_id")) c.bos_token_id = ranged(d, "bos_token_id", 0, c.vocab_size - 1);
  if (d.has("eos_token_id"))
    for (int64_t e : d.integers("eos_token_id")) {
      if (e < 0 || e >= c.vocab_size) d.bad("eos_token_id", token_ids);
      c.eos_token_ids.push_back(int(e));
    }
  if (d.has("pad_token_id")) c.pad_token_id = ranged(d, "pad_token_id", 0, c.vocab_size - 1);
  if (d.has("pretraining_tp")) c.pretraining_tp = ranged(d, "pretraining_tp", 1, kMaxHeads);
  if (d.has("initializer_range")) c.initializer_range = d.number("initializer_range", kInitializerRange);
  if (d.has("attention_dropout")) c.attention_dropout = d.number("attention_dropout", kAttentionDropout);
  if (d.has("use_cache")) c.use_cache = d.boolean("use_cache");
  check_sizes(c);
  check_derived_scales(c);
  return c;
}

ModelConfig parse_config(const std::string& text, const std::string& source) {
  return config_from_json(parse_json_text(text, source), source);
}

ModelConfig load_config(const std::string& path) { return config_from_json(parse_json_file(path), path); }

}  // namespace salasim
