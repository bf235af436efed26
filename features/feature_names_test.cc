#include "features/feature_names.h"

#include "gtest/gtest.h"

namespace chaintag {
namespace {

TEST(FeatureNamesTest, KeepsTheFirstNameAndCountsOthers) {
  FeatureNames names;
  names.Add(7, "w[0]=the");
  names.Add(7, "w[0]=the");  // the same name again: not another
  names.Add(7, "w[0]=cat");
  names.Add(7, "w[0]=cat");  // a run of one other counts once
  names.Add(7, "w[0]=dog");
  names.Add(3, "pos[0]=DT");
  ASSERT_NE(names.Find(7), nullptr);
  EXPECT_EQ(*names.Find(7), "w[0]=the");
  EXPECT_EQ(names.Others(7), 2);
  EXPECT_EQ(*names.Find(3), "pos[0]=DT");
  EXPECT_EQ(names.Others(3), 0);
  EXPECT_EQ(names.Find(4), nullptr);
  EXPECT_EQ(names.Others(4), 0);
  EXPECT_EQ(names.size(), 2);
}

TEST(FeatureNamesTest, MergeKeepsTheEarlierCollectionsNames) {
  FeatureNames first, second;
  first.Add(1, "a");
  second.Add(1, "b");
  second.Add(1, "c");
  second.Add(2, "d");
  first.Merge(second);
  EXPECT_EQ(*first.Find(1), "a");
  EXPECT_EQ(first.Others(1), 2);  // b, and c counted in second
  EXPECT_EQ(*first.Find(2), "d");
  EXPECT_EQ(first.Others(2), 0);
}

}  // namespace
}  // namespace chaintag
