// Marginals of a first-order chain model's scores. Max-marginals (with or
// without pair templates, whose per-position transitions it reads): for every
// position t and label y, the score ⟨w, φ(x, y')⟩ of the best labeling y' with
// y'_t = y (max-sum forward and backward messages, O(T·L²)). Row t's
// maximum is the best labeling's score, reached at that labeling's label;
// best − (the largest entry off the best labeling) is the margin
// `tag --margins` reports (the second-best labeling differs from the best
// somewhere, and the best labeling through any other (t, y) is a labeling
// other than the best). With constraints, forbidden labelings are left out
// (−∞ where no valid labeling passes through (t, y)).
//
// Label marginals: P(y_t = y) under p(y) ∝ exp(⟨w, φ(x, y)⟩), by
// forward–backward (models/smoothing.h at μ = 1): the model's own
// distribution for a CRF (ModelFile.loss LOG). A max-margin model's scores
// are not calibrated log-probabilities: these rank labels and show where
// the model hesitates, but a 0.9 is not "right 90% of the time".
//
// Thread-safety: a const model and per-thread scratch, as ChainModel::Tag.

#ifndef CHAINTAG_PYTHON_MAX_MARGINALS_H_
#define CHAINTAG_PYTHON_MAX_MARGINALS_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "corpora/sentence.h"
#include "models/chain_model.h"
#include "models/smoothing.h"

namespace chaintag {

struct MaxMarginalScratch {
  TagScratch tag;
  std::vector<double> forward;
  std::vector<double> backward;
  ForwardBackward forward_backward;
};

// Fills `out` with T×L max-marginals (row-major, labels in the model's id
// order, i.e. its training scheme). `sentence` must carry every attribute
// the model reads (a stacked model's document attributes included).
// Unimplemented for second-order models.
absl::Status ComputeMaxMarginals(const ChainModel& model,
                                 const Sentence& sentence, bool constrained,
                                 MaxMarginalScratch* scratch,
                                 std::vector<double>* out);

// Fills `out` with T×L label marginals (rows sum to 1; labels in id
// order) and returns log Z. Constrained: forbidden labelings have
// probability 0. Unimplemented for second-order models.
absl::StatusOr<double> ComputeLabelMarginals(const ChainModel& model,
                                             const Sentence& sentence,
                                             bool constrained,
                                             MaxMarginalScratch* scratch,
                                             std::vector<double>* out);

// log P(labels | sentence) under p(y) ∝ exp(⟨w, φ(x, y)⟩), labels as ids
// (−∞ for a labeling the constraints forbid, when constrained).
absl::StatusOr<double> LogProbabilityOfLabeling(
    const ChainModel& model, const Sentence& sentence,
    const std::vector<int32_t>& labels, bool constrained,
    MaxMarginalScratch* scratch);

}  // namespace chaintag

#endif  // CHAINTAG_PYTHON_MAX_MARGINALS_H_
