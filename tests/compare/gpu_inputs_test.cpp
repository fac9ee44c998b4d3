// What the golden hash reads: source_tokens drops comments and layout and nothing else; the manifest of the GPU
// path's inputs is read strictly; a build's compile commands and depfiles give its inputs, and a file the GPU path
// compiles that the manifest lacks is named.
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "compare/gpu_inputs.hpp"
#include "compare/source_tokens.hpp"
#include "model/error.hpp"
#include "tests/support/catch.hpp"
#include "tests/support/errors.hpp"
#include "tests/support/paths.hpp"

using namespace salasim;
using test::error_of;
namespace fs = std::filesystem;

namespace {
void write_file(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}
}  // namespace

TEST_CASE("source_tokens: comments and whitespace between tokens vanish; every other change stays", "[golden]") {
  const std::string base = source_tokens("int f(int x) { return x + 1; }\n");
  CHECK(base == "int f ( int x ) { return x + 1 ; }");
  for (const char* same : {"int f(int x){return x+1;}", "int  f (int\tx)\n{\n  return x + 1;  // one more\n}\n",
                           "/* f */ int f(int x) { return /* x */ x + 1; }", "int f(int x) { return x \\\n+ 1; }"})
    CHECK(source_tokens(same) == base);
  for (const char* other : {"int f(int x) { return x + 2; }", "int f(int y) { return y + 1; }",
                            "int f(int x) { return x - 1; }", "long f(int x) { return x + 1; }"})
    CHECK(source_tokens(other) != base);
  // maximal munch: "a - -b" is not "a--b"; "x+=1" is "x += 1"
  CHECK(source_tokens("a - -b") != source_tokens("a--b"));
  CHECK(source_tokens("x+=1;") == source_tokens("x += 1 ;"));
  CHECK(source_tokens("a>>=b") == "a >>= b");
  // literals are kept byte for byte, comment markers inside them included
  CHECK(source_tokens("s = \"a  // b\";") == "s = \"a  // b\" ;");
  CHECK(source_tokens("s = \"a b\";") != source_tokens("s = \"a  b\";"));
  CHECK(source_tokens("c = '\\'';  // q") == "c = '\\'' ;");
  CHECK(source_tokens("r = R\"x(a // \" b)x\";") == "r = R\"x(a // \" b)x\" ;");
  CHECK(source_tokens("u8\"a\" L'b'") == "u8\"a\" L'b'");
  // numbers: one token each, exponents and digit separators included
  CHECK(source_tokens("1.0e-5f+0x1p-3+1'000") == "1.0e-5f + 0x1p-3 + 1'000");
  // a directive ends at its line's end: joining it to the next line is a change
  const std::string d = source_tokens("#define K 1\nint x = K;\n");
  CHECK(d == "# define K 1\nint x = K ;");
  CHECK(source_tokens("#define K 1 int x = K;\n") != d);
  CHECK(source_tokens("  #  define K 1   // one\n\nint x=K;") == d);
  CHECK(source_tokens("#define K /* spans\n lines */ 1\nint x = K;\n") == d);  // a comment is one space
  CHECK(source_tokens("#define K \\\n 1\nint x = K;\n") == d);
  CHECK(source_tokens("#include \"gpu/a.hpp\"\n#include <cuda.h>\n") ==
        "# include \"gpu/a.hpp\"\n# include < cuda . h >\n");
  // unterminated things do not run away
  CHECK(source_tokens("/* open") == "");
  CHECK(source_tokens("\"open") == "\"open");
}

TEST_CASE("gpu_inputs: depfiles, compile commands and flags are read as the compiler wrote them", "[golden]") {
  CHECK(depfile_paths("obj.o: /a/x.cu /a/b.hpp \\\n  /a/c.cuh \\\n  /a/my\\ dir/d.h\n") ==
        std::vector<std::string>{"/a/x.cu", "/a/b.hpp", "/a/c.cuh", "/a/my dir/d.h"});
  CHECK(depfile_paths("obj.o:\n").empty());
  CHECK(split_command("nvcc -DX=\\\"/p\\\" 'a b' \"c d\" e\\ f") ==
        std::vector<std::string>{"nvcc", "-DX=\"/p\"", "a b", "c d", "e f"});
  const std::vector<std::string> nvcc = split_command(
      "/usr/local/cuda/bin/nvcc -forward-unknown-to-host-compiler -DFMT_SHARED -DSALASIM_SOURCE_DIR=\\\"/work/main\\\" "
      "--options-file CMakeFiles/salasim_gpu.dir/includes_CUDA.rsp -O3 -DNDEBUG "
      "--generate-code=arch=compute_90a,code=[compute_90a,sm_90a] -Xcompiler=-fPIC --expt-relaxed-constexpr -lineinfo "
      "-Xcompiler=-Wall,-Wextra --Werror=all-warnings -Xcompiler=-Werror -std=c++20 -MD -MT x.o -MF x.o.d -x cu -c "
      "/work/main/gpu/gla.cu -o CMakeFiles/salasim_gpu.dir/gla.cu.o");
  CHECK(normalize_flags(nvcc, "/work/main/gpu/gla.cu") ==
        std::vector<std::string>{"-forward-unknown-to-host-compiler", "-DFMT_SHARED", "-O3", "-DNDEBUG",
                                 "--generate-code=arch=compute_90a,code=[compute_90a,sm_90a]", "-Xcompiler=-fPIC",
                                 "--expt-relaxed-constexpr", "-lineinfo", "-std=c++20", "-x", "cu"});
  const std::vector<std::string> gxx = split_command(
      "/usr/bin/c++ -DFMT_SHARED -I/work/main -isystem /usr/local/cuda/include -O3 -DNDEBUG -fPIC -march=x86-64-v3 "
      "-Wall -Wextra -Werror -std=c++20 -o CMakeFiles/salasim_gpu.dir/runner.cpp.o -c /work/main/gpu/runner.cpp");
  CHECK(normalize_flags(gxx, "/work/main/gpu/runner.cpp") ==
        std::vector<std::string>{"-DFMT_SHARED", "-O3", "-DNDEBUG", "-fPIC", "-std=c++20"});
  // what changes code stays
  std::vector<std::string> fast = nvcc;
  fast.insert(fast.begin() + 5, "--use_fast_math");
  CHECK(normalize_flags(fast, "/work/main/gpu/gla.cu") != normalize_flags(nvcc, "/work/main/gpu/gla.cu"));
}

TEST_CASE("gpu_inputs: a file the GPU path includes that the manifest lacks is named, and so is a stale one",
          "[golden]") {
  // A build tree as CMake leaves it: compile_commands.json and one depfile per object.
  const fs::path root = test::scratch_dir("gpu_inputs_tree"), build = root / "build";
  write_file(root / "gpu" / "gla.cu", "#include \"gpu/launch_geometry.hpp\"\n");
  write_file(root / "gpu" / "launch_geometry.hpp", "constexpr int k = 1;\n");
  write_file(root / "gpu" / "runner.cpp", "#include \"model/config.hpp\"\n");
  write_file(root / "model" / "config.hpp", "struct C {};\n");
  const std::string obj_dir = (build / "gpu" / "CMakeFiles" / "salasim_gpu.dir").string();
  auto command = [&](const std::string& compiler, const std::string& file, const std::string& obj) {
    return fmt::format(
        R"({{"directory": "{}", "command": "{} -O3 -I{} -o CMakeFiles/salasim_gpu.dir/{} -c {}", "file": "{}"}})",
        (build / "gpu").string(), compiler, root.string(), obj, (root / file).string(), (root / file).string());
  };
  write_file(
      build / "compile_commands.json",
      fmt::format(
          R"([{}, {}, {{"directory": "/x", "command": "c++ -o CMakeFiles/salasim_model.dir/a.o -c /x/a.cpp", "file": "/x/a.cpp"}}])",
          command("nvcc", "gpu/gla.cu", "gla.cu.o"), command("c++", "gpu/runner.cpp", "runner.cpp.o")));
  write_file(fs::path(obj_dir) / "gla.cu.o.d",
             fmt::format("gla.cu.o: {} \\\n {} /usr/include/stdio.h\n", (root / "gpu/gla.cu").string(),
                         (root / "gpu/launch_geometry.hpp").string()));
  write_file(fs::path(obj_dir) / "runner.cpp.o.d",
             fmt::format("runner.cpp.o: ../../gpu/runner.cpp ../../model/config.hpp {}\n",
                         (build / "generated.hpp").string()));
  const GpuInputs b = gpu_inputs_of_build(build.string(), root.string());
  CHECK(b.files ==
        std::vector<std::string>{"gpu/gla.cu", "gpu/launch_geometry.hpp", "gpu/runner.cpp", "model/config.hpp"});
  CHECK(b.cuda_flags == std::vector<std::string>{"-O3"});
  CHECK(b.cxx_flags == std::vector<std::string>{"-O3"});

  // The manifest round-trips; one that misses model/config.hpp and lists a file no longer compiled is named twice.
  const fs::path manifest = root / "gpu" / "golden_inputs.txt";
  write_file(manifest, format_gpu_inputs(b));
  CHECK(diff_gpu_inputs(read_gpu_inputs(manifest.string()), b).empty());
  GpuInputs stale = b;
  stale.files = {"gpu/gla.cu", "gpu/launch_geometry.hpp", "gpu/old.cuh", "gpu/runner.cpp"};
  const std::vector<std::string> d = diff_gpu_inputs(stale, b);
  REQUIRE(d.size() == 2);
  CHECK(d[0].find("compiles model/config.hpp, which the manifest does not list") != std::string::npos);
  CHECK(d[1].find("lists gpu/old.cuh, which the GPU path no longer compiles") != std::string::npos);
  GpuInputs flags = b;
  flags.cuda_flags = {"-O2"};
  CHECK(diff_gpu_inputs(flags, b).size() == 1);

  // A build without the GPU library's objects, or without their depfiles, says so.
  fs::remove(fs::path(obj_dir) / "runner.cpp.o.d");
  CHECK(error_of([&] { gpu_inputs_of_build(build.string(), root.string()); }).find("no dependency file") !=
        std::string::npos);
  write_file(build / "compile_commands.json", "[]");
  CHECK(error_of([&] { gpu_inputs_of_build(build.string(), root.string()); }).find("no CUDA path") !=
        std::string::npos);
}

TEST_CASE("gpu_inputs: a Ninja build's dependency records stand in for the depfiles it does not keep", "[golden]") {
  // `ninja -t deps` as Ninja 1.11 prints it: a STALE record (the object changed since) is left out
  const auto deps = ninja_deps(
      "gpu/CMakeFiles/salasim_gpu.dir/gla.cu.o: #deps 2, deps mtime 1796598740569644347 (VALID)\n"
      "    /x/gpu/gla.cu\n    ../gpu/launch_geometry.hpp\n\n"
      "gpu/CMakeFiles/salasim_gpu.dir/old.cu.o: #deps 1, deps mtime 17 (STALE)\n    /x/gpu/old.cu\n\n"
      "gpu/CMakeFiles/salasim_gpu.dir/rope.cu.o: #deps 1, deps mtime 18 (VALID)\r\n    /x/gpu/rope.cu\r\n");
  REQUIRE(deps.size() == 2);
  CHECK(deps.at("gpu/CMakeFiles/salasim_gpu.dir/gla.cu.o") ==
        std::vector<std::string>{"/x/gpu/gla.cu", "../gpu/launch_geometry.hpp"});
  CHECK(deps.at("gpu/CMakeFiles/salasim_gpu.dir/rope.cu.o") == std::vector<std::string>{"/x/gpu/rope.cu"});
  CHECK(ninja_deps("").empty());

  // A real Ninja build of one unit (where ninja is installed: .ci/setup installs it): its inputs as a depfile's
  if (std::system("ninja --version > /dev/null 2>&1") != 0) {
    WARN("ninja not found: the end-to-end half of this test did not run");
    return;
  }
  const fs::path root = test::scratch_dir("gpu_inputs_ninja"), build = root / "build";
  write_file(root / "gpu" / "k.cpp", "#include \"gpu/k.hpp\"\nint f() { return k; }\n");
  write_file(root / "gpu" / "k.hpp", "constexpr int k = 1;\n");
  const std::string obj = "gpu/CMakeFiles/salasim_gpu.dir/k.cpp.o";
  write_file(build / "build.ninja",
             fmt::format("rule cxx\n  command = c++ -O2 -I{0} -MD -MF $out.d -o $out -c $in\n  depfile = $out.d\n"
                         "  deps = gcc\nbuild {1}: cxx {0}/gpu/k.cpp\n",
                         root.string(), obj));
  write_file(
      build / "compile_commands.json",
      fmt::format(
          R"([{{"directory": "{0}", "command": "c++ -O2 -I{1} -o {2} -c {1}/gpu/k.cpp", "file": "{1}/gpu/k.cpp"}}])",
          build.string(), root.string(), obj));
  REQUIRE(std::system(fmt::format("ninja -C '{}' > /dev/null 2>&1", build.string()).c_str()) == 0);
  REQUIRE(!fs::exists(build / (obj + ".d")));  // Ninja took the depfile into its log
  const GpuInputs b = gpu_inputs_of_build(build.string(), root.string());
  CHECK(b.files == std::vector<std::string>{"gpu/k.cpp", "gpu/k.hpp"});
  CHECK(b.cxx_flags == std::vector<std::string>{"-O2"});
  // the record gone (a clean build tree), the message says what to do
  REQUIRE(std::system(fmt::format("ninja -C '{}' -t clean > /dev/null 2>&1", build.string()).c_str()) == 0);
  fs::remove(build / ".ninja_deps");
  CHECK(error_of([&] { gpu_inputs_of_build(build.string(), root.string()); }).find("build the GPU library first") !=
        std::string::npos);
}

TEST_CASE("gpu_inputs: a damaged manifest is refused, naming the line", "[golden]") {
  const fs::path dir = test::scratch_dir("gpu_inputs_bad");
  auto err = [&](const std::string& text) {
    write_file(dir / "m.txt", text);
    return error_of([&] { read_gpu_inputs((dir / "m.txt").string()); });
  };
  CHECK(err("cuda-flags -O3\nfile gpu/b.cu\nfile gpu/a.cu\n").find("m.txt:3: 'gpu/a.cu' is out of order") !=
        std::string::npos);
  CHECK(err("cuda-flags -O3\nfile gpu/a.cu\nfile gpu/a.cu\n").find("out of order or repeated") != std::string::npos);
  CHECK(err("cuda-flags -O3\nfile ../etc/passwd\n").find("not a path inside the source tree") != std::string::npos);
  CHECK(err("cuda-flags -O3\nfile /etc/passwd\n").find("not a path inside the source tree") != std::string::npos);
  CHECK(err("cuda-flags -O3\ncuda-flags -O2\nfile gpu/a.cu\n").find("m.txt:2: a second 'cuda-flags' line") !=
        std::string::npos);
  CHECK(err("cuda-flags -O3\nfiles gpu/a.cu\n").find("m.txt:2: expected") != std::string::npos);
  CHECK(err("# only a comment\n").find("no 'cuda-flags' line or no 'file' lines") != std::string::npos);
  CHECK(error_of([&] { read_gpu_inputs((dir / "absent.txt").string()); }).find("not a regular file") !=
        std::string::npos);
  // this tree's manifest reads
  CHECK_NOTHROW(read_gpu_inputs(test::source_path(kGpuInputsFile)));
}
