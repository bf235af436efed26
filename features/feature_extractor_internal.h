// What feature_extractor.cc and feature_extractor_setup.cc share. Nothing
// else should include it.
//
// Thread-safety: pure functions.

#ifndef CHAINTAG_FEATURES_FEATURE_EXTRACTOR_INTERNAL_H_
#define CHAINTAG_FEATURES_FEATURE_EXTRACTOR_INTERNAL_H_

#include <cstdint>

// The hash of every feature: inlined (the same XXH3 as the library's), so
// short keys skip the call through the shared library.
#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL
#endif
#include <xxhash.h>

#include "absl/strings/string_view.h"

namespace chaintag {
namespace feature_extractor_internal {

// NUMBERED markers are tabulated up to this distance from the sentence.
constexpr int64_t kMaxNumberedDistance = 1024;

// Ends each part's value in a feature's key (ForEachKey).
constexpr char kPartSeparator = '\x1f';

inline uint64_t ValueHash(absl::string_view value, uint64_t seed) {
  return XXH3_64bits_withSeed(value.data(), value.size(), seed);
}

// The key's first 4 bytes: the template index, little-endian on any host.
inline void WriteTemplateId(uint32_t id, char* key) {
  key[0] = static_cast<char>(id & 0xFF);
  key[1] = static_cast<char>((id >> 8) & 0xFF);
  key[2] = static_cast<char>((id >> 16) & 0xFF);
  key[3] = static_cast<char>((id >> 24) & 0xFF);
}

}  // namespace feature_extractor_internal
}  // namespace chaintag

#endif  // CHAINTAG_FEATURES_FEATURE_EXTRACTOR_INTERNAL_H_
