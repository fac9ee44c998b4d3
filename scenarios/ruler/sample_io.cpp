// Reading and writing NIAH data lines, with errors that name the file, the line and the field.
#include "scenarios/ruler/sample_io.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "model/error.hpp"
#include "model/json_field.hpp"

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

int64_t length_label(int64_t n) {
  int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

namespace {

std::string task_from_folder(const std::string& path) {
  const std::string dir = std::filesystem::path(path).parent_path().filename().string();
  for (const Task& t : niah_tasks())
    if (t.name == dir) return dir;
  return "";
}

Sample parse_line(const nlohmann::json& j, const std::string& where, const ReadOptions& o, const std::string& folder_task) {
  if (!j.is_object()) fail("{}: expected a JSON object, got {}", where, json_type_name(j));
  auto need = [&](const char* k) -> const nlohmann::json& {
    if (!j.contains(k) || j.at(k).is_null()) fail("{}: field '{}' is missing", where, k);
    return j.at(k);
  };
  auto integer = [&](const char* k) {
    const nlohmann::json& v = need(k);
    if (!v.is_number_integer()) fail("{}: field '{}' is {}, expected an integer", where, k, json_type_name(v));
    return v.get<int64_t>();
  };
  auto string = [&](const char* k) {
    const nlohmann::json& v = need(k);
    if (!v.is_string()) fail("{}: field '{}' is {}, expected a string", where, k, json_type_name(v));
    return v.get<std::string>();
  };
  Sample s;
  s.index = integer("index");
  s.input = string("input");
  s.answer_prefix = string("answer_prefix");
  s.length = integer("length");
  if (s.length < 1) fail("{}: field 'length' is {}, expected a positive token count", where, s.length);
  const nlohmann::json& outs = need("outputs");
  if (!outs.is_array() || outs.empty()) fail("{}: field 'outputs' is {}, expected a non-empty array of strings", where, json_type_name(outs));
  for (const auto& v : outs) {
    if (!v.is_string() || v.get<std::string>().empty()) fail("{}: field 'outputs' holds {}, expected non-empty strings", where, v.dump());
    s.outputs.push_back(v.get<std::string>());
  }
  if (j.contains("task")) s.task = string("task");
  else if (!o.task.empty()) s.task = o.task;
  else if (!folder_task.empty()) s.task = folder_task;
  else fail("{}: field 'task' is missing (RULER's files have none: name the task with --task, or keep the file in a folder named after it)", where);
  try {
    task_named(s.task);
  } catch (const Error& e) {
    fail("{}: field 'task': {}", where, e.what());
  }
  if (j.contains("max_seq_length")) s.max_seq_length = integer("max_seq_length");
  else s.max_seq_length = o.length > 0 ? o.length : length_label(s.length);
  if (s.length > s.max_seq_length)
    fail("{}: field 'length' is {}, more than the target length {}", where, s.length, s.max_seq_length);
  if (j.contains("depths")) {
    const nlohmann::json& d = j.at("depths");
    if (!d.is_array()) fail("{}: field 'depths' is {}, expected an array of numbers", where, json_type_name(d));
    for (const auto& v : d) {
      if (!v.is_number()) fail("{}: field 'depths' holds {}, expected numbers", where, v.dump());
      s.depths.push_back(v.get<double>());
    }
  }
  if (j.contains("needle_token_spans")) {
    const nlohmann::json& d = j.at("needle_token_spans");
    if (!d.is_array()) fail("{}: field 'needle_token_spans' is {}, expected an array of [begin, end]", where, json_type_name(d));
    for (const auto& v : d) {
      if (!v.is_array() || v.size() != 2 || !v[0].is_number_integer() || !v[1].is_number_integer())
        fail("{}: field 'needle_token_spans' holds {}, expected [begin, end] token indices", where, v.dump());
      s.needle_token_spans.emplace_back(v[0].get<int64_t>(), v[1].get<int64_t>());
    }
  }
  if (j.contains("haystack_units") && j.at("haystack_units").is_number_integer()) s.haystack_units = j.at("haystack_units").get<int64_t>();
  if (j.contains("template") && j.at("template").is_string()) s.template_name = j.at("template").get<std::string>();
  if (j.contains("seed") && j.at("seed").is_number_unsigned()) s.seed = j.at("seed").get<uint64_t>();
  return s;
}

}  // namespace

std::vector<DataLine> read_samples(const std::string& path, const ReadOptions& o) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("{}: cannot read the data file", path);
  const std::string folder_task = task_from_folder(path);
  std::vector<DataLine> out;
  std::string text;
  for (int64_t line = 1; std::getline(in, text); ++line) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = fmt::format("{} line {}", path, line);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
      fail("{}: not valid JSON ({})", where, e.what());
    }
    try {
      out.push_back({parse_line(j, where, o, folder_task), line});
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      fail("{}: {}", where, e.what());
    }
  }
  if (out.empty()) fail("{}: no samples (expected JSON lines)", path);
  return out;
}

}  // namespace salasim::ruler
