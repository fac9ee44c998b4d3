// Input bounds: sequence length against the config, and file names from input files.
#include "model/limits.hpp"

#include "model/checked.hpp"
#include "model/error.hpp"
#include "model/json_field.hpp"

namespace salasim {

namespace {
// 1048576, not 1.04858e+06; 1e+12, not 1000000000000.
std::string bound_text(double v) {
  if (v == double(int64_t(v)) && v > -1e7 && v < 1e7) return std::to_string(int64_t(v));
  return fmt::format("{:g}", v);
}
}  // namespace

std::string FloatRange::interval() const {
  return fmt::format("{}{}, {}]", lo_open ? "(" : "[", bound_text(lo), bound_text(hi));
}

std::string FloatRange::text() const { return fmt::format("a number in {} ({})", interval(), why); }

int64_t max_positions(const ModelConfig& c, bool extrapolate) {
  return extrapolate ? checked_mul(c.max_position_embeddings, kExtrapolationFactor,
                                   c.source + ": max_position_embeddings x " + std::to_string(kExtrapolationFactor))
                     : c.max_position_embeddings;
}

void check_positions(const ModelConfig& c, int64_t prompt, int64_t decode, bool extrapolate, const std::string& where) {
  if (prompt < 1) fail("{}: a prompt of {} tokens; expected at least one token", where, prompt);
  if (decode < 0) fail("{}: {} decode steps; expected 0 or more", where, decode);
  const int64_t limit = max_positions(c, extrapolate);
  if (prompt <= limit && decode <= limit - prompt) return;
  // Extrapolating, the limit is on the prompt (the paper's 2048K prompts), and the answer may run past it.
  if (extrapolate && prompt <= limit && decode <= kMaxDecodeTokens) return;
  if (extrapolate)
    fail(
        "{}: prompt of {} tokens + {} decode steps is past {} positions, {}x max_position_embeddings = {} of {} "
        "(the furthest this simulator extrapolates a prompt; at most {} decode steps past it)",
        where, prompt, decode, limit, kExtrapolationFactor, c.max_position_embeddings, c.source, kMaxDecodeTokens);
  fail(
      "{}: prompt of {} tokens + {} decode steps is past max_position_embeddings = {} of {}, the length the model "
      "was trained to. To run past it (the paper evaluates up to 4x, 2048K), opt in: --extrapolate on the command "
      "line, or \"extrapolate\": true in the scenario (up to {} positions)",
      where, prompt, decode, c.max_position_embeddings, c.source, max_positions(c, true));
}

const std::string& plain_file_name(const std::string& value, const std::string& where, const std::string& field) {
  bool ok = !value.empty() && value != "." && value != ".." && value.size() <= 255;
  for (unsigned char ch : value) ok = ok && ch != '/' && ch != '\\' && ch >= 0x20 && ch != 0x7f;
  if (!ok) {
    fail(
        "{}: field '{}' is '{}'; expected a plain file name (not empty, not '.' or '..', no '/' or '\\', no "
        "control characters, at most 255 bytes)",
        where, excerpt(field), excerpt(value));
  }
  return value;
}

}  // namespace salasim
