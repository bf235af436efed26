// The CoNLL pipeline on a small synthetic IOB1 corpus written by the test
// (so it runs without the corpora): -DOCSTART- lines, a dev split that the
// per-pass evaluation scores, training in IOB2 or IOBES with predictions
// written back in IOB1, and errors that name the file and line.

#include "pipeline/pipeline.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "corpora/conlleval.h"
#include "corpora/tag_scheme.h"
#include "features/document_features.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "pipeline/conll_task.h"
#include "pipeline/ocr_task.h"
#include "pipeline/stacking.h"
#include "solvers/registry.h"
#include "solvers/solver.h"
#include "tagging/conll_tagging.h"

namespace chaintag {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string TmpDir() { return std::getenv("TEST_TMPDIR"); }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// `word POS chunk NER` lines in IOB1, a -DOCSTART- document break every 10
// sentences. Four sentence kinds (19 tokens, 8 entities) cycle so every
// split has all of them; "John Mary met ." holds two adjacent PER entities,
// which IOB1 writes "I-PER B-PER".
std::string SyntheticCorpus(int num_sentences, int seed) {
  const std::vector<std::string> people = {"John", "Mary", "Peter", "Anna",
                                           "Paul"};
  const std::vector<std::string> places = {"Paris", "Rome", "Berlin", "Oslo"};
  const std::vector<std::string> firms = {"Acme", "Globex", "Initech"};
  uint32_t state = static_cast<uint32_t>(seed) * 2654435761u + 1;
  auto pick = [&state](const std::vector<std::string>& words) {
    state = state * 1664525u + 1013904223u;
    return words[(state >> 16) % words.size()];
  };
  std::string out;
  for (int i = 0; i < num_sentences; ++i) {
    if (i % 10 == 0) out += "-DOCSTART- -X- -X- O\n\n";
    switch (i % 4) {
      case 0:
        absl::StrAppend(&out, pick(people), " NNP I-NP I-PER\n",
                        "visited VBD I-VP O\n", pick(places),
                        " NNP I-NP I-LOC\n");
        break;
      case 1:
        absl::StrAppend(&out, pick(firms), " NNP I-NP I-ORG\n",
                        "Corp NNP I-NP I-ORG\n", "hired VBD I-VP O\n",
                        pick(people), " NNP I-NP I-PER\n");
        break;
      case 2:
        absl::StrAppend(&out, "In IN I-PP O\n", pick(places),
                        " NNP I-NP I-LOC\n", ", , O O\n", pick(firms),
                        " NNP I-NP I-ORG\n", "grew VBD I-VP O\n");
        break;
      case 3:
        absl::StrAppend(&out, pick(people), " NNP I-NP I-PER\n", pick(people),
                        " NNP B-NP B-PER\n", "met VBD I-VP O\n");
        break;
    }
    out += ". . O O\n\n";
  }
  return out;
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

PipelineConfig SmallConfig() {
  PipelineConfig config;
  config.set_name("synthetic_ner");
  CorpusConfig* corpus = config.mutable_corpus();
  corpus->set_train("train.txt");
  corpus->set_dev("dev.txt");
  corpus->set_test("test.txt");
  corpus->mutable_format()->add_attribute_columns(0);
  corpus->mutable_format()->add_attribute_columns(1);
  corpus->mutable_format()->add_attribute_columns(2);
  corpus->mutable_format()->set_label_column(3);
  corpus->mutable_format()->set_tag_scheme(IOB1);
  FeatureConfig* features = config.mutable_features();
  features->set_num_buckets(4096);
  for (int offset : {-1, 0, 1}) {
    TemplatePart* part = features->add_templates()->add_parts();
    part->set_offset(offset);
    part->set_attribute(0);
  }
  config.mutable_model()->set_train_scheme(IOB2);
  config.mutable_model()->set_normalize_loss(false);
  SolverConfig* solver = config.mutable_solver();
  solver->set_name("bcfw");
  solver->set_lambda(0.01);
  solver->set_max_passes(6);
  solver->set_gap_check(3);
  solver->set_num_threads(2);
  config.set_eval_every(2);
  config.set_predictions_path("synthetic.pred");
  return config;
}

class PipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteFile(TmpDir() + "/train.txt", SyntheticCorpus(200, 1));
    WriteFile(TmpDir() + "/dev.txt", SyntheticCorpus(40, 2));
    WriteFile(TmpDir() + "/test.txt", SyntheticCorpus(48, 3));
    options_.corpora_root = TmpDir();
    options_.output_dir = TmpDir();
    options_.progress = nullptr;
  }

  // RunPipeline with its progress lines kept in `lines`.
  absl::StatusOr<PipelineResult> RunKeepingProgress(
      const PipelineConfig& config, std::string* lines) {
    char* text = nullptr;
    size_t size = 0;
    FILE* progress = open_memstream(&text, &size);
    if (progress == nullptr) return absl::InternalError("open_memstream");
    PipelineOptions options = options_;
    options.progress = progress;
    absl::StatusOr<PipelineResult> result = RunPipeline(config, options);
    std::fclose(progress);
    lines->assign(text, size);
    std::free(text);
    return result;
  }

  PipelineOptions options_;
};

// conlleval's report on the lines of a written predictions file.
std::string ScoreFile(const std::string& path) {
  ConllevalScorer scorer;
  for (absl::string_view line : absl::StrSplit(ReadFile(path), '\n')) {
    EXPECT_TRUE(scorer.AddLine(line).ok()) << line;
  }
  scorer.Finish();
  return scorer.Report();
}

TEST_F(PipelineTest, DocStartLinesAreNotSentences) {
  absl::StatusOr<PreparedCorpus> prepared =
      PrepareCorpus(SmallConfig(), options_);
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  EXPECT_EQ(prepared->train.size(), 200u);
  EXPECT_EQ(prepared->dev.size(), 40u);
  EXPECT_EQ(prepared->test.size(), 48u);
  for (const Sentence& s : prepared->train) {
    EXPECT_NE(s.attribute(0, 0), "-DOCSTART-");
  }
  // Labels in the training scheme (IOB2): every chunk starts with B-.
  EXPECT_NE(prepared->labels.Find("B-PER"), -1);
  EXPECT_NE(prepared->labels.Find("B-ORG"), -1);
  EXPECT_NE(prepared->labels.Find("I-ORG"), -1);
  EXPECT_EQ(prepared->labels.Find("I-PER"), -1);  // one-token names only
}

class PipelineSchemeTest : public PipelineTest,
                           public ::testing::WithParamInterface<TagScheme> {};

TEST_P(PipelineSchemeTest, ScoresDevPerPassAndWritesIob1Predictions) {
  PipelineConfig config = SmallConfig();
  config.mutable_model()->set_train_scheme(GetParam());
  absl::StatusOr<PipelineResult> result = RunPipeline(config, options_);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->num_train_sentences, 200);
  EXPECT_EQ(result->num_dev_sentences, 40);
  EXPECT_EQ(result->num_test_sentences, 48);
  // The corpus is easy: anything less means labels or schemes went wrong.
  EXPECT_GT(result->dev_f1, 95.0);
  EXPECT_GT(result->test_f1, 95.0);
  EXPECT_THAT(result->dev_report,
              HasSubstr("processed 190 tokens with 80 phrases"));
  EXPECT_THAT(result->test_report,
              HasSubstr("processed 228 tokens with 96 phrases"));

  // The per-pass evaluation scores dev, not test.
  const std::string log = ReadFile(result->log_path);
  EXPECT_THAT(log, HasSubstr("dev_F1"));
  EXPECT_THAT(log, Not(HasSubstr("test_F1")));

  // The predictions file is the test file's lines with an IOB1 tag
  // appended, and conlleval on it prints exactly the reported figures.
  const std::string path = TmpDir() + "/synthetic.pred";
  EXPECT_EQ(ScoreFile(path), result->test_report);
  std::vector<std::string> lines = absl::StrSplit(ReadFile(path), '\n');
  std::string previous = "O";
  int b_tags = 0;
  for (const std::string& line : lines) {
    if (line.empty()) {
      previous = "O";
      continue;
    }
    std::vector<std::string> fields = absl::StrSplit(line, ' ');
    ASSERT_EQ(fields.size(), 5u) << line;
    const std::string& tag = fields[4];
    ASSERT_TRUE(tag == "O" || tag[0] == 'I' || tag[0] == 'B') << line;
    ASSERT_NE(tag[0], 'E') << line;
    ASSERT_NE(tag[0], 'S') << line;
    if (tag[0] == 'B') {
      // IOB1: B- only right after a chunk of the same type.
      ASSERT_EQ(previous.substr(1), tag.substr(1)) << line;
      ++b_tags;
    }
    previous = tag;
  }
  EXPECT_GT(b_tags, 0);  // the adjacent PER entities
}

INSTANTIATE_TEST_SUITE_P(TrainSchemes, PipelineSchemeTest,
                         ::testing::Values(IOB2, IOBES, IOB1),
                         [](const ::testing::TestParamInfo<TagScheme>& info) {
                           return TagScheme_Name(info.param);
                         });

TEST_F(PipelineTest, WithoutDevThePerPassEvaluationScoresTest) {
  PipelineConfig config = SmallConfig();
  config.mutable_corpus()->clear_dev();
  absl::StatusOr<PipelineResult> result = RunPipeline(config, options_);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->num_dev_sentences, 0);
  EXPECT_EQ(result->dev_f1, 0);
  EXPECT_EQ(result->dev_report, "");
  EXPECT_GT(result->test_f1, 95.0);
  EXPECT_THAT(ReadFile(result->log_path), HasSubstr("test_F1"));
}

TEST_F(PipelineTest, BadDevLineNamesTheFileAndLine) {
  std::string dev = SyntheticCorpus(3, 2);
  // Line 1 is -DOCSTART-, 2 blank, 3-5 the first sentence's tokens.
  dev.insert(dev.find("visited"), "oops NN\n");
  WriteFile(TmpDir() + "/bad_dev.txt", dev);
  PipelineConfig config = SmallConfig();
  config.mutable_corpus()->set_dev("bad_dev.txt");
  absl::StatusOr<PreparedCorpus> prepared = PrepareCorpus(config, options_);
  ASSERT_FALSE(prepared.ok());
  EXPECT_EQ(prepared.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(prepared.status().message(),
              HasSubstr(TmpDir() + "/bad_dev.txt:4:"));
  EXPECT_THAT(prepared.status().message(), HasSubstr("expected 4 fields"));
}

TEST_F(PipelineTest, MissingDevFileIsNamed) {
  PipelineConfig config = SmallConfig();
  config.mutable_corpus()->set_dev("no_such_dev.txt");
  absl::StatusOr<PreparedCorpus> prepared = PrepareCorpus(config, options_);
  ASSERT_FALSE(prepared.ok());
  EXPECT_THAT(prepared.status().message(), HasSubstr("no_such_dev.txt"));
}

}  // namespace
}  // namespace chaintag

namespace chaintag {
namespace {

TEST_F(PipelineTest, DevFractionHoldsOutTheLastTrainingSentences) {
  PipelineConfig config = SmallConfig();
  config.mutable_corpus()->clear_dev();
  config.mutable_corpus()->set_dev_fraction(0.1);
  absl::StatusOr<PreparedCorpus> prepared = PrepareCorpus(config, options_);
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  ASSERT_EQ(prepared->train.size(), 180u);
  ASSERT_EQ(prepared->dev.size(), 20u);
  EXPECT_EQ(prepared->problem->NumExamples(), 180);
  // The held-out sentences are the file's last ones, in order.
  absl::StatusOr<PreparedCorpus> whole = PrepareCorpus(SmallConfig(), options_);
  ASSERT_TRUE(whole.ok());
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(prepared->dev[i].first_line, whole->train[180 + i].first_line);
  }

  config.mutable_corpus()->set_dev("dev.txt");
  EXPECT_THAT(PrepareCorpus(config, options_).status().message(),
              HasSubstr("exclusive"));
  config.mutable_corpus()->clear_dev();
  config.mutable_corpus()->set_dev_fraction(1.5);
  EXPECT_THAT(PrepareCorpus(config, options_).status().message(),
              HasSubstr("dev_fraction"));
}

TEST_F(PipelineTest, LambdaPathChoosesTheBestDevBreakpoint) {
  PipelineConfig config = SmallConfig();
  config.set_lambda("path");
  SolverConfig* solver = config.mutable_solver();
  solver->mutable_bcfw()->set_step(SolverConfig::PAIRWISE);
  solver->set_sampling(SolverConfig::GAP);
  solver->set_max_passes(200);
  solver->mutable_path()->set_epsilon(0.5);
  solver->mutable_path()->set_lambda_min(1e-3);
  absl::StatusOr<PipelineResult> result = RunPipeline(config, options_);
  ASSERT_TRUE(result.ok()) << result.status();
  const LambdaPath& path = result->path;
  ASSERT_GE(path.points.size(), 3u);
  ASSERT_EQ(path.scores.size(), path.points.size());
  ASSERT_GE(path.best, 0);
  EXPECT_EQ(path.score_name, "dev_F1");
  // The chosen breakpoint has the best dev F1, the first among equals.
  for (size_t j = 0; j < path.scores.size(); ++j) {
    if (static_cast<int>(j) < path.best) {
      EXPECT_LT(path.scores[j], path.scores[path.best]);
    } else {
      EXPECT_LE(path.scores[j], path.scores[path.best]);
    }
  }
  // The saved model is that breakpoint's: same λ, same dev F1.
  EXPECT_DOUBLE_EQ(result->summary.lambda(), path.points[path.best].lambda);
  EXPECT_NEAR(result->dev_f1, path.scores[path.best], 1e-9);
  absl::StatusOr<ChainModel> model = ChainModel::Load(result->model_path);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_DOUBLE_EQ(model->header().solver().lambda(),
                   path.points[path.best].lambda);
  // The log is the path's JSON.
  EXPECT_THAT(ReadFile(result->log_path), HasSubstr("\"cumulative_passes\""));

  config.set_lambda("0.1");
  EXPECT_THAT(RunPipeline(config, options_).status().message(),
              HasSubstr("lambda must be empty or \"path\""));
  config.set_lambda("path");
  config.mutable_corpus()->clear_dev();
  EXPECT_THAT(RunPipeline(config, options_).status().message(),
              HasSubstr("needs a dev split"));
}

}  // namespace
}  // namespace chaintag

namespace chaintag {
namespace {

// Training over the rows the features use gives what the dense layout (a
// row for every bucket, as before the compact layout) gives: the same
// primal, dual and gap to rounding, and the same weights on the used buckets
// with zeros everywhere else, for solvers of each kind.
TEST_F(PipelineTest, CompactRowsTrainAsTheDenseLayout) {
  absl::StatusOr<PreparedCorpus> prepared =
      PrepareCorpus(SmallConfig(), options_);
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  const ChainProblem& compact = *prepared->problem;
  const BucketRows& rows = *prepared->rows;
  const uint64_t num_buckets = prepared->extractor->num_buckets();
  ASSERT_GT(rows.size(), 10);
  ASSERT_LT(rows.size(), static_cast<int64_t>(num_buckets) / 4);
  // The dense problem: the same examples with their bucket ids back.
  std::vector<ChainExample> examples;
  for (int i = 0; i < compact.NumExamples(); ++i) {
    ChainExample example = compact.example(i);
    for (uint32_t& id : example.features.buckets) id = rows.buckets()[id];
    examples.push_back(std::move(example));
  }
  const int L = compact.layout().num_labels;
  const ChainLayout dense_layout{L, static_cast<int64_t>(num_buckets)};
  ASSERT_TRUE(ChainProblem::Validate(dense_layout, examples).ok());
  const ChainProblem dense(dense_layout, std::move(examples),
                           prepared->config.model().normalize_loss());

  std::vector<SolverConfig> configs(4, prepared->config.solver());
  configs[1].set_sampling(SolverConfig::GAP);
  configs[1].mutable_bcfw()->set_step(SolverConfig::PAIRWISE);
  configs[1].mutable_bcfw()->set_cache(true);
  configs[1].set_weighted_averaging(false);
  configs[2].set_name("svrg");
  configs[2].mutable_svrg()->set_learning_rate(0.05);
  configs[3].set_name("fw");
  for (const SolverConfig& config : configs) {
    SCOPED_TRACE(config.ShortDebugString());
    std::vector<double> w_compact, w_dense;
    absl::StatusOr<std::unique_ptr<Solver>> solver = CreateSolver(config);
    ASSERT_TRUE(solver.ok()) << solver.status();
    absl::StatusOr<TrainingSummary> a =
        (*solver)->Solve(compact, nullptr, &w_compact);
    solver = CreateSolver(config);
    ASSERT_TRUE(solver.ok());
    absl::StatusOr<TrainingSummary> b =
        (*solver)->Solve(dense, nullptr, &w_dense);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(a->passes(), b->passes());
    EXPECT_NEAR(a->primal(), b->primal(), 1e-12 * std::abs(b->primal()));
    EXPECT_NEAR(a->dual(), b->dual(), 1e-12 * std::abs(b->primal()));
    EXPECT_NEAR(a->gap(), b->gap(), 1e-12 * std::abs(b->primal()));
    EXPECT_GT(a->primal(), 0);
    ASSERT_EQ(static_cast<int64_t>(w_compact.size()), compact.Dim());
    ASSERT_EQ(static_cast<int64_t>(w_dense.size()), dense.Dim());
    std::vector<double> expanded(dense.Dim(), 0.0);
    for (int64_t r = 0; r < rows.size(); ++r) {
      for (int y = 0; y < L; ++y) {
        expanded[static_cast<int64_t>(rows.buckets()[r]) * L + y] =
            w_compact[r * L + y];
      }
    }
    std::copy(w_compact.begin() + compact.layout().transition_offset(),
              w_compact.end(),
              expanded.begin() + dense_layout.transition_offset());
    double max_difference = 0, max_weight = 0;
    for (int64_t j = 0; j < dense.Dim(); ++j) {
      max_difference =
          std::max(max_difference, std::abs(expanded[j] - w_dense[j]));
      max_weight = std::max(max_weight, std::abs(w_dense[j]));
    }
    EXPECT_LE(max_difference, 1e-12 * max_weight);
    EXPECT_GT(max_weight, 0);
  }
}

// The final model of a retraining run is exactly the model a plain run on
// the concatenated train + dev file gives, and its train-only model exactly
// a plain run's on train: same labels, features, solver and seed.
TEST_F(PipelineTest, RetrainOnTrainAndDevEqualsTrainingOnBoth) {
  WriteFile(TmpDir() + "/train_and_dev.txt",
            SyntheticCorpus(200, 1) + SyntheticCorpus(40, 2));
  PipelineConfig config = SmallConfig();
  // Lossless weights: the final comparison is to 1e-12, finer than float32.
  config.mutable_model()->set_weight_precision(FLOAT64);
  config.mutable_corpus()->set_retrain_on_train_and_dev(true);
  config.set_model_path("retrained.model");
  config.set_log_path("retrained.log.jsonl");
  absl::StatusOr<PreparedCorpus> prepared = PrepareCorpus(config, options_);
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  EXPECT_EQ(prepared->problem->NumExamples(), 200);
  // Dev's features wait for the train + dev problem.
  EXPECT_TRUE(prepared->dev_examples.empty());
  absl::StatusOr<PipelineResult> retrained =
      RunPreparedPipeline(&*prepared, options_);
  ASSERT_TRUE(retrained.ok()) << retrained.status();
  // The train-only problem made way for the train + dev one.
  EXPECT_EQ(prepared->problem, nullptr);
  ASSERT_NE(prepared->problem_with_dev, nullptr);
  EXPECT_EQ(prepared->problem_with_dev->NumExamples(), 240);

  PipelineConfig plain = SmallConfig();
  plain.mutable_model()->set_weight_precision(FLOAT64);
  plain.set_model_path("plain.model");
  plain.set_log_path("plain.log.jsonl");
  absl::StatusOr<PipelineResult> on_train = RunPipeline(plain, options_);
  ASSERT_TRUE(on_train.ok()) << on_train.status();
  PipelineConfig both = plain;
  both.mutable_corpus()->set_train("train_and_dev.txt");
  both.set_model_path("both.model");
  both.set_log_path("both.log.jsonl");
  both.set_predictions_path("both.pred");
  absl::StatusOr<PipelineResult> on_both = RunPipeline(both, options_);
  ASSERT_TRUE(on_both.ok()) << on_both.status();

  auto weights = [](const std::string& path) {
    absl::StatusOr<ChainModel> model = ChainModel::Load(path);
    EXPECT_TRUE(model.ok()) << model.status();
    return model.ok() ? model->DenseWeights(BucketRows::Identity(4096))
                      : std::vector<double>{};
  };
  EXPECT_EQ(retrained->train_only_model_path,
            TmpDir() + "/retrained.model.train_only");
  const std::vector<double> train_only =
      weights(retrained->train_only_model_path);
  const std::vector<double> final_weights = weights(retrained->model_path);
  ASSERT_FALSE(train_only.empty());
  EXPECT_EQ(train_only, weights(on_train->model_path));
  const std::vector<double> both_weights = weights(on_both->model_path);
  ASSERT_EQ(final_weights.size(), both_weights.size());
  double max_difference = 0;
  for (size_t j = 0; j < both_weights.size(); ++j) {
    max_difference =
        std::max(max_difference, std::abs(final_weights[j] - both_weights[j]));
  }
  // Equal up to rounding: the plain run's dev evaluation reads the
  // averaged iterate at other times, which regroups a few sums.
  EXPECT_LT(max_difference, 1e-12);
  EXPECT_EQ(retrained->summary.passes(), on_both->summary.passes());
  EXPECT_EQ(retrained->summary.oracle_calls(), on_both->summary.oracle_calls());
  EXPECT_NEAR(retrained->summary.primal(), on_both->summary.primal(), 1e-12);
  EXPECT_NE(final_weights, train_only);
  // The final model says how its λ was chosen, as the train-only one does.
  absl::StatusOr<ChainModel> final_model =
      ChainModel::Load(retrained->model_path);
  ASSERT_TRUE(final_model.ok()) << final_model.status();
  EXPECT_NE(final_model->header().training().lambda_rule().find(
                "; the same lambda on train + dev"),
            std::string::npos)
      << final_model->header().training().lambda_rule();

  // Dev scores the train-only model; test is scored for both models, the
  // predictions come from the final one.
  EXPECT_EQ(retrained->dev_report, on_train->dev_report);
  EXPECT_EQ(retrained->train_only_test_report, on_train->test_report);
  EXPECT_EQ(retrained->train_only_test_f1, on_train->test_f1);
  EXPECT_EQ(retrained->test_report, on_both->test_report);
  EXPECT_EQ(ReadFile(TmpDir() + "/synthetic.pred"),
            ReadFile(TmpDir() + "/both.pred"));
  EXPECT_EQ(retrained->summary.num_examples(), 240);
  EXPECT_EQ(retrained->train_only_summary.num_examples(), 200);
  EXPECT_THAT(ReadFile(retrained->final_log_path), HasSubstr("\"pass\""));
  EXPECT_THAT(ReadFile(retrained->final_log_path), Not(HasSubstr("dev_F1")));
}

TEST_F(PipelineTest, RetrainNeedsADevSplit) {
  PipelineConfig config = SmallConfig();
  config.mutable_corpus()->clear_dev();
  config.mutable_corpus()->set_retrain_on_train_and_dev(true);
  EXPECT_THAT(PrepareCorpus(config, options_).status().message(),
              HasSubstr("retrain_on_train_and_dev needs a dev split"));
  // With dev_fraction the final model trains on the whole training file.
  config.mutable_corpus()->set_dev_fraction(0.1);
  absl::StatusOr<PreparedCorpus> prepared = PrepareCorpus(config, options_);
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  EXPECT_EQ(prepared->problem->NumExamples(), 180);
  ASSERT_TRUE(PrepareRetrainingProblem(&*prepared).ok());
  EXPECT_EQ(prepared->problem, nullptr);
  EXPECT_EQ(prepared->problem_with_dev->NumExamples(), 200);
}

}  // namespace
}  // namespace chaintag

namespace chaintag {
namespace {

// model.constrained_decoding reaches the model file, so `tag` and the final
// scores decode as the per-pass evaluation did.
TEST_F(PipelineTest, ConstrainedDecodingIsRecordedInTheModel) {
  PipelineConfig config = SmallConfig();
  config.mutable_model()->set_constrained_decoding(true);
  config.set_model_path("constrained.model");
  absl::StatusOr<PipelineResult> result = RunPipeline(config, options_);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_GT(result->dev_f1, 95.0);
  EXPECT_GT(result->test_f1, 95.0);
  absl::StatusOr<ChainModel> model = ChainModel::Load(result->model_path);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_TRUE(model->header().constrained_decoding());
  EXPECT_EQ(ScoreFile(TmpDir() + "/synthetic.pred"), result->test_report);

  absl::StatusOr<PipelineResult> plain = RunPipeline(SmallConfig(), options_);
  ASSERT_TRUE(plain.ok()) << plain.status();
  model = ChainModel::Load(plain->model_path);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_FALSE(model->header().has_constrained_decoding());
}

// model.loss LOG trains the CRF: svrg minimises its log-loss (the logged
// primal decreases), the model tags as well as the hinge model, and the
// file records the loss and the solver's objective; a hinge model's file
// records neither (so that it stays as it was), and a hinge preset asked
// for a smooth loss trains it with sag.
TEST_F(PipelineTest, LogLossTrainsACrfAndIsRecordedInTheModel) {
  PipelineConfig config = SmallConfig();
  config.mutable_model()->set_loss(LOG);
  SolverConfig* solver = config.mutable_solver();
  solver->set_name("svrg");
  solver->set_max_passes(20);
  solver->mutable_svrg()->set_learning_rate(0.05);
  config.set_model_path("crf.model");
  absl::StatusOr<PipelineResult> result = RunPipeline(config, options_);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_GT(result->dev_f1, 95.0);
  EXPECT_GT(result->test_f1, 95.0);
  // lambda/2||w||^2 + the average log-loss: at w = 0 the log-loss is
  // log(number of labelings) per sentence, far above where it ends.
  EXPECT_GT(result->summary.primal(), 0);
  EXPECT_LT(result->summary.primal(), 1.0);
  absl::StatusOr<ChainModel> model = ChainModel::Load(result->model_path);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->header().loss(), LOG);
  EXPECT_EQ(model->header().solver().objective(), SolverConfig::LOG_SUM_EXP);

  absl::StatusOr<PipelineResult> hinge = RunPipeline(SmallConfig(), options_);
  ASSERT_TRUE(hinge.ok()) << hinge.status();
  model = ChainModel::Load(hinge->model_path);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_FALSE(model->header().has_loss());
  EXPECT_FALSE(model->header().solver().has_objective());

  // A hinge preset's solver (bcfw) asked for a smooth loss becomes sag,
  // which trains it and certifies the result.
  PipelineConfig preset = SmallConfig();
  preset.mutable_model()->set_loss(SOFTMAX_MARGIN);
  preset.mutable_solver()->set_max_passes(10);
  preset.mutable_solver()->set_gap_check(1);
  preset.set_model_path("softmax_margin.model");
  absl::StatusOr<PipelineResult> smooth = RunPipeline(preset, options_);
  ASSERT_TRUE(smooth.ok()) << smooth.status();
  EXPECT_EQ(smooth->summary.solver(), "sag");
  EXPECT_GT(smooth->test_f1, 95.0);
  EXPECT_GE(smooth->summary.gap(), 0);
  EXPECT_LT(smooth->summary.primal(), 1.0);
}

// model.states OBSERVED_STATES (CRFsuite's all_possible_states=false):
// lbfgs trains a CRF with emission weights only for the labels each
// attribute is seen with, so the model has fewer non-zero weights than the
// CRF of every label and an optimum no lower; sag and svrg reach the same
// optimum.
TEST_F(PipelineTest, ObservedStatesTrainACrfOfTheSeenLabelsOnly) {
  auto count_emissions = [](const std::string& path) {
    absl::StatusOr<ChainModel> model = ChainModel::Load(path);
    EXPECT_TRUE(model.ok()) << model.status();
    if (!model.ok()) return int64_t{-1};
    const std::vector<double> w = model->DenseWeights(model->rows());
    const int64_t emissions = model->layout().emission_size();
    return static_cast<int64_t>(std::count_if(w.begin(), w.begin() + emissions,
                                              [](double x) { return x != 0; }));
  };
  PipelineConfig config = SmallConfig();
  config.mutable_model()->set_loss(LOG);
  config.mutable_solver()->set_name("lbfgs");
  config.mutable_solver()->set_max_passes(300);
  config.mutable_solver()->set_gap_tolerance(1e-9);
  config.mutable_solver()->mutable_lbfgs()->set_epsilon(0);
  config.mutable_solver()->mutable_lbfgs()->set_delta(0);
  config.set_model_path("all_states.model");
  absl::StatusOr<PipelineResult> all = RunPipeline(config, options_);
  ASSERT_TRUE(all.ok()) << all.status();
  config.mutable_model()->set_states(ModelConfig::OBSERVED_STATES);
  config.set_model_path("observed_states.model");
  absl::StatusOr<PipelineResult> observed = RunPipeline(config, options_);
  ASSERT_TRUE(observed.ok()) << observed.status();
  EXPECT_EQ(observed->summary.stop_reason(), "gap_tolerance");
  EXPECT_GT(observed->test_f1, 95.0);
  EXPECT_GE(observed->summary.primal(), all->summary.primal() - 1e-9);
  const int64_t observed_count = count_emissions(observed->model_path);
  EXPECT_GT(observed_count, 0);
  EXPECT_LT(observed_count, count_emissions(all->model_path));
  absl::StatusOr<ChainModel> model = ChainModel::Load(observed->model_path);
  ASSERT_TRUE(model.ok()) << model.status();
  PipelineConfig recorded;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      model->header().resolved_config(), &recorded));
  EXPECT_EQ(recorded.model().states(), ModelConfig::OBSERVED_STATES);

  // Any thread count trains the same weights: two lanes summed at the free
  // coordinates on threads of their own, or chunk by chunk in slices.
  config.mutable_solver()->set_max_passes(20);
  std::vector<double> one_thread;
  for (int threads : {1, 2, 4}) {
    config.mutable_solver()->set_num_threads(threads);
    config.set_model_path(absl::StrCat("observed_", threads, ".model"));
    absl::StatusOr<PipelineResult> run = RunPipeline(config, options_);
    ASSERT_TRUE(run.ok()) << run.status();
    absl::StatusOr<ChainModel> trained = ChainModel::Load(run->model_path);
    ASSERT_TRUE(trained.ok()) << trained.status();
    const std::vector<double> w = trained->DenseWeights(trained->rows());
    if (threads == 1) {
      one_thread = w;
    } else {
      EXPECT_EQ(w, one_thread) << threads << " threads";
    }
  }

  // sag minimises over the same weights: its certificate brackets lbfgs's
  // optimum, and its model, trained on one thread or on slices of the
  // free coordinates, is the same.
  config.mutable_solver()->set_name("sag");
  config.mutable_solver()->set_max_passes(400);
  config.mutable_solver()->set_gap_tolerance(1e-7);
  std::vector<double> sag_one_thread;
  for (int threads : {1, 3}) {
    config.mutable_solver()->set_num_threads(threads);
    config.set_model_path(absl::StrCat("observed_sag_", threads, ".model"));
    absl::StatusOr<PipelineResult> sag = RunPipeline(config, options_);
    ASSERT_TRUE(sag.ok()) << sag.status();
    EXPECT_EQ(sag->summary.stop_reason(), "gap_tolerance");
    EXPECT_GE(sag->summary.primal(), observed->summary.primal() - 1e-9);
    EXPECT_LE(sag->summary.dual(), observed->summary.primal() + 1e-9);
    absl::StatusOr<ChainModel> trained = ChainModel::Load(sag->model_path);
    ASSERT_TRUE(trained.ok()) << trained.status();
    const std::vector<double> w = trained->DenseWeights(trained->rows());
    EXPECT_EQ(count_emissions(sag->model_path), observed_count);
    if (threads == 1) {
      sag_one_thread = w;
    } else {
      EXPECT_EQ(w, sag_one_thread) << threads << " threads";
    }
  }

  // The solvers of every weight are given the free weights as the
  // problem's whole space: svrg's certificate brackets the same optimum.
  config.mutable_solver()->set_name("svrg");
  config.mutable_solver()->mutable_svrg()->set_learning_rate(0.05);
  config.mutable_solver()->set_num_threads(2);
  config.mutable_solver()->set_gap_tolerance(1e-6);
  config.set_model_path("observed_svrg.model");
  absl::StatusOr<PipelineResult> svrg = RunPipeline(config, options_);
  ASSERT_TRUE(svrg.ok()) << svrg.status();
  EXPECT_EQ(svrg->summary.stop_reason(), "gap_tolerance");
  EXPECT_GE(svrg->summary.primal(), observed->summary.primal() - 1e-9);
  EXPECT_LE(svrg->summary.dual(), observed->summary.primal() + 1e-9);
  EXPECT_EQ(count_emissions(svrg->model_path), observed_count);
}

// The structured SVM of the seen labels (model.states OBSERVED_STATES with
// the hinge): BCFW minimises over the free weights alone, as the problem's
// whole space. Its optimum is no lower than the SVM of every label's, its
// model has weights at the seen (attribute, label) pairs only, fewer than
// that SVM's; BCFW with pairwise steps, gap sampling and the cache, and
// mini-batch rounds, reach the same optimum (their certificates overlap),
// and any thread count trains the same model.
TEST_F(PipelineTest, ObservedStatesTrainAStructuredSvmOfTheSeenLabelsOnly) {
  auto emissions_of = [](const std::string& path) {
    absl::StatusOr<ChainModel> model = ChainModel::Load(path);
    EXPECT_TRUE(model.ok()) << model.status();
    if (!model.ok()) return std::vector<double>();
    std::vector<double> w = model->DenseWeights(model->rows());
    w.resize(model->layout().emission_size());
    return w;
  };
  auto nonzero = [](const std::vector<double>& w) {
    return std::count_if(w.begin(), w.end(), [](double x) { return x != 0; });
  };
  PipelineConfig config = SmallConfig();
  config.mutable_solver()->set_max_passes(500);
  config.mutable_solver()->set_gap_check(5);
  config.mutable_solver()->set_gap_tolerance(5e-4);
  config.set_eval_every(0);
  config.set_model_path("svm_all.model");
  absl::StatusOr<PipelineResult> all = RunPipeline(config, options_);
  ASSERT_TRUE(all.ok()) << all.status();
  config.mutable_model()->set_states(ModelConfig::OBSERVED_STATES);
  config.set_model_path("svm_observed.model");
  absl::StatusOr<PipelineResult> observed = RunPipeline(config, options_);
  ASSERT_TRUE(observed.ok()) << observed.status();
  EXPECT_EQ(observed->summary.stop_reason(), "gap_tolerance")
      << observed->summary.ShortDebugString() << "\n"
      << all->summary.ShortDebugString();
  EXPECT_GT(observed->test_f1, 90.0);
  EXPECT_GE(observed->summary.primal(), all->summary.dual() - 1e-9);
  const std::vector<double> w = emissions_of(observed->model_path);
  EXPECT_GT(nonzero(w), 0);
  EXPECT_LT(nonzero(w), nonzero(emissions_of(all->model_path)));
  EXPECT_LT(observed->summary.dim(), all->summary.dim());

  config.mutable_solver()->set_sampling(SolverConfig::GAP);
  config.mutable_solver()->mutable_bcfw()->set_step(SolverConfig::PAIRWISE);
  config.mutable_solver()->mutable_bcfw()->set_cache(true);
  std::vector<double> pairwise_one_thread;
  for (int threads : {1, 2}) {
    config.mutable_solver()->set_num_threads(threads);
    config.set_model_path(absl::StrCat("svm_pairwise_", threads, ".model"));
    absl::StatusOr<PipelineResult> pairwise = RunPipeline(config, options_);
    ASSERT_TRUE(pairwise.ok()) << pairwise.status();
    EXPECT_EQ(pairwise->summary.stop_reason(), "gap_tolerance");
    EXPECT_GE(pairwise->summary.primal(), observed->summary.dual() - 1e-9);
    EXPECT_LE(pairwise->summary.dual(), observed->summary.primal() + 1e-9);
    const std::vector<double> pairwise_w = emissions_of(pairwise->model_path);
    for (size_t j = 0; j < w.size(); ++j) {
      if (w[j] == 0) ASSERT_EQ(pairwise_w[j], 0) << "weight " << j;
    }
    if (threads == 1) {
      pairwise_one_thread = pairwise_w;
    } else {
      EXPECT_EQ(pairwise_w, pairwise_one_thread);
    }
  }

  config.mutable_solver()->clear_sampling();
  config.mutable_solver()->clear_bcfw();
  config.mutable_solver()->set_minibatch(4);
  config.set_model_path("svm_minibatch.model");
  absl::StatusOr<PipelineResult> minibatch = RunPipeline(config, options_);
  ASSERT_TRUE(minibatch.ok()) << minibatch.status();
  EXPECT_GE(minibatch->summary.primal(), observed->summary.dual() - 1e-9);
  EXPECT_LE(minibatch->summary.dual(), observed->summary.primal() + 1e-9);
}

// λ in CRF++'s per-sum form scales with the training sentences (200 here),
// and the model and summary say how it was chosen; a relative tolerance
// ends the run on its certificate before the cap.
TEST_F(PipelineTest, PerSumLambdaAndRelativeStopAreRecorded) {
  PipelineConfig config = SmallConfig();
  config.mutable_solver()->clear_lambda();
  config.mutable_solver()->set_c(0.5);
  config.mutable_solver()->set_max_passes(200);
  config.mutable_solver()->set_gap_check(2);
  config.mutable_solver()->set_gap_tolerance(0);
  config.mutable_solver()->set_relative_gap_tolerance(0.2);
  config.set_model_path("per_sum.model");
  absl::StatusOr<PipelineResult> result = RunPipeline(config, options_);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_DOUBLE_EQ(result->summary.lambda(), 1.0 / (0.5 * 200));
  EXPECT_EQ(result->summary.stop_reason(), "relative_gap_tolerance");
  EXPECT_LT(result->summary.passes(), 200);
  EXPECT_EQ(result->summary.passes() % 2, 0);
  EXPECT_LE(result->summary.gap(), 0.2 * result->summary.primal());
  absl::StatusOr<ChainModel> model = ChainModel::Load(result->model_path);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->header().training().lambda_rule(),
            "lambda = 1/(C·n), C = 0.5 (CRF++'s -c), n = 200");
  EXPECT_DOUBLE_EQ(model->header().solver().lambda(), 0.01);
  EXPECT_FALSE(model->header().solver().has_c());
  // The recorded config states λ as it was given.
  PipelineConfig recorded;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      model->header().resolved_config(), &recorded));
  EXPECT_DOUBLE_EQ(recorded.solver().c(), 0.5);
  EXPECT_FALSE(recorded.solver().has_lambda());

  // λ given twice is refused before the corpus is read.
  config.mutable_solver()->set_lambda(0.01);
  EXPECT_EQ(RunPipeline(config, options_).status().code(),
            absl::StatusCode::kInvalidArgument);
  // So is a solver's own option that needs no data: the corpus named is
  // not there, and the message is svrg's.
  config.mutable_solver()->clear_lambda();
  config.mutable_solver()->set_name("svrg");
  config.mutable_corpus()->set_train("/nonexistent/train.txt");
  const absl::Status svrg = RunPipeline(config, options_).status();
  EXPECT_EQ(svrg.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(svrg.message().find("svrg: set learning_rate"), std::string::npos)
      << svrg;
  // And an l1 term with the hinge, named as the user gave it.
  config.mutable_solver()->set_name("bcfw");
  config.mutable_solver()->set_c1(1);
  const absl::Status l1 = RunPipeline(config, options_).status();
  EXPECT_EQ(l1.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(l1.message().find("(c1 1) is trained with the CRF's loss"),
            std::string::npos)
      << l1;
}

// A run its budget ends with its dual under 1% of its primal says that
// its certificate bounds nothing yet; one that stops on its certificate
// does not.
TEST_F(PipelineTest, ARunEndedWithAnEmptyCertificateWarns) {
  for (double lambda : {1e-9, 0.01}) {
    PipelineConfig config = SmallConfig();
    config.mutable_model()->set_loss(LOG);
    config.mutable_solver()->set_name("sag");
    config.mutable_solver()->set_lambda(lambda);
    config.mutable_solver()->set_max_passes(lambda < 1e-6 ? 1 : 300);
    config.mutable_solver()->set_gap_check(1);
    config.mutable_solver()->set_relative_gap_tolerance(0.01);
    std::string lines;
    const absl::StatusOr<PipelineResult> result =
        RunKeepingProgress(config, &lines);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(
        lines.find("warning: the run ended on max_passes with its dual") !=
            std::string::npos,
        lambda < 1e-6)
        << lines;
  }
}

// A hinge preset asked for a CRF trains with sag, whose linearly closing
// certificate is held to at most 1% of the primal.
TEST(ResolvePipelineConfigTest, SagHoldsARelativeToleranceToOnePercent) {
  PipelineConfig config;
  config.mutable_model()->set_loss(LOG);
  config.mutable_solver()->set_name("bcfw");
  config.mutable_solver()->set_relative_gap_tolerance(0.1);
  PipelineConfig resolved = ResolvePipelineConfig(config);
  EXPECT_EQ(resolved.solver().name(), "sag");
  EXPECT_DOUBLE_EQ(resolved.solver().relative_gap_tolerance(), 0.01);
  config.mutable_solver()->set_relative_gap_tolerance(0);
  EXPECT_EQ(ResolvePipelineConfig(config).solver().relative_gap_tolerance(), 0);
}

// model.states STATES_AUTO is lbfgs's default: unset, an lbfgs config
// resolves to it, and any other solver's to every label (left unset, so
// that its recorded config reads as given); an explicit value stays.
TEST(ResolvePipelineConfigTest, AutoStatesAreLbfgsDefault) {
  PipelineConfig config;
  config.mutable_model()->set_loss(LOG);
  config.mutable_solver()->set_name("lbfgs");
  EXPECT_EQ(ResolvePipelineConfig(config).model().states(),
            ModelConfig::STATES_AUTO);
  config.mutable_model()->set_states(ModelConfig::ALL_STATES);
  EXPECT_EQ(ResolvePipelineConfig(config).model().states(),
            ModelConfig::ALL_STATES);
  config.mutable_solver()->set_name("sag");
  config.mutable_model()->clear_states();
  EXPECT_FALSE(ResolvePipelineConfig(config).model().has_states());
  config.mutable_model()->set_states(ModelConfig::STATES_AUTO);
  EXPECT_EQ(ResolvePipelineConfig(config).model().states(),
            ModelConfig::ALL_STATES);
}

}  // namespace
}  // namespace chaintag

namespace chaintag {
namespace {

// The factory picks the task by the corpus: OCR letters or CoNLL columns.
TEST(CreateTaskTest, OcrCorpusGivesTheOcrTask) {
  PipelineConfig config;
  config.mutable_corpus()->set_ocr("ocr/letter.data.gz");
  const std::unique_ptr<Task> task = CreateTask(config);
  EXPECT_NE(dynamic_cast<const OcrTask*>(task.get()), nullptr);
}

TEST(CreateTaskTest, OtherwiseTheConllTask) {
  const std::unique_ptr<Task> task = CreateTask(SmallConfig());
  EXPECT_NE(dynamic_cast<const ConllTask*>(task.get()), nullptr);
}

TEST_F(PipelineTest, PreparedCorpusKeepsItsTask) {
  absl::StatusOr<PreparedCorpus> prepared =
      PrepareCorpus(SmallConfig(), options_);
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  EXPECT_NE(dynamic_cast<const ConllTask*>(prepared->task.get()), nullptr);
  EXPECT_EQ(MakeHeldOutScorer(*prepared, true).name, "dev_F1");
}

// A second-order run (trigrams and a pair template) trains, saves a format-3
// model that reads back and tags exactly as the run scored it, and retrains
// on train + dev with its own trigrams.
TEST_F(PipelineTest, SecondOrderTrainsSavesAndRetrains) {
  PipelineConfig config = SmallConfig();
  config.mutable_model()->set_order(2);
  TemplatePart* part =
      config.mutable_features()->add_pair_templates()->add_parts();
  part->set_attribute(1);
  config.mutable_corpus()->set_retrain_on_train_and_dev(true);
  absl::StatusOr<PipelineResult> result = RunPipeline(config, options_);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_GT(result->dev_f1, 95.0);
  EXPECT_GT(result->test_f1, 95.0);
  for (const std::string& path :
       {result->model_path, result->train_only_model_path}) {
    absl::StatusOr<ChainModel> model = ChainModel::Load(path);
    ASSERT_TRUE(model.ok()) << model.status();
    EXPECT_EQ(model->order(), 2);
    EXPECT_GT(model->structure()->num_trigrams(), 0);
    EXPECT_GT(model->structure()->num_pairs(), 0);
    EXPECT_GT(model->pair_rows().size(), 0);
  }
  absl::StatusOr<ChainModel> model = ChainModel::Load(result->model_path);
  absl::StatusOr<PreparedCorpus> prepared = PrepareCorpus(config, options_);
  ASSERT_TRUE(prepared.ok());
  std::string report;
  double accuracy = 0;
  absl::StatusOr<double> f1 =
      EvaluateModel(*model, prepared->test, 1, &report, &accuracy);
  ASSERT_TRUE(f1.ok());
  EXPECT_EQ(report, result->test_report);
}

// A corpus where the right transition depends on the word: every sentence
// starts with "go" tagged O, then each "keep" repeats the previous tag and
// each "flip" switches it (O ↔ B-X). Per-word emissions cannot say which
// tag a word gets (that is the parity of the flips before it), and fixed
// transitions cannot be both "same" (keep) and "switch" (flip): the
// sentences "go keep", "go flip", "go flip flip" and "go flip keep" already
// contradict each other. A transition conditioned on the word fits it.
std::string KeepFlipCorpus(int num_sentences, int seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> length(1, 5);
  std::bernoulli_distribution flip(0.5);
  std::string out;
  for (int i = 0; i < num_sentences; ++i) {
    bool inside = false;
    out += "go O\n";
    for (int t = length(rng); t > 0; --t) {
      const bool flips = flip(rng);
      inside ^= flips;
      absl::StrAppend(&out, flips ? "flip " : "keep ", inside ? "B-X" : "O",
                      "\n");
    }
    out += "\n";
  }
  return out;
}

// The keep/flip corpus trained by bcfw to a small duality gap at first
// order, templates on the word, with and without a pair template on it;
// "test" is the training file, so its accuracy is the training accuracy.
TEST_F(PipelineTest, PairTemplatesFitObservationConditionedTransitions) {
  WriteFile(TmpDir() + "/keep_flip.txt", KeepFlipCorpus(120, 7));
  for (bool pairs : {false, true}) {
    SCOPED_TRACE(pairs ? "with pair template" : "without");
    PipelineConfig config;
    config.set_name(pairs ? "keep_flip_pairs" : "keep_flip");
    CorpusConfig* corpus = config.mutable_corpus();
    corpus->set_train("keep_flip.txt");
    corpus->set_test("keep_flip.txt");
    corpus->mutable_format()->add_attribute_columns(0);
    corpus->mutable_format()->set_label_column(1);
    corpus->mutable_format()->set_tag_scheme(IOB2);
    FeatureConfig* features = config.mutable_features();
    features->set_num_buckets(1024);
    features->add_templates()->add_parts()->set_attribute(0);
    if (pairs) features->add_pair_templates()->add_parts()->set_attribute(0);
    config.mutable_model()->set_order(1);
    config.mutable_model()->set_train_scheme(IOB2);
    config.mutable_model()->set_normalize_loss(false);
    SolverConfig* solver = config.mutable_solver();
    solver->set_name("bcfw");
    solver->set_lambda(0.01);
    // Pairwise steps with gap sampling (BCPFW) close the gap linearly.
    solver->set_sampling(SolverConfig::GAP);
    solver->mutable_bcfw()->set_step(SolverConfig::PAIRWISE);
    solver->set_max_passes(2000);
    solver->set_gap_check(5);
    solver->set_gap_tolerance(1e-4);
    solver->set_num_threads(1);
    absl::StatusOr<PipelineResult> result = RunPipeline(config, options_);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_LE(result->summary.gap(), 1e-4) << result->summary.DebugString();
    absl::StatusOr<ChainModel> model = ChainModel::Load(result->model_path);
    ASSERT_TRUE(model.ok()) << model.status();
    EXPECT_EQ(model->order(), 1);
    if (pairs) {
      EXPECT_EQ(model->header().format_version(), kFirstOrderPairFormatVersion);
      EXPECT_GT(model->pair_rows().size(), 0);
      EXPECT_EQ(result->test_accuracy, 100.0) << result->test_report;
    } else {
      EXPECT_EQ(model->header().format_version(), kModelFormatVersion);
      EXPECT_LT(result->test_accuracy, 95.0) << result->test_report;
    }
  }
}

}  // namespace
}  // namespace chaintag

namespace chaintag {
namespace {

// SmallConfig with two-stage stacking: three folds, templates over the
// document attributes (3..6), retrained on train + dev.
PipelineConfig StackedConfig() {
  PipelineConfig config = SmallConfig();
  config.mutable_stacking()->set_folds(3);
  config.mutable_stacking()->set_first_stage_passes(3);
  for (int attribute = 3; attribute < 3 + kNumDocumentAttributes; ++attribute) {
    config.mutable_features()->add_templates()->add_parts()->set_attribute(
        attribute);
  }
  config.mutable_corpus()->set_retrain_on_train_and_dev(true);
  return config;
}

std::string TagWithStream(const ChainModel& model, const std::string& path,
                          int threads) {
  std::ifstream input(path);
  ConllTaggingOptions options;
  options.threads = threads;
  options.batch_per_thread = 2;  // documents outgrow the batch
  std::string out;
  const absl::Status status = TagConllStream(model, &input, path, options,
                                             [&out](const std::string& s) {
                                               out += s;
                                               return absl::OkStatus();
                                             });
  EXPECT_TRUE(status.ok()) << status;
  return out;
}

TEST_F(PipelineTest, StackedModelTagsDocumentsAsThePipelineScoredThem) {
  absl::StatusOr<PipelineResult> result =
      RunPipeline(StackedConfig(), options_);
  ASSERT_TRUE(result.ok()) << result.status();
  absl::StatusOr<ChainModel> model = ChainModel::Load(result->model_path);
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_NE(model->first_stage(), nullptr);
  EXPECT_EQ(model->header().format_version(), kStackedFormatVersion);
  // The first stage reads no document attribute; the second does.
  EXPECT_EQ(model->first_stage()->header().features().templates_size(), 3);
  EXPECT_EQ(model->header().features().templates_size(), 7);
  // The final model carries the first stage trained on train + dev, the
  // train-only model the one trained on train.
  absl::StatusOr<ChainModel> train_only =
      ChainModel::Load(result->train_only_model_path);
  ASSERT_TRUE(train_only.ok()) << train_only.status();
  EXPECT_NE(model->first_stage()->ToProto().SerializeAsString(),
            train_only->first_stage()->ToProto().SerializeAsString());
  // `tag`'s stream gives the predictions the pipeline scored, on any
  // thread count, and the same F1.
  const std::string tagged = TagWithStream(*model, TmpDir() + "/test.txt", 1);
  EXPECT_EQ(tagged, TagWithStream(*model, TmpDir() + "/test.txt", 2));
  std::vector<std::string> predicted;
  for (absl::string_view line : absl::StrSplit(tagged, '\n')) {
    if (!line.empty() && !absl::StartsWith(line, "-DOCSTART-")) {
      predicted.emplace_back(line);
    }
  }
  std::vector<std::string> written;
  for (absl::string_view line :
       absl::StrSplit(ReadFile(TmpDir() + "/synthetic.pred"), '\n')) {
    if (!line.empty() && !absl::StartsWith(line, "-DOCSTART-")) {
      written.emplace_back(line);
    }
  }
  EXPECT_EQ(predicted, written);
  EXPECT_GT(result->test_f1, 50);
}

TEST_F(PipelineTest, FirstStagesOneAtATimeMakeTheSameModel) {
  std::string models[2];
  for (int parallel : {0, 1}) {
    PipelineConfig config = StackedConfig();
    config.mutable_solver()->set_num_threads(2);
    config.mutable_stacking()->set_parallel_stages(parallel);
    config.set_model_path(absl::StrCat("parallel", parallel, ".model"));
    absl::StatusOr<PipelineResult> result = RunPipeline(config, options_);
    ASSERT_TRUE(result.ok()) << result.status();
    models[parallel] = ReadFile(result->model_path);
  }
  EXPECT_FALSE(models[0].empty());
  EXPECT_EQ(models[0], models[1]);
  PipelineConfig negative = StackedConfig();
  negative.mutable_stacking()->set_parallel_stages(-1);
  EXPECT_THAT(std::string(RunPipeline(negative, options_).status().message()),
              HasSubstr("stacking.parallel_stages must be >= 0"));
}

// A fold without documents is refused as the corpus is read, before any
// stage trains, counting folds from 1 as the progress lines do.
TEST_F(PipelineTest, TooFewDocumentsForTheFoldsAreRefusedBeforeTraining) {
  PipelineConfig config = StackedConfig();
  config.mutable_stacking()->set_folds(1000);
  std::string lines;
  const absl::Status status = RunKeepingProgress(config, &lines).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("of 1000 would hold out 0 of the 200 training"));
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("at least 1000 documents"));
  EXPECT_EQ(lines.find("stacking:"), std::string::npos) << lines;
}

// The saved first stages (trained first, one at a time, memory handed
// back between them) are exactly the stages trained on their sentences
// alone: train for the train-only model, train + dev for the final one.
TEST_F(PipelineTest, SavedFirstStagesAreTheStagesOfTheirSentencesAlone) {
  PipelineConfig config = StackedConfig();
  config.mutable_solver()->set_num_threads(2);
  config.mutable_stacking()->set_parallel_stages(1);
  config.set_model_path("saved_stages.model");
  absl::StatusOr<PipelineResult> result = RunPipeline(config, options_);
  ASSERT_TRUE(result.ok()) << result.status();
  absl::StatusOr<ChainModel> model = ChainModel::Load(result->model_path);
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<ChainModel> train_only =
      ChainModel::Load(result->train_only_model_path);
  ASSERT_TRUE(train_only.ok()) << train_only.status();
  ASSERT_NE(model->first_stage(), nullptr);
  ASSERT_NE(train_only->first_stage(), nullptr);

  ConllTask reader;
  PreparedCorpus corpus;
  corpus.config = ResolvePipelineConfig(config);
  ASSERT_TRUE(reader.ReadCorpus(options_, &corpus).ok());
  const PipelineConfig stage = FirstStageConfig(corpus.config, 3);
  std::vector<Sentence> train_and_dev = corpus.train;
  train_and_dev.insert(train_and_dev.end(), corpus.dev.begin(),
                       corpus.dev.end());
  absl::StatusOr<ChainModel> on_train =
      TrainFirstStage(stage, corpus, corpus.train);
  ASSERT_TRUE(on_train.ok()) << on_train.status();
  absl::StatusOr<ChainModel> on_both =
      TrainFirstStage(stage, corpus, std::move(train_and_dev));
  ASSERT_TRUE(on_both.ok()) << on_both.status();
  const std::string train_bytes = on_train->ToProto().SerializeAsString();
  EXPECT_NE(train_bytes, on_both->ToProto().SerializeAsString());
  EXPECT_EQ(train_only->first_stage()->ToProto().SerializeAsString(),
            train_bytes);
  EXPECT_EQ(model->first_stage()->ToProto().SerializeAsString(),
            on_both->ToProto().SerializeAsString());
}

TEST_F(PipelineTest, JackknifeLabelsComeFromStagesThatNeverSawTheDocument) {
  // Each document has a word of its own between "x" words (O), I-LOC in
  // even documents and I-PER in odd ones, and twice as many sentences
  // "x y x" (O). A first stage that saw a document tags its word right; one
  // that did not has never seen the word, so it tags every document's word
  // of its fold alike (its features are the same), while the folds (d mod
  // 3) mix even and odd documents.
  std::string text;
  for (int d = 0; d < 12; ++d) {
    absl::StrAppend(&text, "-DOCSTART- -X- -X- O\n\n");
    for (int s = 0; s < 4; ++s) {
      absl::StrAppend(&text, "x NN O O\nplace", d, " NNP I-NP ",
                      d % 2 == 0 ? "I-LOC\n" : "I-PER\n", "x NN O O\n\n",
                      "x NN O O\ny NN O O\nx NN O O\n\n",
                      "x NN O O\ny NN O O\nx NN O O\n\n");
    }
  }
  WriteFile(TmpDir() + "/unique.txt", text);
  PipelineConfig config = StackedConfig();
  config.mutable_corpus()->set_train("unique.txt");
  config.mutable_corpus()->clear_dev();
  config.mutable_corpus()->set_retrain_on_train_and_dev(false);
  config.mutable_features()->clear_templates();
  config.mutable_features()->add_templates()->add_parts()->set_attribute(0);
  config.mutable_solver()->set_max_passes(20);
  absl::StatusOr<PreparedCorpus> prepared;
  {
    ConllTask reader;
    PreparedCorpus corpus;
    corpus.config = ResolvePipelineConfig(config);
    ASSERT_TRUE(reader.ReadCorpus(options_, &corpus).ok());
    prepared = std::move(corpus);
  }
  const PipelineConfig stage = FirstStageConfig(prepared->config, 3);
  std::vector<std::vector<std::string>> labels;
  ASSERT_TRUE(JackknifeLabels(
                  stage, *prepared, [](const std::string&) {}, &labels)
                  .ok());
  absl::StatusOr<ChainModel> seen_all =
      TrainFirstStage(stage, *prepared, prepared->train);
  ASSERT_TRUE(seen_all.ok()) << seen_all.status();
  TagScratch scratch;
  std::vector<std::set<std::string>> fold_labels(3);
  for (size_t i = 0; i < prepared->train.size(); i += 3) {
    const Sentence& sentence = prepared->train[i];
    fold_labels[sentence.document % 3].insert(labels[i][1]);
    std::vector<std::string> tags;
    ASSERT_TRUE(seen_all->Tag(sentence, &scratch, &tags).ok());
    EXPECT_EQ(tags[1], sentence.tags[1]) << "sentence " << i;
  }
  for (const std::set<std::string>& fold : fold_labels) {
    EXPECT_EQ(fold.size(), 1u);
  }
}

}  // namespace
}  // namespace chaintag

namespace chaintag {
namespace {

// SyntheticCorpus as `word POS tag` lines in IOB2: no chunk column.
std::string WordPosCorpus(int num_sentences, int seed) {
  std::string out;
  std::vector<std::string> words, pos, tags;
  auto flush = [&]() {
    const std::vector<std::string> iob2 = ConvertTags(tags, IOB1, IOB2);
    for (size_t t = 0; t < words.size(); ++t) {
      absl::StrAppend(&out, words[t], " ", pos[t], " ", iob2[t], "\n");
    }
    out += "\n";
    words.clear();
    pos.clear();
    tags.clear();
  };
  for (absl::string_view line :
       absl::StrSplit(SyntheticCorpus(num_sentences, seed), '\n')) {
    if (absl::StartsWith(line, "-DOCSTART-")) {
      out += "-DOCSTART- -X- O\n\n";
    } else if (line.empty()) {
      if (!words.empty()) flush();
    } else {
      const std::vector<std::string> fields = absl::StrSplit(line, ' ');
      words.push_back(fields[0]);
      pos.push_back(fields[1]);
      tags.push_back(fields[3]);
    }
  }
  return out;
}

TEST_F(PipelineTest, WordPosPresetTrainsByConfigurationAlone) {
  WriteFile(TmpDir() + "/wp_train.txt", WordPosCorpus(200, 1));
  WriteFile(TmpDir() + "/wp_dev.txt", WordPosCorpus(40, 2));
  WriteFile(TmpDir() + "/wp_test.txt", WordPosCorpus(48, 3));
  absl::StatusOr<PipelineConfig> config =
      ReadPipelineConfig("pipeline/configs/conll_ner_word_pos.textproto");
  ASSERT_TRUE(config.ok()) << config.status();
  // The corpus, as the preset's comment says, and a short run.
  config->mutable_corpus()->set_train("wp_train.txt");
  config->mutable_corpus()->set_dev("wp_dev.txt");
  config->mutable_corpus()->set_test("wp_test.txt");
  config->mutable_solver()->set_max_passes(4);
  config->mutable_stacking()->set_first_stage_passes(2);
  config->mutable_features()->mutable_cluster_source()->set_num_clusters(8);
  config->mutable_features()->set_num_buckets(1 << 16);
  config->set_model_path("wp.model");
  config->set_predictions_path("wp.pred");
  absl::StatusOr<PipelineResult> result = RunPipeline(*config, options_);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_GT(result->test_f1, 50);
  absl::StatusOr<ChainModel> model = ChainModel::Load(result->model_path);
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_NE(model->first_stage(), nullptr);
  EXPECT_EQ(model->header().input_format().attribute_columns_size(), 2);
  EXPECT_EQ(model->header().features().clusters().bit_string_size(), 8);
}

}  // namespace
}  // namespace chaintag
