// Shared by the RULER tests: a SentencePiece model trained once per test binary on RULER-like text (vocab 1000,
// so its ids fit the tiny configs' vocab_size 1024), the word lists and the essay.
#pragma once
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "model/tokenizer.hpp"
#include "scenarios/ruler/niah.hpp"
#include "scenarios/ruler/sources.hpp"

namespace salasim::test {

inline const ruler::WordLists& ruler_words() {
  static const ruler::WordLists w = ruler::load_word_lists();
  return w;
}
inline const ruler::Essay& ruler_essay() {
  static const ruler::Essay e = ruler::load_essay(ruler::kDefaultEssay);
  return e;
}
// The trained model's path (trained on the first call).
inline const std::string& ruler_tokenizer_path() {
  static const std::string path = [] {
    // per process: ctest runs the cases of this binary in parallel processes
    const std::filesystem::path dir = std::filesystem::path(SALASIM_TEST_TMP) / ("ruler_tokenizer_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const std::string text = (dir / "train.txt").string(), model = (dir / "tokenizer.model").string();
    std::ofstream(text) << ruler::tokenizer_training_text(ruler_words(), &ruler_essay(), 1);
    train_tokenizer(text, model, 1000);
    return model;
  }();
  return path;
}
inline const Tokenizer& ruler_tokenizer() {
  static const Tokenizer t = Tokenizer::load(ruler_tokenizer_path());
  return t;
}

}  // namespace salasim::test
