// Fuzz target: a .safetensors file (header length, JSON header, data section), read as a checkpoint would be: every
// tensor's first row converted where its dtype is a float type, and the file checked against the tiny config's
// inventory. An input starting with '{' is instead a model.safetensors.index.json beside one valid shard
// (model-00001-of-00001.safetensors holding "model.embed_tokens.weight" and "x"), so the index's weight_map is
// fuzzed too (shard names that leave the folder must be refused).
#include <filesystem>
#include <string>
#include <vector>

#include "fuzz/support.hpp"
#include "model/config.hpp"
#include "model/inventory.hpp"
#include "model/safetensors.hpp"
#include "model/weights.hpp"

using namespace salasim;

namespace {

const std::vector<TensorSpec>& tiny_inventory() {
  static const std::vector<TensorSpec> inv =
      tensor_inventory(load_config(std::string(SALASIM_SOURCE_DIR) + "/scenarios/models/tiny.json"));
  return inv;
}

void read_checkpoint(const Checkpoint& ck) {
  for (const StTensor* t : ck.tensors()) {
    if (t->numel() == 0) continue;
    if (t->dtype != DType::BF16 && t->dtype != DType::F16 && t->dtype != DType::F32 && t->dtype != DType::F64) continue;
    std::vector<double> row(size_t(t->row_elems()));
    read_rows(*t, 0, 1, row.data());
  }
  check_checkpoint(ck, tiny_inventory());
}

const std::string& index_dir() {
  static const std::string dir = [] {
    const std::string d = fuzz::scratch_dir() + "/index";
    std::filesystem::create_directories(d);
    StWrite a{"model.embed_tokens.weight", DType::F32, {2, 2}, std::vector<uint8_t>(16, 0)};
    StWrite b{"x", DType::BF16, {3}, std::vector<uint8_t>(6, 0)};
    write_safetensors(d + "/model-00001-of-00001.safetensors", {a, b});
    return d;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tiny_inventory();
  if (size > 0 && data[0] == '{') {
    const std::string dir = index_dir();
    fuzz::write_scratch("index/model.safetensors.index.json", data, size);
    fuzz::expect_clean([&] { read_checkpoint(Checkpoint(dir)); });
    return 0;
  }
  const std::string path = fuzz::write_scratch("fuzz.safetensors", data, size);
  fuzz::expect_clean([&] { read_checkpoint(Checkpoint(path)); });
  return 0;
}
