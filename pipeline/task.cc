#include "pipeline/task.h"

#include <algorithm>

namespace chaintag {

int WorkerThreads(const PipelineConfig& config) {
  return std::max(1, config.solver().num_threads());
}

absl::StatusOr<std::string> Task::ScoreTrainOnlyModel(
    const PreparedCorpus& /*prepared*/, const ChainModel& /*model*/,
    const ProgressLine& /*say*/, PipelineResult* /*result*/) const {
  return absl::UnimplementedError(
      "corpus.retrain_on_train_and_dev is for CoNLL corpora");
}

absl::Status Task::PrepareRetrainingProblem(
    PreparedCorpus* /*prepared*/) const {
  return absl::UnimplementedError(
      "corpus.retrain_on_train_and_dev is for CoNLL corpora");
}

}  // namespace chaintag
