#include "features/feature_names.h"

#include "gtest/gtest.h"

namespace chaintag {
namespace {

TEST(FeatureNamesTest, KeepsTheFirstNameAndCountsOthers) {
  FeatureNames names;
  names.Add(7, "w[0]=the");
  names.Add(7, "w[0]=the");  // the same name again: not another
  names.Add(7, "w[0]=cat");
  names.Add(7, "w[0]=cat");  // one other, however often it comes
  names.Add(7, "w[0]=dog");
  names.Add(7, "w[0]=cat");
  names.Add(3, "pos[0]=DT");
  ASSERT_TRUE(names.Find(7).has_value());
  EXPECT_EQ(*names.Find(7), "w[0]=the");
  EXPECT_EQ(names.Others(7), 2);
  EXPECT_EQ(*names.Find(3), "pos[0]=DT");
  EXPECT_EQ(names.Others(3), 0);
  EXPECT_FALSE(names.Find(4).has_value());
  EXPECT_EQ(names.Others(4), 0);
  EXPECT_EQ(names.size(), 2);
}

TEST(FeatureNamesTest, MergeKeepsTheEarlierCollectionsNames) {
  FeatureNames first, second;
  first.Add(1, "a");
  first.Add(1, "c");
  second.Add(1, "b");
  second.Add(1, "c");
  second.Add(1, "a");
  second.Add(2, "d");
  second.Add(3, "e");
  second.Add(3, "f");
  first.Merge(second);
  EXPECT_EQ(*first.Find(1), "a");
  EXPECT_EQ(first.Others(1), 2);  // b and c, each once
  EXPECT_EQ(*first.Find(2), "d");
  EXPECT_EQ(first.Others(2), 0);
  // A bucket new to `first` comes with its other names.
  EXPECT_EQ(*first.Find(3), "e");
  EXPECT_EQ(first.Others(3), 1);
  // Names added after a merge keep the merged ones readable.
  for (uint32_t bucket = 100; bucket < 2000; ++bucket) {
    first.Add(bucket, std::string(bucket % 37, 'x'));
  }
  EXPECT_EQ(*first.Find(1), "a");
  EXPECT_EQ(*first.Find(3), "e");
  EXPECT_EQ(*first.Find(1999), std::string(1999 % 37, 'x'));
  EXPECT_EQ(first.size(), 3 + 1900);
}

TEST(FeatureNamesTest, CompactFindsEveryNameByBucket) {
  FeatureNames names;
  names.Add(900, "z");
  names.Add(5, "w[0]=the");
  names.Add(70, "");
  names.Add(5, "other");
  const CompactFeatureNames compact = names.Compact();
  EXPECT_EQ(compact.size(), 3);
  size_t length = 99;
  const char* name = compact.Find(5, &length);
  ASSERT_NE(name, nullptr);
  EXPECT_EQ(std::string(name, length), "w[0]=the");
  name = compact.Find(70, &length);
  ASSERT_NE(name, nullptr);
  EXPECT_EQ(length, 0u);
  name = compact.Find(900, &length);
  ASSERT_NE(name, nullptr);
  EXPECT_EQ(std::string(name, length), "z");
  EXPECT_EQ(compact.Find(6, &length), nullptr);
  EXPECT_EQ(compact.Find(1000, &length), nullptr);
  EXPECT_TRUE(FeatureNames().Compact().empty());
}

}  // namespace
}  // namespace chaintag
