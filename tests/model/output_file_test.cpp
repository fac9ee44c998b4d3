// The output policy (model/output_file.hpp): an existing output is kept unless forced, a failed write leaves
// nothing under the target's name and no temporary, a folder output appears whole or not at all.
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "model/error.hpp"
#include "model/output_file.hpp"
#include "tests/support/catch.hpp"
#include "tests/support/errors.hpp"
#include "tests/support/paths.hpp"

using namespace salasim;
using test::error_of;
namespace fs = std::filesystem;

namespace {
using test::read_file;
// Names in `dir`, hidden ones included (a temporary left behind would show here).
std::vector<std::string> names(const fs::path& dir) {
  std::vector<std::string> v;
  for (const auto& e : fs::directory_iterator(dir)) v.push_back(e.path().filename().string());
  std::sort(v.begin(), v.end());
  return v;
}
}  // namespace

TEST_CASE("output_file: an existing file is kept unless forced, and a forced write replaces it whole", "[output]") {
  const fs::path dir = test::scratch_dir("out_file");
  const std::string p = (dir / "a.txt").string();
  write_file_atomic(p, "first\n", false, "--out");
  CHECK(read_file(p) == "first\n");
  const std::string e = error_of([&] { write_file_atomic(p, "second\n", false, "--out"); });
  CHECK(e.find("--out " + p + ": exists already; it is kept (pass --force to replace it)") != std::string::npos);
  CHECK(read_file(p) == "first\n");
  write_file_atomic(p, "second\n", true, "--out");
  CHECK(read_file(p) == "second\n");
  CHECK(names(dir) == std::vector<std::string>{"a.txt"});  // no temporary left
}

TEST_CASE("output_file: a target that is not a regular file, or a folder that takes no files, is refused first",
          "[output]") {
  const fs::path dir = test::scratch_dir("out_refuse");
  CHECK(error_of([&] {
          check_output_file("/dev/full", true, "--json-out");
        }).find("exists and is not a regular file") != std::string::npos);
  CHECK(error_of([&] { check_output_file(dir.string(), true, "--out"); }).find("not a regular file") !=
        std::string::npos);
  CHECK(error_of([&] { check_output_file((dir / "no" / "x.h5").string(), true, "--out"); }).find("does not exist") !=
        std::string::npos);
  CHECK(error_of([&] { check_output_file("", true, "--out"); }).find("an empty path") != std::string::npos);
  fs::create_directories(dir / "ro");
  ::chmod((dir / "ro").c_str(), 0555);
  if (::geteuid() != 0)  // root writes anywhere: the permission case is only testable as another user
    CHECK(error_of([&] {
            check_output_file((dir / "ro" / "x").string(), false, "--out");
          }).find("cannot create files in") != std::string::npos);
  ::chmod((dir / "ro").c_str(), 0755);
  std::ofstream(dir / "file") << "x";
  CHECK(error_of([&] { check_output_folder((dir / "file").string(), true, "--out"); }).find("is not a folder") !=
        std::string::npos);
  CHECK(error_of([&] { check_output_folder((dir / "ro").string(), false, "--out"); }).find("exists already") !=
        std::string::npos);
}

TEST_CASE("output_file: an OutputFile not committed leaves neither the target nor its temporary", "[output]") {
  const fs::path dir = test::scratch_dir("out_abort");
  std::ofstream(dir / "keep.h5") << "old";
  {
    OutputFile out((dir / "new.h5").string(), false, "--out");
    std::ofstream(out.temp()) << "half";
    CHECK(fs::exists(out.temp()));
    CHECK(fs::path(out.temp()).parent_path() == dir);
    CHECK(fs::path(out.temp()).filename().string().rfind(".new.h5.tmp-", 0) == 0);
  }  // an exception or an early return: nothing committed
  CHECK(names(dir) == std::vector<std::string>{"keep.h5"});
  {
    OutputFile out((dir / "keep.h5").string(), true, "--out");
    std::ofstream(out.temp()) << "half";
  }
  CHECK(read_file(dir / "keep.h5") == "old");  // forced, but never committed: the old file stands
  {
    OutputFile out((dir / "keep.h5").string(), true, "--out");
    std::ofstream(out.temp()) << "new";
    out.commit();
  }
  CHECK(read_file(dir / "keep.h5") == "new");
  // a file that appeared while this one was written is not replaced without --force
  OutputFile late((dir / "late.h5").string(), false, "--out");
  std::ofstream(late.temp()) << "mine";
  std::ofstream(dir / "late.h5") << "theirs";
  CHECK(error_of([&] { late.commit(); }).find("appeared while this output was written") != std::string::npos);
  CHECK(read_file(dir / "late.h5") == "theirs");
}

TEST_CASE("output_file: temporaries of processes that are gone are removed by the next write of the target",
          "[output]") {
  const fs::path dir = test::scratch_dir("out_stale");
  // pid 2^22 + 1 is past Linux's pid_max default range (4194304): no process has it
  std::ofstream(dir / ".x.json.tmp-4194305") << "left by a SIGKILL";
  std::ofstream(dir / fmt::format(".x.json.tmp-{}x", ::getpid())) << "not a temporary of ours (not a pid)";
  write_file_atomic((dir / "x.json").string(), "{}\n", false);
  CHECK(names(dir) == std::vector<std::string>{fmt::format(".x.json.tmp-{}x", ::getpid()), "x.json"});
}

TEST_CASE("output_file: an OutputFolder appears whole at commit, replaces only when forced, and vanishes when dropped",
          "[output]") {
  const fs::path dir = test::scratch_dir("out_folder");
  const std::string bundle = (dir / "bundle").string();
  {
    OutputFolder f(bundle, false, "--out");
    std::ofstream(fs::path(f.temp()) / "a.md") << "a";
    CHECK(!fs::exists(bundle));
  }
  CHECK(names(dir).empty());
  {
    OutputFolder f(bundle + "/", false, "--out");  // a trailing slash names the same folder
    std::ofstream(fs::path(f.temp()) / "a.md") << "a";
    f.commit();
  }
  CHECK(names(bundle) == std::vector<std::string>{"a.md"});
  CHECK(error_of([&] { OutputFolder(bundle, false, "--out"); }).find("exists already; it is kept") !=
        std::string::npos);
  {
    OutputFolder f(bundle, true, "--out");
    std::ofstream(fs::path(f.temp()) / "b.md") << "b";
    CHECK(names(bundle) == std::vector<std::string>{"a.md"});  // the old one stands until commit
    f.commit();
  }
  CHECK(names(bundle) == std::vector<std::string>{"b.md"});
  CHECK(names(dir) == std::vector<std::string>{"bundle"});  // no temporary, no old copy
}

TEST_CASE("output_file: no output replaces a file this process read, even with --force", "[output]") {
  const fs::path dir = test::scratch_dir("out_inputs");
  const std::string in = (dir / "in.json").string(), hard = (dir / "hard.json").string();
  write_file_atomic(in, "{}\n", false);
  fs::create_hard_link(in, hard);
  guard_inputs(true);  // as main does
  note_input(in);      // what every reader does through require_regular_file
  for (const std::string& out : {in, hard}) {
    CHECK(error_of([&] { write_file_atomic(out, "x", true, "--out"); }).find("an input of this command") !=
          std::string::npos);
    CHECK(read_file(in) == "{}\n");
  }
  // a folder output holding an input is not replaced whole
  fs::create_directories(dir / "rep");
  write_file_atomic((dir / "rep" / "hw.json").string(), "{}\n", false);
  note_input((dir / "rep" / "hw.json").string());
  CHECK(error_of([&] { OutputFolder f((dir / "rep").string(), true, "--out"); }).find("holds") != std::string::npos);
  CHECK(fs::exists(dir / "rep" / "hw.json"));
  std::vector<std::string> want = {"hard.json", "in.json", "rep"};
  CHECK(names(dir) == want);  // no temporary
  guard_inputs(false);        // the library's default: a test binary rewrites what it read
  write_file_atomic(in, "[]\n", true, "--out");
  CHECK(read_file(in) == "[]\n");
}

TEST_CASE("output_file: a scratch folder is hidden beside its target and gone with its contents", "[output]") {
  const fs::path dir = test::scratch_dir("out_scratch");
  std::string kept;
  {
    const ScratchFolder s((dir / "tok.model").string());
    kept = s.path();
    CHECK(fs::path(kept).filename().string().rfind(".tok.model.work.tmp-", 0) == 0);
    write_file_atomic((fs::path(kept) / "a.vocab").string(), "v", true);
  }
  CHECK(!fs::exists(kept));
  CHECK(names(dir).empty());
}

TEST_CASE("output_file: a forced folder replacement swaps in one step and leaves no old folder", "[output]") {
  const fs::path dir = test::scratch_dir("out_swap");
  for (const char* text : {"old", "new"}) {
    OutputFolder f((dir / "rep").string(), true, "--out");
    write_file_atomic((fs::path(f.temp()) / "README.md").string(), text, true);
    f.commit();
  }
  CHECK(read_file(dir / "rep" / "README.md") == "new");
  CHECK(names(dir) == std::vector<std::string>{"rep"});
}
