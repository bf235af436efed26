// Random chains for the decoder and smoothing tests (score tables owned by
// the test, viewed as ChainScores), and the brute force they are checked
// against: every labeling, scored and sorted.
//
// Thread-safety: plain values.

#ifndef CHAINTAG_MODELS_CHAIN_SCORES_TESTING_H_
#define CHAINTAG_MODELS_CHAIN_SCORES_TESTING_H_

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "models/viterbi.h"

namespace chaintag {

struct RandomChain {
  int length, num_labels;
  std::vector<double> unary, transition, start, end;
  // Empty, or length × L × L pair scores (ChainScores::pair).
  std::vector<double> pair = {};
  ChainScores scores() const {
    ChainScores scores{length,       num_labels,
                       unary.data(), transition.data(),
                       start.data(), end.data()};
    if (!pair.empty()) scores.pair = pair.data();
    return scores;
  }
};

// T positions, L labels; every score drawn by `draw()`, in the order unary,
// transition, start, end.
template <typename Draw>
RandomChain MakeRandomChain(int T, int L, Draw draw) {
  RandomChain chain{T, L, {}, {}, {}, {}};
  for (int k = 0; k < T * L; ++k) chain.unary.push_back(draw());
  for (int k = 0; k < L * L; ++k) chain.transition.push_back(draw());
  for (int k = 0; k < L; ++k) chain.start.push_back(draw());
  for (int k = 0; k < L; ++k) chain.end.push_back(draw());
  return chain;
}

// Scores uniform in [-2, 2], or in {-1, 0, 1} (many exact ties).
inline RandomChain MakeChain(int T, int L, std::mt19937* rng,
                             bool integer_scores) {
  std::uniform_real_distribution<double> real(-2, 2);
  std::uniform_int_distribution<int> small(-1, 1);
  return MakeRandomChain(T, L, [&] {
    return integer_scores ? static_cast<double>(small(*rng)) : real(*rng);
  });
}

// MakeChain's chain plus pair scores drawn the same way at t ≥ 1. Row 0 is
// filled with 1000s, which a decoder that read it would pick up.
inline RandomChain MakePairChain(int T, int L, std::mt19937* rng,
                                 bool integer_scores) {
  RandomChain chain = MakeChain(T, L, rng, integer_scores);
  const RandomChain pairs =
      MakeChain(std::max(T - 1, 0), L * L, rng, integer_scores);
  chain.pair.assign(static_cast<size_t>(L) * L, 1000.0);
  chain.pair.insert(chain.pair.end(), pairs.unary.begin(), pairs.unary.end());
  return chain;
}

// score(y) summed straight from a chain's tables, independently of
// ScoreLabeling (which the decoders share).
inline double HandScore(const RandomChain& chain,
                        const std::vector<int32_t>& y) {
  const int T = chain.length, L = chain.num_labels;
  if (T == 0) return 0;
  double score = chain.start[y[0]] + chain.end[y[T - 1]];
  for (int t = 0; t < T; ++t) score += chain.unary[t * L + y[t]];
  for (int t = 1; t < T; ++t) {
    score += chain.transition[y[t - 1] * L + y[t]];
    if (!chain.pair.empty()) {
      score += chain.pair[(t * L + y[t - 1]) * L + y[t]];
    }
  }
  return score;
}

// Calls visit(y) for every labeling of length T over L labels, y_0 slowest.
template <typename Visit>
void ForEachLabeling(int T, int L, Visit visit) {
  std::vector<int32_t> y(T, 0);
  while (true) {
    visit(y);
    int t = T - 1;
    while (t >= 0 && y[t] == L - 1) y[t--] = 0;
    if (t < 0) return;
    ++y[t];
  }
}

struct ScoredLabeling {
  double score;
  std::vector<int32_t> labels;
};

// The labelings `keep(y)` accepts, scored, in TopKViterbi's order: score
// descending, then the reversed sequence (y_{T−1}, …, y_0) ascending.
template <typename Keep>
std::vector<ScoredLabeling> SortedLabelings(const ChainScores& scores,
                                            Keep keep) {
  std::vector<ScoredLabeling> all;
  ForEachLabeling(scores.length, scores.num_labels,
                  [&](const std::vector<int32_t>& y) {
                    if (keep(y))
                      all.push_back({ScoreLabeling(scores, y.data()), y});
                  });
  std::sort(all.begin(), all.end(),
            [](const ScoredLabeling& a, const ScoredLabeling& b) {
              if (a.score != b.score) return a.score > b.score;
              return std::lexicographical_compare(
                  a.labels.rbegin(), a.labels.rend(), b.labels.rbegin(),
                  b.labels.rend());
            });
  return all;
}

inline std::vector<ScoredLabeling> SortedLabelings(const ChainScores& scores) {
  return SortedLabelings(scores,
                         [](const std::vector<int32_t>&) { return true; });
}

}  // namespace chaintag

#endif  // CHAINTAG_MODELS_CHAIN_SCORES_TESTING_H_
