// Inputs of the reports: context lists, hardware profiles, the dense comparator's config, the paper's data and
// measured-run files, including the errors that name the file, the field and the expectation.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>

#include "model/error.hpp"
#include "reports/context.hpp"
#include "reports/dense_config.hpp"
#include "reports/hardware.hpp"
#include "reports/measured.hpp"
#include "reports/model_spec.hpp"
#include "reports/paper.hpp"
#include "tests/support/catch.hpp"
#include "tests/support/errors.hpp"
#include "tests/support/paths.hpp"

using namespace salasim;
using namespace salasim::reports;

namespace {

std::string write_temp(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string path = test::scratch_dir(dir) + "/" + name;
  std::ofstream(path) << text;
  return path;
}

using test::error_of;

}  // namespace

TEST_CASE("context: K, M and plain integers parse", "[context]") {
  const std::vector<int64_t> v = parse_contexts("4K,64K,1M,2048K,1000");
  REQUIRE(v.size() == 5);
  CHECK(v[0] == 4096);
  CHECK(v[1] == 65536);
  CHECK(v[2] == 1048576);
  CHECK(v[3] == 2097152);
  CHECK(v[4] == 1000);
  CHECK(parse_context(" 8k ") == 8192);
  CHECK(context_label(2097152) == "2048K");
  CHECK(context_label(1000) == "1000");
  CHECK(default_contexts().front() == 4096);
  CHECK(default_contexts().back() == 2097152);
}

TEST_CASE("context: junk is an error naming the option and the entry", "[context]") {
  CHECK_THROWS_AS(parse_contexts("4K,,8K"), Error);
  CHECK_THROWS_AS(parse_context("0"), Error);
  CHECK_THROWS_AS(parse_context("-4K"), Error);
  const std::string msg = error_of([] { parse_contexts("64K,12Q"); });
  INFO(msg);
  CHECK(msg.find("--context: '12Q' is not a context length") != std::string::npos);
}

TEST_CASE("hardware: every profile of reports/hw parses, is named for its file and states its source", "[hardware]") {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(test::source_path("reports/hw")))
    if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"a6000d", "h100", "h200", "rtx5090"});
  for (const std::string& name : names) {
    INFO(name);
    const HwProfile hw = load_hw(name);
    CHECK(hw.name == name);
    CHECK(hw.memory_bytes > 0);
    CHECK(hw.bf16_flops > 0);
    CHECK(hw.bandwidth > 0);
    CHECK(hw.exp_per_s > 0);
    CHECK(hw.source.size() > 40);
    CHECK_FALSE(hw.uncertainty.empty());
  }
  // The H200 profile carries docs/performance.md's measured ceilings.
  const HwProfile h = load_hw("h200");
  CHECK(h.bf16_flops == 786e12);
  CHECK(h.bandwidth == 4.30e12);
}

TEST_CASE("hardware: a bad field names the file, the field and the expectation", "[hardware]") {
  const std::string path = write_temp("hw_bad", "bad.json", R"({"name": "x", "gpu": "y", "memory_bytes": 1,
    "bf16_tensor_flops": -5, "memory_bandwidth_bytes_per_s": 1, "exp_per_s": 1, "source": "s",
    "efficiency": {"gemm": 1, "select": 1, "sparse_attn": 1, "dense_attn": 1, "gla": 1, "other": 1, "decode": 1}})");
  const std::string msg = error_of([&] { load_hw(path); });
  INFO(msg);
  CHECK(msg.find(path) != std::string::npos);
  CHECK(msg.find("'bf16_tensor_flops'") != std::string::npos);
  CHECK(msg.find("expected a number in [1e+09, 1e+18]") != std::string::npos);
  CHECK(error_of([] { load_hw("no-such-card"); }).find("no hardware profile") != std::string::npos);
}

TEST_CASE("dense config: Qwen3-8B parses with its published shape", "[dense_config]") {
  const DenseConfig c = load_dense_config(test::source_path("scenarios/models/qwen3-8b.json"));
  CHECK(c.num_hidden_layers == 36);
  CHECK(c.hidden_size == 4096);
  CHECK(c.num_attention_heads == 32);
  CHECK(c.num_key_value_heads == 8);
  CHECK(c.head_dim == 128);
  CHECK(c.intermediate_size == 12288);
  CHECK(c.vocab_size == 151936);
  CHECK_FALSE(c.tie_word_embeddings);
  const Model m = load_model("scenarios/models/qwen3-8b.json");
  CHECK(m.kind == ModelKind::Dense);
  CHECK(m.name == "qwen3-8b");
  CHECK(load_model("scenarios/models/minicpm-sala-9b.json").kind == ModelKind::Sala);
}

TEST_CASE("dense config: a bad model_type names the field", "[dense_config]") {
  const std::string msg = error_of([] { parse_dense_config(R"({"model_type": "mamba"})", "cfg.json"); });
  INFO(msg);
  CHECK(msg.find("cfg.json: field 'model_type'") != std::string::npos);
}

TEST_CASE("paper: the published latency table parses: 40 points, 11 out of memory", "[paper]") {
  const PaperData p = load_paper(paper_file());
  CHECK(p.points.size() == 40);
  int oom = 0;
  for (const PaperPoint& pt : p.points) oom += pt.oom;
  CHECK(oom == 11);
  const PaperPoint* pt = find_paper(p, "a6000d", "minicpm-sala-9b", WeightFormat::Bf16, 262144);
  REQUIRE(pt != nullptr);
  CHECK(pt->ttft_s == 51.6);
  CHECK(p.decode_tokens == 1024);
}

TEST_CASE("measured: a missing file or an empty array means no runs", "[measured]") {
  CHECK(load_measured(test::source_path("reports/measured/no-such.json")).empty());
  CHECK(load_measured(write_temp("measured_empty", "m.json", "[]")).empty());
  CHECK(load_measured(test::scratch_dir("measured_empty_dir")).empty());
}

TEST_CASE("measured: a folder holds one record per file, as salasim run --json-out writes them", "[measured]") {
  auto record = [](const std::string& label, int64_t context) {
    return R"({"date": "2026-12-01", "gpu": "NVIDIA H200", "command": "salasim run --context )" + label +
           R"(", "config": "c.json", "context": )" + std::to_string(context) +
           R"(, "decode_tokens": 0, "ttft_s": 2.5, "peak_vram_bytes": 1, "planner_peak_bytes": 1,
               "driver": "580.159.04", "revision": "abc1234"})";
  };
  const std::string dir = test::scratch_dir("measured_dir");
  // File names sort against context order: the runs come back ordered by context.
  std::ofstream(dir + "/run_1M.json") << record("1M", 1048576);
  std::ofstream(dir + "/run_64K.json") << record("64K", 65536);
  std::ofstream(dir + "/notes.txt") << "not a record";
  const std::vector<MeasuredRun> runs = load_measured(dir);
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].context == 65536);
  CHECK(runs[1].context == 1048576);
  CHECK(runs[0].driver == "580.159.04");
  CHECK(runs[0].revision == "abc1234");
  CHECK(runs[0].file.find("run_64K.json") != std::string::npos);

  std::ofstream(dir + "/run_2M.json") << R"({"date": "d", "gpu": "g"})";
  const std::string msg = error_of([&] { load_measured(dir); });
  INFO(msg);
  CHECK(msg.find("run_2M.json: field 'command'") != std::string::npos);
}

TEST_CASE("measured: the committed H200 runs are records salasim run writes", "[measured]") {
  const std::vector<MeasuredRun> runs = load_measured(measured_path("h200"));
  REQUIRE_FALSE(runs.empty());
  for (const MeasuredRun& r : runs) {
    INFO(r.file);
    CHECK(r.gpu.find("H200") != std::string::npos);
    CHECK(r.command.rfind("salasim run ", 0) == 0);
    CHECK(r.phases.has_value());
  }
}

TEST_CASE("measured: a run parses, phases optional; a bad field names file, run and field", "[measured]") {
  const std::string path = write_temp("measured_one", "m.json", R"([
    {"date": "2026-12-01", "gpu": "NVIDIA H200", "command": "salasim run x", "config": "c.json", "context": 65536,
     "decode_tokens": 16, "ttft_s": 2.5, "decode_ms_per_token": 5.1, "peak_vram_bytes": 100, "planner_peak_bytes": 90,
     "phases": {"gemm_s": 1.6, "select_s": 0.1, "sparse_attn_s": 0.2, "dense_attn_s": 0, "gla_s": 0.3, "other_s": 0.3}},
    {"date": "2026-12-01", "gpu": "NVIDIA H200", "command": "salasim run y", "config": "c.json", "context": 4096,
     "decode_tokens": 0, "ttft_s": 0.2, "peak_vram_bytes": 100, "planner_peak_bytes": 90}])");
  const std::vector<MeasuredRun> runs = load_measured(path);
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].context == 65536);
  REQUIRE(runs[0].phases.has_value());
  CHECK((*runs[0].phases)[int(OpClass::Gla)] == 0.3);
  CHECK(*runs[0].decode_ms_per_token == 5.1);
  CHECK_FALSE(runs[1].phases.has_value());
  CHECK_FALSE(runs[1].decode_ms_per_token.has_value());

  const std::string bad = write_temp("measured_bad", "m.json", R"([{"date": "d", "gpu": "g", "command": "c",
    "config": "c.json", "context": "64K", "decode_tokens": 0, "ttft_s": 1, "peak_vram_bytes": 1,
    "planner_peak_bytes": 1}])");
  const std::string msg = error_of([&] { load_measured(bad); });
  INFO(msg);
  CHECK(msg.find("(run 0): field 'context' is string") != std::string::npos);
}

TEST_CASE("measured: the profiled decode split parses, and classes that do not add up to its total are refused",
          "[measured]") {
  const auto run = [](const char* total) {
    return fmt::format(R"([{{"date": "d", "gpu": "g", "command": "c", "config": "c.json", "context": 65536,
      "decode_tokens": 32, "ttft_s": 2.5, "decode_ms_per_token": 7.2, "peak_vram_bytes": 1, "planner_peak_bytes": 1,
      "decode_gpu_ms_per_token": {{"gemm_ms": 5.25, "select_ms": 0.5, "sparse_attn_ms": 0.5, "dense_attn_ms": 0,
        "gla_ms": 0.25, "other_ms": 1.25, "total_ms": {}, "profiled_steps": 8}}}}])",
                       total);
  };
  const std::vector<MeasuredRun> ok = load_measured(write_temp("measured_split", "m.json", run("7.75")));
  REQUIRE(ok.size() == 1);
  REQUIRE(ok[0].decode_phases_ms.has_value());
  CHECK((*ok[0].decode_phases_ms)[int(OpClass::Select)] == 0.5);
  CHECK(ok[0].decode_profiled_total_ms == 7.75);
  // Zeros (a run of fewer than 4 decode steps profiled none) are no split, and no error.
  const std::string zeros = fmt::format(R"([{{"date": "d", "gpu": "g", "command": "c", "config": "c.json",
    "context": 65536, "decode_tokens": 2, "ttft_s": 2.5, "decode_ms_per_token": 7.2, "peak_vram_bytes": 1,
    "planner_peak_bytes": 1, "decode_gpu_ms_per_token": {{"gemm_ms": 0, "select_ms": 0, "sparse_attn_ms": 0,
    "dense_attn_ms": 0, "gla_ms": 0, "other_ms": 0, "total_ms": 0, "profiled_steps": 0}}}}])");
  const std::vector<MeasuredRun> none = load_measured(write_temp("measured_split_none", "m.json", zeros));
  REQUIRE(none.size() == 1);
  CHECK_FALSE(none[0].decode_phases_ms.has_value());
  const std::string msg = error_of([&] { load_measured(write_temp("measured_split_bad", "m.json", run("9.5"))); });
  INFO(msg);
  CHECK(msg.find("total_ms") != std::string::npos);
  CHECK(msg.find("equal to the sum of the classes (7.75)") != std::string::npos);
}
