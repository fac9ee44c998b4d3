// `salasim --version` and `salasim env`: what this binary is (revision, build, libraries) and what this machine
// offers it (a GPU or why not, gnuplot, Chromium, a Python with h5py, SentencePiece, RULER's word lists), the first
// thing to paste into a bug report.
#include <CLI/CLI.hpp>
#include <Eigen/Core>
#include <H5public.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "model/tokenizer.hpp"
#include "scenarios/no_gpu.hpp"
#include "scenarios/ruler/sources.hpp"

#ifdef SALASIM_HAVE_CUDA
#include <cublas_api.h>
#include <cuda_runtime_api.h>

#include "gpu/common.hpp"
#endif

namespace salasim::cli {

namespace {

// stdout of a shell command (its stderr folded in), trailing newlines removed; `ok` whether it exited 0.
std::string capture(const std::string& cmd, bool* ok = nullptr) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) {
    if (ok) *ok = false;
    return "";
  }
  char buf[512];
  std::string out;
  while (fgets(buf, sizeof buf, p) && out.size() < 4096) out += buf;
  const int rc = pclose(p);
  if (ok) *ok = rc == 0;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

struct Item {
  std::string name, value;
  bool ok = true;  // present and usable
};

std::string libraries() {
  unsigned h5maj = 0, h5min = 0, h5rel = 0;
  H5get_libversion(&h5maj, &h5min, &h5rel);
  std::string s =
      fmt::format("Eigen {}.{}.{}, HDF5 {}.{}.{}, fmt {}.{}.{}, nlohmann_json {}.{}.{}, CLI11 {}", EIGEN_WORLD_VERSION,
                  EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION, h5maj, h5min, h5rel, FMT_VERSION / 10000,
                  FMT_VERSION / 100 % 100, FMT_VERSION % 100, NLOHMANN_JSON_VERSION_MAJOR, NLOHMANN_JSON_VERSION_MINOR,
                  NLOHMANN_JSON_VERSION_PATCH, CLI11_VERSION);
  s +=
      fmt::format(", SentencePiece {}", sentencepiece_available() ? "linked" : "not built (a stub says how to get it)");
#ifdef SALASIM_HAVE_CUDA
  int rt = 0;
  cudaRuntimeGetVersion(&rt);
  s += fmt::format(", CUDA runtime {}.{} (static), cuBLAS {}.{}.{}", rt / 1000, rt % 1000 / 10, CUBLAS_VER_MAJOR,
                   CUBLAS_VER_MINOR, CUBLAS_VER_PATCH);
#endif
  return s;
}

std::string build_line() {
#ifdef SALASIM_HAVE_CUDA
  const std::string cuda = fmt::format("CUDA path built for {} with nvcc {}", SALASIM_CUDA_ARCHS, SALASIM_NVCC_VERSION);
#else
  const std::string cuda = "no CUDA path (nvcc was not found at configure time, or SALASIM_CUDA=OFF)";
#endif
  return fmt::format("{} build, {} {}, {}", SALASIM_BUILD_TYPE, SALASIM_CXX_ID, SALASIM_CXX_VERSION, cuda);
}

}  // namespace

std::string version_text() {
  const std::string rev = git_revision();
  return fmt::format("salasim {} (git {}{})\n{}\n{}", SALASIM_VERSION, rev.empty() ? "unknown" : rev,
                     rev.find("-dirty") != std::string::npos ? ": built from uncommitted changes" : "", build_line(),
                     libraries());
}

namespace {

Item gpu_item() {
#ifdef SALASIM_HAVE_CUDA
  std::string why;
  if (!gpu::available(&why)) return {"GPU", plain_no_gpu_reason(why), false};
  int drv = 0;
  cudaDriverGetVersion(&drv);
  const std::string driver = nvidia_driver_version();
  return {"GPU",
          fmt::format("{}; NVIDIA driver {} (CUDA {}.{})", gpu::device_name(), driver.empty() ? "?" : driver,
                      drv / 1000, drv % 1000 / 10),
          true};
#else
  const std::string driver = nvidia_driver_version();
  return {"GPU",
          driver.empty() ? "none needed by this build (no CUDA path); " + plain_no_gpu_reason("")
                         : "NVIDIA driver " + driver + " is loaded, but this build has no CUDA path",
          false};
#endif
}

Item cpu_item() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, model;
  bool avx2 = false, fma = false;
  while (std::getline(in, line)) {
    if (model.empty() && line.rfind("model name", 0) == 0) model = line.substr(line.find(':') + 2);
    if (line.rfind("flags", 0) == 0)
      avx2 = line.find(" avx2") != std::string::npos, fma = line.find(" fma") != std::string::npos;
  }
  const double mem = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGE_SIZE)) / 1e9;
  return {"CPU",
          fmt::format("{}, {} threads, {:.1f} GB of memory, AVX2+FMA {}", model.empty() ? "?" : model,
                      std::thread::hardware_concurrency(), mem, avx2 && fma ? "yes" : "no (the reference runs slower)"),
          true};
}

Item gnuplot_item() {
  bool ok = false;
  const std::string v = capture("gnuplot --version", &ok);
  if (!ok)
    return {"gnuplot", "not found: `salasim report` writes its .gp scripts without plots (apt-get install gnuplot-nox)",
            false};
  const std::string terms = capture("gnuplot -e 'set terminal'");
  const std::string png = terms.find(" pngcairo ") != std::string::npos ? "pngcairo"
                          : terms.find(" png ") != std::string::npos    ? "png"
                                                                        : "";
  return {"gnuplot", fmt::format("{}; PNG terminal {}", first_line(v), png.empty() ? "none (plots as SVG only)" : png),
          true};
}

Item chromium_item() {
  for (const char* b : {"chromium", "chromium-browser", "google-chrome"}) {
    bool ok = false;
    const std::string path = capture(fmt::format("command -v {}", b), &ok);
    if (ok && !path.empty()) {
      // Debian's wrapper script prints a shell complaint first on some machines: the version is the last line
      const std::string v = capture(path + " --version");
      return {"Chromium",
              fmt::format("{} ({})", path, v.substr(v.rfind('\n') == std::string::npos ? 0 : v.rfind('\n') + 1)), true};
    }
  }
  return {"Chromium", "not found: the architecture page's headless-browser test is skipped (apt-get install chromium)",
          false};
}

Item h5py_item() {
  for (const char* py : {"python3", "/usr/bin/python3"}) {
    bool ok = false;
    const std::string v = capture(fmt::format("{} -c 'import h5py, numpy; print(h5py.__version__)'", py), &ok);
    if (ok)
      return {"Python with h5py", fmt::format("{} (h5py {})", capture(fmt::format("command -v {}", py)), v), true};
  }
  return {"Python with h5py", "none: the h5py cross-reads of dumps are skipped (apt-get install python3-h5py)", false};
}

Item words_item() {
  try {
    const ruler::WordLists w = ruler::load_word_lists();
    return {"RULER word lists", w.source, true};
  } catch (const std::exception& e) {
    return {"RULER word lists", first_line(e.what()), false};
  }
}

Item essay_item() {
  std::error_code ec;
  const std::string p = ruler::kDefaultEssay;
  if (std::filesystem::is_regular_file(p, ec)) return {"RULER essay haystack", p, true};
  return {"RULER essay haystack",
          p + " is missing (.ci/setup installs golang-github-colinmarc-hdfs-dev, which ships it)", false};
}

struct EnvArgs {
  bool json = false;
};

int run_env(const EnvArgs& a) {
  utsname u{};
  uname(&u);
  const std::vector<Item> items = {
      {"salasim", fmt::format("{} (git {})", SALASIM_VERSION, git_revision()), true},
      {"build", build_line(), true},
      {"libraries", libraries(), true},
      {"source tree", SALASIM_SOURCE_DIR, std::filesystem::exists(SALASIM_SOURCE_DIR)},
      {"system", fmt::format("{} {} {}", u.sysname, u.release, u.machine), true},
      cpu_item(),
      gpu_item(),
      gnuplot_item(),
      chromium_item(),
      h5py_item(),
      {"SentencePiece",
       sentencepiece_available()
           ? "linked: `salasim ruler` tokenizes with it"
           : "not built: `salasim ruler generate|run` need it (apt-get install libsentencepiece-dev, then rebuild)",
       sentencepiece_available()},
      words_item(),
      essay_item(),
  };
  if (a.json) {
    nlohmann::json j = nlohmann::json::object();
    for (const Item& i : items) j[i.name] = {{"value", i.value}, {"ok", i.ok}};
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  for (const Item& i : items) fmt::print("{:<22} {}{}\n", i.name, i.ok ? "" : "-- ", i.value);
  return 0;
}

}  // namespace

void add_env(CLI::App& app, Run& run) {
  auto a = std::make_shared<EnvArgs>();
  CLI::App* c = app.add_subcommand("env",
                                   "What this binary is and what this machine offers it: revision, build, "
                                   "libraries, GPU (or why not), gnuplot, Chromium, h5py, SentencePiece, "
                                   "RULER's word lists");
  c->add_flag("--json", a->json, "machine-readable output");
  c->callback([a, &run] { run = [a] { return run_env(*a); }; });
}

}  // namespace salasim::cli
