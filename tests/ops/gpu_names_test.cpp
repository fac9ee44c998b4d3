// In a build with the CUDA path (no GPU needed: the lists, not the kernels): the benchmark cases (bench/op_cases.hpp)
// and the CUDA backend of `salasim op` (scenarios/op_gpu.cpp) cover every op of the registry, under its name.
#include <set>
#include <string>

#include "bench/op_cases.hpp"
#include "ops/op.hpp"
#include "scenarios/op_backends.hpp"
#include "tests/support/catch.hpp"

using namespace salasim;

TEST_CASE("registry: the benchmarks and salasim op's CUDA backend name the registry's ops", "[registry]") {
  std::set<std::string> ops;
  for (const op::OpSpec& s : op::registry()) ops.insert(s.name);
  std::set<std::string> benched;
  for (const std::string& n : bench::op_names()) {
    INFO(n);
    CHECK(ops.count(bench::base_op(n)) == 1);
    benched.insert(bench::base_op(n));
  }
  CHECK(benched == ops);
  const std::vector<std::string> gpu = gpu_op_names();
  CHECK(std::set<std::string>(gpu.begin(), gpu.end()) == ops);
}
