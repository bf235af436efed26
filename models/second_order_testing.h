// Random second-order chains for the tests of the lattice and its decoders
// (score tables owned by the test, viewed as SecondOrderScores), random
// structures with and without constraints, and the brute force they are
// checked against: every allowed labeling, scored by ScoreLabeling and sorted
// in SecondOrderTopK's documented order.
//
// Thread-safety: plain values and functions of their arguments.

#ifndef CHAINTAG_MODELS_SECOND_ORDER_TESTING_H_
#define CHAINTAG_MODELS_SECOND_ORDER_TESTING_H_

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "models/chain_scores_testing.h"
#include "models/second_order.h"
#include "models/transition_constraints.h"

namespace chaintag {
namespace second_order_testing {

inline constexpr double kMinusInf = -std::numeric_limits<double>::infinity();

inline const std::vector<std::string> kIob2Labels = {"O", "B-X", "I-X", "B-Y"};
inline const std::vector<std::string> kIobesLabels = {"O", "B-X", "I-X", "E-X",
                                                      "S-X"};

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

// Scores uniform in [−scale, scale], or in {-1, 0, 1} (many exact ties).
inline Chain RandomChain(const SecondOrderStructure& structure, int T,
                         std::mt19937* rng, bool integer_scores,
                         double scale = 2) {
  std::uniform_real_distribution<double> real(-scale, scale);
  std::uniform_int_distribution<int> small(-1, 1);
  return MakeChain(structure, T, [&] {
    return integer_scores ? static_cast<double>(small(*rng)) : real(*rng);
  });
}

// Each trigram and pair gets a weight with the given probability, in a
// shuffled weight order.
inline SecondOrderStructure RandomStructure(
    int L, const TransitionConstraints& constraints, double trigram_density,
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

inline SecondOrderStructure Unconstrained(int L, std::mt19937* rng,
                                          double density = 0.5) {
  return RandomStructure(L, TransitionConstraints(), density, density, rng);
}

// The independent validity oracle: the constraints' own check (no labels:
// no constraint).
inline bool Valid(const TransitionConstraints& constraints,
                  const std::vector<int32_t>& y) {
  return constraints.num_labels() == 0 ||
         constraints.IsValid(y.data(), static_cast<int>(y.size()));
}

// The documented tie order of SecondOrderTopK: (y_{T−2}, y_{T−1}, y_{T−3},
// …, y_0), compared lexicographically.
inline std::vector<int32_t> TieKey(const std::vector<int32_t>& y) {
  const int T = static_cast<int>(y.size());
  if (T < 2) return y;
  std::vector<int32_t> key = {y[T - 2], y[T - 1]};
  for (int t = T - 3; t >= 0; --t) key.push_back(y[t]);
  return key;
}

// The valid labelings of finite score, scored by ScoreLabeling, best first,
// ties by TieKey: what SecondOrderTopK must return.
inline std::vector<ScoredLabeling> BruteForce(
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
// real-valued, then (with `integer_too`) in {-1, 0, 1} for many ties.
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

}  // namespace second_order_testing
}  // namespace chaintag

#endif  // CHAINTAG_MODELS_SECOND_ORDER_TESTING_H_
