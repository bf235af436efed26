// Random chain examples for tests: sentences with 1–3 sparse features per
// position over kBuckets buckets, some colliding across positions so that
// the Gram matrices have off-diagonal terms.
//
// Thread-safety: stateless functions.

#ifndef CHAINTAG_MODELS_CHAIN_EXAMPLES_TESTING_H_
#define CHAINTAG_MODELS_CHAIN_EXAMPLES_TESTING_H_

#include <cstdint>
#include <random>
#include <vector>

#include "models/chain_problem.h"

namespace chaintag {
namespace chain_testing {

constexpr uint64_t kBuckets = 6;

// Random sentences with 1-3 sparse features per position, some colliding
// across positions so the Gram matrices have off-diagonal terms.
// Feature values: real (the Gram matrices kept in double), small integers
// (kept as 16-bit integers) or dyadic fractions (exact in float).
enum class Values { kReal, kInteger, kDyadic };

// A feature value of the given kind.
inline float RandomValue(Values kind, std::mt19937* rng) {
  std::uniform_int_distribution<int> small(1, 3);
  std::uniform_real_distribution<float> real(0.5f, 1.5f);
  switch (kind) {
    case Values::kInteger:
      return static_cast<float>(small(*rng));
    case Values::kDyadic:
      return 0.25f * static_cast<float>(small(*rng)) + 0.5f;
    case Values::kReal:
      break;
  }
  return real(*rng);
}

inline std::vector<ChainExample> RandomExamples(int n, int num_labels,
                                                std::mt19937* rng,
                                                int max_length = 5,
                                                Values kind = Values::kReal) {
  std::uniform_int_distribution<int> length(1, max_length), count(1, 3),
      bucket(0, kBuckets - 1), label(0, num_labels - 1);
  auto value = [kind](std::mt19937& random) {
    return RandomValue(kind, &random);
  };
  std::vector<ChainExample> examples(n);
  for (ChainExample& example : examples) {
    const int T = length(*rng);
    for (int t = 0; t < T; ++t) {
      std::vector<bool> used(kBuckets, false);
      const int k = count(*rng);
      for (int j = 0; j < k; ++j) used[bucket(*rng)] = true;
      for (uint32_t b = 0; b < kBuckets; ++b) {
        if (!used[b]) continue;
        example.features.buckets.push_back(b);
        example.features.values.push_back(value(*rng));
      }
      example.features.offsets.push_back(
          static_cast<int32_t>(example.features.buckets.size()));
      example.labels.push_back(label(*rng));
    }
  }
  return examples;
}

}  // namespace chain_testing
}  // namespace chaintag

#endif  // CHAINTAG_MODELS_CHAIN_EXAMPLES_TESTING_H_
