// The k best labelings of a second-order chain (models/second_order.h), for
// n-best decoding and the top-K smoothing of the max oracle: each lattice
// state keeps its best partial labelings, merged from its sources' sorted
// lists (models/top_k_merge.h), as TopKViterbi does at first order.
//
// Thread-safety: a SecondOrderTopK holds scratch buffers; use one per
// thread. The structure and scores it reads may be shared.

#ifndef CHAINTAG_MODELS_SECOND_ORDER_TOP_K_H_
#define CHAINTAG_MODELS_SECOND_ORDER_TOP_K_H_

#include <cstdint>
#include <vector>

#include "models/second_order.h"

namespace chaintag {

class SecondOrderTopK {
 public:
  // The m = min(k, N) best allowed labelings, all distinct (N: how many
  // allowed labelings have a finite score), as m rows of `length` labels in
  // `labelings` and their scores, descending, in `labeling_scores`. Its
  // first labeling is exactly SecondOrderViterbi's, and among equal scores
  // the labeling whose (y_{T−2}, y_{T−1}, y_{T−3}, y_{T−4}, …, y_0) is
  // lexicographically smaller comes first, which extends Viterbi's tie
  // rule. (The order is exact for exactly representable scores, such as
  // integers; with general doubles, near-ties follow the sums' rounding.)
  // k ≤ 0 returns 0 with both outputs empty; length 0 gives one empty
  // labeling of score 0.
  //
  // Time per position O(num_edges() · K) for K = min(k, L^length), usually
  // O(num_edges() + num_states() · K): each state's list merges its
  // sources' sorted lists by insertion, and a list stops at its first row
  // that cannot enter. Memory O(length · num_states() · K).
  int Decode(const SecondOrderStructure& structure,
             const SecondOrderScores& scores, int k,
             std::vector<int32_t>* labelings,
             std::vector<double>* labeling_scores);

 private:
  // Fills the cells of position t ≥ 2 from those of t − 1.
  void Advance(const SecondOrderStructure& structure,
               const SecondOrderScores& scores, int t, int width);
  // Adds the pair score and unary of `state` at t ≥ 1 to its cell, after
  // the merge as SecondOrderViterbi does (so that rank 0 sums exactly as
  // its delta), and drops the entries that become −∞.
  void CompleteCell(const SecondOrderStructure& structure,
                    const SecondOrderScores& scores, int t, int32_t state,
                    int width);
  // Selects the best finished labelings into final_*; returns how many.
  int Finish(const SecondOrderStructure& structure,
             const SecondOrderScores& scores, int width);
  void Backtrack(const SecondOrderStructure& structure, int length, int width,
                 int rank_in_final, int32_t* labels) const;

  std::vector<double> edge_score_;  // with the transitions
  // A cell per label (position 0) or state (positions ≥ 1), rows as
  // SecondOrderStructure::RowOffset; cell c holds its best partial
  // labelings, best first, at [c·width, c·width + count_[c]): their scores,
  // and the cell (of the previous position) and rank they extend.
  std::vector<double> score_;
  std::vector<int32_t> from_cell_;
  std::vector<int32_t> from_rank_;
  std::vector<int32_t> count_;
  // The last position's cells that may end a labeling, and their end scores.
  std::vector<int32_t> final_cells_;
  std::vector<double> final_offsets_;
  std::vector<double> final_score_;
  std::vector<int32_t> final_cell_;
  std::vector<int32_t> final_rank_;
};

}  // namespace chaintag

#endif  // CHAINTAG_MODELS_SECOND_ORDER_TOP_K_H_
