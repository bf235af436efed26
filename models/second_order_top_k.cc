#include "models/second_order_top_k.h"

#include <cstddef>
#include <limits>

#include "models/top_k_merge.h"

namespace chaintag {
namespace {

constexpr double kMinusInfinity = -std::numeric_limits<double>::infinity();

}  // namespace

int SecondOrderTopK::Decode(const SecondOrderStructure& structure,
                            const SecondOrderScores& scores, int k,
                            std::vector<int32_t>* labelings,
                            std::vector<double>* labeling_scores) {
  const int T = scores.length;
  const int L = structure.num_labels_;
  const int width = k <= 0 ? 0 : TopKWidth(k, L, T);
  if (width == 0) {
    labelings->clear();
    labeling_scores->clear();
    return 0;
  }
  if (T == 0) {
    labelings->clear();
    labeling_scores->assign(1, 0.0);
    return 1;
  }
  const size_t cells = structure.RowOffset(T);
  score_.resize(cells * width);
  from_cell_.resize(cells * width);
  from_rank_.resize(cells * width);
  count_.resize(cells);
  // Position 0: one partial labeling per allowed start, none where its score
  // is −∞.
  for (int y = 0; y < L; ++y) {
    const double value = scores.start[y] + scores.unary[y];
    score_[static_cast<size_t>(y) * width] = value;
    count_[y] = structure.start_allowed_[y] && value != kMinusInfinity;
  }
  if (T > 1) {
    // Position 1: each state (a, b) extends the one labeling of a.
    const size_t row = structure.RowOffset(1);
    for (int s = 0; s < structure.num_states(); ++s) {
      const auto [a, b] = structure.state_labels_[s];
      const size_t entry = (row + s) * width;
      score_[entry] = score_[static_cast<size_t>(a) * width] +
                      scores.transition[static_cast<size_t>(a) * L + b];
      from_cell_[entry] = a;
      from_rank_[entry] = 0;
      count_[row + s] = count_[a];
      CompleteCell(structure, scores, 1, s, width);
    }
  }
  if (T > 2) {
    edge_score_.resize(structure.num_edge_slots());
    structure.TransitionEdgeScores(scores, edge_score_.data());
  }
  for (int t = 2; t < T; ++t) Advance(structure, scores, t, width);
  const int m = Finish(structure, scores, width);
  labelings->resize(static_cast<size_t>(m) * T);
  labeling_scores->assign(final_score_.begin(), final_score_.begin() + m);
  for (int j = 0; j < m; ++j) {
    Backtrack(structure, T, width, j,
              labelings->data() + static_cast<size_t>(j) * T);
  }
  return m;
}

// SecondOrderViterbi adds a position's unary when it reads the row; the
// cells hold it, which sums the same.
void SecondOrderTopK::CompleteCell(const SecondOrderStructure& structure,
                                   const SecondOrderScores& scores, int t,
                                   int32_t state, int width) {
  const size_t cell = structure.RowOffset(t) + state;
  double* value = &score_[cell * width];
  const auto [a, b] = structure.state_labels_[state];
  const int32_t column = structure.pair_index(a, b);
  const double pair_score =
      column < 0
          ? 0.0
          : scores.pair_unary[static_cast<size_t>(t) * structure.num_pairs() +
                              column];
  const double unary =
      scores.unary[static_cast<size_t>(t) * structure.num_labels_ + b];
  int count = count_[cell];
  for (int r = 0; r < count; ++r) {
    if (column >= 0) value[r] += pair_score;
    value[r] += unary;
  }
  while (count > 0 && value[count - 1] == kMinusInfinity) --count;
  count_[cell] = count;
}

void SecondOrderTopK::Advance(const SecondOrderStructure& structure,
                              const SecondOrderScores& scores, int t,
                              int width) {
  const size_t previous = structure.RowOffset(t - 1);
  const size_t row = structure.RowOffset(t);
  const double* previous_scores = score_.data() + previous * width;
  const int32_t* previous_counts = count_.data() + previous;
  for (const SecondOrderStructure::Block& block : structure.blocks_) {
    const int32_t* sources =
        structure.source_state_.data() + block.first_source;
    const double* edge = edge_score_.data() + block.first_edge;
    for (int j = 0; j < block.num_targets; ++j) {
      const size_t cell = row + block.first_target + j;
      count_[cell] = MergeSortedLists(
          previous_scores, previous_counts, width, sources, block.num_sources,
          edge + j, block.row_stride, &score_[cell * width],
          &from_cell_[cell * width], &from_rank_[cell * width]);
      CompleteCell(structure, scores, t, block.first_target + j, width);
    }
  }
}

int SecondOrderTopK::Finish(const SecondOrderStructure& structure,
                            const SecondOrderScores& scores, int width) {
  const int T = scores.length;
  final_cells_.clear();
  final_offsets_.clear();
  if (T == 1) {
    for (int y = 0; y < structure.num_labels_; ++y) {
      if (!structure.end_allowed_[y]) continue;
      final_cells_.push_back(y);
      final_offsets_.push_back(scores.end[y]);
    }
  } else {
    for (int s = 0; s < structure.num_states(); ++s) {
      const int32_t y = structure.state_labels_[s][1];
      if (!structure.end_allowed_[y]) continue;
      final_cells_.push_back(s);
      final_offsets_.push_back(scores.end[y]);
    }
  }
  final_score_.resize(width);
  final_cell_.resize(width);
  final_rank_.resize(width);
  const size_t last = structure.RowOffset(T - 1);
  return MergeSortedLists(score_.data() + last * width, count_.data() + last,
                          width, final_cells_.data(),
                          static_cast<int>(final_cells_.size()),
                          final_offsets_.data(), 1, final_score_.data(),
                          final_cell_.data(), final_rank_.data());
}

void SecondOrderTopK::Backtrack(const SecondOrderStructure& structure,
                                int length, int width, int rank_in_final,
                                int32_t* labels) const {
  int32_t cell = final_cell_[rank_in_final];
  int32_t rank = final_rank_[rank_in_final];
  for (int t = length - 1; t >= 1; --t) {
    labels[t] = structure.state_labels_[cell][1];
    const size_t entry = (structure.RowOffset(t) + cell) * width + rank;
    cell = from_cell_[entry];
    rank = from_rank_[entry];
  }
  labels[0] = cell;  // position 0's cells are labels
}

}  // namespace chaintag
