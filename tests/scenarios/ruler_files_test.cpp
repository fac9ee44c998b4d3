// The RULER commands' files under hostile input and faults: the results file's rules (never the data file, only
// results lines in it, --resume cuts only an unterminated last line, one writer at a time, checked appends), the
// strict data-line reader (ranges, the bytes-per-token bound, regular files), the shard merge, the --gpus
// launcher's pieces and the memory limits the checks read.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "model/machine_memory.hpp"
#include "scenarios/ruler/launch.hpp"
#include "scenarios/ruler/report.hpp"
#include "scenarios/ruler/results_file.hpp"
#include "scenarios/ruler/run.hpp"
#include "scenarios/ruler/sample_io.hpp"
#include "scenarios/ruler/sources.hpp"
#include "tests/support/catch.hpp"
#include "tests/support/errors.hpp"
#include "tests/support/paths.hpp"

using namespace salasim;
using namespace salasim::ruler;
namespace fs = std::filesystem;

namespace {

std::string results_line(const std::string& task, int64_t length, int64_t index, double score = 0) {
  nlohmann::json j = {{"id", fmt::format("{}/{}/{}", task, length, index)},
                      {"task", task},
                      {"length", length},
                      {"index", index},
                      {"score", score},
                      {"prediction", "1234567."},
                      {"outputs", {"1234567"}},
                      {"depths", {50.0}},
                      {"selection", nlohmann::json::array()}};
  return j.dump();
}

std::string data_line(
    int64_t index, int64_t length,
    const std::string& input = "Some text. One of the special magic numbers for tall-tree is: 4417021.") {
  nlohmann::json j = {{"index", index},
                      {"input", input},
                      {"outputs", {"4417021"}},
                      {"length", length},
                      {"answer_prefix", " The special magic number is"},
                      {"task", "niah_single_1"}};
  return j.dump();
}

using test::read_file;

void spit(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("ruler results: --out that is the data file is refused, by path, symlink, hard link or shard; the data stays",
          "[ruler]") {
  const std::string dir = test::scratch_dir("ruler_same_file");
  const std::string data = dir + "/data.jsonl";
  spit(data, data_line(0, 300) + "\n");
  const std::string before = read_file(data);
  fs::create_symlink("data.jsonl", dir + "/link.jsonl");
  fs::create_hard_link(data, dir + "/hard.jsonl");
  fs::create_directories(dir + "/sub");
  RunOptions o;
  o.data = data;
  o.resume = true;
  for (const std::string& out : {data, dir + "/link.jsonl", dir + "/hard.jsonl", dir + "/sub/../data.jsonl"}) {
    o.out = out;
    INFO(out);
    CHECK(has(test::error_of([&] { open_results_file(o); }), "is the same file as --data"));
  }
  // a shard of --out that is the data file
  const std::string shard_data = dir + "/r.shard-1-of-2.jsonl";
  spit(shard_data, data_line(0, 300) + "\n");
  o.data = shard_data;
  o.out = dir + "/r.jsonl";
  o.shard = resolve_shard("1/2");
  CHECK(has(test::error_of([&] { open_results_file(o); }), "is the same file as --data"));
  CHECK(read_file(data) == before);
  CHECK(read_file(shard_data) == data_line(0, 300) + "\n");
  CHECK(!fs::exists(dir + "/r.jsonl"));
}

TEST_CASE("ruler results: a complete line that is not a results line is refused by --resume, named, and kept",
          "[ruler]") {
  const std::string dir = test::scratch_dir("ruler_foreign_line");
  const std::string out = dir + "/results.jsonl";
  ResultsOptions ro;
  ro.resume = true;
  const std::vector<std::pair<std::string, std::string>> foreign = {
      {"{\"a\": 1}", "no string field 'id'"},
      {data_line(0, 300), "no string field 'id'"},
      {"not json at all", "not JSON"},
      {"", "not JSON"},
      {"[1, 2]", "not an object"},
      {R"({"id": "x/1/0", "task": "niah_single_1", "length": 1, "index": 0, "score": 0, "prediction": "", "outputs": []})",
       "not 'niah_single_1/1/0'"},
      {R"({"id": "niah_single_1/300/0", "task": "niah_single_1", "length": 300, "index": 0, "score": 2, "prediction": "", "outputs": []})",
       "'score'"},
      {R"({"id": "niah_single_1/300/-1", "task": "niah_single_1", "length": 300, "index": -1, "score": 0, "prediction": "", "outputs": []})",
       "'index'"},
      {R"({"id": "niah_single_1/0/0", "task": "niah_single_1", "length": 0, "index": 0, "score": 0, "prediction": "", "outputs": []})",
       "'length'"},
      {R"({"id": "niah_single_1/300/0", "task": "niah_single_1", "length": 300.5, "index": 0, "score": 0, "prediction": "", "outputs": []})",
       "'length'"},
      {results_line("niah_single_1", 300, 0), "appears a second time"},
  };
  for (const auto& [line, why] : foreign) {
    const std::string text =
        results_line("niah_single_1", 300, 0) + "\n" + line + "\n" + results_line("niah_single_1", 300, 1) + "\n";
    spit(out, text);
    INFO(line);
    const std::string e = test::error_of([&] { ResultsFile f(out, ro); });
    CHECK(has(e, out + " line 2: "));
    CHECK(has(e, why));
    CHECK(read_file(out) == text);  // kept as it was
    // --force does not replace a file that is not a results file either
    ResultsOptions force;
    force.force = true;
    CHECK(has(test::error_of([&] { ResultsFile f(out, force); }), out + " line 2: "));
    CHECK(read_file(out) == text);
  }
  // the last complete line is checked too (it used to be cut off as "torn")
  const std::string text = results_line("niah_single_1", 300, 0) + "\n" + "{\"a\": 1}\n";
  spit(out, text);
  CHECK(has(test::error_of([&] { ResultsFile f(out, ro); }), out + " line 2: not a results line"));
  CHECK(read_file(out) == text);
}

TEST_CASE("ruler results: --resume removes only an unterminated last line, and only a cut-short results line",
          "[ruler]") {
  const std::string dir = test::scratch_dir("ruler_torn");
  const std::string out = dir + "/results.jsonl";
  const std::string l0 = results_line("niah_single_1", 300, 0), l1 = results_line("niah_single_1", 300, 1);
  ResultsOptions ro;
  ro.resume = true;
  for (const std::string& tail : {l1.substr(0, l1.size() / 2), l1, std::string("{"), l1.substr(0, l1.size() - 1)}) {
    spit(out, l0 + "\n" + tail);
    INFO(tail);
    {
      ResultsFile f(out, ro);
      CHECK(f.cut_torn());
      CHECK(f.done() == std::vector<std::string>{"niah_single_1/300/0"});
    }
    CHECK(read_file(out) == l0 + "\n");
  }
  // complete lines only: nothing cut
  spit(out, l0 + "\n" + l1 + "\n");
  {
    ResultsFile f(out, ro);
    CHECK(!f.cut_torn());
    CHECK(f.done().size() == 2);
  }
  CHECK(read_file(out) == l0 + "\n" + l1 + "\n");
  // an unterminated line that is plain text, or JSON of another kind, is not a torn results line: refused, kept
  for (const std::string& tail : {std::string("hello"), std::string("{\"a\": 1}"), data_line(0, 300)}) {
    spit(out, l0 + "\n" + tail);
    INFO(tail);
    CHECK(has(test::error_of([&] { ResultsFile f(out, ro); }), out + " line 2: "));
    CHECK(read_file(out) == l0 + "\n" + tail);
  }
  // a file of one unterminated text line (not ours) is not emptied
  spit(out, "my notes");
  CHECK(has(test::error_of([&] { ResultsFile f(out, ro); }), "not a results line"));
  CHECK(read_file(out) == "my notes");
}

TEST_CASE("ruler results: an existing --out needs --resume or --force; --force empties a results file once locked",
          "[ruler]") {
  const std::string dir = test::scratch_dir("ruler_exists");
  const std::string out = dir + "/results.jsonl";
  const std::string l0 = results_line("niah_single_1", 300, 0);
  spit(out, l0 + "\n");
  CHECK(has(test::error_of([&] { ResultsFile f(out, ResultsOptions{}); }),
            "results exist; pass --resume to continue that run, --force to replace them"));
  CHECK(read_file(out) == l0 + "\n");
  ResultsOptions both;
  both.resume = both.force = true;
  CHECK(has(test::error_of([&] { ResultsFile f(out, both); }), "--resume and --force together"));
  ResultsOptions force;
  force.force = true;
  {
    ResultsFile f(out, force);
    CHECK(f.done().empty());
    f.append(results_line("niah_single_1", 300, 7));
  }
  CHECK(read_file(out) == results_line("niah_single_1", 300, 7) + "\n");
  // not a regular file: a folder, a FIFO, a symlink
  fs::create_directories(dir + "/folder.jsonl");
  CHECK(has(test::error_of([&] { ResultsFile f(dir + "/folder.jsonl", force); }), "not a regular file"));
  REQUIRE(::mkfifo((dir + "/fifo.jsonl").c_str(), 0644) == 0);
  CHECK(has(test::error_of([&] { ResultsFile f(dir + "/fifo.jsonl", force); }), "not a regular file"));
  fs::create_symlink("results.jsonl", dir + "/link.jsonl");
  CHECK(has(test::error_of([&] { ResultsFile f(dir + "/link.jsonl", force); }), "is a symbolic link"));
  // a file created and never written is removed again (the run stopped before its first sample)
  { ResultsFile f(dir + "/fresh.jsonl", ResultsOptions{}); }
  CHECK(!fs::exists(dir + "/fresh.jsonl"));
  // a missing folder is refused, as for every output (model/output_file.hpp's check_output_file)
  CHECK(!test::error_of([&] { ResultsFile f(dir + "/new/sub/r.jsonl", ResultsOptions{}); }).empty());
  CHECK(!fs::exists(dir + "/new"));
}

TEST_CASE("ruler results: a second writer of one results file is refused at once while the first holds it", "[ruler]") {
  const std::string dir = test::scratch_dir("ruler_lock");
  const std::string out = dir + "/results.jsonl";
  ResultsOptions resume;
  resume.resume = true;
  ResultsFile first(out, ResultsOptions{});
  first.append(results_line("niah_single_1", 300, 0));
  const auto t0 = std::chrono::steady_clock::now();
  CHECK(has(test::error_of([&] { ResultsFile second(out, resume); }), "another process holds its lock"));
  ResultsOptions force;
  force.force = true;
  CHECK(has(test::error_of([&] { ResultsFile second(out, force); }), "another process holds its lock"));
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));  // refused, not waited for
  first.append(results_line("niah_single_1", 300, 1));
  CHECK(read_file(out) == results_line("niah_single_1", 300, 0) + "\n" + results_line("niah_single_1", 300, 1) + "\n");
}

TEST_CASE("ruler results: a write past the file-size limit is an error naming the file, and leaves no torn line",
          "[ruler]") {
  const std::string dir = test::scratch_dir("ruler_efbig");
  const std::string out = dir + "/results.jsonl";
  const std::string l0 = results_line("niah_single_1", 300, 0);
  ::signal(SIGXFSZ, SIG_IGN);  // the write then fails with EFBIG instead of killing the process
  struct rlimit old;
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &old) == 0);
  std::string e;
  {
    ResultsFile f(out, ResultsOptions{});
    f.append(l0);
    struct rlimit small = old;
    small.rlim_cur = rlim_t(l0.size() + 40);  // room for part of the next line only
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
    e = test::error_of([&] { f.append(results_line("niah_single_1", 300, 1)); });
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &old) == 0);
  }
  CHECK(has(e, "--out " + out + ": writing a results line failed: File too large"));
  CHECK(read_file(out) == l0 + "\n");  // the part that was written is cut off again
}

TEST_CASE("ruler data: integers range-checked and parsed strictly; a bad one names the file, line and field",
          "[ruler]") {
  const std::string dir = test::scratch_dir("ruler_data_numbers");
  const std::string path = dir + "/data.jsonl";
  auto err = [&](const std::string& field, const std::string& value) {
    nlohmann::json j = nlohmann::json::parse(data_line(1, 300));
    j[field] = nlohmann::json::parse(value);
    spit(path, data_line(0, 300) + "\n" + j.dump() + "\n");
    return test::error_of([&] { read_samples(path); });
  };
  for (const char* field : {"index", "length", "max_seq_length", "haystack_units"})
    for (const char* v :
         {"-1", "1.5", "1e3", "9223372036854775808", "18446744073709551615", "1e30", "\"10\"", "true"}) {
      INFO(field << " = " << v);
      const std::string e = err(field, v);
      CHECK(has(e, path + " line 2: field '" + field + "'"));
    }
  CHECK(has(err("length", "0"), "[1, 67108864]"));
  CHECK(has(err("length", "67108865"), "[1, 67108864]"));
  CHECK(has(err("index", "2147483648"), "field 'index'"));
  CHECK(has(err("seed", "-5"), "field 'seed'"));
  CHECK(has(err("seed", "0.5"), "field 'seed'"));
  CHECK(has(err("depths", "[101]"), "field 'depths'"));
  CHECK(has(err("depths", "[-1]"), "field 'depths'"));
  CHECK(has(err("needle_token_spans", "[[5, 2]]"), "field 'needle_token_spans'"));
  CHECK(has(err("needle_token_spans", "[[0, 301]]"), "field 'needle_token_spans'"));
  CHECK(has(err("needle_token_spans", "[[-1, 2]]"), "field 'needle_token_spans'"));
  CHECK(has(err("outputs", "[]"), "field 'outputs'"));
  CHECK(has(err("outputs", "[\"\"]"), "field 'outputs'"));
  CHECK(has(err("template", "\"other\""), "field 'template'"));
  CHECK(has(err("task", "\"niah_x\""), "unknown task 'niah_x'"));
  // a run's own bound: its config's max_positions with extrapolation
  ReadOptions ro;
  ro.max_length = 256;
  spit(path, data_line(0, 300) + "\n");
  CHECK(has(test::error_of([&] { read_samples(path, ro); }), "field 'length'"));
  CHECK(has(test::error_of([&] { read_samples(path, ro); }), "[1, 256]"));
  // RULER's files without max_seq_length: the power of two >= length must stay within the bound too
  ro.max_length = 400;
  CHECK(has(test::error_of([&] { read_samples(path, ro); }), "target length 512"));
}

TEST_CASE("ruler data: a line far longer than its declared length is refused before it is tokenized, fast", "[ruler]") {
  const std::string dir = test::scratch_dir("ruler_data_huge_line");
  const std::string path = dir + "/data.jsonl";
  spit(path, data_line(0, 231, std::string(50 << 20, 'a')) + "\n");
  const auto t0 = std::chrono::steady_clock::now();
  const std::string e = test::error_of([&] { read_samples(path); });
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(has(
      e,
      path +
          " line 1: fields 'input' + 'answer_prefix' are 52428828 bytes, more than field 'length' (231 tokens) can hold"));
  CHECK(s < 10);  // parsed, not tokenized (tokenizing it took 88 s and 5.5 GB)
  // just inside the bound reads
  spit(path, data_line(0, 231, std::string(231 * kMaxBytesPerToken - 100, 'a')) + "\n");
  CHECK(read_samples(path).size() == 1);
  // a line past kMaxDataLineBytes is refused while it is read, whatever it declares
  {
    std::ofstream out(path, std::ios::binary);
    out << "{\"input\": \"";
    const std::string mb(1 << 20, 'b');
    for (int i = 0; i < 65; ++i) out << mb;
  }
  CHECK(has(test::error_of([&] { read_samples(path); }), path + " line 1: longer than 67108864 bytes"));
}

TEST_CASE("ruler data: a data file that is not a regular file is refused", "[ruler]") {
  const std::string dir = test::scratch_dir("ruler_data_kinds");
  CHECK(has(test::error_of([&] { read_samples(dir); }), "is not a regular file"));
  REQUIRE(::mkfifo((dir + "/fifo").c_str(), 0644) == 0);
  CHECK(has(test::error_of([&] { read_samples(dir + "/fifo"); }), "is not a regular file"));  // without blocking
  CHECK(has(test::error_of([&] { read_samples("/dev/zero"); }), "is not a regular file"));
  CHECK(has(test::error_of([&] { read_samples(dir + "/missing.jsonl"); }), "cannot open"));
  fs::create_symlink("/dev/zero", dir + "/zero.jsonl");
  CHECK(has(test::error_of([&] { read_samples(dir + "/zero.jsonl"); }), "is not a regular file"));
  spit(dir + "/empty.jsonl", "\n\n");
  CHECK(has(test::error_of([&] { read_samples(dir + "/empty.jsonl"); }), "no samples"));
}

TEST_CASE("ruler merge: shards are merged whole, then removed; a sample in two shards changes nothing", "[ruler]") {
  const std::string dir = test::scratch_dir("ruler_merge");
  const std::string out = dir + "/results.jsonl";
  const std::string s0 = shard_path(out, Shard{0, 2, "--gpus"}), s1 = shard_path(out, Shard{1, 2, "--gpus"});
  const std::string a = results_line("niah_single_1", 300, 0), b = results_line("niah_single_1", 300, 1),
                    c = results_line("niah_single_1", 300, 2);
  spit(s0, a + "\n" + c + "\n");
  spit(s1, b + "\n");
  MergeSummary m = merge_shards(out, 2);
  CHECK(m.merged == 3);
  CHECK(read_file(out) == a + "\n" + c + "\n" + b + "\n");
  CHECK(!fs::exists(s0));
  CHECK(!fs::exists(s1));
  // a resumed run: --out's lines first; a shard line --out already holds (a merge stopped before removing the
  // shards) is skipped, not doubled
  const std::string d = results_line("niah_single_1", 300, 3);
  spit(s0, a + "\n" + d + "\n");
  m = merge_shards(out, 2);
  CHECK(m.kept == 3);
  CHECK(m.already == 1);
  CHECK(m.merged == 1);
  CHECK(read_file(out) == a + "\n" + c + "\n" + b + "\n" + d + "\n");
  // a sample in two shards: refused, nothing changed
  const std::string before = read_file(out);
  const std::string e = results_line("niah_single_1", 300, 4);
  spit(s0, e + "\n");
  spit(s1, e + "\n");
  CHECK(has(test::error_of([&] { merge_shards(out, 2); }), "is also in another shard; nothing was merged"));
  CHECK(read_file(out) == before);
  CHECK(fs::exists(s0));
  CHECK(fs::exists(s1));
  // a shard a worker still writes (its lock held) is not merged
  spit(s1, results_line("niah_single_1", 300, 5) + "\n");
  {
    ResultsOptions ro;
    ro.resume = true;
    ResultsFile busy(s1, ro);
    CHECK(has(test::error_of([&] { merge_shards(out, 2); }), "a worker is still writing it"));
  }
  CHECK(read_file(out) == before);
  // a shard with a torn last line is not merged (--resume redoes that sample)
  spit(s1, results_line("niah_single_1", 300, 5) + "\n" + "{\"id\": \"niah");
  CHECK(has(test::error_of([&] { merge_shards(out, 2); }), "unterminated"));
  CHECK(read_file(out) == before);
}

TEST_CASE("ruler launch: --gpus parsed strictly, worker command lines, exit codes of the workers", "[ruler]") {
  ::setenv("CUDA_VISIBLE_DEVICES", "3,5", 1);
  CHECK(gpu_devices("all") == std::vector<std::string>{"3", "5"});
  ::setenv("CUDA_VISIBLE_DEVICES", "3,,5", 1);
  CHECK(has(test::error_of([] { gpu_devices("all"); }), "empty or overlong entry"));
  ::unsetenv("CUDA_VISIBLE_DEVICES");
  CHECK(gpu_devices("2") == std::vector<std::string>{"0", "1"});
  for (const char* bad : {"0", "-1", "2x", "", " 2", "65", "99999999999", "0x2", "1.5"}) {
    INFO(bad);
    CHECK(has(test::error_of([&] { gpu_devices(bad); }), "expected all or a whole number of GPUs in [1, 64]"));
  }
  const std::vector<std::string> argv = {"salasim", "ruler",   "run",      "--gpus", "2",
                                         "--data",  "d.jsonl", "--gpus=3", "--out",  "r.jsonl"};
  CHECK(worker_args(argv, 1, 2, "r.jsonl", false) ==
        std::vector<std::string>{"salasim", "ruler", "run", "--data", "d.jsonl", "--out", "r.jsonl", "--shard=1/2"});
  CHECK(worker_args(argv, 0, 2, "r.jsonl", true).back() == "--also-done=r.jsonl");
  const std::vector<int> codes = run_workers("/bin/sh",
                                             {{"sh", "-c", "exit 0"},
                                              {"sh", "-c", "exit 2"},
                                              {"sh", "-c", "kill -9 $$"},
                                              {"sh", "-c", "test \"$CUDA_VISIBLE_DEVICES\" = 7"}},
                                             {"0", "1", "2", "7"});
  CHECK(codes == std::vector<int>{0, 2, 128 + 9, 0});
  CHECK(run_workers("/nonexistent/salasim", {{"x"}}, {"0"}) == std::vector<int>{127});
}

TEST_CASE("machine memory: cgroup limits, the cgroup path and VmSize parse; the address-space limit binds", "[ruler]") {
  CHECK(parse_cgroup_limit("max\n") == -1);
  CHECK(parse_cgroup_limit("9223372036854771712\n") == -1);  // v1's "no limit"
  CHECK(parse_cgroup_limit("6442450944\n") == 6442450944);
  CHECK(parse_cgroup_limit("") == -1);
  CHECK(parse_cgroup_limit("-5") == -1);
  CHECK(parse_cgroup_limit("12abc") == -1);
  bool v2 = true;
  CHECK(parse_cgroup_path("5:devices:/\n4:memory:/a/b\n0::/\n", &v2) == "/a/b");
  CHECK(!v2);
  CHECK(parse_cgroup_path("0::/user.slice/x.scope\n", &v2) == "/user.slice/x.scope");
  CHECK(v2);
  CHECK(parse_cgroup_path("garbage", &v2).empty());
  CHECK(parse_vm_size("Name: x\nVmSize:\t  3060 kB\n") == 3060 * 1024);
  CHECK(parse_vm_size("VmSize: 99999999999999999999 kB\n") == -1);
  CHECK(parse_vm_size("") == -1);
  const MachineMemory m = machine_memory();
  CHECK(m.usable > 0);
  CHECK(m.physical > 0);
  // under an address-space limit the usable memory is what is left of it
  struct rlimit old;
  REQUIRE(::getrlimit(RLIMIT_AS, &old) == 0);
  struct rlimit small = old;
  small.rlim_cur = rlim_t(int64_t(8) << 30);  // 8 GiB of address space
  if (old.rlim_cur == RLIM_INFINITY || old.rlim_cur > small.rlim_cur) {
    REQUIRE(::setrlimit(RLIMIT_AS, &small) == 0);
    const MachineMemory limited = machine_memory();
    const std::string e =
        test::error_of([] { check_fits_in_memory(double(int64_t(7) << 30), "a test allocation", "ask for less"); });
    REQUIRE(::setrlimit(RLIMIT_AS, &old) == 0);
    CHECK(limited.address_space > 0);
    CHECK(limited.address_space <= int64_t(8) << 30);
    CHECK(has(e, "a test allocation needs about 7.00 GiB, and this process may use"));
    CHECK(has(e, "ask for less"));
  }
}

TEST_CASE("ruler report: --out is a new folder built whole; an existing one needs --force; its inputs stay",
          "[ruler]") {
  const std::string dir = test::scratch_dir("ruler_report_out");
  const std::string results = dir + "/results.jsonl";
  spit(results, results_line("niah_single_1", 300, 0, 1.0) + "\n" + results_line("niah_single_1", 2048, 0, 0.0) + "\n");
  ReportOptions o;
  o.results = {results};
  o.out_dir = dir + "/report";
  ruler_report(o);
  CHECK(fs::is_regular_file(dir + "/report/report.md"));
  // the depth table: a column a length, a row a decile (every needle found: the prediction holds it)
  const std::string md = read_file(dir + "/report/report.md");
  CHECK(has(md, "| depth | 300 | 2K |\n|---|---|---|\n| 0–10% |  |  |\n"));
  CHECK(has(md, "| 50–60% | 100 (n 1) | 100 (n 1) |"));
  CHECK(has(test::error_of([&] { ruler_report(o); }), "--out " + dir + "/report: exists already"));
  o.force = true;
  ruler_report(o);
  CHECK(fs::is_regular_file(dir + "/report/report.md"));
  // a folder that holds an input is never replaced
  o.out_dir = dir;
  CHECK(has(test::error_of([&] { ruler_report(o); }), "holds the input"));
  CHECK(fs::exists(results));
  // no temporary folder is left beside it
  for (const auto& e : fs::directory_iterator(dir))
    CHECK(e.path().filename().string().find(".tmp-") == std::string::npos);
  // a results line with a field out of range names it
  spit(
      results,
      R"({"id": "niah_single_1/300/0", "task": "niah_single_1", "length": 300, "index": 0, "score": 0.5, "prediction": "", "outputs": ["1"], "depths": [1e300]})"
      "\n");
  o.out_dir.clear();
  CHECK(has(test::error_of([&] { ruler_report(o); }), "field 'depths'"));
  spit(
      results,
      R"({"id": "niah_single_1/300/0", "task": "niah_single_1", "length": 300, "index": 0, "score": 0.5, "prediction": "", "outputs": ["1"], "selection": [{"layers": [{"layer": 99999999999, "recall": 0.5}]}]})"
      "\n");
  CHECK(has(test::error_of([&] { ruler_report(o); }), "'layer' in [0, 4095]"));
}

// RULER's prepare.py numbers each chunk's samples from 0 (--chunk_idx / --chunk_amount), so a data file made by
// concatenating chunks repeats (task, length, index): the ids must still be unique and stable, and the results
// file must take them.
TEST_CASE("ruler ids: a repeated index gets .2, .3 in file order, and results lines with such ids are results lines",
          "[ruler]") {
  auto line = [](int64_t index, int64_t at) {
    DataLine d;
    d.sample.task = "niah_single_1";
    d.sample.max_seq_length = 4096;
    d.sample.index = index;
    d.line = at;
    return d;
  };
  const std::vector<DataLine> data = {line(0, 1), line(1, 2), line(0, 3), line(1, 4), line(0, 5)};
  CHECK(sample_ids(data) == std::vector<std::string>{"niah_single_1/4096/0", "niah_single_1/4096/1",
                                                     "niah_single_1/4096/0.2", "niah_single_1/4096/1.2",
                                                     "niah_single_1/4096/0.3"});
  CHECK(sample_ids(data) == sample_ids(data));  // the same file in the same order: the same ids (--resume)
  nlohmann::json j = nlohmann::json::parse(results_line("niah_single_1", 4096, 0));
  CHECK(results_line_problem(j).empty());
  for (const char* ok : {"niah_single_1/4096/0.2", "niah_single_1/4096/0.17"}) {
    j["id"] = ok;
    CHECK(results_line_problem(j).empty());
  }
  for (const char* bad : {"niah_single_1/4096/0.1", "niah_single_1/4096/0.0", "niah_single_1/4096/0.02",
                          "niah_single_1/4096/0.x", "niah_single_1/4096/0.", "niah_single_1/4096/1.2"}) {
    j["id"] = bad;
    INFO(bad);
    CHECK(results_line_problem(j).find("field 'id'") != std::string::npos);
  }
}

// The essay haystack is the book alone: a needle must never land in a producer's credit, transcriber's notes, the
// contents or the licence of the Gutenberg file it comes from.
TEST_CASE("ruler essay: the haystack is the book from its first chapter, without Gutenberg's front matter or licence",
          "[ruler]") {
  const fs::path dir = test::scratch_dir("ruler_essay");
  std::string book =
      "\xEF\xBB\xBFThe Project Gutenberg EBook of A Test, by Someone\r\n\r\nThis eBook is for the use of anyone\r\n"
      "*** START OF THIS PROJECT GUTENBERG EBOOK A TEST ***\r\n\r\nProduced by A. Volunteer\r\n\r\n"
      "Transcriber's Notes: none.\r\n\r\nCONTENTS\r\n\r\n";
  for (int c = 1; c <= 3; ++c) {
    book += fmt::format("CHAPTER {}. A chapter.\r\n\r\n", c);
    for (int p = 0; p < 40; ++p) book += "The sea was calm and the crew slept, and nobody spoke of the whale.\r\n\r\n";
    if (c == 2) book += "A paragraph about Project Gutenberg inside the body is dropped too.\r\n\r\n";
  }
  book +=
      "End of Project Gutenberg's A Test, by Someone\r\n\r\n*** END OF THIS PROJECT GUTENBERG EBOOK A TEST ***\r\n"
      "Section 1. General Terms of Use and Redistributing Project Gutenberg-tm electronic works\r\n";
  std::ofstream(dir / "book.txt", std::ios::binary) << book;
  auto joined = [](const ruler::Essay& e) {
    std::string s;
    for (const std::string& w : e.words) s += w + " ";
    return s;
  };
  const std::string t = joined(load_essay((dir / "book.txt").string()));
  CHECK(t.rfind("CHAPTER 1. A chapter. The sea was calm", 0) == 0);
  for (const char* gone : {"Gutenberg", "EBook", "eBook", "Produced", "Transcriber", "CONTENTS", "General Terms"}) {
    INFO(gone);
    CHECK(t.find(gone) == std::string::npos);
  }
  CHECK(t.find("CHAPTER 3. A chapter.") != std::string::npos);
  // the shipped haystack (Moby-Dick, .ci/setup installs it)
  REQUIRE(fs::exists(kDefaultEssay));
  const std::string m = joined(load_essay(kDefaultEssay));
  CHECK(m.rfind("CHAPTER 1. Loomings. Call me Ishmael.", 0) == 0);
  for (const char* gone : {"Gutenberg", "EBook", "Produced by Daniel", "Transcriber", "gutenberg.org"}) {
    INFO(gone);
    CHECK(m.find(gone) == std::string::npos);
  }
}
