// Where data files (configs, scenarios, hardware profiles, ...) live: a relative path is tried in the current
// directory first, then in the source tree the binary was built from, so commands work from anywhere.
#pragma once
#include <string>

namespace salasim {

std::string data_path(const std::string& path);
std::string source_relative(const std::string& path);  // inverse, for printing commands: "scenarios/models/x.json"

}  // namespace salasim
