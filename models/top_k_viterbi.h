// Top-K max-sum decoding of a linear chain (Pillutla et al. 2018, Alg. 2):
// the K highest-scoring labelings, which the ℓ2-smoothed oracle of
// Casimir-SVRG projects onto the simplex (models/smoothing.h).
//
// Order and ties. Labelings come out by score, descending; among equal scores
// the labeling whose reversed sequence (y_{T−1}, y_{T−2}, …, y_0) is
// lexicographically smaller comes first. This is what the table gives when
// every merge prefers the lower (previous label, previous rank) and the final
// selection the lower (label, rank); it makes the first labeling exactly
// ViterbiDecoder's (lowest previous label, lowest final label), bit for bit.
// The order is exact for exactly representable scores (e.g. integers); with
// general doubles, near-ties follow the table's own rounding.
//
// Thread-safety: TopKViterbi holds scratch buffers; use one per thread.

#ifndef CHAINTAG_MODELS_TOP_K_VITERBI_H_
#define CHAINTAG_MODELS_TOP_K_VITERBI_H_

#include <cstdint>
#include <vector>

#include "models/viterbi.h"

namespace chaintag {

class TopKViterbi {
 public:
  // Finds the m = min(k, N) best labelings, all distinct, and returns m,
  // where N is the number of labelings whose score is not −∞ (N = L^T when
  // every score is finite). A −∞ score marks a forbidden start, transition,
  // end or label (models/transition_constraints.h writes them): a labeling
  // that uses one is never returned, so fewer than k labelings come back when
  // k > N, and none when every labeling is forbidden. `labelings` becomes m
  // rows of scores.length labels (row j is the j-th best) and
  // `labeling_scores` their m scores, descending. A chain of length 0 has one
  // (empty) labeling scoring 0. k ≤ 0 returns 0 with both outputs emptied.
  // Scores must not be +∞ or NaN.
  //
  // Time O(T·L·(L + K²)) for K = min(k, L^T), O(T·L·(L + K)) in the usual
  // case: each table cell merges the L sorted lists of the previous position
  // by insertion into its K best, and a list stops at its first row that
  // cannot enter. Memory O(T·L·K).
  int Decode(const ChainScores& scores, int k, std::vector<int32_t>* labelings,
             std::vector<double>* labeling_scores);

 private:
  // Cell (t, y) holds up to K entries at [(t·L + y)·K, … + count).
  std::vector<double> score_;
  std::vector<int32_t> from_label_;
  std::vector<int32_t> from_rank_;
  std::vector<int32_t> count_;
  std::vector<double> transition_;  // L²: one position's, with pair scores
  // Final selection: score, last label and its rank, per returned labeling.
  std::vector<double> final_score_;
  std::vector<int32_t> final_label_;
  std::vector<int32_t> final_rank_;
};

}  // namespace chaintag

#endif  // CHAINTAG_MODELS_TOP_K_VITERBI_H_
