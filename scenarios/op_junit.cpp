// JUnit XML of `salasim op` runs (scenarios/op_junit.hpp).
#include "scenarios/op_junit.hpp"

#include <fmt/format.h>

#include <map>

namespace salasim {

namespace {

// Text as XML 1.0 attribute or element content: markup escaped, and the control characters XML cannot hold (a
// program's colour codes) replaced by '?'.
std::string xml(const std::string& s) {
  std::string r;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '&': r += "&amp;"; break;
      case '<': r += "&lt;"; break;
      case '>': r += "&gt;"; break;
      case '"': r += "&quot;"; break;
      case '\'': r += "&apos;"; break;
      default: r += c < 0x20 && ch != '\n' && ch != '\t' && ch != '\r' ? '?' : ch;
    }
  }
  return r;
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

struct Case {
  std::string name, failure_message, failure_text, skipped, out;
  double seconds = 0;
};

struct Suite {
  std::vector<Case> cases;
  int failures = 0, skipped = 0;
  double seconds = 0;
};

std::string document(const std::map<std::string, Suite>& suites, const std::vector<std::string>& order,
                     const std::string& properties) {
  int tests = 0, failures = 0, skipped = 0;
  double seconds = 0;
  for (const auto& [n, s] : suites) {
    tests += int(s.cases.size()), failures += s.failures, skipped += s.skipped;
    seconds += s.seconds;
  }
  std::string x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  x += fmt::format(
      "<testsuites name=\"salasim op\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" "
      "time=\"{:.3f}\">\n",
      tests, failures, skipped, seconds);
  for (const std::string& name : order) {
    const Suite& s = suites.at(name);
    x += fmt::format(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" "
        "time=\"{:.3f}\">\n    <properties>\n{}    </properties>\n",
        xml(name), s.cases.size(), s.failures, s.skipped, s.seconds, properties);
    for (const Case& c : s.cases) {
      x += fmt::format("    <testcase classname=\"salasim.op.{}\" name=\"{}\" time=\"{:.3f}\">\n", xml(name),
                       xml(c.name), c.seconds);
      if (!c.failure_message.empty())
        x += fmt::format("      <failure message=\"{}\" type=\"gate\">{}</failure>\n", xml(c.failure_message),
                         xml(c.failure_text));
      if (!c.skipped.empty()) x += fmt::format("      <skipped message=\"{}\"/>\n", xml(c.skipped));
      if (!c.out.empty()) x += fmt::format("      <system-out>{}</system-out>\n", xml(c.out));
      x += "    </testcase>\n";
    }
    x += "  </testsuite>\n";
  }
  return x + "</testsuites>\n";
}

void add(std::map<std::string, Suite>& suites, std::vector<std::string>& order, const std::string& op, Case c) {
  if (!suites.count(op)) order.push_back(op);
  Suite& s = suites[op];
  s.failures += !c.failure_message.empty();
  s.skipped += !c.skipped.empty();
  s.seconds += c.seconds;
  s.cases.push_back(std::move(c));
}

std::string property(const std::string& name, const std::string& value) {
  return fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", xml(name), xml(value));
}

}  // namespace

std::string junit_cases(const std::vector<OpCaseResult>& rs, const std::string& backend, uint64_t seed) {
  std::map<std::string, Suite> suites;
  std::vector<std::string> order;
  for (const OpCaseResult& r : rs) {
    Case c;
    c.name = r.sizes;
    c.seconds = r.seconds;
    if (r.verdict == CaseVerdict::Fail) {
      c.failure_message = first_line(r.why);
      c.failure_text = r.report.rows.empty() ? r.why : format_report(r.report, {true});
      if (!r.inputs_file.empty()) c.failure_text += "\ninputs: " + r.inputs_file;
    }
    if (r.verdict == CaseVerdict::Skip) c.skipped = r.why;
    for (const std::string& s : r.skipped_outputs)
      c.out += fmt::format("skipped output {}: the implementation does not produce it\n", s);
    if (r.verdict == CaseVerdict::Ok) c.out += fmt::format("worst {:.2f} of the allowance\n", r.worst_ratio);
    add(suites, order, r.op, std::move(c));
  }
  return document(suites, order, property("backend", backend) + property("seed", std::to_string(seed)));
}

std::string junit_sensitivity(const std::vector<SensitivityCase>& cs, uint64_t seed) {
  std::map<std::string, Suite> suites;
  std::vector<std::string> order;
  for (const SensitivityCase& k : cs)
    for (const OutputSensitivity& o : k.outputs)
      for (const FaultResult& f : o.faults) {
        if (f.outcome == FaultOutcome::NotApplicable) continue;
        Case c;
        c.name = fmt::format("{} {} {}", k.sizes, o.output, f.fault);
        if (f.outcome == FaultOutcome::Missed) {
          c.failure_message = fmt::format("the gate misses the {} fault of {}", f.fault, o.output);
          c.failure_text = f.why;
        }
        if (f.outcome == FaultOutcome::NotOnCase) c.skipped = f.why;
        if (f.fault == "scale" && f.smallest > 0)
          c.out = fmt::format("smallest scale caught: {:.2g}%\n", 100 * f.smallest);
        add(suites, order, k.op, std::move(c));
      }
  return document(suites, order, property("backend", "sensitivity") + property("seed", std::to_string(seed)));
}

}  // namespace salasim
