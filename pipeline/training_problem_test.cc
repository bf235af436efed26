#include "pipeline/training_problem.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace chaintag {
namespace {

// One position per label, one feature each (bucket = 10 + label), and pair
// features (bucket = 20 + t) from the second position on.
ChainExample Example(const std::vector<int32_t>& labels, bool pairs) {
  ChainExample example;
  example.labels = labels;
  for (size_t t = 0; t < labels.size(); ++t) {
    example.features.buckets.push_back(10 + labels[t]);
    example.features.offsets.push_back(static_cast<int32_t>(t + 1));
  }
  if (!pairs) return example;
  example.pair_features.offsets.push_back(0);
  for (size_t t = 1; t < labels.size(); ++t) {
    example.pair_features.buckets.push_back(20 + static_cast<uint32_t>(t));
    example.pair_features.offsets.push_back(static_cast<int32_t>(t));
  }
  return example;
}

LabelSet Labels() {
  LabelSet labels;
  for (const char* name : {"O", "B-NP", "I-NP"}) labels.Add(name);
  return labels;
}

ModelConfig Model(int order) {
  ModelConfig model;
  model.set_order(order);
  model.set_train_scheme(IOB2);
  return model;
}

TEST(TrainingProblemTest, ObservedTrigramsAndPairsAreSortedAndDistinct) {
  const std::vector<ChainExample> examples = {Example({1, 2, 2, 0}, false),
                                              Example({1, 2, 2}, false),
                                              Example({0}, false)};
  EXPECT_EQ(ObservedTrigrams(examples),
            (std::vector<LabelTrigram>{{1, 2, 2}, {2, 2, 0}}));
  EXPECT_EQ(ObservedPairs(examples),
            (std::vector<LabelPair>{{1, 2}, {2, 0}, {2, 2}}));
}

TEST(TrainingProblemTest, RemapToRowsRemapsEveryExample) {
  // Rows for buckets 11 and 12 only: bucket 10 (label 0) is dropped.
  absl::StatusOr<BucketRows> rows = BucketRows::FromSorted({11, 12}, 64);
  ASSERT_TRUE(rows.ok()) << rows.status();
  std::vector<ChainExample> examples;
  for (int k = 0; k < 7; ++k) {
    examples.push_back(Example({k % 3, (k + 1) % 3, 2}, /*pairs=*/true));
  }
  for (bool pairs : {false, true}) {
    std::vector<ChainExample> remapped = examples;
    RemapToRows(*rows, pairs, &remapped);
    for (size_t i = 0; i < examples.size(); ++i) {
      FeatureSequence expected =
          pairs ? examples[i].pair_features : examples[i].features;
      rows->Remap(&expected);
      const FeatureSequence& got =
          pairs ? remapped[i].pair_features : remapped[i].features;
      EXPECT_EQ(got.buckets, expected.buckets) << i;
      EXPECT_EQ(got.offsets, expected.offsets) << i;
      // The other sequence is left as it was.
      const FeatureSequence& other =
          pairs ? remapped[i].features : remapped[i].pair_features;
      EXPECT_EQ(other.buckets, pairs ? examples[i].features.buckets
                                     : examples[i].pair_features.buckets);
    }
  }
  // Labels 1 and 2 map to rows 0 and 1; label 0's feature is gone; the pair
  // buckets (21, 22) have no rows.
  std::vector<ChainExample> remapped = examples;
  RemapToRows(*rows, /*pair_features=*/false, &remapped);
  EXPECT_EQ(remapped[0].features.buckets, (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(remapped[0].features.offsets, (std::vector<int32_t>{0, 0, 1, 2}));
  RemapToRows(*rows, /*pair_features=*/true, &remapped);
  EXPECT_TRUE(remapped[0].pair_features.buckets.empty());
  EXPECT_EQ(remapped[0].pair_features.offsets,
            (std::vector<int32_t>{0, 0, 0, 0}));
}

TEST(TrainingProblemTest, FirstOrderUsesTheFeaturesRows) {
  absl::StatusOr<TrainingProblem> training = MakeTrainingProblem(
      Model(1), Labels(), 64, {Example({1, 2, 0}, false)}, nullptr, 1);
  ASSERT_TRUE(training.ok()) << training.status();
  EXPECT_EQ(training->rows->buckets(), (std::vector<uint32_t>{10, 11, 12}));
  EXPECT_EQ(training->structure, nullptr);
  EXPECT_EQ(training->pair_rows, nullptr);
  const ChainLayout& layout = training->problem->layout();
  EXPECT_EQ(layout.order, 1);
  EXPECT_EQ(layout.dim(), 3 * 3 + 9 + 2 * 3);
}

TEST(TrainingProblemTest, SecondOrderHasTheGoldTrigramsPairsAndPairRows) {
  absl::StatusOr<TrainingProblem> training = MakeTrainingProblem(
      Model(2), Labels(), 64,
      {Example({1, 2, 2, 0}, true), Example({0, 1, 2}, true)}, nullptr, 2);
  ASSERT_TRUE(training.ok()) << training.status();
  const SecondOrderStructure& structure = *training->structure;
  EXPECT_EQ(structure.trigrams(),
            (std::vector<LabelTrigram>{{0, 1, 2}, {1, 2, 2}, {2, 2, 0}}));
  EXPECT_EQ(structure.pairs(),
            (std::vector<LabelPair>{{0, 1}, {1, 2}, {2, 0}, {2, 2}}));
  EXPECT_EQ(training->pair_rows->buckets(),
            (std::vector<uint32_t>{21, 22, 23}));
  const ChainLayout& layout = training->problem->layout();
  EXPECT_EQ(layout.order, 2);
  EXPECT_EQ(layout.num_trigrams, 3);
  EXPECT_EQ(layout.num_pairs, 4);
  EXPECT_EQ(layout.num_pair_rows, 3);
  // The features now hold rows.
  EXPECT_EQ(training->problem->example(0).pair_features.buckets,
            (std::vector<uint32_t>{0, 1, 2}));
  // The tag scheme's constraints are the problem's: I-NP never after O.
  const std::vector<int32_t> forbidden = {0, 2};
  EXPECT_FALSE(structure.IsAllowed(forbidden.data(), 2));
}

TEST(TrainingProblemTest, SecondOrderRefusesAGoldLabelingTheSchemeForbids) {
  absl::StatusOr<TrainingProblem> training = MakeTrainingProblem(
      Model(2), Labels(), 64, {Example({1, 2}, false), Example({0, 2}, false)},
      nullptr, 1);
  ASSERT_FALSE(training.ok());
  EXPECT_NE(training.status().message().find("example 1"), std::string::npos)
      << training.status();
}

TEST(TrainingProblemTest, RefusesAnUnknownOrder) {
  EXPECT_FALSE(MakeTrainingProblem(Model(3), Labels(), 64,
                                   {Example({1}, false)}, nullptr, 1)
                   .ok());
}

}  // namespace
}  // namespace chaintag
