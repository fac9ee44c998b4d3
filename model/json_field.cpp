// Typed JSON field access with file/field/expectation errors, the one JSON reader (size, depth, duplicate keys,
// regular files only) and the excerpt rule for quoting input in messages.
#include "model/json_field.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <unordered_set>

#include "model/error.hpp"
#include "model/limits.hpp"
#include "model/output_file.hpp"

namespace salasim {

std::string json_type_name(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "integer";
    case json::value_t::number_float: return "number";
    case json::value_t::string: return "string";
    case json::value_t::array: return "array";
    case json::value_t::object: return "object";
    default: return "value";
  }
}

// ---- excerpts ----

namespace {

// Where to cut `s` to at most `max` bytes without splitting a UTF-8 character (continuation bytes are 10xxxxxx).
size_t utf8_cut(std::string_view s, size_t max) {
  size_t cut = std::min(s.size(), max);
  if (cut < s.size())
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return cut;
}

}  // namespace

std::string excerpt(std::string_view text) {
  const size_t cut = utf8_cut(text, kQuoteMaxChars);
  std::string out;
  out.reserve(cut + 32);
  for (size_t i = 0; i < cut; ++i) {
    const unsigned char ch = static_cast<unsigned char>(text[i]);
    if (ch < 0x20 || ch == 0x7f) out += fmt::format("\\x{:02x}", ch);  // a terminal control sequence stays inert
    else out += char(ch);
  }
  if (cut < text.size()) out += fmt::format("... ({} bytes)", text.size());
  return out;
}

namespace {

// One scalar (or a key) as JSON text, at most about kQuoteMaxChars of it: a long string is cut before it is
// serialized, and a cut that splits a character is replaced, not thrown about (nlohmann's default).
std::string scalar_text(const json& v) {
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    if (s.size() > kQuoteMaxChars)
      return json(s.substr(0, kQuoteMaxChars + 1)).dump(-1, ' ', false, json::error_handler_t::replace);
  }
  return v.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

std::string excerpt(const json& value) {
  // Serialized with an explicit stack (nlohmann's dump recurses once per level), and only until the text is
  // longer than an excerpt shows: a value of any depth or size costs at most kQuoteMaxChars of work per level.
  struct Frame {
    const json* v;
    json::const_iterator it;
    bool first;
  };
  std::vector<Frame> stack;
  std::string out;
  auto enter = [&](const json& v) {
    if (v.is_object() || v.is_array()) {
      out += v.is_object() ? '{' : '[';
      stack.push_back({&v, v.cbegin(), true});
    } else {
      out += scalar_text(v);
    }
  };
  enter(value);
  while (!stack.empty() && out.size() <= kQuoteMaxChars) {
    Frame& f = stack.back();
    if (f.it == f.v->cend()) {
      out += f.v->is_object() ? '}' : ']';
      stack.pop_back();
      continue;
    }
    if (!f.first) out += ',';
    f.first = false;
    if (f.v->is_object()) out += scalar_text(json(f.it.key())) + ':';
    const json& child = *f.it;
    ++f.it;
    enter(child);  // may grow the stack: `f` is not used after this
  }
  if (stack.empty() && out.size() <= kQuoteMaxChars) return out;  // all of it (dump escaped control characters)
  out.resize(utf8_cut(out, kQuoteMaxChars));
  return excerpt(std::string_view(out)) + "... (cut)";
}

// ---- fields ----

void JsonDoc::bad(const char* key, const std::string& expected) const {
  if (!j.contains(key)) fail("{}: field '{}{}' is missing; expected {}", file, prefix, key, expected);
  const json& v = j.at(key);
  // Arrays and objects are described, not printed: a hostile file can make them megabytes long.
  std::string shown;
  if (v.is_null()) shown = "null";
  else if (v.is_structured()) shown = fmt::format("{} of {} entries", json_type_name(v), v.size());
  else shown = fmt::format("{} {}", json_type_name(v), excerpt(v));
  fail("{}: field '{}{}' is {}; expected {}", file, prefix, key, shown, expected);
}

int64_t JsonDoc::integer(const char* key, int64_t min_value, int64_t max_value) const {
  std::string expected = "an integer";
  if (min_value != INT64_MIN && max_value != INT64_MAX)
    expected = fmt::format("an integer in [{}, {}]", min_value, max_value);
  else if (min_value != INT64_MIN) expected = fmt::format("an integer >= {}", min_value);
  else if (max_value != INT64_MAX) expected = fmt::format("an integer <= {}", max_value);
  if (!j.contains(key)) bad(key, expected);
  const json& v = j.at(key);
  if (!v.is_number_integer()) bad(key, expected);
  // The parser keeps integers past INT64_MAX as unsigned: get<int64_t>() would wrap them to negative values.
  if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX)) bad(key, expected);
  int64_t x = v.get<int64_t>();
  if (x < min_value || x > max_value) bad(key, expected);
  return x;
}

double JsonDoc::number(const char* key) const {
  if (!j.contains(key) || !j.at(key).is_number()) bad(key, "a number");
  return j.at(key).get<double>();
}

double JsonDoc::number(const char* key, const FloatRange& r) const {
  if (!j.contains(key) || !j.at(key).is_number()) bad(key, r.text());
  const double v = j.at(key).get<double>();
  if (!r.contains(v)) bad(key, r.text());
  return v;
}

bool JsonDoc::boolean(const char* key) const {
  if (!j.contains(key) || !j.at(key).is_boolean()) bad(key, "true or false");
  return j.at(key).get<bool>();
}

std::string JsonDoc::string(const char* key) const {
  if (!j.contains(key) || !j.at(key).is_string()) bad(key, "a string");
  return j.at(key).get<std::string>();
}

std::vector<std::string> JsonDoc::strings(const char* key) const {
  if (!j.contains(key) || !j.at(key).is_array()) bad(key, "an array of strings");
  std::vector<std::string> out;
  for (const json& v : j.at(key)) {
    if (!v.is_string()) bad(key, "an array of strings");
    out.push_back(v.get<std::string>());
  }
  return out;
}

std::vector<int64_t> JsonDoc::integers(const char* key) const {
  if (!j.contains(key)) bad(key, "an integer or an array of integers");
  const json& v = j.at(key);
  if (v.is_number_integer() && !(v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX)))
    return {v.get<int64_t>()};
  if (!v.is_array()) bad(key, "an integer or an array of integers");
  std::vector<int64_t> out;
  for (const json& e : v) {
    if (!e.is_number_integer() || (e.is_number_unsigned() && e.get<uint64_t>() > uint64_t(INT64_MAX)))
      bad(key, "an integer or an array of integers (each within 64 bits)");
    out.push_back(e.get<int64_t>());
  }
  return out;
}

JsonDoc JsonDoc::object(const char* key) const {
  if (!j.contains(key) || !j.at(key).is_object()) bad(key, "an object");
  return JsonDoc{j.at(key), file, prefix + key + "."};
}

// ---- documents ----

namespace {

// What the parser has open, outermost first, to refuse a repeated key and to name where it is. Fed by the parser's
// callback: object and array starts and ends, keys, and scalar values (which advance an array's index).
class OpenContainers {
 public:
  explicit OpenContainers(const std::string& source) : source_(source) {}

  void start(bool array) {
    element();
    frames_.emplace_back();
    frames_.back().array = array;
  }
  void end() {
    if (!frames_.empty()) frames_.pop_back();
  }
  void value() { element(); }
  void key(const std::string& k) {
    if (frames_.empty()) return;
    Frame& f = frames_.back();
    f.key = k;
    if (!f.keys.insert(k).second)
      fail(
          "{}: key '{}' appears twice in one object (at {}); each key may appear once (a parser would silently "
          "keep one of them)",
          source_, excerpt(k), excerpt(path()));
  }

 private:
  struct Frame {
    bool array = false;
    int64_t index = -1;  // arrays: the element being read
    std::string key;     // objects: the key being read
    std::unordered_set<std::string> keys;
  };
  // A value begins inside the innermost container: an array moves to its next element.
  void element() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
  }
  // "sparse_config.topk", "rows[3].gpu": the path of the key being read.
  std::string path() const {
    std::string p;
    for (const Frame& f : frames_) {
      if (f.array) p += fmt::format("[{}]", f.index);
      else p += (p.empty() ? "" : ".") + f.key;
    }
    return p;
  }
  const std::string& source_;
  std::vector<Frame> frames_;
};

}  // namespace

json parse_json_text(const std::string& text, const std::string& source) {
  if (int64_t(text.size()) > kJsonMaxBytes)
    fail("{}: {} bytes of JSON, more than the {} MiB this program reads", source, text.size(), kJsonMaxBytes >> 20);
  OpenContainers open(source);
  // Errors are thrown from the callback: parsing stops there, and what was built is freed (nothing nests past
  // kJsonMaxDepth, so freeing it cannot run out of stack either).
  const json::parser_callback_t check = [&](int depth, json::parse_event_t event, json& parsed) {
    if (depth > kJsonMaxDepth)
      fail("{}: arrays and objects nest more than {} deep; expected a flat configuration", source, kJsonMaxDepth);
    switch (event) {
      case json::parse_event_t::object_start: open.start(false); break;
      case json::parse_event_t::array_start: open.start(true); break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end: open.end(); break;
      case json::parse_event_t::key: open.key(parsed.get_ref<const std::string&>()); break;
      case json::parse_event_t::value: open.value(); break;
    }
    return true;
  };
  try {
    return json::parse(text, check);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for numbers such as 1e999
    fail("{}: not well-formed JSON ({})", source, excerpt(e.what()));
  }
}

void require_regular_file(const std::string& path, const std::string& what) {
  struct stat st {};
  // The path may come from another file (a scenario's "model", a measured run's "config"): quoted as an excerpt.
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) fail("{}: no such file; expected {}", excerpt(path), what);
    fail("{}: cannot read it ({}); expected {}", excerpt(path), std::strerror(errno), what);
  }
  if (S_ISDIR(st.st_mode)) fail("{}: is a folder; expected {}", excerpt(path), what);
  if (!S_ISREG(st.st_mode))
    fail("{}: is not a regular file (a FIFO, a socket or a device); expected {}", excerpt(path), what);
  note_input(path);  // every reader comes here first: no output of this process may replace it (output_file.hpp)
}

std::string read_regular_file(const std::string& path, const std::string& what, int64_t max_bytes,
                              const std::string& input_kind) {
  // stat first: opening a FIFO blocks until a writer comes, and opening a device can do anything.
  require_regular_file(path, what);
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) fail("{}: cannot open file ({}); expected {}", excerpt(path), std::strerror(errno), what);
  struct stat st {};
  // The same check on what was opened: the path may have been swapped for a FIFO since the stat.
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    fail("{}: is not a regular file; expected {}", excerpt(path), what);
  }
  if (int64_t(st.st_size) > max_bytes) {
    ::close(fd);
    fail("{}: {} bytes, larger than {} MiB, the limit for {} (is it the right file?)", excerpt(path),
         int64_t(st.st_size), max_bytes >> 20, input_kind);
  }
  // Read at most one byte past the cap: a file that grows while it is read (or a /proc file of size 0) still stops.
  std::string text;
  char buf[1 << 16];
  while (int64_t(text.size()) <= max_bytes) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      fail("{}: read failed ({})", excerpt(path), std::strerror(err));
    }
    if (n == 0) break;
    text.append(buf, size_t(n));
  }
  ::close(fd);
  if (int64_t(text.size()) > max_bytes)
    fail("{}: larger than {} MiB, the limit for {} (is it the right file?)", excerpt(path), max_bytes >> 20,
         input_kind);
  return text;
}

json parse_json_file(const std::string& path) {
  return parse_json_text(read_regular_file(path, "a JSON file", kJsonMaxBytes, "JSON input"), path);
}

}  // namespace salasim
