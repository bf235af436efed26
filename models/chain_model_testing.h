// Small chain models for tests of the tagging paths: word identity hashed
// into a few buckets, random weights, reading "word [gold]" CoNLL lines;
// RandomWordChunker is an IOB2 chunker (O, B-NP, I-NP).
//
// Thread-safety: stateless functions.

#ifndef CHAINTAG_MODELS_CHAIN_MODEL_TESTING_H_
#define CHAINTAG_MODELS_CHAIN_MODEL_TESTING_H_

#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "features/bucket_rows.h"
#include "gtest/gtest.h"
#include "models/chain_model.h"

namespace chaintag {
namespace chain_testing {

// A model over `labels` with standard normal weights from `seed`, which
// `adjust` (when given) may change before the model is built.
inline ChainModel RandomWordModel(
    const std::vector<std::string>& labels, TagScheme scheme, int buckets,
    uint32_t seed,
    const std::function<void(const ChainLayout&, std::vector<double>*)>&
        adjust = nullptr) {
  ModelFile header;
  for (const std::string& label : labels) header.add_labels(label);
  FeatureConfig* features = header.mutable_features();
  features->set_num_buckets(buckets);
  features->add_templates()->add_parts()->set_attribute(0);
  ConllFormat* format = header.mutable_input_format();
  format->add_attribute_columns(0);
  format->set_label_column(1);
  format->set_tag_scheme(scheme);
  format->set_allow_missing_label(true);
  header.set_input_num_columns(2);
  header.set_train_scheme(scheme);
  header.set_output_scheme(scheme);
  const ChainLayout layout{static_cast<int>(labels.size()), buckets};
  std::vector<double> weights(layout.dim());
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0, 1);
  for (double& w : weights) w = normal(rng);
  if (adjust) adjust(layout, &weights);
  absl::StatusOr<ChainModel> model =
      ChainModel::Create(header, BucketRows::Identity(buckets), weights);
  EXPECT_TRUE(model.ok()) << model.status();
  return std::move(*model);
}

inline ChainModel RandomWordChunker(uint32_t seed) {
  return RandomWordModel({"O", "B-NP", "I-NP"}, IOB2, 64, seed);
}

}  // namespace chain_testing
}  // namespace chaintag

#endif  // CHAINTAG_MODELS_CHAIN_MODEL_TESTING_H_
