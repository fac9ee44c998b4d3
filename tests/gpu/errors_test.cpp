// A failing CUDA call is a device error: salasim::DeviceError, which the salasim command maps to exit code 3
// (docs/input-limits.md), not 2 (bad input).
#include "gpu/common.hpp"
#include "model/error.hpp"
#include "tests/support/catch.hpp"

using namespace salasim;

TEST_CASE("errors: CUDA failures are DeviceError, exit code 3", "[gpu][errors]") {
  std::string what;
  try {
    gpu::dev_alloc(size_t(1) << 62, "an impossible test buffer");  // 4 EiB: cudaMalloc fails
  } catch (const DeviceError& e) {
    what = e.what();
    CHECK(exit_report(e).code == kExitInternal);
    CHECK(exit_report(e).message.rfind("salasim: device error: cudaMalloc of", 0) == 0);
  }
  CHECK(what.find("an impossible test buffer") != std::string::npos);

  // A checked CUDA call that fails (a copy to a null device pointer) throws the same class.
  const float x = 1;
  CHECK_THROWS_AS(gpu::copy_to_device(nullptr, &x, sizeof x), DeviceError);
  gpu::synchronize();  // the device is still usable: the failures above are not sticky
}
