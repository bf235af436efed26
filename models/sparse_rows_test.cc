#include "models/sparse_rows.h"

#include <cstdint>
#include <limits>
#include <vector>

#include "base/random.h"
#include "features/feature_sequence.h"
#include "gtest/gtest.h"
#include "models/chain_layout.h"

namespace chaintag {
namespace {

// Rows of L weights, most of them zero; every row has at least one
// non-zero weight, and row 0 is full.
std::vector<double> SparseDense(int64_t num_rows, int L, SolverRandom* random) {
  std::vector<double> dense(num_rows * L, 0.0);
  for (int64_t r = 0; r < num_rows; ++r) {
    const int nonzero = r == 0 ? L : 1 + random->Uniform(L / 4 + 1);
    for (int k = 0; k < nonzero; ++k) {
      dense[r * L + random->Uniform(L)] = random->UniformDouble() - 0.5;
    }
    if (r == 0) {
      for (int y = 0; y < L; ++y) dense[y] = y + 1.5;
    }
  }
  return dense;
}

// The kept weights of `dense` in the order Choose lays them out.
std::vector<double> Compact(const std::vector<double>& dense, int L,
                            const std::vector<uint32_t>& sizes,
                            const std::vector<uint32_t>& labels) {
  std::vector<double> weights;
  size_t listed = 0;
  for (size_t r = 0; r < sizes.size(); ++r) {
    if (sizes[r] == static_cast<uint32_t>(L)) {
      for (int y = 0; y < L; ++y) weights.push_back(dense[r * L + y]);
      continue;
    }
    for (uint32_t k = 0; k < sizes[r]; ++k) {
      weights.push_back(dense[r * L + labels[listed++]]);
    }
  }
  return weights;
}

FeatureSequence RandomFeatures(int T, int64_t num_rows, SolverRandom* random) {
  FeatureSequence features;
  for (int t = 0; t < T; ++t) {
    const int count = random->Uniform(6);
    for (int k = 0; k < count; ++k) {
      features.buckets.push_back(random->Uniform(num_rows));
      features.values.push_back(static_cast<float>(random->UniformDouble()));
    }
    features.offsets.push_back(static_cast<int32_t>(features.buckets.size()));
  }
  return features;
}

TEST(SparseRowsTest, ScoresAndLookupsEqualTheDenseRows) {
  for (int L : {1, 2, 7, 40}) {
    SolverRandom random(L);
    const int64_t num_rows = 60;
    const std::vector<double> dense = SparseDense(num_rows, L, &random);
    std::vector<uint32_t> sizes, labels;
    SparseRows::Choose(dense.data(), num_rows, L, &sizes, &labels);
    ASSERT_EQ(sizes[0], static_cast<uint32_t>(L));
    const std::vector<double> weights = Compact(dense, L, sizes, labels);
    absl::StatusOr<SparseRows> rows =
        SparseRows::Create(L, sizes, labels, weights.size());
    ASSERT_TRUE(rows.ok()) << rows.status();
    ASSERT_EQ(rows->num_rows(), num_rows);
    if (L == 40) EXPECT_LT(weights.size(), dense.size() / 2);

    for (int64_t r = 0; r < num_rows; ++r) {
      for (int y = 0; y < L; ++y) {
        const int64_t at = rows->Find(labels.data(), r, y);
        if (at < 0) {
          EXPECT_EQ(dense[r * L + y], 0.0) << r << " " << y;
        } else {
          EXPECT_EQ(weights[at], dense[r * L + y]) << r << " " << y;
        }
      }
    }

    const std::vector<float> dense32(dense.begin(), dense.end());
    const std::vector<float> weights32(weights.begin(), weights.end());
    for (int trial = 0; trial < 5; ++trial) {
      const FeatureSequence features = RandomFeatures(9, num_rows, &random);
      std::vector<double> expected(9 * L), got(9 * L, 7.0);
      ComputeUnaryScores(L, dense.data(), features, expected.data());
      rows->ComputeUnaryScores(labels.data(), weights.data(), features,
                               got.data());
      EXPECT_EQ(got, expected);
      ComputeUnaryScores(L, dense32.data(), features, expected.data());
      rows->ComputeUnaryScores(labels.data(), weights32.data(), features,
                               got.data());
      EXPECT_EQ(got, expected);
    }
  }
}

TEST(SparseRowsTest, ChooseDropsZeroRowsAndKeepsMostlyFullRowsWhole) {
  const double dense[] = {0, 0, 0, 0,   // dropped
                          0, 2, 0, 0,   // one label
                          1, 2, 3, 0,   // three of four: whole
                          0, 5, 6, 0};  // two of four: listed
  std::vector<uint32_t> sizes, labels;
  SparseRows::Choose(dense, 4, 4, &sizes, &labels);
  EXPECT_EQ(sizes, (std::vector<uint32_t>{0, 1, 4, 2}));
  EXPECT_EQ(labels, (std::vector<uint32_t>{1, 1, 2}));
}

// A solver's free coordinates as rows of 3 labels: row 0 holds {1}, row 1
// none, row 2 every label (full: nothing listed), row 3 {0, 2}.
TEST(SparseRowsTest, FreeCoordinatesMayLeaveARowEmpty) {
  const std::vector<int64_t> row_begin = {0, 1, 1, 4, 6};
  const std::vector<int32_t> labels = {1, 0, 1, 2, 0, 2};
  std::vector<uint32_t> listed;
  absl::StatusOr<SparseRows> rows =
      SparseRows::FromFreeCoordinates(3, row_begin, labels, &listed);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(listed, (std::vector<uint32_t>{1, 0, 2}));
  ASSERT_EQ(rows->num_rows(), 4);
  EXPECT_EQ(rows->WeightBegin(1), rows->WeightBegin(2));
  EXPECT_TRUE(rows->Full(2));
  EXPECT_EQ(rows->Find(listed.data(), 0, 1), 0);
  EXPECT_EQ(rows->Find(listed.data(), 1, 0), -1);
  EXPECT_EQ(rows->Find(listed.data(), 2, 2), 3);
  EXPECT_EQ(rows->Find(listed.data(), 3, 2), 5);
  EXPECT_EQ(rows->Find(listed.data(), 3, 1), -1);
  // Begins that do not cover the labels, or go backwards, are refused.
  EXPECT_FALSE(
      SparseRows::FromFreeCoordinates(3, {0, 1, 5}, labels, &listed).ok());
  EXPECT_FALSE(
      SparseRows::FromFreeCoordinates(3, {0, 4, 1, 6}, labels, &listed).ok());
}

TEST(SparseRowsTest, RefusesInconsistentRows) {
  const std::vector<uint32_t> labels = {0, 2, 1};
  // Row 0 lists {0, 2}, row 1 is full (3 labels), row 2 lists {1}.
  EXPECT_TRUE(SparseRows::Create(3, {2, 3, 1}, labels, 6).ok());
  auto message = [&](std::vector<uint32_t> sizes, std::vector<uint32_t> ids,
                     int64_t weights) {
    absl::StatusOr<SparseRows> rows =
        SparseRows::Create(3, sizes, ids, weights);
    EXPECT_FALSE(rows.ok());
    return std::string(rows.status().message());
  };
  EXPECT_NE(message({2, 0, 1}, labels, 3).find("row 1 holds 0"),
            std::string::npos);
  EXPECT_NE(message({2, 4, 1}, labels, 7).find("row 1 holds 4"),
            std::string::npos);
  EXPECT_NE(message({2, 3, 1}, {2, 0, 1}, 6).find("row 0's labels"),
            std::string::npos);
  EXPECT_NE(message({2, 3, 1}, {0, 2, 3}, 6).find("row 2's labels"),
            std::string::npos);
  EXPECT_NE(message({2, 3, 2}, labels, 7).find("past the 3"),
            std::string::npos);
  EXPECT_NE(message({2, 3, 1}, labels, 7).find("hold 6 weights"),
            std::string::npos);
  EXPECT_NE(message({2, 3}, labels, 5).find("list 2 labels"),
            std::string::npos);
}

// The rows' starts are 32-bit: rows holding more weights are refused, also
// when the rows past the limit are full ones, which list no labels.
TEST(SparseRowsTest, RefusesMoreWeightsThanItsStartsHold) {
  constexpr int kLabels = 1 << 12;
  const uint64_t limit = std::numeric_limits<uint32_t>::max();
  const size_t full_rows = limit / kLabels + 1;  // one row past the limit
  std::vector<uint32_t> sizes(full_rows, kLabels);
  const int64_t weights = static_cast<int64_t>(full_rows) * kLabels;
  ASSERT_GT(static_cast<uint64_t>(weights), limit);
  absl::StatusOr<SparseRows> rows =
      SparseRows::Create(kLabels, sizes, {}, weights);
  ASSERT_FALSE(rows.ok());
  EXPECT_NE(rows.status().message().find("too many emission weights"),
            absl::string_view::npos);
  sizes.pop_back();
  EXPECT_TRUE(SparseRows::Create(kLabels, sizes, {}, weights - kLabels).ok());
}

}  // namespace
}  // namespace chaintag
