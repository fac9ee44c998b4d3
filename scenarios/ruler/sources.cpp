// Essay text, sentence splitting and key word lists for the NIAH generator.
#include "scenarios/ruler/sources.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "model/error.hpp"
#include "model/json_field.hpp"
#include "model/limits.hpp"

namespace salasim::ruler {

namespace fs = std::filesystem;

const char* const kDefaultEssay = "/usr/share/gocode/src/github.com/colinmarc/hdfs/testdata/mobydick.txt";

namespace {

// Text inputs are read the one bounded way (model/json_field.hpp): a FIFO as --haystack-text or a word list blocked
// forever, /dev/zero never ended.
std::string read_text(const std::string& path, const std::string& what) {
  return read_regular_file(path, what, kTextMaxBytes, "text input");
}

// The text between the line starting "*** START OF" and the line starting "*** END OF", when both exist.
std::string between_gutenberg_markers(const std::string& t) {
  const size_t s = t.find("*** START OF");
  if (s == std::string::npos) return t;
  const size_t body = t.find('\n', s);
  const size_t e = t.find("*** END OF", body == std::string::npos ? s : body);
  if (body == std::string::npos || e == std::string::npos) return t;
  return t.substr(body + 1, e - body - 1);
}

// Where the book itself begins: the first line that opens a chapter or book one ("CHAPTER 1. Loomings.",
// "Chapter I", "BOOK ONE"), when one lies in the first 40% of the text; else 0. What comes before it in a Gutenberg
// text is front matter: who produced the etext, transcriber's notes, the title page, the contents.
size_t book_start(const std::string& t) {
  static const std::regex opening(R"((^|\n)[ \t]*(CHAPTER|Chapter|BOOK|Book)[ \t]+(1|I|ONE|One)\b)");
  std::smatch m;
  const std::string head = t.substr(0, t.size() * 2 / 5);
  if (!std::regex_search(head, m, opening)) return 0;
  return size_t(m.position(0)) + (m[1].length() > 0 ? 1 : 0);
}

// A Gutenberg text reduced to the book: between the markers, from the first chapter, to before the "End of
// Project Gutenberg's ..." line, and without any paragraph that still names Project Gutenberg (a licence note).
// RULER's haystacks are prose; a needle must never sit in a licence or a producer's credit.
std::string strip_gutenberg(const std::string& text) {
  std::string t = between_gutenberg_markers(text);
  t.erase(0, book_start(t));
  for (const char* end : {"End of Project Gutenberg", "End of the Project Gutenberg", "END OF THE PROJECT GUTENBERG"})
    if (const size_t e = t.find(end); e != std::string::npos) t.erase(e);
  std::string out;
  size_t i = 0;
  while (i < t.size()) {  // paragraphs: separated by a blank line (CRLF or LF)
    size_t j = t.find("\n\n", i), k = t.find("\n\r\n", i);
    const size_t stop = std::min(j == std::string::npos ? t.size() : j, k == std::string::npos ? t.size() : k);
    const std::string para = t.substr(i, stop - i);
    if (para.find("Gutenberg") == std::string::npos && para.find("gutenberg.org") == std::string::npos)
      out += para + "\n\n";
    i = stop == t.size() ? stop : t.find_first_not_of("\r\n", stop);
    if (i == std::string::npos) break;
  }
  return out;
}

bool is_abbreviation(std::string w) {
  while (!w.empty() && (w.back() == '.' || w.back() == '"' || w.back() == '\'' || w.back() == ')')) w.pop_back();
  while (!w.empty() && (w.front() == '"' || w.front() == '\'' || w.front() == '(')) w.erase(w.begin());
  if (w.size() == 1 && std::isupper(static_cast<unsigned char>(w[0]))) return true;  // an initial: "J."
  static const std::set<std::string> abbr = {"Mr",  "Mrs", "Ms",  "Dr",  "St",  "Mt",  "Capt", "Col",
                                             "Gen", "Lt",  "Sr",  "Jr",  "vs",  "etc", "Prof", "Rev",
                                             "No",  "Vol", "viz", "i.e", "e.g", "Esq"};
  return abbr.count(w) > 0;
}

bool ends_sentence(const std::string& w) {
  size_t i = w.size();
  while (i > 0 && (w[i - 1] == '"' || w[i - 1] == '\'' || w[i - 1] == ')' || w[i - 1] == ']')) --i;
  // UTF-8 closing quotes (U+201D, U+2019) end in 0x9D / 0x99 after E2 80
  while (i >= 3 && static_cast<unsigned char>(w[i - 3]) == 0xE2 && static_cast<unsigned char>(w[i - 2]) == 0x80 &&
         (static_cast<unsigned char>(w[i - 1]) == 0x9D || static_cast<unsigned char>(w[i - 1]) == 0x99))
    i -= 3;
  return i > 0 && (w[i - 1] == '.' || w[i - 1] == '!' || w[i - 1] == '?');
}

bool starts_sentence(const std::string& w) {
  size_t i = 0;
  while (i < w.size() && (w[i] == '"' || w[i] == '\'' || w[i] == '(' || w[i] == '[')) ++i;
  if (i + 3 <= w.size() && static_cast<unsigned char>(w[i]) == 0xE2 && static_cast<unsigned char>(w[i + 1]) == 0x80)
    i += 3;
  return i < w.size() &&
         (std::isupper(static_cast<unsigned char>(w[i])) || std::isdigit(static_cast<unsigned char>(w[i])));
}

std::vector<std::string> read_list(const fs::path& p) {
  std::istringstream in(read_text(p.string(), "a word list (one word a line)"));
  std::set<std::string> words;
  std::string line;
  while (std::getline(in, line)) {
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    size_t b = 0;
    while (b < line.size() && std::isspace(static_cast<unsigned char>(line[b]))) ++b;
    if (b < line.size()) words.insert(line.substr(b));
  }
  if (words.size() < 100) fail("{}: {} words, expected a word list of hundreds", p.string(), words.size());
  return {words.begin(), words.end()};
}

std::string python_wonderwords_dir() {
  FILE* p = popen("python3 -c 'import os, wonderwords; print(os.path.dirname(wonderwords.__file__))' 2>/dev/null", "r");
  if (!p) return "";
  char buf[4096];
  std::string out;
  while (fgets(buf, sizeof buf, p)) out += buf;
  pclose(p);
  while (!out.empty() && std::isspace(static_cast<unsigned char>(out.back()))) out.pop_back();
  return out.empty() ? "" : (fs::path(out) / "assets").string();
}

}  // namespace

Essay load_essay(const std::string& path) {
  std::string t = read_text(path, "a long English text for the essay haystack");
  if (t.rfind("\xEF\xBB\xBF", 0) == 0) t.erase(0, 3);
  t = strip_gutenberg(t);
  Essay e;
  e.source = path;
  std::istringstream ss(t);
  std::string w;
  while (ss >> w) e.words.push_back(w);
  if (e.words.size() < 1000)
    fail("{}: {} words, expected a long English text (>= 1000 words) for the essay haystack", path, e.words.size());
  return e;
}

std::vector<std::string> essay_sentences(const Essay& e, int64_t n) {
  std::vector<std::string> out;
  std::string cur;
  const int64_t W = int64_t(e.words.size());
  for (int64_t i = 0; i < n; ++i) {
    const std::string& w = e.words[size_t(i % W)];
    if (!cur.empty()) cur += ' ';
    cur += w;
    const bool last = i + 1 == n;
    if (last || (ends_sentence(w) && !is_abbreviation(w) && starts_sentence(e.words[size_t((i + 1) % W)]))) {
      out.push_back(std::move(cur));
      cur.clear();
    }
  }
  return out;
}

WordLists load_word_lists(const std::string& dir) {
  std::string d = dir;
  std::string how = "--words";
  if (d.empty()) {
    if (const char* env = std::getenv("SALASIM_RULER_WORDS")) d = env, how = "$SALASIM_RULER_WORDS";
  }
  if (d.empty()) d = python_wonderwords_dir(), how = "python3's wonderwords package";
  if (d.empty())
    fail(
        "no word lists for the keys: install RULER's source of them, the `wonderwords` Python package (python3 -m pip "
        "install wonderwords; .ci/setup does), or name a folder holding adjectivelist.txt and nounlist.txt with "
        "--words DIR or $SALASIM_RULER_WORDS");
  const fs::path a = fs::path(d) / "adjectivelist.txt", n = fs::path(d) / "nounlist.txt";
  if (!fs::exists(a) || !fs::exists(n)) fail("{} (from {}): expected adjectivelist.txt and nounlist.txt there", d, how);
  WordLists w;
  w.source = d;
  w.adjectives = read_list(a);
  w.nouns = read_list(n);
  return w;
}

}  // namespace salasim::ruler
