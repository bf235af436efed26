// Models with exact features (FeatureConfig.exact): the model file keys its
// rows by feature key (format 10), reads back to the same model, tags as the
// weights it was made from, and refuses a damaged key table naming the file.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "corpora/sentence_testing.h"
#include "features/bucket_rows.h"
#include "features/feature_extractor.h"
#include "features/feature_keys.h"
#include "features/training_keys.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/chain_layout.h"
#include "models/chain_model.h"
#include "models/model_encoding.h"
#include "models/model_file.h"
#include "models/model_file_testing.h"

namespace chaintag {
namespace {

using chain_testing::NormalWeights;
using chain_testing::TempPath;
using chain_testing::WriteAll;
using sentence_testing::WordSentence;
using ::testing::HasSubstr;

const std::vector<std::string>& Labels() {
  static const auto* labels =
      new std::vector<std::string>{"O", "B-NP", "I-NP", "B-VP"};
  return *labels;
}

// An IOB2 model header over the word and the word pair w[-1]|w[0], exact.
ModelFile ExactHeader() {
  ModelFile header;
  for (const std::string& label : Labels()) header.add_labels(label);
  FeatureConfig* features = header.mutable_features();
  features->set_exact(true);
  features->add_templates()->add_parts()->set_attribute(0);
  FeatureTemplate* pair = features->add_templates();
  TemplatePart* previous = pair->add_parts();
  previous->set_attribute(0);
  previous->set_offset(-1);
  pair->add_parts()->set_attribute(0);
  header.set_train_scheme(IOB2);
  header.set_output_scheme(IOB2);
  return header;
}

std::vector<Sentence> TrainingSentences() {
  return {WordSentence({"the", "cat", "sat"}),
          WordSentence({"a", "dog", "sat", "down"}),
          WordSentence({"the", "dog", "ran"})};
}

// The key table of the training sentences, as training gathers it.
std::shared_ptr<const FeatureKeys> TrainingKeys(const ModelFile& header) {
  absl::StatusOr<FeatureExtractor> hashing =
      FeatureExtractor::Create(header.features());
  EXPECT_TRUE(hashing.ok()) << hashing.status();
  const std::vector<Sentence> sentences = TrainingSentences();
  std::vector<const Sentence*> pointers;
  for (const Sentence& s : sentences) pointers.push_back(&s);
  absl::StatusOr<std::shared_ptr<const FeatureKeys>> keys =
      CollectTrainingKeys(*hashing, pointers);
  EXPECT_TRUE(keys.ok()) << keys.status();
  return *keys;
}

// Weights over every key's row, every third row zero (not stored).
std::vector<double> Weights(int64_t rows) {
  const int L = static_cast<int>(Labels().size());
  std::vector<double> w = NormalWeights(ChainLayout{L, rows}.dim(), 3);
  for (int64_t r = 0; r < rows; r += 3) {
    for (int y = 0; y < L; ++y) w[r * L + y] = 0;
  }
  return w;
}

struct Trained {
  std::shared_ptr<const FeatureKeys> keys;
  BucketRows rows;
  std::vector<double> weights;
  ChainModel model;
};

Trained MakeModel() {
  const ModelFile header = ExactHeader();
  std::shared_ptr<const FeatureKeys> keys = TrainingKeys(header);
  BucketRows rows = BucketRows::Identity(keys->size());
  std::vector<double> weights = Weights(keys->size());
  WeightSpace space{&rows};
  space.keys = keys.get();
  absl::StatusOr<ChainModel> model = ChainModel::Create(header, space, weights);
  EXPECT_TRUE(model.ok()) << model.status();
  return Trained{keys, std::move(rows), std::move(weights), *std::move(model)};
}

TEST(ExactModelTest, TheFileKeysItsStoredRowsByFeatureKey) {
  const Trained trained = MakeModel();
  const ModelFile& file = trained.model.header();
  // Words: the cat sat a dog down ran (7); pairs: BOS|the the|cat cat|sat
  // BOS|a a|dog dog|sat sat|down the|dog dog|ran (9); and the bias.
  ASSERT_EQ(trained.keys->size(), 17);
  EXPECT_EQ(file.format_version(), kExactFormatVersion);
  EXPECT_EQ(file.emission_buckets_size(), 0);
  // Rows 0, 3, ..., 15 are zero: 11 of 17 stored, keyed in order.
  ASSERT_EQ(file.feature_keys_size(), 11);
  int stored = 0;
  for (int64_t b = 0; b < trained.keys->size(); ++b) {
    if (b % 3 == 0) continue;
    EXPECT_EQ(file.feature_keys(stored++), trained.keys->keys()[b]);
  }
  EXPECT_TRUE(CheckModelFile(file).ok());
  // The model's buckets are its stored rows.
  EXPECT_EQ(trained.model.extractor().num_buckets(), 11u);
  EXPECT_EQ(trained.model.rows().size(), 11);
  ASSERT_NE(trained.model.space().keys, nullptr);
  EXPECT_EQ(trained.model.space().keys->size(), 11);
}

TEST(ExactModelTest, NamesFollowTheirRows) {
  ModelFile header = ExactHeader();
  std::shared_ptr<const FeatureKeys> keys = TrainingKeys(header);
  // Bucket 0 is a zero row (dropped with its name), 1 and 2 are stored as
  // rows 0 and 1, bucket 4 as row 2.
  for (uint32_t bucket : {0u, 1u, 2u, 4u}) {
    header.add_name_buckets(bucket);
    header.add_names(absl::StrCat("name ", bucket));
  }
  const BucketRows rows = BucketRows::Identity(keys->size());
  const std::vector<double> w = Weights(keys->size());
  ASSERT_TRUE(EncodeModelWeights(ChainLayout{4, keys->size()}, rows, keys.get(),
                                 nullptr, nullptr, nullptr, w, &header)
                  .ok());
  ASSERT_EQ(header.name_buckets_size(), 3);
  EXPECT_EQ(header.name_buckets(0), 0u);
  EXPECT_EQ(header.name_buckets(1), 1u);
  EXPECT_EQ(header.name_buckets(2), 2u);
  EXPECT_EQ(header.names(2), "name 4");
  EXPECT_TRUE(CheckModelFile(header).ok());
}

TEST(ExactModelTest, LoadedAndInMemoryModelsTagAsTheTrainingWeights) {
  const Trained trained = MakeModel();
  const std::string path = TempPath("exact.model");
  ASSERT_TRUE(trained.model.Save(path).ok());
  absl::StatusOr<ChainModel> loaded = ChainModel::Load(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->ToProto().SerializeAsString(),
            trained.model.ToProto().SerializeAsString());
  // The training side: the full key table and every row, as the pipeline
  // scores held-out data during training.
  absl::StatusOr<FeatureExtractor> training =
      FeatureExtractor::Create(ExactHeader().features(), trained.keys);
  ASSERT_TRUE(training.ok());
  const ChainLayout layout{4, trained.keys->size()};
  const WeightsView view =
      SolverWeightsView(layout, trained.rows, trained.weights.data());
  std::vector<Sentence> sentences = TrainingSentences();
  sentences.push_back(WordSentence({"an", "unseen", "cat", "sat", "the"}));
  sentences.push_back(WordSentence({"zebra"}));
  TagScratch scratch;
  for (const Sentence& s : sentences) {
    std::vector<int32_t> expected;
    ASSERT_TRUE(
        PredictWithWeights(*training, view, s, &scratch, &expected).ok());
    Decoded reference;
    ASSERT_TRUE(
        PredictNBestWithWeights(*training, view, trained.model.constraints(), s,
                                DecodeOptions{false, 3}, &scratch, &reference)
            .ok());
    for (const ChainModel* model :
         std::vector<const ChainModel*>{&trained.model, &*loaded}) {
      std::vector<int32_t> labels;
      ASSERT_TRUE(model->Predict(s, &scratch, &labels).ok());
      EXPECT_EQ(labels, expected);
      Decoded decoded;
      ASSERT_TRUE(
          model->PredictNBest(s, DecodeOptions{false, 3}, &scratch, &decoded)
              .ok());
      EXPECT_EQ(decoded.labelings, reference.labelings);
      // float32 rows against double weights: equal to rounding.
      ASSERT_EQ(decoded.scores.size(), reference.scores.size());
      for (size_t k = 0; k < decoded.scores.size(); ++k) {
        EXPECT_NEAR(decoded.scores[k], reference.scores[k], 1e-5);
      }
    }
  }
}

// `file` damaged by `damage` (checksum recomputed when `reseal`), written
// and read back: the error, which must name the file.
std::string ReadError(const ModelFile& file,
                      const std::function<void(ModelFile*)>& damage,
                      bool reseal, const std::string& name) {
  ModelFile damaged = file;
  damage(&damaged);
  if (reseal) damaged.set_weights_checksum(WeightsChecksum(damaged));
  const std::string path = TempPath(name);
  WriteAll(path, damaged.SerializeAsString());
  absl::StatusOr<ModelFile> read = ReadModelFile(path);
  EXPECT_FALSE(read.ok()) << name;
  if (read.ok()) return "";
  EXPECT_THAT(read.status().message(), HasSubstr(path + ": not a valid"));
  return std::string(read.status().message());
}

TEST(ExactModelTest, DamagedKeyTablesAreRefusedNamingTheFile) {
  const ModelFile file = MakeModel().model.ToProto();
  ASSERT_GE(file.feature_keys_size(), 3);
  // Out of order, repeated, one missing (fewer keys than rows), and any
  // change without resealing the checksum.
  EXPECT_THAT(ReadError(
                  file,
                  [](ModelFile* f) {
                    const uint64_t first = f->feature_keys(0);
                    f->set_feature_keys(0, f->feature_keys(1));
                    f->set_feature_keys(1, first);
                  },
                  true, "swapped.model"),
              HasSubstr("feature key 1 of 11 is not above the one before it"));
  EXPECT_THAT(
      ReadError(
          file,
          [](ModelFile* f) { f->set_feature_keys(2, f->feature_keys(1)); },
          true, "repeated.model"),
      HasSubstr("feature key 2 of 11 is not above"));
  EXPECT_THAT(
      ReadError(
          file, [](ModelFile* f) { f->mutable_feature_keys()->RemoveLast(); },
          true, "short.model"),
      HasSubstr("weight sizes do not match"));
  EXPECT_THAT(
      ReadError(
          file,
          [](ModelFile* f) { f->set_feature_keys(0, f->feature_keys(0) - 1); },
          false, "unsealed.model"),
      HasSubstr("checksum mismatch"));
  // Buckets beside the keys; keys in a hashed file; the versions.
  EXPECT_THAT(ReadError(
                  file, [](ModelFile* f) { f->add_emission_buckets(0); }, true,
                  "buckets.model"),
              HasSubstr("buckets in a model with exact features"));
  EXPECT_THAT(ReadError(
                  file,
                  [](ModelFile* f) {
                    f->mutable_features()->set_exact(false);
                    f->set_format_version(kModelFormatVersion);
                  },
                  true, "hashed.model"),
              HasSubstr("feature keys in a model with hashed features"));
  EXPECT_THAT(
      ReadError(
          file,
          [](ModelFile* f) { f->set_format_version(kModelFormatVersion); },
          true, "version6.model"),
      HasSubstr("format version 6 does not match order 0 with exact features"));
}

TEST(ExactModelTest, EncodingNeedsTheKeysOfExactFeaturesOnly) {
  const ModelFile exact = ExactHeader();
  std::shared_ptr<const FeatureKeys> keys = TrainingKeys(exact);
  const BucketRows rows = BucketRows::Identity(keys->size());
  const ChainLayout layout{4, keys->size()};
  const std::vector<double> w = Weights(keys->size());
  ModelFile file = exact;
  EXPECT_FALSE(EncodeModelWeights(layout, rows, nullptr, nullptr, nullptr,
                                  nullptr, w, &file)
                   .ok());
  // Rows over another number of buckets than the table's keys.
  const BucketRows more = BucketRows::Identity(keys->size() + 1);
  file = exact;
  EXPECT_FALSE(EncodeModelWeights(ChainLayout{4, keys->size() + 1}, more,
                                  keys.get(), nullptr, nullptr, nullptr,
                                  Weights(keys->size() + 1), &file)
                   .ok());
  // Hashed features take no table.
  file = exact;
  file.mutable_features()->set_exact(false);
  file.mutable_features()->set_num_buckets(keys->size());
  EXPECT_FALSE(EncodeModelWeights(layout, rows, keys.get(), nullptr, nullptr,
                                  nullptr, w, &file)
                   .ok());
}

}  // namespace
}  // namespace chaintag
