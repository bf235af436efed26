#include "features/part_values.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace chaintag {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

// The transformed value, appended after "|" to check it only appends;
// "dropped" when a boolean transform is false (and then nothing appended).
std::string Transformed(absl::string_view s, TemplatePart::Transform transform,
                        int k = 0, const std::string& pattern = "") {
  RE2 re2(pattern);
  std::string out = "|";
  if (!AppendTransformed(s, transform, k, &re2, &out)) {
    return out == "|" ? "dropped" : "dropped but appended " + out;
  }
  EXPECT_EQ(out[0], '|');
  return out.substr(1);
}

TEST(PartValuesTest, IdentityAndLowercase) {
  EXPECT_EQ(Transformed("AbC-9", TemplatePart::IDENTITY), "AbC-9");
  // Only ASCII letters change: É (C3 89) stays.
  EXPECT_EQ(Transformed("\xC3\x89t\xC3\x89 ABC", TemplatePart::LOWERCASE),
            "\xC3\x89t\xC3\x89 abc");
}

TEST(PartValuesTest, PrefixAndSuffixCountCodePoints) {
  // "héllo": h, é (2 bytes), l, l, o.
  EXPECT_EQ(PrefixBytes("h\xC3\xA9llo", 2), 3u);
  EXPECT_EQ(Transformed("h\xC3\xA9llo", TemplatePart::PREFIX, 2), "h\xC3\xA9");
  EXPECT_EQ(Transformed("h\xC3\xA9llo", TemplatePart::PREFIX, 1), "h");
  EXPECT_EQ(Transformed("ab", TemplatePart::PREFIX, 10), "ab");
  // "café": the last two code points are f and é.
  EXPECT_EQ(SuffixStart("caf\xC3\xA9", 2), 2u);
  EXPECT_EQ(Transformed("caf\xC3\xA9", TemplatePart::SUFFIX, 2), "f\xC3\xA9");
  EXPECT_EQ(Transformed("caf\xC3\xA9", TemplatePart::SUFFIX, 1), "\xC3\xA9");
  // 日本 (3 bytes each): one code point is three bytes.
  EXPECT_EQ(Transformed("\xE6\x97\xA5\xE6\x9C\xAC", TemplatePart::SUFFIX, 1),
            "\xE6\x9C\xAC");
  EXPECT_EQ(Transformed("\xE6\x97\xA5\xE6\x9C\xAC", TemplatePart::PREFIX, 1),
            "\xE6\x97\xA5");
  EXPECT_EQ(SuffixStart("ab", 5), 0u);
}

TEST(PartValuesTest, Shape) {
  EXPECT_EQ(ShapeOf('Q'), 'A');
  EXPECT_EQ(ShapeOf('q'), 'a');
  EXPECT_EQ(ShapeOf('7'), '0');
  EXPECT_EQ(ShapeOf('-'), '-');
  EXPECT_EQ(Transformed("Ab-3\xC3\xA9", TemplatePart::SHAPE), "Aa-0\xC3\xA9");
}

TEST(PartValuesTest, ShortShapeCollapsesRunsOfCodePoints) {
  EXPECT_EQ(Transformed("Hello99", TemplatePart::SHORT_SHAPE), "Aa0");
  EXPECT_EQ(Transformed("XXyy--Z", TemplatePart::SHORT_SHAPE), "Aa-A");
  // éé then x: the two é are one run.
  EXPECT_EQ(Transformed("\xC3\xA9\xC3\xA9x", TemplatePart::SHORT_SHAPE),
            "\xC3\xA9"
            "a");
  // ₂ is E2 82 82: its equal continuation bytes are not a run, two ₂ are.
  EXPECT_EQ(Transformed("\xE2\x82\x82\xE2\x82\x82", TemplatePart::SHORT_SHAPE),
            "\xE2\x82\x82");
  // Different multi-byte code points of one length are two runs.
  EXPECT_EQ(Transformed("\xC3\xA9\xC3\xA8", TemplatePart::SHORT_SHAPE),
            "\xC3\xA9\xC3\xA8");
}

TEST(PartValuesTest, BooleansGiveOneOrDrop) {
  EXPECT_EQ(Transformed("Paris", TemplatePart::IS_CAPITALIZED), "1");
  EXPECT_EQ(Transformed("paris", TemplatePart::IS_CAPITALIZED), "dropped");
  EXPECT_EQ(Transformed("", TemplatePart::IS_CAPITALIZED), "dropped");
  EXPECT_EQ(Transformed("a1", TemplatePart::HAS_DIGIT), "1");
  EXPECT_EQ(Transformed("ab", TemplatePart::HAS_DIGIT), "dropped");
  EXPECT_EQ(Transformed("USA", TemplatePart::ALL_CAPS), "1");
  EXPECT_EQ(Transformed("U.S.", TemplatePart::ALL_CAPS), "1");
  EXPECT_EQ(Transformed("USa", TemplatePart::ALL_CAPS), "dropped");
  EXPECT_EQ(Transformed("123", TemplatePart::ALL_CAPS), "dropped");
  EXPECT_EQ(Transformed("a-b", TemplatePart::HAS_HYPHEN), "1");
  EXPECT_EQ(Transformed("ab", TemplatePart::HAS_HYPHEN), "dropped");
  EXPECT_EQ(Transformed("x42", TemplatePart::MATCHES, 0, "[0-9]+$"), "1");
  EXPECT_EQ(Transformed("42x", TemplatePart::MATCHES, 0, "[0-9]+$"), "dropped");
}

TEST(PartValuesTest, RegexTestAndMatch) {
  EXPECT_EQ(Transformed("abc", TemplatePart::REGEX_TEST, 0, "b"), "true");
  EXPECT_EQ(Transformed("xyz", TemplatePart::REGEX_TEST, 0, "b"), "false");
  EXPECT_EQ(Transformed("ab123c45", TemplatePart::REGEX_MATCH, 0, "[0-9]+"),
            "123");
  // No match: an empty value, which is kept.
  EXPECT_EQ(Transformed("abc", TemplatePart::REGEX_MATCH, 0, "[0-9]+"), "");
  EXPECT_TRUE(HasPattern(TemplatePart::MATCHES));
  EXPECT_TRUE(HasPattern(TemplatePart::REGEX_TEST));
  EXPECT_TRUE(HasPattern(TemplatePart::REGEX_MATCH));
  EXPECT_FALSE(HasPattern(TemplatePart::PREFIX));
}

TEST(PartValuesTest, NgramSpans) {
  std::vector<std::pair<uint32_t, int32_t>> spans;
  AppendNgramSpans("<ab>", 0, 4, 2, &spans);
  EXPECT_THAT(spans, ElementsAre(Pair(0u, 2), Pair(1u, 2), Pair(2u, 2)));
  // "zz" before the range, which is "<é>" (é two bytes): bigrams "<é" and
  // "é>", 3 bytes each.
  spans.clear();
  AppendNgramSpans("zz<\xC3\xA9>", 2, 6, 2, &spans);
  EXPECT_THAT(spans, ElementsAre(Pair(2u, 3), Pair(3u, 3)));
  // Shorter than k: the whole range, appended after what was there.
  AppendNgramSpans("<a>", 0, 3, 5, &spans);
  EXPECT_THAT(spans, ElementsAre(Pair(2u, 3), Pair(3u, 3), Pair(0u, 3)));
  // Unigrams of "<é>": three code points.
  spans.clear();
  AppendNgramSpans("<\xC3\xA9>", 0, 4, 1, &spans);
  EXPECT_THAT(spans, ElementsAre(Pair(0u, 1), Pair(1u, 2), Pair(3u, 1)));
}

TEST(PartValuesTest, BoundaryMarkers) {
  FeatureConfig config;
  EXPECT_EQ(BoundaryMarker(config, -1), "__BOS__");
  EXPECT_EQ(BoundaryMarker(config, -7), "__BOS__");
  EXPECT_EQ(BoundaryMarker(config, 3), "__EOS__");
  config.set_bos("<s>");
  config.set_eos("</s>");
  EXPECT_EQ(BoundaryMarker(config, -2), "<s>");
  EXPECT_EQ(BoundaryMarker(config, 1), "</s>");

  config.set_boundary_markers(FeatureConfig::NUMBERED);
  EXPECT_EQ(BoundaryMarker(config, -1), "_B-1");
  EXPECT_EQ(BoundaryMarker(config, -12), "_B-12");
  EXPECT_EQ(BoundaryMarker(config, 1), "_B+1");
  EXPECT_EQ(BoundaryMarker(config, 7), "_B+7");

  config.set_boundary_markers(FeatureConfig::WAPITI);
  EXPECT_EQ(BoundaryMarker(config, -1), "_x-1");
  EXPECT_EQ(BoundaryMarker(config, -4), "_x-4");
  EXPECT_EQ(BoundaryMarker(config, -5), "_x-#");
  EXPECT_EQ(BoundaryMarker(config, 4), "_x+4");
  EXPECT_EQ(BoundaryMarker(config, 5), "_x+#");
}

TEST(PartValuesTest, PartMarkersTransformOnlyForWapitiRegexes) {
  FeatureConfig config;
  config.set_boundary_markers(FeatureConfig::WAPITI);
  const RE2 digits("[0-9]");
  const RE2 hash("#");
  EXPECT_EQ(PartMarker(config, -2, TemplatePart::REGEX_MATCH, &digits), "2");
  EXPECT_EQ(PartMarker(config, 9, TemplatePart::REGEX_TEST, &hash), "true");
  EXPECT_EQ(PartMarker(config, 1, TemplatePart::REGEX_TEST, &hash), "false");
  EXPECT_EQ(PartMarker(config, -1, TemplatePart::PREFIX, nullptr), "_x-1");
  EXPECT_EQ(PartMarker(config, 2, TemplatePart::MATCHES, &hash), "_x+2");
  config.set_boundary_markers(FeatureConfig::FIXED);
  EXPECT_EQ(PartMarker(config, -1, TemplatePart::LOWERCASE, nullptr),
            "__BOS__");
  EXPECT_EQ(PartMarker(config, 1, TemplatePart::SHAPE, nullptr), "__EOS__");
}

}  // namespace
}  // namespace chaintag
