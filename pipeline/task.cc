#include "pipeline/task.h"

#include <algorithm>
#include <utility>

namespace chaintag {

ProgressLine ProgressPrinter(std::FILE* progress) {
  return [progress](const std::string& text) {
    if (progress != nullptr) {
      std::fprintf(progress, "%s\n", text.c_str());
      std::fflush(progress);
    }
  };
}

int WorkerThreads(const PipelineConfig& config) {
  return std::max(1, config.solver().num_threads());
}

absl::StatusOr<std::string> Task::ScoreTrainOnlyModel(
    const PreparedCorpus& /*prepared*/, const ChainModel& /*model*/,
    const ProgressLine& /*say*/, PipelineResult* /*result*/) const {
  return absl::UnimplementedError(
      "corpus.retrain_on_train_and_dev is for CoNLL corpora");
}

absl::Status Task::PrepareRetrainingProblem(PreparedCorpus* /*prepared*/) {
  return absl::UnimplementedError(
      "corpus.retrain_on_train_and_dev is for CoNLL corpora");
}

void PreparedCorpus::SetTrainingProblem(TrainingProblem training) {
  rows = std::move(training.rows);
  pair_rows = std::move(training.pair_rows);
  structure = std::move(training.structure);
  problem = std::move(training.problem);
}

void PreparedCorpus::SetRetrainingProblem(TrainingProblem training) {
  rows_with_dev = std::move(training.rows);
  pair_rows_with_dev = std::move(training.pair_rows);
  structure_with_dev = std::move(training.structure);
  problem_with_dev = std::move(training.problem);
}

}  // namespace chaintag
