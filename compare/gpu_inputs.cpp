// The GPU path's inputs from a build, and their manifest (see gpu_inputs.hpp).
#include "compare/gpu_inputs.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "model/error.hpp"
#include "model/json_field.hpp"

namespace fs = std::filesystem;

namespace salasim {

namespace {

constexpr int64_t kTextMaxBytes = int64_t(16) << 20;  // a manifest or a depfile: a few kB in practice

std::string read_text(const std::string& path, const char* what) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) fail("{}: not a regular file ({})", path, what);
  if (int64_t(fs::file_size(path, ec)) > kTextMaxBytes)
    fail("{}: larger than {} MiB ({})", path, kTextMaxBytes >> 20, what);
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  if (!in && !in.eof()) fail("{}: cannot read it ({})", path, what);
  return ss.str();
}

bool starts_with(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

// A path relative to the tree, '/'-separated, inside it.
bool tree_path(const std::string& p) {
  if (p.empty() || p[0] == '/' || p.find('\\') != std::string::npos) return false;
  for (const fs::path& part : fs::path(p))
    if (part == ".." || part == ".") return false;
  return true;
}

// Is `p` (lexically normal, absolute) inside `dir` (the same)?
bool inside(const fs::path& p, const fs::path& dir) {
  const fs::path rel = p.lexically_relative(dir);
  return !rel.empty() && *rel.begin() != "..";
}

// -Xcompiler=a,b,c without its warning items; "" when nothing is left.
std::string host_flags_without_warnings(const std::string& list) {
  std::vector<std::string> kept;
  std::stringstream ss(list);
  for (std::string item; std::getline(ss, item, ',');)
    if (!starts_with(item, "-W")) kept.push_back(item);
  return fmt::format("{}", fmt::join(kept, ","));
}

}  // namespace

std::vector<std::string> split_command(const std::string& command) {
  std::vector<std::string> out;
  std::string cur;
  bool have = false;
  char quote = 0;
  for (size_t i = 0; i < command.size(); ++i) {
    const char c = command[i];
    if (quote == '\'') {
      if (c == '\'') quote = 0;
      else cur += c;
    } else if (c == '\\' && i + 1 < command.size() && (quote == 0 || command[i + 1] == '"' || command[i + 1] == '\\')) {
      cur += command[++i];
      have = true;
    } else if (quote == '"') {
      if (c == '"') quote = 0;
      else cur += c;
    } else if (c == '"' || c == '\'') {
      quote = c;
      have = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (have || !cur.empty()) out.push_back(cur);
      cur.clear();
      have = false;
    } else {
      cur += c;
    }
  }
  if (have || !cur.empty()) out.push_back(cur);
  return out;
}

std::vector<std::string> normalize_flags(const std::vector<std::string>& argv, const std::string& source_file) {
  std::vector<std::string> out;
  for (size_t i = 1; i < argv.size(); ++i) {  // argv[0]: the compiler
    const std::string& a = argv[i];
    const bool takes_value = a == "-o" || a == "-c" || a == "-I" || a == "-isystem" || a == "--options-file" ||
                             a == "-MT" || a == "-MF" || a == "-MQ" || a == "-x" || a == "-D";
    if (takes_value && i + 1 < argv.size()) {
      const std::string& v = argv[i + 1];
      ++i;
      if (a == "-x") out.insert(out.end(), {a, v});  // the language matters
      else if (a == "-D" && !starts_with(v, "SALASIM_SOURCE_DIR=")) out.insert(out.end(), {a, v});
      else if (a == "-c" && v != source_file) out.push_back(v);  // "-c file": the file goes; a stray value stays
      continue;
    }
    if (a == source_file || a == "-c" || a == "-MD" || a == "-MMD") continue;
    if (starts_with(a, "-I") || starts_with(a, "-isystem") || starts_with(a, "-MF") || starts_with(a, "-MT")) continue;
    if (starts_with(a, "-DSALASIM_SOURCE_DIR=")) continue;
    if (starts_with(a, "-W") || starts_with(a, "--Werror") || starts_with(a, "-Werror")) continue;
    if (starts_with(a, "-march=") || starts_with(a, "-mtune=") || starts_with(a, "-fdiagnostics-color")) continue;
    if (starts_with(a, "-Xcompiler=")) {
      const std::string kept = host_flags_without_warnings(a.substr(11));
      if (!kept.empty()) out.push_back("-Xcompiler=" + kept);
      continue;
    }
    out.push_back(a);
  }
  return out;
}

std::map<std::string, std::vector<std::string>> ninja_deps(const std::string& text) {
  // "obj: #deps 3, deps mtime 123 (VALID)" then one indented dependency a line, a blank line after each record
  std::map<std::string, std::vector<std::string>> out;
  std::stringstream ss(text);
  std::vector<std::string>* cur = nullptr;
  for (std::string line; std::getline(ss, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) {
      cur = nullptr;
    } else if (line[0] == ' ' || line[0] == '\t') {
      if (cur) cur->push_back(line.substr(line.find_first_not_of(" \t")));
    } else {
      const size_t colon = line.find(": #deps ");
      const bool valid = colon != std::string::npos && line.find("(VALID)") != std::string::npos;
      cur = valid ? &out[line.substr(0, colon)] : nullptr;
    }
  }
  return out;
}

std::vector<std::string> depfile_paths(const std::string& text) {
  // Join continuation lines, then everything after the first ": " (the target) is the list.
  std::string joined;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() && (text[i + 1] == '\n' || text[i + 1] == '\r')) {
      while (i + 1 < text.size() && (text[i + 1] == '\n' || text[i + 1] == '\r')) ++i;
      joined += ' ';
      continue;
    }
    joined += text[i];
  }
  std::vector<std::string> out;
  std::stringstream lines(joined);
  for (std::string line; std::getline(lines, line);) {
    size_t colon = line.find(": ");
    if (colon == std::string::npos && !line.empty() && line.back() == ':') colon = line.size() - 1;
    if (colon == std::string::npos) continue;  // not a rule
    std::string cur;
    for (size_t i = colon + 1; i <= line.size(); ++i) {
      const char c = i < line.size() ? line[i] : ' ';
      if (c == '\\' && i + 1 < line.size() && (line[i + 1] == ' ' || line[i + 1] == '#')) {
        cur += line[++i];
      } else if (c == ' ' || c == '\t' || c == '\r') {
        if (!cur.empty()) out.push_back(cur);
        cur.clear();
      } else {
        cur += c;
      }
    }
  }
  return out;
}

GpuInputs read_gpu_inputs(const std::string& path) {
  const std::string text = read_text(path, "the GPU path's hashed inputs");
  GpuInputs in;
  bool saw_cuda = false, saw_cxx = false;
  std::stringstream ss(text);
  int no = 0;
  for (std::string line; std::getline(ss, line);) {
    ++no;
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> words;
    std::stringstream ls(line);
    for (std::string w; ls >> w;) words.push_back(w);
    if (words.empty()) continue;
    const std::string& kind = words.at(0);
    if (kind == "cuda-flags" || kind == "cxx-flags") {
      bool& saw = kind == "cuda-flags" ? saw_cuda : saw_cxx;
      if (saw) fail("{}:{}: a second '{}' line", path, no, kind);
      saw = true;
      (kind == "cuda-flags" ? in.cuda_flags : in.cxx_flags).assign(words.begin() + 1, words.end());
    } else if (kind == "file" && words.size() == 2) {
      const std::string& f = words[1];
      if (!tree_path(f)) fail("{}:{}: '{}' is not a path inside the source tree ('dir/name', no '..')", path, no, f);
      if (!in.files.empty() && f <= in.files.back())
        fail("{}:{}: '{}' is out of order or repeated (the list is sorted, each file once)", path, no, f);
      in.files.push_back(f);
    } else {
      fail("{}:{}: expected 'cuda-flags ...', 'cxx-flags ...' or 'file <path>', got '{}'", path, no, line);
    }
  }
  if (!saw_cuda || in.files.empty())
    fail(
        "{}: no 'cuda-flags' line or no 'file' lines: regenerate it with `salasim golden inputs --write` in a CUDA "
        "build",
        path);
  return in;
}

std::string format_gpu_inputs(const GpuInputs& in) {
  std::string out =
      "# What the golden hash covers (compare/source_hash.hpp, docs/goldens.md): every project file the GPU path's\n"
      "# translation units include, transitively, and their code-generation flags, as a CUDA build's compiler\n"
      "# reported them (depfiles and compile_commands.json). Generated: `build/salasim golden inputs --write`.\n"
      "# A ctest of CUDA builds (golden_inputs) fails while this file and the build differ.\n";
  out += fmt::format("cuda-flags {}\n", fmt::join(in.cuda_flags, " "));
  out += fmt::format("cxx-flags {}\n", fmt::join(in.cxx_flags, " "));
  for (const std::string& f : in.files) out += fmt::format("file {}\n", f);
  return out;
}

GpuInputs gpu_inputs_of_build(const std::string& build_dir, const std::string& source_root,
                              const std::string& target_dir) {
  const std::string cc_path = (fs::path(build_dir) / "compile_commands.json").string();
  if (!fs::exists(cc_path))
    fail("{}: not found: configure the build with CMake first (CMAKE_EXPORT_COMPILE_COMMANDS is on)", cc_path);
  const json cc = parse_json_file(cc_path);
  if (!cc.is_array()) fail("{}: expected an array of compile commands", cc_path);
  const fs::path root = fs::absolute(source_root).lexically_normal();
  const fs::path build = fs::absolute(build_dir).lexically_normal();
  std::set<std::string> files;
  std::map<std::string, std::vector<std::string>> flags_of;  // per language: the first unit's flags
  std::map<std::string, std::string> first_unit;
  // A Ninja build: its dependency records, read once (only if some unit lacks a depfile)
  std::optional<std::map<std::string, std::vector<std::string>>> ninja;
  const auto ninja_record = [&](const std::string& object) -> const std::vector<std::string>* {
    if (!fs::exists(build / "build.ninja")) return nullptr;
    if (!ninja) {
      const std::string cmd = "ninja -C '" + build.string() + "' -t deps 2>/dev/null";
      std::string text;
      if (FILE* p = popen(cmd.c_str(), "r")) {
        char buf[4096];
        for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) text.append(buf, n);
        pclose(p);
      }
      ninja = ninja_deps(text);
    }
    const auto it = ninja->find(object);
    return it == ninja->end() ? nullptr : &it->second;
  };
  int units = 0;
  for (const json& e : cc) {
    if (!e.is_object() || !e.contains("command") || !e.contains("directory") || !e.contains("file")) continue;
    const std::vector<std::string> argv = split_command(e.at("command").get<std::string>());
    const std::string source = e.at("file").get<std::string>();
    std::string object;
    for (size_t i = 0; i + 1 < argv.size(); ++i)
      if (argv[i] == "-o") object = argv[i + 1];
    if (object.find(target_dir) == std::string::npos) continue;
    ++units;
    const fs::path dir = e.at("directory").get<std::string>();
    const fs::path obj = fs::path(object).is_absolute() ? fs::path(object) : dir / object;
    const std::string dep = obj.string() + ".d";
    std::vector<std::string> deps;
    if (fs::exists(dep)) {
      deps = depfile_paths(read_text(dep, "a compiler dependency file"));
    } else if (const std::vector<std::string>* rec = ninja_record(object)) {
      deps = *rec;
    } else {
      fail(
          "{}: no dependency file for {} (nor a current record of `ninja -t deps`): build the GPU library first "
          "(cmake --build {} --target salasim_gpu)",
          dep, source, build_dir);
    }
    for (const std::string& d : deps) {
      const fs::path p = (fs::path(d).is_absolute() ? fs::path(d) : dir / d).lexically_normal();
      if (inside(p, root) && !inside(p, build)) files.insert(p.lexically_relative(root).generic_string());
    }
    const std::string lang = fs::path(source).extension() == ".cu" ? "cuda" : "cxx";
    const std::vector<std::string> f = normalize_flags(argv, source);
    auto [it, fresh] = flags_of.emplace(lang, f);
    if (fresh) first_unit[lang] = source;
    else if (it->second != f)
      fail("{}: {} and {} are compiled with different flags ({} / {}); the hash takes one set per language", cc_path,
           first_unit[lang], source, fmt::join(it->second, " "), fmt::join(f, " "));
  }
  if (units == 0)
    fail(
        "{}: no translation unit of the GPU library ({}): this build has no CUDA path (configure with "
        "-DSALASIM_CUDA=ON)",
        cc_path, target_dir);
  GpuInputs out;
  out.cuda_flags = flags_of["cuda"];
  out.cxx_flags = flags_of["cxx"];
  out.files.assign(files.begin(), files.end());
  return out;
}

std::vector<std::string> diff_gpu_inputs(const GpuInputs& manifest, const GpuInputs& build) {
  std::vector<std::string> out;
  for (const std::string& f : build.files)
    if (!std::binary_search(manifest.files.begin(), manifest.files.end(), f))
      out.push_back(fmt::format("the GPU path compiles {}, which the manifest does not list (the hash misses it)", f));
  for (const std::string& f : manifest.files)
    if (!std::binary_search(build.files.begin(), build.files.end(), f))
      out.push_back(fmt::format("the manifest lists {}, which the GPU path no longer compiles", f));
  if (manifest.cuda_flags != build.cuda_flags)
    out.push_back(fmt::format("CUDA flags: the manifest has '{}', the build uses '{}'",
                              fmt::join(manifest.cuda_flags, " "), fmt::join(build.cuda_flags, " ")));
  if (manifest.cxx_flags != build.cxx_flags)
    out.push_back(fmt::format("C++ flags: the manifest has '{}', the build uses '{}'",
                              fmt::join(manifest.cxx_flags, " "), fmt::join(build.cxx_flags, " ")));
  return out;
}

}  // namespace salasim
