#include "models/viterbi.h"

#include <algorithm>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "models/chain_scores_testing.h"

namespace chaintag {
namespace {

// Every labeling in lexicographic order (label of position 0 most
// significant); returns the best score.
double BruteForce(const ChainScores& scores, std::vector<int32_t>* best) {
  const int T = scores.length, L = scores.num_labels;
  std::vector<int32_t> y(T, 0);
  double best_score = -1e300;
  while (true) {
    const double s = ScoreLabeling(scores, y.data());
    if (s > best_score) {
      best_score = s;
      *best = y;
    }
    int t = T - 1;
    while (t >= 0 && y[t] == L - 1) y[t--] = 0;
    if (t < 0) break;
    ++y[t];
  }
  return best_score;
}

TEST(ViterbiTest, MatchesBruteForceOnRandomTinyChains) {
  std::mt19937 rng(7);
  ViterbiDecoder decoder;
  for (int trial = 0; trial < 300; ++trial) {
    const int T = 1 + trial % 5, L = 1 + (trial / 5) % 4;
    RandomChain chain = MakeChain(T, L, &rng, /*integer_scores=*/false);
    std::vector<int32_t> expected, got(T);
    const double best = BruteForce(chain.scores(), &expected);
    EXPECT_NEAR(decoder.Decode(chain.scores(), got.data()), best, 1e-12);
    EXPECT_EQ(got, expected) << "T=" << T << " L=" << L;
  }
}

// Observation-conditioned transitions: per-position pair scores on top of
// the transitions, against the best labeling scored by hand.
TEST(ViterbiTest, PairScoresMatchBruteForce) {
  std::mt19937 rng(17);
  ViterbiDecoder decoder;
  for (int trial = 0; trial < 300; ++trial) {
    const int T = 1 + trial % 5, L = 2 + (trial / 5) % 3;
    const bool integer = trial % 2 == 1;
    const RandomChain chain = MakePairChain(T, L, &rng, integer);
    double best = -1e300;
    ForEachLabeling(T, L, [&](const std::vector<int32_t>& y) {
      best = std::max(best, HandScore(chain, y));
    });
    std::vector<int32_t> got(T);
    const double score = decoder.Decode(chain.scores(), got.data());
    EXPECT_NEAR(score, best, 1e-12) << "T=" << T << " L=" << L;
    EXPECT_NEAR(HandScore(chain, got), best, 1e-12);
    EXPECT_NEAR(ScoreLabeling(chain.scores(), got.data()), score, 1e-12);
  }
}

TEST(ViterbiTest, OptimalScoreWithManyTies) {
  // Integer scores in {-1, 0, 1} make ties common: the decoder must still
  // return an optimal labeling, and the same one every time.
  std::mt19937 rng(11);
  ViterbiDecoder decoder;
  for (int trial = 0; trial < 300; ++trial) {
    const int T = 1 + trial % 5, L = 1 + (trial / 5) % 4;
    RandomChain chain = MakeChain(T, L, &rng, /*integer_scores=*/true);
    std::vector<int32_t> expected, got(T), again(T);
    const double best = BruteForce(chain.scores(), &expected);
    const double score = decoder.Decode(chain.scores(), got.data());
    EXPECT_DOUBLE_EQ(score, best);
    EXPECT_DOUBLE_EQ(ScoreLabeling(chain.scores(), got.data()), best);
    decoder.Decode(chain.scores(), again.data());
    EXPECT_EQ(got, again);
  }
}

// Decoding over allowed transitions (lists; the table holds garbage, not
// −∞, where they forbid) finds the best allowed labeling by brute force,
// and exactly the labeling and score of the full decoder with −∞ written
// into the forbidden transitions, ties included (integer scores).
TEST(ViterbiTest, ListedTransitionsMatchBruteForceAndFullDecoder) {
  std::mt19937 rng(23);
  std::bernoulli_distribution coin(0.5);
  ViterbiDecoder listed, full;
  for (int trial = 0; trial < 600; ++trial) {
    const int T = 1 + trial % 5, L = 1 + (trial / 5) % 5;
    const bool integer = trial % 2 == 1;
    RandomChain chain = MakeChain(T, L, &rng, integer);
    std::vector<uint8_t> allowed(L * L);
    for (uint8_t& a : allowed) a = coin(rng);
    // Keep one allowed cycle (0 → 0) so that some labeling is allowed.
    allowed[0] = 1;
    const TransitionLists lists = TransitionLists::FromMask(allowed.data(), L);
    RandomChain masked = chain;
    for (int k = 0; k < L * L; ++k) {
      if (!allowed[k]) {
        chain.transition[k] = 1e6;  // never read by the listed decoder
        masked.transition[k] = -std::numeric_limits<double>::infinity();
      }
    }
    double best = -std::numeric_limits<double>::infinity();
    ForEachLabeling(T, L, [&](const std::vector<int32_t>& y) {
      for (int t = 1; t < T; ++t) {
        if (!allowed[y[t - 1] * L + y[t]]) return;
      }
      best = std::max(best, HandScore(chain, y));
    });
    ChainScores scores = chain.scores();
    scores.lists = &lists;
    std::vector<int32_t> got(T), expected(T);
    const double score = listed.Decode(scores, got.data());
    const double full_score = full.Decode(masked.scores(), expected.data());
    EXPECT_NEAR(score, best, 1e-12) << "T=" << T << " L=" << L;
    EXPECT_EQ(score, full_score);
    EXPECT_EQ(got, expected) << "T=" << T << " L=" << L;
  }
}

// DecodeListedAsReady asks for each position once, in order, before it
// reads that position's unary scores (NaN until then), and decodes as
// Decode; a chain of length 0 scores 0 and asks for nothing.
TEST(ViterbiTest, DecodeListedAsReadyAsksForEachPositionInOrder) {
  std::mt19937 rng(29);
  const int T = 6, L = 4;
  RandomChain chain = MakeChain(T, L, &rng, /*integer=*/false);
  std::vector<uint8_t> allowed(L * L, 1);
  allowed[1] = allowed[L + 2] = 0;
  const TransitionLists lists = TransitionLists::FromMask(allowed.data(), L);
  ChainScores scores = chain.scores();
  scores.lists = &lists;
  std::vector<int32_t> expected(T), got(T);
  ViterbiDecoder decoder;
  const double expected_score = decoder.Decode(scores, expected.data());
  std::vector<double> unary(T * L, std::numeric_limits<double>::quiet_NaN());
  ChainScores arriving = scores;
  arriving.unary = unary.data();
  std::vector<int> asked;
  const double score =
      decoder.DecodeListedAsReady(arriving, got.data(), [&](int t) {
        asked.push_back(t);
        std::copy(chain.unary.begin() + t * L,
                  chain.unary.begin() + (t + 1) * L, unary.begin() + t * L);
      });
  EXPECT_EQ(asked, (std::vector<int>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(score, expected_score);
  EXPECT_EQ(got, expected);
  RandomChain empty{0, L, {}, chain.transition, chain.start, chain.end};
  ChainScores none = empty.scores();
  none.lists = &lists;
  asked.clear();
  EXPECT_EQ(decoder.DecodeListedAsReady(none, nullptr,
                                        [&](int t) { asked.push_back(t); }),
            0.0);
  EXPECT_TRUE(asked.empty());
}

TEST(ViterbiTest, AllTiedPicksLowestLabels) {
  RandomChain chain{3,
                    3,
                    std::vector<double>(9, 0.0),
                    std::vector<double>(9, 0.0),
                    std::vector<double>(3, 0.0),
                    std::vector<double>(3, 0.0)};
  ViterbiDecoder decoder;
  std::vector<int32_t> got(3);
  decoder.Decode(chain.scores(), got.data());
  EXPECT_EQ(got, (std::vector<int32_t>{0, 0, 0}));
}

TEST(ViterbiTest, HandComputedChain) {
  // T=2, L=2: unary favours label 1 then 0, the transition 1->0 is
  // penalised so that 1,1 wins: scores 0,0: 0; 0,1: -1+... (see below).
  RandomChain chain{2, 2, {0, 1, 1, 0}, {0, 0, -5, 0}, {0, 0}, {0, 0}};
  // y=(0,0): 0+1=1; (0,1): 0+0=0; (1,0): 1+1-5=-3; (1,1): 1+0=1.
  // Tie between (0,0) and (1,1): lowest previous label wins -> (0,0).
  ViterbiDecoder decoder;
  std::vector<int32_t> got(2);
  EXPECT_DOUBLE_EQ(decoder.Decode(chain.scores(), got.data()), 1.0);
  EXPECT_EQ(got, (std::vector<int32_t>{0, 0}));
}

TEST(ViterbiTest, EmptyChain) {
  RandomChain chain{0, 2, {}, {0, 0, 0, 0}, {0, 0}, {0, 0}};
  ViterbiDecoder decoder;
  EXPECT_EQ(decoder.Decode(chain.scores(), nullptr), 0.0);
}

}  // namespace
}  // namespace chaintag
