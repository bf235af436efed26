#include "pipeline/training_problem.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
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

TEST(TrainingProblemTest, DropRareFeaturesKeepsExactlyTheFrequentBuckets) {
  // Hand-counted: bucket 5 at 3 positions, 7 at 2, 9 at 1, 4 at 2 (once in
  // each example); pair bucket 30 at 2 positions, 31 at 1.
  std::vector<ChainExample> examples(2);
  examples[0].labels = {0, 1, 0};
  examples[0].features.offsets = {0, 3, 5, 6};
  examples[0].features.buckets = {4, 5, 9, 5, 7, 7};
  examples[0].features.values = {1, 2, 3, 4, 5, 6};
  examples[0].pair_features.offsets = {0, 0, 1, 3};
  examples[0].pair_features.buckets = {30, 30, 31};
  examples[1].labels = {1};
  examples[1].features.offsets = {0, 2};
  examples[1].features.buckets = {4, 5};
  examples[1].pair_features.offsets = {0, 0};
  for (int min_count : {0, 1}) {
    std::vector<ChainExample> same = examples;
    DropRareFeatures(min_count, &same);
    EXPECT_EQ(same[0].features.buckets, examples[0].features.buckets);
  }
  std::vector<ChainExample> two = examples;
  DropRareFeatures(2, &two);
  EXPECT_EQ(two[0].features.offsets, (std::vector<int32_t>{0, 2, 4, 5}));
  EXPECT_EQ(two[0].features.buckets, (std::vector<uint32_t>{4, 5, 5, 7, 7}));
  EXPECT_EQ(two[0].features.values, (std::vector<float>{1, 2, 4, 5, 6}));
  EXPECT_EQ(two[0].pair_features.offsets, (std::vector<int32_t>{0, 0, 1, 2}));
  EXPECT_EQ(two[0].pair_features.buckets, (std::vector<uint32_t>{30, 30}));
  EXPECT_EQ(two[1].features.offsets, (std::vector<int32_t>{0, 2}));
  EXPECT_EQ(two[1].features.buckets, (std::vector<uint32_t>{4, 5}));
  std::vector<ChainExample> three = examples;
  DropRareFeatures(3, &three);
  EXPECT_EQ(three[0].features.offsets, (std::vector<int32_t>{0, 1, 2, 2}));
  EXPECT_EQ(three[0].features.buckets, (std::vector<uint32_t>{5, 5}));
  EXPECT_EQ(three[0].features.values, (std::vector<float>{2, 4}));
  EXPECT_EQ(three[1].features.buckets, (std::vector<uint32_t>{5}));
  EXPECT_TRUE(three[0].pair_features.buckets.empty());
  EXPECT_EQ(three[0].pair_features.offsets, (std::vector<int32_t>{0, 0, 0, 0}));
  std::vector<ChainExample> four = examples;
  DropRareFeatures(4, &four);
  EXPECT_EQ(four[0].features.offsets, (std::vector<int32_t>{0, 0, 0, 0}));
  EXPECT_TRUE(four[1].features.buckets.empty());
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
  absl::StatusOr<TrainingProblem> training =
      MakeTrainingProblem(Model(1), SolverConfig(), Labels(), 64,
                          {Example({1, 2, 0}, false)}, nullptr, 1);
  ASSERT_TRUE(training.ok()) << training.status();
  EXPECT_EQ(training->rows->buckets(), (std::vector<uint32_t>{10, 11, 12}));
  EXPECT_EQ(training->structure, nullptr);
  EXPECT_EQ(training->pair_rows, nullptr);
  const ChainLayout& layout = training->problem->layout();
  EXPECT_EQ(layout.order, 1);
  EXPECT_EQ(layout.dim(), 3 * 3 + 9 + 2 * 3);
}

// model.states STATES_AUTO keeps every label's weights below
// kObservedTransitionsFrom labels and restricts each row to its observed
// labels from there (not with given rows); OBSERVED_STATES always does.
TEST(TrainingProblemTest, AutoStatesRestrictTheRowsFromOneHundredLabels) {
  auto labels_of = [](int count) {
    LabelSet labels;
    for (int y = 0; y < count; ++y) labels.Add(absl::StrCat("L", y));
    return labels;
  };
  auto examples = [](int count) {
    std::vector<int32_t> y(count);
    for (int k = 0; k < count; ++k) y[k] = k;
    return std::vector<ChainExample>{Example(y, false)};
  };
  SolverConfig lbfgs;
  lbfgs.set_name("lbfgs");
  ModelConfig model = Model(1);
  model.set_train_scheme(NONE);
  model.set_states(ModelConfig::STATES_AUTO);
  for (int count : {kObservedTransitionsFrom - 1, kObservedTransitionsFrom}) {
    SCOPED_TRACE(count);
    absl::StatusOr<TrainingProblem> training = MakeTrainingProblem(
        model, lbfgs, labels_of(count), 1024, examples(count), nullptr, 1);
    ASSERT_TRUE(training.ok()) << training.status();
    const bool restricted = training->problem->FreeCoordinates(nullptr);
    EXPECT_EQ(restricted, count >= kObservedTransitionsFrom);
    if (restricted) {
      // Row r (bucket 10 + r) is seen with label r alone.
      const ChainLayout& layout = training->problem->layout();
      EXPECT_EQ(training->problem->num_free_coordinates(),
                count + layout.dim() - layout.pair_emission_offset());
      EXPECT_NE(training->space().free.rows, nullptr);
    }
    const BucketRows given = BucketRows::Identity(1024);
    std::vector<ChainExample> by_row = examples(count);
    for (uint32_t& bucket : by_row[0].features.buckets) bucket -= 10;
    absl::StatusOr<TrainingProblem> given_rows = MakeTrainingProblem(
        model, lbfgs, labels_of(count), 1024, by_row, &given, 1);
    ASSERT_TRUE(given_rows.ok()) << given_rows.status();
    EXPECT_FALSE(given_rows->problem->FreeCoordinates(nullptr));
  }
  model.set_states(ModelConfig::OBSERVED_STATES);
  absl::StatusOr<TrainingProblem> observed = MakeTrainingProblem(
      model, lbfgs, labels_of(3), 1024, examples(3), nullptr, 1);
  ASSERT_TRUE(observed.ok()) << observed.status();
  EXPECT_TRUE(observed->problem->FreeCoordinates(nullptr));
  EXPECT_FALSE(observed->problem->free_coordinates_are_the_space());
  // Any other solver gets the free coordinates as the problem's space.
  absl::StatusOr<TrainingProblem> as_space = MakeTrainingProblem(
      model, SolverConfig(), labels_of(3), 1024, examples(3), nullptr, 1);
  ASSERT_TRUE(as_space.ok()) << as_space.status();
  EXPECT_TRUE(as_space->problem->free_coordinates_are_the_space());
  EXPECT_FALSE(as_space->problem->FreeCoordinates(nullptr));
  EXPECT_EQ(as_space->problem->Dim(),
            observed->problem->num_free_coordinates());
  EXPECT_NE(as_space->space().free.rows, nullptr);
  // Boxes name coordinates of all of w, which that space renumbers.
  SolverConfig boxed;
  boxed.mutable_bcfw()->add_box()->set_end(3);
  absl::StatusOr<TrainingProblem> refused = MakeTrainingProblem(
      model, boxed, labels_of(3), 1024, examples(3), nullptr, 1);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(TrainingProblemTest, SecondOrderHasTheGoldTrigramsPairsAndPairRows) {
  absl::StatusOr<TrainingProblem> training = MakeTrainingProblem(
      Model(2), SolverConfig(), Labels(), 64,
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
      Model(2), SolverConfig(), Labels(), 64,
      {Example({1, 2}, false), Example({0, 2}, false)}, nullptr, 1);
  ASSERT_FALSE(training.ok());
  EXPECT_NE(training.status().message().find("example 1"), std::string::npos)
      << training.status();
}

TEST(TrainingProblemTest, RefusesAnUnknownOrder) {
  EXPECT_FALSE(MakeTrainingProblem(Model(3), SolverConfig(), Labels(), 64,
                                   {Example({1}, false)}, nullptr, 1)
                   .ok());
}

}  // namespace
}  // namespace chaintag
