// Tokenizer on libsentencepiece (Debian's libsentencepiece-dev), plus Hugging Face's added tokens.
#include "model/tokenizer.hpp"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "model/error.hpp"
#include "model/json_field.hpp"
#include "model/limits.hpp"

namespace salasim {

namespace fs = std::filesystem;

struct Tokenizer::Impl {
  sentencepiece::SentencePieceProcessor sp;
  std::string path;
  std::vector<std::pair<std::string, int32_t>> added;  // HF added tokens, longest content first
  int64_t vocab = 0;
};

Tokenizer::Tokenizer(std::unique_ptr<Impl> p) : impl_(std::move(p)) {}
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

bool sentencepiece_available() { return true; }
bool Tokenizer::available() const { return true; }

Tokenizer Tokenizer::load(const std::string& path) {
  fs::path file = path;
  if (fs::is_directory(file)) file /= "tokenizer.model";
  if (!fs::exists(file))
    fail("{}: no SentencePiece tokenizer here (expected a tokenizer.model file or a folder holding one)",
         file.string());
  // libsentencepiece opens and reads the whole file: a FIFO would block it, a device or a huge file fill memory.
  require_regular_file(file.string(), "a SentencePiece tokenizer.model file");
  std::error_code ec;
  const uintmax_t bytes = fs::file_size(file, ec);
  if (!ec && bytes > uintmax_t(kTokenizerMaxBytes))
    fail("{}: {} bytes; a SentencePiece model is a few MB (at most {} MiB is read)", file.string(), bytes,
         kTokenizerMaxBytes >> 20);
  auto impl = std::make_unique<Impl>();
  impl->path = file.string();
  const auto st = impl->sp.Load(file.string());
  if (!st.ok()) fail("{}: not a SentencePiece model ({})", file.string(), st.ToString());
  impl->added = read_added_tokens(file.parent_path().empty() ? std::string(".") : file.parent_path().string());
  impl->vocab = impl->sp.GetPieceSize();
  for (auto& [c, id] : impl->added) impl->vocab = std::max<int64_t>(impl->vocab, int64_t(id) + 1);
  return Tokenizer(std::move(impl));
}

Encoded Tokenizer::encode_with_spans(std::string_view text) const {
  const Impl& m = *impl_;
  Encoded out;
  auto encode_part = [&](size_t begin, size_t end) {
    if (begin >= end) return;
    sentencepiece::ImmutableSentencePieceText spt;
    const auto st = m.sp.Encode(std::string_view(text.data() + begin, end - begin), spt.mutable_proto());
    if (!st.ok()) fail("{}: encoding failed ({})", m.path, st.ToString());
    for (const auto& p : spt.pieces()) {
      out.ids.push_back(int32_t(p.id()));
      out.spans.emplace_back(uint32_t(begin + p.begin()), uint32_t(begin + p.end()));
    }
  };
  bool first[256] = {};  // bytes an added token can start with: the scan skips the rest quickly
  for (const auto& [content, id] : m.added) first[static_cast<unsigned char>(content[0])] = true;
  size_t pos = 0, from = 0;
  while (pos < text.size() && !m.added.empty()) {  // added tokens are whole-string matches, longest first
    bool hit = false;
    if (!first[static_cast<unsigned char>(text[pos])]) {
      ++pos;
      continue;
    }
    for (const auto& [content, id] : m.added)
      if (text.compare(pos, content.size(), content) == 0) {
        encode_part(from, pos);
        out.ids.push_back(id);
        out.spans.emplace_back(uint32_t(pos), uint32_t(pos + content.size()));
        pos += content.size();
        from = pos;
        hit = true;
        break;
      }
    if (!hit) ++pos;
  }
  encode_part(from, text.size());
  return out;
}

std::vector<int32_t> Tokenizer::encode(std::string_view text) const {
  const Impl& m = *impl_;
  if (m.added.empty()) {
    std::vector<int> ids;
    const auto st = m.sp.Encode(text, &ids);
    if (!st.ok()) fail("{}: encoding failed ({})", m.path, st.ToString());
    return std::vector<int32_t>(ids.begin(), ids.end());
  }
  return encode_with_spans(text).ids;
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids, int64_t* unknown) const {
  const Impl& m = *impl_;
  std::string out;
  if (unknown) *unknown = 0;
  std::vector<int> run;
  auto flush = [&] {
    if (run.empty()) return;
    std::string s;
    const auto st = m.sp.Decode(run, &s);
    if (!st.ok()) fail("{}: decoding failed ({})", m.path, st.ToString());
    // each run decodes as the segment encode_with_spans encoded on its own (the dummy prefix it added is dropped)
    out += s;
    run.clear();
  };
  for (int32_t id : ids) {
    const auto it = std::find_if(m.added.begin(), m.added.end(), [&](const auto& a) { return a.second == id; });
    if (it != m.added.end()) {
      flush();
      out += it->first;
    } else if (id >= 0 && id < m.sp.GetPieceSize()) {
      run.push_back(id);
    } else if (unknown) {
      ++*unknown;
    } else {
      fail("{}: cannot decode id {} (the tokenizer has {} ids)", m.path, id, m.vocab);
    }
  }
  flush();
  return out;
}

int32_t Tokenizer::bos_id() const { return impl_->sp.bos_id(); }
int32_t Tokenizer::eos_id() const { return impl_->sp.eos_id(); }
int64_t Tokenizer::vocab_size() const { return impl_->vocab; }
const std::string& Tokenizer::path() const { return impl_->path; }

int32_t Tokenizer::id_of(std::string_view piece) const {
  for (const auto& [c, id] : impl_->added)
    if (c == piece) return id;
  const int id = impl_->sp.PieceToId(piece);
  if (id == impl_->sp.unk_id() && impl_->sp.IdToPiece(id) != piece) return -1;
  return id;
}

std::vector<int32_t> Tokenizer::stop_ids() const {
  std::vector<int32_t> out;
  if (eos_id() >= 0) out.push_back(eos_id());
  const int32_t im_end = id_of("<|im_end|>");
  if (im_end >= 0 && im_end != eos_id()) out.push_back(im_end);
  return out;
}

void train_tokenizer(const std::string& text_file, const std::string& model_path, int vocab_size) {
  if (!fs::exists(text_file)) fail("{}: no training text", text_file);
  std::string prefix = model_path;
  if (prefix.size() > 6 && prefix.substr(prefix.size() - 6) == ".model") prefix.resize(prefix.size() - 6);
  else fail("{}: the tokenizer file name must end in .model", model_path);
  const std::string args = fmt::format(
      "--input={} --model_prefix={} --vocab_size={} --model_type=bpe --byte_fallback=true --character_coverage=1.0 "
      "--unk_id=0 --bos_id=1 --eos_id=2 --pad_id=-1 --user_defined_symbols=<|im_start|>,<|im_end|> "
      "--split_digits=true --normalization_rule_name=identity --remove_extra_whitespaces=false "
      "--allow_whitespace_only_pieces=true --minloglevel=2 --num_threads=2",
      text_file, prefix, vocab_size);
  const auto st = sentencepiece::SentencePieceTrainer::Train(std::string_view(args));
  if (!st.ok()) fail("training a SentencePiece model on {}: {}", text_file, st.ToString());
  std::error_code ec;
  fs::remove(prefix + ".vocab", ec);  // the model file holds everything
}

}  // namespace salasim
