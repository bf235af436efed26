#include "models/top_k_viterbi.h"

#include <algorithm>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "models/chain_scores_testing.h"
#include "models/viterbi.h"

namespace chaintag {
namespace {

using Scored = ScoredLabeling;

void ExpectMatchesBruteForce(const RandomChain& chain, int k,
                             TopKViterbi* decoder) {
  const int T = chain.length;
  const std::vector<Scored> all = SortedLabelings(chain.scores());
  std::vector<int32_t> labelings;
  std::vector<double> scores;
  const int m = decoder->Decode(chain.scores(), k, &labelings, &scores);
  const int expected_m = std::min<int>(k, static_cast<int>(all.size()));
  ASSERT_EQ(m, expected_m) << "T=" << T << " L=" << chain.num_labels
                           << " k=" << k;
  ASSERT_EQ(labelings.size(), static_cast<size_t>(m) * T);
  ASSERT_EQ(scores.size(), static_cast<size_t>(m));
  for (int j = 0; j < m; ++j) {
    const std::vector<int32_t> row(labelings.begin() + j * T,
                                   labelings.begin() + (j + 1) * T);
    EXPECT_NEAR(scores[j], all[j].score, 1e-12) << "rank " << j;
    EXPECT_EQ(row, all[j].labels) << "rank " << j << " T=" << T
                                  << " L=" << chain.num_labels << " k=" << k;
    EXPECT_NEAR(scores[j], ScoreLabeling(chain.scores(), row.data()), 1e-12);
  }
}

TEST(TopKViterbiTest, MatchesBruteForceOnRandomTinyChains) {
  std::mt19937 rng(11);
  TopKViterbi decoder;  // Reused across sizes on purpose: scratch must adapt.
  for (int trial = 0; trial < 200; ++trial) {
    const int T = 1 + trial % 5, L = 1 + (trial / 5) % 4;
    const RandomChain chain = MakeChain(T, L, &rng, /*integer_scores=*/false);
    int total = 1;
    for (int t = 0; t < T; ++t) total *= L;
    for (int k : {1, 2, 3, 5, 10, total, total + 1, total + 7}) {
      ExpectMatchesBruteForce(chain, k, &decoder);
    }
  }
}

// With pair scores: the K best scores are the K largest hand-computed
// scores, and each row scores what the decoder says.
TEST(TopKViterbiTest, PairScoresGiveTheKBestScores) {
  std::mt19937 rng(19);
  TopKViterbi decoder;
  for (int trial = 0; trial < 200; ++trial) {
    const int T = 1 + trial % 5, L = 2 + (trial / 5) % 3;
    const RandomChain chain = MakePairChain(T, L, &rng, trial % 2 == 1);
    std::vector<double> all;
    ForEachLabeling(T, L, [&](const std::vector<int32_t>& y) {
      all.push_back(HandScore(chain, y));
    });
    std::sort(all.rbegin(), all.rend());
    const int total = static_cast<int>(all.size());
    for (int k : {1, 2, 3, 7, total, total + 2}) {
      std::vector<int32_t> labelings;
      std::vector<double> scores;
      const int m = decoder.Decode(chain.scores(), k, &labelings, &scores);
      ASSERT_EQ(m, std::min(k, total)) << "T=" << T << " L=" << L;
      std::vector<std::vector<int32_t>> rows;
      for (int j = 0; j < m; ++j) {
        rows.emplace_back(labelings.begin() + j * T,
                          labelings.begin() + (j + 1) * T);
        EXPECT_NEAR(scores[j], all[j], 1e-12) << "rank " << j;
        EXPECT_NEAR(HandScore(chain, rows.back()), scores[j], 1e-12);
      }
      std::sort(rows.begin(), rows.end());
      EXPECT_EQ(std::unique(rows.begin(), rows.end()), rows.end());
    }
  }
}

TEST(TopKViterbiTest, FollowsTheTieRuleExactlyOnIntegerScores) {
  std::mt19937 rng(12);
  TopKViterbi decoder;
  for (int trial = 0; trial < 400; ++trial) {
    const int T = 1 + trial % 5, L = 1 + (trial / 5) % 4;
    const RandomChain chain = MakeChain(T, L, &rng, /*integer_scores=*/true);
    int total = 1;
    for (int t = 0; t < T; ++t) total *= L;
    for (int k : {1, 2, 3, 5, 10, total, total + 3}) {
      ExpectMatchesBruteForce(chain, k, &decoder);
    }
  }
}

TEST(TopKViterbiTest, AllTiedListsReversedLexicographically) {
  const RandomChain chain{3,
                          2,
                          std::vector<double>(6, 0.0),
                          std::vector<double>(4, 0.0),
                          std::vector<double>(2, 0.0),
                          std::vector<double>(2, 0.0)};
  TopKViterbi decoder;
  std::vector<int32_t> labelings;
  std::vector<double> scores;
  ASSERT_EQ(decoder.Decode(chain.scores(), 8, &labelings, &scores), 8);
  EXPECT_EQ(labelings,
            (std::vector<int32_t>{0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0,
                                  0, 0, 1, 1, 0, 1, 0, 1, 1, 1, 1, 1}));
  EXPECT_EQ(scores, std::vector<double>(8, 0.0));
}

TEST(TopKViterbiTest, KOneIsViterbiBitForBit) {
  std::mt19937 rng(13);
  TopKViterbi top_k;
  ViterbiDecoder viterbi;
  for (int trial = 0; trial < 600; ++trial) {
    const int T = 1 + trial % 12, L = 1 + (trial / 12) % 6;
    const bool integer_scores = trial % 2 == 0;
    const RandomChain chain = MakeChain(T, L, &rng, integer_scores);
    std::vector<int32_t> expected(T), labelings;
    std::vector<double> scores;
    const double best = viterbi.Decode(chain.scores(), expected.data());
    ASSERT_EQ(top_k.Decode(chain.scores(), 1, &labelings, &scores), 1);
    EXPECT_EQ(scores[0], best);
    EXPECT_EQ(labelings, expected) << "trial " << trial;
  }
}

TEST(TopKViterbiTest, FirstRowIsViterbiForAnyK) {
  std::mt19937 rng(14);
  TopKViterbi top_k;
  ViterbiDecoder viterbi;
  for (int trial = 0; trial < 200; ++trial) {
    const int T = 1 + trial % 8, L = 1 + (trial / 8) % 5;
    const RandomChain chain = MakeChain(T, L, &rng, /*integer_scores=*/true);
    std::vector<int32_t> expected(T), labelings;
    std::vector<double> scores;
    const double best = viterbi.Decode(chain.scores(), expected.data());
    ASSERT_GE(top_k.Decode(chain.scores(), 4, &labelings, &scores), 1);
    EXPECT_EQ(scores[0], best);
    EXPECT_EQ(std::vector<int32_t>(labelings.begin(), labelings.begin() + T),
              expected);
  }
}

TEST(TopKViterbiTest, EmptyChainHasOneEmptyLabeling) {
  const RandomChain chain{0,
                          3,
                          {},
                          std::vector<double>(9, 1.0),
                          std::vector<double>(3, 1.0),
                          std::vector<double>(3, 1.0)};
  TopKViterbi decoder;
  std::vector<int32_t> labelings = {7, 7};
  std::vector<double> scores;
  EXPECT_EQ(decoder.Decode(chain.scores(), 5, &labelings, &scores), 1);
  EXPECT_TRUE(labelings.empty());
  EXPECT_EQ(scores, std::vector<double>{0.0});
}

TEST(TopKViterbiTest, SinglePositionSortsUnaryPlusStartPlusEnd) {
  // Scores 3, 5, 3, 4: the tie between labels 0 and 2 goes to label 0.
  const RandomChain chain{
      1,           4, {1, 2, 3, 4}, std::vector<double>(16, 9.0), {1, 1, 0, 0},
      {1, 2, 0, 0}};
  TopKViterbi decoder;
  std::vector<int32_t> labelings;
  std::vector<double> scores;
  EXPECT_EQ(decoder.Decode(chain.scores(), 10, &labelings, &scores), 4);
  EXPECT_EQ(labelings, (std::vector<int32_t>{1, 3, 0, 2}));
  EXPECT_EQ(scores, (std::vector<double>{5, 4, 3, 3}));
}

TEST(TopKViterbiTest, NonPositiveKReturnsNothing) {
  std::mt19937 rng(15);
  const RandomChain chain = MakeChain(3, 2, &rng, false);
  TopKViterbi decoder;
  std::vector<int32_t> labelings = {1, 2, 3};
  std::vector<double> scores = {1.0};
  EXPECT_EQ(decoder.Decode(chain.scores(), 0, &labelings, &scores), 0);
  EXPECT_TRUE(labelings.empty());
  EXPECT_TRUE(scores.empty());
  EXPECT_EQ(decoder.Decode(chain.scores(), -2, &labelings, &scores), 0);
}

// A labeling scoring −∞ (a forbidden start, transition or end, as the
// tag-scheme constraints write them) is never returned: with K above the
// number of finite labelings, exactly those come back, in brute-force order.
TEST(TopKViterbiTest, NeverReturnsMinusInfinityLabelings) {
  constexpr double kMinusInf = -std::numeric_limits<double>::infinity();
  std::mt19937 rng(17);
  TopKViterbi decoder;
  std::bernoulli_distribution forbid(0.4);
  for (int trial = 0; trial < 300; ++trial) {
    const int T = 1 + trial % 5, L = 1 + (trial / 5) % 4;
    RandomChain chain = MakeChain(T, L, &rng, /*integer_scores=*/trial % 2);
    for (double& s : chain.transition) {
      if (forbid(rng)) s = kMinusInf;
    }
    for (double& s : chain.start) {
      if (forbid(rng)) s = kMinusInf;
    }
    for (double& s : chain.end) {
      if (forbid(rng)) s = kMinusInf;
    }
    std::vector<Scored> finite;
    for (Scored& s : SortedLabelings(chain.scores())) {
      if (s.score != kMinusInf) finite.push_back(std::move(s));
    }
    int total = 1;
    for (int t = 0; t < T; ++t) total *= L;
    for (int k : {1, 2, 3, static_cast<int>(finite.size()),
                  static_cast<int>(finite.size()) + 1, total, total + 4}) {
      std::vector<int32_t> labelings;
      std::vector<double> scores;
      const int m = decoder.Decode(chain.scores(), k, &labelings, &scores);
      const int expected_m = std::min<int>(k, static_cast<int>(finite.size()));
      ASSERT_EQ(m, expected_m) << "trial " << trial << " k=" << k;
      ASSERT_EQ(labelings.size(), static_cast<size_t>(m) * T);
      ASSERT_EQ(scores.size(), static_cast<size_t>(m));
      for (int j = 0; j < m; ++j) {
        const std::vector<int32_t> row(labelings.begin() + j * T,
                                       labelings.begin() + (j + 1) * T);
        EXPECT_EQ(row, finite[j].labels) << "trial " << trial << " rank " << j;
        EXPECT_NEAR(scores[j], finite[j].score, 1e-12);
      }
    }
  }
}

TEST(TopKViterbiTest, NoFiniteLabelingReturnsNothing) {
  constexpr double kMinusInf = -std::numeric_limits<double>::infinity();
  // Label 0 may not start, label 1 may not end, 0 -> 1 and 1 -> 0 are
  // forbidden: no labeling of length 1 or 2 is finite.
  const RandomChain chain{2,
                          2,
                          {1, 2, 3, 4},
                          {0, kMinusInf, kMinusInf, 0},
                          {kMinusInf, 0},
                          {0, kMinusInf}};
  TopKViterbi decoder;
  std::vector<int32_t> labelings = {5};
  std::vector<double> scores = {5.0};
  EXPECT_EQ(decoder.Decode(chain.scores(), 3, &labelings, &scores), 0);
  EXPECT_TRUE(labelings.empty());
  EXPECT_TRUE(scores.empty());
  RandomChain single = chain;
  single.length = 1;
  EXPECT_EQ(decoder.Decode(single.scores(), 3, &labelings, &scores), 0);
  EXPECT_TRUE(labelings.empty());
  EXPECT_TRUE(scores.empty());
}

TEST(TopKViterbiTest, LongChainRowsAreDistinctSortedAndScoredRight) {
  std::mt19937 rng(16);
  const RandomChain chain = MakeChain(200, 7, &rng, /*integer_scores=*/true);
  TopKViterbi decoder;
  std::vector<int32_t> labelings;
  std::vector<double> scores;
  const int T = chain.length;
  ASSERT_EQ(decoder.Decode(chain.scores(), 50, &labelings, &scores), 50);
  std::vector<std::vector<int32_t>> rows;
  for (int j = 0; j < 50; ++j) {
    rows.emplace_back(labelings.begin() + j * T,
                      labelings.begin() + (j + 1) * T);
    EXPECT_EQ(scores[j], ScoreLabeling(chain.scores(), rows.back().data()));
    if (j > 0) {
      EXPECT_GE(scores[j - 1], scores[j]);
    }
  }
  std::sort(rows.begin(), rows.end());
  EXPECT_EQ(std::adjacent_find(rows.begin(), rows.end()), rows.end());
}

}  // namespace
}  // namespace chaintag
