#include "features/pixel_features.h"

#include <cstdint>
#include <vector>

#include "features/feature_sequence.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace chaintag {
namespace {

using ::testing::ElementsAre;

TEST(PixelFeaturesTest, HandMadeLetters) {
  // Letter 0: pixels 0, 5 (row 0) and 127 (bottom-right) set; letter 1 blank;
  // letter 2 fully set.
  std::vector<uint8_t> pixels(3 * 128, 0);
  pixels[0] = 1;
  pixels[5] = 1;
  pixels[127] = 1;
  for (int p = 0; p < 128; ++p) pixels[256 + p] = 1;

  FeatureSequence seq;
  seq.buckets = {9};  // stale content must go
  PixelFeatures(pixels.data(), 3, &seq);
  ASSERT_EQ(seq.size(), 3);
  EXPECT_THAT(seq.offsets, ElementsAre(0, 4, 5, 134));
  EXPECT_THAT(
      std::vector<uint32_t>(seq.buckets.begin(), seq.buckets.begin() + 5),
      ElementsAre(0, 5, 127, 128, 128));
  for (int p = 0; p < 129; ++p) EXPECT_EQ(seq.buckets[5 + p], p);
  EXPECT_EQ(seq.values, std::vector<float>(134, 1.0f));
  EXPECT_EQ(kPixelBuckets, 129);
}

TEST(PixelFeaturesTest, NoLetters) {
  FeatureSequence seq;
  PixelFeatures(nullptr, 0, &seq);
  EXPECT_EQ(seq.size(), 0);
  EXPECT_TRUE(seq.buckets.empty());
}

}  // namespace
}  // namespace chaintag
