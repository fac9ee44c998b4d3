// string_match_all and RULER's prediction cleaning.
#include "scenarios/ruler/score.hpp"

#include <cmath>

namespace salasim::ruler {

namespace {
// Python's str.strip() whitespace within ASCII: \t \n \v \f \r, \x1c-\x1f and space.
bool py_space(unsigned char c) { return c == ' ' || (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x1f); }
std::string strip(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && py_space(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && py_space(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}
std::string lower(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
  return s;
}
}  // namespace

std::string clean_prediction(const std::string& raw) {
  std::string s = strip(raw);
  for (char& c : s)
    if (static_cast<unsigned char>(c) <= 0x1f) c = '\n';
  return strip(s);
}

double string_match_all(const std::string& prediction, const std::vector<std::string>& references) {
  if (references.empty()) return 0;
  const std::string p = lower(prediction);
  double hit = 0;
  for (const std::string& r : references) hit += p.find(lower(r)) != std::string::npos ? 1.0 : 0.0;
  return hit / double(references.size());
}

TaskScore task_score(const std::vector<double>& per_sample, const std::vector<std::string>& cleaned) {
  TaskScore t;
  t.n = int64_t(per_sample.size());
  double sum = 0;
  for (double x : per_sample) sum += x;
  t.score = t.n ? std::nearbyint(sum / double(t.n) * 100.0 * 100.0) / 100.0 : 0.0;  // Python round: half to even
  for (const std::string& p : cleaned) t.nulls += p.empty() ? 1 : 0;
  return t;
}

}  // namespace salasim::ruler
