// RoundMerge against the definition: U is the blocks' changes added in
// block order, and the same bits (U, ||U||^2 and w + t*U) come out for any
// number of parts.

#include "solvers/round_merge.h"

#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "solvers/problem.h"

namespace chaintag {
namespace {

constexpr int64_t kGranularity = 3;
constexpr int64_t kSlots = 40;
constexpr int64_t kDim = kGranularity * kSlots;

// A delta of a few vectors, each added at a few ranges (which may repeat
// within and across blocks), with random scales. The ranges are parts of
// one partition of w, as Problem::TouchedRanges promises: w's first half
// in ranges of one slot, its second half in ranges of two.
LocatedDelta RandomDelta(std::mt19937* engine) {
  std::uniform_int_distribution<int> additions(1, 4);
  std::normal_distribution<double> normal;
  LocatedDelta block;
  const int vectors = 1 + (*engine)() % 3;
  for (int v = 0; v < vectors; ++v) {
    const bool wide = (*engine)() % 2 == 1;
    const int64_t length = kGranularity * (wide ? 2 : 1);
    const int32_t index = block.delta.AddVector(length);
    double* values = block.delta.values.data() + block.delta.VectorBegin(index);
    for (int64_t x = 0; x < length; ++x) values[x] = normal(*engine);
    for (int a = additions(*engine); a > 0; --a) {
      const int64_t half = kSlots / 2;
      const int64_t slot =
          wide ? half + 2 * ((*engine)() % (half / 2)) : (*engine)() % half;
      block.delta.AddAddition(slot * kGranularity, index, normal(*engine));
    }
  }
  return block;
}

struct Merged {
  std::vector<double> w;
  double norm = 0;
};

Merged MergeWith(int parts, std::vector<LocatedDelta> blocks,
                 const std::vector<double>& w, double t) {
  RoundMerge merge(kDim, kGranularity, parts);
  std::vector<const LocatedDelta*> pointers;
  for (LocatedDelta& block : blocks) {
    merge.Locate(&block);
    pointers.push_back(&block);
  }
  merge.BeginRound();
  for (int p = 0; p < merge.parts(); ++p) merge.AccumulatePart(p, pointers);
  Merged merged{w, merge.NormSquared()};
  for (int p = 0; p < merge.parts(); ++p) {
    merge.ApplyPart(p, t, merged.w.data());
  }
  return merged;
}

TEST(RoundMergeTest, SameBitsForAnyPartCountAndTheDefinitionsValues) {
  std::mt19937 engine(7);
  for (int round = 0; round < 20; ++round) {
    std::vector<LocatedDelta> blocks;
    for (int k = 0; k < 6; ++k) blocks.push_back(RandomDelta(&engine));
    std::vector<double> w(kDim);
    std::normal_distribution<double> normal;
    for (double& x : w) x = normal(engine);
    const double t = 0.37;
    // The definition: U summed block by block, addition by addition.
    std::vector<double> u(kDim, 0.0);
    for (const LocatedDelta& block : blocks) {
      AddBlockUpdate(block.delta, u.data());
    }
    double norm = 0;
    for (double x : u) norm += x * x;

    const Merged one = MergeWith(1, blocks, w, t);
    EXPECT_NEAR(one.norm, norm, 1e-12 * (1 + norm));
    for (int64_t j = 0; j < kDim; ++j) {
      EXPECT_NEAR(one.w[j], w[j] + t * u[j], 1e-12) << j;
    }
    for (int parts : {2, 3, 7, 255}) {
      const Merged many = MergeWith(parts, blocks, w, t);
      EXPECT_EQ(many.norm, one.norm) << parts << " parts";
      EXPECT_EQ(many.w, one.w) << parts << " parts";
    }
  }
}

TEST(RoundMergeTest, LocateGroupsEachPartsAdditionsInOrder) {
  std::mt19937 engine(3);
  const RoundMerge merge(kDim, kGranularity, 4);
  LocatedDelta block = RandomDelta(&engine);
  for (int a = 0; a < 30; ++a) {
    block.delta.AddAddition((a % (kSlots / 2)) * kGranularity, 0, 1.0);
  }
  merge.Locate(&block);
  const size_t additions = block.delta.targets.size();
  ASSERT_EQ(block.slots.size(), additions);
  ASSERT_EQ(block.part_ends.size(), 4u);
  EXPECT_EQ(block.part_ends.back(), static_cast<int32_t>(additions));
  int32_t begin = 0;
  for (int p = 0; p < 4; ++p) {
    for (int32_t a = begin; a < block.part_ends[p]; ++a) {
      const int32_t j = block.part_additions[a];
      EXPECT_EQ(block.owners[j], p);
      EXPECT_EQ(block.slots[j], block.delta.targets[j] / kGranularity);
      if (a > begin) {
        EXPECT_LT(block.part_additions[a - 1], j);
      }
    }
    begin = block.part_ends[p];
  }
}

}  // namespace
}  // namespace chaintag
