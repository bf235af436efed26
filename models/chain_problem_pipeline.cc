// ChainProblem's max oracle as a pipeline over the step's helpers
// (base/step_helpers.h): the helpers compute the unary scores position by
// position while one thread runs the listed Viterbi decoder on each
// position as soon as its scores are there (and computes the next ones
// itself when they are late). Hundreds of labels make both a few
// microseconds a position; with the scores split by halves instead, the
// decoder could start only once both halves were done. The arithmetic is
// Oracle's, in the same order, so the results are the same bits.
//
// Thread-safety: as ChainProblem's (const; scratch is per thread).

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/cpu_dispatch.h"
#include "base/step_helpers.h"
#include "models/chain_problem.h"
#include "models/chain_problem_internal.h"

namespace chaintag {
namespace {

// Positions computed and published together: a few, so the row
// prefetches of the unary scores run ahead within each batch.
constexpr int kPipelineRows = 2;

}  // namespace

bool ChainProblem::CanPipelineOracle(int i, double scale) const {
  StepHelpers* helpers = StepHelpers::Current();
  // The free space's rows are a few labels each: scoring them is cheap
  // beside decoding, and a producer would spin waiting for the decoder.
  return helpers != nullptr && helpers->threads() > 1 && !free_space_ &&
         structure_ == nullptr && !allowed_.empty() &&
         layout_.num_pair_rows == 0 && scale == 1.0 &&
         layout_.num_labels >= chain_problem_internal::kPipelineLabels &&
         Length(i) >= chain_problem_internal::kPipelinePositions;
}

void ChainProblem::PipelinedOracle(int i, const double* w, const double* state,
                                   const Corner* const* corners, int count,
                                   double* corner_scores,
                                   OracleResult* result) const {
  const ChainExample& example = examples_[i];
  const int T = example.features.size();
  const int L = layout_.num_labels;
  chain_problem_internal::Scratch& scratch =
      chain_problem_internal::ThreadScratch();
  scratch.unary.resize(static_cast<size_t>(T) * L);
  scratch.augmented.resize(static_cast<size_t>(T) * L);
  double* unary = scratch.unary.data();
  double* augmented = scratch.augmented.data();
  Scores scores;
  // Pointers only at scale 1, no pairs.
  FinishScores(i, w + layout_.pair_emission_offset(), 1.0, &scores);
  // The decoder reads the loss-augmented copy, so the plain scores stay as
  // Oracle has them when it scores the gold labeling, the corners and the
  // state; Oracle's removal of the loss is then done on the copy.
  Scores decoding = scores;
  decoding.unary = augmented;
  decoding.first.unary = augmented;
  ForbidTransitions(&decoding, /*viterbi_only=*/true);
  const double unit = LossUnit(i);
  const int32_t* gold = example.labels.data();
  result->corner.resize(T);
  // Rows are claimed kPipelineRows at a time, in order, by the producers
  // and by the decoder whenever the position it needs is not done yet; a
  // row is done when its flag holds this call's stamp.
  if (scratch.row_done_size < static_cast<size_t>(T)) {
    scratch.row_done = std::make_unique<std::atomic<uint64_t>[]>(T);
    scratch.row_done_size = T;
  }
  std::atomic<uint64_t>* done = scratch.row_done.get();
  const uint64_t stamp = ++scratch.pipeline_calls;
  std::atomic<int> next{0};
  auto produce_one = [&]() {
    const int first = next.fetch_add(kPipelineRows, std::memory_order_relaxed);
    if (first >= T) return false;
    const int last = std::min(T, first + kPipelineRows);
    ComputeUnaryScoresOf(L, w, example.features, first, last, unary);
    for (int t = first; t < last; ++t) {
      done[t].store(stamp, std::memory_order_release);
    }
    return true;
  };
  // Every thread but one produces; the decoder is the last item, handed
  // out after every producer has started, so it never waits for rows that
  // no thread is computing.
  StepHelpers* helpers = StepHelpers::Current();
  const int decoder_item = helpers->threads() - 1;
  helpers->Run(decoder_item + 1, [&](int item) {
    if (item < decoder_item) {
      while (produce_one()) {
      }
      return;
    }
    chain_problem_internal::ThreadScratch().decoder.DecodeListedAsReady(
        decoding.first, result->corner.data(), [&](int t) {
          SpinBackoff backoff;
          while (done[t].load(std::memory_order_acquire) != stamp) {
            if (!produce_one()) backoff.Pause();
          }
          const int64_t row = static_cast<int64_t>(t) * L;
          std::copy(unary + row, unary + row + L, augmented + row);
          AddLossToPositions(i, 1.0, t, t + 1, augmented);
        });
  });
  const double gold_score = ScoreOf(scores, gold);
  for (int k = 0; k < count; ++k) {
    corner_scores[k] = gold_score - ScoreOf(scores, corners[k]->data());
  }
  result->state_dot = state != nullptr
                          ? StateDot(i, w + layout_.pair_emission_offset(),
                                     scores, gold_score, state)
                          : 0;
  AddLossToUnary(i, -1.0, augmented);
  int wrong = 0;
  for (int t = 0; t < T; ++t) wrong += result->corner[t] != gold[t];
  result->loss = wrong * unit;
  result->score = gold_score - ScoreOf(decoding, result->corner.data());
}

}  // namespace chaintag
