#include "features/document_features.h"

#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "corpora/sentence.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace chaintag {
namespace {

using ::testing::ElementsAre;

// A sentence of words (attribute 0) and a second attribute "x".
Sentence MakeSentence(const std::string& words) {
  Sentence sentence;
  sentence.num_attributes = 2;
  for (absl::string_view word : absl::StrSplit(words, ' ')) {
    sentence.attributes.emplace_back(word);
    sentence.attributes.emplace_back("x");
  }
  return sentence;
}

std::vector<std::string> Split(const std::string& text) {
  return absl::StrSplit(text, ' ');
}

// Token t's four document attributes.
std::vector<std::string> Attributes(const Sentence& s, int t) {
  std::vector<std::string> values;
  for (int a = 2; a < 2 + kNumDocumentAttributes; ++a) {
    values.push_back(s.attribute(t, a));
  }
  return values;
}

TEST(DocumentFeaturesTest, HandComputedDocument) {
  std::vector<Sentence> document = {
      MakeSentence("Leicester City beat Leeds"),
      MakeSentence("Leicester scored at leicester"),
      MakeSentence("Leicester City fans")};
  const std::vector<std::vector<std::string>> labels = {
      Split("B-ORG I-ORG O B-ORG"), Split("B-LOC O O O"),
      Split("B-ORG I-ORG O")};
  ASSERT_TRUE(
      AppendDocumentAttributes(0, labels, absl::MakeSpan(document)).ok());
  for (const Sentence& s : document) ASSERT_EQ(s.num_attributes, 6);
  // The own attributes stay in place.
  EXPECT_EQ(document[1].attribute(3, 0), "leicester");
  EXPECT_EQ(document[1].attribute(3, 1), "x");
  // "Leicester" in sentence 0: the other exact occurrences are B-LOC and
  // B-ORG (a tie, to the smaller "B-LOC"); lowercased, "leicester" (O)
  // joins: B-LOC, B-ORG, O each once -> "B-LOC". Its entity "Leicester
  // City" is mentioned once more as ORG. The longest other entity with
  // "Leicester" is sentence 2's "Leicester City", where it comes first.
  EXPECT_THAT(Attributes(document[0], 0),
              ElementsAre("B-LOC", "B-LOC", "ORG", "B-ORG"));
  // "beat": no other occurrence, in no entity, in no entity elsewhere.
  EXPECT_THAT(Attributes(document[0], 2), ElementsAre("-", "-", "-", "-"));
  // "Leicester" in sentence 1: other exact occurrences are B-ORG twice;
  // lowercased adds the O of "leicester": B-ORG 2, O 1. Its entity
  // "Leicester" (LOC) has no other mention of that surface string.
  EXPECT_THAT(Attributes(document[1], 0),
              ElementsAre("B-ORG", "B-ORG", "-", "B-ORG"));
  // "leicester": no other exact occurrence; lowercased: B-ORG 2, B-LOC 1;
  // in no entity; no entity contains the word as written.
  EXPECT_THAT(Attributes(document[1], 3), ElementsAre("-", "B-ORG", "-", "-"));
  // "City" in sentence 2: the other "City" is I-ORG, in sentence 0's
  // "Leicester City", not first.
  EXPECT_THAT(Attributes(document[2], 1),
              ElementsAre("I-ORG", "I-ORG", "ORG", "I-ORG"));
}

TEST(DocumentFeaturesTest, ASentenceElsewhereChangesTheFeatures) {
  const std::vector<std::string> words = {"Smith said", "Smith left",
                                          "Paris is big"};
  std::vector<std::vector<std::string>> labels = {
      Split("B-PER O"), Split("B-PER O"), Split("B-LOC O O")};
  auto attributes_of_first =
      [&](const std::vector<std::vector<std::string>>& labels) {
        std::vector<Sentence> document;
        for (const std::string& w : words) document.push_back(MakeSentence(w));
        EXPECT_TRUE(
            AppendDocumentAttributes(0, labels, absl::MakeSpan(document)).ok());
        return Attributes(document[0], 0);
      };
  EXPECT_THAT(attributes_of_first(labels),
              ElementsAre("B-PER", "B-PER", "PER", "B-PER"));
  // Only sentence 1's labels change: sentence 0's attributes follow.
  labels[1] = Split("B-ORG O");
  EXPECT_THAT(attributes_of_first(labels),
              ElementsAre("B-ORG", "B-ORG", "ORG", "B-ORG"));
  // A sentence of another document does not count: alone, no evidence.
  std::vector<Sentence> alone = {MakeSentence("Smith said")};
  ASSERT_TRUE(
      AppendDocumentAttributes(0, {Split("B-PER O")}, absl::MakeSpan(alone))
          .ok());
  EXPECT_THAT(Attributes(alone[0], 0), ElementsAre("-", "-", "-", "-"));
}

TEST(DocumentFeaturesTest, MismatchesAreRefusedAndChangeNothing) {
  std::vector<Sentence> document = {MakeSentence("a b")};
  EXPECT_FALSE(
      AppendDocumentAttributes(0, {Split("O")}, absl::MakeSpan(document)).ok());
  EXPECT_FALSE(AppendDocumentAttributes(0, {}, absl::MakeSpan(document)).ok());
  EXPECT_FALSE(
      AppendDocumentAttributes(2, {Split("O O")}, absl::MakeSpan(document))
          .ok());
  EXPECT_EQ(document[0].num_attributes, 2);
  EXPECT_EQ(document[0].attributes.size(), 4u);
}

}  // namespace
}  // namespace chaintag
