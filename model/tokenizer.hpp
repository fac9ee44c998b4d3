// The checkpoint's SentencePiece tokenizer (tokenizer.model; MiniCPM's is LLaMA-style BPE, vocab 73448, bos 1,
// eos 2, `<|im_end|>` 73440), through Debian's libsentencepiece. Added tokens that Hugging Face keeps outside the
// SentencePiece model (tokenizer_config.json's added_tokens_decoder, added_tokens.json beside tokenizer.model) are
// matched as whole strings before the rest of the text is encoded, as HF's tokenizers do.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace salasim {

struct Encoded {
  std::vector<int32_t> ids;
  std::vector<std::pair<uint32_t, uint32_t>> spans;  // per token: [begin, end) byte offsets in the encoded text
};

class Tokenizer {
 public:
  // path: a tokenizer.model file, or a folder holding one. Throws salasim::Error naming the file when it is
  // missing or not a SentencePiece model.
  static Tokenizer load(const std::string& path);
  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  std::vector<int32_t> encode(std::string_view text) const;  // no BOS
  Encoded encode_with_spans(std::string_view text) const;
  // Control tokens (bos, eos) produce no text. An id the tokenizer does not have (a model's vocabulary can be
  // larger than its tokenizer's) is an error, or, with `unknown`, skipped and counted there.
  std::string decode(const std::vector<int32_t>& ids, int64_t* unknown = nullptr) const;

  int32_t bos_id() const;
  int32_t eos_id() const;
  int32_t id_of(std::string_view piece) const;  // -1 when the tokenizer has no such piece or added token
  int64_t vocab_size() const;                   // 1 + the largest id it can produce
  // What ends a generation: eos and `<|im_end|>` when the tokenizer has it.
  std::vector<int32_t> stop_ids() const;
  const std::string& path() const;
  bool available() const;  // false in a build without SentencePiece (every call then throws)

 private:
  struct Impl;
  explicit Tokenizer(std::unique_ptr<Impl> p);
  std::unique_ptr<Impl> impl_;
};

// Trains a BPE SentencePiece model on a text file (one sentence per line) into `model_path` (the library's
// trainer), set up as LLaMA's is: identity normalization (newlines and runs of spaces kept), digits split, byte
// fallback on, so any UTF-8 text encodes; `<|im_start|>` and `<|im_end|>` as user-defined pieces
// (the chatml template); unk 0, bos 1, eos 2 as MiniCPM's. For tests and synthetic-weight runs.
void train_tokenizer(const std::string& text_file, const std::string& model_path, int vocab_size);

bool sentencepiece_available();

// Hugging Face's added tokens kept beside tokenizer.model in `dir`: tokenizer_config.json's added_tokens_decoder
// (id -> {"content": ...}) and added_tokens.json (content -> id), longest content first. Each file is optional;
// one that is present is read through parse_json_file (model/json_field.hpp) and checked: ids are decimal keys or
// integers in [0, 2^31 - 1], contents non-empty, one id per content and one content per id across both files, at
// most kMaxAddedTokens (model/limits.hpp). Otherwise a salasim::Error naming the file and the field. Needs no
// SentencePiece (model/added_tokens.cpp).
std::vector<std::pair<std::string, int32_t>> read_added_tokens(const std::string& dir);

}  // namespace salasim
