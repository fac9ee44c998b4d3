// Fuzz target: config.json text. A config that parses must let every size derived from it be computed without
// overflow (UBSan aborts on a signed wrap): the tensor inventory and parameter count, weight bytes, the caches at
// its longest sequence, the GLA state, the runner's workspace. The same text is also tried as a dense comparator.
#include <string>

#include "fuzz/support.hpp"
#include "model/config.hpp"
#include "model/inventory.hpp"
#include "model/limits.hpp"
#include "model/memory.hpp"
#include "model/runner_plan.hpp"
#include "reports/dense_config.hpp"

using namespace salasim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  fuzz::expect_clean([&] {
    const ModelConfig c = parse_config(text, "fuzz-config.json");
    const auto inv = tensor_inventory(c);
    const ParamCount pc = count_params(c, inv);
    (void)pc;
    weight_bytes_bf16(c);
    weight_bytes_w4a16(c);
    const int64_t longest = max_positions(c, true);
    kv_cache_bytes(c, longest);
    compressed_key_bytes(c, longest);
    gla_state_bytes(c);
    runner_workspace(c, kMaxChunk, longest, true).total();
    c.lightning_decay();
  });
  fuzz::expect_clean([&] {
    const reports::DenseConfig d = reports::parse_dense_config(text, "fuzz-dense.json");
    reports::dense_kv_bytes_per_token(d);
  });
  return 0;
}
