// Small model files for the tests of models/: the headers and weights of a
// first-order and a second-order model over word identity (the model file
// and ChainModel tests build on the same ones), and the temporary files they
// are written to and damaged in.
//
// Thread-safety: stateless functions.

#ifndef CHAINTAG_MODELS_MODEL_FILE_TESTING_H_
#define CHAINTAG_MODELS_MODEL_FILE_TESTING_H_

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "features/bucket_rows.h"
#include "gtest/gtest.h"
#include "models/chain_layout.h"
#include "models/model_file.pb.h"
#include "models/second_order.h"
#include "models/transition_constraints.h"

namespace chaintag {
namespace chain_testing {

// The features' hash buckets; the tests give every bucket a row.
inline constexpr int kBuckets = 64;

// Every bucket as its own row: the dense layout of the tests' references.
inline const BucketRows& AllBuckets() {
  static const BucketRows* rows =
      new BucketRows(BucketRows::Identity(kBuckets));
  return *rows;
}

// `size` weights drawn from N(0, 1) with `seed`.
inline std::vector<double> NormalWeights(int64_t size, uint32_t seed) {
  std::vector<double> weights(size);
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0, 1);
  for (double& w : weights) w = normal(rng);
  return weights;
}

// First-order weights over kBuckets rows and `num_labels` labels, random
// but for every third emission row, which is zero so that the file's sparse
// storage is exercised.
inline std::vector<double> RandomWeights(int num_labels) {
  std::vector<double> weights =
      NormalWeights(ChainLayout{num_labels, kBuckets}.dim(), 1);
  for (int b = 0; b < kBuckets; b += 3) {
    for (int y = 0; y < num_labels; ++y) weights[b * num_labels + y] = 0;
  }
  return weights;
}

// The header of a small model over word identity features that trains in
// IOBES and writes IOB2.
inline ModelFile WordModelHeader(const std::vector<std::string>& labels,
                                 bool constrained_decoding = false,
                                 WeightPrecision precision = FLOAT32) {
  ModelFile header;
  if (constrained_decoding) header.set_constrained_decoding(true);
  header.set_weight_precision(precision);
  for (const std::string& label : labels) header.add_labels(label);
  FeatureConfig* features = header.mutable_features();
  features->set_num_buckets(kBuckets);
  FeatureTemplate* word = features->add_templates();
  word->set_name("w[0]");
  word->add_parts()->set_attribute(0);
  header.set_train_scheme(IOBES);
  header.set_output_scheme(IOB2);
  return header;
}

// A second-order IOB2 model over word identity, with pair features on the
// word: its labels, its header, and its structure (every trigram weighted,
// three label pairs).
inline std::vector<std::string> SecondOrderLabels() {
  return {"O", "B-NP", "I-NP", "B-VP"};
}

inline ModelFile SecondOrderHeader(WeightPrecision precision = FLOAT32) {
  ModelFile header;
  header.set_weight_precision(precision);
  for (const std::string& label : SecondOrderLabels()) header.add_labels(label);
  FeatureConfig* features = header.mutable_features();
  features->set_num_buckets(kBuckets);
  features->add_templates()->add_parts()->set_attribute(0);
  features->add_pair_templates()->add_parts()->set_attribute(0);
  header.set_train_scheme(IOB2);
  header.set_output_scheme(IOB2);
  return header;
}

inline SecondOrderStructure SecondOrderTestStructure() {
  const std::vector<std::string> labels = SecondOrderLabels();
  const int L = static_cast<int>(labels.size());
  std::vector<LabelTrigram> trigrams;
  for (int a = 0; a < L; ++a) {
    for (int b = 0; b < L; ++b) {
      for (int c = 0; c < L; ++c) trigrams.push_back({c, b, a});
    }
  }
  const std::vector<LabelPair> pairs = {{1, 2}, {0, 1}, {2, 2}};
  absl::StatusOr<SecondOrderStructure> structure = SecondOrderStructure::Create(
      L, TransitionConstraints(labels, IOB2), trigrams, pairs);
  EXPECT_TRUE(structure.ok()) << structure.status();
  return *std::move(structure);
}

inline std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
}

inline std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

inline void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

}  // namespace chain_testing
}  // namespace chaintag

#endif  // CHAINTAG_MODELS_MODEL_FILE_TESTING_H_
