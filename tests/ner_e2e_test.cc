// End to end on CoNLL-2003: the NER preset's config (its corpus, format,
// feature templates and solver) trained on the first 1000 sentences of
// eng.train for a few passes, scored on all of eng.testa (dev) and
// eng.testb (test); the IOB1 predictions file rescored as conlleval reads
// it, and the model file reloaded. Needs the corpora (requires-corpora).

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "base/corpora_testing.h"
#include "corpora/conll_reader.h"
#include "corpora/conlleval.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/chain_model.h"
#include "pipeline/pipeline.h"

namespace chaintag {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string PresetPath() {
  return std::string(std::getenv("TEST_SRCDIR")) +
         "/chaintag/pipeline/configs/conll2003_ner.textproto";
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

class NerEndToEndTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(CorpusFile("conll2003/eng.train").empty())
        << MissingCorpus("conll2003/eng.train");
    absl::StatusOr<PipelineConfig> config = ReadPipelineConfig(PresetPath());
    ASSERT_TRUE(config.ok()) << config.status();
    config_ = *config;
    config_.mutable_corpus()->set_max_train_sentences(1000);
    // The preset's templates, fewer buckets: a test-sized weight vector.
    config_.mutable_features()->set_num_buckets(1 << 18);
    config_.mutable_solver()->set_max_passes(4);
    config_.mutable_solver()->set_gap_check(2);
    config_.set_eval_every(2);
    options_.corpora_root = CorporaRootForTests();
    options_.output_dir = std::getenv("TEST_TMPDIR");
    options_.progress = nullptr;
  }

  PipelineConfig config_;
  PipelineOptions options_;
};

TEST_F(NerEndToEndTest, PresetReadsIob1AndTrainsInIob2) {
  EXPECT_EQ(config_.corpus().format().tag_scheme(), IOB1);
  EXPECT_EQ(config_.model().train_scheme(), IOB2);
  EXPECT_EQ(config_.corpus().dev(), "conll2003/eng.testa");
  EXPECT_EQ(config_.corpus().test(), "conll2003/eng.testb");
}

TEST_F(NerEndToEndTest, ScoresDevAndTestAndWritesIob1ThatConllevalAgreesWith) {
  config_.set_model_path("ner_e2e.model");
  config_.set_predictions_path("ner_e2e.pred");
  absl::StatusOr<PipelineResult> result = RunPipeline(config_, options_);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->num_train_sentences, 1000);
  // -DOCSTART- lines are document breaks, not sentences or tokens.
  EXPECT_EQ(result->num_dev_sentences, 3250);
  EXPECT_EQ(result->num_test_sentences, 3453);
  EXPECT_THAT(result->dev_report,
              HasSubstr("processed 51362 tokens with 5942 phrases"));
  EXPECT_THAT(result->test_report,
              HasSubstr("processed 46435 tokens with 5648 phrases"));
  EXPECT_EQ(result->summary.passes(), 4);
  // 1000 sentences are 7% of eng.train: far from the preset's ~91 dev F1,
  // but a broken pipeline (labels, schemes, features) scores far lower.
  EXPECT_GT(result->dev_f1, 65.0);   // 71.59 when written
  EXPECT_GT(result->test_f1, 60.0);  // 67.94

  // Per-pass evaluation is on dev (what λ is chosen on).
  const std::string log = ReadFile(result->log_path);
  EXPECT_THAT(log, HasSubstr("dev_F1"));
  EXPECT_THAT(log, Not(HasSubstr("test_F1")));

  // The predictions file: eng.testb's lines with an IOB1 tag appended;
  // conlleval on it prints exactly the reported test figures.
  const std::string predictions =
      ReadFile(std::string(std::getenv("TEST_TMPDIR")) + "/ner_e2e.pred");
  ConllevalScorer scorer;
  int tokens = 0, b_tags = 0;
  std::string previous = "O";
  for (absl::string_view line : absl::StrSplit(predictions, '\n')) {
    ASSERT_TRUE(scorer.AddLine(line).ok()) << line;
    if (line.empty()) {
      previous = "O";
      continue;
    }
    ++tokens;
    const std::vector<std::string> fields = absl::StrSplit(line, ' ');
    ASSERT_EQ(fields.size(), 5u) << line;
    ASSERT_NE(fields[0], "-DOCSTART-");
    const std::string& tag = fields[4];
    ASSERT_TRUE(tag == "O" || absl::string_view(tag).substr(0, 2) == "I-" ||
                absl::string_view(tag).substr(0, 2) == "B-")
        << line;
    if (tag[0] == 'B') {
      // IOB1: B- only where an entity directly follows one of its type.
      ASSERT_NE(previous, "O") << line;
      ASSERT_EQ(previous.substr(2), tag.substr(2)) << line;
      ++b_tags;
    }
    previous = tag;
  }
  scorer.Finish();
  EXPECT_EQ(tokens, 46435);
  EXPECT_EQ(scorer.Report(), result->test_report);
  EXPECT_EQ(scorer.f1(), result->test_f1);

  // The gold column is eng.testb's own (IOB1, B- tags included).
  ConllFormat format = config_.corpus().format();
  absl::StatusOr<std::vector<Sentence>> gold =
      ReadConllFile(CorporaRootForTests() + "/conll2003/eng.testb", format);
  ASSERT_TRUE(gold.ok()) << gold.status();
  std::vector<std::string> gold_lines;
  for (const Sentence& s : *gold) {
    for (const std::string& line : s.lines) gold_lines.push_back(line);
  }
  int t = 0;
  for (absl::string_view line : absl::StrSplit(predictions, '\n')) {
    if (line.empty()) continue;
    ASSERT_LT(t, static_cast<int>(gold_lines.size()));
    ASSERT_EQ(line.substr(0, line.rfind(' ')), gold_lines[t]);
    ++t;
  }

  // The saved model reads IOB1 and writes IOB1, and scores the same.
  absl::StatusOr<ChainModel> model = ChainModel::Load(result->model_path);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->header().train_scheme(), IOB2);
  EXPECT_EQ(model->header().output_scheme(), IOB1);
  std::string report;
  double accuracy = 0;
  absl::StatusOr<double> f1 =
      EvaluateModel(*model, *gold, 2, &report, &accuracy);
  ASSERT_TRUE(f1.ok()) << f1.status();
  EXPECT_EQ(report, result->test_report);
}

TEST_F(NerEndToEndTest, IobesTrainingAlsoWritesIob1) {
  config_.mutable_model()->set_train_scheme(IOBES);
  config_.mutable_solver()->set_max_passes(2);
  config_.set_eval_every(0);
  config_.set_model_path("ner_iobes.model");
  config_.set_predictions_path("ner_iobes.pred");
  absl::StatusOr<PipelineResult> result = RunPipeline(config_, options_);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_GT(result->dev_f1, 60.0);  // 68.43 when written
  const std::string predictions =
      ReadFile(std::string(std::getenv("TEST_TMPDIR")) + "/ner_iobes.pred");
  ConllevalScorer scorer;
  for (absl::string_view line : absl::StrSplit(predictions, '\n')) {
    ASSERT_TRUE(scorer.AddLine(line).ok()) << line;
    if (line.empty()) continue;
    const absl::string_view tag = line.substr(line.rfind(' ') + 1);
    ASSERT_TRUE(tag == "O" || tag[0] == 'I' || tag[0] == 'B') << line;
  }
  scorer.Finish();
  EXPECT_EQ(scorer.Report(), result->test_report);
}

}  // namespace
}  // namespace chaintag
