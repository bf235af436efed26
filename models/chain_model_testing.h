// A small chain model for tests of the tagging paths: an IOB2 chunker
// (O, B-NP, I-NP) over word identity with random weights, reading "word
// [gold]" CoNLL lines.
//
// Thread-safety: a stateless function.

#ifndef CHAINTAG_MODELS_CHAIN_MODEL_TESTING_H_
#define CHAINTAG_MODELS_CHAIN_MODEL_TESTING_H_

#include <random>
#include <utility>
#include <vector>

#include "features/bucket_rows.h"
#include "gtest/gtest.h"
#include "models/chain_model.h"

namespace chaintag {
namespace chain_testing {

inline ChainModel RandomWordChunker(uint32_t seed) {
  constexpr int kBuckets = 64;
  ModelFile header;
  for (const char* label : {"O", "B-NP", "I-NP"}) header.add_labels(label);
  FeatureConfig* features = header.mutable_features();
  features->set_num_buckets(kBuckets);
  features->add_templates()->add_parts()->set_attribute(0);
  ConllFormat* format = header.mutable_input_format();
  format->add_attribute_columns(0);
  format->set_label_column(1);
  format->set_tag_scheme(IOB2);
  format->set_allow_missing_label(true);
  header.set_input_num_columns(2);
  header.set_train_scheme(IOB2);
  header.set_output_scheme(IOB2);
  const ChainLayout layout{3, kBuckets};
  std::vector<double> weights(layout.dim());
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0, 1);
  for (double& w : weights) w = normal(rng);
  absl::StatusOr<ChainModel> model =
      ChainModel::Create(header, BucketRows::Identity(kBuckets), weights);
  EXPECT_TRUE(model.ok()) << model.status();
  return std::move(*model);
}

}  // namespace chain_testing
}  // namespace chaintag

#endif  // CHAINTAG_MODELS_CHAIN_MODEL_TESTING_H_
