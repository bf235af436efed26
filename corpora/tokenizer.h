// Tokenizer: turns raw UTF-8 text into Penn-Treebank-style tokens, so that a
// model trained on CoNLL-2000 / WSJ columns can tag text that never came in
// columns. The tokens look like the first column of those corpora
// (`don't` -> `do n't`, `"a"` -> `` a '', `$5` -> `$ 5`, `(` -> -LRB-), and
// every token keeps the byte range of the input it came from, so tags can be
// projected back onto the original text.
//
// The rules (whitespace, including Unicode spaces and controls, separates):
//  - "...", runs of "--", currency prefixes such as "US$" and "C$", and
//    numbers with a sign or leading dot ("-2", ".5") are single tokens;
//  - a word is letters/digits/marks joined by - . & / and apostrophes, and
//    numbers keep their grouping commas and colons ("1,000.50", "10:30",
//    "tentative-agreement", "AT&T", "and/or"); "60%-held" stays whole as WSJ
//    has it;
//  - a period right after a word stays with it when word+"." is a known
//    abbreviation ("Mr.", "Corp.", "Calif.", ...) or initials ("U.S.",
//    "p.m.", "E."; "I." only after a capitalised word, as in "Malcolm I.
//    Glazer"), and a hyphen may then continue the word ("U.S.-based"). The
//    final period of the text (only closing quotes/brackets and spaces after
//    it) is always split off, as WSJ mostly does ("... Co .", "N.Y ."; its
//    "U.S. ." is not copied). Other periods are tokens of their own;
//  - clitics are split off words: n't 's 're 'll 've 'd 'm (any case, ' or ’),
//    and cannot/gonna/gotta/wanna/gimme/lemme are split after three letters;
//    other apostrophes inside words stay ("O'Neill"), as do '90s and '86;
//  - quotes: " is `` when it follows a space/opening bracket/the start and is
//    followed by a non-space, '' when it follows a non-space, and alternates
//    (opening first) when spaces surround it; a straight ' that opens becomes
//    `; “ ‘ „ become `` ` ``, ” ’ become '' '; "``" and "''" are kept;
//  - every other non-space character ($ % , ; : ! ? # ...) is a token; PTB's
//    escapes of / and * ("1\/2") are not applied.
//
// Sentence splitting (SplitSentences) cuts after a ".", "!" or "?" token,
// together with any further ones and the closing quotes/brackets that follow,
// when the next token starts with an uppercase letter or a digit, or is an
// opening quote or bracket. Because abbreviations keep their period, "Mr.
// Smith", "Corp. said" and "the U.S. Army" never end a sentence; the price is
// that a sentence really ending in an abbreviation inside a paragraph ("...
// in the U.S. It was") is not split either. At the end of the paragraph the
// final period is split off, so the last sentence ends in "." as usual.
//
// Invalid UTF-8 never fails: each maximal ill-formed subsequence becomes one
// U+FFFD in token text (and counts as a letter, so "caf\xE9" stays one word),
// while offsets still cover the original bytes.
//
// Thread safety: a Tokenizer is immutable after Create(); any number of
// threads may use one concurrently.

#ifndef CHAINTAG_CORPORA_TOKENIZER_H_
#define CHAINTAG_CORPORA_TOKENIZER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "re2/re2.h"

namespace chaintag {

struct Token {
  // Valid UTF-8. Differs from the input bytes for PTB quotes and brackets,
  // ’ in clitics, and invalid UTF-8 (U+FFFD).
  std::string text;
  // Byte range [begin, end) of the input the token came from.
  int64_t begin = 0;
  int64_t end = 0;

  friend bool operator==(const Token& a, const Token& b) {
    return a.text == b.text && a.begin == b.begin && a.end == b.end;
  }
};

struct TokenizerOptions {
  // Quotes as PTB writes them (`` '' ` '); otherwise quote tokens keep the
  // input's characters (and ’ stays in clitics).
  bool ptb_quotes = true;
  // Brackets as PTB writes them (-LRB- -RRB- -LSB- -RSB- -LCB- -RCB-), which
  // is what CoNLL-2000 models have seen; otherwise ( ) [ ] { } themselves.
  bool ptb_brackets = true;
};

class Tokenizer {
 public:
  // Fails only if a built-in pattern does not compile (a bug, not bad input).
  static absl::StatusOr<std::unique_ptr<Tokenizer>> Create(
      const TokenizerOptions& options = {});

  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  // One sentence (e.g. one line of a one-sentence-per-line file). Empty or
  // whitespace-only text gives no tokens.
  std::vector<Token> Tokenize(absl::string_view text) const;

  // A paragraph: the same tokens as Tokenize(text), cut into sentences as
  // described at the top of this file. Offsets are relative to `text`.
  std::vector<std::vector<Token>> SplitSentences(absl::string_view text) const;

 private:
  enum class Kind : uint8_t;
  struct Scan;

  explicit Tokenizer(const TokenizerOptions& options);

  void TokenizeInto(Scan* scan) const;
  // Each Add* appends the tokens starting at `pos` (sanitized offsets) and
  // returns where scanning resumes.
  size_t AddWord(size_t pos, size_t end, Scan* scan) const;
  size_t AddApostrophe(size_t pos, size_t len, Scan* scan) const;
  size_t AddPunctuation(size_t pos, char32_t c, int len, Scan* scan) const;
  bool IsAbbreviation(absl::string_view with_period,
                      bool after_capitalized) const;
  bool IsWordCharAt(absl::string_view text, size_t pos) const;

  const TokenizerOptions options_;
  const RE2 token_re_;
  const RE2 word_re_;
  const RE2 word_char_re_;
  const RE2 capitalized_re_;
  const RE2 initials_re_;
  const RE2 sentence_start_re_;
  const absl::flat_hash_set<std::string> abbreviations_;
};

// The words of valid UTF-8 `text` separated by what the tokenizer takes for
// space (ASCII and Unicode spaces, controls, the zero-width space and the
// BOM), for text that comes already tokenized:
//   SplitAtSpaces("a\u00A0b  c") == {"a", "b", "c"}
std::vector<absl::string_view> SplitAtSpaces(absl::string_view text);

// Replaces each maximal ill-formed subsequence of `text` with U+FFFD (the
// Unicode-recommended practice, as WHATWG decoders do); valid text is
// returned unchanged.
std::string SanitizeUtf8(absl::string_view text);

}  // namespace chaintag

#endif  // CHAINTAG_CORPORA_TOKENIZER_H_
