// Checkpoint against inventory: a complete export passes; each kind of difference is listed.
#include <filesystem>

#include "model/config.hpp"
#include "model/error.hpp"
#include "model/inventory.hpp"
#include "model/weights.hpp"
#include "tests/support/catch.hpp"
#include "tests/support/paths.hpp"

using namespace salasim;

namespace {
int count_kind(const CheckpointReport& r, const std::string& kind, const std::string& name) {
  int n = 0;
  for (const CheckpointIssue& i : r.issues) n += i.kind == kind && i.name == name;
  return n;
}
}  // namespace

TEST_CASE("checkpoint: an exported tiny checkpoint matches the inventory and reads back exactly", "[checkpoint]") {
  ModelConfig c = load_config(test::tiny_config());
  auto inv = tensor_inventory(c);
  std::string dir = test::scratch_dir("ckpt_ok");
  export_checkpoint(dir, c, inv, synthetic_weights(5), 3);
  Checkpoint ck(dir);
  CHECK(ck.sharded());
  CheckpointReport r = check_checkpoint(ck, inv);
  CHECK(r.ok());
  CHECK(r.params_present == count_params(c, inv).total);
  WeightSource w = checkpoint_weights(dir, inv);
  for (const char* n : {"model.layers.3.self_attn.o_gate.weight", "lm_head.weight", "model.norm.weight"}) {
    const TensorSpec& t = *find_tensor(inv, n);
    CHECK(weight_tensor(w, t) == weight_tensor(synthetic_weights(5), t));
  }
}

TEST_CASE("checkpoint: missing, extra, mis-shaped and mis-typed tensors are each listed", "[checkpoint]") {
  ModelConfig c = load_config(test::tiny_config());
  auto inv = tensor_inventory(c);
  auto bad = inv;
  bad.erase(bad.begin() + 3);                                   // missing
  bad[5].shape[0] += 1;                                         // shape
  bad.push_back(TensorSpec{"model.layers.0.self_attn.q_norm.weight", {128}, DType::BF16, Component::SparseMixer, 0, 0});
  std::string dir = test::scratch_dir("ckpt_bad");
  export_checkpoint(dir, c, bad, synthetic_weights(5), 2);
  Checkpoint ck(dir);
  auto expect = inv;
  expect[7].dtype = DType::F32;  // inventory says F32 where the file holds BF16: a dtype problem
  CheckpointReport r = check_checkpoint(ck, expect);
  CHECK_FALSE(r.ok());
  CHECK(count_kind(r, "missing", inv[3].name) == 1);
  CHECK(count_kind(r, "shape", inv[6].name) == 1);
  CHECK(count_kind(r, "dtype", inv[7].name) == 1);
  CHECK(count_kind(r, "extra", "model.layers.0.self_attn.q_norm.weight") == 1);
  CHECK(r.issues.size() == 4);
  CHECK_THROWS_AS(checkpoint_weights(dir, expect), Error);
}
