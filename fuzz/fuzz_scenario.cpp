// Fuzz target: a scenario file's text, parsed as if it lay in scenarios/ (so "models/tiny.json" and the other
// configs resolve), then the command-line overrides of its lengths. Lengths past max_position_embeddings, names that
// are not plain file names, token ids outside the vocabulary: each must be a clear error, with nothing allocated
// for a length that is refused.
#include <string>

#include "fuzz/support.hpp"
#include "scenarios/scenario.hpp"

using namespace salasim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::string path = std::string(SALASIM_SOURCE_DIR) + "/scenarios/fuzz-input.json";
  fuzz::expect_clean([&] {
    Scenario s = parse_scenario(text, path);
    // The overrides a user gives on the command line, at sizes taken from the input's length.
    override_lengths(s, int64_t(size) * 37, int64_t(size % 7) - 1);
  });
  return 0;
}
