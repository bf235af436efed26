#include "features/bigram_counts.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "corpora/sentence.h"
#include "features/temp_files_testing.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace chaintag {
namespace {

using temp_files_testing::TmpPath;
using temp_files_testing::WriteText;
using ::testing::HasSubstr;

TEST(BigramCountsTest, CountsWordsAndAdjacentPairsWithinASentence) {
  BigramCounts counts;
  counts.AddSentence(std::vector<std::string>{"a", "b", "", "a", "b"});
  counts.AddSentence(std::vector<absl::string_view>{"b", "c"});
  EXPECT_EQ(counts.words(), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(counts.counts(), (std::vector<int64_t>{2, 3, 1}));
  EXPECT_EQ(counts.num_tokens(), 6);
  // The empty word is skipped, so "b a" is adjacent; nothing spans the two
  // sentences.
  EXPECT_EQ(counts.bigrams().size(), 3u);
  EXPECT_EQ(counts.bigrams().at(uint64_t{0} << 32 | 1), 2);  // a b
  EXPECT_EQ(counts.bigrams().at(uint64_t{1} << 32 | 0), 1);  // b a
  EXPECT_EQ(counts.bigrams().at(uint64_t{1} << 32 | 2), 1);  // b c
}

// Unicode spaces separate too: a no-break space, an ideographic space.
TEST(RawTextTest, ReadsWhitespaceSeparatedWordsLineByLine) {
  const std::string path = TmpPath("raw.txt");
  WriteText(path,
            "\xef\xbb\xbfna\xc3\xafve\xc2\xa0 caf\xc3\xa9\r\n\n"
            "\t\xe6\x97\xa5\xe6\x9c\xac\xe3\x80\x80"
            "caf\xc3\xa9\n   \nlast");
  BigramCounts counts;
  ASSERT_TRUE(AddRawTextFile(path, &counts).ok());
  EXPECT_EQ(counts.words(),
            (std::vector<std::string>{"na\xc3\xafve", "caf\xc3\xa9",
                                      "\xe6\x97\xa5\xe6\x9c\xac", "last"}));
  EXPECT_EQ(counts.counts(), (std::vector<int64_t>{1, 2, 1, 1}));
  EXPECT_EQ(counts.num_tokens(), 5);
  // Two bigrams; none across lines.
  EXPECT_EQ(counts.bigrams().size(), 2u);
  EXPECT_EQ(counts.bigrams().at(uint64_t{2} << 32 | 1), 1);
}

TEST(RawTextTest, ErrorsNameTheFileAndLine) {
  BigramCounts counts;
  const std::string missing = TmpPath("no_such.txt");
  EXPECT_EQ(AddRawTextFile(missing, &counts),
            absl::NotFoundError(missing + ": cannot open"));
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"ok\nfine\nab\xff", ":3: invalid UTF-8 at byte 3"},
      {"ab \xc3", ":1: invalid UTF-8 at byte 4"},            // cut short
      {"x\n\xc0\xaf", ":2: invalid UTF-8 at byte 1"},        // overlong '/'
      {"\xed\xa0\x80", ":1: invalid UTF-8 at byte 1"},       // surrogate
      {"\xf4\x90\x80\x80", ":1: invalid UTF-8 at byte 1"},   // > U+10FFFF
      {"\xef\xbb\xbf\x80", ":1: invalid UTF-8 at byte 4"}};  // after a BOM
  for (const auto& [text, expected] : cases) {
    const std::string path = TmpPath("bad.txt");
    WriteText(path, text);
    EXPECT_EQ(AddRawTextFile(path, &counts),
              absl::InvalidArgumentError(path + expected));
  }
}

TEST(ConllWordsTest, TakesTheWordAttribute) {
  Sentence sentence;
  sentence.num_attributes = 2;
  sentence.attributes = {"EU", "NNP", "rejects", "VBZ", "EU", "NNP"};
  sentence.source = "train.txt";
  sentence.first_line = 3;
  BigramCounts counts;
  ASSERT_TRUE(AddConllWords({sentence}, 0, &counts).ok());
  EXPECT_EQ(counts.words(), (std::vector<std::string>{"EU", "rejects"}));
  EXPECT_EQ(counts.counts(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(AddConllWords({sentence}, 2, &counts),
            absl::InvalidArgumentError(
                "train.txt:3: no attribute 2 (the sentence has 2)"));
}

TEST(ConllWordsTest, ReadsTheColumnOfAFileAndSkipsDocStart) {
  const std::string path = TmpPath("conll.txt");
  WriteText(path,
            "-DOCSTART- -X- O O\n\nEU NNP I-NP I-ORG\nrejects VBZ I-VP O\n\n"
            "Peter NNP I-NP I-PER\n");
  BigramCounts counts;
  ASSERT_TRUE(AddConllFile(path, 0, &counts).ok());
  EXPECT_EQ(counts.words(),
            (std::vector<std::string>{"EU", "rejects", "Peter"}));
  BigramCounts tags;
  ASSERT_TRUE(AddConllFile(path, 1, &tags).ok());
  EXPECT_EQ(tags.words(), (std::vector<std::string>{"NNP", "VBZ"}));
  const absl::Status status = AddConllFile(path, 7, &counts);
  EXPECT_THAT(status.message(), HasSubstr(path));
  EXPECT_THAT(status.message(), HasSubstr("column 7"));
}

}  // namespace
}  // namespace chaintag
