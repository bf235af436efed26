#include "models/second_order_viterbi.h"

#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "models/chain_scores_testing.h"
#include "models/second_order.h"
#include "models/second_order_testing.h"
#include "models/transition_constraints.h"
#include "models/viterbi.h"

namespace chaintag {
namespace {

using second_order_testing::BruteForce;
using second_order_testing::Chain;
using second_order_testing::ForConstrainedChains;
using second_order_testing::ForTinyChains;
using second_order_testing::kIobesLabels;
using second_order_testing::kMinusInf;
using second_order_testing::MakeChain;
using second_order_testing::RandomChain;
using second_order_testing::Unconstrained;

void ExpectViterbiMatches(const SecondOrderStructure& structure,
                          const Chain& chain,
                          const TransitionConstraints& constraints,
                          SecondOrderViterbi* viterbi) {
  const std::vector<ScoredLabeling> all =
      BruteForce(structure, chain, constraints);
  std::vector<int32_t> got(chain.length, -1);
  const double score = viterbi->Decode(structure, chain.scores(), got.data());
  if (all.empty()) {
    EXPECT_EQ(score, kMinusInf);
    return;
  }
  // The decoder adds in ScoreLabeling's order, so the scores agree to the
  // bit; the tie rule makes the labeling the first in TieKey order.
  EXPECT_EQ(score, all[0].score);
  EXPECT_EQ(got, all[0].labels);
  EXPECT_EQ(ScoreLabeling(structure, chain.scores(), got.data()), score);
}

TEST(SecondOrderViterbiTest, MatchesBruteForceOnRandomTinyChains) {
  SecondOrderViterbi viterbi;  // reused across sizes: scratch must adapt
  ForTinyChains({1, 2, 3}, 200, /*integer_too=*/true,
                [&](const SecondOrderStructure& structure, const Chain& chain,
                    const TransitionConstraints& constraints) {
                  ExpectViterbiMatches(structure, chain, constraints, &viterbi);
                });
}

TEST(SecondOrderViterbiTest, DecodesOnlyAllowedLabelings) {
  SecondOrderViterbi viterbi;
  ForConstrainedChains(
      4, 60,
      [&](const SecondOrderStructure& structure, const Chain& chain,
          const TransitionConstraints& constraints) {
        ExpectViterbiMatches(structure, chain, constraints, &viterbi);
      });
}

TEST(SecondOrderViterbiTest, AllTiedPicksLowestLabels) {
  std::mt19937 rng(5);
  const SecondOrderStructure structure = Unconstrained(3, &rng);
  const Chain chain = MakeChain(structure, 4, [] { return 0.0; });
  SecondOrderViterbi viterbi;
  std::vector<int32_t> got(4);
  EXPECT_EQ(viterbi.Decode(structure, chain.scores(), got.data()), 0.0);
  EXPECT_EQ(got, (std::vector<int32_t>{0, 0, 0, 0}));
}

TEST(SecondOrderViterbiTest, TrigramDecidesAgainstTheBigrams) {
  // Without trigrams 0 0 0 wins; a trigram weight on (1, 1, 1) of 4 beats
  // the unary cost 3 of taking label 1 everywhere.
  absl::StatusOr<SecondOrderStructure> structure =
      SecondOrderStructure::Create(2, TransitionConstraints(), {{1, 1, 1}}, {});
  ASSERT_TRUE(structure.ok());
  Chain chain;
  chain.length = 3;
  chain.unary = {0, -1, 0, -1, 0, -1};
  chain.transition = {0, 0, 0, 0};
  chain.start = {0, 0};
  chain.end = {0, 0};
  chain.trigram = {2};
  SecondOrderViterbi viterbi;
  std::vector<int32_t> got(3);
  EXPECT_EQ(viterbi.Decode(*structure, chain.scores(), got.data()), 0.0);
  EXPECT_EQ(got, (std::vector<int32_t>{0, 0, 0}));
  chain.trigram = {4};
  EXPECT_EQ(viterbi.Decode(*structure, chain.scores(), got.data()), 1.0);
  EXPECT_EQ(got, (std::vector<int32_t>{1, 1, 1}));
}

TEST(SecondOrderViterbiTest, NoAllowedLabelingScoresMinusInfinity) {
  // IOBES over {B-X, I-X}: nothing may end a sentence.
  const TransitionConstraints constraints({"B-X", "I-X"}, IOBES);
  absl::StatusOr<SecondOrderStructure> structure =
      SecondOrderStructure::Create(2, constraints, {{0, 1, 1}}, {});
  ASSERT_TRUE(structure.ok());
  std::mt19937 rng(6);
  SecondOrderViterbi viterbi;
  for (int T = 1; T <= 4; ++T) {
    const Chain chain = RandomChain(*structure, T, &rng, false);
    std::vector<int32_t> got(T);
    EXPECT_EQ(viterbi.Decode(*structure, chain.scores(), got.data()),
              kMinusInf);
  }
  // And every allowed labeling forbidden by its scores.
  const SecondOrderStructure free = Unconstrained(2, &rng);
  Chain chain = RandomChain(free, 3, &rng, false);
  chain.start = {kMinusInf, kMinusInf};
  std::vector<int32_t> got(3);
  EXPECT_EQ(viterbi.Decode(free, chain.scores(), got.data()), kMinusInf);
}

TEST(SecondOrderViterbiTest, EmptyChainScoresZero) {
  std::mt19937 rng(7);
  const SecondOrderStructure structure = Unconstrained(3, &rng);
  const Chain chain = RandomChain(structure, 0, &rng, false);
  SecondOrderViterbi viterbi;
  EXPECT_EQ(viterbi.Decode(structure, chain.scores(), nullptr), 0.0);
}

TEST(SecondOrderViterbiTest, NoPairsNeedNoPairUnary) {
  std::mt19937 rng(8);
  absl::StatusOr<SecondOrderStructure> structure = SecondOrderStructure::Create(
      3, TransitionConstraints(), {{0, 1, 2}, {2, 2, 2}}, {});
  ASSERT_TRUE(structure.ok());
  for (int T = 1; T <= 5; ++T) {
    const Chain chain = RandomChain(*structure, T, &rng, false);
    ASSERT_EQ(chain.scores().pair_unary, nullptr);
    SecondOrderViterbi viterbi;
    ExpectViterbiMatches(*structure, chain, TransitionConstraints(), &viterbi);
  }
}

// Without trigram or pair weights the model is first order: long chains
// against ViterbiDecoder (with the same constraints as −∞ scores).
TEST(SecondOrderViterbiTest, FirstOrderModelMatchesViterbiDecoder) {
  std::mt19937 rng(9);
  const TransitionConstraints constraints(kIobesLabels, IOBES);
  absl::StatusOr<SecondOrderStructure> structure =
      SecondOrderStructure::Create(5, constraints, {}, {});
  ASSERT_TRUE(structure.ok());
  SecondOrderViterbi viterbi;
  ViterbiDecoder first_order;
  ConstrainedScoresBuffer buffer;
  for (int T : {1, 2, 3, 17, 100}) {
    const Chain chain = RandomChain(*structure, T, &rng, false);
    const ChainScores plain = {T,
                               5,
                               chain.unary.data(),
                               chain.transition.data(),
                               chain.start.data(),
                               chain.end.data()};
    absl::StatusOr<ChainScores> constrained = constraints.Apply(plain, &buffer);
    ASSERT_TRUE(constrained.ok());
    std::vector<int32_t> got(T), expected(T);
    const double score = viterbi.Decode(*structure, chain.scores(), got.data());
    EXPECT_NEAR(score, first_order.Decode(*constrained, expected.data()),
                1e-12 * T);
    EXPECT_EQ(got, expected) << "T " << T;
  }
}

// 21 labels, unconstrained: blocks of 21 targets, decoded 16 then 8
// (padded) at a time, against brute force on short chains and against
// ViterbiDecoder on a long first-order one.
TEST(SecondOrderViterbiTest, WideBlocksMatch) {
  std::mt19937 rng(10);
  SecondOrderViterbi viterbi;
  for (int T : {3, 4}) {
    const SecondOrderStructure structure = Unconstrained(21, &rng, 0.05);
    ExpectViterbiMatches(structure, RandomChain(structure, T, &rng, false),
                         TransitionConstraints(), &viterbi);
  }
  absl::StatusOr<SecondOrderStructure> first_order =
      SecondOrderStructure::Create(21, TransitionConstraints(), {}, {});
  ASSERT_TRUE(first_order.ok());
  const Chain chain = RandomChain(*first_order, 80, &rng, false);
  const ChainScores plain = {80,
                             21,
                             chain.unary.data(),
                             chain.transition.data(),
                             chain.start.data(),
                             chain.end.data()};
  std::vector<int32_t> got(80), expected(80);
  ViterbiDecoder decoder;
  EXPECT_NEAR(viterbi.Decode(*first_order, chain.scores(), got.data()),
              decoder.Decode(plain, expected.data()), 1e-10);
  EXPECT_EQ(got, expected);
}

}  // namespace
}  // namespace chaintag
