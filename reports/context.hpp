// Context lengths as users write them: "4K,64K,1M,2048K" (K = 1024, M = 1048576) or plain integers.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace salasim::reports {

// The entries of a comma-separated option value, empty ones kept ("64K,,1M" -> 3 entries) so that the parser
// of each entry reports them.
std::vector<std::string> split_list(const std::string& list);

// Throws salasim::Error naming `what` (e.g. "--context") and the bad entry.
std::vector<int64_t> parse_contexts(const std::string& list, const std::string& what = "--context");
int64_t parse_context(const std::string& entry, const std::string& what = "--context");

// 65536 -> "64K", 2097152 -> "2048K" (the paper's and the spelling), 1000 -> "1000".
std::string context_label(int64_t tokens);

// The report's default sweep: 4K .. 2048K in powers of two.
std::vector<int64_t> default_contexts();

}  // namespace salasim::reports
