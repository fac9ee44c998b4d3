// Writes small known dumps (taps.h5, taps32.h5, failures.h5) into a folder for h5py_check.py to read.
#include <fmt/format.h>

#include <cstdio>
#include <limits>

#include "compare/hdf5_io.hpp"
#include "model/error.hpp"

using namespace salasim;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  const double inf = std::numeric_limits<double>::infinity();
  TapMap taps;
  Tap e{{3, 4}, {}, false, 0};
  for (int i = 0; i < 12; ++i) e.data.push_back(i * 0.5 - 1);
  taps["/prefill/embed/out"] = e;
  taps["/prefill/layer_00/sparse/select/blocks"] = Tap{{1, 2, 3}, {0, 1, -1, 2, -1, -1}, true, 1};
  taps["/prefill/layer_00/sparse/select/scores"] = Tap{{1, 2, 3}, {inf, 0.25, -inf, inf, 3.5, -inf}, false, 2};
  DumpInfo info;
  info.scenario = "h5py-check";
  info.git_revision = "abc123";
  info.backend = "example";
  info.extra = {{"seed", "42"}};
  FailureEntry f;
  f.name = "/prefill/layer_00/mlp/out";
  f.reference = Tap{{2, 2}, {1, 2, 3, 4}, false, 7};
  f.backend = Tap{{2, 2}, {1, 2, 3, 5}, false, 7};
  f.inputs["b"] = Tap{{2}, {0.5, -0.5}, false, 6};
  try {
    write_taps(dir + "/taps.h5", taps, info);
    write_taps(dir + "/taps32.h5", taps, info, FloatStorage::Float32);
    write_failures(dir + "/failures.h5", {f}, info);
  } catch (const Error& err) {
    fmt::print(stderr, "h5_example: {}\n", err.what());
    return 2;
  }
  return 0;
}
