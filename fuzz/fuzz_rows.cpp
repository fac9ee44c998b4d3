// Fuzz target: `salasim run --rows LIST --taps PATTERNS` (model/tap_select.hpp): the row list parsed and resolved
// against a prompt length, the tap patterns split and checked against the tiny config's tap list, and the memory
// budget of the selection. The first 4 bytes are the prompt length (at most 65,536: "all" lists every row), the
// rest is "ROWS\nPATTERNS". A row list with items at the ends of int64 (steps, starts, stops) must resolve or be
// refused without a signed overflow or an endless loop.
#include <cstring>
#include <string>

#include "fuzz/support.hpp"
#include "model/config.hpp"
#include "model/tap_select.hpp"

using namespace salasim;

namespace {
const ModelConfig& tiny() {
  static const ModelConfig c = load_config(std::string(SALASIM_SOURCE_DIR) + "/scenarios/models/tiny.json");
  return c;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  uint32_t n32 = 0;
  std::memcpy(&n32, data, 4);
  const int64_t prompt = int64_t(n32 % 65537);
  const std::string text(reinterpret_cast<const char*>(data + 4), size - 4);
  const size_t nl = text.find('\n');
  const std::string rows = text.substr(0, nl), patterns = nl == std::string::npos ? "" : text.substr(nl + 1);
  fuzz::expect_clean([&] {
    const RowList r = parse_row_list(rows);
    const std::vector<int64_t> chosen = r.resolve(prompt);
    for (size_t i = 1; i < chosen.size(); ++i)
      if (chosen[i] <= chosen[i - 1] || chosen[i] >= prompt || chosen[0] < 0) std::abort();  // ascending, each once, in range
    if (patterns.empty() || prompt == 0) return;
    const std::vector<std::string> p = split_patterns(patterns);
    const std::vector<TapSpec> cat = tap_catalog(tiny(), prompt, 2, true);
    check_patterns(p, cat);
    dump_budget(cat, TapFilter{p}, prompt, chosen, 16384);
  });
  return 0;
}
