// The dense comparator (Qwen3-8B), read from a Hugging Face Qwen3 config.json: only what the memory and
// latency models need. It is not a MiniCPM-SALA config, so it has its own small parser.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "model/inventory.hpp"

namespace salasim::reports {

struct DenseConfig {
  std::string source;
  std::string model_type;  // "qwen3"
  int hidden_size = 0;
  int num_hidden_layers = 0;
  int num_attention_heads = 0;
  int num_key_value_heads = 0;
  int head_dim = 0;
  int intermediate_size = 0;
  int vocab_size = 0;
  bool tie_word_embeddings = false;
  bool qk_norm = true;  // Qwen3 has per-head q/k RMSNorm; Llama-style configs do not

  int q_dim() const { return num_attention_heads * head_dim; }
  int kv_dim() const { return num_key_value_heads * head_dim; }
};

DenseConfig load_dense_config(const std::string& path);
DenseConfig parse_dense_config(const std::string& json_text, const std::string& source);

// Tensors with HF names and shapes, so weight bytes (bf16 and W4A16) use model/memory.hpp's rules.
std::vector<TensorSpec> dense_inventory(const DenseConfig& c);

// bf16 K and V for every layer: 36 x 2 x 8 x 128 x 2 B = 147,456 B/token for Qwen3-8B.
int64_t dense_kv_bytes_per_token(const DenseConfig& c);

}  // namespace salasim::reports
