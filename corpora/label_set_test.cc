#include "corpora/label_set.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace chaintag {
namespace {

using ::testing::ElementsAre;

TEST(LabelSetTest, IdsInInsertionOrder) {
  LabelSet labels;
  EXPECT_EQ(labels.size(), 0);
  EXPECT_EQ(labels.Add("B-NP"), 0);
  EXPECT_EQ(labels.Add("I-NP"), 1);
  EXPECT_EQ(labels.Add("B-NP"), 0);  // existing id, nothing added
  EXPECT_EQ(labels.Add("O"), 2);
  EXPECT_EQ(labels.size(), 3);
  EXPECT_EQ(labels.Name(0), "B-NP");
  EXPECT_EQ(labels.Name(2), "O");
  EXPECT_THAT(labels.names(), ElementsAre("B-NP", "I-NP", "O"));
}

TEST(LabelSetTest, UnseenLabelIsNotFound) {
  LabelSet labels;
  labels.Add("B-NP");
  labels.Add("O");
  EXPECT_EQ(labels.Find("O"), 1);
  // A test tag that training never saw (CoNLL-2000 test has I-LST).
  EXPECT_EQ(labels.Find("I-LST"), -1);
  EXPECT_EQ(labels.Find(""), -1);
  EXPECT_EQ(labels.size(), 2);  // Find never adds
}

TEST(LabelSetTest, FromNamesKeepsFirstIds) {
  const LabelSet labels(std::vector<std::string>{"a", "b", "a", "c"});
  EXPECT_EQ(labels.size(), 3);
  EXPECT_EQ(labels.Find("c"), 2);
  EXPECT_THAT(labels.names(), ElementsAre("a", "b", "c"));
}

TEST(LabelSetTest, LookupBySubstringView) {
  LabelSet labels;
  const std::string line = "word NN B-NP";
  labels.Add(absl::string_view(line).substr(8));
  EXPECT_EQ(labels.Find(absl::string_view(line).substr(8, 4)), 0);
  EXPECT_EQ(labels.Find(absl::string_view(line).substr(8, 3)), -1);
}

}  // namespace
}  // namespace chaintag
