#include "models/second_order_top_k.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "models/chain_scores_testing.h"
#include "models/second_order.h"
#include "models/second_order_testing.h"
#include "models/second_order_viterbi.h"
#include "models/transition_constraints.h"

namespace chaintag {
namespace {

using second_order_testing::BruteForce;
using second_order_testing::Chain;
using second_order_testing::ForConstrainedChains;
using second_order_testing::ForTinyChains;
using second_order_testing::kIob2Labels;
using second_order_testing::kMinusInf;
using second_order_testing::MakeChain;
using second_order_testing::RandomChain;
using second_order_testing::RandomStructure;
using second_order_testing::Unconstrained;

void ExpectTopKMatches(const SecondOrderStructure& structure,
                       const Chain& chain,
                       const TransitionConstraints& constraints, int k,
                       SecondOrderTopK* top_k) {
  const int T = chain.length;
  const std::vector<ScoredLabeling> all =
      BruteForce(structure, chain, constraints);
  std::vector<int32_t> labelings = {-5};
  std::vector<double> scores = {-5};
  const int m =
      top_k->Decode(structure, chain.scores(), k, &labelings, &scores);
  ASSERT_EQ(m, std::min<int>(k, static_cast<int>(all.size()))) << "k " << k;
  ASSERT_EQ(labelings.size(), static_cast<size_t>(m) * T);
  ASSERT_EQ(scores.size(), static_cast<size_t>(m));
  for (int j = 0; j < m; ++j) {
    const std::vector<int32_t> row(labelings.begin() + j * T,
                                   labelings.begin() + (j + 1) * T);
    // Every entry of the table sums as ScoreLabeling does: exact scores,
    // hence exact order, even for real-valued scores.
    EXPECT_EQ(scores[j], all[j].score) << "k " << k << " rank " << j;
    EXPECT_EQ(row, all[j].labels) << "k " << k << " rank " << j;
  }
}

// Every k that matters: small ones, the number of labelings N (all
// allowed ones come out), and more than N.
void ExpectTopKMatchesForAllK(const SecondOrderStructure& structure,
                              const Chain& chain,
                              const TransitionConstraints& constraints,
                              SecondOrderTopK* top_k) {
  const int n =
      static_cast<int>(BruteForce(structure, chain, constraints).size());
  for (int k : {1, 2, 3, 5, 10, n, n + 1, n + 7}) {
    ExpectTopKMatches(structure, chain, constraints, k, top_k);
  }
}

TEST(SecondOrderTopKTest, MatchesBruteForceOnRandomTinyChains) {
  SecondOrderTopK top_k;  // reused across sizes: scratch must adapt
  ForTinyChains({11, 12}, 150, /*integer_too=*/true,
                [&](const SecondOrderStructure& structure, const Chain& chain,
                    const TransitionConstraints& constraints) {
                  ExpectTopKMatchesForAllK(structure, chain, constraints,
                                           &top_k);
                });
}

TEST(SecondOrderTopKTest, ReturnsOnlyAllowedLabelings) {
  SecondOrderTopK top_k;
  ForConstrainedChains(
      13, 40,
      [&](const SecondOrderStructure& structure, const Chain& chain,
          const TransitionConstraints& constraints) {
        ExpectTopKMatchesForAllK(structure, chain, constraints, &top_k);
      });
}

TEST(SecondOrderTopKTest, NeverReturnsMinusInfinityLabelings) {
  std::mt19937 rng(14);
  std::bernoulli_distribution forbid(0.25);
  SecondOrderTopK top_k;
  for (int trial = 0; trial < 200; ++trial) {
    const int T = 1 + trial % 5, L = 1 + (trial / 5) % 4;
    const SecondOrderStructure structure = Unconstrained(L, &rng, 0.5);
    Chain chain = RandomChain(structure, T, &rng, trial % 2 == 0);
    for (std::vector<double>* table : chain.tables()) {
      for (double& s : *table) {
        if (forbid(rng)) s = kMinusInf;
      }
    }
    SCOPED_TRACE(testing::Message() << "trial " << trial);
    ExpectTopKMatchesForAllK(structure, chain, TransitionConstraints(), &top_k);
  }
}

TEST(SecondOrderTopKTest, AllTiedFollowsTheDocumentedOrder) {
  // Key (y_1, y_2, y_0) for T = 3.
  std::mt19937 rng(15);
  const SecondOrderStructure structure = Unconstrained(2, &rng);
  const Chain chain = MakeChain(structure, 3, [] { return 0.0; });
  SecondOrderTopK top_k;
  std::vector<int32_t> labelings;
  std::vector<double> scores;
  ASSERT_EQ(top_k.Decode(structure, chain.scores(), 8, &labelings, &scores), 8);
  EXPECT_EQ(labelings,
            (std::vector<int32_t>{0, 0, 0, 1, 0, 0, 0, 0, 1, 1, 0, 1,
                                  0, 1, 0, 1, 1, 0, 0, 1, 1, 1, 1, 1}));
  EXPECT_EQ(scores, std::vector<double>(8, 0.0));
}

TEST(SecondOrderTopKTest, FirstRowIsViterbiForAnyK) {
  std::mt19937 rng(16);
  SecondOrderTopK top_k;
  SecondOrderViterbi viterbi;
  const TransitionConstraints iob2(kIob2Labels, IOB2);
  for (int trial = 0; trial < 300; ++trial) {
    const int T = 1 + trial % 30, L = 4;
    const SecondOrderStructure structure =
        trial % 2 == 0 ? Unconstrained(L, &rng, 0.3)
                       : RandomStructure(L, iob2, 0.3, 0.3, &rng);
    const Chain chain = RandomChain(structure, T, &rng, trial % 3 != 0);
    std::vector<int32_t> expected(T), labelings;
    std::vector<double> scores;
    const double best =
        viterbi.Decode(structure, chain.scores(), expected.data());
    ASSERT_GE(top_k.Decode(structure, chain.scores(), 1 + trial % 5, &labelings,
                           &scores),
              1);
    EXPECT_EQ(scores[0], best) << "trial " << trial;
    EXPECT_EQ(std::vector<int32_t>(labelings.begin(), labelings.begin() + T),
              expected)
        << "trial " << trial;
  }
}

TEST(SecondOrderTopKTest, EmptyChainAndNonPositiveK) {
  std::mt19937 rng(17);
  const SecondOrderStructure structure = Unconstrained(3, &rng);
  const Chain empty = RandomChain(structure, 0, &rng, false);
  SecondOrderTopK top_k;
  std::vector<int32_t> labelings = {7};
  std::vector<double> scores;
  EXPECT_EQ(top_k.Decode(structure, empty.scores(), 4, &labelings, &scores), 1);
  EXPECT_TRUE(labelings.empty());
  EXPECT_EQ(scores, std::vector<double>{0.0});
  const Chain chain = RandomChain(structure, 3, &rng, false);
  for (int k : {0, -3}) {
    labelings = {1};
    scores = {1.0};
    EXPECT_EQ(top_k.Decode(structure, chain.scores(), k, &labelings, &scores),
              0);
    EXPECT_TRUE(labelings.empty());
    EXPECT_TRUE(scores.empty());
  }
}

TEST(SecondOrderTopKTest, LongChainRowsAreDistinctSortedAndScoredRight) {
  std::mt19937 rng(18);
  const SecondOrderStructure structure = Unconstrained(4, &rng, 0.3);
  const Chain chain = RandomChain(structure, 150, &rng, true);
  SecondOrderTopK top_k;
  std::vector<int32_t> labelings;
  std::vector<double> scores;
  const int T = chain.length;
  ASSERT_EQ(top_k.Decode(structure, chain.scores(), 40, &labelings, &scores),
            40);
  std::vector<std::vector<int32_t>> rows;
  for (int j = 0; j < 40; ++j) {
    rows.emplace_back(labelings.begin() + j * T,
                      labelings.begin() + (j + 1) * T);
    EXPECT_EQ(scores[j],
              ScoreLabeling(structure, chain.scores(), rows.back().data()));
    if (j > 0) {
      EXPECT_GE(scores[j - 1], scores[j]);
    }
  }
  std::sort(rows.begin(), rows.end());
  EXPECT_EQ(std::adjacent_find(rows.begin(), rows.end()), rows.end());
}

}  // namespace
}  // namespace chaintag
