// What a template part reads: a token's value transformed as
// TemplatePart.Transform says, or the marker of a position outside the
// sentence. Transforms act on ASCII letters and digits only and count
// PREFIX / SUFFIX / NGRAMS lengths in UTF-8 code points, never splitting
// one.
//
// Thread-safety: free functions without state; safe from any thread (a
// pattern passed in is only read, which RE2 allows concurrently).

#ifndef CHAINTAG_FEATURES_PART_VALUES_H_
#define CHAINTAG_FEATURES_PART_VALUES_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "features/feature_config.pb.h"
#include "re2/re2.h"

namespace chaintag {

// Inline: the transforms call these once per byte of every value.
inline bool IsContinuationByte(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}
inline bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
inline bool IsLower(char c) { return c >= 'a' && c <= 'z'; }
inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// SHAPE of one byte: 'A', 'a' or '0' for an ASCII letter or digit, the byte
// itself otherwise.
inline char ShapeOf(char c) {
  if (IsUpper(c)) return 'A';
  if (IsLower(c)) return 'a';
  if (IsDigit(c)) return '0';
  return c;
}

// Whether the transform reads TemplatePart.pattern.
inline bool HasPattern(TemplatePart::Transform transform) {
  return transform == TemplatePart::MATCHES ||
         transform == TemplatePart::REGEX_TEST ||
         transform == TemplatePart::REGEX_MATCH;
}

// Byte length of the first k code points of s (all of s if shorter).
size_t PrefixBytes(absl::string_view s, int k);

// Start of the last k code points of s (0 if shorter).
size_t SuffixStart(absl::string_view s, int k);

// SHORT_SHAPE: the shape of s with runs of one code point collapsed.
void AppendShortShape(absl::string_view s, std::string* out);

// NGRAMS: the spans (start, length) of the k-code-point substrings of
// text[begin, end), appended to `out`; the whole range when it is shorter.
void AppendNgramSpans(const std::string& text, size_t begin, size_t end, int k,
                      std::vector<std::pair<uint32_t, int32_t>>* out);

// Appends s transformed to out; false when a boolean transform is false
// (the feature is dropped; a true one appends "1"). `k` is PREFIX's and
// SUFFIX's length, `pattern` the RE2 of MATCHES, REGEX_TEST and
// REGEX_MATCH (unused otherwise). Not for NGRAMS (multi-valued) nor CLUSTER
// (which reads the extractor's clusters).
bool AppendTransformed(absl::string_view s, TemplatePart::Transform transform,
                       int k, const RE2* pattern, std::string* out);

// The value of a part `distance` positions outside the sentence (< 0
// before it, > 0 after it), as config.boundary_markers says.
std::string BoundaryMarker(const FeatureConfig& config, int distance);

// BoundaryMarker as a part with `transform` reads it: Wapiti tests and
// matches its regular expressions on the markers too; every other transform
// leaves them as they are.
std::string PartMarker(const FeatureConfig& config, int distance,
                       TemplatePart::Transform transform, const RE2* pattern);

}  // namespace chaintag

#endif  // CHAINTAG_FEATURES_PART_VALUES_H_
