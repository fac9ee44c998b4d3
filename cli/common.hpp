// Helpers shared by the salasim subcommands: path resolution and number formatting.
#pragma once
#include <cstdint>
#include <string>

namespace salasim::cli {

// A relative data path (config, scenario) is looked up in the current directory first, then in the
// source tree the binary was built from, so `build/salasim params` works from anywhere.
std::string resolve_data_path(const std::string& path);

std::string default_config_path();    // scenarios/models/minicpm-sala-9b.json
std::string with_commas(int64_t v);   // 9,477,203,968

}  // namespace salasim::cli
