#include "models/viterbi.h"

#include <cstddef>

namespace chaintag {

double ScoreLabeling(const ChainScores& scores, const int32_t* labels) {
  const int T = scores.length;
  const int L = scores.num_labels;
  if (T == 0) return 0;
  double total = scores.start[labels[0]] + scores.end[labels[T - 1]];
  for (int t = 0; t < T; ++t) {
    total += scores.unary[static_cast<int64_t>(t) * L + labels[t]];
    if (t > 0) total += scores.transition[labels[t - 1] * L + labels[t]];
  }
  return total;
}

double ViterbiDecoder::Decode(const ChainScores& scores, int32_t* labels) {
  const int T = scores.length;
  const int L = scores.num_labels;
  if (T == 0) return 0;
  delta_.resize(static_cast<size_t>(T) * L);
  backpointer_.resize(static_cast<size_t>(T) * L);
  double* delta = delta_.data();
  int32_t* back = backpointer_.data();
  for (int y = 0; y < L; ++y) delta[y] = scores.start[y] + scores.unary[y];
  for (int t = 1; t < T; ++t) {
    const double* previous = delta + static_cast<int64_t>(t - 1) * L;
    double* current = delta + static_cast<int64_t>(t) * L;
    int32_t* from = back + static_cast<int64_t>(t) * L;
    const double* unary = scores.unary + static_cast<int64_t>(t) * L;
    for (int y = 0; y < L; ++y) {
      // Strict '>' keeps the lowest previous label on ties.
      double best = previous[0] + scores.transition[y];
      int32_t best_previous = 0;
      for (int p = 1; p < L; ++p) {
        const double candidate = previous[p] + scores.transition[p * L + y];
        if (candidate > best) {
          best = candidate;
          best_previous = p;
        }
      }
      current[y] = best + unary[y];
      from[y] = best_previous;
    }
  }
  const double* last = delta + static_cast<int64_t>(T - 1) * L;
  double best = last[0] + scores.end[0];
  int32_t label = 0;
  for (int y = 1; y < L; ++y) {
    const double candidate = last[y] + scores.end[y];
    if (candidate > best) {
      best = candidate;
      label = y;
    }
  }
  for (int t = T - 1; t >= 0; --t) {
    labels[t] = label;
    if (t > 0) label = back[static_cast<int64_t>(t) * L + label];
  }
  return best;
}

}  // namespace chaintag
