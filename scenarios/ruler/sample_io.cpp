// Reading and writing NIAH data lines, with errors that name the file, the line and the field.
#include "scenarios/ruler/sample_io.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "model/error.hpp"
#include "model/json_field.hpp"
#include "model/machine_memory.hpp"
#include "scenarios/ruler/lines.hpp"

namespace salasim::ruler {

nlohmann::json sample_json(const Sample& s) {
  nlohmann::json spans = nlohmann::json::array();
  for (auto [b, e] : s.needle_token_spans) spans.push_back({b, e});
  return {{"index", s.index},
          {"input", s.input},
          {"outputs", s.outputs},
          {"length", s.length},
          {"answer_prefix", s.answer_prefix},
          {"task", s.task},
          {"max_seq_length", s.max_seq_length},
          {"needle_token_spans", spans},
          {"depths", s.depths},
          {"haystack_units", s.haystack_units},
          {"template", s.template_name},
          {"seed", s.seed}};
}

std::vector<double> parse_depths(const nlohmann::json& d, const std::string& where) {
  if (!d.is_array() || int64_t(d.size()) > kMaxOutputs)
    fail("{}: field 'depths' is {}, expected an array of at most {} numbers in [0, 100]", where, json_type_name(d),
         kMaxOutputs);
  std::vector<double> depths;
  for (const auto& v : d) {
    if (!v.is_number() || !(v.get<double>() >= 0 && v.get<double>() <= 100))
      fail("{}: field 'depths' holds {}, expected numbers in [0, 100] (percent of the haystack)", where,
           v.is_number() ? excerpt(v) : json_type_name(v));
    depths.push_back(v.get<double>());
  }
  return depths;
}

int64_t length_label(int64_t n) {
  int64_t p = 1;
  while (p < n && p <= INT64_MAX / 2) p *= 2;  // callers bound n first (kMaxSampleLength); never overflows
  return p;
}

namespace {

std::string task_from_folder(const std::string& path) {
  const std::string dir = std::filesystem::path(path).parent_path().filename().string();
  for (const Task& t : niah_tasks())
    if (t.name == dir) return dir;
  return "";
}

bool integer_in(const nlohmann::json& v, int64_t lo, int64_t hi) {
  if (!v.is_number_integer()) return false;
  if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX)) return false;
  return v.get<int64_t>() >= lo && v.get<int64_t>() <= hi;
}

// The numbers of a data line, strictly: integers within their range (a fraction, 1e3, a value past int64 or a
// negative one is an error naming the field), numbers finite and within theirs.
struct LineFields {
  const nlohmann::json& j;
  std::string where;

  bool has(const char* k) const { return j.contains(k) && !j.at(k).is_null(); }
  JsonDoc doc() const { return JsonDoc{j, where, ""}; }
  int64_t integer(const char* k, int64_t lo, int64_t hi) const { return doc().integer(k, lo, hi); }
  std::string string(const char* k) const { return doc().string(k); }
};

void check_task(const std::string& task, const std::string& where) {
  try {
    task_named(task);
  } catch (const Error& e) {
    fail("{}: field 'task': {}", where, e.what());
  }
}

Sample parse_line(const nlohmann::json& j, const std::string& where, const ReadOptions& o,
                  const std::string& folder_task) {
  if (!j.is_object()) fail("{}: expected a JSON object, got {}", where, json_type_name(j));
  const LineFields f{j, where};
  Sample s;
  const int64_t max_length = std::min(o.max_length, kMaxSampleLength);
  s.index = f.integer("index", 0, kMaxSampleIndex);
  s.length = f.integer("length", 1, max_length);
  s.input = f.string("input");
  s.answer_prefix = f.string("answer_prefix");
  // Before anything is tokenized: the text cannot be longer than its declared length could hold.
  const int64_t text_bytes = int64_t(s.input.size() + s.answer_prefix.size());
  if (text_bytes > s.length * kMaxBytesPerToken)
    fail(
        "{}: fields 'input' + 'answer_prefix' are {} bytes, more than field 'length' ({} tokens) can hold at {} bytes "
        "per token at most; expected a text that fits its declared length",
        where, text_bytes, s.length, kMaxBytesPerToken);
  if (!f.has("outputs") || !j.at("outputs").is_array() || j.at("outputs").empty() ||
      int64_t(j.at("outputs").size()) > kMaxOutputs)
    fail("{}: field 'outputs' is {}, expected an array of 1 to {} non-empty strings", where,
         f.has("outputs")
             ? json_type_name(j.at("outputs")) +
                   (j.at("outputs").is_array() ? fmt::format(" of {} entries", j.at("outputs").size()) : "")
             : "missing",
         kMaxOutputs);
  for (const auto& v : j.at("outputs")) {
    if (!v.is_string() || v.get<std::string>().empty())
      fail("{}: field 'outputs' holds {}, expected non-empty strings", where,
           v.is_string() ? "an empty string" : json_type_name(v));
    s.outputs.push_back(v.get<std::string>());
  }
  if (f.has("task")) s.task = f.string("task");
  else if (!o.task.empty()) s.task = o.task;
  else if (!folder_task.empty()) s.task = folder_task;
  else
    fail(
        "{}: field 'task' is missing (RULER's files have none: name the task with --task, or keep the file in a folder named after it)",
        where);
  check_task(s.task, where);
  if (f.has("max_seq_length")) s.max_seq_length = f.integer("max_seq_length", 1, max_length);
  else s.max_seq_length = o.length > 0 ? o.length : length_label(s.length);
  if (s.max_seq_length > max_length)
    fail(
        "{}: target length {} (the power of two >= field 'length', or --length) is more than {}, the longest this run "
        "allows",
        where, s.max_seq_length, max_length);
  if (s.length > s.max_seq_length)
    fail("{}: field 'length' is {}, more than the target length {}", where, s.length, s.max_seq_length);
  if (f.has("depths")) s.depths = parse_depths(j.at("depths"), where);
  if (f.has("needle_token_spans")) {
    const nlohmann::json& d = j.at("needle_token_spans");
    if (!d.is_array() || int64_t(d.size()) > kMaxOutputs)
      fail("{}: field 'needle_token_spans' is {}, expected an array of at most {} [begin, end]", where,
           json_type_name(d), kMaxOutputs);
    for (const auto& v : d) {
      const bool ok = v.is_array() && v.size() == 2 && integer_in(v[0], 0, s.length) && integer_in(v[1], 0, s.length) &&
                      v[0].get<int64_t>() <= v[1].get<int64_t>();
      if (!ok)
        fail(
            "{}: field 'needle_token_spans' holds {}, expected [begin, end] token indices with 0 <= begin <= end <= "
            "length ({})",
            where, v.is_structured() ? excerpt(v) : json_type_name(v), s.length);
      s.needle_token_spans.emplace_back(v[0].get<int64_t>(), v[1].get<int64_t>());
    }
  }
  if (f.has("haystack_units")) s.haystack_units = f.integer("haystack_units", 0, kMaxSampleLength);
  if (f.has("template")) {
    s.template_name = f.string("template");
    if (s.template_name != "base" && s.template_name != "chatml")
      fail("{}: field 'template' is '{}', expected base or chatml", where, excerpt(s.template_name));
  }
  if (f.has("seed")) {
    const nlohmann::json& v = j.at("seed");
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0))
      fail("{}: field 'seed' is {} {}, expected a whole number in [0, 2^64 - 1]", where, json_type_name(v), excerpt(v));
    s.seed = v.get<uint64_t>();
  }
  return s;
}

}  // namespace

std::vector<DataLine> read_samples(const std::string& path, const ReadOptions& o) {
  const std::string what = o.option.empty() ? path : o.option + " " + path;
  int64_t size = 0;
  const int fd = open_regular_file(path, what, &size);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  // every sample is held until the run ends: the file's text, once, must fit
  check_fits_in_memory(double(size) * 1.2, fmt::format("{}: holding its {} bytes of samples", what, size),
                       "split the data file (--shard runs part of it)");
  const std::string folder_task = task_from_folder(path);
  std::vector<DataLine> out;
  LineReader r(fd, path, kMaxDataLineBytes);
  std::string text;
  bool terminated = false;
  while (r.next(&text, &terminated)) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = fmt::format("{} line {}", path, r.line_number());
    const nlohmann::json j = parse_json_text(text, where);
    try {
      out.push_back({parse_line(j, where, o, folder_task), r.line_number()});
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      fail("{}: {}", where, e.what());
    }
  }
  if (out.empty()) fail("{}: no samples (expected JSON lines)", what);
  return out;
}

}  // namespace salasim::ruler
