// Fuzz target for the PTB-style tokenizer (corpora/tokenizer.h), which
// reads raw user text in `tag --pipeline`. Beyond crashes it checks what
// the header promises for every input, valid UTF-8 or not: tokens are
// non-empty valid UTF-8 with ordered byte ranges inside the input, and
// SplitSentences gives exactly Tokenize's tokens.
//
// Input: one option byte (PTB quotes, PTB brackets), then the text.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "corpora/tokenizer.h"
#include "fuzz/fuzz_util.h"

namespace chaintag {
namespace {

const Tokenizer& GetTokenizer(int options) {
  static std::unique_ptr<Tokenizer>* tokenizers = [] {
    auto* all = new std::unique_ptr<Tokenizer>[4];
    for (int k = 0; k < 4; ++k) {
      TokenizerOptions o;
      o.ptb_quotes = (k & 1) != 0;
      o.ptb_brackets = (k & 2) != 0;
      absl::StatusOr<std::unique_ptr<Tokenizer>> t = Tokenizer::Create(o);
      FUZZ_CHECK(t.ok());
      all[k] = *std::move(t);
    }
    return all;
  }();
  return *tokenizers[options & 3];
}

void CheckTokens(const std::vector<Token>& tokens, size_t text_size) {
  int64_t previous_end = 0;
  for (const Token& token : tokens) {
    FUZZ_CHECK(!token.text.empty());
    FUZZ_CHECK(SanitizeUtf8(token.text) == token.text);
    FUZZ_CHECK(0 <= token.begin && token.begin < token.end);
    FUZZ_CHECK(token.end <= static_cast<int64_t>(text_size));
    FUZZ_CHECK(token.begin >= previous_end);
    previous_end = token.end;
  }
}

}  // namespace
}  // namespace chaintag

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace chaintag;
  fuzzing::FuzzBytes bytes(data, size);
  const Tokenizer& tokenizer = GetTokenizer(bytes.Byte());
  const absl::string_view text = bytes.remaining();

  const std::vector<Token> tokens = tokenizer.Tokenize(text);
  CheckTokens(tokens, text.size());
  const std::vector<std::vector<Token>> sentences =
      tokenizer.SplitSentences(text);
  std::vector<Token> flat;
  for (const std::vector<Token>& sentence : sentences) {
    FUZZ_CHECK(!sentence.empty());
    flat.insert(flat.end(), sentence.begin(), sentence.end());
  }
  FUZZ_CHECK(flat == tokens);

  const std::string clean = SanitizeUtf8(text);
  FUZZ_CHECK(SanitizeUtf8(clean) == clean);
  return 0;
}
