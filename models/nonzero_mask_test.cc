#include "models/nonzero_mask.h"

#include <cstdint>
#include <iterator>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace chaintag {
namespace {

uint64_t Reference(const double* values, int width) {
  uint64_t mask = 0;
  for (int y = 0; y < width; ++y) {
    if (values[y] != 0) mask |= uint64_t{1} << y;
  }
  return mask;
}

// Every width from 0 to 64 at every alignment, over values that are mostly
// zeros of either sign, with NaN, infinities, denormals and ordinary
// numbers among them.
TEST(NonzeroMaskTest, EveryWayAgreesWithTheOperator) {
  const double kinds[] = {0.0,
                          -0.0,
                          0.0,
                          -0.0,
                          0.0,
                          0.25,
                          -3.0,
                          std::numeric_limits<double>::denorm_min(),
                          -std::numeric_limits<double>::denorm_min(),
                          std::numeric_limits<double>::quiet_NaN(),
                          std::numeric_limits<double>::infinity(),
                          -std::numeric_limits<double>::infinity()};
  std::mt19937 random(7);
  std::vector<double> values(64 + 8);
  int checked = 0;
  for (int trial = 0; trial < 200; ++trial) {
    for (double& v : values) v = kinds[random() % std::size(kinds)];
    for (int offset = 0; offset < 8; ++offset) {
      for (int width = 0; width <= 64; ++width) {
        const double* start = values.data() + offset;
        const uint64_t expected = Reference(start, width);
        ASSERT_EQ(NonzeroMask(start, width), expected) << width;
        ASSERT_EQ(nonzero_mask_internal::Portable(start, width), expected)
            << width;
        if (nonzero_mask_internal::Avx2Available()) {
          ASSERT_EQ(nonzero_mask_internal::Avx2(start, width), expected)
              << width;
        }
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 200 * 8 * 65);
}

TEST(NonzeroMaskTest, HandPickedWords) {
  std::vector<double> values(64, 0.0);
  EXPECT_EQ(NonzeroMask(values.data(), 64), 0u);
  values[0] = 1;
  values[5] = -0.0;
  values[63] = 2;
  EXPECT_EQ(NonzeroMask(values.data(), 64), (uint64_t{1} << 63) | 1u);
  EXPECT_EQ(NonzeroMask(values.data(), 63), 1u);
  values[2] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(NonzeroMask(values.data(), 3), 0b101u);
}

}  // namespace
}  // namespace chaintag
