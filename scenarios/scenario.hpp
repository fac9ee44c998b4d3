// Scenario files: which model, which weights, which prompt, how the prefill is split, how many decode steps.
//
// {
//   "name": "tiny-sparse",                     // optional; defaults to the file name
//   "description": "...",                      // optional
//   "model": "models/tiny.json",               // config.json, relative to the scenario file
//   "weights": {"synthetic_seed": 1}           // or {"checkpoint": "DIR"} (relative to the scenario file)
//   "prompt": {"random_seed": 7, "length": 9000}   // or {"tokens": [1, 2, ...]}
//   "prefill_chunk": 4096,                     // optional: feed the prompt in pieces of this size (0: one call)
//   "decode_steps": 8,                         // optional; decode tokens are random from "decode_seed" (teacher-forced)
//   "decode_seed": 11                          // optional
// }
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
};

Scenario load_scenario(const std::string& path);
// Deterministic pseudo-random token ids in [0, vocab): token i = mix64(mix64(seed) + i) mod vocab.
std::vector<int32_t> random_tokens(uint64_t seed, int64_t n, int vocab);
// Sets the prompt to `n` random tokens (seed from the scenario), for `--tokens N` overrides.
void resize_prompt(Scenario& s, int64_t n, uint64_t seed);

}  // namespace salasim
