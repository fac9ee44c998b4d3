// HDF5 dumps: tap maps and failure dumps round-trip with their attributes; foreign or damaged files are clear
// errors.
#include <hdf5.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <limits>

#include "compare/hdf5_io.hpp"
#include "model/error.hpp"
#include "tests/support/catch.hpp"
#include "tests/support/errors.hpp"
#include "tests/support/paths.hpp"

using namespace salasim;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

TapMap sample_taps() {
  TapMap m;
  Tap f{{3, 5}, {}, false, 0};
  for (int i = 0; i < 15; ++i) f.data.push_back(std::ldexp(1.0 + i / 7.0, i - 7) * (i % 2 ? -1 : 1));
  m["/prefill/embed/out"] = f;
  m["/prefill/layer_00/sparse/select/scores"] = Tap{{1, 2, 3}, {kInf, 0.1, -kInf, kInf, 1e-30, -kInf}, false, 5};
  m["/prefill/layer_00/sparse/select/blocks"] = Tap{{1, 2, 2}, {0, 2, -1, 1}, true, 6};
  m["/prefill/layer_01/lightning/gla/state"] = Tap{{2, 1, 2}, {0.1, 0.2, 1.0 / 3, -7}, false, 9};
  m["/decode_0000/final/logits"] = Tap{{1, 0}, {}, false, 12};  // zero-size is legal
  return m;
}

DumpInfo sample_info() {
  DumpInfo i;
  i.scenario = "tiny-prefill-67";
  i.git_revision = "0123abcd";
  i.backend = "peer";
  i.extra = {{"seed", "7"}, {"note", "round trip"}};
  return i;
}

using test::error_of;

bool same_bits(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

}  // namespace

TEST_CASE("hdf5: a tap map round-trips with its attributes", "[hdf5]") {
  const std::string path = test::scratch_dir("hdf5_roundtrip") + "/taps.h5";
  const TapMap in = sample_taps();
  write_taps(path, in, sample_info());
  const TapDump d = read_taps(path);
  REQUIRE(d.taps.size() == in.size());
  for (const auto& [name, t] : in) {
    INFO(name);
    REQUIRE(d.taps.count(name));
    const Tap& u = d.taps.at(name);
    CHECK(u.shape == t.shape);
    CHECK(u.integer == t.integer);
    CHECK(u.order == t.order);
    REQUIRE(u.data.size() == t.data.size());
    for (size_t i = 0; i < t.data.size(); ++i) CHECK(same_bits(u.data[i], t.data[i]));
  }
  CHECK(d.info.scenario == "tiny-prefill-67");
  CHECK(d.info.git_revision == "0123abcd");
  CHECK(d.info.backend == "peer");
  CHECK(d.info.created.size() == 20);  // filled in: 2026-01-01T00:00:00Z
  CHECK(d.info.extra == sample_info().extra);
}

TEST_CASE("hdf5: float32 storage rounds each float value once, integers stay exact", "[hdf5]") {
  const std::string path = test::scratch_dir("hdf5_f32") + "/taps.h5";
  const TapMap in = sample_taps();
  write_taps(path, in, sample_info(), FloatStorage::Float32);
  const TapDump d = read_taps(path);
  for (const auto& [name, t] : in)
    for (size_t i = 0; i < t.data.size(); ++i) {
      INFO(name << " " << i);
      CHECK(same_bits(d.taps.at(name).data[i], t.integer ? t.data[i] : double(float(t.data[i]))));
    }
}

TEST_CASE("hdf5: a failure dump holds reference, backend, difference and inputs", "[hdf5]") {
  const std::string path = test::scratch_dir("hdf5_failures") + "/failures.h5";
  const TapMap ref = sample_taps();
  FailureEntry e;
  e.name = "/prefill/layer_01/lightning/gla/state";
  e.reference = ref.at(e.name);
  e.backend = ref.at(e.name);
  e.backend->data[2] = 0.5;
  e.inputs["k"] = ref.at("/prefill/embed/out");
  e.inputs["v"] = ref.at("/prefill/layer_00/sparse/select/scores");
  FailureEntry missing;
  missing.name = "/prefill/layer_00/sparse/select/blocks";
  missing.reference = ref.at(missing.name);
  write_failures(path, {e, missing}, sample_info());

  const FailureDump d = read_failures(path);
  REQUIRE(d.entries.size() == 2);
  const FailureEntry& a = d.entries[1];  // by name: ".../layer_00/..." sorts first
  CHECK(a.name == e.name);
  REQUIRE(a.reference);
  REQUIRE(a.backend);
  CHECK(a.backend->data == e.backend->data);
  CHECK(a.reference->data == e.reference->data);
  CHECK(a.inputs.size() == 2);
  CHECK(a.inputs.at("k").data == e.inputs.at("k").data);
  CHECK(d.entries[0].reference);
  CHECK_FALSE(d.entries[0].backend);
  CHECK(d.info.backend == "peer");

  // The difference is there only where both sides are.
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(f >= 0);
  CHECK(H5Lexists(f, (e.name + "/difference").c_str(), H5P_DEFAULT) > 0);
  CHECK(H5Lexists(f, (e.name + "/inputs").c_str(), H5P_DEFAULT) > 0);
  CHECK(H5Lexists(f, (missing.name + "/difference").c_str(), H5P_DEFAULT) == 0);
  hid_t ds = H5Dopen2(f, (e.name + "/difference").c_str(), H5P_DEFAULT);
  std::vector<double> diff(4);
  CHECK(H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, diff.data()) >= 0);
  CHECK(diff[2] == 0.5 - e.reference->data[2]);
  CHECK(diff[0] == 0.0);
  H5Dclose(ds);
  H5Fclose(f);
}

TEST_CASE("hdf5: missing, foreign and damaged files are errors naming the file and what is wrong", "[hdf5]") {
  const std::string dir = test::scratch_dir("hdf5_errors");
  CHECK(error_of([&] { read_taps(dir + "/absent.h5"); }).find("absent.h5: no such file") != std::string::npos);

  std::ofstream(dir + "/text.h5") << "not hdf5\n";
  CHECK(error_of([&] { read_taps(dir + "/text.h5"); }).find("not an HDF5 file") != std::string::npos);

  const std::string bare = dir + "/bare.h5";
  H5Fclose(H5Fcreate(bare.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
  CHECK(error_of([&] { read_taps(bare); }).find("'salasim_layout' is missing") != std::string::npos);

  const std::string fails = dir + "/failures.h5";
  write_failures(fails, {}, sample_info());
  CHECK(error_of([&] { read_taps(fails); }).find("is 'failures', expected 'taps'") != std::string::npos);

  // A tap dump whose dataset lost its 'order' attribute.
  const std::string damaged = dir + "/damaged.h5";
  write_taps(damaged, sample_taps(), sample_info());
  hid_t f = H5Fopen(damaged.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  REQUIRE(f >= 0);
  REQUIRE(H5Adelete_by_name(f, "/prefill/embed/out", "order", H5P_DEFAULT) >= 0);
  H5Fclose(f);
  const std::string msg = error_of([&] { read_taps(damaged); });
  INFO(msg);
  CHECK(msg.find("damaged.h5") != std::string::npos);
  CHECK(msg.find("/prefill/embed/out") != std::string::npos);
  CHECK(msg.find("'order' is missing") != std::string::npos);
}

TEST_CASE("hdf5: bad tap names and non-integer values in integer taps are refused on write", "[hdf5]") {
  const std::string dir = test::scratch_dir("hdf5_write_errors");
  const Tap t{{1}, {1.0}, false, 0};
  CHECK_THROWS_AS(write_taps(dir + "/a.h5", {{"prefill/embed/out", t}}, {}), Error);
  CHECK_THROWS_AS(write_taps(dir + "/b.h5", {{"/prefill//embed/out", t}}, {}), Error);
  CHECK_THROWS_AS(write_taps(dir + "/c.h5", {{"/prefill/embed", t}, {"/prefill/embed/out", t}}, {}), Error);
  CHECK_THROWS_AS(write_taps(dir + "/d.h5", {{"/prefill/layer_00/sparse/select/blocks", Tap{{1}, {0.5}, true, 0}}}, {}),
                  Error);
  CHECK_THROWS_AS(write_taps(dir + "/no_such_dir/e.h5", {{"/prefill/embed/out", t}}, {}), Error);
  DumpInfo clash;
  clash.extra = {{"backend", "x"}};
  CHECK_THROWS_AS(write_taps(dir + "/f.h5", {}, clash), Error);
}
