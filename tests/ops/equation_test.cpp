// The op cards' equations (`salasim explain OP --config FILE`) carry the config they are given: the GLA decay formula
// of the config's head count, the block pool's window range of its block, kernel and stride.
#include <cmath>

#include "model/config.hpp"
#include "ops/op.hpp"
#include "tests/support/catch.hpp"
#include "tests/support/paths.hpp"

using namespace salasim;

namespace {

std::string first_step(const std::string& op, const ModelConfig& c, size_t step = 0) {
  return op::find_op(op).card.equation(c, 65536).at(step).text;
}

}  // namespace

TEST_CASE("equation: gla's decay formula is the ALiBi slopes of the config's head count") {
  ModelConfig c = load_config(test::source_path("scenarios/models/tiny-short.json"));
  // slope_h as the formula each card prints says, checked against the decays the config gives the model
  auto check = [&](int heads, const std::string& text, const std::function<double(int)>& slope) {
    c.lightning_nh = heads;
    INFO(heads << " heads");
    CHECK(first_step("gla", c).find(text) != std::string::npos);
    const std::vector<double> g = c.lightning_decay();
    REQUIRE(int(g.size()) == heads);
    for (int h = 0; h < heads; ++h) CHECK(g[size_t(h)] == -double(float(slope(h))));
  };
  check(32, "gamma_h = -2^(-(h+1)/4)", [](int h) { return std::pow(2.0, -(h + 1) / 4.0); });
  check(4, "gamma_h = -2^(-2(h+1))", [](int h) { return std::pow(2.0, -2.0 * (h + 1)); });
  check(8, "gamma_h = -2^(-(h+1))", [](int h) { return std::pow(2.0, -(h + 1.0)); });
  check(6, "gamma_h = -2^(-2(h+1)) for h < 4, -2^(-(2(h-4)+1)) for h >= 4",
        [](int h) { return h < 4 ? std::pow(2.0, -2.0 * (h + 1)) : std::pow(2.0, -(2.0 * (h - 4) + 1)); });
}

TEST_CASE("equation: select_blocks' pool covers the K1 windows that overlap a block, for the config's rules") {
  ModelConfig c = load_config(test::source_path("scenarios/models/tiny-short.json"));
  CHECK(first_step("select_blocks", c, 2).find("c in {4b-1, ..., 4b+3}") != std::string::npos);
  c.sparse.kernel_size = 64, c.sparse.kernel_stride = 32;  // windows [32c, 32c + 64) over blocks [64b, 64b + 64)
  CHECK(first_step("select_blocks", c, 2).find("c in {2b-1, ..., 2b+1}") != std::string::npos);
  c.sparse.kernel_size = 40, c.sparse.kernel_stride = 16;  // a kernel off the stride's grid: the floors themselves
  CHECK(first_step("select_blocks", c, 2).find("floor((64b - 40)/16) < c <= floor((64b + 63)/16)") !=
        std::string::npos);
}
