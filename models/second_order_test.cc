#include "models/second_order.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "models/chain_scores_testing.h"
#include "models/second_order_testing.h"
#include "models/transition_constraints.h"

namespace chaintag {
namespace {

using second_order_testing::Chain;
using second_order_testing::kIob2Labels;
using second_order_testing::kIobesLabels;
using second_order_testing::Unconstrained;

// --- structure ---------------------------------------------------------------

TEST(SecondOrderStructureTest, IndexTablesRoundTrip) {
  std::mt19937 rng(1);
  const SecondOrderStructure structure = Unconstrained(4, &rng, 0.3);
  ASSERT_EQ(structure.num_labels(), 4);
  ASSERT_GT(structure.num_trigrams(), 0);
  ASSERT_GT(structure.num_pairs(), 0);
  for (int k = 0; k < structure.num_trigrams(); ++k) {
    const LabelTrigram& t = structure.trigrams()[k];
    EXPECT_EQ(structure.trigram_index(t[0], t[1], t[2]), k);
  }
  for (int p = 0; p < structure.num_pairs(); ++p) {
    const LabelPair& pair = structure.pairs()[p];
    EXPECT_EQ(structure.pair_index(pair[0], pair[1]), p);
  }
  int unweighted_trigrams = 0, unweighted_pairs = 0;
  for (int a = 0; a < 4; ++a) {
    for (int b = 0; b < 4; ++b) {
      unweighted_pairs += structure.pair_index(a, b) == -1;
      for (int c = 0; c < 4; ++c) {
        unweighted_trigrams += structure.trigram_index(a, b, c) == -1;
      }
    }
  }
  EXPECT_EQ(unweighted_trigrams, 64 - structure.num_trigrams());
  EXPECT_EQ(unweighted_pairs, 16 - structure.num_pairs());
}

TEST(SecondOrderStructureTest, CreateRejectsBadInput) {
  const TransitionConstraints none;
  EXPECT_FALSE(SecondOrderStructure::Create(3, none, {{0, 1, 3}}, {}).ok());
  EXPECT_FALSE(SecondOrderStructure::Create(3, none, {{-1, 1, 2}}, {}).ok());
  EXPECT_FALSE(SecondOrderStructure::Create(3, none, {}, {{2, 3}}).ok());
  EXPECT_FALSE(SecondOrderStructure::Create(3, none, {}, {{-1, 0}}).ok());
  EXPECT_FALSE(
      SecondOrderStructure::Create(3, none, {{0, 1, 2}, {0, 1, 2}}, {}).ok());
  EXPECT_FALSE(
      SecondOrderStructure::Create(3, none, {}, {{1, 2}, {1, 2}}).ok());
  EXPECT_FALSE(SecondOrderStructure::Create(-1, none, {}, {}).ok());
  // Constraints over another number of labels.
  const TransitionConstraints iob2(kIob2Labels, IOB2);
  absl::StatusOr<SecondOrderStructure> wrong =
      SecondOrderStructure::Create(3, iob2, {}, {});
  EXPECT_EQ(wrong.status().code(), absl::StatusCode::kInvalidArgument);
  // Weighted but forbidden trigrams and pairs are fine.
  EXPECT_TRUE(
      SecondOrderStructure::Create(4, iob2, {{0, 2, 2}}, {{0, 2}}).ok());
  EXPECT_TRUE(SecondOrderStructure::Create(0, none, {}, {}).ok());
}

TEST(SecondOrderStructureTest, UnconstrainedLatticeHasEveryPairAndTrigram) {
  for (int L = 1; L <= 5; ++L) {
    for (const TransitionConstraints& constraints :
         {TransitionConstraints(),
          TransitionConstraints(std::vector<std::string>(L, "B-X"), NONE)}) {
      absl::StatusOr<SecondOrderStructure> structure =
          SecondOrderStructure::Create(L, constraints, {}, {});
      ASSERT_TRUE(structure.ok());
      EXPECT_EQ(structure->num_states(), L * L);
      EXPECT_EQ(structure->num_edges(), L * L * L);
    }
  }
}

TEST(SecondOrderStructureTest, ConstrainedLatticeHasTheAllowedOnes) {
  for (const auto& [labels, scheme] : {std::make_pair(kIob2Labels, IOB2),
                                       std::make_pair(kIobesLabels, IOBES)}) {
    const TransitionConstraints constraints(labels, scheme);
    const int L = static_cast<int>(labels.size());
    int pairs = 0, trigrams = 0;
    for (int a = 0; a < L; ++a) {
      for (int b = 0; b < L; ++b) {
        if (!constraints.transition_allowed(a, b)) continue;
        ++pairs;
        for (int c = 0; c < L; ++c) {
          trigrams += constraints.transition_allowed(b, c);
        }
      }
    }
    absl::StatusOr<SecondOrderStructure> structure =
        SecondOrderStructure::Create(L, constraints, {}, {});
    ASSERT_TRUE(structure.ok());
    EXPECT_EQ(structure->num_states(), pairs);
    EXPECT_EQ(structure->num_edges(), trigrams);
    EXPECT_LT(pairs, L * L);
    for (int T = 0; T <= 4; ++T) {
      ForEachLabeling(T, L, [&](const std::vector<int32_t>& y) {
        EXPECT_EQ(structure->IsAllowed(y.data(), T),
                  constraints.IsValid(y.data(), T));
      });
    }
  }
  // IOB2 over {O, B-X, I-X, B-Y}: I-X only after B-X or I-X.
  const TransitionConstraints iob2(kIob2Labels, IOB2);
  absl::StatusOr<SecondOrderStructure> structure =
      SecondOrderStructure::Create(4, iob2, {}, {});
  EXPECT_EQ(structure->num_states(), 14);
}

// --- scoring -----------------------------------------------------------------

TEST(SecondOrderScoreTest, HandComputedLabeling) {
  // L = 2, trigram (0, 1, 1) weighted 5 and (1, 1, 0) weighted -3 (weight
  // order reversed), pair (1, 1) with a column.
  absl::StatusOr<SecondOrderStructure> structure = SecondOrderStructure::Create(
      2, TransitionConstraints(), {{1, 1, 0}, {0, 1, 1}}, {{1, 1}});
  ASSERT_TRUE(structure.ok());
  Chain chain;
  chain.length = 4;
  chain.unary = {1, 2, 3, 4, 5, 6, 7, 8};
  chain.transition = {10, 20, 30, 40};
  chain.start = {100, 200};
  chain.end = {1000, 2000};
  chain.trigram = {-3, 5};
  chain.pair_unary = {0.5, 0.25, 0.125, 0.0625};
  const std::vector<int32_t> y = {0, 1, 1, 0};
  // start 100, unary 1 + 4 + 6 + 7, transitions 20 + 40 + 30, pair (1, 1)
  // at t = 2: 0.125, trigrams (0, 1, 1): 5 and (1, 1, 0): -3, end 1000.
  EXPECT_EQ(ScoreLabeling(*structure, chain.scores(), y.data()),
            100 + 18 + 90 + 0.125 + 2 + 1000);
  EXPECT_EQ(ScoreLabeling(*structure, Chain().scores(), nullptr), 0.0);
}

}  // namespace
}  // namespace chaintag
