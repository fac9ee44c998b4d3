// Writes the seed corpora of the fuzz targets into OUT/<target>/ from the project's own files and writers:
//   config:      every config.json of scenarios/models/ and tests/data/
//   scenario:    every scenario of scenarios/
//   safetensors: small checkpoints written by write_safetensors (names and dtypes of the tiny config's inventory,
//                shapes cut down), one with a zero-size tensor, and a checkpoint index
//   taps:        tap and failure dumps written by write_taps / write_failures (float64; float32 deflated as goldens
//                are), each behind the raw-form byte, and a few operation lists for the built form
// Usage: salasim_fuzz_seeds OUT
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "compare/hdf5_io.hpp"
#include "model/config.hpp"
#include "model/inventory.hpp"
#include "model/safetensors.hpp"

namespace fs = std::filesystem;
using namespace salasim;

namespace {

const fs::path kSource = SALASIM_SOURCE_DIR;

std::vector<char> slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void put(const fs::path& p, const std::vector<char>& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
}

void copy_json(const fs::path& from_dir, const fs::path& to) {
  for (const auto& e : fs::directory_iterator(from_dir))
    if (e.path().extension() == ".json") put(to / e.path().filename(), slurp(e.path()));
}

void safetensors_seeds(const fs::path& to) {
  const auto inv = tensor_inventory(load_config((kSource / "scenarios/models/tiny.json").string()));
  std::vector<StWrite> ts;
  const DType dtypes[] = {DType::BF16, DType::F32, DType::F16, DType::F64};
  for (size_t i = 0; i < 6 && i < inv.size(); ++i) {
    StWrite t{inv[i].name, dtypes[i % 4], {}, {}};
    for (int64_t d : inv[i].shape) t.shape.push_back(std::min<int64_t>(d, 3));
    int64_t n = 1;
    for (int64_t d : t.shape) n *= d;
    t.bytes.assign(size_t(n) * dtype_size(t.dtype), uint8_t(0x3f));
    ts.push_back(t);
  }
  write_safetensors((to / "tiny-cut.safetensors").string(), ts, {{"format", "pt"}});
  write_safetensors((to / "one.safetensors").string(), {ts[0]});
  write_safetensors((to / "zero-size.safetensors").string(),
                    {StWrite{"empty", DType::F32, {0, 4}, {}}, StWrite{"x", DType::BF16, {2}, std::vector<uint8_t>(4, 1)}});
  const std::string index =
      R"({"metadata": {"total_size": 22}, "weight_map": {"model.embed_tokens.weight": "model-00001-of-00001.safetensors", "x": "model-00001-of-00001.safetensors"}})";
  put(to / "index.json", std::vector<char>(index.begin(), index.end()));
}

void behind(const fs::path& file, char form) {  // prefixes a file with the fuzz target's form byte
  std::vector<char> b = slurp(file);
  b.insert(b.begin(), form);
  put(file, b);
}

void taps_seeds(const fs::path& to) {
  TapMap taps;
  taps["/prefill/embed/out"] = Tap{{3, 4}, std::vector<double>(12, 0.5), false, 0};
  taps["/prefill/layer_00/sparse/select/blocks"] = Tap{{3, 2, 2}, {0, 1, 0, -1, 1, 2, 0, 1, 2, 0, 1, -1}, true, 1};
  taps["/prefill/layer_00/lightning/gla/state"] = Tap{{2, 2, 2}, std::vector<double>(8, -1.25), false, 2};
  taps["/decode_0000/final/logits"] = Tap{{1, 5}, {1, 2, 3, 4, 5}, false, 3};
  DumpInfo info{"fuzz-seed", "seed", "reference", "2026-01-01T00:00:00Z", {{"golden_format", "1"}}};
  write_taps((to / "taps.h5").string(), taps, info);
  write_taps((to / "taps-f32-deflate.h5").string(), taps, info, FloatStorage::Float32, true);
  FailureEntry e{"/prefill/embed/out", taps["/prefill/embed/out"], taps["/prefill/embed/out"], {}};
  e.inputs["x"] = taps["/prefill/layer_00/lightning/gla/state"];
  write_failures((to / "failures.h5").string(), {e}, info);
  for (const char* f : {"taps.h5", "taps-f32-deflate.h5", "failures.h5"}) behind(to / f, '\0');
  // Built form: a header byte, then operations (code, path bytes, ...): datasets, a hard link, a link to the root.
  const std::vector<std::vector<char>> built = {
      {1, 0, 1, 2, 0, 10, 1, 3, 3, 2, 0},
      {1, 0, 2, 3, 0, 6, 10, 2, 4, 4, 0, 0, 3, 2, 1, 12, 1, 6, 3, 1, 0, 0},
      {1, 1, 1, 4, 16, 17, 16, 10, 2, 2, 5, 1, 6, 2, 0, 0, 6, 1, 9, 0},
      {1, 0, 1, 1, 0, 0, 2, 10, 11, 0, 5, 1, 2, 0},
  };
  for (size_t i = 0; i < built.size(); ++i) put(to / ("built-" + std::to_string(i)), built[i]);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: salasim_fuzz_seeds OUT\n");
    return 2;
  }
  const fs::path out = argv[1];
  for (const char* t : {"config", "scenario", "safetensors", "taps"}) fs::create_directories(out / t);
  copy_json(kSource / "scenarios/models", out / "config");
  copy_json(kSource / "tests/data", out / "config");
  copy_json(kSource / "tests/data/models", out / "config");
  copy_json(kSource / "scenarios", out / "scenario");
  safetensors_seeds(out / "safetensors");
  taps_seeds(out / "taps");
  std::printf("fuzz seeds written to %s\n", out.c_str());
  return 0;
}
