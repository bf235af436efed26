// Random chains for the decoder and smoothing tests: score tables owned by
// the test, viewed as ChainScores.
//
// Thread-safety: plain values.

#ifndef CHAINTAG_MODELS_CHAIN_SCORES_TESTING_H_
#define CHAINTAG_MODELS_CHAIN_SCORES_TESTING_H_

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

}  // namespace chaintag

#endif  // CHAINTAG_MODELS_CHAIN_SCORES_TESTING_H_
