// Writes the seed corpora of the fuzz targets into OUT/<target>/ from the project's own files and writers:
//   config:      every config.json of scenarios/models/ and tests/data/
//   scenario:    every scenario of scenarios/
//   safetensors: small checkpoints written by write_safetensors (names and dtypes of the tiny config's inventory,
//                shapes cut down), one with a zero-size tensor, and a checkpoint index
//   taps:        tap and failure dumps written by write_taps / write_failures (float64; float32 deflated as goldens
//                are), each behind the raw-form byte, and a few operation lists for the built form
//   op_inputs:   for every op (reference and peer), built-form inputs the op accepts (its well-formed options)
//   rows:        prompt lengths with the row lists and tap patterns of the docs and tests
//   ruler_lines: data lines in salasim's form (every field) and RULER's (no task, no max_seq_length), behind the
//                options byte
//   tokenizer_files: an added_tokens_decoder and an added_tokens.json that agree, behind the header bytes
//   hardware:    the profiles of reports/hw/
//   measured:    the H200's records of reports/measured/h200/, and two of them as one array
// Usage: salasim_fuzz_seeds OUT
#include <algorithm>
#include <cstring>
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
                    {StWrite{"empty", DType::F32, {0, 4}, {}},
                     StWrite{"x", DType::BF16, {2}, std::vector<uint8_t>(4, 1)}});
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

// Per op, on the reference and on the peer: the op byte and the built-form byte, then (i) nothing: every choice
// of fuzz_op_inputs.cpp takes its well-formed option on a 0 byte and missing bytes read as 0, so this file is
// accepted and the op runs; (ii) all bytes 1: every optional dataset present, sizes of 2, integer attributes 1 above
// their minimum (most of these are accepted too; a few meet a rule across fields, such as pos0 against the cached
// keys, and are refused with a message naming it).
void op_inputs_seeds(const fs::path& to) {
  for (int op = 0; op < 11; ++op)
    for (const char form : {char(1), char(3)}) {
      const std::string tag = std::string(form == 1 ? "op-" : "op-peer-") + std::to_string(op);
      put(to / (tag + "-plain"), std::vector<char>{char(op), form});
      std::vector<char> b = {char(op), form};
      b.insert(b.end(), 400, char(1));
      put(to / (tag + "-ones"), b);
    }
}

void rows_seeds(const fs::path& to) {
  const std::pair<uint32_t, std::string> seeds[] = {{1000, "0,100,-1\nlayer_00/residual/h"},
                                                    {10, "0:4\nlayer_*/lightning/gla/out"},
                                                    {10, "-3:\n/prefill/final/"},
                                                    {10, ":2, 8:\nlayer_01/sparse/select/blocks"},
                                                    {10, "0:10:4\nembed"},
                                                    {3, "all\nlayer_00/"},
                                                    {10, "1::4\nlayer_0?/mlp/act,final/logits"},
                                                    {64, "0::9223372036854775807\nlayer_00/residual/h"}};
  int i = 0;
  for (const auto& [n, text] : seeds) {
    std::vector<char> b(4);
    std::memcpy(b.data(), &n, 4);
    b.insert(b.end(), text.begin(), text.end());
    put(to / ("rows-" + std::to_string(i++)), b);
  }
}

void put_text(const fs::path& p, const std::string& text) { put(p, std::vector<char>(text.begin(), text.end())); }

void ruler_lines_seeds(const fs::path& to) {
  const std::string ours =
      R"({"index": 0, "input": "Some special magic numbers are hidden. One of them is: 1234567. What is it?", )"
      R"("outputs": ["1234567"], "length": 160, "answer_prefix": " Answer: ", "task": "niah_single_1", )"
      R"("max_seq_length": 4096, "needle_token_spans": [[10, 14]], "depths": [40.0], "haystack_units": 12, )"
      R"("template": "base", "seed": 42})";
  const std::string ruler =
      R"({"index": 3, "input": "A haystack. The key is 7.", "outputs": ["7", "8"], "length": 90, )"
      R"("answer_prefix": " The value is"})";
  put_text(to / "ours", std::string(1, '\0') + ours + "\n" + ours + "\n");
  put_text(to / "ruler-task-given", std::string(1, '\1') + ruler + "\n");
  put_text(to / "ruler-length-given", std::string(1, '\3') + ruler + "\n\n" + ruler);
}

void tokenizer_files_seeds(const fs::path& to) {
  auto both = [&](const std::string& name, char which, const std::string& config, const std::string& added) {
    std::string b = {which, char(config.size() & 0xff), char(config.size() >> 8)};
    put_text(to / name, b + config + added);
  };
  const std::string config =
      R"({"add_bos_token": true, "added_tokens_decoder": {"73440": {"content": "<|im_end|>", "special": true}, )"
      R"("73441": {"content": "<|im_start|>", "special": true}}})";
  both("config", 1, config, "");
  both("added", 2, "", R"({"<|im_end|>": 73440, "<tool>": 5})");
  both("both", 3, config, R"({"<|im_start|>": 73441})");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: salasim_fuzz_seeds OUT\n");
    return 2;
  }
  const fs::path out = argv[1];
  for (const char* t : {"config", "scenario", "safetensors", "taps", "op_inputs", "rows", "ruler_lines",
                        "tokenizer_files", "hardware", "measured"})
    fs::create_directories(out / t);
  copy_json(kSource / "scenarios/models", out / "config");
  copy_json(kSource / "tests/data", out / "config");
  copy_json(kSource / "tests/data/models", out / "config");
  copy_json(kSource / "scenarios", out / "scenario");
  safetensors_seeds(out / "safetensors");
  taps_seeds(out / "taps");
  op_inputs_seeds(out / "op_inputs");
  rows_seeds(out / "rows");
  ruler_lines_seeds(out / "ruler_lines");
  tokenizer_files_seeds(out / "tokenizer_files");
  copy_json(kSource / "reports/hw", out / "hardware");
  copy_json(kSource / "reports/measured/h200", out / "measured");
  {
    std::vector<char> arr = {'['};
    std::vector<char> a = slurp(kSource / "reports/measured/h200/run_64K.json"),
                      b = slurp(kSource / "reports/measured/h200/run_1M.json");
    arr.insert(arr.end(), a.begin(), a.end());
    arr.push_back(',');
    arr.insert(arr.end(), b.begin(), b.end());
    arr.push_back(']');
    put(out / "measured" / "array.json", arr);
  }
  std::printf("fuzz seeds written to %s\n", out.c_str());
  return 0;
}
