// The reference generator and its memory plan.
#include "scenarios/ruler/generator.hpp"

#include <fmt/format.h>

#include "model/error.hpp"
#include "model/inventory.hpp"
#include "model/machine_memory.hpp"
#include "reference/model.hpp"
#include "reference/weights.hpp"

namespace salasim::ruler {

int64_t reference_bytes(const ModelConfig& c, int64_t len) {
  const int64_t params = count_params(c, tensor_inventory(c)).total;
  const int64_t kv = int64_t(c.n_layers(Mixer::Sparse)) * 2 * c.kv_dim() * len * 8 * 2;  // K, V grown geometrically
  const int64_t width = c.hidden_size * 4 + 4 * c.lightning_dim() + 2 * int64_t(c.intermediate_size) + 2 * c.q_dim();
  const int64_t act = len * width * 8 * 2;
  const int64_t blocks = (len + c.sparse.block_size - 1) / c.sparse.block_size;
  const int64_t sel = len * c.num_key_value_heads * (c.sparse.k_sel() + blocks) * 8;  // selection taps (recall)
  return params * 8 + kv + act + sel;
}

namespace {

struct RefGenerator : Generator {
  ModelConfig cfg;
  std::shared_ptr<const ref::RefWeights> w;
  std::string describe() const override { return "reference (float64, CPU)"; }
  Generation generate(const std::vector<int32_t>& prompt, const GenerateOptions& o) override {
    ref::RefModel m(cfg, w);
    return ref::generate(m, prompt, o);
  }
};

}  // namespace

std::unique_ptr<Generator> make_reference_generator(const ModelConfig& c, const WeightSource& w,
                                                    const GeneratorOptions& o) {
  // the machine's memory as this process may use it: physical, the cgroup's limit, the address-space limit
  check_fits_in_memory(double(reference_bytes(c, o.max_context)),
                       fmt::format("the float64 reference for {} tokens of {}", o.max_context, c.source),
                       "the reference backend is for short lengths on small configs; use --backend gpu");
  auto g = std::make_unique<RefGenerator>();
  g->cfg = c;
  g->w = ref::load_ref_weights(c, w);
  return g;
}

}  // namespace salasim::ruler
