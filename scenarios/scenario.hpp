// Scenario files: which model, which weights, which prompt, how the prefill is split, how many decode steps.
//
// {
//   "name": "tiny-sparse",                     // optional; defaults to the file name; a plain file name (it names
//                                              // tests/golden/<name>.h5 and dump files)
//   "description": "...",                      // optional
//   "model": "models/tiny.json",               // config.json, relative to the scenario file
//   "weights": {"synthetic_seed": 1}           // or {"checkpoint": "DIR"} (relative to the scenario file)
//   "prompt": {"random_seed": 7, "length": 9000}   // or {"tokens": [1, 2, ...]}
//   "prefill_chunk": 4096,                     // optional: feed the prompt in pieces of this size (0: one call)
//   "decode_steps": 8,                         // optional; decode tokens are random from "decode_seed" (teacher-forced)
//   "decode_seed": 11,                         // optional
//   "extrapolate": false                       // optional: allow prompt + decode past max_position_embeddings,
//                                              // up to 4x it (model/limits.hpp)
// }
// Sizes are checked before anything is allocated: prompt + decode steps within max_position_embeddings (or 4x it
// with "extrapolate"), token ids within the vocabulary.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "model/config.hpp"
#include "model/weights.hpp"

namespace salasim {

struct Scenario {
  std::string path, name, description;
  std::string model_path;
  ModelConfig cfg;
  WeightSource weights;
  std::vector<int32_t> prompt;
  int64_t prefill_chunk = 0;
  int decode_steps = 0;
  std::vector<int32_t> decode_tokens;
  bool extrapolate = false;  // positions past max_position_embeddings allowed (up to kExtrapolationFactor x)
};

Scenario load_scenario(const std::string& path);
// The same from the file's text (`path` names it in messages and anchors its relative paths).
Scenario parse_scenario(const std::string& text, const std::string& path);
// Deterministic pseudo-random token ids in [0, vocab): token i = mix64(mix64(seed) + i) mod vocab.
std::vector<int32_t> random_tokens(uint64_t seed, int64_t n, int vocab);
// Sets the prompt to `n` random tokens (seed from the scenario), for `--tokens N` overrides; refuses, before
// allocating, a prompt that with the scenario's decode steps passes max_positions() (model/limits.hpp).
void resize_prompt(Scenario& s, int64_t n, uint64_t seed);
// `--tokens N` and `--decode M` together (N = 0 / M < 0: keep the scenario's), checked once against
// max_positions() before allocating: N random prompt tokens from seed 7, M decode tokens from seed 11.
void override_lengths(Scenario& s, int64_t tokens, int64_t decode_steps);

}  // namespace salasim
