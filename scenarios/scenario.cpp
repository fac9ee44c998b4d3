// Scenario file parsing with file/field errors.
#include "scenarios/scenario.hpp"

#include <filesystem>

#include "model/error.hpp"
#include "model/json_field.hpp"
#include "model/synth.hpp"

namespace fs = std::filesystem;

namespace salasim {

std::vector<int32_t> random_tokens(uint64_t seed, int64_t n, int vocab) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  const uint64_t key = mix64(seed ^ 0x70726f6d7074ull);  // "prompt"
  for (int64_t i = 0; i < n; ++i) t[size_t(i)] = int32_t(mix64(key + uint64_t(i)) % uint64_t(vocab));
  return t;
}

void resize_prompt(Scenario& s, int64_t n, uint64_t seed) {
  if (n < 1) fail("--tokens {}: need at least one token", n);
  s.prompt = random_tokens(seed, n, s.cfg.vocab_size);
}

Scenario load_scenario(const std::string& path) {
  json j = parse_json_file(path);
  if (!j.is_object()) fail("{}: expected a JSON object", path);
  JsonDoc d{j, path, ""};
  const fs::path dir = fs::path(path).parent_path();
  auto rel = [&](const std::string& p) { return fs::path(p).is_absolute() ? p : (dir / p).string(); };
  Scenario s;
  s.path = path;
  s.name = d.has("name") ? d.string("name") : fs::path(path).stem().string();
  if (d.has("description")) s.description = d.string("description");
  s.model_path = rel(d.string("model"));
  s.cfg = load_config(s.model_path);

  JsonDoc w = d.object("weights");
  if (w.has("checkpoint")) s.weights = checkpoint_weights(rel(w.string("checkpoint")), tensor_inventory(s.cfg));
  else if (w.has("synthetic_seed")) s.weights = synthetic_weights(uint64_t(w.integer("synthetic_seed", 0)));
  else w.bad("synthetic_seed", "an integer seed, or a \"checkpoint\" folder instead");

  JsonDoc p = d.object("prompt");
  if (p.has("tokens")) {
    for (int64_t t : p.integers("tokens")) {
      if (t < 0 || t >= s.cfg.vocab_size) p.bad("tokens", fmt::format("token ids in [0, {})", s.cfg.vocab_size));
      s.prompt.push_back(int32_t(t));
    }
    if (s.prompt.empty()) p.bad("tokens", "at least one token id");
  } else {
    s.prompt = random_tokens(uint64_t(p.integer("random_seed", 0)), p.integer("length", 1), s.cfg.vocab_size);
  }
  if (d.has("prefill_chunk")) s.prefill_chunk = d.integer("prefill_chunk", 0);
  if (d.has("decode_steps")) s.decode_steps = int(d.integer("decode_steps", 0));
  const uint64_t dseed = d.has("decode_seed") ? uint64_t(d.integer("decode_seed", 0)) : 11;
  s.decode_tokens = random_tokens(dseed ^ 0x6465636f6465ull, s.decode_steps, s.cfg.vocab_size);
  return s;
}

}  // namespace salasim
