// Helpers shared by the salasim subcommands: path resolution and number formatting.
#pragma once
#include <cstdint>
#include <string>

namespace salasim::cli {

// A relative data path (config, scenario) is looked up in the current directory first, then in the
// source tree the binary was built from, so `build/salasim params` works from anywhere.
std::string resolve_data_path(const std::string& path);

std::string default_config_path();    // scenarios/models/minicpm-sala-9b.json
std::string default_scenario_path();  // scenarios/tiny-sparse.json, the main command's scenario

// A path inside the source tree as a path relative to it ("tests/golden/tiny-short.h5"), else unchanged: what
// goldens record and what re-record commands print, whatever the current directory.
std::string source_relative(const std::string& path);
// The source tree's `git describe --always --dirty`, or "" when it is not a git checkout.
std::string git_revision();
std::string with_commas(int64_t v);   // 9,477,203,968

}  // namespace salasim::cli
