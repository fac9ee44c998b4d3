// TapFileSink: a tap dump written as a run records, read back by read_taps as exactly what a TapMapSink holds.
#include <filesystem>
#include <fstream>

#include "compare/hdf5_io.hpp"
#include "compare/tap_file_sink.hpp"
#include "tests/support/catch.hpp"
#include "tests/support/errors.hpp"
#include "tests/support/paths.hpp"
#include "tests/support/same_taps.hpp"

using namespace salasim;

namespace {

// One recording, fed to any sink: rows appended over pieces (one piece off any chunk grid, one of no rows), wide
// rows past one chunk, an integer tap, a state replaced at the same shape and at a new one, a tap of zero width.
void record(TapSink& s) {
  std::vector<double> a(7 * 3), wide(3 * 70000), ids{0, 2, -1, 1, 5, 3};
  for (size_t i = 0; i < a.size(); ++i) a[i] = 0.25 * double(i) - 1.0 / 3;
  for (size_t i = 0; i < wide.size(); ++i) wide[i] = std::sin(double(i));
  s.append("/prefill/embed/out", {4, 3}, a.data(), false);
  s.append("/prefill/layer_00/sparse/select/blocks", {2, 1, 2}, ids.data(), true);
  s.replace("/prefill/layer_01/lightning/gla/state", Tap{{1, 2, 2}, {1, 2, 3, 4}, false, 0});
  s.append("/prefill/embed/out", {0, 3}, a.data(), false);
  s.append("/prefill/embed/out", {3, 3}, a.data() + 12, false);
  s.append("/prefill/layer_00/sparse/select/blocks", {1, 1, 2}, ids.data() + 4, true);
  s.replace("/prefill/layer_01/lightning/gla/state", Tap{{1, 2, 2}, {5, 6, 7, 8}, false, 0});
  s.replace("/prefill/layer_00/sparse/compress/k1", Tap{{1, 2}, {0.5, 0.75}, false, 0});
  s.replace("/prefill/layer_00/sparse/compress/k1", Tap{{2, 2}, {0.5, 0.75, -1, 9}, false, 0});
  s.append("/prefill/layer_00/mlp/out", {1, 70000}, wide.data(), false);  // 560 KB rows: a chunk of one row
  s.append("/prefill/layer_00/mlp/out", {2, 70000}, wide.data() + 70000, false);
  s.append("/decode_0000/final/empty", {1, 0}, nullptr, false);
  s.append("/decode_0000/final/empty", {2, 0}, nullptr, false);
  s.append("/decode_0000/final/logits", {1, 3}, a.data(), false);
}

}  // namespace

TEST_CASE("tap dump: a file written as taps arrive reads back as the tap map the run would hold", "[hdf5]") {
  const std::string path = test::scratch_dir("tap_file_sink") + "/taps.h5";
  TapMap want;
  TapMapSink map(&want);
  record(map);
  DumpInfo info;
  info.scenario = "unit";
  info.backend = "reference";
  TapFileSink file(path, info);
  record(file);
  CHECK(file.close() == int(want.size()));
  const TapDump d = read_taps(path);
  test::check_same_taps(d.taps, want);
  CHECK(d.info.scenario == "unit");
  CHECK(d.info.backend == "reference");
  CHECK(want.at("/prefill/embed/out").shape == std::vector<int64_t>{7, 3});  // the recording is what it claims
  CHECK(want.at("/prefill/layer_00/sparse/compress/k1").shape == std::vector<int64_t>{2, 2});
  CHECK(want.at("/decode_0000/final/empty").shape == std::vector<int64_t>{3, 0});
}

TEST_CASE("tap dump: a file never closed never appears, and bad values name the file and the tap", "[hdf5]") {
  const std::string dir = test::scratch_dir("tap_file_sink_bad");
  {
    TapFileSink file(dir + "/half.h5", DumpInfo{});
    const double x = 1;
    file.append("/prefill/embed/out", {1, 1}, &x, false);
    CHECK_FALSE(std::filesystem::exists(dir + "/half.h5"));  // written under a temporary name until close()
  }
  CHECK(std::filesystem::is_empty(dir));  // and the temporary is gone
  {  // an existing file is kept when the sink may not replace it, and by a sink never closed
    std::ofstream(dir + "/old.h5") << "old";
    CHECK(test::error_of([&] { TapFileSink(dir + "/old.h5", DumpInfo{}, false, false); }).find("exists already") !=
          std::string::npos);
    TapFileSink file(dir + "/old.h5", DumpInfo{});
  }
  CHECK(std::filesystem::file_size(dir + "/old.h5") == 3);
  std::filesystem::remove(dir + "/old.h5");

  TapFileSink file(dir + "/bad.h5", DumpInfo{});
  const double half = 0.5;
  CHECK(test::error_of([&] {
          file.append("/prefill/layer_00/sparse/select/blocks", {1, 1}, &half, true);
        }) ==
        dir + "/bad.h5: dataset /prefill/layer_00/sparse/select/blocks: integer tap holds 0.5, expected whole numbers");
  CHECK(test::error_of([&] {
          file.append("prefill//x", {1, 1}, &half, false);
        }).find("is not a path like") != std::string::npos);
  CHECK(test::error_of([&] {
          TapFileSink(dir + "/no-such-folder/x.h5", DumpInfo{});
        }).find("no-such-folder does not exist") != std::string::npos);
}
