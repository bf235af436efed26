#include "features/part_values.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace chaintag {

size_t PrefixBytes(absl::string_view s, int k) {
  size_t i = 0;
  int n = 0;
  for (; i < s.size(); ++i) {
    if (!IsContinuationByte(s[i])) {
      if (n == k) break;
      ++n;
    }
  }
  return i;
}

size_t SuffixStart(absl::string_view s, int k) {
  size_t i = s.size();
  int n = 0;
  while (i > 0 && n < k) {
    --i;
    if (!IsContinuationByte(s[i])) ++n;
  }
  return i;
}

// Runs are collapsed per code point, never per byte, so that a multi-byte
// character with two equal continuation bytes stays intact.
void AppendShortShape(absl::string_view s, std::string* out) {
  size_t last_len = 0;  // bytes of the last code point appended
  for (size_t i = 0; i < s.size();) {
    size_t j = i + 1;
    while (j < s.size() && IsContinuationByte(s[j])) ++j;
    const size_t len = j - i;
    if (len == 1) {
      const char c = ShapeOf(s[i]);
      if (last_len != 1 || out->back() != c) out->push_back(c);
    } else if (last_len != len ||
               out->compare(out->size() - len, len, s.data() + i, len) != 0) {
      out->append(s.data() + i, len);
    }
    last_len = len;
    i = j;
  }
}

void AppendNgramSpans(const std::string& text, size_t begin, size_t end, int k,
                      std::vector<std::pair<uint32_t, int32_t>>* out) {
  // Start of the code point that begins each n-gram, then of the one after
  // the n-gram: a sliding window over code point starts.
  size_t first = begin;  // start of the n-gram
  size_t last = begin;   // end of the n-gram
  int n = 0;
  while (last < end && n < k) {
    ++last;
    while (last < end && IsContinuationByte(text[last])) ++last;
    ++n;
  }
  out->emplace_back(static_cast<uint32_t>(first),
                    static_cast<int32_t>(last - first));
  while (last < end) {
    ++first;
    while (IsContinuationByte(text[first])) ++first;
    ++last;
    while (last < end && IsContinuationByte(text[last])) ++last;
    out->emplace_back(static_cast<uint32_t>(first),
                      static_cast<int32_t>(last - first));
  }
}

bool AppendTransformed(absl::string_view s, TemplatePart::Transform transform,
                       int k, const RE2* pattern, std::string* out) {
  switch (transform) {
    case TemplatePart::IDENTITY:
      out->append(s.data(), s.size());
      return true;
    case TemplatePart::LOWERCASE:
      for (char c : s) out->push_back(IsUpper(c) ? c - 'A' + 'a' : c);
      return true;
    case TemplatePart::PREFIX:
      out->append(s.data(), PrefixBytes(s, k));
      return true;
    case TemplatePart::SUFFIX: {
      const size_t start = SuffixStart(s, k);
      out->append(s.data() + start, s.size() - start);
      return true;
    }
    case TemplatePart::SHAPE:
      for (char c : s) out->push_back(ShapeOf(c));
      return true;
    case TemplatePart::SHORT_SHAPE:
      AppendShortShape(s, out);
      return true;
    case TemplatePart::REGEX_TEST:
      out->append(
          RE2::PartialMatch(re2::StringPiece(s.data(), s.size()), *pattern)
              ? "true"
              : "false");
      return true;
    case TemplatePart::REGEX_MATCH: {
      re2::StringPiece match;
      if (pattern->Match(re2::StringPiece(s.data(), s.size()), 0, s.size(),
                         RE2::UNANCHORED, &match, 1)) {
        out->append(match.data(), match.size());
      }
      return true;
    }
    default:
      break;
  }
  bool result = false;
  switch (transform) {
    case TemplatePart::IS_CAPITALIZED:
      result = !s.empty() && IsUpper(s[0]);
      break;
    case TemplatePart::HAS_DIGIT:
      result = std::any_of(s.begin(), s.end(), IsDigit);
      break;
    case TemplatePart::ALL_CAPS:
      result = std::any_of(s.begin(), s.end(), IsUpper) &&
               std::none_of(s.begin(), s.end(), IsLower);
      break;
    case TemplatePart::HAS_HYPHEN:
      result = s.find('-') != absl::string_view::npos;
      break;
    case TemplatePart::MATCHES:
      result =
          RE2::PartialMatch(re2::StringPiece(s.data(), s.size()), *pattern);
      break;
    default:
      break;
  }
  if (result) out->push_back('1');
  return result;
}

std::string BoundaryMarker(const FeatureConfig& config, int distance) {
  switch (config.boundary_markers()) {
    case FeatureConfig::NUMBERED:
      return distance < 0 ? absl::StrCat("_B", distance)
                          : absl::StrCat("_B+", distance);
    case FeatureConfig::WAPITI:
      if (distance < -4) return "_x-#";
      if (distance > 4) return "_x+#";
      return distance < 0 ? absl::StrCat("_x", distance)
                          : absl::StrCat("_x+", distance);
    default:
      return distance < 0 ? config.bos() : config.eos();
  }
}
std::string PartMarker(const FeatureConfig& config, int distance,
                       TemplatePart::Transform transform, const RE2* pattern) {
  std::string marker = BoundaryMarker(config, distance);
  if (transform != TemplatePart::REGEX_TEST &&
      transform != TemplatePart::REGEX_MATCH) {
    return marker;
  }
  std::string transformed;
  AppendTransformed(marker, transform, 0, pattern, &transformed);
  return transformed;
}

}  // namespace chaintag
