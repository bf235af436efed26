// LabelEvaluation: per-label precision, recall and F1 of predicted tags
// against reference tags, with item and instance (sequence) accuracy,
// reported in the layout of `crfsuite tag -t`: the model's labels in its
// order, then the macro averages over them, the item accuracy and the
// instance accuracy. Reference labels the model does not know count as
// one unknown label: they are items, never correct, and stay out of the
// macro averages, as in CRFsuite.
//
// Thread-safety: a plain value type; Add is not safe to call concurrently.

#ifndef CHAINTAG_TAGGING_LABEL_EVALUATION_H_
#define CHAINTAG_TAGGING_LABEL_EVALUATION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "corpora/label_set.h"

namespace chaintag {

class LabelEvaluation {
 public:
  // `labels`: the model's labels, in the order to report them.
  explicit LabelEvaluation(LabelSet labels);

  // One sequence. Fails when the lengths differ.
  absl::Status Add(const std::vector<std::string>& reference,
                   const std::vector<std::string>& predicted);

  // The report, as crfsuite_evaluation_output prints it.
  std::string Report() const;

 private:
  struct Counts {
    int64_t correct = 0;
    int64_t model = 0;        // predicted as this label
    int64_t observation = 0;  // this label in the reference
  };
  LabelSet labels_;
  std::vector<Counts> counts_;  // per label, then the unknown label
  int64_t items_ = 0;
  int64_t instances_ = 0;
  int64_t correct_instances_ = 0;
};

}  // namespace chaintag

#endif  // CHAINTAG_TAGGING_LABEL_EVALUATION_H_
