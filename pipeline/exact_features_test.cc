// Exact features (features.exact) through the pipeline, on a small CRFsuite
// attribute corpus written by the test: one weight row per distinct
// attribute (the bias off, as CRFsuite has none), the same model for any
// thread count, and the same tags from the model in memory and from its
// file.

#include <cstdlib>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/chain_model.h"
#include "pipeline/chain_training.h"
#include "pipeline/pipeline.h"

namespace chaintag {
namespace {

using ::testing::HasSubstr;

std::string TmpDir() { return std::getenv("TEST_TMPDIR"); }

// Noun phrases of a determiner and nouns, then a verb; each token lists its
// word, its neighbours' and a suffix. `vocabulary` picks among the words,
// so that the test split can hold words training never saw. The distinct
// attribute names are added to `names`.
std::string AttributeCorpus(int num_sentences, int seed, int vocabulary,
                            std::set<std::string>* names) {
  const std::vector<std::string> dets = {"the", "a", "this"};
  const std::vector<std::string> nouns = {"cat",  "dog", "mat", "hat",
                                          "bird", "fox", "owl", "yak"};
  const std::vector<std::string> verbs = {"sat", "ran", "saw", "ate"};
  uint32_t state = static_cast<uint32_t>(seed) * 2654435761u + 1;
  auto pick = [&](const std::vector<std::string>& words) {
    state = state * 1664525u + 1013904223u;
    const size_t n = std::min<size_t>(words.size(), vocabulary);
    return words[(state >> 16) % n];
  };
  std::string out;
  for (int i = 0; i < num_sentences; ++i) {
    std::vector<std::string> words = {pick(dets), pick(nouns)};
    if (i % 3 == 0) words.push_back(pick(nouns));
    words.push_back(pick(verbs));
    for (size_t t = 0; t < words.size(); ++t) {
      const std::string label = t == 0                 ? "B-NP"
                                : t + 1 < words.size() ? "I-NP"
                                                       : "O";
      std::vector<std::string> attributes = {
          "w[0]=" + words[t], "s[0]=" + words[t].substr(words[t].size() - 1)};
      attributes.push_back(t == 0 ? std::string("__BOS__")
                                  : "w[-1]=" + words[t - 1]);
      if (t + 1 < words.size()) attributes.push_back("w[1]=" + words[t + 1]);
      out += label;
      for (const std::string& attribute : attributes) {
        absl::StrAppend(&out, "\t", attribute);
        if (names != nullptr) names->insert(attribute);
      }
      out += "\n";
    }
    out += "\n";
  }
  return out;
}

class ExactFeaturesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(TmpDir() + "/train.crfsuite")
        << AttributeCorpus(60, 1, 5, &train_names_);
    std::ofstream(TmpDir() + "/test.crfsuite")
        << AttributeCorpus(20, 2, 100, nullptr);
    options_.corpora_root = TmpDir();
    options_.output_dir = TmpDir();
    options_.progress = nullptr;
  }

  // The CRF (log loss): no weight of a feature seen in training ends at
  // zero, so every row is stored.
  static PipelineConfig Config() {
    PipelineConfig config;
    config.set_name("exact");
    config.mutable_corpus()->set_train("train.crfsuite");
    config.mutable_corpus()->set_test("test.crfsuite");
    ConllFormat* format = config.mutable_corpus()->mutable_format();
    format->set_layout(ConllFormat::CRFSUITE);
    format->set_tag_scheme(IOB2);
    config.mutable_features()->set_exact(true);
    config.mutable_features()->set_bias(false);
    config.mutable_model()->set_train_scheme(IOB2);
    config.mutable_model()->set_loss(LOG);
    SolverConfig* solver = config.mutable_solver();
    solver->set_name("svrg");
    solver->set_lambda(0.01);
    solver->set_max_passes(10);
    solver->mutable_svrg()->set_learning_rate(0.05);
    solver->set_num_threads(2);
    config.set_eval_every(0);
    return config;
  }

  std::set<std::string> train_names_;
  PipelineOptions options_;
};

TEST_F(ExactFeaturesTest, EveryDistinctAttributeIsARow) {
  absl::StatusOr<PreparedCorpus> prepared = PrepareCorpus(Config(), options_);
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  const int64_t distinct = static_cast<int64_t>(train_names_.size());
  ASSERT_GT(distinct, 20);
  EXPECT_EQ(prepared->extractor->num_buckets(),
            static_cast<uint64_t>(distinct));
  EXPECT_EQ(prepared->rows->size(), distinct);
  EXPECT_EQ(prepared->feature_stats.distinct_attributes, distinct);
  absl::StatusOr<ChainModel> model = TrainChainModel(*prepared);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->header().format_version(), kExactFormatVersion);
  EXPECT_EQ(model->header().feature_keys_size(), distinct);
  EXPECT_EQ(model->rows().size(), distinct);

  // Hashing them into 4 buckets merges them; exact rows do not.
  PipelineConfig hashed = Config();
  hashed.mutable_features()->set_exact(false);
  hashed.mutable_features()->set_num_buckets(4);
  absl::StatusOr<PreparedCorpus> merged = PrepareCorpus(hashed, options_);
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(merged->rows->size(), 4);
}

TEST_F(ExactFeaturesTest, TheModelIsTheSameForAnyThreadCount) {
  std::string bytes;
  for (int threads : {1, 2, 3}) {
    PipelineConfig config = Config();
    config.mutable_solver()->set_num_threads(threads);
    config.set_model_path(absl::StrCat("threads", threads, ".model"));
    absl::StatusOr<PipelineResult> result = RunPipeline(config, options_);
    ASSERT_TRUE(result.ok()) << result.status();
    absl::StatusOr<ChainModel> model = ChainModel::Load(result->model_path);
    ASSERT_TRUE(model.ok()) << model.status();
    const std::string serialized = model->ToProto().SerializeAsString();
    if (bytes.empty()) bytes = serialized;
    EXPECT_EQ(serialized, bytes) << threads << " threads";
  }
}

TEST_F(ExactFeaturesTest, TagsFromMemoryAndFromTheFileAreTheSame) {
  absl::StatusOr<PreparedCorpus> prepared = PrepareCorpus(Config(), options_);
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  absl::StatusOr<ChainModel> in_memory = TrainChainModel(*prepared);
  ASSERT_TRUE(in_memory.ok()) << in_memory.status();
  const std::string path = TmpDir() + "/memory.model";
  ASSERT_TRUE(in_memory->Save(path).ok());
  absl::StatusOr<ChainModel> loaded = ChainModel::Load(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_FALSE(prepared->test.empty());
  TagScratch scratch;
  int unseen = 0;
  for (const Sentence& sentence : prepared->test) {
    for (int k = 0; k < sentence.num_items(); ++k) {
      unseen += train_names_.count(std::string(sentence.item_name(k))) == 0;
    }
    std::vector<std::string> from_memory, from_file;
    ASSERT_TRUE(in_memory->Tag(sentence, &scratch, &from_memory).ok());
    ASSERT_TRUE(loaded->Tag(sentence, &scratch, &from_file).ok());
    EXPECT_EQ(from_memory, from_file);
    std::vector<double> memory_p, file_p;
    ASSERT_TRUE(
        in_memory->TagWithMarginals(sentence, &scratch, &from_memory, &memory_p)
            .ok());
    ASSERT_TRUE(
        loaded->TagWithMarginals(sentence, &scratch, &from_file, &file_p).ok());
    EXPECT_EQ(memory_p, file_p);
  }
  EXPECT_GT(unseen, 0);  // the test split has attributes training lacks
}

TEST_F(ExactFeaturesTest, WhatExactFeaturesDoNotSupportIsRefused) {
  PipelineConfig pairs = Config();
  pairs.mutable_features()->add_pair_templates()->add_parts();
  absl::StatusOr<PipelineResult> result = RunPipeline(pairs, options_);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(),
              HasSubstr("exact features do not support pair_templates"));
}

}  // namespace
}  // namespace chaintag
