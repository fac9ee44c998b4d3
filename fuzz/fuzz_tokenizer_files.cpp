// Fuzz target: the Hugging Face files salasim reads beside a tokenizer.model (model/tokenizer.hpp
// read_added_tokens): tokenizer_config.json's added_tokens_decoder and added_tokens.json. (The SentencePiece model
// itself is parsed by libsentencepiece, not by salasim.) The first byte says which files exist (bit 0: the config,
// bit 1: added_tokens.json, bit 2: the config is a folder instead), the next two how many of the remaining bytes
// are the config (little-endian); the rest is added_tokens.json. Whatever is accepted must be a table the encoder
// can use: non-empty contents, ids in [0, 2^31 - 1], one id per content and one content per id, longest first.
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>

#include "fuzz/support.hpp"
#include "model/tokenizer.hpp"

using namespace salasim;
namespace fs = std::filesystem;

namespace {

[[noreturn]] void broken(const char* what) {
  std::fprintf(stderr, "fuzz: read_added_tokens returned %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  const uint8_t which = data[0];
  const size_t first = std::min(size - 3, size_t(data[1]) | size_t(data[2]) << 8);
  const fs::path dir = fs::path(fuzz::scratch_dir()) / "tok";
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir);
  if (which & 4) fs::create_directories(dir / "tokenizer_config.json");
  else if (which & 1) fuzz::write_scratch("tok/tokenizer_config.json", data + 3, first);
  if (which & 2) fuzz::write_scratch("tok/added_tokens.json", data + 3 + first, size - 3 - first);
  fuzz::expect_clean([&] {
    const auto added = read_added_tokens(dir.string());
    std::set<std::string> contents;
    std::set<int32_t> ids;
    for (size_t i = 0; i < added.size(); ++i) {
      const auto& [content, id] = added[i];
      if (content.empty()) broken("an empty token");
      if (id < 0) broken("a negative id");
      if (!contents.insert(content).second) broken("a token twice");
      if (!ids.insert(id).second) broken("an id twice");
      if (i > 0 && added[i - 1].first.size() < content.size()) broken("a shorter token before a longer one");
    }
  });
  return 0;
}
