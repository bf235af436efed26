#include "features/training_keys.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/parallel.h"
#include "xxhash.h"

namespace chaintag {
namespace {

// The check FeatureKeySet keeps beside a key: XXH3 of the feature's bytes
// with a seed other than the key's (its complement), so that for listed
// attributes, whose key is XXH3 of the same bytes, it is another hash.
uint64_t KeyCheck(absl::string_view key, uint64_t hash_seed) {
  return XXH3_64bits_withSeed(key.data(), key.size(), ~hash_seed);
}

// The error for two features that share `key`: their names, from a second
// pass over the sentences (only ever run to report it).
absl::Status CollisionError(const FeatureExtractor& extractor,
                            absl::Span<const Sentence* const> sentences,
                            uint64_t key) {
  const uint64_t seed = extractor.config().hash_seed();
  std::vector<std::pair<uint64_t, std::string>> found;  // check, name
  for (const Sentence* sentence : sentences) {
    if (found.size() >= 2) break;
    absl::Status status = extractor.ForEachKey(
        *sentence, [&](uint64_t hash, absl::string_view bytes) {
          if (hash != key || found.size() >= 2) return;
          const uint64_t check = KeyCheck(bytes, seed);
          if (!found.empty() && found[0].first == check) return;
          found.emplace_back(check, extractor.NameOfKey(bytes));
        });
    if (!status.ok()) return status;
  }
  const std::string which =
      found.size() == 2 ? absl::StrCat("the features '", found[0].second,
                                       "' and '", found[1].second, "'")
                        : std::string("two features");
  return absl::InvalidArgumentError(absl::StrFormat(
      "features.exact: %s have the same 64-bit key %016x, so they would share "
      "a weight row: train with another features.hash_seed",
      which, key));
}

}  // namespace

absl::StatusOr<std::shared_ptr<const FeatureKeys>> CollectTrainingKeys(
    const FeatureExtractor& extractor,
    absl::Span<const Sentence* const> sentences, int num_threads) {
  if (!extractor.exact()) {
    return absl::InvalidArgumentError(
        "CollectTrainingKeys: the features are hashed, not exact");
  }
  const uint64_t seed = extractor.config().hash_seed();
  const int64_t n = static_cast<int64_t>(sentences.size());
  const int parts =
      static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(num_threads, n)));
  std::vector<FeatureKeySet> sets(parts);
  std::vector<absl::Status> errors(parts);
  ParallelFor(parts, parts, [&](int first, int last) {
    for (int part = first; part < last; ++part) {
      for (int64_t i = SplitPoint(n, part, parts);
           i < SplitPoint(n, part + 1, parts) && errors[part].ok(); ++i) {
        errors[part] = extractor.ForEachKey(
            *sentences[i], [&](uint64_t hash, absl::string_view bytes) {
              sets[part].Add(hash, KeyCheck(bytes, seed));
            });
      }
    }
  });
  // In sentence order: the first failure is the first sentence's.
  for (const absl::Status& error : errors) {
    if (!error.ok()) return error;
  }
  for (int part = 1; part < parts; ++part) {
    sets[0].Merge(sets[part]);
    sets[part] = FeatureKeySet();
  }
  if (sets[0].collision().has_value()) {
    return CollisionError(extractor, sentences, *sets[0].collision());
  }
  absl::StatusOr<FeatureKeys> keys =
      FeatureKeys::FromSorted(sets[0].SortedKeys());
  if (!keys.ok()) return keys.status();
  return std::make_shared<const FeatureKeys>(*std::move(keys));
}

}  // namespace chaintag
