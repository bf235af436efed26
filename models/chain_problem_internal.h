// What chain_problem*.cc share: the per-thread
// scratch of ChainProblem's oracles and state algebra, the scores of a
// sentence, and small loops both use. Nothing else should include it.
//
// Thread-safety: ThreadScratch is per thread; the rest is pure.

#ifndef CHAINTAG_MODELS_CHAIN_PROBLEM_INTERNAL_H_
#define CHAINTAG_MODELS_CHAIN_PROBLEM_INTERNAL_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "models/chain_problem.h"
#include "models/nonzero_mask.h"
#include "models/second_order_forward_backward.h"
#include "models/second_order_top_k.h"
#include "models/second_order_viterbi.h"
#include "models/smoothing.h"
#include "models/top_k_viterbi.h"
#include "models/viterbi.h"

namespace chaintag {
namespace chain_problem_internal {

// ComputeCornerUnary (and a few-labeling state's reads) fall back to all
// labels' scores when more than 1/kSparseUnaryShare of them would be needed.
constexpr int64_t kSparseUnaryShare = 3;

// From this many labels a sentence's unary scores are split by positions
// over the step helpers lent to the thread (base/step_helpers.h), if any:
// the 45-label POS preset gains from it, the 23-label chunking preset
// showed no gain (docs/experiments.md#hundreds-of-labels).
constexpr int kSplitUnaryLabels = 32;

// From this many labels, with free coordinates, the smoothed oracles read
// the point at the free coordinates alone (ChainProblem::
// OraclesAtFreeAreFaster;
// docs/experiments.md#the-crf-on-319-labels-oracles-at-the-free-coordinates-2026-11-29).
constexpr int kFreeOracleLabels = 32;
constexpr int kSplitUnaryPositions = 4;

// From this many labels (with listed transitions), and sentences of this
// many positions, the max oracle runs as a pipeline instead: the helpers'
// unary scores feeding one thread's decoder (chain_problem_pipeline.cc).
constexpr int kPipelineLabels = 100;
constexpr int kPipelinePositions = 8;

// Per-thread scratch, so the oracles allocate nothing once warm.
struct Scratch {
  std::vector<double> unary;
  // PipelinedOracle's loss-augmented copy, its rows' done flags (the
  // stamp of the call that computed them) and its calls so far.
  std::vector<double> augmented;
  std::unique_ptr<std::atomic<uint64_t>[]> row_done;
  size_t row_done_size = 0;
  uint64_t pipeline_calls = 0;
  std::vector<double> pair_unary;
  std::vector<double> scaled_tail;  // transitions, biases, trigrams × scale
  // The transitions with −∞ on the forbidden pairs (ForbidTransitions).
  std::vector<double> masked_transition;
  std::vector<double> difference;
  ViterbiDecoder decoder;
  TopKViterbi top_k;
  ForwardBackward forward_backward;
  SecondOrderViterbi second_order_decoder;
  SecondOrderTopK second_order_top_k;
  SecondOrderForwardBackward second_order_forward_backward;
  std::vector<int32_t> labelings;
  std::vector<double> labeling_scores;
  std::vector<double> weights;
  // ComputeCornerUnary's labels per position.
  std::vector<int32_t> needed_labels;
  std::vector<int32_t> needed_begin;
  std::vector<uint8_t> marked_labels;
  // TailSupport's labels per position, its tail indices, and its marks
  // over the tail (all 0 between calls).
  std::vector<int32_t> support_labels;
  std::vector<int32_t> support_begin;
  std::vector<int64_t> tail_indices;
  // The tail's part a slice holds, when the slice cuts the tail
  // (ChainProblem::AddPairRowsAndTailMinusState).
  std::vector<double> split_tail;
  std::vector<uint8_t> marked_tail;
  // TailDistanceSquared's counts (all 0 between calls).
  std::vector<double> tail_counts;
  // Two labelings' pair columns.
  std::vector<int32_t> pair_columns;
  // FreeEmissionNormSquared's sums over the free emission coordinates (all
  // 0 between calls) and the coordinates it wrote.
  std::vector<double> free_sums;
  std::vector<int64_t> free_touched;
};

inline Scratch& ThreadScratch() {
  thread_local Scratch scratch;
  return scratch;
}

// visit(y) for each label y < L with marginals[y] ≠ 0, in increasing order,
// 64 labels' tests at a time (branch-free: a state's few labels made a
// branch per label mispredict).
template <typename Visit>
void ForEachNonzeroLabel(const double* marginals, int L, const Visit& visit) {
  for (int first = 0; first < L; first += 64) {
    uint64_t mask = NonzeroMask(marginals + first, std::min(64, L - first));
    for (; mask != 0; mask &= mask - 1) {
      visit(first + __builtin_ctzll(mask));
    }
  }
}

// d = c·(μ − e_column) over a position's n marginals μ: how its rows change
// in w += c·(ψ_i(y) − v_i), column being y's label there (or its label
// pair's column; none when negative).
inline void RowChange(const double* marginal, int n, int32_t column, double c,
                      double* d) {
  for (int k = 0; k < n; ++k) d[k] = c * marginal[k];
  if (column >= 0) d[column] -= c;
}

// Whether position t's row changes, d = c·(μ_t − e_y), are at few enough
// labels to visit them by a list; if so, `labels` lists them (ascending,
// y last when the marginals give it no mass above 64 labels).
inline bool FewChangedLabels(const double* marginal, int L, int32_t y,
                             std::vector<int32_t>* labels) {
  labels->clear();
  if (L <= 64) {
    const uint64_t mask = NonzeroMask(marginal, L) | uint64_t{1} << y;
    if (__builtin_popcountll(mask) * kSparseUnaryShare > L) return false;
    for (uint64_t rest = mask; rest != 0; rest &= rest - 1) {
      labels->push_back(__builtin_ctzll(rest));
    }
    return true;
  }
  bool has_y = false;
  ForEachNonzeroLabel(marginal, L, [&](int l) {
    labels->push_back(l);
    has_y |= l == y;
  });
  if (!has_y) labels->push_back(y);
  return static_cast<int64_t>(labels->size()) * kSparseUnaryShare <=
         static_cast<int64_t>(L);
}

}  // namespace chain_problem_internal

// A sentence's scores: the unary tables live in the thread's scratch; the
// first-order view reads them with the weights' tail, the second-order view
// also the pair scores and trigrams.
struct ChainProblem::Scores {
  ChainScores first;
  SecondOrderScores second;
  double* unary = nullptr;  // T×L, loss-augmentable in place
  // T×P pair scores (row 0 unused), or null without pair features.
  const double* pair_unary = nullptr;
};

template <typename Visit>
void ChainProblem::ForEachTailIndex(const int32_t* y, int T,
                                    const Visit& visit) const {
  const int L = layout_.num_labels;
  for (int t = 1; t < T; ++t) visit(y[t - 1] * L + y[t]);
  visit(L * L + y[0]);
  visit(L * L + L + y[T - 1]);
  if (structure_ == nullptr) return;
  const int64_t trigrams = L * L + 2 * L;
  for (int t = 2; t < T; ++t) {
    const int32_t k = structure_->trigram_index(y[t - 2], y[t - 1], y[t]);
    if (k >= 0) visit(trigrams + k);
  }
}

}  // namespace chaintag

#endif  // CHAINTAG_MODELS_CHAIN_PROBLEM_INTERNAL_H_
