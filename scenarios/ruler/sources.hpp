// What RULER's NIAH haystacks and keys are made of, read at run time from installed packages (nothing copied
// into the repository): the essay text, the word lists for keys, and a sentence splitter standing in for NLTK's
// punkt (docs/ruler-runs.md says which texts and how they differ from RULER's).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace salasim::ruler {

// The default essay haystack: Herman Melville's "Moby-Dick" (Project Gutenberg #2701, public domain), as Debian's
// golang-github-colinmarc-hdfs-dev ships it for its tests (.ci/setup installs it). RULER's Paul Graham essays are
// not reachable from here.
extern const char* const kDefaultEssay;

// An essay as RULER uses it: whitespace collapsed, split on spaces; one unit is one word.
struct Essay {
  std::string source;
  std::vector<std::string> words;
};
// Reads a UTF-8 text file; a Project Gutenberg file loses its header and licence (outside the "*** START OF" /
// "*** END OF" lines). Throws naming the file when it is missing or has fewer than 1000 words.
Essay load_essay(const std::string& path);

// Sentences of words[0, n) (the essay repeats when n exceeds it, as RULER's current main does): ends at a word
// ending in . ! or ? (closing quotes and brackets after it allowed) when the next word starts a sentence (an upper-case
// letter or digit, possibly after an opening quote), except after common abbreviations and initials.
std::vector<std::string> essay_sentences(const Essay& e, int64_t n);

// RULER's key words: the `wonderwords` PyPI package's adjectivelist.txt and nounlist.txt (keys are
// "<adjective>-<noun>"), found in the installed package: `dir` if given, else $SALASIM_RULER_WORDS, else the
// assets folder of the `wonderwords` module that `python3` imports.
struct WordLists {
  std::string source;  // the folder read
  std::vector<std::string> adjectives, nouns;  // sorted, unique
};
WordLists load_word_lists(const std::string& dir = "");

}  // namespace salasim::ruler
