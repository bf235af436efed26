// End to end on CoNLL-2000: the chunking preset trained on the first 500
// sentences, its model file reloaded and re-scored, and the run repeated to
// check determinism. Needs the corpora (requires-corpora).

#include <cstdlib>
#include <fstream>
#include <string>

#include "base/corpora_testing.h"
#include "gtest/gtest.h"
#include "models/chain_model.h"
#include "pipeline/pipeline.h"

namespace chaintag {
namespace {

std::string PresetPath() {
  return std::string(std::getenv("TEST_SRCDIR")) +
         "/chaintag/pipeline/configs/conll2000_chunking.textproto";
}

class ChunkingEndToEndTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(CorpusFile("conll2000/train.txt").empty())
        << MissingCorpus("conll2000/train.txt");
    absl::StatusOr<PipelineConfig> config = ReadPipelineConfig(PresetPath());
    ASSERT_TRUE(config.ok()) << config.status();
    config_ = *config;
    config_.mutable_corpus()->set_max_train_sentences(500);
    config_.mutable_solver()->set_max_passes(8);
    config_.mutable_solver()->set_gap_check(4);
    config_.set_eval_every(4);
    options_.corpora_root = CorporaRootForTests();
    options_.output_dir = std::getenv("TEST_TMPDIR");
    options_.progress = nullptr;
  }

  PipelineConfig config_;
  PipelineOptions options_;
};

TEST_F(ChunkingEndToEndTest, TrainsSavesReloadsAndScores) {
  config_.set_model_path("e2e.model");
  absl::StatusOr<PipelineResult> result = RunPipeline(config_, options_);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->num_train_sentences, 500);
  EXPECT_EQ(result->num_test_sentences, 2012);
  EXPECT_EQ(result->summary.passes(), 8);
  EXPECT_GE(result->summary.gap(), 0);
  EXPECT_NEAR(result->summary.primal() - result->summary.dual(),
              result->summary.gap(), 1e-9);
  // 500 sentences are 6% of the training set: far from the full model's
  // ~93.8, but a broken pipeline (labels, features, decoding) scores far
  // lower than this.
  EXPECT_GT(result->test_f1, 80.0);
  EXPECT_NE(result->test_report.find("processed 47377 tokens with 23852 "
                                     "phrases"),
            std::string::npos);

  absl::StatusOr<ChainModel> model = ChainModel::Load(result->model_path);
  ASSERT_TRUE(model.ok()) << model.status();
  std::vector<Sentence> test;
  {
    absl::StatusOr<PreparedCorpus> prepared = PrepareCorpus(config_, options_);
    ASSERT_TRUE(prepared.ok()) << prepared.status();
    test = std::move(prepared->test);
  }
  std::string report;
  double accuracy = 0;
  absl::StatusOr<double> f1 =
      EvaluateModel(*model, test, 2, &report, &accuracy);
  ASSERT_TRUE(f1.ok()) << f1.status();
  EXPECT_EQ(*f1, result->test_f1);
  EXPECT_EQ(report, result->test_report);
  EXPECT_EQ(model->header().training().passes(), 8);
  EXPECT_EQ(model->labels().Find("I-LST"), -1);  // unseen in training
}

TEST_F(ChunkingEndToEndTest, SameConfigSameModel) {
  config_.mutable_solver()->set_max_passes(2);
  config_.set_eval_every(0);
  std::string bytes[2];
  for (int run = 0; run < 2; ++run) {
    config_.set_model_path("determinism" + std::to_string(run) + ".model");
    absl::StatusOr<PipelineResult> result = RunPipeline(config_, options_);
    ASSERT_TRUE(result.ok()) << result.status();
    absl::StatusOr<ChainModel> model = ChainModel::Load(result->model_path);
    ASSERT_TRUE(model.ok()) << model.status();
    ModelFile file = model->ToProto();
    // Wall time and the output name differ by design.
    file.mutable_training()->clear_seconds();
    file.clear_resolved_config();
    bytes[run] = file.SerializeAsString();
  }
  EXPECT_TRUE(bytes[0] == bytes[1]) << "two runs of one config differ";
}

}  // namespace
}  // namespace chaintag
