// Max-marginal scores of a first-order chain model (with or without pair
// templates, whose per-position transitions it reads): for every position t
// and label y, the score ⟨w, φ(x, y')⟩ of the best labeling y' with
// y'_t = y (max-sum forward and backward messages, O(T·L²)). Row t's
// maximum is the best labeling's score, reached at that labeling's label;
// best − (the largest entry off the best labeling) is the margin
// `tag --margins` reports (the second-best labeling differs from the best
// somewhere, and the best labeling through any other (t, y) is a labeling
// other than the best). With constraints, forbidden labelings are left out
// (−∞ where no valid labeling passes through (t, y)).
//
// Thread-safety: a const model and per-thread scratch, as ChainModel::Tag.

#ifndef CHAINTAG_PYTHON_MAX_MARGINALS_H_
#define CHAINTAG_PYTHON_MAX_MARGINALS_H_

#include <vector>

#include "absl/status/status.h"
#include "corpora/sentence.h"
#include "models/chain_model.h"

namespace chaintag {

struct MaxMarginalScratch {
  TagScratch tag;
  std::vector<double> forward;
  std::vector<double> backward;
};

// Fills `out` with T×L max-marginals (row-major, labels in the model's id
// order, i.e. its training scheme). `sentence` must carry every attribute
// the model reads (a stacked model's document attributes included).
// Unimplemented for second-order models.
absl::Status ComputeMaxMarginals(const ChainModel& model,
                                 const Sentence& sentence, bool constrained,
                                 MaxMarginalScratch* scratch,
                                 std::vector<double>* out);

}  // namespace chaintag

#endif  // CHAINTAG_PYTHON_MAX_MARGINALS_H_
