// Tokenizer in a build without libsentencepiece: every use says how to get it.
#include "model/error.hpp"
#include "model/tokenizer.hpp"

namespace salasim {

struct Tokenizer::Impl {};

namespace {
[[noreturn]] void missing() {
  fail("this build has no SentencePiece tokenizer: install libsentencepiece-dev (bash .ci/setup does) and reconfigure");
}
}  // namespace

Tokenizer::Tokenizer(std::unique_ptr<Impl> p) : impl_(std::move(p)) {}
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;
bool sentencepiece_available() { return false; }
bool Tokenizer::available() const { return false; }
Tokenizer Tokenizer::load(const std::string&) { missing(); }
Encoded Tokenizer::encode_with_spans(std::string_view) const { missing(); }
std::vector<int32_t> Tokenizer::encode(std::string_view) const { missing(); }
std::string Tokenizer::decode(const std::vector<int32_t>&, int64_t*) const { missing(); }
int32_t Tokenizer::bos_id() const { missing(); }
int32_t Tokenizer::eos_id() const { missing(); }
int32_t Tokenizer::id_of(std::string_view) const { missing(); }
int64_t Tokenizer::vocab_size() const { missing(); }
std::vector<int32_t> Tokenizer::stop_ids() const { missing(); }
const std::string& Tokenizer::path() const { missing(); }
void train_tokenizer(const std::string&, const std::string&, int) { missing(); }

}  // namespace salasim
