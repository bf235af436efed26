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
  ChainScores scores() const {
    return {length,       num_labels, unary.data(), transition.data(),
            start.data(), end.data()};
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

// Scores uniform in [−2, 2], or in {−1, 0, 1} (many exact ties).
inline RandomChain MakeChain(int T, int L, std::mt19937* rng,
                             bool integer_scores) {
  std::uniform_real_distribution<double> real(-2, 2);
  std::uniform_int_distribution<int> small(-1, 1);
  return MakeRandomChain(T, L, [&] {
    return integer_scores ? static_cast<double>(small(*rng)) : real(*rng);
  });
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
