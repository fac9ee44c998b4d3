// Test runner entry point for Catch2 v2 and v3. GPU test binaries (SALASIM_GPU_TESTS) report
// "skipped: no GPU" with ctest's skip code 77 when no CUDA device is usable, instead of passing or failing.
#if __has_include(<catch2/catch_session.hpp>)
#include <catch2/catch_session.hpp>
#else
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#endif

#include <cstdio>
#include <cstring>
#include <string>

#ifdef SALASIM_GPU_TESTS
#include "gpu/common.hpp"
#include "scenarios/no_gpu.hpp"
#endif

int main(int argc, char** argv) {
#ifdef SALASIM_GPU_TESTS
  bool listing = false;
  for (int i = 1; i < argc; ++i) listing |= std::strncmp(argv[i], "--list", 6) == 0;
  std::string why;
  if (!listing && !salasim::gpu::available(&why)) {
    std::printf("skipped: no GPU (%s)\n", salasim::plain_no_gpu_reason(why).c_str());
    return 77;
  }
#endif
  return Catch::Session().run(argc, argv);
}
