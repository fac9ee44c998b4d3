// Scenario file parsing with file/field errors.
#include "scenarios/scenario.hpp"

#include <algorithm>
#include <filesystem>

#include "model/error.hpp"
#include "model/json_field.hpp"
#include "model/limits.hpp"
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
  check_positions(s.cfg, n, s.decode_steps, s.extrapolate, fmt::format("--tokens {} (scenario {})", n, s.path));
  s.prompt = random_tokens(seed, n, s.cfg.vocab_size);
}

void override_lengths(Scenario& s, int64_t tokens, int64_t decode_steps) {
  const int64_t prompt = tokens > 0 ? tokens : int64_t(s.prompt.size());
  const int64_t decode = decode_steps >= 0 ? decode_steps : s.decode_steps;
  check_positions(s.cfg, prompt, decode, s.extrapolate,
                  fmt::format("--tokens {} / --decode {} (scenario {})", prompt, decode, s.path));
  if (tokens > 0) s.prompt = random_tokens(7, tokens, s.cfg.vocab_size);
  if (decode_steps >= 0) {
    s.decode_steps = int(decode_steps);
    s.decode_tokens = random_tokens(11, decode_steps, s.cfg.vocab_size);
  }
}

static Scenario scenario_from_json(const json& j, const std::string& path) {
  if (!j.is_object()) fail("{}: expected a JSON object", path);
  JsonDoc d{j, path, ""};
  const fs::path dir = fs::path(path).parent_path();
  auto rel = [&](const std::string& p) { return fs::path(p).is_absolute() ? p : (dir / p).string(); };
  Scenario s;
  s.path = path;
  s.name = d.has("name") ? d.string("name") : fs::path(path).stem().string();
  plain_file_name(s.name, path, "name");  // it becomes tests/golden/<name>.h5 and <dump>/<name>-failures.h5
  if (d.has("description")) s.description = d.string("description");
  if (d.has("extrapolate")) s.extrapolate = d.boolean("extrapolate");
  s.model_path = rel(d.string("model"));
  s.cfg = load_config(s.model_path);

  JsonDoc w = d.object("weights");
  if (w.has("checkpoint")) s.weights = checkpoint_weights(rel(w.string("checkpoint")), tensor_inventory(s.cfg));
  else if (w.has("synthetic_seed")) s.weights = synthetic_weights(uint64_t(w.integer("synthetic_seed", 0)));
  else w.bad("synthetic_seed", "an integer seed, or a \"checkpoint\" folder instead");

  // Every length is checked against max_positions() (check_positions) before a token is allocated.
  const int64_t decode_steps = d.has("decode_steps") ? d.integer("decode_steps", 0) : 0;
  JsonDoc p = d.object("prompt");
  if (p.has("tokens")) {
    const std::vector<int64_t> ids = p.integers("tokens");
    check_positions(s.cfg, std::max<int64_t>(int64_t(ids.size()), 1), decode_steps, s.extrapolate,
                    path + ": prompt.tokens and decode_steps");
    for (int64_t t : ids) {
      if (t < 0 || t >= s.cfg.vocab_size) p.bad("tokens", fmt::format("token ids in [0, {})", s.cfg.vocab_size));
      s.prompt.push_back(int32_t(t));
    }
    if (s.prompt.empty()) p.bad("tokens", "at least one token id");
  } else {
    const uint64_t seed = uint64_t(p.integer("random_seed", 0));
    const int64_t length = p.integer("length", 1);
    check_positions(s.cfg, length, decode_steps, s.extrapolate, path + ": prompt.length and decode_steps");
    s.prompt = random_tokens(seed, length, s.cfg.vocab_size);
  }
  if (d.has("prefill_chunk")) s.prefill_chunk = d.integer("prefill_chunk", 0, max_positions(s.cfg, s.extrapolate));
  s.decode_steps = int(decode_steps);
  const uint64_t dseed = d.has("decode_seed") ? uint64_t(d.integer("decode_seed", 0)) : 11;
  s.decode_tokens = random_tokens(dseed ^ 0x6465636f6465ull, s.decode_steps, s.cfg.vocab_size);
  return s;
}

Scenario parse_scenario(const std::string& text, const std::string& path) {
  return scenario_from_json(parse_json_text(text, path), path);
}

Scenario load_scenario(const std::string& path) { return scenario_from_json(parse_json_file(path), path); }

}  // namespace salasim
