// Path resolution and formatting for the CLI.
#include "cli/common.hpp"

#include <cstdio>

#include "build_revision.hpp"  // generated: SALASIM_BUILD_REVISION (cli/build_revision.cmake)
#include "model/data_path.hpp"
#include "reports/table.hpp"

namespace salasim::cli {

std::string default_config_path() { return data_path("scenarios/models/minicpm-sala-9b.json"); }

std::string default_scenario_path() { return data_path("scenarios/tiny-sparse.json"); }

std::string git_revision() {
  // The build's revision names the code that runs; asking git now is the fallback for a build made outside git.
  if (std::string(SALASIM_BUILD_REVISION).size() > 0) return SALASIM_BUILD_REVISION;
  const std::string cmd = std::string("git -C '") + SALASIM_SOURCE_DIR + "' describe --always --dirty 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return "";
  char buf[256];
  std::string out;
  while (fgets(buf, sizeof buf, p)) out += buf;
  pclose(p);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

std::string with_commas(int64_t v) { return reports::commas(v); }

}  // namespace salasim::cli
