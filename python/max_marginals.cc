#include "python/max_marginals.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "models/viterbi.h"

namespace chaintag {
namespace {

constexpr double kMinusInfinity = -std::numeric_limits<double>::infinity();

// forward[t·L + y]: the best score of labels 0..t ending in y, unary at t
// included.
void Forward(const ChainScores& s, std::vector<double>* forward) {
  const int T = s.length;
  const int L = s.num_labels;
  forward->assign(static_cast<size_t>(T) * L, kMinusInfinity);
  for (int y = 0; y < L; ++y) (*forward)[y] = s.start[y] + s.unary[y];
  for (int t = 1; t < T; ++t) {
    const double* previous = forward->data() + static_cast<size_t>(t - 1) * L;
    double* row = forward->data() + static_cast<size_t>(t) * L;
    for (int y = 0; y < L; ++y) {
      double best = kMinusInfinity;
      for (int p = 0; p < L; ++p) {
        best = std::max(best, previous[p] + TransitionInto(s, t, p, y));
      }
      row[y] = best + s.unary[static_cast<size_t>(t) * L + y];
    }
  }
}

// backward[t·L + y]: the best score of labels t+1..T−1 after y at t, end
// bias included, unary at t excluded.
void Backward(const ChainScores& s, std::vector<double>* backward) {
  const int T = s.length;
  const int L = s.num_labels;
  backward->assign(static_cast<size_t>(T) * L, kMinusInfinity);
  for (int y = 0; y < L; ++y) {
    (*backward)[static_cast<size_t>(T - 1) * L + y] = s.end[y];
  }
  for (int t = T - 2; t >= 0; --t) {
    const double* next = backward->data() + static_cast<size_t>(t + 1) * L;
    const double* unary = s.unary + static_cast<size_t>(t + 1) * L;
    double* row = backward->data() + static_cast<size_t>(t) * L;
    for (int y = 0; y < L; ++y) {
      double best = kMinusInfinity;
      for (int n = 0; n < L; ++n) {
        best =
            std::max(best, TransitionInto(s, t + 1, y, n) + unary[n] + next[n]);
      }
      row[y] = best;
    }
  }
}

// The model's first-order scores of `sentence`, for `what` (the call's
// result, named in the error); second-order models have no marginals here.
absl::StatusOr<ChainScores> ScoreSentence(const ChainModel& model,
                                          const Sentence& sentence,
                                          bool constrained, TagScratch* scratch,
                                          absl::string_view what) {
  if (model.order() != 1) {
    return absl::UnimplementedError(absl::StrCat(
        what,
        " are computed for first-order models only; this model is "
        "second-order (nbest lists its best labelings and their scores)"));
  }
  return model.FirstOrderScores(sentence, constrained, scratch);
}

}  // namespace

absl::Status ComputeMaxMarginals(const ChainModel& model,
                                 const Sentence& sentence, bool constrained,
                                 MaxMarginalScratch* scratch,
                                 std::vector<double>* out) {
  out->clear();
  absl::StatusOr<ChainScores> scores =
      ScoreSentence(model, sentence, constrained, &scratch->tag, "margins");
  if (!scores.ok()) return scores.status();
  if (scores->length == 0) return absl::OkStatus();
  Forward(*scores, &scratch->forward);
  Backward(*scores, &scratch->backward);
  out->resize(scratch->forward.size());
  for (size_t k = 0; k < out->size(); ++k) {
    (*out)[k] = scratch->forward[k] + scratch->backward[k];
  }
  return absl::OkStatus();
}

absl::StatusOr<double> ComputeLabelMarginals(const ChainModel& model,
                                             const Sentence& sentence,
                                             bool constrained,
                                             MaxMarginalScratch* scratch,
                                             std::vector<double>* out) {
  out->clear();
  absl::StatusOr<ChainScores> scores =
      ScoreSentence(model, sentence, constrained, &scratch->tag, "marginals");
  if (!scores.ok()) return scores.status();
  if (scores->length == 0) return 0.0;
  // Forward–backward writes the transition and boundary marginals after
  // the T×L label marginals (and per-position pair marginals with pair
  // scores); only the first are kept.
  const size_t T = scores->length;
  const size_t L = scores->num_labels;
  scratch->forward.resize(T * L + L * L + 2 * L +
                          (scores->pair != nullptr ? T * L * L : 0));
  const double log_partition =
      scratch->forward_backward.Compute(*scores, 1.0, scratch->forward.data());
  out->assign(scratch->forward.begin(), scratch->forward.begin() + T * L);
  return log_partition;
}

absl::StatusOr<double> LogProbabilityOfLabeling(
    const ChainModel& model, const Sentence& sentence,
    const std::vector<int32_t>& labels, bool constrained,
    MaxMarginalScratch* scratch) {
  absl::StatusOr<ChainScores> scores = ScoreSentence(
      model, sentence, constrained, &scratch->tag, "log probabilities");
  if (!scores.ok()) return scores.status();
  if (static_cast<size_t>(scores->length) != labels.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(labels.size(), " labels for ", scores->length, " items"));
  }
  if (labels.empty()) return 0.0;  // the one labeling of nothing
  // log Z alone: forward–backward writes no marginals when given none.
  const double log_partition =
      scratch->forward_backward.Compute(*scores, 1.0, nullptr);
  return ScoreLabeling(*scores, labels.data()) - log_partition;
}

}  // namespace chaintag
