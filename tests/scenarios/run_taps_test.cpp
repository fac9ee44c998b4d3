// `salasim run --dump-taps FILE --taps PATTERN --rows LIST` without a GPU: the row lists, the tap patterns against
// the run's tap list (computed from the config, checked here against a reference run), the memory refusal, the
// sink that keeps chosen rows, `salasim diff` of such a file against a whole one, and the argument errors that
// must come before "no GPU".
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "compare/dump_align.hpp"
#include "compare/hdf5_io.hpp"
#include "compare/row_select_sink.hpp"
#include "model/error.hpp"
#include "model/tap_select.hpp"
#include "scenarios/run_reference.hpp"
#include "tests/compare/run_cli.hpp"
#include "tests/scenarios/verify_support.hpp"
#include "tests/support/catch.hpp"
#include "tests/support/paths.hpp"

using namespace salasim;

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The message of the salasim::Error `f` throws, or "" when it throws none.
template <class F>
std::string thrown(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::vector<int64_t> rows_of(const std::string& list, int64_t n) { return parse_row_list(list).resolve(n); }

// What a run recorded, without the data: names, final shapes, types, in recording order.
struct HeaderSink : TapSink {
  std::map<std::string, TapSpec> taps;
  std::vector<std::string> order;
  void append(const std::string& name, const std::vector<int64_t>& shape, const double*, bool integer) override {
    auto [it, fresh] = taps.try_emplace(name, TapSpec{name, shape, integer});
    if (fresh) order.push_back(name);
    else it->second.shape[0] += shape[0];
  }
  void replace(const std::string& name, Tap t) override {
    if (!taps.count(name)) order.push_back(name);
    taps[name] = TapSpec{name, t.shape, t.integer};
  }
};

// A fake /proc/meminfo with `kb` kB available, for the hook.
std::string fake_meminfo(const std::string& dir, int64_t kb) {
  const std::string p = dir + "/meminfo";
  std::ofstream(p) << "MemTotal:       16000000 kB\nMemFree:          100 kB\nMemAvailable:   " << kb << " kB\n";
  return p;
}

// A synthetic run of `n` prompt rows (in calls of `piece`) and one decode step, into `sink`: per-token taps whose
// value says (row, column), an integer tap, a state tap replaced per call.
void synthetic_run(TapSink& sink, int64_t n, int64_t piece) {
  for (int64_t r0 = 0; r0 < n; r0 += piece) {
    const int64_t T = std::min(piece, n - r0);
    std::vector<double> x(size_t(T * 3)), ids(size_t(T * 2));
    for (int64_t i = 0; i < T; ++i) {
      for (int64_t j = 0; j < 3; ++j) x[size_t(i * 3 + j)] = double(r0 + i) + 0.25 * double(j) + 1;
      for (int64_t j = 0; j < 2; ++j) ids[size_t(i * 2 + j)] = double((r0 + i + j) % 5);
    }
    sink.append("/prefill/layer_00/mlp/out", {T, 3}, x.data(), false);
    sink.append("/prefill/layer_00/sparse/select/blocks", {T, 1, 2}, ids.data(), true);
    sink.replace("/prefill/layer_00/lightning/gla/state", Tap{{1, 2, 2}, {1, 2, 3, double(r0 + T)}});
    sink.append("/prefill/final/norm", {T, 3}, x.data(), false);
  }
  std::vector<double> d = {7, 8, 9};
  sink.append("/decode_0000/layer_00/mlp/out", {1, 3}, d.data(), false);
}

}  // namespace

TEST_CASE("rows: lists, ranges, steps and negative rows resolve against the prompt", "[run_taps]") {
  CHECK(rows_of("0,100,-1", 1000) == std::vector<int64_t>{0, 100, 999});
  CHECK(rows_of("0:4", 10) == std::vector<int64_t>{0, 1, 2, 3});
  CHECK(rows_of("-3:", 10) == std::vector<int64_t>{7, 8, 9});
  CHECK(rows_of(":2, 8:", 10) == std::vector<int64_t>{0, 1, 8, 9});
  CHECK(rows_of("0:10:4", 10) == std::vector<int64_t>{0, 4, 8});
  CHECK(rows_of("3,1,3,0:2", 10) == std::vector<int64_t>{0, 1, 3});  // sorted, each once
  CHECK(rows_of("all", 3) == std::vector<int64_t>{0, 1, 2});
  CHECK(parse_row_list("all").all);
  // Steps and rows at the ends of int64 neither overflow nor loop: one row, then stop.
  CHECK(rows_of("0::9223372036854775807", 10) == std::vector<int64_t>{0});
  CHECK(rows_of("9:10:9223372036854775807", 10) == std::vector<int64_t>{9});
  CHECK(rows_of("1::4", 10) == std::vector<int64_t>{1, 5, 9});
  CHECK(has(thrown([&] { rows_of("-9223372036854775808", 10); }), "is outside the prompt"));
}

TEST_CASE("rows: malformed items and rows outside the prompt are errors naming the item", "[run_taps]") {
  CHECK(has(thrown([&] { parse_row_list("0,x"); }), "item 'x' is not a whole number"));
  CHECK(has(thrown([&] { parse_row_list("0,,1"); }), "item '' is empty"));
  CHECK(has(thrown([&] { parse_row_list("1:2:0"); }), "step that is not a whole number >= 1"));
  CHECK(has(thrown([&] { parse_row_list("1:2:3:4"); }), "more than two ':'"));
  CHECK(has(thrown([&] { parse_row_list(""); }), "empty"));
  CHECK(has(thrown([&] { rows_of("10", 10); }), "row 10 is outside the prompt's 10 rows"));
  CHECK(has(thrown([&] { rows_of("-11", 10); }), "row -11 is outside"));
  CHECK(has(thrown([&] { rows_of("0:16", 10); }), "reaches outside the prompt"));
  CHECK(has(thrown([&] { rows_of("5:5", 10); }), "selects no row"));
}

TEST_CASE("tap patterns: globs match within a path part, plain patterns as prefixes, '/' the full name", "[run_taps]") {
  CHECK(glob_prefix_match("layer_*/residual/h", "layer_03/residual/h"));
  CHECK_FALSE(glob_prefix_match("layer_*/residual/h", "layer_03/residual/mid"));
  CHECK_FALSE(glob_prefix_match("layer_*h", "layer_03/residual/h"));  // '*' never crosses a '/'
  CHECK(glob_prefix_match("layer_0?/", "layer_07/mlp/out"));
  CHECK(glob_prefix_match("layer_03", "layer_03/mlp/out"));  // a prefix
  CHECK(glob_prefix_match("", "anything"));
  const TapFilter f{{"layer_*/residual/h", "/decode_*/final/norm"}};
  CHECK(f.match("/prefill/layer_10/residual/h"));
  CHECK(f.match("/decode_0003/layer_00/residual/h"));
  CHECK(f.match("/decode_0001/final/norm"));
  CHECK_FALSE(f.match("/prefill/final/norm"));
  CHECK(TapFilter{{"/prefill/"}}.match("/prefill/embed/out"));
  CHECK_FALSE(TapFilter{{"/prefill/"}}.match("/decode_0000/embed/out"));
  // TapFilter's earlier behaviour stays: plain prefixes after the phase, full names, "*".
  CHECK(TapFilter{{"layer_0"}}.match("/prefill/layer_01/mlp/out"));
  CHECK(TapFilter{{"/prefill/final/logits"}}.match("/prefill/final/logits"));
  CHECK(TapFilter::all().match("/decode_0000/final/logits"));
  CHECK(split_patterns(" layer_03/lightning/gla/out , final/") ==
        std::vector<std::string>{"layer_03/lightning/gla/out", "final/"});
  CHECK(has(thrown([&] { split_patterns("a,,b"); }), "an empty pattern"));
}

TEST_CASE("tap patterns: one that matches no tap of the run is an error listing valid names", "[run_taps]") {
  const ModelConfig c = load_config(test::source_path("scenarios/models/tiny-short.json"));
  const std::vector<TapSpec> cat = tap_catalog(c, 100, 1, true);
  CHECK_NOTHROW(check_patterns({"layer_*/residual/h", "/decode_0000/final/logits", "layer_03/sparse/attn"}, cat));
  const std::string e = thrown([&] {
    check_patterns({"layer_*/residual/h", "layer_*/lightning/gla/outt", "layer_99/"}, cat);
  });
  CHECK(has(e, "'layer_*/lightning/gla/outt', 'layer_99/' match no tap of this run"));
  CHECK(has(e, "layer_01/lightning/gla/out"));
  CHECK(has(e, "layer_00 .. layer_03 in all"));
  // 100 tokens < dense_len: no selection in the prefill, so its pattern matches nothing there.
  CHECK(has(thrown([&] { check_patterns({"/prefill/layer_03/sparse/select"}, cat); }), "match"));
}

TEST_CASE("tap catalog: names, shapes, types and order equal a reference run's", "[run_taps]") {
  // tiny-short: 1100 tokens (sparse past dense_len 1024, in pieces of 704), then 2 decode steps.
  Scenario s = load_scenario(test::short_scenario_path());
  override_lengths(s, 1100, 2);
  HeaderSink rec;
  run_reference_to(s, ref::RefOptions{}, TapFilter::all(), rec);
  const std::vector<TapSpec> cat = tap_catalog(s.cfg, 1100, 2, true);
  REQUIRE(cat.size() == rec.order.size());
  for (size_t i = 0; i < cat.size(); ++i) {
    INFO(cat[i].name << " vs " << rec.order[i]);
    REQUIRE(cat[i].name == rec.order[i]);
    CHECK(cat[i].shape == rec.taps.at(cat[i].name).shape);
    CHECK(cat[i].integer == rec.taps.at(cat[i].name).integer);
  }
}

TEST_CASE("memory: a selection that would not fit in MemAvailable is refused with the numbers", "[run_taps]") {
  const std::string dir = test::scratch_dir("run_taps_mem");
  CHECK(parse_mem_available("MemTotal: 5 kB\nMemAvailable:    2048 kB\n") == 2048 * 1024);
  CHECK(parse_mem_available("MemTotal: 5 kB\n") == -1);
  CHECK(parse_mem_available("MemAvailable: 9223372036854775807 kB\n") == -1);   // would overflow in bytes
  CHECK(parse_mem_available("MemAvailable: 99999999999999999999 kB\n") == -1);  // not an int64
  ::setenv("SALASIM_TEST_MEMINFO", fake_meminfo(dir, 1000).c_str(), 1);
  CHECK(mem_available_bytes() == 1000 * 1024);
  CHECK_NOTHROW(check_host_memory(0.5e6, "small", ""));
  const std::string e = thrown([] { check_host_memory(2e6, "--dump-taps x", "  part: 2 MB"); });
  CHECK(has(e, "--dump-taps x needs about 0.00 GB"));
  CHECK(has(e, "has 0.00 GB available"));
  CHECK(has(e, "part: 2 MB"));
  // The budget of a 1M-token run of the released config: layer 0's residual at 3 rows is small on disk; the
  // download of one 16K-token chunk of a [T, 4096] tap in bf16 and float64 is what the host holds.
  const ModelConfig c = load_config(test::real_config());
  const std::vector<TapSpec> cat = tap_catalog(c, 1 << 20, 0, true);
  const DumpBudget b = dump_budget(cat, TapFilter{{"layer_00/residual/h"}}, 1 << 20, {0, 100, (1 << 20) - 1}, 16384);
  REQUIRE(b.taps.size() == 1);
  CHECK(b.taps[0].shape == std::vector<int64_t>{3, 4096});
  CHECK(b.file_bytes == 3 * 4096 * 8);
  CHECK(b.download_bytes == 16384.0 * 4096 * 10);
  // Every sparse layer's compressed keys at 1M: held until the prefill ends.
  const DumpBudget k = dump_budget(cat, TapFilter{{"layer_*/sparse/compress_k"}}, 1 << 20, {0}, 16384);
  CHECK(k.held_bytes > k.file_bytes);
  ::unsetenv("SALASIM_TEST_MEMINFO");
  std::filesystem::remove_all(dir);
}

TEST_CASE("run: argument errors exit 2 before weights or a GPU are needed", "[run_taps]") {
  const std::string dir = test::scratch_dir("run_taps_cli");
  const std::string base = "run --config scenarios/models/tiny-short.json --context 2048 --decode 2 ";
  struct Case {
    std::string args, says;
  } cases[] = {
      {"--taps layer_00/", "--taps chooses what --dump-taps writes"},
      {"--rows 0", "--rows chooses what --dump-taps writes"},
      {"--dump-taps " + dir + "/a.h5", "give --taps PATTERN"},
      {"--dump-taps " + dir + "/a.h5 --taps layer_*/residual/hh", "'layer_*/residual/hh' matches no tap of this run"},
      {"--dump-taps " + dir + "/a.h5 --taps layer_00/ --rows 0,2048", "row 2048 is outside the prompt's 2048 rows"},
      {"--dump-taps " + dir + "/a.h5 --taps layer_00/ --rows 1:x", "item '1:x' has a stop that is not a whole number"},
      {"--dump-taps " + dir + " --taps layer_00/", "is a folder; expected a file name"},
      {"--dump-taps " + test::source_path("tests/data/bad_config.json") + "/a.h5 --taps layer_00/",
       "--dump-taps " + test::source_path("tests/data/bad_config.json")},
  };
  for (const Case& k : cases) {
    const test::CliResult r = test::run_salasim(base + k.args);
    INFO(k.args << "\n" << r.output);
    CHECK(r.exit_code == 2);
    CHECK(has(r.output, k.says));
    CHECK_FALSE(has(r.output, "needs the CUDA path"));
    CHECK_FALSE(has(r.output, "needs a GPU"));
  }
  // Too much for the (faked) host memory: refused with the taps and sizes, before the GPU.
  const std::string mem = fake_meminfo(dir, 100 * 1024);  // 100 MB
  const std::string env = "SALASIM_TEST_MEMINFO=" + mem + " ";
  const std::string cmd = env + SALASIM_BIN + std::string(" run --context 64K --decode 0 --dump-taps ") + dir +
                          "/b.h5 --taps layer_*/mlp/act --rows 0,-1 2>&1";
  const test::CliResult r = test::run_command(cmd);
  const std::string& out = r.output;
  INFO(out);
  CHECK(r.exit_code == 2);
  CHECK(has(out, "--dump-taps " + dir + "/b.h5 (--taps layer_*/mlp/act, --rows 0,-1) needs about"));
  CHECK(has(out, "layer_00/mlp/act (16384 rows of --chunk 16384)"));
  CHECK(has(out, "has 0.10 GB available"));
  CHECK_FALSE(std::filesystem::exists(dir + "/b.h5"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("row sink: chosen rows of chosen taps reach the file with their rows, states once a phase", "[run_taps]") {
  const std::string dir = test::scratch_dir("run_taps_sink");
  DumpInfo info;
  info.backend = "test";
  info.extra = {{kTapSelectionAttr, "*"}, {kRowSelectionAttr, "0,5:7,-1"}};
  {
    TapFileSink file(dir + "/chosen.h5", info, true);
    RowSelectSink sink(file, rows_of("0,5:7,-1", 10), false);
    synthetic_run(sink, 10, 4);  // calls of rows 0-3, 4-7, 8-9
    CHECK(sink.close() == 5);
    // At most the state tap (4 values) and one call's chosen rows (2 rows of 3) at once.
    CHECK(sink.peak_held_bytes() <= 8.0 * (4 + 4 + 2 * 3));
  }
  const TapDump d = read_taps(dir + "/chosen.h5");
  const Tap& t = d.taps.at("/prefill/layer_00/mlp/out");
  CHECK(t.shape == std::vector<int64_t>{4, 3});
  CHECK(d.rows.at("/prefill/layer_00/mlp/out") == std::vector<int64_t>{0, 5, 6, 9});
  CHECK(t.data[3] == 6);  // row 5, column 0: 5 + 1
  CHECK(t.data[9] == 10);
  CHECK(d.taps.at("/prefill/layer_00/sparse/select/blocks").integer);
  CHECK(d.taps.at("/prefill/layer_00/lightning/gla/state").data.back() == 10);  // the last call's value
  CHECK(d.taps.at("/decode_0000/layer_00/mlp/out").shape == std::vector<int64_t>{1, 3});
  CHECK_FALSE(d.rows.count("/decode_0000/layer_00/mlp/out"));
  // Recording order is the run's, though the state tap was rewritten at the end of its phase.
  CHECK(d.taps.at("/prefill/layer_00/lightning/gla/state").order == 2);
  std::filesystem::remove_all(dir);
}

TEST_CASE("row sink: a rows attribute past HDF5's 64 KiB header limit is written and read back", "[run_taps]") {
  const std::string dir = test::scratch_dir("run_taps_many_rows");
  const int64_t n = 20000;  // 160 KB of row numbers
  {
    DumpInfo info;
    info.extra = {{kTapSelectionAttr, "x"}};
    TapFileSink file(dir + "/many.h5", info, true);
    RowSelectSink sink(file, rows_of("0:20000", n + 1), false);
    std::vector<double> x(size_t(n + 1), 1.0);
    sink.append("/prefill/embed/out", {n + 1, 1}, x.data(), false);
    sink.close();
  }
  const TapDump d = read_taps(dir + "/many.h5");
  CHECK(d.rows.at("/prefill/embed/out").size() == size_t(n));
  CHECK(d.rows.at("/prefill/embed/out").back() == n - 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE("diff: a file of chosen taps and rows compares with a whole one on its rows", "[run_taps]") {
  const std::string dir = test::scratch_dir("run_taps_diff");
  DumpInfo whole_info;
  whole_info.backend = "whole";
  auto chosen = [&](const std::string& path, const std::string& rows, const TapFilter& filter, double bump) {
    DumpInfo info;
    info.backend = "chosen";
    info.extra = {{kTapSelectionAttr, "layer_00/mlp,layer_00/sparse"}, {kRowSelectionAttr, rows}};
    TapFileSink file(path, info, true);
    RowSelectSink rs(file, rows_of(rows, 10), false);
    struct Filtered : TapSink {  // the recorder's filter, as TapRecorder applies it
      TapSink& to;
      const TapFilter& f;
      double bump;
      Filtered(TapSink& t, const TapFilter& ff, double b) : to(t), f(ff), bump(b) {}
      void append(const std::string& n, const std::vector<int64_t>& s, const double* d, bool i) override {
        if (!f.match(n)) return;
        std::vector<double> v(d, d + shape_numel(s));
        if (!i && n.find("mlp/out") != std::string::npos && !v.empty()) v[0] += bump;
        to.append(n, s, v.data(), i);
      }
      void replace(const std::string& n, Tap t) override {
        if (f.match(n)) to.replace(n, std::move(t));
      }
    } fs(rs, filter, bump);
    synthetic_run(fs, 10, 4);
    rs.close();
  };
  {
    TapFileSink file(dir + "/whole.h5", whole_info);
    synthetic_run(file, 10, 4);
    file.close();
  }
  const TapFilter f{{"layer_00/mlp", "layer_00/sparse"}};
  chosen(dir + "/chosen.h5", "0,5:7,-1", f, 0);
  const TapDump whole = read_taps(dir + "/whole.h5"), some = read_taps(dir + "/chosen.h5");
  const AlignedDumps al = align_dumps(whole, nullptr, some);
  CHECK(al.skipped == 2);  // final/norm and the GLA state: not chosen
  CHECK(al.cut == 2);      // mlp/out and select/blocks of the prefill
  CHECK(al.notes.empty());
  CHECK(al.ref.at("/prefill/layer_00/mlp/out").data == al.backend.at("/prefill/layer_00/mlp/out").data);
  CHECK(al.ref.at("/prefill/layer_00/mlp/out").shape[0] == 4);

  test::CliResult r = test::run_salasim("diff " + dir + "/whole.h5 " + dir + "/chosen.h5");
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(has(r.output, "chosen taps and rows: 2 tap(s) compared on the rows both dumps hold, 2 left out"));
  CHECK(has(r.output, "all 3 taps pass"));
  r = test::run_salasim("diff " + dir + "/chosen.h5 " + dir + "/whole.h5");  // either side
  CHECK(r.exit_code == 0);
  // A wrong value in a kept row fails; rows the other dump lacks fail with a note.
  chosen(dir + "/bumped.h5", "0,5:7,-1", f, 1.0);
  r = test::run_salasim("diff " + dir + "/whole.h5 " + dir + "/bumped.h5");
  CHECK(r.exit_code == 1);
  {
    TapFileSink file(dir + "/short.h5", whole_info);
    synthetic_run(file, 6, 4);
    file.close();
  }
  r = test::run_salasim("diff " + dir + "/short.h5 " + dir + "/chosen.h5");
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(has(r.output, "rows not lined up: /prefill/layer_00/mlp/out: B holds rows 6, 9 that A (all 6 rows) lacks"));
  // Two whole dumps: every tap, as before.
  r = test::run_salasim("diff " + dir + "/whole.h5 " + dir + "/whole.h5");
  CHECK(r.exit_code == 0);
  CHECK_FALSE(has(r.output, "chosen taps"));
  CHECK(has(r.output, "all 5 taps pass"));
  std::filesystem::remove_all(dir);
}
