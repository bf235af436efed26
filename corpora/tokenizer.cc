#include "corpora/tokenizer.h"

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "re2/re2.h"

namespace chaintag {
namespace {

constexpr absl::string_view kReplacementChar = "\xEF\xBF\xBD";

// Word characters; U+FFFD is one so that a mis-encoded letter ("caf\xE9")
// does not break its word apart.
constexpr char kWordChar[] = R"([\pL\pM\pN_\x{FFFD}])";

// A word: segments joined by - . & / or an apostrophe. A segment is a number
// with grouping commas or colons (only a digit may follow those, so "said,it"
// is not one word) or a run of word characters.
std::string WordPattern() {
  const std::string w = kWordChar;
  // Zero-width (non-)joiners inside a run belong to it, as in Persian and
  // Indic words.
  const std::string seg = absl::StrCat(R"((?:\d+(?:[,:]\d+)+)", w, "*|", w,
                                       R"(+(?:[\x{200C}\x{200D}])", w, "+)*)");
  return absl::StrCat(seg, R"((?:[-.&/'’])", seg, ")*");
}

// Alternatives in priority order (RE2 is leftmost-first).
std::string TokenPattern() {
  const std::string word = WordPattern();
  return absl::StrCat(R"(\.\.\.|--+|\p{Lu}{1,3}\$|)",              //
                      R"(\d+(?:[.,]\d+)*%-)", word, "|",           // 60%-held
                      R"([-+](?:\d+(?:[,.:]\d+)*|\.\d+)|\.\d+|)",  // -2 .5
                      word);
}

// The PTB abbreviations most common in news text; case matters ("No." but
// not "no."), an all-caps form ("CORP.") is looked up in title case.
constexpr const char* kAbbreviations[] = {
    // Titles.
    "Mr.", "Mrs.", "Ms.", "Messrs.", "Mmes.", "Dr.", "Drs.", "Prof.", "Sen.",
    "Sens.", "Rep.", "Reps.", "Gov.", "Gen.", "Col.", "Lt.", "Maj.", "Capt.",
    "Sgt.", "Cpl.", "Pvt.", "Adm.", "Cmdr.", "Rev.", "Hon.", "Pres.", "Supt.",
    "Det.", "Insp.", "Esq.", "Jr.", "Sr.", "St.", "Ph.D.",
    // Companies and organisations.
    "Corp.", "Inc.", "Co.", "Cos.", "Ltd.", "Bros.", "Assn.", "Dept.", "Govt.",
    "Mfg.", "Intl.", "Univ.", "Bancorp.", "Bhd.",
    // Months.
    "Jan.", "Feb.", "Mar.", "Apr.", "Jun.", "Jul.", "Aug.", "Sep.", "Sept.",
    "Oct.", "Nov.", "Dec.",
    // US states as WSJ writes them.
    "Ala.", "Ariz.", "Ark.", "Calif.", "Colo.", "Conn.", "Del.", "Fla.", "Ga.",
    "Ill.", "Ind.", "Kan.", "Kans.", "Ky.", "La.", "Md.", "Mass.", "Mich.",
    "Minn.", "Miss.", "Mo.", "Mont.", "Neb.", "Nev.", "Okla.", "Ore.", "Pa.",
    "Penn.", "Tenn.", "Tex.", "Va.", "Vt.", "Wash.", "Wis.", "Wyo.", "W.Va.",
    // Addresses, references, Latin.
    "Ave.", "Blvd.", "Rd.", "Mt.", "Ft.", "No.", "Nos.", "Vol.", "Vols.",
    "Fig.", "Figs.", "ft.", "Art.", "Sec.", "pp.", "vs.", "v.", "etc.", "al.",
    "cf.", "approx."};

// Initials keep their period too: "U.S.", "p.m.", "E." (a lone lowercase
// letter is more often a word, as in "plan a.").
constexpr char kInitialsPattern[] = R"(\pL(?:\.\pL)+|\p{Lu})";

// Sentences start with an uppercase letter or a digit (openings are checked
// by token kind).
constexpr char kSentenceStartPattern[] = R"(^[\p{Lu}\p{Lt}\p{Nd}])";

// Length of the well-formed UTF-8 sequence at text[i], or minus the length of
// the maximal ill-formed subpart starting there (which becomes one U+FFFD).
int ScanUtf8(absl::string_view text, size_t i) {
  const auto b0 = static_cast<unsigned char>(text[i]);
  if (b0 < 0x80) return 1;
  int need;
  unsigned char lo = 0x80, hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    need = 1;
  } else if (b0 == 0xE0) {
    need = 2;
    lo = 0xA0;  // below: overlong
  } else if (b0 == 0xED) {
    need = 2;
    hi = 0x9F;  // above: surrogates
  } else if (b0 >= 0xE1 && b0 <= 0xEF) {
    need = 2;
  } else if (b0 == 0xF0) {
    need = 3;
    lo = 0x90;  // below: overlong
  } else if (b0 >= 0xF1 && b0 <= 0xF3) {
    need = 3;
  } else if (b0 == 0xF4) {
    need = 3;
    hi = 0x8F;  // above: past U+10FFFF
  } else {
    return -1;  // continuation byte, C0/C1 (overlong), F5..FF
  }
  size_t j = i + 1;
  for (int k = 0; k < need; ++k, ++j) {
    if (j >= text.size()) return -static_cast<int>(j - i);
    const auto b = static_cast<unsigned char>(text[j]);
    if (b < lo || b > hi) return -static_cast<int>(j - i);
    lo = 0x80;
    hi = 0xBF;
  }
  return need + 1;
}

// Text that is valid UTF-8 and a map from its byte offsets back to the
// input's. Valid input (the usual case) is used in place, with no map.
class SanitizedText {
 public:
  explicit SanitizedText(absl::string_view input) : text_(input) {
    size_t i = 0;
    while (i < input.size()) {
      const int n = ScanUtf8(input, i);
      if (n < 0) break;
      i += n;
    }
    if (i == input.size()) return;
    storage_.reserve(input.size() + 8);
    original_.reserve(input.size() + 9);
    storage_.append(input.data(), i);
    for (size_t k = 0; k < i; ++k) original_.push_back(k);
    while (i < input.size()) {
      const int n = ScanUtf8(input, i);
      if (n > 0) {
        storage_.append(input.data() + i, n);
        for (int k = 0; k < n; ++k) original_.push_back(i);
        i += n;
      } else {
        storage_.append(kReplacementChar.data(), kReplacementChar.size());
        for (size_t k = 0; k < kReplacementChar.size(); ++k) {
          original_.push_back(i);
        }
        i += -n;
      }
    }
    original_.push_back(input.size());
    text_ = storage_;
  }
  SanitizedText(const SanitizedText&) = delete;
  SanitizedText& operator=(const SanitizedText&) = delete;

  absl::string_view text() const { return text_; }
  // Only called at character boundaries, where the map is exact.
  int64_t Original(size_t pos) const {
    return original_.empty() ? static_cast<int64_t>(pos) : original_[pos];
  }

 private:
  absl::string_view text_;
  std::string storage_;
  std::vector<int64_t> original_;
};

// Decodes the character at text[i] of valid UTF-8.
char32_t DecodeRune(absl::string_view text, size_t i, int* len) {
  const auto b0 = static_cast<unsigned char>(text[i]);
  auto cont = [&](size_t k) {
    return static_cast<char32_t>(static_cast<unsigned char>(text[i + k]) &
                                 0x3F);
  };
  if (b0 < 0x80) {
    *len = 1;
    return b0;
  }
  if (b0 < 0xE0) {
    *len = 2;
    return (static_cast<char32_t>(b0 & 0x1F) << 6) | cont(1);
  }
  if (b0 < 0xF0) {
    *len = 3;
    return (static_cast<char32_t>(b0 & 0x0F) << 12) | (cont(1) << 6) | cont(2);
  }
  *len = 4;
  return (static_cast<char32_t>(b0 & 0x07) << 18) | (cont(1) << 12) |
         (cont(2) << 6) | cont(3);
}

// Separators, controls, and the invisible characters that only separate
// (zero-width space, BOM).
bool IsSpace(char32_t c) {
  if (c <= 0x20 || c == 0x7F) return true;
  if (c < 0x80) return false;
  return (c >= 0x80 && c <= 0xA0) || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200B) || c == 0x2028 || c == 0x2029 ||
         c == 0x202F || c == 0x205F || c == 0x3000 || c == 0xFEFF;
}

// What may come right before an opening quote.
bool IsOpeningContext(char32_t c) {
  switch (c) {
    case '(':
    case '[':
    case '{':
    case '<':
    case '`':
    case 0x2018:  // ‘
    case 0x201C:  // “
    case 0x201E:  // „
    case 0x00AB:  // «
    case 0x2013:  // en dash
    case 0x2014:  // em dash
      return true;
    default:
      return IsSpace(c);
  }
}

// What may follow a final period: the text's end, spaces and closers.
bool OnlyClosersFollow(absl::string_view text, size_t pos) {
  while (pos < text.size()) {
    int len;
    const char32_t c = DecodeRune(text, pos, &len);
    switch (c) {
      case '"':
      case '\'':
      case ')':
      case ']':
      case '}':
      case 0x2019:  // ’
      case 0x201D:  // ”
      case 0x00BB:  // »
        break;
      default:
        if (!IsSpace(c)) return false;
    }
    pos += len;
  }
  return true;
}

// The character before text[pos]; the start of the text counts as a space.
char32_t PrevRune(absl::string_view text, size_t pos) {
  if (pos == 0) return ' ';
  size_t p = pos - 1;
  while (p > 0 && (static_cast<unsigned char>(text[p]) & 0xC0) == 0x80) --p;
  int unused;
  return DecodeRune(text, p, &unused);
}

bool IsSpaceAt(absl::string_view text, size_t pos) {
  if (pos >= text.size()) return true;
  int unused;
  return IsSpace(DecodeRune(text, pos, &unused));
}

bool IsRegionalIndicator(char32_t c) { return c >= 0x1F1E6 && c <= 0x1F1FF; }

bool IsZeroWidthJoiner(char32_t c) { return c == 0x200C || c == 0x200D; }

// What renders as part of the symbol before it: combining marks (for
// symbols too: the keycap), variation selectors, emoji skin tones and tags.
bool ExtendsSymbol(char32_t c) {
  return (c >= 0x0300 && c <= 0x036F) || (c >= 0x20D0 && c <= 0x20FF) ||
         (c >= 0xFE00 && c <= 0xFE0F) || (c >= 0x1F3FB && c <= 0x1F3FF) ||
         (c >= 0xE0020 && c <= 0xE007F) || (c >= 0xE0100 && c <= 0xE01EF);
}

// Where the symbol `first`, ending at `end`, ends as one character on
// screen: a flag is a pair of regional indicators, and a zero-width joiner
// joins the symbols around it ("👨‍👩‍👧" is one token, as is
// "❤️").
size_t SymbolClusterEnd(absl::string_view text, char32_t first, size_t end) {
  int len;
  if (IsRegionalIndicator(first)) {
    if (end < text.size() && IsRegionalIndicator(DecodeRune(text, end, &len))) {
      end += len;
    }
    return end;
  }
  while (end < text.size()) {
    const char32_t c = DecodeRune(text, end, &len);
    if (ExtendsSymbol(c)) {
      end += len;
    } else if (c == 0x200D) {
      end += len;
      int joined_len;
      if (end >= text.size() || DecodeRune(text, end, &joined_len) < 0x80 ||
          IsSpaceAt(text, end)) {
        break;  // a trailing joiner stays with its symbol
      }
      end += joined_len;
    } else {
      break;
    }
  }
  return end;
}

bool EndsWithApostrophe(absl::string_view text, size_t* len) {
  if (!text.empty() && text.back() == '\'') {
    *len = 1;
    return true;
  }
  if (text.size() >= 3 && text.substr(text.size() - 3) == "\xE2\x80\x99") {
    *len = 3;
    return true;
  }
  return false;
}

// Where the clitic at the end of `word` starts, or 0 if there is none (a
// clitic needs a non-empty host, so "n't" and "'s" alone stay whole).
size_t CliticStart(absl::string_view word) {
  static constexpr absl::string_view kAfterApostrophe[] = {"s",  "re", "ll",
                                                           "ve", "d",  "m"};
  size_t apostrophe;
  if (word.size() >= 2 && absl::ascii_tolower(word.back()) == 't' &&
      EndsWithApostrophe(word.substr(0, word.size() - 1), &apostrophe)) {
    const size_t at = word.size() - 1 - apostrophe;
    if (at >= 2 && absl::ascii_tolower(word[at - 1]) == 'n') return at - 1;
  }
  for (absl::string_view suffix : kAfterApostrophe) {
    if (word.size() <= suffix.size()) continue;
    const absl::string_view tail = word.substr(word.size() - suffix.size());
    if (!absl::EqualsIgnoreCase(tail, suffix)) continue;
    if (EndsWithApostrophe(word.substr(0, word.size() - suffix.size()),
                           &apostrophe)) {
      const size_t start = word.size() - suffix.size() - apostrophe;
      if (start > 0) return start;
    }
  }
  return 0;
}

// PTB writes these as two words, cut after three letters ("can not").
bool IsSplitCompound(absl::string_view word) {
  static constexpr absl::string_view kCompounds[] = {
      "cannot", "gonna", "gotta", "wanna", "gimme", "lemme"};
  for (absl::string_view c : kCompounds) {
    if (absl::EqualsIgnoreCase(word, c)) return true;
  }
  return false;
}

std::string NormalizeApostrophe(absl::string_view clitic, bool ptb) {
  std::string out(clitic);
  if (!ptb) return out;
  const size_t at = out.find("\xE2\x80\x99");
  if (at != std::string::npos) out.replace(at, 3, "'");
  return out;
}

absl::flat_hash_set<std::string> AbbreviationSet() {
  absl::flat_hash_set<std::string> set;
  for (const char* a : kAbbreviations) set.insert(a);
  return set;
}

RE2::Options PatternOptions() {
  RE2::Options options;
  options.set_log_errors(false);
  return options;
}

}  // namespace

enum class Tokenizer::Kind : uint8_t {
  kWord,
  kOpenQuote,
  kCloseQuote,
  kOpenBracket,
  kCloseBracket,
  kTerminal,  // . ! ?
  kOther,
};

// Per-call state: the tokens in sanitized offsets and their kinds.
struct Tokenizer::Scan {
  explicit Scan(absl::string_view input) : sanitized(input) {}
  SanitizedText sanitized;
  std::vector<Token> tokens;
  std::vector<Kind> kinds;
  int straight_double_quotes = 0;

  absl::string_view text() const { return sanitized.text(); }
  void Add(absl::string_view token_text, size_t begin, size_t end, Kind kind) {
    tokens.push_back(Token{std::string(token_text), sanitized.Original(begin),
                           sanitized.Original(end)});
    kinds.push_back(kind);
  }
};

Tokenizer::Tokenizer(const TokenizerOptions& options)
    : options_(options),
      token_re_(TokenPattern(), PatternOptions()),
      word_re_(WordPattern(), PatternOptions()),
      word_char_re_(kWordChar, PatternOptions()),
      capitalized_re_(R"(^\p{Lu})", PatternOptions()),
      initials_re_(kInitialsPattern, PatternOptions()),
      sentence_start_re_(kSentenceStartPattern, PatternOptions()),
      abbreviations_(AbbreviationSet()) {}

absl::StatusOr<std::unique_ptr<Tokenizer>> Tokenizer::Create(
    const TokenizerOptions& options) {
  std::unique_ptr<Tokenizer> tokenizer(new Tokenizer(options));
  for (const RE2* re :
       {&tokenizer->token_re_, &tokenizer->word_re_, &tokenizer->word_char_re_,
        &tokenizer->capitalized_re_, &tokenizer->initials_re_,
        &tokenizer->sentence_start_re_}) {
    if (!re->ok()) {
      return absl::InternalError(
          absl::StrCat("tokenizer pattern '", re->pattern(),
                       "' does not compile: ", re->error()));
    }
  }
  return tokenizer;
}

bool Tokenizer::IsWordCharAt(absl::string_view text, size_t pos) const {
  if (pos >= text.size()) return false;
  const auto b = static_cast<unsigned char>(text[pos]);
  if (b < 0x80) return absl::ascii_isalnum(b) || b == '_';
  return word_char_re_.Match(re2::StringPiece(text.data(), text.size()), pos,
                             text.size(), RE2::ANCHOR_START, nullptr, 0);
}

bool Tokenizer::IsAbbreviation(absl::string_view with_period,
                               bool after_capitalized) const {
  // Only the part after the last hyphen counts: "non-U.S.", "Canada-U.S.".
  const size_t hyphen = with_period.rfind('-');
  if (hyphen != absl::string_view::npos) {
    with_period.remove_prefix(hyphen + 1);
  }
  if (with_period.size() < 2) return false;
  if (abbreviations_.contains(with_period)) return true;
  const absl::string_view stem = with_period.substr(0, with_period.size() - 1);
  if (stem.size() > 1 && absl::AsciiStrToUpper(stem) == stem) {
    std::string title = absl::AsciiStrToLower(with_period);
    title[0] = absl::ascii_toupper(title[0]);
    if (abbreviations_.contains(title)) return true;
  }
  // "I." is the pronoun ending "so do I." unless a first name comes before
  // it ("Malcolm I. Glazer").
  if (stem == "I") return after_capitalized;
  return RE2::FullMatch(re2::StringPiece(stem.data(), stem.size()),
                        initials_re_);
}

size_t Tokenizer::AddWord(size_t begin, size_t end, Scan* scan) const {
  const absl::string_view text = scan->text();
  const re2::StringPiece piece(text.data(), text.size());
  const bool after_capitalized =
      text.substr(begin, end - begin) == "I" && !scan->tokens.empty() &&
      scan->kinds.back() == Kind::kWord &&
      RE2::PartialMatch(re2::StringPiece(scan->tokens.back().text.data(),
                                         scan->tokens.back().text.size()),
                        capitalized_re_);
  // An abbreviation keeps its period, except the text's final one, which PTB
  // writes as a token of its own ("... Co ."); a hyphen may then continue
  // the word ("U.S.-based").
  bool took_period = false;
  while (
      end < text.size() && text[end] == '.' &&
      (end + 1 == text.size() || text[end + 1] != '.') &&
      IsAbbreviation(text.substr(begin, end + 1 - begin), after_capitalized) &&
      !OnlyClosersFollow(text, end + 1)) {
    ++end;
    took_period = true;
    re2::StringPiece more;
    if (end + 1 < text.size() && text[end] == '-' &&
        word_re_.Match(piece, end + 1, text.size(), RE2::ANCHOR_START, &more,
                       1)) {
      end += 1 + more.size();
      took_period = false;
    }
  }
  if (took_period) {
    scan->Add(text.substr(begin, end - begin), begin, end, Kind::kWord);
    return end;
  }
  const absl::string_view word = text.substr(begin, end - begin);
  if (IsSplitCompound(word)) {
    scan->Add(word.substr(0, 3), begin, begin + 3, Kind::kWord);
    scan->Add(word.substr(3), begin + 3, end, Kind::kWord);
    return end;
  }
  // Peel clitics from the end ("shouldn't've" has two); cuts[] descends.
  size_t cuts[3];
  int num_cuts = 0;
  size_t stem_end = end;
  while (num_cuts < 3) {
    const size_t start = CliticStart(text.substr(begin, stem_end - begin));
    if (start == 0) break;
    stem_end = begin + start;
    cuts[num_cuts++] = stem_end;
  }
  scan->Add(text.substr(begin, stem_end - begin), begin, stem_end, Kind::kWord);
  for (int k = num_cuts - 1; k >= 0; --k) {
    const size_t clitic_end = k > 0 ? cuts[k - 1] : end;
    scan->Add(NormalizeApostrophe(text.substr(cuts[k], clitic_end - cuts[k]),
                                  options_.ptb_quotes),
              cuts[k], clitic_end, Kind::kWord);
  }
  return end;
}

size_t Tokenizer::AddApostrophe(size_t pos, size_t len, Scan* scan) const {
  const absl::string_view text = scan->text();
  const size_t after = pos + len;
  // A clitic parted from its host by a period or a space ("Corp.'s", or
  // already tokenized "John 's").
  static constexpr absl::string_view kClitics[] = {"re", "ll", "ve",
                                                   "s",  "d",  "m"};
  for (absl::string_view c : kClitics) {
    if (absl::EqualsIgnoreCase(text.substr(after, c.size()), c) &&
        !IsWordCharAt(text, after + c.size())) {
      const size_t end = after + c.size();
      scan->Add(
          NormalizeApostrophe(text.substr(pos, end - pos), options_.ptb_quotes),
          pos, end, Kind::kWord);
      return end;
    }
  }
  const bool prev_opens = IsOpeningContext(PrevRune(text, pos));
  // Decades and years keep their apostrophe: '90s, '86.
  if (prev_opens && after + 2 <= text.size() &&
      absl::ascii_isdigit(text[after]) &&
      absl::ascii_isdigit(text[after + 1])) {
    size_t end = after + 2;
    if (end < text.size() && (text[end] == 's' || text[end] == 'S')) ++end;
    if (!IsWordCharAt(text, end)) {
      scan->Add(
          NormalizeApostrophe(text.substr(pos, end - pos), options_.ptb_quotes),
          pos, end, Kind::kWord);
      return end;
    }
  }
  // ’ is a closing quote by its shape; a straight one opens by position.
  if (len == 1 && prev_opens && !IsSpaceAt(text, after)) {
    scan->Add(options_.ptb_quotes ? "`" : "'", pos, after, Kind::kOpenQuote);
  } else {
    scan->Add(options_.ptb_quotes ? "'" : text.substr(pos, len), pos, after,
              Kind::kCloseQuote);
  }
  return after;
}

size_t Tokenizer::AddPunctuation(size_t pos, char32_t c, int len,
                                 Scan* scan) const {
  const absl::string_view text = scan->text();
  const absl::string_view ch = text.substr(pos, len);
  const size_t end = pos + len;
  const bool ptb_quotes = options_.ptb_quotes;
  const bool ptb_brackets = options_.ptb_brackets;
  switch (c) {
    case '"': {
      // Position decides; when spaces surround it, quotes alternate.
      const bool prev_opens = IsOpeningContext(PrevRune(text, pos));
      const bool opens = prev_opens && (!IsSpaceAt(text, end) ||
                                        scan->straight_double_quotes % 2 == 0);
      ++scan->straight_double_quotes;
      if (opens) {
        scan->Add(ptb_quotes ? "``" : ch, pos, end, Kind::kOpenQuote);
      } else {
        scan->Add(ptb_quotes ? "''" : ch, pos, end, Kind::kCloseQuote);
      }
      return end;
    }
    case '`':
      if (end < text.size() && text[end] == '`') {
        scan->Add("``", pos, end + 1, Kind::kOpenQuote);
        return end + 1;
      }
      scan->Add("`", pos, end, Kind::kOpenQuote);
      return end;
    case '\'':
      if (end < text.size() && text[end] == '\'') {
        scan->Add("''", pos, end + 1, Kind::kCloseQuote);
        return end + 1;
      }
      return AddApostrophe(pos, len, scan);
    case 0x2019:  // ’
      return AddApostrophe(pos, len, scan);
    case 0x201C:  // “
    case 0x201E:  // „
      scan->Add(ptb_quotes ? "``" : ch, pos, end, Kind::kOpenQuote);
      return end;
    case 0x201D:  // ”
      scan->Add(ptb_quotes ? "''" : ch, pos, end, Kind::kCloseQuote);
      return end;
    case 0x2018:  // ‘
      scan->Add(ptb_quotes ? "`" : ch, pos, end, Kind::kOpenQuote);
      return end;
    case 0x00AB:  // «
      scan->Add(ch, pos, end, Kind::kOpenQuote);
      return end;
    case 0x00BB:  // »
      scan->Add(ch, pos, end, Kind::kCloseQuote);
      return end;
    case '(':
      scan->Add(ptb_brackets ? "-LRB-" : ch, pos, end, Kind::kOpenBracket);
      return end;
    case '[':
      scan->Add(ptb_brackets ? "-LSB-" : ch, pos, end, Kind::kOpenBracket);
      return end;
    case '{':
      scan->Add(ptb_brackets ? "-LCB-" : ch, pos, end, Kind::kOpenBracket);
      return end;
    case ')':
      scan->Add(ptb_brackets ? "-RRB-" : ch, pos, end, Kind::kCloseBracket);
      return end;
    case ']':
      scan->Add(ptb_brackets ? "-RSB-" : ch, pos, end, Kind::kCloseBracket);
      return end;
    case '}':
      scan->Add(ptb_brackets ? "-RCB-" : ch, pos, end, Kind::kCloseBracket);
      return end;
    case '.':
    case '!':
    case '?':
      scan->Add(ch, pos, end, Kind::kTerminal);
      return end;
    default: {
      // A joiner that joins nothing is invisible, as a zero-width space is.
      if (IsZeroWidthJoiner(c)) return end;
      const size_t symbol_end = SymbolClusterEnd(text, c, end);
      scan->Add(text.substr(pos, symbol_end - pos), pos, symbol_end,
                Kind::kOther);
      return symbol_end;
    }
  }
}

void Tokenizer::TokenizeInto(Scan* scan) const {
  const absl::string_view text = scan->text();
  const re2::StringPiece piece(text.data(), text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    int len;
    const char32_t c = DecodeRune(text, pos, &len);
    if (IsSpace(c)) {
      pos += len;
      continue;
    }
    re2::StringPiece match;
    if (token_re_.Match(piece, pos, text.size(), RE2::ANCHOR_START, &match,
                        1)) {
      const size_t end = pos + match.size();
      // Telling the word alternative apart by its shape rather than by a
      // capture group lets RE2 answer from its DFA alone.
      if (IsWordCharAt(text, pos) && text[end - 1] != '$' &&
          match.find('%') == re2::StringPiece::npos) {
        pos = AddWord(pos, end, scan);
      } else {
        scan->Add(text.substr(pos, end - pos), pos, end, Kind::kOther);
        pos = end;
      }
      continue;
    }
    pos = AddPunctuation(pos, c, len, scan);
  }
}

std::vector<Token> Tokenizer::Tokenize(absl::string_view text) const {
  Scan scan(text);
  TokenizeInto(&scan);
  return std::move(scan.tokens);
}

std::vector<std::vector<Token>> Tokenizer::SplitSentences(
    absl::string_view text) const {
  Scan scan(text);
  TokenizeInto(&scan);
  std::vector<std::vector<Token>> sentences;
  const size_t n = scan.tokens.size();
  size_t begin = 0;
  size_t i = 0;
  while (i < n) {
    if (scan.kinds[i] != Kind::kTerminal) {
      ++i;
      continue;
    }
    size_t next = i + 1;
    while (next < n && (scan.kinds[next] == Kind::kTerminal ||
                        scan.kinds[next] == Kind::kCloseQuote ||
                        scan.kinds[next] == Kind::kCloseBracket)) {
      ++next;
    }
    if (next < n) {
      const Kind kind = scan.kinds[next];
      const std::string& first = scan.tokens[next].text;
      const bool starts =
          kind == Kind::kOpenQuote || kind == Kind::kOpenBracket ||
          RE2::PartialMatch(re2::StringPiece(first.data(), first.size()),
                            sentence_start_re_);
      if (starts) {
        sentences.emplace_back(
            std::make_move_iterator(scan.tokens.begin() + begin),
            std::make_move_iterator(scan.tokens.begin() + next));
        begin = next;
      }
    }
    i = next;
  }
  if (begin < n) {
    sentences.emplace_back(std::make_move_iterator(scan.tokens.begin() + begin),
                           std::make_move_iterator(scan.tokens.end()));
  }
  return sentences;
}

std::vector<absl::string_view> SplitAtSpaces(absl::string_view text) {
  std::vector<absl::string_view> words;
  size_t word_begin = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    int len;
    const bool space = IsSpace(DecodeRune(text, pos, &len));
    if (space && pos > word_begin) {
      words.push_back(text.substr(word_begin, pos - word_begin));
    }
    pos += len;
    if (space) word_begin = pos;
  }
  if (pos > word_begin) words.push_back(text.substr(word_begin));
  return words;
}

std::string SanitizeUtf8(absl::string_view text) {
  SanitizedText sanitized(text);
  return std::string(sanitized.text());
}

}  // namespace chaintag
