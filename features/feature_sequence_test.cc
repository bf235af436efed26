#include "features/feature_sequence.h"

#include "gtest/gtest.h"

namespace chaintag {
namespace {

TEST(FeatureSequenceTest, StartsEmptyAndClearKeepsCapacity) {
  FeatureSequence seq;
  EXPECT_EQ(seq.size(), 0);
  seq.buckets = {1, 5, 2};
  seq.values = {1.0f, 2.0f, 3.0f};
  seq.offsets = {0, 2, 3};
  EXPECT_EQ(seq.size(), 2);
  EXPECT_EQ(seq.num_features(0), 2);
  EXPECT_EQ(seq.num_features(1), 1);
  const size_t capacity = seq.buckets.capacity();
  seq.Clear();
  EXPECT_EQ(seq.size(), 0);
  EXPECT_EQ(seq.offsets, std::vector<int32_t>{0});
  EXPECT_TRUE(seq.buckets.empty());
  EXPECT_TRUE(seq.values.empty());
  EXPECT_EQ(seq.buckets.capacity(), capacity);
}

TEST(FeatureSequenceTest, DropsValuesOnlyWhenAllAreOne) {
  FeatureSequence seq;
  seq.buckets = {1, 5, 2};
  seq.values = {1.0f, 2.0f, 1.0f};
  seq.offsets = {0, 2, 3};
  seq.DropUnitValues();
  ASSERT_EQ(seq.values.size(), 3u);
  EXPECT_EQ(seq.value(1), 2.0f);
  seq.values[1] = 1.0f;
  seq.DropUnitValues();
  EXPECT_TRUE(seq.values.empty());
  EXPECT_EQ(seq.values.capacity(), 0u);
  for (int k = 0; k < 3; ++k) EXPECT_EQ(seq.value(k), 1.0f);
}

}  // namespace
}  // namespace chaintag
