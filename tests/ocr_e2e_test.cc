// End to end on OCR: the ocr_small preset (train fold 0, test folds 1-9)
// for a few passes, its model file reloaded and re-scored; the large split's
// sizes; and the errors of bad OCR configs. Needs letter.data
// (requires-corpora).

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>

#include "base/corpora_testing.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/chain_model.h"
#include "pipeline/ocr.h"
#include "pipeline/ocr_task.h"
#include "pipeline/pipeline.h"

namespace chaintag {
namespace {

using ::testing::HasSubstr;

std::string PresetPath(const std::string& name) {
  return std::string(std::getenv("TEST_SRCDIR")) +
         "/chaintag/pipeline/configs/" + name + ".textproto";
}

PipelineOptions QuietOptions() {
  PipelineOptions options;
  options.corpora_root = CorporaRootForTests();
  options.output_dir = std::getenv("TEST_TMPDIR");
  options.progress = nullptr;
  return options;
}

class OcrEndToEndTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(CorpusFile("ocr/letter.data.gz").empty())
        << MissingCorpus("ocr/letter.data.gz");
  }

  PipelineConfig Preset(const std::string& name) {
    absl::StatusOr<PipelineConfig> config =
        ReadPipelineConfig(PresetPath(name));
    EXPECT_TRUE(config.ok()) << config.status();
    return config.ok() ? *config : PipelineConfig();
  }
};

TEST_F(OcrEndToEndTest, SmallSplitTrainsSavesReloadsAndScores) {
  PipelineConfig config = Preset("ocr_small");
  config.mutable_solver()->set_max_passes(10);
  config.mutable_solver()->set_gap_check(5);
  config.set_eval_every(5);
  config.set_model_path("ocr_e2e.model");
  config.set_log_path("ocr_e2e.log.jsonl");
  absl::StatusOr<PipelineResult> result = RunPipeline(config, QuietOptions());
  ASSERT_TRUE(result.ok()) << result.status();

  EXPECT_EQ(result->num_train_sentences, 626);
  EXPECT_EQ(result->num_test_sentences, 6251);
  EXPECT_EQ(result->summary.dim(), 4082);
  EXPECT_EQ(result->summary.num_examples(), 626);
  EXPECT_EQ(result->summary.passes(), 10);
  // A certified run: primal − dual = gap ≥ 0, all finite.
  EXPECT_TRUE(std::isfinite(result->summary.primal()));
  EXPECT_TRUE(std::isfinite(result->summary.dual()));
  EXPECT_GE(result->summary.gap(), 0);
  EXPECT_NEAR(result->summary.primal() - result->summary.dual(),
              result->summary.gap(), 1e-9);
  // Chance is 25/26 ≈ 96%; ten passes on fold 0 reach about 21.5%. A broken
  // feature map, label mapping or decoder is far above 35%.
  EXPECT_GE(result->test_letter_error, 0);
  EXPECT_LT(result->test_letter_error, 35.0);
  EXPECT_LT(result->train_letter_error, result->test_letter_error);
  EXPECT_THAT(result->test_report, HasSubstr("47535 letters"));

  // The saved model holds the same weights: the same letter error.
  absl::StatusOr<ChainModel> model = ChainModel::Load(result->model_path);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->labels().size(), 26);
  EXPECT_EQ(model->labels().names().front(), "a");
  EXPECT_EQ(model->labels().names().back(), "z");
  EXPECT_EQ(model->layout().dim(), 4082);
  EXPECT_EQ(model->header().features().num_buckets(), 129u);
  EXPECT_FALSE(model->header().features().bias());
  EXPECT_EQ(model->header().training().passes(), 10);
  EXPECT_THAT(model->header().resolved_config(),
              HasSubstr("ocr: \"ocr/letter.data.gz\""));
  absl::StatusOr<PreparedCorpus> prepared =
      PrepareCorpus(config, QuietOptions());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  EXPECT_EQ(prepared->problem->Dim(), 4082);
  const OcrTask& ocr = dynamic_cast<const OcrTask&>(*prepared->task);
  EXPECT_EQ(ocr.train_letters(), 4617);
  EXPECT_DOUBLE_EQ(
      LetterErrorPercent(ocr.test_problem(),
                         model->DenseWeights(*prepared->rows).data(), 1),
      result->test_letter_error);
}

// App. H box constraints through the pipeline: non-negative transitions on
// OCR-small with gap sampling and pairwise steps; the saved model respects
// the box and the run is certified (gap at w truncated to the box).
TEST_F(OcrEndToEndTest, NonnegativeTransitionsAreEnforcedAndCertified) {
  PipelineConfig config = Preset("ocr_small");
  config.mutable_model()->set_nonnegative_transitions(true);
  SolverConfig* solver = config.mutable_solver();
  solver->set_max_passes(20);
  solver->set_gap_check(10);
  solver->set_sampling(SolverConfig::GAP);
  solver->mutable_bcfw()->set_step(SolverConfig::PAIRWISE);
  solver->set_weighted_averaging(false);
  config.set_eval_every(0);
  config.set_model_path("ocr_box.model");
  config.set_log_path("ocr_box.log.jsonl");
  absl::StatusOr<PipelineResult> result = RunPipeline(config, QuietOptions());
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_GE(result->summary.gap(), 0);
  EXPECT_NEAR(result->summary.primal() - result->summary.dual(),
              result->summary.gap(), 1e-9);
  EXPECT_LT(result->test_letter_error, 35.0);
  absl::StatusOr<ChainModel> model = ChainModel::Load(result->model_path);
  ASSERT_TRUE(model.ok()) << model.status();
  const ChainLayout layout = model->layout();
  const std::vector<double> weights = model->DenseWeights(model->rows());
  int at_bound = 0;
  for (int64_t j = layout.transition_offset(); j < layout.start_offset(); ++j) {
    EXPECT_GE(weights[j], 0) << j;
    at_bound += weights[j] == 0;
  }
  // Unconstrained, most of the 676 transitions are negative; the box binds.
  EXPECT_GT(at_bound, 100);
  ASSERT_EQ(model->header().solver().bcfw().box_size(), 1);
  EXPECT_EQ(model->header().solver().bcfw().box(0).begin(),
            layout.transition_offset());
}

// The seen labels' model (model.states OBSERVED_STATES) by BCFW, which
// trains over the free coordinates as its problem's space: the training
// letter error is the saved model's on the training words (as the
// unrestricted problem scores them), the test error is sensible, and
// non-negative transitions are boxed where that space holds them.
TEST_F(OcrEndToEndTest, ObservedStatesScoreTheSavedModelInItsSpace) {
  PipelineConfig config = Preset("ocr_small");
  config.mutable_model()->set_states(ModelConfig::OBSERVED_STATES);
  config.mutable_model()->set_nonnegative_transitions(true);
  config.mutable_solver()->set_max_passes(10);
  config.set_eval_every(5);
  config.set_model_path("ocr_observed.model");
  config.set_log_path("ocr_observed.log.jsonl");
  absl::StatusOr<PipelineResult> result = RunPipeline(config, QuietOptions());
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_LT(result->summary.dim(), 4082);
  EXPECT_LT(result->test_letter_error, 35.0);
  EXPECT_LT(result->train_letter_error, result->test_letter_error);
  absl::StatusOr<ChainModel> model = ChainModel::Load(result->model_path);
  ASSERT_TRUE(model.ok()) << model.status();
  const std::vector<double> weights = model->DenseWeights(model->rows());
  const ChainLayout layout = model->layout();
  int at_bound = 0;
  for (int64_t j = layout.transition_offset(); j < layout.start_offset(); ++j) {
    EXPECT_GE(weights[j], 0) << j;
    at_bound += weights[j] == 0;
  }
  EXPECT_GT(at_bound, 100);
  PipelineConfig every_label = config;
  every_label.mutable_model()->set_states(ModelConfig::ALL_STATES);
  absl::StatusOr<PreparedCorpus> prepared =
      PrepareCorpus(every_label, QuietOptions());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  EXPECT_DOUBLE_EQ(LetterErrorPercent(*prepared->problem, weights.data(), 1),
                   result->train_letter_error);
  const OcrTask& ocr = dynamic_cast<const OcrTask&>(*prepared->task);
  EXPECT_DOUBLE_EQ(LetterErrorPercent(ocr.test_problem(), weights.data(), 1),
                   result->test_letter_error);
}

TEST_F(OcrEndToEndTest, LargeSplitSizes) {
  absl::StatusOr<PreparedCorpus> prepared =
      PrepareCorpus(Preset("ocr_large"), QuietOptions());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  EXPECT_EQ(prepared->problem->NumExamples(), 6251);
  const OcrTask& ocr = dynamic_cast<const OcrTask&>(*prepared->task);
  EXPECT_EQ(ocr.test_problem().NumExamples(), 626);
  EXPECT_EQ(ocr.train_letters() + ocr.test_letters(), 52152);
  EXPECT_EQ(prepared->labels.size(), 26);
}

TEST_F(OcrEndToEndTest, MaxTrainSentencesKeepsTheFirstWords) {
  PipelineConfig config = Preset("ocr_small");
  config.mutable_corpus()->set_max_train_sentences(50);
  absl::StatusOr<PreparedCorpus> prepared =
      PrepareCorpus(config, QuietOptions());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  EXPECT_EQ(prepared->problem->NumExamples(), 50);
}

// Config and path errors need no corpus.
PipelineConfig OcrConfig(const std::string& path) {
  PipelineConfig config;
  config.set_name("bad_ocr");
  config.mutable_corpus()->set_ocr(path);
  config.mutable_corpus()->add_train_folds(0);
  config.mutable_corpus()->add_test_folds(1);
  return config;
}

TEST(OcrConfigTest, MissingFileIsNamed) {
  const std::string path =
      std::string(std::getenv("TEST_TMPDIR")) + "/no_such_letter.data.gz";
  absl::StatusOr<PipelineResult> result =
      RunPipeline(OcrConfig(path), PipelineOptions{"", ".", nullptr});
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(), HasSubstr(path));
}

TEST(OcrConfigTest, MalformedFileIsNamedWithItsLine) {
  const std::string path =
      std::string(std::getenv("TEST_TMPDIR")) + "/broken_letter.data";
  std::ofstream(path) << "1\ta\t-1\t1\t1\t0\t0 1 2\n";
  absl::StatusOr<PreparedCorpus> prepared =
      PrepareCorpus(OcrConfig(path), PipelineOptions{"", ".", nullptr});
  ASSERT_FALSE(prepared.ok());
  EXPECT_THAT(prepared.status().message(), HasSubstr(path + ":1"));
}

TEST(OcrConfigTest, BadFoldsAreRejected) {
  PipelineConfig overlap = OcrConfig("ocr/letter.data.gz");
  overlap.mutable_corpus()->add_test_folds(0);
  absl::StatusOr<PreparedCorpus> prepared =
      PrepareCorpus(overlap, PipelineOptions{"", ".", nullptr});
  ASSERT_FALSE(prepared.ok());
  EXPECT_THAT(prepared.status().message(), HasSubstr("fold 0 is in both"));

  PipelineConfig out_of_range = OcrConfig("ocr/letter.data.gz");
  out_of_range.mutable_corpus()->add_train_folds(10);
  prepared = PrepareCorpus(out_of_range, PipelineOptions{"", ".", nullptr});
  ASSERT_FALSE(prepared.ok());
  EXPECT_THAT(prepared.status().message(),
              HasSubstr("train_folds has fold 10"));

  PipelineConfig no_train = OcrConfig("ocr/letter.data.gz");
  no_train.mutable_corpus()->clear_train_folds();
  prepared = PrepareCorpus(no_train, PipelineOptions{"", ".", nullptr});
  ASSERT_FALSE(prepared.ok());
  EXPECT_THAT(prepared.status().message(), HasSubstr("train_folds is empty"));

  PipelineConfig mixed = OcrConfig("ocr/letter.data.gz");
  mixed.mutable_corpus()->set_train("conll2000/train.txt");
  prepared = PrepareCorpus(mixed, PipelineOptions{"", ".", nullptr});
  ASSERT_FALSE(prepared.ok());
  EXPECT_THAT(prepared.status().message(), HasSubstr("cannot be combined"));
}

}  // namespace
}  // namespace chaintag
