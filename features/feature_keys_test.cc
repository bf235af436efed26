#include "features/feature_keys.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace chaintag {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<uint64_t> RandomKeys(int n, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::vector<uint64_t> keys(n);
  for (uint64_t& key : keys) key = random();
  return keys;
}

TEST(FeatureKeysTest, FindsEveryKeyAtItsSortedPosition) {
  FeatureKeySet set;
  for (uint64_t key : RandomKeys(5000, 1)) set.Add(key, 0);
  const std::vector<uint64_t> sorted = set.SortedKeys();
  absl::StatusOr<FeatureKeys> keys = FeatureKeys::FromSorted(sorted);
  ASSERT_TRUE(keys.ok()) << keys.status();
  ASSERT_EQ(keys->size(), 5000);
  EXPECT_EQ(keys->keys(), sorted);
  for (int64_t b = 0; b < keys->size(); ++b) {
    EXPECT_EQ(keys->Find(sorted[b]), b);
  }
}

TEST(FeatureKeysTest, UnseenKeysHaveNoBucket) {
  const std::vector<uint64_t> seen = {0, 3, 7, ~uint64_t{0}};
  absl::StatusOr<FeatureKeys> keys = FeatureKeys::FromSorted(seen);
  ASSERT_TRUE(keys.ok()) << keys.status();
  EXPECT_EQ(keys->Find(0), 0);
  EXPECT_EQ(keys->Find(~uint64_t{0}), 3);
  for (uint64_t unseen : {uint64_t{1}, uint64_t{6}, uint64_t{8}}) {
    EXPECT_EQ(keys->Find(unseen), -1) << unseen;
  }
  for (uint64_t unseen : RandomKeys(10000, 2)) {
    EXPECT_EQ(keys->Find(unseen), -1) << unseen;
  }
}

TEST(FeatureKeysTest, KeysThatShareTheirHomeSlotAreAllFound) {
  // Eleven keys make a table of 16 slots, whose home slot is the top four
  // bits of key * 0x9E3779B97F4A7C15 (feature_keys.h): keys picked to share
  // home 15 probe past each other and wrap around to slot 0.
  std::vector<uint64_t> sorted;
  for (uint64_t key : RandomKeys(2000, 4)) {
    if (((key * 0x9E3779B97F4A7C15ull) >> 60) == 15 && sorted.size() < 11) {
      sorted.push_back(key);
    }
  }
  ASSERT_EQ(sorted.size(), 11u);
  std::sort(sorted.begin(), sorted.end());
  absl::StatusOr<FeatureKeys> keys = FeatureKeys::FromSorted(sorted);
  ASSERT_TRUE(keys.ok()) << keys.status();
  for (int64_t b = 0; b < keys->size(); ++b) {
    EXPECT_EQ(keys->Find(sorted[b]), b);
  }
  for (uint64_t unseen : RandomKeys(1000, 5)) {
    EXPECT_EQ(keys->Find(unseen), -1);
  }
}

TEST(FeatureKeysTest, AnEmptyTableFindsNothing) {
  const FeatureKeys empty;
  EXPECT_EQ(empty.size(), 0);
  EXPECT_EQ(empty.Find(0), -1);
  EXPECT_EQ(empty.Find(12345), -1);
}

TEST(FeatureKeysTest, UnsortedOrRepeatedKeysAreRefused) {
  const std::vector<uint64_t> unsorted = {5, 3};
  EXPECT_THAT(FeatureKeys::FromSorted(unsorted).status().message(),
              HasSubstr("feature key 1 is not above the one before it"));
  const std::vector<uint64_t> repeated = {3, 3};
  EXPECT_FALSE(FeatureKeys::FromSorted(repeated).ok());
}

TEST(FeatureKeySetTest, SortsAndDropsRepeats) {
  FeatureKeySet set;
  set.Add(9, 1);
  set.Add(2, 1);
  set.Add(9, 1);
  EXPECT_EQ(set.size(), 2);
  EXPECT_THAT(set.SortedKeys(), ElementsAre(2, 9));
  EXPECT_FALSE(set.collision().has_value());
}

TEST(FeatureKeySetTest, OneKeyWithTwoChecksIsACollision) {
  // Two different features forced onto one key: the checks tell them apart.
  FeatureKeySet set;
  set.Add(40, 111);
  set.Add(7, 5);
  set.Add(40, 222);
  set.Add(7, 6);
  ASSERT_TRUE(set.collision().has_value());
  EXPECT_EQ(*set.collision(), 7u);  // the smallest
  EXPECT_EQ(set.size(), 2);
}

TEST(FeatureKeySetTest, MergingGivesTheSameSetInAnyOrder) {
  // As threads gather disjoint parts of the data and merge them.
  const std::vector<uint64_t> all = RandomKeys(3000, 3);
  FeatureKeySet one;
  for (uint64_t key : all) one.Add(key, key ^ 1);
  for (int parts : {2, 3, 7}) {
    std::vector<FeatureKeySet> partial(parts);
    for (size_t k = 0; k < all.size(); ++k) {
      partial[k % parts].Add(all[k], all[k] ^ 1);
    }
    for (int p = parts - 1; p > 0; --p) partial[0].Merge(partial[p]);
    EXPECT_EQ(partial[0].SortedKeys(), one.SortedKeys()) << parts;
    EXPECT_FALSE(partial[0].collision().has_value());
  }
  // A collision across parts is found when they merge.
  FeatureKeySet a, b;
  a.Add(12, 1);
  b.Add(12, 2);
  a.Merge(b);
  ASSERT_TRUE(a.collision().has_value());
  EXPECT_EQ(*a.collision(), 12u);
}

}  // namespace
}  // namespace chaintag
