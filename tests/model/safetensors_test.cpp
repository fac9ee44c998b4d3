// safetensors: round trips (single file, sharded, row ranges) and each kind of corruption.
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "model/bf16.hpp"
#include "model/error.hpp"
#include "model/safetensors.hpp"
#include "model/shape.hpp"
#include "tests/support/catch.hpp"
#include "tests/support/paths.hpp"

using namespace salasim;
namespace fs = std::filesystem;

namespace {

StWrite bf16_tensor(const std::string& name, std::vector<int64_t> shape, std::vector<float>& values, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd;
  const int64_t n = shape_numel(shape);
  StWrite w{name, DType::BF16, shape, std::vector<uint8_t>(size_t(n) * 2)};
  values.resize(size_t(n));
  for (int64_t i = 0; i < n; ++i) {
    uint16_t b = bf16_from_float(nd(rng));
    values[size_t(i)] = float_from_bf16(b);
    std::memcpy(&w.bytes[size_t(i) * 2], &b, 2);
  }
  return w;
}

StWrite f32_tensor(const std::string& name, std::vector<int64_t> shape, std::vector<float>& values, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> ud(-3, 3);
  const int64_t n = shape_numel(shape);
  values.resize(size_t(n));
  StWrite w{name, DType::F32, shape, std::vector<uint8_t>(size_t(n) * 4)};
  for (int64_t i = 0; i < n; ++i) values[size_t(i)] = ud(rng);
  std::memcpy(w.bytes.data(), values.data(), w.bytes.size());
  return w;
}

std::vector<uint8_t> slurp(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}
void spit(const std::string& p, const std::vector<uint8_t>& b) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
}

// Writes a file with a hand-made header and n data bytes.
std::string raw_file(const std::string& dir, const std::string& header, size_t data_bytes) {
  std::string b(8 + header.size() + data_bytes, char(0x3c));
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) b[size_t(i)] = char(uint8_t(n >> (8 * i)));
  std::copy(header.begin(), header.end(), b.begin() + 8);
  std::string p = dir + "/raw.safetensors";
  std::ofstream(p, std::ios::binary | std::ios::trunc) << b;
  return p;
}

std::string open_error(const std::string& path) {
  try {
    Checkpoint ck(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("safetensors: single-file round trip keeps values, shapes and metadata", "[safetensors]") {
  std::string dir = test::scratch_dir("st_roundtrip");
  std::vector<float> a, b;
  std::vector<StWrite> ts{bf16_tensor("w.a", {7, 5}, a, 1), f32_tensor("w.b", {3, 2, 4}, b, 2)};
  write_safetensors(dir + "/model.safetensors", ts, {{"format", "pt"}});
  SafetensorsFile f(dir + "/model.safetensors");
  CHECK(f.metadata().at("format") == "pt");
  Checkpoint ck(dir);
  CHECK_FALSE(ck.sharded());
  REQUIRE(ck.tensors().size() == 2);
  const StTensor& ta = ck.at("w.a");
  CHECK(ta.dtype == DType::BF16);
  CHECK(ta.shape == std::vector<int64_t>{7, 5});
  std::vector<float> got(35);
  read_rows(ta, 0, 7, got.data());
  CHECK(got == a);
  std::vector<double> gb(24);
  read_rows(ck.at("w.b"), 0, 3, gb.data());
  for (size_t i = 0; i < 24; ++i) CHECK(gb[i] == double(b[i]));
}

TEST_CASE("safetensors: row ranges read exactly the asked rows", "[safetensors]") {
  std::string dir = test::scratch_dir("st_rows");
  std::vector<float> a;
  write_safetensors(dir + "/x.safetensors", {bf16_tensor("t", {9, 6}, a, 3)});
  Checkpoint ck(dir + "/x.safetensors");
  std::vector<float> got(3 * 6);
  read_rows(ck.at("t"), 4, 3, got.data());
  for (int i = 0; i < 18; ++i) CHECK(got[size_t(i)] == a[size_t(4 * 6 + i)]);
  CHECK_THROWS_AS(read_rows(ck.at("t"), 7, 3, got.data()), Error);
}

TEST_CASE("safetensors: F16 converts exactly", "[safetensors]") {
  CHECK(half_to_float(0x3c00) == 1.0f);
  CHECK(half_to_float(0xc000) == -2.0f);
  CHECK(half_to_float(0x0001) == std::ldexp(1.0f, -24));  // smallest subnormal
  CHECK(half_to_float(0x7bff) == 65504.0f);
  CHECK(std::isinf(half_to_float(0x7c00)));
}

TEST_CASE("safetensors: sharded round trip through the index", "[safetensors]") {
  std::string dir = test::scratch_dir("st_sharded");
  std::vector<float> a, b, c;
  std::vector<StWrite> ts{bf16_tensor("x", {4, 4}, a, 4), bf16_tensor("y", {2, 8}, b, 5), f32_tensor("z", {5}, c, 6)};
  write_sharded_checkpoint(dir, ts, {0, 1, 1});
  Checkpoint ck(dir);
  CHECK(ck.sharded());
  REQUIRE(ck.tensors().size() == 3);
  std::vector<float> got(16);
  read_rows(ck.at("y"), 0, 2, got.data());
  CHECK(got == b);
  CHECK(ck.at("x").file != ck.at("y").file);
}

TEST_CASE("safetensors: truncated file is rejected", "[safetensors]") {
  std::string dir = test::scratch_dir("st_trunc");
  std::vector<float> a;
  write_safetensors(dir + "/model.safetensors", {bf16_tensor("t", {16, 16}, a, 7)});
  auto bytes = slurp(dir + "/model.safetensors");
  bytes.resize(bytes.size() - 10);
  spit(dir + "/model.safetensors", bytes);
  std::string e = open_error(dir);
  CHECK(contains(e, "model.safetensors"));
  CHECK(contains(e, "outside the data section"));
  spit(dir + "/model.safetensors", {1, 2, 3});
  CHECK(contains(open_error(dir), "shorter than the 8-byte header length"));
}

TEST_CASE("safetensors: bad header length is rejected", "[safetensors]") {
  std::string dir = test::scratch_dir("st_hlen");
  std::string p = raw_file(dir, "{}", 0);
  auto bytes = slurp(p);
  bytes[0] = 0xff;
  bytes[1] = 0xff;
  spit(p, bytes);
  CHECK(contains(open_error(p), "bad header length"));
  p = raw_file(dir, "{\"t\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]", 4);  // not closed
  CHECK(contains(open_error(p), "not well-formed JSON"));
}

TEST_CASE("safetensors: offsets out of range are rejected", "[safetensors]") {
  std::string dir = test::scratch_dir("st_offsets");
  std::string p = raw_file(dir, R"({"t": {"dtype": "F32", "shape": [4], "data_offsets": [8, 24]}})", 16);
  std::string e = open_error(p);
  CHECK(contains(e, "'t'"));
  CHECK(contains(e, "outside the data section of 16 bytes"));
  p = raw_file(dir, R"({"t": {"dtype": "F32", "shape": [1], "data_offsets": [8, 4]}})", 16);
  CHECK(contains(open_error(p), "end before they begin"));
  p = raw_file(dir, R"({"t": {"dtype": "F32", "shape": [1], "data_offsets": [-4, 0]}})", 16);
  CHECK(contains(open_error(p), "non-negative"));
}

TEST_CASE("safetensors: unknown dtype is rejected", "[safetensors]") {
  std::string dir = test::scratch_dir("st_dtype");
  std::string p = raw_file(dir, R"({"t": {"dtype": "Q4_K", "shape": [4], "data_offsets": [0, 8]}})", 8);
  std::string e = open_error(p);
  CHECK(contains(e, "unknown dtype 'Q4_K'"));
}

TEST_CASE("safetensors: shape and byte size mismatch is rejected", "[safetensors]") {
  std::string dir = test::scratch_dir("st_shape");
  std::string p = raw_file(dir, R"({"t": {"dtype": "BF16", "shape": [3, 3], "data_offsets": [0, 16]}})", 16);
  std::string e = open_error(p);
  CHECK(contains(e, "span 16 bytes"));
  CHECK(contains(e, "needs 18"));
}

TEST_CASE("safetensors: overlapping tensors are rejected", "[safetensors]") {
  std::string dir = test::scratch_dir("st_overlap");
  std::string p = raw_file(
      dir, R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}, "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})",
      16);
  CHECK(contains(open_error(p), "overlap"));
}

TEST_CASE("safetensors: sharded index naming a missing file is rejected", "[safetensors]") {
  std::string dir = test::scratch_dir("st_missing_shard");
  std::vector<float> a, b;
  write_sharded_checkpoint(dir, {bf16_tensor("x", {2, 2}, a, 8), bf16_tensor("y", {2, 2}, b, 9)}, {0, 1});
  fs::remove(fs::path(dir) / "model-00002-of-00002.safetensors");
  std::string e = open_error(dir);
  CHECK(contains(e, "model.safetensors.index.json"));
  CHECK(contains(e, "model-00002-of-00002.safetensors"));
  CHECK(contains(e, "does not exist"));
}

TEST_CASE("safetensors: index naming a tensor its shard lacks is rejected", "[safetensors]") {
  std::string dir = test::scratch_dir("st_index_lies");
  std::vector<float> a;
  write_sharded_checkpoint(dir, {bf16_tensor("x", {2, 2}, a, 10)}, {0});
  std::ofstream(fs::path(dir) / "model.safetensors.index.json")
      << R"({"weight_map": {"x": "model-00001-of-00001.safetensors", "ghost": "model-00001-of-00001.safetensors"}})";
  CHECK(contains(open_error(dir), "'ghost'"));
}

TEST_CASE("safetensors: a folder without weights is rejected", "[safetensors]") {
  std::string dir = test::scratch_dir("st_empty");
  CHECK(contains(open_error(dir), "no model.safetensors"));
  CHECK(contains(open_error(dir + "/nope"), "does not exist"));
}
