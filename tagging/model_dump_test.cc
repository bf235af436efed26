#include "tagging/model_dump.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "features/bucket_rows.h"
#include "features/feature_extractor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/chain_layout.h"
#include "models/chain_model.h"
#include "models/model_file.h"

namespace chaintag {
namespace {

using ::testing::HasSubstr;

constexpr int kBuckets = 4096;

ModelFile Header() {
  ModelFile header;
  for (const char* label : {"O", "B-NP", "I-NP"}) header.add_labels(label);
  FeatureConfig* features = header.mutable_features();
  features->set_num_buckets(kBuckets);
  features->set_bias(false);
  features->add_templates()->add_parts()->set_attribute(0);
  ConllFormat* format = header.mutable_input_format();
  format->add_attribute_columns(0);
  format->set_label_column(1);
  format->set_tag_scheme(IOB2);
  header.set_input_num_columns(2);
  header.set_train_scheme(IOB2);
  header.set_output_scheme(IOB2);
  return header;
}

uint32_t BucketOf(const std::string& word) {
  absl::StatusOr<FeatureExtractor> extractor =
      FeatureExtractor::Create(Header().features());
  EXPECT_TRUE(extractor.ok()) << extractor.status();
  Sentence sentence;
  sentence.num_attributes = 1;
  sentence.attributes = {word};
  FeatureSequence features;
  EXPECT_TRUE(extractor->Extract(sentence, &features).ok());
  EXPECT_EQ(features.buckets.size(), 1u);
  return features.buckets[0];
}

// A model whose only non-zero attribute weights are the planted ones:
// "planted" weighs 5 for B-NP, "other" 1 for B-NP, "against" -2 for O.
ChainModel PlantedModel() {
  const ChainLayout layout{3, kBuckets};
  std::vector<double> weights(layout.dim(), 0.0);
  weights[BucketOf("planted") * 3 + 1] = 5.0;
  weights[BucketOf("other") * 3 + 1] = 1.0;
  weights[BucketOf("against") * 3 + 0] = -2.0;
  weights[layout.transition_offset() + 0 * 3 + 1] = 0.5;  // O --> B-NP
  absl::StatusOr<ChainModel> model =
      ChainModel::Create(Header(), BucketRows::Identity(kBuckets), weights);
  EXPECT_TRUE(model.ok()) << model.status();
  return std::move(*model);
}

std::string Dump(const ChainModel& model, const ModelFeatureNames& names,
                 int top) {
  DumpOptions options;
  options.top = top;
  options.all = true;
  options.names_source = "the test";
  std::ostringstream out;
  EXPECT_TRUE(WriteModelDump(model, names, options, &out).ok());
  return out.str();
}

TEST(ModelDumpTest, NamesThePlantedAttributeFirstFromATrainingFile) {
  const ChainModel model = PlantedModel();
  const std::string path = absl::StrCat(testing::TempDir(), "/train.txt");
  {
    std::ofstream file(path);
    file << "against O\nother B-NP\nplanted B-NP\n\nunseen O\n";
  }
  absl::StatusOr<ModelFeatureNames> names = RecoverFeatureNames(model, path);
  ASSERT_TRUE(names.ok()) << names.status();
  EXPECT_EQ(names->emission.size(), 4);
  const std::string dump = Dump(model, *names, 2);
  EXPECT_THAT(dump, HasSubstr("top attributes of B-NP:\n"
                              "   +5.000000  #0=planted\n"
                              "   +1.000000  #0=other\n"));
  // Only the non-zero weights of a label are listed.
  EXPECT_THAT(dump, HasSubstr("top attributes of O:\n"
                              "   -2.000000  #0=against\n\n"));
  EXPECT_THAT(dump, HasSubstr("top attributes of I-NP:\n"
                              "  (no non-zero weight)\n"));
  EXPECT_THAT(dump, HasSubstr("  O --> B-NP: 0.500000\n"));
  EXPECT_THAT(dump, HasSubstr("  #0=planted --> B-NP: 5.000000\n"));
  EXPECT_THAT(dump, HasSubstr("attribute names: 4 from the test\n"));
}

TEST(ModelDumpTest, ShowsBucketsWithoutNamesAndNamesKeptInTheModel) {
  const ChainModel model = PlantedModel();
  const std::string anonymous = Dump(model, ModelFeatureNames(), 1);
  EXPECT_THAT(anonymous,
              HasSubstr(absl::StrCat("top attributes of B-NP:\n   +5.000000  ",
                                     "bucket ", BucketOf("planted"), "\n")));
  EXPECT_THAT(anonymous, HasSubstr("attribute names: not known"));

  ModelFile file = model.header();
  file.add_name_buckets(BucketOf("planted"));
  file.add_names("kept name");
  const ModelFeatureNames kept = FeatureNamesFromModel(file);
  EXPECT_THAT(Dump(model, kept, 1),
              HasSubstr("top attributes of B-NP:\n   +5.000000  kept name\n"));
}

TEST(ModelDumpTest, SaysWhenABucketHoldsSeveralNames) {
  const ChainModel model = PlantedModel();
  ModelFeatureNames names;
  names.emission.Add(BucketOf("planted"), "first");
  names.emission.Add(BucketOf("planted"), "second");
  EXPECT_THAT(Dump(model, names, 1),
              HasSubstr("+5.000000  first  (bucket shared with 1 other)\n"));
}

// From kSparseRowsFromLabels labels up the file keeps only a row's
// non-zero labels; the dump and the state weights read them as full rows.
TEST(ModelDumpTest, ReadsSparseRowsAsFullRows) {
  ModelFile header = Header();
  header.clear_labels();
  const int L = kSparseRowsFromLabels + 5;
  for (int y = 0; y < L; ++y) header.add_labels(absl::StrCat("L", y));
  const ChainLayout layout{L, kBuckets};
  std::vector<double> weights(layout.dim(), 0.0);
  weights[BucketOf("planted") * L + 7] = 5.0;
  weights[BucketOf("planted") * L + 90] = -1.5;
  weights[BucketOf("other") * L + 90] = 1.0;
  absl::StatusOr<ChainModel> model =
      ChainModel::Create(header, BucketRows::Identity(kBuckets), weights);
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_TRUE(HasSparseRows(model->header()));

  ModelFeatureNames names;
  names.emission.Add(BucketOf("planted"), "planted");
  names.emission.Add(BucketOf("other"), "other");
  const std::string dump = Dump(*model, names, 2);
  EXPECT_THAT(dump, HasSubstr(absl::StrCat(L, " labels, 2 attribute rows ",
                                           "(sparse: 3 of their ", 2 * L,
                                           " weights kept)")));
  EXPECT_THAT(dump,
              HasSubstr("top attributes of L7:\n   +5.000000  planted\n\n"));
  EXPECT_THAT(dump, HasSubstr("top attributes of L90:\n   +1.000000  other\n"
                              "   -1.500000  planted\n"));
  std::vector<std::string> listed;
  for (const StateWeight& w : NonZeroStateWeights(*model, names)) {
    listed.push_back(absl::StrCat(
        w.attribute, " ", model->labels().Name(w.label), " ", w.weight));
  }
  EXPECT_THAT(listed, ::testing::UnorderedElementsAre(
                          "planted L7 5", "planted L90 -1.5", "other L90 1"));
}

// A model trained over the training labelings' label pairs scores every
// other pair kForbiddenTransition: those have no feature, and the dump
// says how many instead of listing the placeholder as a weight.
TEST(ModelDumpTest, LeavesOutTheLabelPairsTrainingNeverSaw) {
  const ModelFile header = Header();
  const int L = header.labels_size();
  const ChainLayout layout{L, kBuckets};
  std::vector<double> weights(layout.dim(), 0.0);
  for (int k = 0; k < L * L; ++k) {
    weights[layout.transition_offset() + k] = kForbiddenTransition;
  }
  weights[layout.transition_offset() + 1] = 0.25;  // label 0 --> label 1
  absl::StatusOr<ChainModel> model =
      ChainModel::Create(header, BucketRows::Identity(kBuckets), weights);
  ASSERT_TRUE(model.ok()) << model.status();
  const std::string dump = Dump(*model, ModelFeatureNames(), 1);
  EXPECT_THAT(dump, HasSubstr(absl::StrCat(
                        "transitions (previous --> next: weight):\n  ",
                        header.labels(0), " --> ", header.labels(1),
                        ": 0.250000\n  (", L * L - 1,
                        " label pairs never seen in training have no "
                        "transition feature")));
  EXPECT_THAT(dump, ::testing::Not(HasSubstr("e+30")));
  EXPECT_THAT(dump, ::testing::Not(HasSubstr("-1000000")));
}

TEST(ModelDumpTest, NonZeroStateWeightsListsThePlantedWeightsByName) {
  const ChainModel model = PlantedModel();
  ModelFeatureNames names;
  names.emission.Add(BucketOf("planted"), "planted");
  names.emission.Add(BucketOf("against"), "against");
  std::vector<std::string> listed;
  for (const StateWeight& w : NonZeroStateWeights(model, names)) {
    listed.push_back(absl::StrCat(w.attribute, " ",
                                  model.labels().Name(w.label), " ", w.weight));
  }
  EXPECT_THAT(listed,
              ::testing::UnorderedElementsAre(
                  "planted B-NP 5", "against O -2",
                  absl::StrCat("bucket ", BucketOf("other"), " B-NP 1")));
}

TEST(ModelDumpTest, RecoveringNamesNamesTheFileAndLineAtFault) {
  const ChainModel model = PlantedModel();
  EXPECT_FALSE(RecoverFeatureNames(model, "/nonexistent/train.txt").ok());
  const std::string path = absl::StrCat(testing::TempDir(), "/bad.txt");
  {
    std::ofstream file(path);
    file << "a O\nb O\n\nc O extra\n";
  }
  absl::StatusOr<ModelFeatureNames> names = RecoverFeatureNames(model, path);
  ASSERT_FALSE(names.ok());
  EXPECT_THAT(std::string(names.status().message()), HasSubstr("bad.txt:4"));
}

}  // namespace
}  // namespace chaintag
