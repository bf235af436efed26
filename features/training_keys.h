// The key table of exact features (FeatureConfig.exact) from the training
// sentences: every distinct feature key they hold, sorted, so that bucket k
// (and so weight row k) is the k-th smallest key, whatever the number of
// threads that gathered them.
//
// "Exact" is checked, not assumed: beside each key the gathering keeps a
// second 64-bit hash of the feature's identifying bytes
// (FeatureExtractor::ForEachKey), and two different features with one key
// fail the run, naming both. A collision goes unnoticed only when the
// second hashes collide as well (2^-64 for the pair). Features first seen
// at tagging time have no row unless their key equals a training key, with
// probability (keys in the table) / 2^64 each.
//
// Example:
//   absl::StatusOr<FeatureExtractor> hashing = FeatureExtractor::Create(
//       config);  // config.exact() true: no table yet
//   absl::StatusOr<std::shared_ptr<const FeatureKeys>> keys =
//       CollectTrainingKeys(*hashing, sentences, num_threads);
//   if (!keys.ok()) return keys.status();  // a collision names its features
//   absl::StatusOr<FeatureExtractor> exact =
//       FeatureExtractor::Create(config, *keys);
//
// Thread-safety: a function of its arguments; it runs num_threads threads
// of its own.

#ifndef CHAINTAG_FEATURES_TRAINING_KEYS_H_
#define CHAINTAG_FEATURES_TRAINING_KEYS_H_

#include <memory>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "corpora/sentence.h"
#include "features/feature_extractor.h"
#include "features/feature_keys.h"

namespace chaintag {

// The sorted distinct keys of the features of `sentences` under `extractor`
// (exact; its own table, if it has one, is not read). Fails as
// FeatureExtractor::Extract does on the first sentence that fails, and
// with InvalidArgument naming both features and the key when two different
// features share a key. The sentences are shared among `num_threads`
// threads; the table is the same for any number.
absl::StatusOr<std::shared_ptr<const FeatureKeys>> CollectTrainingKeys(
    const FeatureExtractor& extractor,
    absl::Span<const Sentence* const> sentences, int num_threads = 1);

}  // namespace chaintag

#endif  // CHAINTAG_FEATURES_TRAINING_KEYS_H_
