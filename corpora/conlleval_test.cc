#include "corpora/conlleval.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

namespace chaintag {
namespace {

// Feeds `text` line by line (as the script reads it) and finishes.
ConllevalScorer Score(absl::string_view text, ConllevalOptions options = {}) {
  ConllevalScorer scorer(std::move(options));
  if (!text.empty()) {
    if (text.back() == '\n') text.remove_suffix(1);
    for (absl::string_view line : absl::StrSplit(text, '\n')) {
      absl::Status status = scorer.AddLine(line);
      EXPECT_TRUE(status.ok()) << status;
    }
  }
  scorer.Finish();
  return scorer;
}

void ExpectCounts(const ChunkCounts& c, int64_t correct, int64_t gold,
                  int64_t found) {
  EXPECT_EQ(c.correct, correct);
  EXPECT_EQ(c.gold, gold);
  EXPECT_EQ(c.found, found);
}

// A mix of hits, a misplaced chunk, a span with the wrong type and a type
// (ADJP) that occurs only in the gold column.
constexpr absl::string_view kMixed =
    "w B-NP B-NP\n"
    "w I-NP I-NP\n"
    "w B-VP B-VP\n"
    "w O B-PP\n"
    "w B-PP O\n"
    "\n"
    "w B-ADJP B-NP\n"
    "w I-ADJP I-NP\n";

TEST(ConllevalTest, MixedCounts) {
  ConllevalScorer s = Score(kMixed);
  EXPECT_EQ(s.tokens(), 7);
  EXPECT_EQ(s.correct_tags(), 3);
  ExpectCounts(s.overall(), 2, 4, 4);
  auto by_type = s.by_type();
  ASSERT_EQ(by_type.size(), 4);
  ExpectCounts(by_type["ADJP"], 0, 1, 0);
  ExpectCounts(by_type["NP"], 1, 1, 2);
  ExpectCounts(by_type["PP"], 0, 1, 1);
  ExpectCounts(by_type["VP"], 1, 1, 1);
  EXPECT_DOUBLE_EQ(s.precision(), 50.0);
  EXPECT_DOUBLE_EQ(s.recall(), 50.0);
  EXPECT_DOUBLE_EQ(s.f1(), 50.0);
  EXPECT_DOUBLE_EQ(s.accuracy(), 300.0 / 7);
}

TEST(ConllevalTest, MixedReportText) {
  EXPECT_EQ(Score(kMixed).Report(),
            "processed 7 tokens with 4 phrases; found: 4 phrases; correct: 2.\n"
            "accuracy:  42.86%; precision:  50.00%; recall:  50.00%; "
            "FB1:  50.00\n"
            "             ADJP: precision:   0.00%; recall:   0.00%; "
            "FB1:   0.00  0\n"
            "               NP: precision:  50.00%; recall: 100.00%; "
            "FB1:  66.67  2\n"
            "               PP: precision:   0.00%; recall:   0.00%; "
            "FB1:   0.00  1\n"
            "               VP: precision: 100.00%; recall: 100.00%; "
            "FB1: 100.00  1\n");
}

TEST(ConllevalTest, MixedLatexText) {
  EXPECT_EQ(Score(kMixed).LatexReport(),
            "        & Precision &  Recall  & F$_{\\beta=1} \\\\\\hline"
            "\nADJP    &    0.00\\% &   0.00\\% &   0.00 \\\\"
            "\nNP      &   50.00\\% & 100.00\\% &  66.67 \\\\"
            "\nPP      &    0.00\\% &   0.00\\% &   0.00 \\\\"
            "\nVP      &  100.00\\% & 100.00\\% & 100.00 \\\\"
            "\\hline\n"
            "Overall &   50.00\\% &  50.00\\% &  50.00 \\\\\\hline\n");
}

TEST(ConllevalTest, NothingFoundReportText) {
  ConllevalScorer s = Score("w B-NP O\nw I-NP O\n");
  ExpectCounts(s.overall(), 0, 1, 0);
  EXPECT_EQ(s.precision(), 0.0);
  EXPECT_EQ(s.recall(), 0.0);
  EXPECT_EQ(s.f1(), 0.0);
  EXPECT_EQ(s.Report(),
            "processed 2 tokens with 1 phrases; found: 0 phrases; correct: 0.\n"
            "accuracy:   0.00%; precision:   0.00%; recall:   0.00%; "
            "FB1:   0.00\n"
            "               NP: precision:   0.00%; recall:   0.00%; "
            "FB1:   0.00  0\n");
}

TEST(ConllevalTest, EmptyInputPrintsOnlyTheCounts) {
  EXPECT_EQ(
      Score("").Report(),
      "processed 0 tokens with 0 phrases; found: 0 phrases; correct: 0.\n");
  EXPECT_EQ(
      Score("\n\n-X- O O\n").Report(),
      "processed 0 tokens with 0 phrases; found: 0 phrases; correct: 0.\n");
}

TEST(ConllevalTest, IAfterOStartsAChunk) {
  ConllevalScorer s = Score("w O O\nw I-NP I-NP\nw I-NP I-NP\nw O O\n");
  ExpectCounts(s.overall(), 1, 1, 1);
  EXPECT_EQ(s.tokens(), 4);
  EXPECT_EQ(s.correct_tags(), 4);
}

TEST(ConllevalTest, IAfterOtherTypeStartsAChunk) {
  // Gold: [NP][VP]; guess: one NP chunk then VP begins inside it by type.
  ConllevalScorer s = Score("w B-NP B-NP\nw I-VP I-VP\nw I-VP I-NP\n");
  // Gold: NP(1) VP(2-3). Guess: NP(1) VP(2) NP(3).
  ExpectCounts(s.overall(), 1, 2, 3);
  auto by_type = s.by_type();
  ExpectCounts(by_type["NP"], 1, 1, 2);
  ExpectCounts(by_type["VP"], 0, 1, 1);
}

TEST(ConllevalTest, AdjacentSameTypeChunks) {
  ConllevalScorer s = Score("w B-NP B-NP\nw B-NP I-NP\nw B-NP B-NP\n");
  // Gold: three one-token NPs; guess: NP(1-2), NP(3): only the last matches.
  ExpectCounts(s.overall(), 1, 3, 2);
  EXPECT_EQ(s.correct_tags(), 2);
}

TEST(ConllevalTest, IobesFollowsTheScriptRules) {
  // B-/E- delimit a chunk, E-E starts a new one; the script has no S rule,
  // so S-NP starts a chunk only through the type change and "S-NP S-NP" is
  // one chunk.
  ConllevalScorer s = Score(
      "w S-NP S-NP\n"
      "w B-VP B-VP\n"
      "w E-VP E-VP\n"
      "w E-VP E-VP\n"
      "w S-NP S-NP\n"
      "w S-NP O\n");
  // Gold: NP(1) VP(2-3) VP(4) NP(5-6). Guess: NP(1) VP(2-3) VP(4) NP(5).
  ExpectCounts(s.overall(), 3, 4, 4);
  auto by_type = s.by_type();
  ExpectCounts(by_type["NP"], 1, 2, 2);
  ExpectCounts(by_type["VP"], 2, 2, 2);
}

TEST(ConllevalTest, BracketTagsAreOneTokenChunks) {
  ConllevalScorer s = Score("w [-NP [-NP\nw ]-NP I-NP\nw [-NP O\n");
  // Gold: three chunks. Guess: "[" then I-NP: "[" ends and I-NP of the same
  // type after "[" starts nothing, so one chunk, the first, and it matches.
  ExpectCounts(s.overall(), 1, 3, 1);
}

TEST(ConllevalTest, RawModeMakesEveryTagAChunk) {
  ConllevalOptions options;
  options.raw = true;
  ConllevalScorer s = Score("w NP NP\nw NP NP\nw O VP\nw VP O\n", options);
  ExpectCounts(s.overall(), 2, 3, 3);
  auto by_type = s.by_type();
  ExpectCounts(by_type["NP"], 2, 2, 2);
  ExpectCounts(by_type["VP"], 0, 1, 1);
  EXPECT_EQ(s.correct_tags(), 2);
}

TEST(ConllevalTest, CustomOutsideTagInRawMode) {
  ConllevalOptions options;
  options.raw = true;
  options.outside = "NONE";
  // "NONE" is outside; so is a literal "O", as in the script.
  ConllevalScorer s = Score("w NONE O\nw PER PER\nw NONE NONE\n", options);
  ExpectCounts(s.overall(), 1, 1, 1);
  EXPECT_EQ(s.correct_tags(), 3);
  EXPECT_EQ(s.by_type().size(), 1);
}

TEST(ConllevalTest, OutsideOptionIsIgnoredWithoutRaw) {
  // Without -r the script never looks at the outside tag. "NONE" is then a
  // typeless tag: outside at first, but after a typed chunk the type change
  // starts a chunk of type "".
  ConllevalOptions options;
  options.outside = "NONE";
  ConllevalScorer a = Score("w NONE NONE\nw B-NP B-NP\nw NONE O\n", options);
  ConllevalScorer b = Score("w NONE NONE\nw B-NP B-NP\nw NONE O\n");
  ExpectCounts(a.overall(), 1, 2, 1);
  ExpectCounts(a.by_type()[""], 0, 1, 0);
  EXPECT_EQ(a.correct_tags(), 2);
  EXPECT_EQ(a.Report(), b.Report());
}

TEST(ConllevalTest, BoundariesCloseChunks) {
  // Without the boundaries the I-NP tokens would continue one chunk.
  ConllevalScorer s =
      Score("w B-NP B-NP\n-X- O O\nw I-NP I-NP\n\nw I-NP I-NP\n");
  ExpectCounts(s.overall(), 3, 3, 3);
  EXPECT_EQ(s.tokens(), 3);
  // A boundary line's own tags are ignored.
  ConllevalScorer t = Score("w B-NP B-NP\n-X- I-NP I-NP\nw I-NP I-NP\n");
  ExpectCounts(t.overall(), 2, 2, 2);
  EXPECT_EQ(t.tokens(), 2);
}

TEST(ConllevalTest, DocstartLinesCountAsTokens) {
  ConllevalScorer s = Score("-DOCSTART- -X- O O\n\nw x I-PER B-PER\n");
  EXPECT_EQ(s.tokens(), 2);
  EXPECT_EQ(s.correct_tags(), 1);
  ExpectCounts(s.overall(), 1, 1, 1);
}

TEST(ConllevalTest, RightSpanWrongType) {
  ConllevalScorer s = Score("w B-NP B-VP\nw I-NP I-VP\nw O O\n");
  ExpectCounts(s.overall(), 0, 1, 1);
  auto by_type = s.by_type();
  ExpectCounts(by_type["NP"], 0, 1, 0);
  ExpectCounts(by_type["VP"], 0, 0, 1);
}

TEST(ConllevalTest, TypelessChunksAreListedTwiceLikeTheScript) {
  // Typeless B tags form chunks of type ""; the script's de-duplication of
  // sorted type names skips Perl-false names, so "" appears twice.
  ConllevalScorer s = Score("w B B\nw B O\n");
  ExpectCounts(s.overall(), 1, 2, 1);
  const std::string line =
      "                 : precision: 100.00%; recall:  50.00%; "
      "FB1:  66.67  1\n";
  EXPECT_EQ(s.Report(),
            "processed 2 tokens with 2 phrases; found: 1 phrases; correct: 1.\n"
            "accuracy:  50.00%; precision: 100.00%; recall:  50.00%; "
            "FB1:  66.67\n" +
                line + line);
}

TEST(ConllevalTest, TypeZeroIsNoType) {
  // Perl truthiness: "B-0" has type "", like "B".
  ConllevalScorer s = Score("w B-0 B\n");
  ExpectCounts(s.overall(), 1, 1, 1);
  EXPECT_EQ(s.correct_tags(), 1);
  EXPECT_EQ(s.by_type().count(""), 1);
}

TEST(ConllevalTest, StreamingEqualsSentences) {
  ConllevalScorer lines = Score(
      "a x B-NP B-NP\nb x I-NP B-NP\nc x O B-VP\n\n"
      "d x B-PP B-PP\ne x B-NP I-NP\nf x I-NP I-NP\n\n");
  ConllevalScorer sentences;
  sentences.AddSentence({"B-NP", "I-NP", "O"}, {"B-NP", "B-NP", "B-VP"});
  sentences.AddSentence({"B-PP", "B-NP", "I-NP"}, {"B-PP", "I-NP", "I-NP"});
  sentences.Finish();
  EXPECT_EQ(sentences.tokens(), 6);
  EXPECT_EQ(sentences.correct_tags(), lines.correct_tags());
  ExpectCounts(sentences.overall(), lines.overall().correct,
               lines.overall().gold, lines.overall().found);
  ExpectCounts(sentences.overall(), 2, 3, 5);
  EXPECT_EQ(sentences.Report(), lines.Report());
}

TEST(ConllevalTest, OpenChunkIsCountedByFinishOnce) {
  ConllevalScorer s;
  ASSERT_TRUE(s.AddLine("w B-NP B-NP").ok());
  ASSERT_TRUE(s.AddLine("w I-NP I-NP").ok());
  ExpectCounts(s.overall(), 0, 1, 1);
  s.Finish();
  s.Finish();
  ExpectCounts(s.overall(), 1, 1, 1);
}

TEST(ConllevalTest, FieldCountMismatchNamesTheLine) {
  ConllevalScorer s;
  s.set_source("dev.txt");
  EXPECT_TRUE(s.AddLine("a b B-NP B-NP").ok());
  EXPECT_TRUE(s.AddLine("").ok());  // empty lines are exempt
  EXPECT_TRUE(s.AddLine("a b O O\r").ok());
  absl::Status status = s.AddLine("a b c O O");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "dev.txt:4: unexpected number of fields: 5 (4)");
  EXPECT_EQ(s.tokens(), 2);  // the bad line left no trace
}

TEST(ConllevalTest, FirstLineEmptyDoesNotFixTheFieldCount) {
  ConllevalScorer s;
  EXPECT_TRUE(s.AddLine("").ok());
  EXPECT_TRUE(s.AddLine("w B-NP B-NP").ok());
  absl::Status status = s.AddLine("w x O O");
  EXPECT_EQ(status.message(), "stdin:3: unexpected number of fields: 4 (3)");
}

TEST(ConllevalTest, SingleFieldLineIsAnError) {
  ConllevalScorer s;
  absl::Status status = s.AddLine("word");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "stdin:1: expected at least 2 fields, got 1");
}

TEST(ConllevalTest, Delimiters) {
  // Default: runs of blanks.
  ExpectCounts(Score("  w \t B-NP  B-NP \n").overall(), 1, 1, 1);
  // A single-space delimiter is exact, as the script's default: the double
  // space makes an empty field, so the second line has a different count.
  ConllevalOptions space;
  space.delimiter = " ";
  ConllevalScorer s(space);
  EXPECT_TRUE(s.AddLine("w B-NP B-NP").ok());
  EXPECT_FALSE(s.AddLine("w  B-NP B-NP").ok());
  // A regular expression, as in split(/\t/): spaces stay inside fields.
  ConllevalOptions tab;
  tab.delimiter = "\\t";
  ConllevalScorer t = Score("a b\tB-NP\tB-NP\nc d\tI-NP\tO\n", tab);
  ExpectCounts(t.overall(), 0, 1, 1);
  // Literal delimiter; trailing empty fields are dropped.
  ConllevalOptions comma;
  comma.delimiter = ",";
  ExpectCounts(Score("w,B-NP,B-NP,,\nw,O,O\n", comma).overall(), 1, 1, 1);
}

TEST(ConllevalTest, InvalidDelimiterPattern) {
  ConllevalOptions options;
  options.delimiter = "(";
  ConllevalScorer s(options);
  absl::Status status = s.AddLine("w B-NP B-NP");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(status.message(), "stdin:1: invalid delimiter"))
      << status;
  // Told before any line, without one.
  EXPECT_EQ(s.CheckOptions().message(),
            "invalid delimiter pattern \"(\": missing ): (");
  for (const char* delimiter : {"", ",", "[,;]"}) {
    options.delimiter = delimiter;
    EXPECT_TRUE(ConllevalScorer(options).CheckOptions().ok()) << delimiter;
  }
}

}  // namespace
}  // namespace chaintag
