#include "models/second_order.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "models/chain_scores_testing.h"
#include "models/smoothing.h"
#include "models/transition_constraints.h"
#include "models/viterbi.h"

namespace chaintag {
namespace {

constexpr double kMinusInf = -std::numeric_limits<double>::infinity();

const std::vector<std::string> kIob2Labels = {"O", "B-X", "I-X", "B-Y"};
const std::vector<std::string> kIobesLabels = {"O", "B-X", "I-X", "E-X", "S-X"};

// --- fixtures ----------------------------------------------------------------

// One sentence's score tables, owned, viewed as SecondOrderScores.
struct Chain {
  int length = 0;
  std::vector<double> unary, transition, start, end, trigram, pair_unary;

  SecondOrderScores scores() const {
    SecondOrderScores view;
    view.length = length;
    view.unary = unary.data();
    view.transition = transition.data();
    view.start = start.data();
    view.end = end.data();
    view.trigram = trigram.data();
    view.pair_unary = pair_unary.empty() ? nullptr : pair_unary.data();
    return view;
  }
  // The tables a gradient check perturbs, in the order of the marginals'
  // blocks (see BlockOffsets).
  std::vector<std::vector<double>*> tables() {
    return {&unary, &pair_unary, &transition, &start, &end, &trigram};
  }
};

// Every score drawn by `draw()`, table by table in Chain's order.
template <typename Draw>
Chain MakeChain(const SecondOrderStructure& structure, int T, Draw draw) {
  const int L = structure.num_labels();
  Chain chain;
  chain.length = T;
  auto fill = [&](std::vector<double>* table, size_t size) {
    for (size_t i = 0; i < size; ++i) table->push_back(draw());
  };
  fill(&chain.unary, static_cast<size_t>(T) * L);
  fill(&chain.transition, static_cast<size_t>(L) * L);
  fill(&chain.start, L);
  fill(&chain.end, L);
  fill(&chain.trigram, structure.num_trigrams());
  fill(&chain.pair_unary, static_cast<size_t>(T) * structure.num_pairs());
  return chain;
}

// Scores uniform in [−scale, scale], or in {−1, 0, 1} (many exact ties).
Chain RandomChain(const SecondOrderStructure& structure, int T,
                  std::mt19937* rng, bool integer_scores, double scale = 2) {
  std::uniform_real_distribution<double> real(-scale, scale);
  std::uniform_int_distribution<int> small(-1, 1);
  return MakeChain(structure, T, [&] {
    return integer_scores ? static_cast<double>(small(*rng)) : real(*rng);
  });
}

// Each trigram and pair gets a weight with the given probability, in a
// shuffled weight order.
SecondOrderStructure RandomStructure(int L,
                                     const TransitionConstraints& constraints,
                                     double trigram_density,
                                     double pair_density, std::mt19937* rng) {
  std::bernoulli_distribution take_trigram(trigram_density);
  std::bernoulli_distribution take_pair(pair_density);
  std::vector<LabelTrigram> trigrams;
  std::vector<LabelPair> pairs;
  for (int a = 0; a < L; ++a) {
    for (int b = 0; b < L; ++b) {
      if (take_pair(*rng)) pairs.push_back({a, b});
      for (int c = 0; c < L; ++c) {
        if (take_trigram(*rng)) trigrams.push_back({a, b, c});
      }
    }
  }
  std::shuffle(trigrams.begin(), trigrams.end(), *rng);
  std::shuffle(pairs.begin(), pairs.end(), *rng);
  absl::StatusOr<SecondOrderStructure> structure = SecondOrderStructure::Create(
      L, constraints, std::move(trigrams), std::move(pairs));
  EXPECT_TRUE(structure.ok()) << structure.status();
  return *std::move(structure);
}

SecondOrderStructure Unconstrained(int L, std::mt19937* rng,
                                   double density = 0.5) {
  return RandomStructure(L, TransitionConstraints(), density, density, rng);
}

// The independent validity oracle: the constraints' own check (no labels:
// no constraint).
bool Valid(const TransitionConstraints& constraints,
           const std::vector<int32_t>& y) {
  return constraints.num_labels() == 0 ||
         constraints.IsValid(y.data(), static_cast<int>(y.size()));
}

// The documented tie order of SecondOrderTopK: (y_{T−2}, y_{T−1}, y_{T−3},
// …, y_0), compared lexicographically.
std::vector<int32_t> TieKey(const std::vector<int32_t>& y) {
  const int T = static_cast<int>(y.size());
  if (T < 2) return y;
  std::vector<int32_t> key = {y[T - 2], y[T - 1]};
  for (int t = T - 3; t >= 0; --t) key.push_back(y[t]);
  return key;
}

// The valid labelings of finite score, scored by ScoreLabeling, best first,
// ties by TieKey: what SecondOrderTopK must return.
std::vector<ScoredLabeling> BruteForce(
    const SecondOrderStructure& structure, const Chain& chain,
    const TransitionConstraints& constraints = TransitionConstraints()) {
  std::vector<ScoredLabeling> all;
  ForEachLabeling(
      chain.length, structure.num_labels(), [&](const std::vector<int32_t>& y) {
        if (!Valid(constraints, y)) return;
        const double score = ScoreLabeling(structure, chain.scores(), y.data());
        if (score != kMinusInf) all.push_back({score, y});
      });
  std::sort(all.begin(), all.end(),
            [](const ScoredLabeling& a, const ScoredLabeling& b) {
              if (a.score != b.score) return a.score > b.score;
              return TieKey(a.labels) < TieKey(b.labels);
            });
  return all;
}

// Calls check(structure, chain, constraints) on `trials` random tiny
// chains per seed, without constraints: T = 0 … 5 positions over L = 1 … 4
// labels, with none, some or all trigrams and pairs weighted, and scores
// real-valued, then (with `integer_too`) in {−1, 0, 1} for many ties.
template <typename Check>
void ForTinyChains(const std::vector<unsigned>& seeds, int trials,
                   bool integer_too, Check check) {
  for (unsigned seed : seeds) {
    std::mt19937 rng(seed);
    for (int trial = 0; trial < trials; ++trial) {
      const int T = trial % 6, L = 1 + (trial / 6) % 4;
      const double density = std::vector<double>{0, 0.3, 1}[trial % 3];
      const SecondOrderStructure structure = Unconstrained(L, &rng, density);
      for (bool integer_scores : {false, true}) {
        if (integer_scores && !integer_too) continue;
        SCOPED_TRACE(testing::Message() << "seed " << seed << " trial " << trial
                                        << " integer " << integer_scores);
        check(structure, RandomChain(structure, T, &rng, integer_scores),
              TransitionConstraints());
      }
    }
  }
}

// The same under IOB2 over {O, B-X, I-X, B-Y} and IOBES over {O, B-X, I-X,
// E-X, S-X}: `trials` chains each, integer scores on even trials.
template <typename Check>
void ForConstrainedChains(unsigned seed, int trials, Check check) {
  std::mt19937 rng(seed);
  for (const auto& [labels, scheme] : {std::make_pair(kIob2Labels, IOB2),
                                       std::make_pair(kIobesLabels, IOBES)}) {
    const TransitionConstraints constraints(labels, scheme);
    const int L = static_cast<int>(labels.size());
    for (int trial = 0; trial < trials; ++trial) {
      const SecondOrderStructure structure =
          RandomStructure(L, constraints, 0.4, 0.4, &rng);
      SCOPED_TRACE(testing::Message()
                   << "scheme " << scheme << " trial " << trial);
      check(structure,
            RandomChain(structure, trial % 6, &rng, trial % 2 == 0, 4),
            constraints);
    }
  }
}

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
  // L = 2, trigram (0, 1, 1) weighted 5 and (1, 1, 0) weighted −3 (weight
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
  // at t = 2: 0.125, trigrams (0, 1, 1): 5 and (1, 1, 0): −3, end 1000.
  EXPECT_EQ(ScoreLabeling(*structure, chain.scores(), y.data()),
            100 + 18 + 90 + 0.125 + 2 + 1000);
  EXPECT_EQ(ScoreLabeling(*structure, Chain().scores(), nullptr), 0.0);
}

// --- Viterbi -----------------------------------------------------------------

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

// --- top K -------------------------------------------------------------------

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

// --- forward–backward --------------------------------------------------------

// Where each block of the marginals starts, in Chain::tables() order.
std::vector<size_t> BlockOffsets(const SecondOrderStructure& structure, int T) {
  const size_t L = structure.num_labels(), P = structure.num_pairs();
  const size_t unary = 0, pair = T * L, bigram = pair + T * P;
  const size_t start = bigram + L * L, end = start + L, trigram = end + L;
  return {unary, pair, bigram, start, end, trigram};
}

// μ·log Z over the valid labelings and the marginals, by enumeration.
double BruteForceSmoothing(const SecondOrderStructure& structure,
                           const Chain& chain,
                           const TransitionConstraints& constraints, double mu,
                           std::vector<double>* marginals) {
  const int T = chain.length, L = structure.num_labels();
  const int P = structure.num_pairs();
  const std::vector<ScoredLabeling> all =
      BruteForce(structure, chain, constraints);
  double top = kMinusInf;
  for (const ScoredLabeling& s : all) top = std::max(top, s.score / mu);
  double z = 0;
  for (const ScoredLabeling& s : all) z += std::exp(s.score / mu - top);
  const double log_z = top + std::log(z);
  marginals->assign(SecondOrderForwardBackward::MarginalsSize(structure, T),
                    0.0);
  const std::vector<size_t> at = BlockOffsets(structure, T);
  double* m = marginals->data();
  for (const ScoredLabeling& s : all) {
    const double p = std::exp(s.score / mu - log_z);
    const std::vector<int32_t>& y = s.labels;
    for (int t = 0; t < T; ++t) {
      m[at[0] + t * L + y[t]] += p;
      if (t >= 1) {
        const int32_t column = structure.pair_index(y[t - 1], y[t]);
        if (column >= 0) m[at[1] + t * P + column] += p;
        m[at[2] + y[t - 1] * L + y[t]] += p;
      }
      if (t >= 2) {
        const int32_t k = structure.trigram_index(y[t - 2], y[t - 1], y[t]);
        if (k >= 0) m[at[5] + k] += p;
      }
    }
    if (T > 0) {
      m[at[3] + y[0]] += p;
      m[at[4] + y[T - 1]] += p;
    }
  }
  return mu * log_z;
}

// Compute, with and without marginals, against the enumeration: the value
// to `tolerance` relative, each marginal to `tolerance` relative plus
// `absolute` (by default 0: the enumeration's zeros, forbidden pairs,
// trigrams and labels, exactly).
void ExpectSmoothingMatches(const SecondOrderStructure& structure,
                            const Chain& chain,
                            const TransitionConstraints& constraints, double mu,
                            double tolerance, double absolute = 0) {
  std::vector<double> expected;
  const double expected_value =
      BruteForceSmoothing(structure, chain, constraints, mu, &expected);
  SecondOrderForwardBackward fb;
  std::vector<double> marginals(expected.size(), -7.0);
  const double value =
      fb.Compute(structure, chain.scores(), mu, marginals.data());
  EXPECT_NEAR(value, expected_value, tolerance * std::abs(expected_value))
      << "mu " << mu;
  EXPECT_EQ(fb.Compute(structure, chain.scores(), mu, nullptr), value);
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_GE(marginals[i], 0.0) << "entry " << i;
    EXPECT_LE(std::abs(marginals[i] - expected[i]),
              tolerance * expected[i] + absolute)
        << "entry " << i << ": " << marginals[i] << " vs " << expected[i]
        << " mu " << mu;
  }
}

TEST(SecondOrderForwardBackwardTest, MatchesBruteForceOnRandomTinyChains) {
  ForTinyChains({21, 22, 23}, 120, /*integer_too=*/false,
                [](const SecondOrderStructure& structure, const Chain& chain,
                   const TransitionConstraints& constraints) {
                  for (double mu : {0.1, 0.5, 1.0, 3.0, 100.0}) {
                    ExpectSmoothingMatches(structure, chain, constraints, mu,
                                           1e-12);
                  }
                });
}

// μ = 1e−3 against scores of size 10: factors down to e^−20000, so the
// blocks' sums of products underflow and fall back to log-sum-exp. The
// marginals' condition number is ~|score|/μ ~ 1e5, so both computations
// agree to ~1e5 ulps.
TEST(SecondOrderForwardBackwardTest, SmallMuMatchesBruteForce) {
  std::mt19937 rng(24);
  const TransitionConstraints iob2(kIob2Labels, IOB2);
  for (int trial = 0; trial < 60; ++trial) {
    const int T = 1 + trial % 5, L = 4;
    const SecondOrderStructure structure =
        trial % 2 == 0 ? Unconstrained(L, &rng, 0.4)
                       : RandomStructure(L, iob2, 0.4, 0.4, &rng);
    const TransitionConstraints& constraints =
        trial % 2 == 0 ? TransitionConstraints() : iob2;
    const Chain chain = RandomChain(structure, T, &rng, false, 10);
    for (double mu : {1e-3, 1e-2}) {
      SCOPED_TRACE(testing::Message() << "trial " << trial);
      ExpectSmoothingMatches(structure, chain, constraints, mu, 1e-10, 1e-300);
    }
  }
}

TEST(SecondOrderForwardBackwardTest, ConstrainedMatchesBruteForce) {
  ForConstrainedChains(
      25, 40,
      [](const SecondOrderStructure& structure, const Chain& chain,
         const TransitionConstraints& constraints) {
        for (double mu : {0.2, 1.0, 1e3}) {
          ExpectSmoothingMatches(structure, chain, constraints, mu, 1e-12);
        }
      });
}

TEST(SecondOrderForwardBackwardTest, GradientOfTheValueIsTheMarginals) {
  std::mt19937 rng(26);
  const TransitionConstraints iob2(kIob2Labels, IOB2);
  SecondOrderForwardBackward fb;
  const double h = 1e-5;
  for (int trial = 0; trial < 24; ++trial) {
    const int T = 1 + trial % 5;
    const SecondOrderStructure structure =
        trial % 2 == 0 ? Unconstrained(3, &rng, 0.5)
                       : RandomStructure(4, iob2, 0.5, 0.5, &rng);
    const double mu = 0.4 + trial % 3;
    Chain chain = RandomChain(structure, T, &rng, false, 1.5);
    std::vector<double> marginals(
        SecondOrderForwardBackward::MarginalsSize(structure, T));
    fb.Compute(structure, chain.scores(), mu, marginals.data());
    const std::vector<size_t> offsets = BlockOffsets(structure, T);
    const std::vector<std::vector<double>*> tables = chain.tables();
    for (size_t block = 0; block < tables.size(); ++block) {
      std::vector<double>& values = *tables[block];
      // A few entries of each table, including the first and the last.
      for (size_t i = 0; i < values.size(); i += 1 + values.size() / 4) {
        for (size_t entry : {i, values.size() - 1}) {
          const double saved = values[entry];
          values[entry] = saved + h;
          const double plus =
              fb.Compute(structure, chain.scores(), mu, nullptr);
          values[entry] = saved - h;
          const double minus =
              fb.Compute(structure, chain.scores(), mu, nullptr);
          values[entry] = saved;
          EXPECT_NEAR((plus - minus) / (2 * h),
                      marginals[offsets[block] + entry], 1e-7)
              << "trial " << trial << " block " << block << " entry " << entry;
        }
      }
    }
  }
}

TEST(SecondOrderForwardBackwardTest, EmptyChainScoresZero) {
  std::mt19937 rng(27);
  const SecondOrderStructure structure = Unconstrained(3, &rng);
  const Chain chain = RandomChain(structure, 0, &rng, false);
  SecondOrderForwardBackward fb;
  std::vector<double> marginals(
      SecondOrderForwardBackward::MarginalsSize(structure, 0), -1.0);
  EXPECT_EQ(marginals.size(), 9 + 6 + structure.num_trigrams());
  EXPECT_EQ(fb.Compute(structure, chain.scores(), 0.5, marginals.data()), 0.0);
  EXPECT_EQ(marginals, std::vector<double>(marginals.size(), 0.0));
}

// Without trigram or pair weights the model is first order: long chains,
// tiny μ, against ForwardBackward (with the constraints as −∞ scores).
TEST(SecondOrderForwardBackwardTest, FirstOrderModelMatchesForwardBackward) {
  std::mt19937 rng(28);
  const TransitionConstraints constraints(kIobesLabels, IOBES);
  absl::StatusOr<SecondOrderStructure> structure =
      SecondOrderStructure::Create(5, constraints, {}, {});
  ASSERT_TRUE(structure.ok());
  SecondOrderForwardBackward fb;
  ForwardBackward first_order;
  ConstrainedScoresBuffer buffer;
  for (int T : {1, 2, 3, 40, 300}) {
    for (double mu : {1e-3, 1.0, 1e3}) {
      const Chain chain = RandomChain(*structure, T, &rng, false, 10);
      const ChainScores plain = {T,
                                 5,
                                 chain.unary.data(),
                                 chain.transition.data(),
                                 chain.start.data(),
                                 chain.end.data()};
      absl::StatusOr<ChainScores> constrained =
          constraints.Apply(plain, &buffer);
      ASSERT_TRUE(constrained.ok());
      std::vector<double> marginals(
          SecondOrderForwardBackward::MarginalsSize(*structure, T));
      std::vector<double> expected(T * 5 + 25 + 10);
      const double value =
          fb.Compute(*structure, chain.scores(), mu, marginals.data());
      const double expected_value =
          first_order.ComputeInLogSpace(*constrained, mu, expected.data());
      SCOPED_TRACE(testing::Message() << "T " << T << " mu " << mu);
      EXPECT_NEAR(value, expected_value, 1e-12 * std::abs(expected_value));
      // Same layout but for the empty pair block (no pairs).
      const double tolerance = mu < 1 ? 1e-9 : 1e-11;
      for (size_t i = 0; i < expected.size(); ++i) {
        EXPECT_NEAR(marginals[i], expected[i], tolerance * expected[i] + 1e-300)
            << "entry " << i;
      }
    }
  }
}

// 21 labels: rows of 21 edges padded to 24, against brute force on a short
// chain with trigrams and against ForwardBackward on a long first-order one.
TEST(SecondOrderForwardBackwardTest, WideBlocksMatch) {
  std::mt19937 rng(29);
  const SecondOrderStructure structure = Unconstrained(21, &rng, 0.05);
  ExpectSmoothingMatches(structure, RandomChain(structure, 3, &rng, false),
                         TransitionConstraints(), 0.7, 1e-12);
  absl::StatusOr<SecondOrderStructure> first_order =
      SecondOrderStructure::Create(21, TransitionConstraints(), {}, {});
  ASSERT_TRUE(first_order.ok());
  const int T = 40;
  const Chain chain = RandomChain(*first_order, T, &rng, false);
  const ChainScores plain = {T,
                             21,
                             chain.unary.data(),
                             chain.transition.data(),
                             chain.start.data(),
                             chain.end.data()};
  SecondOrderForwardBackward fb;
  ForwardBackward reference;
  std::vector<double> marginals(
      SecondOrderForwardBackward::MarginalsSize(*first_order, T));
  std::vector<double> expected(marginals.size());
  EXPECT_NEAR(fb.Compute(*first_order, chain.scores(), 0.5, marginals.data()),
              reference.ComputeInLogSpace(plain, 0.5, expected.data()), 1e-10);
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(marginals[i], expected[i], 1e-11 * expected[i] + 1e-300)
        << "entry " << i;
  }
}

}  // namespace
}  // namespace chaintag
