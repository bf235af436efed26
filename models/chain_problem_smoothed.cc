// ChainProblem's smoothed oracles (Problem::SmoothedOracle): the
// distribution that top-K or entropy smoothing puts on a sentence's
// labelings, as a block state, with its value and, for the smoothed
// solvers' certificates, its state's dot product from the same scores.
//
// Thread-safety: as ChainProblem's (const; scratch is per thread).

#include <algorithm>
#include <cstdint>
#include <vector>

#include "models/chain_problem.h"
#include "models/chain_problem_internal.h"
#include "models/second_order_forward_backward.h"
#include "models/second_order_top_k.h"
#include "models/smoothing.h"
#include "models/top_k_viterbi.h"

namespace chaintag {

using chain_problem_internal::kFreeOracleLabels;
using chain_problem_internal::Scratch;
using chain_problem_internal::ThreadScratch;

double ChainProblem::TopKSmoothed(int i, const Scores& scores,
                                  const Smoothing& smoothing,
                                  double* state) const {
  const int T = Length(i);
  Scratch& scratch = ThreadScratch();
  const int count =
      structure_ == nullptr
          ? scratch.top_k.Decode(scores.first, smoothing.top_k,
                                 &scratch.labelings, &scratch.labeling_scores)
          : scratch.second_order_top_k.Decode(
                *structure_, scores.second, smoothing.top_k, &scratch.labelings,
                &scratch.labeling_scores);
  scratch.weights.resize(count);
  const double value =
      ProjectScoresOntoSimplex(scratch.labeling_scores.data(), count,
                               smoothing.mu, scratch.weights.data());
  std::fill(state, state + BlockStateSize(i), 0.0);
  for (int k = 0; k < count; ++k) {
    if (scratch.weights[k] > 0) {
      AddLabelingToState(i, scratch.labelings.data() + k * T,
                         scratch.weights[k], state);
    }
  }
  return value;
}

double ChainProblem::SmoothedOracle(int i, const double* w,
                                    const Smoothing& smoothing,
                                    double* state) const {
  return Smoothed(i, w, nullptr, smoothing, state, nullptr);
}

double ChainProblem::SmoothedOracleWithStateDot(int i, const double* w,
                                                const Smoothing& smoothing,
                                                double* state,
                                                double* state_dot) const {
  return Smoothed(i, w, nullptr, smoothing, state, state_dot);
}

bool ChainProblem::OraclesAtFreeAreFaster() const {
  return !free_coordinates_.empty() && layout_.num_labels >= kFreeOracleLabels;
}

double ChainProblem::SmoothedOracleWithStateDotAtFree(
    int i, const double* free_w, const Smoothing& smoothing, double* state,
    double* state_dot) const {
  // Every coordinate free: free_w is w.
  if (free_coordinates_.empty()) {
    return Smoothed(i, free_w, nullptr, smoothing, state, state_dot);
  }
  return Smoothed(i, nullptr, free_w, smoothing, state, state_dot);
}

// The emission rows' free labels are free_w's first entries, as free_rows_
// indexes them, the pair rows and the tail the rest, as in w. Each label's
// sum takes the dense rows' terms in the same order less those of a weight
// fixed at 0, which never change a sum that starts at +0: the same scores
// to the bit.
void ChainProblem::ComputeScoresAtFree(int i, const double* free_w,
                                       double scale, Scores* scores) const {
  const FeatureSequence& f = examples_[i].features;
  Scratch& scratch = ThreadScratch();
  scratch.unary.resize(static_cast<size_t>(f.size()) * layout_.num_labels);
  free_rows_.ComputeUnaryScores(free_listed_labels_.data(), free_w, f,
                                scratch.unary.data());
  FinishScores(i, free_w + free_labels_.size(), scale, scores);
}

double ChainProblem::Smoothed(int i, const double* w, const double* free_w,
                              const Smoothing& smoothing, double* state,
                              double* state_dot) const {
  const ChainExample& example = examples_[i];
  Scores scores;
  const double* after_emission;
  if (free_w == nullptr) {
    ComputeScores(i, w, 1.0, &scores);
    after_emission = w + EmissionEnd();
  } else {
    ComputeScoresAtFree(i, free_w, 1.0, &scores);
    after_emission = free_w + free_labels_.size();
  }
  const double gold_score = ScoreOf(scores, example.labels.data());
  // h(y) = L(y) + ⟨w, φ(y)⟩ − ⟨w, φ(y_i)⟩: augmented scores minus gold's.
  AddLossToUnary(i, 1.0, scores.unary);
  // The entropy's forward–backward reads few allowed transitions by their
  // lists alone, as Viterbi does; the other smoothings need −∞ off them.
  bool lists_alone = false;
  if (smoothing.kind == Smoothing::Kind::kEntropy && structure_ == nullptr &&
      !allowed_.empty()) {
    ChainScores listed = scores.first;
    listed.lists = &lists_;
    lists_alone = ForwardBackward::ReadsLists(listed);
  }
  ForbidTransitions(&scores, /*viterbi_only=*/lists_alone);
  const double value = SmoothedMax(i, scores, smoothing, state) - gold_score;
  if (state_dot != nullptr) {
    // ⟨v_i, w⟩ reads the plain scores, without the loss.
    AddLossToUnary(i, -1.0, scores.unary);
    *state_dot = StateDot(i, after_emission, scores, gold_score, state);
  }
  return value;
}

double ChainProblem::SmoothedMax(int i, const Scores& scores,
                                 const Smoothing& smoothing,
                                 double* state) const {
  Scratch& scratch = ThreadScratch();
  switch (smoothing.kind) {
    case Smoothing::Kind::kEntropy: {
      if (structure_ != nullptr) {
        return scratch.second_order_forward_backward.Compute(
            *structure_, scores.second, smoothing.mu, state);
      }
      if (tail_full_.empty()) {
        return scratch.forward_backward.Compute(scores.first, smoothing.mu,
                                                state);
      }
      // The state's tail is the allowed pairs in the lists' order, then the
      // start and end labels: the listed marginals' layout.
      const int L = layout_.num_labels;
      if (ForwardBackward::ReadsLists(scores.first) &&
          StateTailSize() == lists_.size() + 2 * L) {
        return scratch.forward_backward.ComputeListed(scores.first,
                                                      smoothing.mu, state);
      }
      // The marginals in the full layout, then the tail's allowed entries
      // (the forbidden ones are 0).
      const int64_t head = TailStateOffset(i);
      std::vector<double>& full = scratch.difference;
      full.resize(head + layout_.tail_size());
      const double value = scratch.forward_backward.Compute(
          scores.first, smoothing.mu, full.data());
      std::copy(full.begin(), full.begin() + head, state);
      for (int64_t k = 0; k < StateTailSize(); ++k) {
        state[head + k] = full[head + FullTailIndex(k)];
      }
      return value;
    }
    case Smoothing::Kind::kTopKL2:
      return TopKSmoothed(i, scores, smoothing, state);
    case Smoothing::Kind::kNone:
    default: {
      scratch.labelings.resize(Length(i));
      const double best = DecodeBest(scores, scratch.labelings.data());
      std::fill(state, state + BlockStateSize(i), 0.0);
      AddLabelingToState(i, scratch.labelings.data(), 1.0, state);
      return best;
    }
  }
}

}  // namespace chaintag
