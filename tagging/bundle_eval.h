// Scoring bundles on CoNLL files with gold columns, as conlleval does: a
// stage with its inputs predicted by the earlier stages (what `tag
// --pipeline` gives on raw text), or a stage's model alone on the file's own
// (gold) input columns, each constrained or not.
//
// Thread-safety: stateless functions; the bundle and model are only read.

#ifndef CHAINTAG_TAGGING_BUNDLE_EVAL_H_
#define CHAINTAG_TAGGING_BUNDLE_EVAL_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "corpora/sentence.h"
#include "models/chain_model.h"
#include "tagging/bundle.h"

namespace chaintag {

struct StageScore {
  double f1 = 0;        // conlleval FB1 (token accuracy for untyped tags)
  double accuracy = 0;  // token accuracy, percent
  int64_t tokens = 0;
  std::string report;  // conlleval's text
};

// Tags attribute 0 of each sentence (the words) through `bundle` and scores
// stage `stage`'s column against the sentences' gold tags (in the stage
// model's output scheme).
absl::StatusOr<StageScore> ScoreBundleStage(
    const Bundle& bundle, int stage, const std::vector<Sentence>& sentences,
    const BundleOptions& options);

// Tags the sentences (read with the model's own input_format, so their
// attributes are the model's input columns) and scores against their gold
// tags.
absl::StatusOr<StageScore> ScoreModel(const ChainModel& model,
                                      const std::vector<Sentence>& sentences,
                                      bool constrained);

}  // namespace chaintag

#endif  // CHAINTAG_TAGGING_BUNDLE_EVAL_H_
