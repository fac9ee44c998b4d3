// Hugging Face's added tokens beside a tokenizer.model (model/tokenizer.hpp read_added_tokens): the JSON files
// salasim reads around the SentencePiece model, checked here so that they can be fuzzed without libsentencepiece.
#include <algorithm>
#include <charconv>
#include <filesystem>
#include <map>

#include "model/error.hpp"
#include "model/json_field.hpp"
#include "model/limits.hpp"
#include "model/tokenizer.hpp"

namespace salasim {

namespace fs = std::filesystem;

namespace {

// The added tokens read so far, by content and by id: one content has one id and one id one content, whichever
// file names them (HF keeps the same table in both), so a disagreement is an error, not a silent first-wins.
struct AddedTable {
  std::map<std::string, int32_t> by_content;
  std::map<int32_t, std::string> by_id;

  void add(const std::string& content, int64_t id, const std::string& file, const std::string& field) {
    if (content.empty())
      fail("{}: field '{}': an added token with empty content; expected a non-empty string", file, excerpt(field));
    if (id < 0 || id > INT32_MAX)
      fail("{}: field '{}': added token '{}' has id {}; expected an id in [0, {}]", file, excerpt(field),
           excerpt(content), id, INT32_MAX);
    const auto c = by_content.find(content);
    if (c != by_content.end() && c->second != id)
      fail("{}: field '{}': added token '{}' has id {}, but it was given id {} before; one token, one id", file,
           excerpt(field), excerpt(content), id, c->second);
    const auto i = by_id.find(int32_t(id));
    if (i != by_id.end() && i->second != content)
      fail("{}: field '{}': id {} is given to added token '{}', but it was given to '{}' before; one id, one token",
           file, excerpt(field), id, excerpt(content), excerpt(i->second));
    if (c != by_content.end()) return;  // the same token in both files
    if (int64_t(by_content.size()) >= kMaxAddedTokens)
      fail("{}: more than {} added tokens; expected tens to hundreds (each is matched at every position of a prompt)",
           file, kMaxAddedTokens);
    by_content.emplace(content, int32_t(id));
    by_id.emplace(int32_t(id), content);
  }
};

// A token id written as a JSON object key ("73440"): decimal digits only, no sign, no spaces, within int32.
int64_t id_key(const std::string& key, const std::string& file) {
  int64_t id = -1;
  const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), id);
  if (key.empty() || key[0] == '-' || ec != std::errc() || end != key.data() + key.size() || id > INT32_MAX)
    fail("{}: field 'added_tokens_decoder' has key '{}'; expected a token id (decimal digits, at most {})", file,
         excerpt(key), INT32_MAX);
  return id;
}

void read_tokenizer_config(const std::string& file, AddedTable& t) {
  const json j = parse_json_file(file);
  if (!j.is_object()) fail("{}: expected a JSON object at the top level, got {}", file, json_type_name(j));
  if (!j.contains("added_tokens_decoder") || j.at("added_tokens_decoder").is_null()) return;
  const json& d = j.at("added_tokens_decoder");
  if (!d.is_object())
    fail("{}: field 'added_tokens_decoder' is {}; expected an object of id -> {{\"content\": ...}}", file,
         json_type_name(d));
  for (auto it = d.begin(); it != d.end(); ++it) {
    const int64_t id = id_key(it.key(), file);
    const std::string field = "added_tokens_decoder." + it.key();
    JsonDoc entry{it.value(), file, field + "."};
    if (!it.value().is_object())
      fail("{}: field '{}' is {}; expected an object with a 'content' string", file, excerpt(field),
           json_type_name(it.value()));
    t.add(entry.string("content"), id, file, field + ".content");
  }
}

void read_added_tokens_json(const std::string& file, AddedTable& t) {
  const json j = parse_json_file(file);
  if (!j.is_object())
    fail("{}: expected a JSON object of token -> id at the top level, got {}", file, json_type_name(j));
  for (auto it = j.begin(); it != j.end(); ++it) {
    const json& v = it.value();
    const bool ok = v.is_number_integer() && !(v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT32_MAX)) &&
                    v.get<int64_t>() >= 0 && v.get<int64_t>() <= INT32_MAX;
    if (!ok)
      fail("{}: field '{}' is {} {}; expected a token id in [0, {}]", file, excerpt(it.key()), json_type_name(v),
           excerpt(v), INT32_MAX);
    t.add(it.key(), v.get<int64_t>(), file, it.key());
  }
}

}  // namespace

std::vector<std::pair<std::string, int32_t>> read_added_tokens(const std::string& dir) {
  AddedTable t;
  const fs::path cfg = fs::path(dir) / "tokenizer_config.json";
  const fs::path at = fs::path(dir) / "added_tokens.json";
  std::error_code ec;
  // exists() follows links; a dangling link or anything that is not a regular file is refused by parse_json_file.
  if (fs::exists(fs::symlink_status(cfg, ec))) read_tokenizer_config(cfg.string(), t);
  if (fs::exists(fs::symlink_status(at, ec))) read_added_tokens_json(at.string(), t);
  std::vector<std::pair<std::string, int32_t>> out(t.by_content.begin(), t.by_content.end());
  // Longest first, so that a token that is a prefix of another never wins the match; ties in content order.
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  return out;
}

}  // namespace salasim
