// Exact MAP decoding of a linear chain (max-sum Viterbi) and the score of a
// given labeling. Ties go to the lowest label id, both for the previous
// label and for the final one, as in the BCFW reference code.
//
// Thread-safety: ViterbiDecoder holds scratch buffers; use one per thread.

#ifndef CHAINTAG_MODELS_VITERBI_H_
#define CHAINTAG_MODELS_VITERBI_H_

#include <cstdint>
#include <vector>

#include "absl/functional/function_ref.h"

namespace chaintag {

// A chain's allowed transitions as lists, for a decoder that visits only
// them (S pairs a position instead of L²): the labels allowed after p are
// next[next_begin[p], next_begin[p + 1]), those allowed before y are
// previous[previous_begin[y], previous_begin[y + 1]), both ascending.
struct TransitionLists {
  int num_labels = 0;
  std::vector<int32_t> next_begin;
  std::vector<int32_t> next;
  std::vector<int32_t> previous_begin;
  std::vector<int32_t> previous;

  // From allowed[p·L + y] ≠ 0 (L² entries).
  static TransitionLists FromMask(const uint8_t* allowed, int num_labels);
  int64_t size() const { return static_cast<int64_t>(next.size()); }
};

// Scores of one chain: score(y) = Σ_t unary[t][y_t] + start[y_0]
//   + Σ_{t>0} (transition[y_{t−1}][y_t] + pair[t][y_{t−1}][y_t])
//   + end[y_{T−1}].
struct ChainScores {
  int length = 0;
  int num_labels = 0;
  const double* unary = nullptr;       // length × num_labels, row-major
  const double* transition = nullptr;  // num_labels × num_labels, [prev][next]
  const double* start = nullptr;       // num_labels
  const double* end = nullptr;         // num_labels
  // Observation-conditioned transitions (pair templates): length × L × L,
  // row t ≥ 1 [prev][next] added to `transition` for the step into t; row 0
  // is never read. Null without pair features: the transitions are then the
  // same at every position.
  const double* pair = nullptr;
  // Without pair scores, optionally the allowed transitions: ViterbiDecoder
  // then reads only theirs, every other counting as −∞ whatever
  // `transition` holds (the other decoders ignore the lists: give them
  // −∞ there).
  const TransitionLists* lists = nullptr;
};

// The transition scores into position t ≥ 1: `transition` itself without
// pair scores, else transition + pair[t], written to `buffer` (L² doubles).
// Every decoder and ScoreLabeling add the two in this one way, so a
// transition term is the same double in all of them.
inline const double* TransitionsInto(const ChainScores& scores, int t,
                                     double* buffer) {
  if (scores.pair == nullptr) return scores.transition;
  const int64_t squared =
      static_cast<int64_t>(scores.num_labels) * scores.num_labels;
  const double* row = scores.pair + t * squared;
  for (int64_t k = 0; k < squared; ++k) {
    buffer[k] = scores.transition[k] + row[k];
  }
  return buffer;
}

// One entry of TransitionsInto(scores, t, ·): the transition a → b into t.
inline double TransitionInto(const ChainScores& scores, int t, int a, int b) {
  const int64_t k = static_cast<int64_t>(a) * scores.num_labels + b;
  if (scores.pair == nullptr) return scores.transition[k];
  return scores.transition[k] +
         scores.pair[t * static_cast<int64_t>(scores.num_labels) *
                         scores.num_labels +
                     k];
}

double ScoreLabeling(const ChainScores& scores, const int32_t* labels);

class ViterbiDecoder {
 public:
  // Writes the best labeling (scores.length entries) and returns its score.
  // A chain of length 0 scores 0.
  double Decode(const ChainScores& scores, int32_t* labels);

  // Decode over scores.lists (no pair scores), calling before_position(t)
  // before it first reads position t's unary scores, for t = 0, 1, … in
  // turn: the caller may still be producing the later positions' scores.
  // The same labeling and score as Decode (0 for a chain of length 0).
  double DecodeListedAsReady(const ChainScores& scores, int32_t* labels,
                             absl::FunctionRef<void(int t)> before_position);

 private:
  // Decode over scores.lists: the same labeling and score as the full
  // decoder over transitions that are −∞ outside the lists.
  double DecodeListed(const ChainScores& scores, int32_t* labels) {
    return DecodeListedAsReady(scores, labels, [](int) {});
  }

  std::vector<double> delta_;
  std::vector<double> transition_;  // L²: one position's, with pair scores
  std::vector<double> listed_transition_;  // DecodeListed's, in list order
};

}  // namespace chaintag

#endif  // CHAINTAG_MODELS_VITERBI_H_
