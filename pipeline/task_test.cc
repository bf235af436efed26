#include "pipeline/task.h"

#include "gtest/gtest.h"

namespace chaintag {
namespace {

// A task with nothing of its own: what the interface gives by default.
class BareTask : public Task {
 public:
  void ResolveConfig(PipelineConfig*) const override {}
  absl::Status Prepare(const PipelineOptions&, PreparedCorpus*) override {
    return absl::OkStatus();
  }
  void ReportCorpus(const PreparedCorpus&, const ProgressLine&,
                    PipelineResult*) const override {}
  HeldOutScorer MakeHeldOutScorer(const PreparedCorpus&, bool) const override {
    return HeldOutScorer();
  }
  void DescribeModelInput(const PreparedCorpus&, ModelFile*) const override {}
  absl::StatusOr<std::string> ScoreSavedModel(const PreparedCorpus&,
                                              const ChainModel&,
                                              const PipelineOptions&,
                                              const ProgressLine&,
                                              PipelineResult*) const override {
    return std::string();
  }
};

TEST(TaskTest, RetrainingIsForTasksThatSayHow) {
  BareTask task;
  PreparedCorpus prepared;
  const absl::Status status = task.PrepareRetrainingProblem(&prepared);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(status.message().find("retrain_on_train_and_dev"),
            absl::string_view::npos);
}

TEST(TaskTest, WorkerThreadsAreAtLeastOne) {
  PipelineConfig config;
  EXPECT_EQ(WorkerThreads(config), 2);  // the solver's default
  config.mutable_solver()->set_num_threads(0);
  EXPECT_EQ(WorkerThreads(config), 1);
  config.mutable_solver()->set_num_threads(-2);
  EXPECT_EQ(WorkerThreads(config), 1);
  config.mutable_solver()->set_num_threads(3);
  EXPECT_EQ(WorkerThreads(config), 3);
}

TEST(TaskTest, PipelineResultStartsWithoutLetterErrors) {
  const PipelineResult result;
  EXPECT_EQ(result.test_letter_error, -1);
  EXPECT_EQ(result.train_only_test_f1, -1);
  EXPECT_EQ(result.path.best, -1);
}

}  // namespace
}  // namespace chaintag
