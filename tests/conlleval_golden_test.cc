// End-to-end check of the conlleval scorer on the real CoNLL-2000 test set:
// scoring the gold column against itself must reproduce the script's counts.

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "base/corpora_testing.h"
#include "corpora/conlleval.h"
#include "gtest/gtest.h"

namespace chaintag {
namespace {

TEST(ConllevalGoldenTest, Conll2000TestAgainstItself) {
  const std::string path = CorpusFile("conll2000/test.txt");
  ASSERT_FALSE(path.empty()) << MissingCorpus("conll2000/test.txt");
  std::ifstream in(path);

  ConllevalScorer lines;
  lines.set_source(path);
  ConllevalScorer sentences;
  std::vector<std::string> tags;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) {
      ASSERT_TRUE(lines.AddLine(line).ok());
      if (!tags.empty()) sentences.AddSentence(tags, tags);
      tags.clear();
      continue;
    }
    const std::vector<absl::string_view> fields = absl::StrSplit(line, ' ');
    ASSERT_EQ(fields.size(), 3) << line;
    tags.emplace_back(fields[2]);
    absl::Status status = lines.AddLine(line + " " + tags.back());
    ASSERT_TRUE(status.ok()) << status;
  }
  if (!tags.empty()) sentences.AddSentence(tags, tags);
  lines.Finish();
  sentences.Finish();

  EXPECT_TRUE(absl::StartsWith(
      lines.Report(),
      "processed 47377 tokens with 23852 phrases; found: 23852 phrases; "
      "correct: 23852.\n"
      "accuracy: 100.00%; precision: 100.00%; recall: 100.00%; "
      "FB1: 100.00\n"))
      << lines.Report();
  EXPECT_EQ(lines.accuracy(), 100.0);
  EXPECT_EQ(lines.f1(), 100.0);
  // 11 chunk types, of which UCP only in train: the test set has 10 (with
  // LST), and each is scored perfectly.
  const auto by_type = lines.by_type();
  EXPECT_EQ(by_type.size(), 10);
  EXPECT_EQ(by_type.at("NP").gold, by_type.at("NP").correct);
  EXPECT_EQ(sentences.Report(), lines.Report());
}

}  // namespace
}  // namespace chaintag
