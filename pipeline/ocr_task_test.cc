#include "pipeline/ocr_task.h"

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace chaintag {
namespace {

using ::testing::HasSubstr;

std::string TmpDir() { return std::getenv("TEST_TMPDIR"); }

// A letter.data of three words: "ab" in fold 0, "cat" in fold 1, "do" in
// fold 2; each letter's pixels are its index's bits.
std::string WriteLetters() {
  const std::string path = TmpDir() + "/tiny_letter.data";
  std::ofstream out(path);
  int id = 1;
  int word_id = 1;
  for (const auto& [word, fold] : std::vector<std::pair<std::string, int>>{
           {"ab", 0}, {"cat", 1}, {"do", 2}}) {
    for (size_t i = 0; i < word.size(); ++i) {
      const int next = i + 1 < word.size() ? id + 1 : -1;
      out << id << '\t' << word[i] << '\t' << next << '\t' << word_id << '\t'
          << i + 1 << '\t' << fold;
      for (int p = 0; p < 128; ++p)
        out << '\t' << (((word[i] - 'a') >> (p % 5)) & 1);
      out << '\n';
      ++id;
    }
    ++word_id;
  }
  return path;
}

PipelineConfig TinyOcrConfig(const std::string& path) {
  PipelineConfig config;
  config.mutable_corpus()->set_ocr(path);
  config.mutable_corpus()->add_train_folds(0);
  config.mutable_corpus()->add_test_folds(1);
  config.mutable_model()->set_normalize_loss(true);
  return config;
}

class OcrTaskTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = WriteLetters();
    options_.progress = nullptr;
  }

  absl::Status Prepare(const PipelineConfig& config, PreparedCorpus* prepared) {
    prepared->config = config;
    task_.ResolveConfig(&prepared->config);
    return task_.Prepare(options_, prepared);
  }

  std::string path_;
  OcrTask task_;
  PipelineOptions options_;
};

TEST_F(OcrTaskTest, ConfigRecordsThePixelFeatureMap) {
  PipelineConfig config = TinyOcrConfig(path_);
  task_.ResolveConfig(&config);
  EXPECT_EQ(config.features().num_buckets(), 129u);
  EXPECT_FALSE(config.features().bias());
  EXPECT_EQ(config.model().train_scheme(), NONE);
}

TEST_F(OcrTaskTest, KeepsTheHeldOutWordsAndTheirLetters) {
  PipelineConfig config = TinyOcrConfig(path_);
  config.mutable_corpus()->add_dev_folds(2);
  PreparedCorpus prepared;
  ASSERT_TRUE(Prepare(config, &prepared).ok());
  EXPECT_EQ(prepared.labels.size(), 26);
  EXPECT_EQ(prepared.problem->NumExamples(), 1);
  EXPECT_EQ(prepared.problem->Dim(), 4082);
  EXPECT_EQ(prepared.rows->size(), 129);
  EXPECT_EQ(task_.test_problem().NumExamples(), 1);
  EXPECT_EQ(task_.dev_problem().NumExamples(), 1);
  EXPECT_EQ(task_.train_letters(), 2);
  EXPECT_EQ(task_.test_letters(), 3);
  EXPECT_EQ(task_.dev_letters(), 2);
  // The sentence fields are the CoNLL task's.
  EXPECT_TRUE(prepared.train.empty());
  EXPECT_TRUE(prepared.test.empty());
  EXPECT_EQ(prepared.extractor, nullptr);

  PipelineResult result;
  result.num_train_sentences = 1;
  std::vector<std::string> lines;
  task_.ReportCorpus(
      prepared, [&lines](const std::string& line) { lines.push_back(line); },
      &result);
  EXPECT_EQ(result.num_test_sentences, 1);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], absl::StrCat("corpus: OCR ", path_,
                                   ", 1 training words (2 letters), 1 test "
                                   "words (3 letters), 26 labels"));
  EXPECT_EQ(lines[1], "features: 128 pixels + constant per letter, dim 4082");
}

TEST_F(OcrTaskTest, HeldOutScorerIsTheLetterErrorOnDevThenTest) {
  PipelineConfig config = TinyOcrConfig(path_);
  config.mutable_corpus()->add_dev_folds(2);
  PreparedCorpus with_dev;
  ASSERT_TRUE(Prepare(config, &with_dev).ok());
  HeldOutScorer scorer = task_.MakeHeldOutScorer(with_dev, true);
  EXPECT_EQ(scorer.name, "dev_letter_error");
  EXPECT_TRUE(scorer.lower_is_better);
  ASSERT_TRUE(scorer.score);
  const std::vector<double> zero(with_dev.problem->Dim(), 0.0);
  absl::StatusOr<double> error = scorer.score(zero.data());
  ASSERT_TRUE(error.ok()) << error.status();
  EXPECT_GE(*error, 0);
  EXPECT_LE(*error, 100);

  OcrTask without_dev_task;
  PreparedCorpus without_dev;
  without_dev.config = TinyOcrConfig(path_);
  without_dev_task.ResolveConfig(&without_dev.config);
  ASSERT_TRUE(without_dev_task.Prepare(options_, &without_dev).ok());
  EXPECT_EQ(without_dev_task.MakeHeldOutScorer(without_dev, false).name,
            "test_letter_error");
  EXPECT_FALSE(without_dev_task.MakeHeldOutScorer(without_dev, true).score);
}

TEST_F(OcrTaskTest, ModelInputIsPixels) {
  PreparedCorpus prepared;
  ASSERT_TRUE(Prepare(TinyOcrConfig(path_), &prepared).ok());
  ModelFile header;
  task_.DescribeModelInput(prepared, &header);
  EXPECT_FALSE(header.has_input_format());
  EXPECT_EQ(header.output_scheme(), NONE);
}

TEST_F(OcrTaskTest, RetrainingNeedsDevFoldsAndJoinsThem) {
  PipelineConfig config = TinyOcrConfig(path_);
  config.mutable_corpus()->set_retrain_on_train_and_dev(true);
  config.mutable_corpus()->clear_dev_folds();
  PreparedCorpus prepared;
  EXPECT_THAT(Prepare(config, &prepared).message(),
              HasSubstr("retrain_on_train_and_dev needs corpus.dev_folds"));

  // Second order: "ab" (train) and "do" (dev) join in one problem, and the
  // test word is rebuilt in its space.
  config.mutable_corpus()->add_dev_folds(2);
  config.mutable_model()->set_order(2);
  PreparedCorpus second;
  ASSERT_TRUE(Prepare(config, &second).ok());
  ASSERT_TRUE(task_.PrepareRetrainingProblem(&second).ok());
  EXPECT_EQ(second.problem, nullptr);
  ASSERT_NE(second.problem_with_dev, nullptr);
  EXPECT_EQ(second.problem_with_dev->NumExamples(), 2);
  EXPECT_EQ(task_.train_letters(), 4);
  EXPECT_EQ(task_.test_problem().layout().dim(),
            second.problem_with_dev->layout().dim());
  EXPECT_EQ(second.current_problem().NumExamples(), 2);
  EXPECT_EQ(task_.PrepareRetrainingProblem(&second).code(),
            absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace chaintag
