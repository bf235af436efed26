// The CoNLL task (corpus.ocr not set): column files read (train; dev by
// path or as the last corpus.dev_fraction of train; test), labelled in the
// training tag scheme, turned into hashed features over the buckets they
// use, and scored exactly as conlleval scores them. Predictions are
// converted back to the corpus's own tag scheme (e.g. IOB1 for CoNLL-2003)
// before they are scored or written, so conlleval on the written
// predictions prints the reported figures. With
// corpus.retrain_on_train_and_dev the dev sentences' labels are numbered
// after train's at once, and their features are extracted only for the
// train + dev problem of the final run.
//
// Thread-safety: as Task; ConllTask keeps no state of its own. EvaluateModel
// may be called concurrently on a const model.

#ifndef CHAINTAG_PIPELINE_CONLL_TASK_H_
#define CHAINTAG_PIPELINE_CONLL_TASK_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "corpora/sentence.h"
#include "models/chain_model.h"
#include "pipeline/task.h"

namespace chaintag {

class ConllTask : public Task {
 public:
  void ResolveConfig(PipelineConfig* config) const override;
  absl::Status Prepare(const PipelineOptions& options,
                       PreparedCorpus* prepared) override;
  void ReportCorpus(const PreparedCorpus& prepared, const ProgressLine& say,
                    PipelineResult* result) const override;
  // F1 (token accuracy for untyped tags) of the weights' tags, decoded as
  // the saved model will decode them.
  HeldOutScorer MakeHeldOutScorer(const PreparedCorpus& prepared,
                                  bool dev_only) const override;
  void DescribeModelInput(const PreparedCorpus& prepared,
                          ModelFile* header) const override;
  // Dev (unless the train-only model scored it), then test, whose
  // predictions go to config.predictions_path when set.
  absl::StatusOr<std::string> ScoreSavedModel(
      const PreparedCorpus& prepared, const ChainModel& model,
      const PipelineOptions& options, const ProgressLine& say,
      PipelineResult* result) const override;
  absl::StatusOr<std::string> ScoreTrainOnlyModel(
      const PreparedCorpus& prepared, const ChainModel& model,
      const ProgressLine& say, PipelineResult* result) const override;
  absl::Status PrepareRetrainingProblem(PreparedCorpus* prepared) override;

  // Prepare's two steps: the splits read (train, dev, test), then the
  // labels, features and training problem of prepared->train (and dev's
  // examples when retraining). A task that changes the sentences (stacking)
  // runs between them; a first stage is trained from sentences alone.
  absl::Status ReadCorpus(const PipelineOptions& options,
                          PreparedCorpus* prepared) const;
  absl::Status PrepareProblem(PreparedCorpus* prepared) const;
};

// Tags `sentences` with `model` (in parallel, deterministic) and scores them
// with conlleval semantics; `report` gets conlleval's text and
// `predictions` the tags, when non-null.
absl::StatusOr<double> EvaluateModel(
    const ChainModel& model, const std::vector<Sentence>& sentences,
    int num_threads, std::string* report, double* accuracy,
    std::vector<std::vector<std::string>>* predictions = nullptr);

}  // namespace chaintag

#endif  // CHAINTAG_PIPELINE_CONLL_TASK_H_
