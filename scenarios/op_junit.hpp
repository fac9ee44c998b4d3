// `salasim op --junit FILE` (docs/check-your-implementation.md): the cases of a run as JUnit XML, the format CI
// systems read. A <testsuite> per op; a <testcase> per case, named by its sizes (classname salasim.op.NAME); a
// failing case holds a <failure> whose message is the first reason and whose text is the verdict table; a skipped
// case a <skipped> with the reason; outputs the implementation left out are listed in <system-out>. Under
// --sensitivity, a <testcase> per case, output and fault that applies: a fault missed is a <failure>, one the case
// cannot show a <skipped>.
#pragma once
#include <string>
#include <vector>

#include "scenarios/op_sensitivity.hpp"
#include "scenarios/op_sweep.hpp"

namespace salasim {

// `backend` and `seed` go into each suite's <properties>.
std::string junit_cases(const std::vector<OpCaseResult>& rs, const std::string& backend, uint64_t seed);
std::string junit_sensitivity(const std::vector<SensitivityCase>& cs, uint64_t seed);

}  // namespace salasim
