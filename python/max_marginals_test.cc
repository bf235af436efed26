#include "python/max_marginals.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "corpora/sentence_testing.h"
#include "gtest/gtest.h"
#include "models/chain_model.h"
#include "models/model_file_testing.h"

namespace chaintag {
namespace {

using sentence_testing::WordSentence;

using chain_testing::kBuckets;
using chain_testing::NormalWeights;
using chain_testing::SecondOrderHeader;

// An IOB2 model over word identity, first order, with or without pair
// templates (an L×L block of transitions per word bucket).
ChainModel MakeModel(bool pairs) {
  static const BucketRows* all = new BucketRows(BucketRows::Identity(kBuckets));
  ModelFile header = SecondOrderHeader();
  if (!pairs) header.mutable_features()->clear_pair_templates();
  const WeightSpace space{all, pairs ? all : nullptr, nullptr};
  absl::StatusOr<ChainModel> model = ChainModel::Create(
      header, space, NormalWeights(space.Layout(4).dim(), 5));
  EXPECT_TRUE(model.ok()) << model.status();
  return *std::move(model);
}

// Every labeling of `sentence` with its score: the n-best list with n =
// L^T lists them all (models/chain_model_test.cc checks its scores against
// scores computed by hand).
Decoded AllLabelings(const ChainModel& model, const Sentence& sentence,
                     bool constrained) {
  DecodeOptions options;
  options.nbest = 1;
  for (int t = 0; t < sentence.size(); ++t) {
    options.nbest *= model.labels().size();
  }
  options.constrained = constrained;
  TagScratch tag;
  Decoded all;
  EXPECT_TRUE(model.PredictNBest(sentence, options, &tag, &all).ok());
  return all;
}

// Calls check(model, sentence, constrained, all labelings, scratch) for
// sentences of 1 to 4 words, with and without pair templates, constrained
// or not; the scratch is reused across one model's sentences.
template <typename Check>
void ForEachCase(Check check) {
  const std::vector<std::string> words = {"the", "big", "dog", "barks"};
  for (bool pairs : {false, true}) {
    const ChainModel model = MakeModel(pairs);
    ASSERT_EQ(model.layout().num_pair_rows, pairs ? kBuckets : 0);
    MaxMarginalScratch scratch;
    for (int T = 1; T <= 4; ++T) {
      for (bool constrained : {false, true}) {
        SCOPED_TRACE(testing::Message() << "pairs " << pairs << " T " << T
                                        << " constrained " << constrained);
        const Sentence sentence = WordSentence(
            std::vector<std::string>(words.begin(), words.begin() + T));
        check(model, sentence, constrained,
              AllLabelings(model, sentence, constrained), &scratch);
      }
    }
  }
}

constexpr int kLabels = 4;

// Max-marginals against every labeling's score.
TEST(MaxMarginalsTest, MatchAllLabelingsWithAndWithoutPairTemplates) {
  ForEachCase([](const ChainModel& model, const Sentence& sentence,
                 bool constrained, const Decoded& all,
                 MaxMarginalScratch* scratch) {
    const int T = sentence.size();
    const int L = kLabels;
    std::vector<double> expected(T * L,
                                 -std::numeric_limits<double>::infinity());
    for (size_t j = 0; j < all.labelings.size(); ++j) {
      for (int t = 0; t < T; ++t) {
        double& best = expected[t * L + all.labelings[j][t]];
        best = std::max(best, all.scores[j]);
      }
    }
    std::vector<double> got;
    ASSERT_TRUE(
        ComputeMaxMarginals(model, sentence, constrained, scratch, &got).ok());
    ASSERT_EQ(got.size(), expected.size());
    for (size_t k = 0; k < got.size(); ++k) {
      if (std::isinf(expected[k])) {
        EXPECT_EQ(got[k], expected[k]) << "entry " << k;
      } else {
        EXPECT_NEAR(got[k], expected[k], 1e-9) << "entry " << k;
      }
    }
  });
}

// Label marginals, log Z and labelings' log-probabilities against the
// enumeration of every labeling: P(y_t = l) is the sum of exp(score − log Z)
// over the labelings with l at t.
TEST(LabelMarginalsTest, MatchAllLabelingsWithAndWithoutPairTemplates) {
  ForEachCase([](const ChainModel& model, const Sentence& sentence,
                 bool constrained, const Decoded& all,
                 MaxMarginalScratch* scratch) {
    const int T = sentence.size();
    const int L = kLabels;
    double max_score = all.scores[0];
    double sum = 0;
    for (double score : all.scores) sum += std::exp(score - max_score);
    const double log_z = max_score + std::log(sum);
    std::vector<double> expected(T * L, 0.0);
    for (size_t j = 0; j < all.labelings.size(); ++j) {
      const double p = std::exp(all.scores[j] - log_z);
      for (int t = 0; t < T; ++t) expected[t * L + all.labelings[j][t]] += p;
      const std::vector<int32_t> labels(all.labelings[j].begin(),
                                        all.labelings[j].end());
      absl::StatusOr<double> log_p = LogProbabilityOfLabeling(
          model, sentence, labels, constrained, scratch);
      ASSERT_TRUE(log_p.ok()) << log_p.status();
      EXPECT_NEAR(*log_p, all.scores[j] - log_z, 1e-9);
    }
    std::vector<double> got;
    absl::StatusOr<double> got_log_z =
        ComputeLabelMarginals(model, sentence, constrained, scratch, &got);
    ASSERT_TRUE(got_log_z.ok()) << got_log_z.status();
    EXPECT_NEAR(*got_log_z, log_z, 1e-9);
    ASSERT_EQ(got.size(), expected.size());
    for (size_t k = 0; k < got.size(); ++k) {
      EXPECT_NEAR(got[k], expected[k], 1e-12) << "entry " << k;
    }
  });
}

// ChainModel::TagWithMarginals (what `tag --marginals` prints): the
// predicted labels' marginals, against every labeling. The model file asks
// for no constrained decoding, so the unconstrained cases are compared.
TEST(TagWithMarginalsTest, PredictedLabelsProbabilitiesMatchAllLabelings) {
  ForEachCase([](const ChainModel& model, const Sentence& sentence,
                 bool constrained, const Decoded& all,
                 MaxMarginalScratch* scratch) {
    if (constrained) return;
    const int T = sentence.size();
    const int L = kLabels;
    double sum = 0;
    for (double score : all.scores) sum += std::exp(score - all.scores[0]);
    std::vector<double> expected(T * L, 0.0);
    for (size_t j = 0; j < all.labelings.size(); ++j) {
      const double p = std::exp(all.scores[j] - all.scores[0]) / sum;
      for (int t = 0; t < T; ++t) expected[t * L + all.labelings[j][t]] += p;
    }
    std::vector<int32_t> predicted;
    ASSERT_TRUE(model.Predict(sentence, &scratch->tag, &predicted).ok());
    std::vector<std::string> tags, plain;
    std::vector<double> probabilities;
    ASSERT_TRUE(
        model.TagWithMarginals(sentence, &scratch->tag, &tags, &probabilities)
            .ok());
    ASSERT_TRUE(model.Tag(sentence, &scratch->tag, &plain).ok());
    EXPECT_EQ(tags, plain);
    ASSERT_EQ(probabilities.size(), static_cast<size_t>(T));
    for (int t = 0; t < T; ++t) {
      EXPECT_NEAR(probabilities[t], expected[t * L + predicted[t]], 1e-12)
          << "position " << t;
    }
  });
}

}  // namespace
}  // namespace chaintag
