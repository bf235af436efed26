#include "tagging/label_evaluation.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace chaintag {

LabelEvaluation::LabelEvaluation(LabelSet labels)
    : labels_(std::move(labels)), counts_(labels_.size() + 1) {}

absl::Status LabelEvaluation::Add(const std::vector<std::string>& reference,
                                  const std::vector<std::string>& predicted) {
  if (reference.size() != predicted.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("evaluation: ", reference.size(), " reference labels, ",
                     predicted.size(), " predicted"));
  }
  const int unknown = labels_.size();
  size_t correct = 0;
  for (size_t t = 0; t < reference.size(); ++t) {
    int r = labels_.Find(reference[t]);
    int p = labels_.Find(predicted[t]);
    if (r < 0) r = unknown;
    if (p < 0) p = unknown;
    ++counts_[r].observation;
    ++counts_[p].model;
    if (r == p && r != unknown) {
      ++counts_[r].correct;
      ++correct;
    }
  }
  items_ += static_cast<int64_t>(reference.size());
  ++instances_;
  if (correct == reference.size()) ++correct_instances_;
  return absl::OkStatus();
}

namespace {

struct Scores {
  double precision = 0;
  double recall = 0;
  double f1 = 0;
};

// A label's scores, as CRFsuite computes them (0 where undefined); the
// label occurs in the reference.
template <typename Counts>
Scores ScoresOf(const Counts& c) {
  Scores scores;
  scores.precision = c.model > 0 ? static_cast<double>(c.correct) / c.model : 0;
  scores.recall = static_cast<double>(c.correct) / c.observation;
  if (scores.precision + scores.recall > 0) {
    scores.f1 = scores.precision * scores.recall * 2 /
                (scores.precision + scores.recall);
  }
  return scores;
}

}  // namespace

std::string LabelEvaluation::Report() const {
  std::string out =
      "Performance by label (#match, #model, #ref) (precision, recall, "
      "F1):\n";
  const int num_labels = labels_.size();
  double macro_precision = 0, macro_recall = 0, macro_f1 = 0;
  int64_t correct_items = 0;
  for (int i = 0; i <= num_labels; ++i) {
    const Counts& c = counts_[i];
    // Labels absent from the reference are skipped, as CRFsuite does.
    if (c.observation == 0) continue;
    correct_items += c.correct;
    if (i < num_labels) {
      const Scores scores = ScoresOf(c);
      macro_precision += scores.precision;
      macro_recall += scores.recall;
      macro_f1 += scores.f1;
    }
  }
  for (int i = 0; i < num_labels; ++i) {
    const Counts& c = counts_[i];
    if (c.observation == 0) {
      absl::StrAppendFormat(&out,
                            "    %s: (%d, %d, %d) (******, ******, ******)\n",
                            labels_.Name(i), c.correct, c.model, c.observation);
      continue;
    }
    const Scores scores = ScoresOf(c);
    absl::StrAppendFormat(&out, "    %s: (%d, %d, %d) (%1.4f, %1.4f, %1.4f)\n",
                          labels_.Name(i), c.correct, c.model, c.observation,
                          scores.precision, scores.recall, scores.f1);
  }
  if (num_labels > 0) {
    macro_precision /= num_labels;
    macro_recall /= num_labels;
    macro_f1 /= num_labels;
  }
  absl::StrAppendFormat(&out,
                        "Macro-average precision, recall, F1: (%f, %f, %f)\n",
                        macro_precision, macro_recall, macro_f1);
  absl::StrAppendFormat(
      &out, "Item accuracy: %d / %d (%1.4f)\n", correct_items, items_,
      items_ > 0 ? static_cast<double>(correct_items) / items_ : 0.0);
  absl::StrAppendFormat(
      &out, "Instance accuracy: %d / %d (%1.4f)\n", correct_instances_,
      instances_,
      instances_ > 0 ? static_cast<double>(correct_instances_) / instances_
                     : 0.0);
  return out;
}

}  // namespace chaintag
