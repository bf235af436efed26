// The best labeling of a second-order chain (models/second_order.h):
// max-plus over the lattice of allowed label pairs, one dense block of edges
// per middle label so that the hot loop is a first-order max-plus step over
// contiguous targets, four of them per instruction where the CPU has AVX2.
//
// Thread-safety: a SecondOrderViterbi holds scratch buffers; use one per
// thread. The structure and scores it reads may be shared.

#ifndef CHAINTAG_MODELS_SECOND_ORDER_VITERBI_H_
#define CHAINTAG_MODELS_SECOND_ORDER_VITERBI_H_

#include <cstdint>
#include <vector>

#include "models/second_order.h"

namespace chaintag {

class SecondOrderViterbi {
 public:
  // Writes the best allowed labeling (length entries) and returns its score;
  // −∞ (labeling unspecified) when no labeling is allowed. Ties go to the
  // lowest label at every choice, scanning from the end (the lowest final
  // pair (y_{T−2}, y_{T−1}) in lexicographic order, then the lowest
  // y_{t−2} for each state), so the result is deterministic. A chain of
  // length 0 scores 0.
  //
  // Time per position: a max-plus operation per edge (num_edges()), four
  // edges per instruction where the CPU has AVX2, and a sum per pair
  // column. Memory: length × num_states() doubles, and the edges'.
  double Decode(const SecondOrderStructure& structure,
                const SecondOrderScores& scores, int32_t* labels);

 private:
  // Fills row t ≥ 2 of delta_ from row t − 1: the hot loop.
  void Advance(const SecondOrderStructure& structure,
               const SecondOrderScores& scores, int t);
  // Writes the labels of the best path ending in `state` at the last
  // position.
  void Backtrack(const SecondOrderStructure& structure,
                 const SecondOrderScores& scores, int length, int32_t state,
                 int32_t* labels) const;

  std::vector<double> edge_score_;  // with the transitions
  // The best score of a partial labeling ending in each label (position 0)
  // or state (positions ≥ 1) but for that position's unary, rows as
  // SecondOrderStructure::RowOffset.
  std::vector<double> delta_;
};

}  // namespace chaintag

#endif  // CHAINTAG_MODELS_SECOND_ORDER_VITERBI_H_
