#include "corpora/tokenizer.h"

#include <cstdint>
#include <memory>
#include <ostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/string_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace chaintag {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr absl::string_view kFffd = "\xEF\xBF\xBD";

std::unique_ptr<Tokenizer> MakeTokenizer(const TokenizerOptions& options = {}) {
  auto tokenizer = Tokenizer::Create(options);
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status();
  return *std::move(tokenizer);
}

std::string Join(const std::vector<Token>& tokens) {
  return absl::StrJoin(tokens, " ", [](std::string* out, const Token& t) {
    out->append(t.text);
  });
}

std::vector<std::string> JoinSentences(
    const std::vector<std::vector<Token>>& sentences) {
  std::vector<std::string> out;
  for (const auto& sentence : sentences) out.push_back(Join(sentence));
  return out;
}

// What a token may legitimately read when its text is not its input bytes:
// the PTB forms of quotes and brackets, and ’ normalized in clitics.
bool IsFaithful(absl::string_view text, absl::string_view original) {
  if (text == original) return true;
  const std::string normalized =
      absl::StrReplaceAll(original, {{"\xE2\x80\x99", "'"}});
  if (text == normalized) return true;
  static const auto* const kPtbForms =
      new std::vector<std::pair<absl::string_view, absl::string_view>>{
          {"``", "\""},
          {"''", "\""},
          {"``", "\xE2\x80\x9C"},  // “
          {"``", "\xE2\x80\x9E"},  // „
          {"''", "\xE2\x80\x9D"},  // ”
          {"`", "'"},
          {"`", "\xE2\x80\x98"},  // ‘
          {"'", "\xE2\x80\x99"},  // ’
          {"-LRB-", "("},
          {"-RRB-", ")"},
          {"-LSB-", "["},
          {"-RSB-", "]"},
          {"-LCB-", "{"},
          {"-RCB-", "}"}};
  for (const auto& [ptb, raw] : *kPtbForms) {
    if (text == ptb && original == raw) return true;
  }
  return false;
}

// Offsets are in order, inside the input, and cover what the token says.
void ExpectOffsetsFaithful(absl::string_view input,
                           const std::vector<Token>& tokens) {
  int64_t previous_end = 0;
  for (const Token& t : tokens) {
    ASSERT_LE(previous_end, t.begin) << t.text;
    ASSERT_LT(t.begin, t.end) << t.text;
    ASSERT_LE(t.end, static_cast<int64_t>(input.size())) << t.text;
    EXPECT_TRUE(IsFaithful(t.text, input.substr(t.begin, t.end - t.begin)))
        << "token '" << t.text << "' covers '"
        << input.substr(t.begin, t.end - t.begin) << "'";
    previous_end = t.end;
  }
}

struct Case {
  const char* input;
  const char* expected;  // tokens joined by single spaces
};

// Hand-checked against the conventions of CoNLL-2000's first column.
constexpr Case kCases[] = {
    // The anchors: CoNLL-2000 test sentences, from their untokenized form.
    {"Rockwell International Corp. said it signed a tentative agreement.",
     "Rockwell International Corp. said it signed a tentative agreement ."},
    {"Rockwell International Corp.'s Tulsa unit said it signed a tentative "
     "agreement extending its contract with Boeing Co. to provide structural "
     "parts for Boeing's 747 jetliners.",
     "Rockwell International Corp. 's Tulsa unit said it signed a tentative "
     "agreement extending its contract with Boeing Co. to provide structural "
     "parts for Boeing 's 747 jetliners ."},
    {"Rockwell, based in El Segundo, Calif., is an aerospace, electronics, "
     "automotive and graphics concern.",
     "Rockwell , based in El Segundo , Calif. , is an aerospace , electronics "
     ", automotive and graphics concern ."},
    {"SHEARSON LEHMAN HUTTON Inc.", "SHEARSON LEHMAN HUTTON Inc ."},
    {"Shearson is about 60%-held by American Express Co.",
     "Shearson is about 60%-held by American Express Co ."},
    {"Thomas E. Meador, 42 years old, was named president.",
     "Thomas E. Meador , 42 years old , was named president ."},
    // Clitics.
    {"I don't know", "I do n't know"},
    {"I can't go", "I ca n't go"},
    {"We won't stop", "We wo n't stop"},
    {"John's car", "John 's car"},
    {"it's", "it 's"},
    {"They're here, we'll see, I've been, he'd go, I'm done",
     "They 're here , we 'll see , I 've been , he 'd go , I 'm done"},
    {"DON'T SHOUT", "DO N'T SHOUT"},
    {"I'd've gone", "I 'd 've gone"},
    {"You cannot go, gonna", "You can not go , gon na"},
    {"the players' union", "the players ' union"},
    {"O'Neill's team", "O'Neill 's team"},
    {"don\xE2\x80\x99t", "do n't"},
    {"John 's car was n't", "John 's car was n't"},  // already tokenized
    // Quotes.
    {"He said \"yes\" to me", "He said `` yes '' to me"},
    {"\"Hello,\" she said", "`` Hello , '' she said"},
    {"(\xE2\x80\x9C"
     "curly\xE2\x80\x9D quotes)",
     "-LRB- `` curly '' quotes -RRB-"},
    {"\xE2\x80\x98single\xE2\x80\x99 quotes", "` single ' quotes"},
    {"'Hmm,' she said", "` Hmm , ' she said"},
    {"``Already'' tokenized", "`` Already '' tokenized"},
    {"He said \"Stop.\"", "He said `` Stop . ''"},
    {"a \" b \" c", "a `` b '' c"},
    {"in the '90s", "in the '90s"},
    // Numbers, currency, percent.
    {"It cost $5.", "It cost $ 5 ."},
    {"Up 5% today", "Up 5 % today"},
    {"$1,000.50 each", "$ 1,000.50 each"},
    {"3.5 and -2 and .5", "3.5 and -2 and .5"},
    {"US$5 and C$10", "US$ 5 and C$ 10"},
    {"Is it 5:30?", "Is it 5:30 ?"},
    {"the 1980s", "the 1980s"},
    {"#1 & co", "# 1 & co"},
    // Hyphens, dashes, ellipses, other punctuation.
    {"a tentative-agreement", "a tentative-agreement"},
    {"200 additional so-called shipsets", "200 additional so-called shipsets"},
    {"enough--at least", "enough -- at least"},
    {"Wait... what", "Wait ... what"},
    {"If All Else Fails....", "If All Else Fails ... ."},
    {"Really?!", "Really ? !"},
    {"Hi; there: yes!", "Hi ; there : yes !"},
    {"said,it", "said , it"},
    {"[a] {b}", "-LSB- a -RSB- -LCB- b -RCB-"},
    {"AT&T and S&P and and/or", "AT&T and S&P and and/or"},
    // Abbreviations.
    {"Mr. Smith met Dr. Jones", "Mr. Smith met Dr. Jones"},
    {"the U.S. Army", "the U.S. Army"},
    {"He lives in the U.S.", "He lives in the U.S ."},
    {"WEIRTON STEEL CORP. said", "WEIRTON STEEL CORP. said"},
    {"led by Malcolm I. Glazer", "led by Malcolm I. Glazer"},
    {"so do I. Really", "so do I . Really"},
    {"a U.S.-based company", "a U.S.-based company"},
    {"non-U.S. banks", "non-U.S. banks"},
    {"at 5 p.m., ok", "at 5 p.m. , ok"},
    {"(Apple Inc.)", "-LRB- Apple Inc . -RRB-"},
    {"Ph.D. students vs. others", "Ph.D. students vs. others"},
    {"the end. Then", "the end . Then"},
    {"(He left.)", "-LRB- He left . -RRB-"},
    // Whitespace and non-ASCII.
    {"Hello  \t world\r\n", "Hello world"},
    {"caf\xC3\xA9 au lait", "caf\xC3\xA9 au lait"},
    {"a\xC2\xA0"
     "b\xE3\x80\x80"
     "c",
     "a b c"},  // no-break, ideographic space
    // Emoji, flags and zero-width joiners: a joined family, a flag, a
    // variation selector, a skin tone, two flags, ZWNJ inside a Persian word,
    // joiners that join nothing.
    {"I love \xF0\x9F\x91\xA8\xE2\x80\x8D\xF0\x9F\x91\xA9\xE2\x80\x8D"
     "\xF0\x9F\x91\xA7 and \xF0\x9F\x87\xBA\xF0\x9F\x87\xB8 flags",
     "I love \xF0\x9F\x91\xA8\xE2\x80\x8D\xF0\x9F\x91\xA9\xE2\x80\x8D"
     "\xF0\x9F\x91\xA7 and \xF0\x9F\x87\xBA\xF0\x9F\x87\xB8 flags"},
    {"\xE2\x9D\xA4\xEF\xB8\x8F!\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBDok",
     "\xE2\x9D\xA4\xEF\xB8\x8F ! \xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD ok"},
    {"\xF0\x9F\x87\xBA\xF0\x9F\x87\xB8\xF0\x9F\x87\xAB\xF0\x9F\x87\xB7",
     "\xF0\x9F\x87\xBA\xF0\x9F\x87\xB8 \xF0\x9F\x87\xAB\xF0\x9F\x87\xB7"},
    {"\xD9\x85\xDB\x8C\xE2\x80\x8C\xD8\xAE\xD9\x88\xD8\xA7\xD9\x87\xD9\x85 x",
     "\xD9\x85\xDB\x8C\xE2\x80\x8C\xD8\xAE\xD9\x88\xD8\xA7\xD9\x87\xD9\x85 x"},
    {"a \xE2\x80\x8D b\xE2\x80\x8D", "a b"},
};

// Failures name the input instead of dumping the struct's bytes.
void PrintTo(const Case& c, std::ostream* os) { *os << '"' << c.input << '"'; }

class TokenizerCaseTest : public ::testing::TestWithParam<Case> {
 protected:
  // Compiling the patterns once keeps the table fast.
  static void SetUpTestSuite() { tokenizer_ = MakeTokenizer().release(); }
  static void TearDownTestSuite() {
    delete tokenizer_;
    tokenizer_ = nullptr;
  }
  static const Tokenizer* tokenizer_;
};

const Tokenizer* TokenizerCaseTest::tokenizer_ = nullptr;

TEST_P(TokenizerCaseTest, MatchesHandCheckedTokens) {
  const Tokenizer* tokenizer = tokenizer_;
  const Case& c = GetParam();
  const std::vector<Token> tokens = tokenizer->Tokenize(c.input);
  EXPECT_EQ(Join(tokens), c.expected) << "input: " << c.input;
  ExpectOffsetsFaithful(c.input, tokens);
}

INSTANTIATE_TEST_SUITE_P(Table, TokenizerCaseTest, ::testing::ValuesIn(kCases));

TEST(TokenizerTest, TableIsLargeEnough) {
  EXPECT_GE(sizeof(kCases) / sizeof(kCases[0]), 45u);
}

TEST(TokenizerTest, PlainTokensAreTheirInputBytes) {
  const auto tokenizer = MakeTokenizer();
  const std::string text =
      "Rockwell International Corp.'s Tulsa unit said it signed a tentative "
      "agreement, worth $1,000.50 (about 5%), with Boeing Co.";
  const std::vector<Token> tokens = tokenizer->Tokenize(text);
  ASSERT_FALSE(tokens.empty());
  for (const Token& t : tokens) {
    if (t.text == "-LRB-" || t.text == "-RRB-") continue;
    EXPECT_EQ(text.substr(t.begin, t.end - t.begin), t.text);
  }
  EXPECT_EQ(tokens.back(), (Token{".", static_cast<int64_t>(text.size()) - 1,
                                  static_cast<int64_t>(text.size())}));
}

TEST(TokenizerTest, ConvertedTokensCoverTheirOriginalBytes) {
  const auto tokenizer = MakeTokenizer();
  //                    0         1          2
  //                    0123456789012345678901 2 3 4...
  const std::string text = "He said \"yes\" (don't) \xE2\x80\x9Cok\xE2\x80\x9D";
  EXPECT_THAT(tokenizer->Tokenize(text),
              ElementsAre(Token{"He", 0, 2}, Token{"said", 3, 7},
                          Token{"``", 8, 9}, Token{"yes", 9, 12},
                          Token{"''", 12, 13}, Token{"-LRB-", 14, 15},
                          Token{"do", 15, 17}, Token{"n't", 17, 20},
                          Token{"-RRB-", 20, 21}, Token{"``", 22, 25},
                          Token{"ok", 25, 27}, Token{"''", 27, 30}));
}

TEST(TokenizerTest, CurlyApostropheCliticCoversThreeBytes) {
  const auto tokenizer = MakeTokenizer();
  EXPECT_THAT(tokenizer->Tokenize("It\xE2\x80\x99s"),
              ElementsAre(Token{"It", 0, 2}, Token{"'s", 2, 6}));
}

TEST(TokenizerTest, OptionsKeepTheInputsQuotesAndBrackets) {
  TokenizerOptions options;
  options.ptb_quotes = false;
  options.ptb_brackets = false;
  const auto tokenizer = MakeTokenizer(options);
  const std::string text = "\"Hi\" (x) don\xE2\x80\x99t 'a'";
  const std::vector<Token> tokens = tokenizer->Tokenize(text);
  EXPECT_EQ(Join(tokens), "\" Hi \" ( x ) do n\xE2\x80\x99t ' a '");
  for (const Token& t : tokens) {
    EXPECT_EQ(text.substr(t.begin, t.end - t.begin), t.text);
  }
}

TEST(TokenizerTest, EmptyAndWhitespaceInputGiveNoTokens) {
  const auto tokenizer = MakeTokenizer();
  for (const char* text :
       {"", " ", "\t\n\r\f\v  ", "\xC2\xA0\xE2\x80\x83\xE3\x80\x80"}) {
    EXPECT_THAT(tokenizer->Tokenize(text), IsEmpty()) << text;
    EXPECT_THAT(tokenizer->SplitSentences(text), IsEmpty()) << text;
  }
}

TEST(SplitAtSpacesTest, SplitsAtWhatTheTokenizerTakesForSpace) {
  using Words = std::vector<absl::string_view>;
  EXPECT_EQ(SplitAtSpaces(""), Words{});
  EXPECT_EQ(SplitAtSpaces(" \t\xC2\xA0 "), Words{});
  EXPECT_EQ(SplitAtSpaces("a\xC2\xA0"
                          "b\xE3\x80\x80"
                          "c\xE2\x80\x8B"
                          "d  e\xEF\xBB\xBF"),
            (Words{"a", "b", "c", "d", "e"}));
  // Not spaces: a joiner, a letter outside ASCII.
  EXPECT_EQ(SplitAtSpaces("x\xE2\x80\x8Dy caf\xC3\xA9"),
            (Words{"x\xE2\x80\x8Dy", "caf\xC3\xA9"}));
}

TEST(SanitizeUtf8Test, ReplacesEachMaximalIllFormedSubpart) {
  const std::string r(kFffd);
  // Valid text, including 2-, 3- and 4-byte characters, is unchanged.
  const std::string valid = "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80z";
  EXPECT_EQ(SanitizeUtf8(valid), valid);
  EXPECT_EQ(SanitizeUtf8(""), "");
  // Truncated multibyte sequences: one replacement for the whole prefix.
  EXPECT_EQ(SanitizeUtf8("caf\xC3"), "caf" + r);
  EXPECT_EQ(SanitizeUtf8("x\xE2\x82y"), "x" + r + "y");
  EXPECT_EQ(SanitizeUtf8("\xF0\x9F\x98"), r);
  // Lone continuation bytes: one each.
  EXPECT_EQ(SanitizeUtf8("\x80\xBF"), r + r);
  // Overlong forms: the lead byte cannot start them, so every byte is bad.
  EXPECT_EQ(SanitizeUtf8("\xC0\xAF"), r + r);
  EXPECT_EQ(SanitizeUtf8("\xE0\x80\xAF"), r + r + r);
  // Surrogates and code points past U+10FFFF.
  EXPECT_EQ(SanitizeUtf8("\xED\xA0\x80"), r + r + r);
  EXPECT_EQ(SanitizeUtf8("\xF4\x90\x80\x80"), r + r + r + r);
  // Bytes that never occur in UTF-8.
  EXPECT_EQ(SanitizeUtf8("\xFF\xFE\xF5"), r + r + r);
}

TEST(TokenizerTest, InvalidUtf8BecomesReplacementWithOriginalOffsets) {
  const auto tokenizer = MakeTokenizer();
  const std::string r(kFffd);
  // Latin-1 é inside a word keeps the word whole.
  EXPECT_THAT(tokenizer->Tokenize("caf\xE9 au"),
              ElementsAre(Token{"caf" + r, 0, 4}, Token{"au", 5, 7}));
  // Truncated sequence at the end of the text.
  EXPECT_THAT(tokenizer->Tokenize("ok \xE2\x82"),
              ElementsAre(Token{"ok", 0, 2}, Token{r, 3, 5}));
  // Lone continuation bytes, overlong form and 0xFF between words.
  EXPECT_THAT(tokenizer->Tokenize("a\x80\x80 \xC0\xAF b\xFF"),
              ElementsAre(Token{"a" + r + r, 0, 3}, Token{r + r, 4, 6},
                          Token{"b" + r, 7, 9}));
  // A replacement after a period: offsets still land on the original bytes.
  const std::string text = "Mr. \xFFSmith left.";
  const std::vector<Token> tokens = tokenizer->Tokenize(text);
  EXPECT_EQ(Join(tokens), "Mr. " + r + "Smith left .");
  EXPECT_EQ(tokens[1].begin, 4);
  EXPECT_EQ(tokens[1].end, 10);
  EXPECT_EQ(tokens.back().begin, static_cast<int64_t>(text.size()) - 1);
}

TEST(TokenizerTest, ArbitraryBytesNeverCrashAndGiveValidTokens) {
  const auto tokenizer = MakeTokenizer();
  std::mt19937 rng(20240611);
  // Bytes weighted towards the interesting ones: UTF-8 lead and continuation
  // bytes, quotes, periods, apostrophes and spaces.
  const std::string alphabet =
      "aZ9.'\"`-$%, ()\n\x80\xBF\xC0\xC3\xE2\x80\x99\xED\xF0\xF4\xFF";
  std::uniform_int_distribution<int> length(0, 40);
  std::uniform_int_distribution<int> any_byte(0, 255);
  std::uniform_int_distribution<size_t> pick(0, alphabet.size() - 1);
  for (int trial = 0; trial < 2000; ++trial) {
    std::string text;
    const int n = length(rng);
    for (int i = 0; i < n; ++i) {
      text.push_back(trial % 2 == 0 ? static_cast<char>(any_byte(rng))
                                    : alphabet[pick(rng)]);
    }
    const std::vector<Token> tokens = tokenizer->Tokenize(text);
    int64_t previous_end = 0;
    for (const Token& t : tokens) {
      ASSERT_EQ(SanitizeUtf8(t.text), t.text);
      ASSERT_LE(previous_end, t.begin);
      ASSERT_LT(t.begin, t.end);
      ASSERT_LE(t.end, static_cast<int64_t>(text.size()));
      previous_end = t.end;
    }
    std::vector<Token> flattened;
    for (const auto& s : tokenizer->SplitSentences(text)) {
      ASSERT_FALSE(s.empty());
      flattened.insert(flattened.end(), s.begin(), s.end());
    }
    ASSERT_EQ(flattened, tokens);
  }
}

TEST(SplitSentencesTest, SeveralSentences) {
  const auto tokenizer = MakeTokenizer();
  EXPECT_THAT(
      JoinSentences(tokenizer->SplitSentences(
          "Mr. Smith went to Washington. He met Sen. Jones at 3 p.m. on "
          "Tuesday.\nIt rained.")),
      ElementsAre("Mr. Smith went to Washington .",
                  "He met Sen. Jones at 3 p.m. on Tuesday .", "It rained ."));
}

TEST(SplitSentencesTest, AbbreviationsDoNotEndSentences) {
  const auto tokenizer = MakeTokenizer();
  EXPECT_THAT(
      JoinSentences(tokenizer->SplitSentences(
          "Rockwell International Corp. said it signed a tentative "
          "agreement. Boeing Co. agreed with Mr. Pope in the U.S. Army.")),
      ElementsAre("Rockwell International Corp. said it signed a tentative "
                  "agreement .",
                  "Boeing Co. agreed with Mr. Pope in the U.S. Army ."));
  // The documented price: a sentence that really ends in an abbreviation
  // inside a paragraph runs on into the next.
  EXPECT_THAT(JoinSentences(tokenizer->SplitSentences(
                  "He works for Acme Corp. Shares fell.")),
              ElementsAre("He works for Acme Corp. Shares fell ."));
  // At the end of the paragraph the period is split off.
  EXPECT_THAT(
      JoinSentences(tokenizer->SplitSentences("It fell. He moved to the U.S.")),
      ElementsAre("It fell .", "He moved to the U.S ."));
}

TEST(SplitSentencesTest, QuestionAndExclamationMarks) {
  const auto tokenizer = MakeTokenizer();
  EXPECT_THAT(
      JoinSentences(tokenizer->SplitSentences(
          "Is it true? Yes! Really?! 5 people came.")),
      ElementsAre("Is it true ?", "Yes !", "Really ? !", "5 people came ."));
}

TEST(SplitSentencesTest, ClosingQuotesAndBracketsStayWithTheSentence) {
  const auto tokenizer = MakeTokenizer();
  EXPECT_THAT(
      JoinSentences(tokenizer->SplitSentences(
          "He said \"Stop.\" Then he left. (She stayed.) "
          "\"Why?\" she asked.")),
      ElementsAre("He said `` Stop . ''", "Then he left .",
                  "-LRB- She stayed . -RRB-", "`` Why ? '' she asked ."));
}

TEST(SplitSentencesTest, NoSplitBeforeLowercaseOrInsideNumbers) {
  const auto tokenizer = MakeTokenizer();
  EXPECT_THAT(JoinSentences(tokenizer->SplitSentences(
                  "\"Why?\" he asked. It rose 3.5 points... and fell.")),
              ElementsAre("`` Why ? '' he asked .",
                          "It rose 3.5 points ... and fell ."));
}

TEST(SplitSentencesTest, OffsetsAreRelativeToTheBlock) {
  const auto tokenizer = MakeTokenizer();
  const std::string text = "  It rained.\n\nWe \"stayed\" in.  ";
  const auto sentences = tokenizer->SplitSentences(text);
  ASSERT_EQ(sentences.size(), 2u);
  EXPECT_EQ(sentences[1].front(), (Token{"We", 14, 16}));
  EXPECT_EQ(sentences[1].back(), (Token{".", 28, 29}));
  for (const auto& sentence : sentences) {
    ExpectOffsetsFaithful(text, sentence);
  }
}

TEST(SplitSentencesTest, SentencesConcatenateToTokenize) {
  const auto tokenizer = MakeTokenizer();
  for (const Case& c : kCases) {
    std::vector<Token> flattened;
    for (const auto& s : tokenizer->SplitSentences(c.input)) {
      flattened.insert(flattened.end(), s.begin(), s.end());
    }
    EXPECT_EQ(flattened, tokenizer->Tokenize(c.input)) << c.input;
  }
}

TEST(TokenizerTest, ConcurrentUseGivesTheSameTokens) {
  const auto tokenizer = MakeTokenizer();
  const std::string text =
      "Rockwell International Corp.'s Tulsa unit said \"it can't\" sign. "
      "Mr. Wolf owns 75,000 UAL shares.";
  const std::vector<std::vector<Token>> expected =
      tokenizer->SplitSentences(text);
  std::vector<std::vector<std::vector<Token>>> results(4);
  std::vector<std::thread> threads;
  for (auto& result : results) {
    threads.emplace_back([&tokenizer, &text, &result] {
      for (int i = 0; i < 200; ++i) result = tokenizer->SplitSentences(text);
    });
  }
  for (auto& thread : threads) thread.join();
  for (const auto& result : results) EXPECT_EQ(result, expected);
}

}  // namespace
}  // namespace chaintag
