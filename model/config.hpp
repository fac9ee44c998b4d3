// What a MiniCPM-SALA model is: the Hugging Face config.json, parsed and checked, and its layer map.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace salasim {

enum class Mixer { Sparse, Lightning };  // "minicpm4" (InfLLM-v2) and "lightning-attn"

const char* mixer_name(Mixer m);  // "sparse" / "lightning": the tap-path spelling

// sparse_config of config.json (docs/spec.md §1.1, §4).
struct SparseConfig {
  int kernel_size = 0;    // K1 window (32); K2 uses 4x this (128)
  int kernel_stride = 0;  // K1 stride (16); K2 uses 4x this (64)
  int init_blocks = 0;    // forced leading blocks (1)
  int block_size = 0;     // selection block (64)
  int window_size = 0;    // local window in tokens (2048): window/block local blocks + the query's own
  int topk = 0;           // blocks chosen besides the local ones (64): K_sel = topk + window/block
  bool use_nope = false;  // parsed for completeness; sparse layers carry no RoPE either way
  int dense_len = 0;      // L_kv < dense_len -> dense attention (8192)

  int k2_kernel() const { return 4 * kernel_size; }
  int k2_stride() const { return 4 * kernel_stride; }
  int local_blocks() const { return window_size / block_size; }
  int k_sel() const { return topk + local_blocks(); }  // 96
};

struct ModelConfig {
  std::string source;  // file it came from, for messages

  // architecture
  int hidden_size = 0;
  int num_hidden_layers = 0;
  int num_attention_heads = 0;  // query heads, both mixers
  int num_key_value_heads = 0;  // sparse layers' kv heads
  int head_dim = 0;
  int lightning_nh = 0;
  int lightning_nkv = 0;
  int lightning_head_dim = 0;
  int intermediate_size = 0;
  int vocab_size = 0;
  double rms_norm_eps = 0;
  double rope_theta = 0;
  int64_t max_position_embeddings = 0;
  double scale_emb = 0;
  int dim_model_base = 0;
  double scale_depth = 0;
  int mup_denominator = 0;  // not used by the forward pass (docs/spec.md §1.1)
  bool tie_word_embeddings = false;
  bool attention_bias = false;
  bool attn_use_rope = false;
  bool lightning_use_rope = true;
  bool qk_norm = true;
  bool use_output_norm = true;
  bool use_output_gate = true;
  bool attn_use_output_gate = true;
  std::string lightning_scale;  // "1/sqrt(d)"
  std::string hidden_act;       // "silu"
  SparseConfig sparse;
  std::vector<Mixer> layers;  // from mixer_types

  // descriptive fields
  std::vector<std::string> architectures;
  std::string model_type;
  std::string dtype;
  std::string transformers_version;
  int bos_token_id = -1;
  std::vector<int> eos_token_ids;
  int pad_token_id = -1;
  int pretraining_tp = 1;
  double initializer_range = 0;
  double attention_dropout = 0;
  bool use_cache = true;

  // derived
  int n_layers(Mixer m) const;
  double residual_scale() const;  // scale_depth / sqrt(num_hidden_layers)
  double logit_divisor() const;   // hidden_size / dim_model_base
  double attn_scale() const;      // 1/sqrt(head_dim)
  double lightning_tau() const;   // 1/sqrt(lightning_head_dim)
  int q_dim() const { return num_attention_heads * head_dim; }
  int kv_dim() const { return num_key_value_heads * head_dim; }
  int lightning_dim() const { return lightning_nh * lightning_head_dim; }
  int group_size() const { return num_attention_heads / num_key_value_heads; }
  // Lightning decay per head, natural log per token (gamma_h < 0), docs/spec.md §3 step 5.
  std::vector<double> lightning_decay() const;
};

// Parse and check a config.json. Throws salasim::Error naming the file, field and expectation.
ModelConfig load_config(const std::string& path);
ModelConfig parse_config(const std::string& json_text, const std::string& source);



// ALiBi get_slopes(n) as HF builds the Lightning slopes; for n = 32 this is 2^(-(h+1)/4).
std::vector<double> alibi_slopes(int n);

}  // namespace salasim
