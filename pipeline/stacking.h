// Two-stage stacking for CoNLL corpora (PipelineConfig.stacking; Krishnan
// & Manning 2006): the CoNLL task, with document attributes
// (features/document_features.h) from first-stage labels added to the
// sentences between reading the corpus and making the problem.
//
//   train  each document is labelled by a first stage trained on the other
//          folds (k-fold jackknife by document), so its attributes look as
//          noisy as they will on unseen text;
//   dev    labelled by a first stage trained on all of train (kept as
//          `stacked_dev`; `dev` stays as read for the saved model's scores);
//   model  carries that first stage, or, retrained on train + dev, a first
//          stage trained on train + dev.
//
// Thread-safety: as Task.

#ifndef CHAINTAG_PIPELINE_STACKING_H_
#define CHAINTAG_PIPELINE_STACKING_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "corpora/sentence.h"
#include "models/chain_model.h"
#include "pipeline/conll_task.h"
#include "pipeline/pipeline_config.pb.h"
#include "pipeline/task.h"

namespace chaintag {

class StackedConllTask : public ConllTask {
 public:
  absl::Status Prepare(const PipelineOptions& options,
                       PreparedCorpus* prepared) override;
};

// The config of the first-stage runs: `config` (resolved) without
// stacking, the templates that read attributes from `num_attributes` on
// (the document attributes), retraining, evaluation and outputs, at
// stacking.first_stage_passes.
PipelineConfig FirstStageConfig(const PipelineConfig& config,
                                int num_attributes);

// A first stage trained on `train` with `config` (FirstStageConfig's) and
// the layout of `source`'s corpus (format, columns), in memory.
absl::StatusOr<ChainModel> TrainFirstStage(const PipelineConfig& config,
                                           const PreparedCorpus& source,
                                           std::vector<Sentence> train);

// The labels (IOB2) of prepared.train's sentences from first stages that
// never saw them: the documents of fold f (document mod stacking.folds)
// by a stage trained on the other folds.
absl::Status JackknifeLabels(const PipelineConfig& stage_config,
                             const PreparedCorpus& prepared,
                             const ProgressLine& say,
                             std::vector<std::vector<std::string>>* labels);

}  // namespace chaintag

#endif  // CHAINTAG_PIPELINE_STACKING_H_
