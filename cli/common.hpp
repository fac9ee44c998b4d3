// Helpers shared by the salasim subcommands: path resolution and number formatting.
#pragma once
#include <cstdint>
#include <string>

#include "model/data_path.hpp"

namespace salasim::cli {

// Data paths (config, scenario) resolve through model/data_path.hpp: the current directory, then the source tree.
using salasim::data_path;
using salasim::source_relative;

std::string default_config_path();    // scenarios/models/minicpm-sala-9b.json
std::string default_scenario_path();  // scenarios/tiny-sparse.json, the main command's scenario

// `git describe --always --dirty` of the source tree when the binary was built (so a binary carried to another
// machine still names its code), else of the source tree now, or "" when neither is a git checkout.
std::string git_revision();
std::string with_commas(int64_t v);   // 9,477,203,968

}  // namespace salasim::cli
