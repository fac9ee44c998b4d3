// C++ / CUDA source reduced to its token sequence, for hashing what a source means rather than how it is laid out:
// the golden hash (source_hash.hpp) must change when code changes and must not when only comments or whitespace do.
#pragma once
#include <string>

namespace salasim {

// The preprocessing tokens of `text` (translation phases 1-3 as far as a hash needs them): line splices removed,
// comments dropped, then identifiers, pp-numbers (1.0e-5f, 0x1p-3, 1'000), string and character literals (prefixes
// and raw strings included, kept byte for byte) and punctuators by maximal munch ("x+=1" and "x += 1" give the same
// three tokens; "a - -b" and "a--b" do not). Tokens are joined by one space; a preprocessor directive (a line whose
// first token is '#') stands on its own line, because a directive ends where its line ends. Two texts give the same
// result exactly when they differ only in comments and in whitespace that separates tokens. An unterminated comment
// or literal runs to the end of the text (the compiler rejects it anyway).
std::string source_tokens(const std::string& text);

}  // namespace salasim
