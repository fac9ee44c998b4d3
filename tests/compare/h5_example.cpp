// Writes small known dumps (taps.h5, taps32.h5, failures.h5, rows.h5: chosen rows as `salasim run --dump-taps
// --rows` writes them) into a folder for h5py_check.py to read.
#include <fmt/format.h>

#include <cstdio>
#include <limits>

#include "compare/dump_align.hpp"
#include "compare/hdf5_io.hpp"
#include "compare/row_select_sink.hpp"
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
    // Rows 1 and 3 of a [5, 2] tap whose value is 10 x row + column; and every other row of 40000 (a `rows` list
    // of 160 KB, past the 64 KiB an attribute may take in an object header).
    DumpInfo chosen = info;
    chosen.extra[kTapSelectionAttr] = "embed/,final/";
    chosen.extra[kRowSelectionAttr] = "1,3";
    TapFileSink file(dir + "/rows.h5", chosen, true);
    RowSelectSink a(file, {1, 3}, false);
    std::vector<double> x(10);
    for (size_t i = 0; i < x.size(); ++i) x[i] = 10.0 * double(i / 2) + double(i % 2);
    a.append("/prefill/embed/out", {5, 2}, x.data(), false);
    std::vector<int64_t> even;
    for (int64_t r = 0; r < 80000; r += 2) even.push_back(r);
    RowSelectSink b(file, even, false);  // a second row list into the same file (it holds no state tap to flush)
    std::vector<double> ones(80000, 1.0);
    b.append("/prefill/final/norm", {80000, 1}, ones.data(), false);
    a.close();
  } catch (const Error& err) {
    fmt::print(stderr, "h5_example: {}\n", err.what());
    return 2;
  }
  return 0;
}
