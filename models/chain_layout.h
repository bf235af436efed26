// ChainLayout: where the parts of a linear-chain model live in the weight
// vector, and the unary scores of a sentence under given weights.
//
//   [0, R·L)             emissions, row-major: row r's L label weights
//                        are contiguous at r·L (one cache line or two)
//   [R·L, R·L + R₂·P)    second order only: observation-conditioned
//                        transitions, row-major: row r's weights for the P
//                        weighted label pairs (models/second_order.h)
//   then L² transitions [prev][next], L start biases, L end biases,
//   then (second order only) the K weighted label trigrams.
//
// A first-order layout is the second-order one with R₂ = P = K = 0, so the
// tail [transitions][start][end] is the same contiguous block in both.
// A row is whatever the features index: for CoNLL training the hashed
// buckets that occur in training, renumbered densely (BucketRows), so w
// has no coordinate that is provably zero; for OCR the 129 pixel features.
//
// Thread-safety: plain value type and stateless functions.

#ifndef CHAINTAG_MODELS_CHAIN_LAYOUT_H_
#define CHAINTAG_MODELS_CHAIN_LAYOUT_H_

#include <cstdint>

#include "features/feature_sequence.h"
#include "models/viterbi.h"

namespace chaintag {

struct ChainLayout {
  int num_labels = 0;
  int64_t num_rows = 0;
  // 1 or 2: how many labels before y_t its transitions see.
  int order = 1;
  // Second order: rows of the observation-conditioned transition features,
  // the label pairs each row has a weight for, and the weighted trigrams.
  int64_t num_pair_rows = 0;
  int num_pairs = 0;
  int num_trigrams = 0;

  int64_t emission_size() const { return num_rows * num_labels; }
  int64_t pair_emission_offset() const { return emission_size(); }
  int64_t pair_emission_size() const { return num_pair_rows * num_pairs; }
  int64_t transition_offset() const {
    return pair_emission_offset() + pair_emission_size();
  }
  int64_t start_offset() const {
    return transition_offset() + static_cast<int64_t>(num_labels) * num_labels;
  }
  int64_t end_offset() const { return start_offset() + num_labels; }
  int64_t trigram_offset() const { return end_offset() + num_labels; }
  int64_t dim() const { return trigram_offset() + num_trigrams; }
  // The weights after the emission blocks: transitions, start, end and
  // trigrams.
  int64_t tail_size() const { return dim() - transition_offset(); }
};

// The transition score of a label pair a model trained over allowed
// transitions only (ChainProblem::SetAllowedTransitions) never saw: finite,
// so the model file's checks and format stay as they are, and low enough
// that no labeling through one beats a labeling without (its
// forward-backward weight is 0).
constexpr double kForbiddenTransition = -1e30;
// Whether a transition weight is that placeholder (as stored in float32 or
// double): such a pair has no feature, and inspection leaves it out as
// CRFsuite's dumps do.
inline bool IsForbiddenTransition(double weight) {
  return weight <= kForbiddenTransition / 2;
}

// How many features ahead the scoring and update loops prefetch weight rows.
constexpr int kPrefetchDistance = 16;

// Hints the cache to fetch the `length` weights at `row` (read or write).
template <typename Weight>
inline void PrefetchRow(const Weight* row, int length) {
  constexpr int kPerLine = 64 / sizeof(Weight);
  for (int k = 0; k < length; k += kPerLine) __builtin_prefetch(row + k);
}

// unary[t·L + y] = Σ_{f at t} value_f · emission[row_f·L + y], the features
// holding row ids; accumulated in double whatever the rows' precision.
void ComputeUnaryScores(int num_labels, const float* emission,
                        const FeatureSequence& features, double* unary);
void ComputeUnaryScores(int num_labels, const double* emission,
                        const FeatureSequence& features, double* unary);

// The same for positions [first, last) only, the others untouched: parts
// of a sentence computed on several threads give the bits of one call.
void ComputeUnaryScoresOf(int num_labels, const double* emission,
                          const FeatureSequence& features, int first, int last,
                          double* unary);

inline void ComputeUnaryScores(const ChainLayout& layout, const double* w,
                               const FeatureSequence& features, double* unary) {
  ComputeUnaryScores(layout.num_labels, w, features, unary);
}

// The ChainScores view of a weight tail ([L×L transitions][L start][L end],
// as a ChainLayout stores it after the emissions) with the given unary
// scores.
inline ChainScores ChainScoresFromTail(int num_labels, const double* tail,
                                       int length, const double* unary) {
  const int64_t L = num_labels;
  ChainScores scores;
  scores.length = length;
  scores.num_labels = num_labels;
  scores.unary = unary;
  scores.transition = tail;
  scores.start = tail + L * L;
  scores.end = tail + L * L + L;
  return scores;
}

// The ChainScores view of weights `w` with the given unary scores.
inline ChainScores MakeChainScores(const ChainLayout& layout, const double* w,
                                   int length, const double* unary) {
  return ChainScoresFromTail(layout.num_labels, w + layout.transition_offset(),
                             length, unary);
}

}  // namespace chaintag

#endif  // CHAINTAG_MODELS_CHAIN_LAYOUT_H_
