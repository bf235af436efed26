#include "pipeline/conll_task.h"

#include <cstdlib>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/thread_communicator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace chaintag {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

std::string TmpDir() { return std::getenv("TEST_TMPDIR"); }

// `word chunk` lines in IOB1, `copies` times the same three sentences.
void WriteCorpus(const std::string& name, int copies) {
  std::ofstream out(TmpDir() + "/" + name);
  for (int i = 0; i < copies; ++i) {
    out << "John I-PER\nmet O\nMary I-PER\n\n"
        << "Acme I-ORG\nCorp I-ORG\ngrew O\n\n"
        << "Paris I-LOC\n. O\n\n";
  }
}

PipelineConfig TinyConfig() {
  PipelineConfig config;
  CorpusConfig* corpus = config.mutable_corpus();
  corpus->set_train("tiny_train.txt");
  corpus->set_dev("tiny_dev.txt");
  corpus->set_test("tiny_test.txt");
  corpus->mutable_format()->add_attribute_columns(0);
  corpus->mutable_format()->set_label_column(1);
  corpus->mutable_format()->set_tag_scheme(IOB1);
  FeatureConfig* features = config.mutable_features();
  features->set_num_buckets(1024);
  TemplatePart* part = features->add_templates()->add_parts();
  part->set_offset(0);
  part->set_attribute(0);
  config.mutable_model()->set_train_scheme(IOB2);
  return config;
}

class ConllTaskTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteCorpus("tiny_train.txt", 4);
    WriteCorpus("tiny_dev.txt", 1);
    WriteCorpus("tiny_test.txt", 2);
    options_.corpora_root = TmpDir();
    options_.output_dir = TmpDir();
    options_.progress = nullptr;
  }

  // `config` resolved and prepared by the task.
  absl::Status Prepare(const PipelineConfig& config, PreparedCorpus* prepared) {
    prepared->config = config;
    task_.ResolveConfig(&prepared->config);
    return task_.Prepare(options_, prepared);
  }

  // `config` resolved and prepared as the one rank of a distributed run.
  absl::Status PrepareAsRank(const PipelineConfig& config) {
    ThreadHub hub(1);
    ThreadCommunicator communicator(&hub, 0);
    PipelineOptions distributed = options_;
    distributed.communicator = &communicator;
    PreparedCorpus rank;
    rank.config = config;
    task_.ResolveConfig(&rank.config);
    return task_.Prepare(distributed, &rank);
  }

  ConllTask task_;
  PipelineOptions options_;
};

TEST_F(ConllTaskTest, TrainSchemeDefaultsToTheCorpusScheme) {
  PipelineConfig config = TinyConfig();
  config.mutable_model()->clear_train_scheme();
  task_.ResolveConfig(&config);
  EXPECT_EQ(config.model().train_scheme(), IOB1);
  config = TinyConfig();
  task_.ResolveConfig(&config);
  EXPECT_EQ(config.model().train_scheme(), IOB2);
}

TEST_F(ConllTaskTest, PreparesSplitsLabelsAndTheProblem) {
  PreparedCorpus prepared;
  ASSERT_TRUE(Prepare(TinyConfig(), &prepared).ok());
  EXPECT_EQ(prepared.train.size(), 12u);
  EXPECT_EQ(prepared.dev.size(), 3u);
  EXPECT_EQ(prepared.test.size(), 6u);
  EXPECT_EQ(prepared.num_columns, 2);
  // In the training scheme, in order of first appearance.
  EXPECT_THAT(prepared.labels.names(),
              ElementsAre("B-PER", "O", "B-ORG", "I-ORG", "B-LOC"));
  EXPECT_EQ(prepared.problem->NumExamples(), 12);
  // Eight words and the hashed bias (on by default), a row each.
  EXPECT_EQ(prepared.rows->size(), 9);
  EXPECT_EQ(prepared.feature_stats.distinct_attributes, 9);
  EXPECT_TRUE(prepared.dev_examples.empty());  // no retraining
}

// Distributed training: two ranks as threads, each preparing `config`.
std::vector<PreparedCorpus> PrepareOnRanks(const PipelineConfig& config,
                                           PipelineOptions options, int ranks) {
  ThreadHub hub(ranks);
  std::vector<PreparedCorpus> prepared(ranks);
  std::vector<absl::Status> statuses(ranks);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < ranks; ++rank) {
    threads.emplace_back([&, rank, options]() mutable {
      ThreadCommunicator communicator(&hub, rank);
      options.communicator = &communicator;
      ConllTask task;
      prepared[rank].config = config;
      task.ResolveConfig(&prepared[rank].config);
      statuses[rank] = task.Prepare(options, &prepared[rank]);
      // The communicator dies with the thread.
      prepared[rank].communicator = nullptr;
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const absl::Status& status : statuses)
    EXPECT_TRUE(status.ok()) << status;
  return prepared;
}

TEST_F(ConllTaskTest, RanksReadOnlyTheirShardButLabelAndCountAsOneProcess) {
  // A label first seen in the last training sentence, which rank 0's shard
  // does not hold.
  WriteCorpus("tiny_train.txt", 4);
  std::ofstream(TmpDir() + "/tiny_train.txt", std::ios::app)
      << "Rome I-MISC\n\n";
  for (bool dev_fraction : {false, true}) {
    PipelineConfig config = TinyConfig();
    if (dev_fraction) {
      // Holds out the last 4 of the 13 sentences, B-MISC's among them.
      config.mutable_corpus()->clear_dev();
      config.mutable_corpus()->set_dev_fraction(0.25);
    }
    PreparedCorpus one;
    ASSERT_TRUE(Prepare(config, &one).ok());
    const std::vector<PreparedCorpus> ranks =
        PrepareOnRanks(config, options_, 2);
    const int kept = dev_fraction ? 9 : 13;
    ASSERT_EQ(one.train.size(), static_cast<size_t>(kept));
    EXPECT_EQ(one.labels.Find("B-MISC") >= 0, !dev_fraction);
    for (int rank = 0; rank < 2; ++rank) {
      const PreparedCorpus& prepared = ranks[rank];
      const BlockShard shard = ShardOf(kept, rank, 2);
      EXPECT_EQ(prepared.num_train_examples, kept);
      EXPECT_EQ(prepared.train_shard.begin, shard.begin);
      EXPECT_EQ(prepared.train_shard.end, shard.end);
      // Only the shard was kept.
      ASSERT_EQ(prepared.train.size(),
                static_cast<size_t>(shard.end - shard.begin));
      EXPECT_EQ(prepared.train[0].first_line,
                one.train[shard.begin].first_line);
      EXPECT_EQ(prepared.dev.size(), one.dev.size());
      EXPECT_EQ(prepared.labels.names(), one.labels.names());
      EXPECT_EQ(prepared.feature_stats.distinct_attributes,
                one.feature_stats.distinct_attributes);
      EXPECT_EQ(prepared.feature_stats.occurrences,
                one.feature_stats.occurrences);
      ASSERT_EQ(prepared.problem->NumExamples(), shard.end - shard.begin);
      for (int i = shard.begin; i < shard.end; ++i) {
        EXPECT_EQ(prepared.problem->example(i - shard.begin).labels,
                  one.problem->example(i).labels);
      }
    }
  }
}

// TinyConfig with neither columns nor a tag scheme: the file decides.
PipelineConfig FromTheFile() {
  PipelineConfig config = TinyConfig();
  config.mutable_corpus()->clear_format();
  config.mutable_model()->clear_train_scheme();
  return config;
}

TEST_F(ConllTaskTest, ColumnsAndSchemeFromTheFile) {
  PreparedCorpus prepared;
  ASSERT_TRUE(Prepare(FromTheFile(), &prepared).ok());
  // The tiny corpus begins its chunks with I: IOB1, trained as it is.
  EXPECT_EQ(prepared.format.tag_scheme(), IOB1);
  EXPECT_EQ(prepared.format.label_column(), 1);
  EXPECT_THAT(prepared.format.attribute_columns(), ElementsAre(0));
  // The model's config records what ran.
  EXPECT_EQ(prepared.config.corpus().format().tag_scheme(), IOB1);
  EXPECT_EQ(prepared.config.model().train_scheme(), IOB1);
  EXPECT_THAT(prepared.labels.names(),
              ElementsAre("I-PER", "O", "I-ORG", "I-LOC"));
  PipelineResult result;
  result.num_train_sentences = prepared.problem->NumExamples();
  std::vector<std::string> lines;
  task_.ReportCorpus(
      prepared, [&lines](const std::string& line) { lines.push_back(line); },
      &result);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0],
            "read from the training file (the config names none): 2 columns, "
            "the label the last, %x[row,c] reading column c (0); labels B-X, "
            "I-X, O: IOB1 chunks, scored by conlleval F1");
  EXPECT_EQ(task_.MakeHeldOutScorer(prepared, true).name, "dev_F1");

  // A training scheme the config names is kept.
  PipelineConfig config = FromTheFile();
  config.mutable_model()->set_train_scheme(IOB2);
  PreparedCorpus iob2;
  ASSERT_TRUE(Prepare(config, &iob2).ok());
  EXPECT_EQ(iob2.format.tag_scheme(), IOB1);
  EXPECT_THAT(iob2.labels.names(),
              ElementsAre("B-PER", "O", "B-ORG", "I-ORG", "B-LOC"));

  // Labels that are not chunk tags are scored by accuracy; columns the
  // config lists are not noted.
  std::ofstream(TmpDir() + "/pos.txt") << "John NNP\nmet VBD\n\nMary NNP\n\n";
  config = FromTheFile();
  config.mutable_corpus()->set_train("pos.txt");
  config.mutable_corpus()->set_dev("pos.txt");
  config.mutable_corpus()->mutable_format()->add_attribute_columns(0);
  PreparedCorpus pos;
  ASSERT_TRUE(Prepare(config, &pos).ok());
  EXPECT_EQ(pos.format.tag_scheme(), NONE);
  EXPECT_EQ(pos.inferred_input,
            "labels such as 'NNP' are not chunk tags: scored by token "
            "accuracy");
  EXPECT_EQ(task_.MakeHeldOutScorer(pos, true).name, "dev_accuracy");

  // A scheme the config names is not second-guessed, even IOB2 on this
  // IOB1 file.
  config = TinyConfig();
  config.mutable_corpus()->mutable_format()->set_tag_scheme(IOB2);
  PreparedCorpus named;
  ASSERT_TRUE(Prepare(config, &named).ok());
  EXPECT_EQ(named.format.tag_scheme(), IOB2);
  EXPECT_TRUE(named.inferred_input.empty());
}

TEST_F(ConllTaskTest, RanksInferTheSchemeAsOneProcess) {
  PreparedCorpus one;
  ASSERT_TRUE(Prepare(FromTheFile(), &one).ok());
  const std::vector<PreparedCorpus> ranks =
      PrepareOnRanks(FromTheFile(), options_, 2);
  for (const PreparedCorpus& rank : ranks) {
    EXPECT_EQ(rank.format.tag_scheme(), IOB1);
    EXPECT_EQ(rank.config.model().train_scheme(), IOB1);
    EXPECT_EQ(rank.labels.names(), one.labels.names());
    EXPECT_EQ(rank.inferred_input, one.inferred_input);
  }
}

TEST_F(ConllTaskTest, ReportsTheCorpusAndItsFeatures) {
  PreparedCorpus prepared;
  ASSERT_TRUE(Prepare(TinyConfig(), &prepared).ok());
  PipelineResult result;
  result.num_train_sentences = prepared.problem->NumExamples();
  std::vector<std::string> lines;
  task_.ReportCorpus(
      prepared, [&lines](const std::string& line) { lines.push_back(line); },
      &result);
  EXPECT_EQ(result.num_dev_sentences, 3);
  EXPECT_EQ(result.num_test_sentences, 6);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0],
            "corpus: 12 training sentences, 3 dev sentences, 6 test "
            "sentences, 5 labels (iob2; input and output in iob1)");
  EXPECT_THAT(lines[1],
              HasSubstr("9 distinct attributes in 1024 buckets (9 used)"));
  EXPECT_THAT(lines[1], Not(HasSubstr("OBSERVED_STATES")));
  // Restricted to the labels each row is seen with, the line says how many
  // of w's coordinates are weights.
  ASSERT_TRUE(prepared.problem->RestrictEmissionsToObservedLabels().ok());
  std::vector<int64_t> free;
  ASSERT_TRUE(prepared.problem->FreeCoordinates(&free));
  lines.clear();
  task_.ReportCorpus(
      prepared, [&lines](const std::string& line) { lines.push_back(line); },
      &result);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_THAT(lines[1],
              HasSubstr(absl::StrCat(
                  "dim ", prepared.problem->layout().dim(), " (", free.size(),
                  " of them weights: model.states OBSERVED_STATES)")));
  EXPECT_LT(static_cast<int64_t>(free.size()),
            prepared.problem->layout().dim());
}

TEST_F(ConllTaskTest, HeldOutScorerPrefersDevThenTest) {
  PreparedCorpus with_dev;
  ASSERT_TRUE(Prepare(TinyConfig(), &with_dev).ok());
  HeldOutScorer scorer = task_.MakeHeldOutScorer(with_dev, true);
  EXPECT_EQ(scorer.name, "dev_F1");
  EXPECT_FALSE(scorer.lower_is_better);
  ASSERT_TRUE(scorer.score);
  // Zero weights tie, and every token gets the first label, B-PER: 2 of
  // the 8 one-token chunks are right, 2 of the 4 gold ones found.
  const std::vector<double> zero(with_dev.problem->Dim(), 0.0);
  absl::StatusOr<double> f1 = scorer.score(zero.data());
  ASSERT_TRUE(f1.ok()) << f1.status();
  EXPECT_NEAR(*f1, 100.0 / 3, 1e-9);

  PipelineConfig config = TinyConfig();
  config.mutable_corpus()->clear_dev();
  PreparedCorpus without_dev;
  ASSERT_TRUE(Prepare(config, &without_dev).ok());
  EXPECT_EQ(task_.MakeHeldOutScorer(without_dev, false).name, "test_F1");
  EXPECT_FALSE(task_.MakeHeldOutScorer(without_dev, true).score);
}

// Restricted (model.states OBSERVED_STATES), the solver's w holds the free
// coordinates; the scorer reads them as sparse rows and scores as the same
// w in every coordinate does.
TEST_F(ConllTaskTest, HeldOutScorerReadsARestrictedSolversFreeCoordinates) {
  PreparedCorpus prepared;
  ASSERT_TRUE(Prepare(TinyConfig(), &prepared).ok());
  const HeldOutScorer dense_scorer = task_.MakeHeldOutScorer(prepared, true);
  ASSERT_TRUE(prepared.problem->RestrictEmissionsToObservedLabels().ok());
  const HeldOutScorer free_scorer = task_.MakeHeldOutScorer(prepared, true);
  std::vector<int64_t> free;
  ASSERT_TRUE(prepared.problem->FreeCoordinates(&free));
  std::set<double> scores;
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<double> normal;
    std::vector<double> at_free(free.size());
    std::vector<double> dense(prepared.problem->Dim(), 0.0);
    for (size_t k = 0; k < free.size(); ++k) {
      at_free[k] = normal(rng);
      dense[free[k]] = at_free[k];
    }
    absl::StatusOr<double> expected = dense_scorer.score(dense.data());
    absl::StatusOr<double> f1 = free_scorer.score(at_free.data());
    ASSERT_TRUE(expected.ok()) << expected.status();
    ASSERT_TRUE(f1.ok()) << f1.status();
    EXPECT_EQ(*f1, *expected) << seed;
    scores.insert(*f1);
  }
  EXPECT_GT(scores.size(), 1u);
}

TEST_F(ConllTaskTest, UntypedTagsAreScoredByAccuracy) {
  PipelineConfig config = TinyConfig();
  config.mutable_corpus()->mutable_format()->set_tag_scheme(NONE);
  config.mutable_model()->clear_train_scheme();
  PreparedCorpus prepared;
  ASSERT_TRUE(Prepare(config, &prepared).ok());
  EXPECT_EQ(task_.MakeHeldOutScorer(prepared, false).name, "dev_accuracy");
}

TEST_F(ConllTaskTest, ModelInputIsTheTrainingFilesLayout) {
  PreparedCorpus prepared;
  ASSERT_TRUE(Prepare(TinyConfig(), &prepared).ok());
  ModelFile header;
  task_.DescribeModelInput(prepared, &header);
  EXPECT_EQ(header.input_num_columns(), 2);
  EXPECT_EQ(header.input_format().label_column(), 1);
  // `tag` reads text without gold tags.
  EXPECT_TRUE(header.input_format().allow_missing_label());
  EXPECT_EQ(header.output_scheme(), IOB1);
}

TEST_F(ConllTaskTest, RetrainingProblemHoldsTrainAndDev) {
  PipelineConfig config = TinyConfig();
  config.mutable_corpus()->set_retrain_on_train_and_dev(true);
  PreparedCorpus prepared;
  ASSERT_TRUE(Prepare(config, &prepared).ok());
  EXPECT_TRUE(prepared.dev_examples.empty());
  ASSERT_TRUE(task_.PrepareRetrainingProblem(&prepared).ok());
  EXPECT_EQ(prepared.problem, nullptr);
  EXPECT_EQ(prepared.rows, nullptr);
  EXPECT_TRUE(prepared.dev.empty());
  ASSERT_NE(prepared.problem_with_dev, nullptr);
  EXPECT_EQ(prepared.problem_with_dev->NumExamples(), 15);
  EXPECT_EQ(prepared.rows_with_dev->size(), 9);
  // Once only: the train-only problem is gone.
  EXPECT_EQ(task_.PrepareRetrainingProblem(&prepared).code(),
            absl::StatusCode::kFailedPrecondition);
}

// More sentences than one featurising chunk, on two threads: every example
// holds exactly its sentence's features as the extractor gives them, over
// the problem's rows, unit values dropped.
TEST_F(ConllTaskTest, ExamplesHoldTheirSentencesFeaturesAcrossChunks) {
  WriteCorpus("many_train.txt", 900);  // 2700 sentences
  PipelineConfig config = TinyConfig();
  config.mutable_corpus()->set_train("many_train.txt");
  config.mutable_corpus()->set_retrain_on_train_and_dev(true);
  config.mutable_solver()->set_num_threads(2);
  for (int offset : {-1, 1}) {
    TemplatePart* part =
        config.mutable_features()->add_templates()->add_parts();
    part->set_offset(offset);
    part->set_attribute(0);
  }
  PreparedCorpus prepared;
  ASSERT_TRUE(Prepare(config, &prepared).ok());
  ASSERT_EQ(prepared.problem->NumExamples(), 2700);
  FeatureSequence expected;
  auto expect_features = [&](const FeatureSequence& features,
                             const Sentence& sentence, const BucketRows* rows,
                             int i) {
    ASSERT_TRUE(prepared.extractor->Extract(sentence, &expected).ok());
    EXPECT_EQ(features.offsets, expected.offsets) << "sentence " << i;
    std::vector<uint32_t> ids;
    for (uint32_t bucket : expected.buckets) {
      ids.push_back(static_cast<uint32_t>(rows->Find(bucket)));
    }
    EXPECT_EQ(features.buckets, ids) << "sentence " << i;
    EXPECT_TRUE(features.values.empty()) << "sentence " << i;
    EXPECT_EQ(features.buckets.capacity(), features.buckets.size());
  };
  for (int i = 0; i < 2700; ++i) {
    expect_features(prepared.problem->example(i).features, prepared.train[i],
                    prepared.rows.get(), i);
  }
  // Dev's, made for the train + dev problem, over its rows.
  const std::vector<Sentence> dev = prepared.dev;
  ASSERT_TRUE(task_.PrepareRetrainingProblem(&prepared).ok());
  ASSERT_EQ(prepared.problem_with_dev->NumExamples(), 2703);
  for (int i = 0; i < 3; ++i) {
    expect_features(prepared.problem_with_dev->example(2700 + i).features,
                    dev[i], prepared.rows_with_dev.get(), i);
  }
}

TEST_F(ConllTaskTest, AnExtractionErrorNamesTheFileOnce) {
  PipelineConfig config = TinyConfig();
  FeatureTemplate* reads_one = config.mutable_features()->add_templates();
  reads_one->set_name("w[1]");
  reads_one->add_parts()->set_attribute(1);
  PreparedCorpus prepared;
  EXPECT_EQ(Prepare(config, &prepared).message(),
            absl::StrCat(TmpDir(),
                         "/tiny_train.txt:1: template 'w[1]' (#1) reads "
                         "attribute 1 but the sentence has 1 attributes"));
}

TEST_F(ConllTaskTest, ConfigErrorsAreNamed) {
  PipelineConfig config = TinyConfig();
  config.mutable_corpus()->clear_train();
  PreparedCorpus prepared;
  EXPECT_THAT(Prepare(config, &prepared).message(),
              HasSubstr("corpus.train is not set"));
  config = TinyConfig();
  config.mutable_corpus()->clear_dev();
  config.mutable_corpus()->set_retrain_on_train_and_dev(true);
  PreparedCorpus no_dev;
  EXPECT_THAT(Prepare(config, &no_dev).message(),
              HasSubstr("needs a dev split"));
  config.mutable_corpus()->set_dev_fraction(0.5);
  PreparedCorpus halved;
  ASSERT_TRUE(Prepare(config, &halved).ok());
  EXPECT_EQ(halved.train.size(), 6u);
  EXPECT_EQ(halved.dev.size(), 6u);
}

TEST_F(ConllTaskTest, ExactFeaturesKeyTheRowsOfWhatTheRunTrainsOn) {
  PipelineConfig config = TinyConfig();
  config.mutable_features()->set_exact(true);
  PreparedCorpus prepared;
  ASSERT_TRUE(Prepare(config, &prepared).ok());
  // John met Mary Acme Corp grew Paris . and the bias: a row each.
  EXPECT_EQ(prepared.extractor->num_buckets(), 9u);
  EXPECT_EQ(prepared.rows->size(), 9);
  PipelineResult result;
  std::vector<std::string> lines;
  task_.ReportCorpus(
      prepared, [&lines](const std::string& line) { lines.push_back(line); },
      &result);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_THAT(lines[1], HasSubstr("9 distinct attributes, exact (a row each)"));

  // Retraining on train + dev: the table holds dev's words too, which the
  // train-only problem has no rows for and the train + dev problem has.
  std::ofstream(TmpDir() + "/tiny_dev.txt", std::ios::app) << "Rome I-LOC\n\n";
  config.mutable_corpus()->set_retrain_on_train_and_dev(true);
  PreparedCorpus retrained;
  ASSERT_TRUE(Prepare(config, &retrained).ok());
  EXPECT_EQ(retrained.extractor->num_buckets(), 10u);
  EXPECT_EQ(retrained.rows->size(), 9);
  ASSERT_TRUE(task_.PrepareRetrainingProblem(&retrained).ok());
  EXPECT_EQ(retrained.rows_with_dev->size(), 10);

  // A rank of a distributed run would see only its shard's keys.
  PipelineConfig exact = TinyConfig();
  exact.mutable_features()->set_exact(true);
  EXPECT_THAT(PrepareAsRank(exact).message(),
              HasSubstr("features.exact is not supported with distributed"));
}

// Each rank would restrict the rows to its own shard's labels, so the
// ranks' weights would not line up: the seen labels' model is refused.
TEST_F(ConllTaskTest, ObservedStatesAreRefusedInADistributedRun) {
  PipelineConfig config = TinyConfig();
  config.mutable_model()->set_states(ModelConfig::OBSERVED_STATES);
  EXPECT_THAT(PrepareAsRank(config).message(),
              HasSubstr("model.states OBSERVED_STATES is not supported with "
                        "distributed training"));
}

}  // namespace
}  // namespace chaintag
