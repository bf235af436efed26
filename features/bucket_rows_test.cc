#include "features/bucket_rows.h"

#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "gtest/gtest.h"

namespace chaintag {
namespace {

FeatureSequence Sequence(const std::vector<std::vector<uint32_t>>& positions) {
  FeatureSequence f;
  for (const std::vector<uint32_t>& buckets : positions) {
    for (uint32_t b : buckets) {
      f.buckets.push_back(b);
      f.values.push_back(static_cast<float>(b % 7 + 1));
    }
    f.offsets.push_back(static_cast<int32_t>(f.buckets.size()));
  }
  return f;
}

TEST(BucketRowsTest, FindAgreesWithASortedListOnRandomSets) {
  std::mt19937 random(7);
  for (uint64_t num_buckets : {1ull, 63ull, 64ull, 65ull, 1000ull, 4096ull}) {
    std::set<uint32_t> chosen;
    std::uniform_int_distribution<uint64_t> pick(0, num_buckets - 1);
    for (uint64_t k = 0; k < num_buckets / 3 + 1; ++k) {
      chosen.insert(static_cast<uint32_t>(pick(random)));
    }
    const std::vector<uint32_t> sorted(chosen.begin(), chosen.end());
    absl::StatusOr<BucketRows> rows =
        BucketRows::FromSorted(sorted, num_buckets);
    ASSERT_TRUE(rows.ok()) << rows.status();
    ASSERT_EQ(rows->size(), static_cast<int64_t>(sorted.size()));
    for (uint64_t b = 0; b < num_buckets + 70; ++b) {
      const auto it = std::lower_bound(sorted.begin(), sorted.end(), b);
      const int64_t expected =
          it != sorted.end() && *it == b ? it - sorted.begin() : -1;
      EXPECT_EQ(rows->Find(b), expected) << num_buckets << " " << b;
    }
  }
}

TEST(BucketRowsTest, FromFeaturesCollectsTheDistinctBucketsInOrder) {
  const FeatureSequence a = Sequence({{3, 70, 200}, {3}});
  const FeatureSequence b = Sequence({{0, 70}, {129, 255}});
  const FeatureSequence* sequences[] = {&a, &b};
  const BucketRows rows = BucketRows::FromFeatures(sequences, 256);
  EXPECT_EQ(rows.buckets(), (std::vector<uint32_t>{0, 3, 70, 129, 200, 255}));
  EXPECT_EQ(rows.Find(129), 3);
  EXPECT_EQ(rows.Find(128), -1);
  EXPECT_EQ(rows.Find(256), -1);
}

TEST(BucketRowsTest, RemapRewritesRowsAndDropsAbsentBuckets) {
  absl::StatusOr<BucketRows> rows =
      BucketRows::FromSorted(std::vector<uint32_t>{5, 64, 100}, 128);
  ASSERT_TRUE(rows.ok());
  FeatureSequence f = Sequence({{1, 5, 100}, {2, 3}, {64, 100, 127}});
  rows->Remap(&f);
  EXPECT_EQ(f.offsets, (std::vector<int32_t>{0, 2, 2, 4}));
  EXPECT_EQ(f.buckets, (std::vector<uint32_t>{0, 2, 1, 2}));
  // Values travel with their features: bucket b had value b % 7 + 1.
  EXPECT_EQ(f.values, (std::vector<float>{6, 3, 2, 3}));
}

TEST(BucketRowsTest, RemapKeepsUnitValuesImplicit) {
  absl::StatusOr<BucketRows> rows =
      BucketRows::FromSorted(std::vector<uint32_t>{5, 64, 100}, 128);
  ASSERT_TRUE(rows.ok());
  FeatureSequence f = Sequence({{1, 5, 100}, {64}});
  f.values.clear();
  rows->Remap(&f);
  EXPECT_EQ(f.offsets, (std::vector<int32_t>{0, 2, 3}));
  EXPECT_EQ(f.buckets, (std::vector<uint32_t>{0, 2, 1}));
  EXPECT_TRUE(f.values.empty());
}

TEST(BucketRowsTest, IdentityMapsEveryBucketToItself) {
  const BucketRows rows = BucketRows::Identity(129);
  ASSERT_EQ(rows.size(), 129);
  for (uint32_t b = 0; b < 129; ++b) EXPECT_EQ(rows.Find(b), b);
  EXPECT_EQ(rows.Find(129), -1);
}

TEST(BucketRowsTest, FromSortedRejectsDisorderAndOutOfRange) {
  EXPECT_FALSE(BucketRows::FromSorted(std::vector<uint32_t>{4, 4}, 10).ok());
  EXPECT_FALSE(BucketRows::FromSorted(std::vector<uint32_t>{5, 2}, 10).ok());
  EXPECT_FALSE(BucketRows::FromSorted(std::vector<uint32_t>{10}, 10).ok());
  EXPECT_TRUE(BucketRows::FromSorted(std::vector<uint32_t>{}, 10).ok());
}

}  // namespace
}  // namespace chaintag
