#include "features/feature_extractor.h"

#include <xxhash.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "corpora/sentence.h"
#include "corpora/sentence_testing.h"
#include "features/bucket_rows.h"
#include "features/feature_config.pb.h"
#include "features/feature_sequence.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace chaintag {
namespace {

using sentence_testing::RowSentence;

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

FeatureConfig ParseConfig(const std::string& text) {
  FeatureConfig config;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &config))
      << text;
  return config;
}

FeatureExtractor MakeExtractor(const std::string& text) {
  absl::StatusOr<FeatureExtractor> fx =
      FeatureExtractor::Create(ParseConfig(text));
  EXPECT_TRUE(fx.ok()) << fx.status();
  return *std::move(fx);
}

// The documented hash, computed by hand: XXH3 of j as 4 bytes
// little-endian, then per part h = Fmix64(h * 0x9E3779B97F4A7C15 + XXH3 of
// the part).
uint64_t RefHash(uint32_t j, const std::vector<std::string>& parts,
                 uint64_t seed = 0) {
  std::string id;
  id.push_back(static_cast<char>(j & 0xFF));
  id.push_back(static_cast<char>((j >> 8) & 0xFF));
  id.push_back(static_cast<char>((j >> 16) & 0xFF));
  id.push_back(static_cast<char>((j >> 24) & 0xFF));
  uint64_t h = XXH3_64bits_withSeed(id.data(), id.size(), seed);
  for (const std::string& p : parts) {
    uint64_t x = h * 0x9E3779B97F4A7C15ULL +
                 XXH3_64bits_withSeed(p.data(), p.size(), seed);
    // MurmurHash3's fmix64.
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    h = x;
  }
  return h;
}

struct Hashes {
  std::vector<int32_t> offsets;
  std::vector<uint64_t> hashes;
  std::vector<float> values;
};

Hashes GetHashes(const FeatureExtractor& fx, const Sentence& s) {
  Hashes h;
  absl::Status status = fx.ExtractHashes(s, &h.offsets, &h.hashes, &h.values);
  EXPECT_TRUE(status.ok()) << status;
  return h;
}

// Hashes of position t.
std::vector<uint64_t> At(const Hashes& h, int t) {
  return std::vector<uint64_t>(h.hashes.begin() + h.offsets[t],
                               h.hashes.begin() + h.offsets[t + 1]);
}

TEST(FeatureExtractorTest, GoldenHashesPinTheLayout) {
  const std::string templates = R"pb(
    templates {
      name: "w[0]"
      parts { offset: 0 attribute: 0 }
    }
    templates {
      name: "w[-1]|w[0]"
      parts { offset: -1 attribute: 0 }
      parts { offset: 0 attribute: 0 }
    }
  )pb";
  const Sentence s = RowSentence({{"Confidence"}, {"in"}});

  const Hashes h0 = GetHashes(MakeExtractor(templates), s);
  // Pinned once from this implementation: changing them breaks every saved
  // model.
  const uint64_t kW0 = 0x84489dc1ca1b40a4ULL;
  const uint64_t kBosW0 = 0x4b1c6b4b9fb9e30cULL;
  const uint64_t kBias = 0xcd6b1c920d3f662cULL;
  EXPECT_THAT(At(h0, 0), ElementsAre(kW0, kBosW0, kBias));
  EXPECT_EQ(kW0, RefHash(0, {"Confidence"}));
  EXPECT_EQ(kBosW0, RefHash(1, {"__BOS__", "Confidence"}));
  EXPECT_EQ(kBias, RefHash(kBiasTemplateId, {}));
  EXPECT_THAT(At(h0, 1), ElementsAre(RefHash(0, {"in"}),
                                     RefHash(1, {"Confidence", "in"}), kBias));

  const Hashes h42 = GetHashes(MakeExtractor(templates + "hash_seed: 42"), s);
  const uint64_t kW0Seed42 = 0xd72f26fe2a634e03ULL;
  EXPECT_EQ(At(h42, 0)[0], kW0Seed42);
  EXPECT_EQ(kW0Seed42, RefHash(0, {"Confidence"}, 42));
  EXPECT_NE(kW0Seed42, kW0);
}

TEST(FeatureExtractorTest, BucketIsHashModuloNumBuckets) {
  FeatureExtractor fx = MakeExtractor(R"pb(
    templates { parts { attribute: 0 } }
    num_buckets: 1000
  )pb");
  const Sentence s = RowSentence({{"Confidence"}});
  FeatureSequence seq;
  ASSERT_TRUE(fx.Extract(s, &seq).ok());
  std::vector<uint32_t> expected = {
      static_cast<uint32_t>(RefHash(0, {"Confidence"}) % 1000),
      static_cast<uint32_t>(RefHash(kBiasTemplateId, {}) % 1000)};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(seq.buckets, expected);
  EXPECT_THAT(seq.values, ElementsAre(1.0f, 1.0f));

  // Power-of-two and other sizes reduce the same way.
  for (uint64_t n : {uint64_t{1}, uint64_t{2}, uint64_t{1000},
                     uint64_t{1} << 20, uint64_t{1} << 32}) {
    FeatureConfig config;
    config.set_num_buckets(n);
    absl::StatusOr<FeatureExtractor> f = FeatureExtractor::Create(config);
    ASSERT_TRUE(f.ok()) << f.status();
    for (uint64_t h : {uint64_t{0}, uint64_t{12345678901234567ULL},
                       ~uint64_t{0}, RefHash(3, {"x"})}) {
      EXPECT_EQ(f->Bucket(h), h % n) << n << " " << h;
    }
  }
}

struct TransformCase {
  TemplatePart::Transform transform;
  int k;
  std::string pattern;
  std::string input;
  bool kept;
  std::string expected;
};

TEST(FeatureExtractorTest, EveryTransform) {
  const std::vector<TransformCase> cases = {
      {TemplatePart::IDENTITY, 0, "", "Hello", true, "Hello"},
      {TemplatePart::IDENTITY, 0, "", "", true, ""},
      {TemplatePart::LOWERCASE, 0, "", "HeLLo-2\xC3\x89", true,
       "hello-2\xC3\x89"},
      {TemplatePart::PREFIX, 3, "", "Hello", true, "Hel"},
      {TemplatePart::PREFIX, 10, "", "Hi", true, "Hi"},
      // é and à are two bytes each: k counts characters.
      {TemplatePart::PREFIX, 2, "",
       "\xC3\xA9\xC3\xA0"
       "b",
       true, "\xC3\xA9\xC3\xA0"},
      {TemplatePart::SUFFIX, 3, "", "walking", true, "ing"},
      {TemplatePart::SUFFIX, 1, "", "caf\xC3\xA9", true, "\xC3\xA9"},
      {TemplatePart::SUFFIX, 5, "", "ab", true, "ab"},
      {TemplatePart::SHAPE, 0, "", "Hello-World42", true, "Aaaaa-Aaaaa00"},
      {TemplatePart::SHAPE, 0, "",
       "\xC3\xA9"
       "1",
       true,
       "\xC3\xA9"
       "0"},
      {TemplatePart::SHORT_SHAPE, 0, "", "Hello-World42", true, "Aa-Aa0"},
      {TemplatePart::SHORT_SHAPE, 0, "", "1,234.5", true, "0,0.0"},
      {TemplatePart::SHORT_SHAPE, 0, "", "U.S.", true, "A.A."},
      {TemplatePart::SHORT_SHAPE, 0, "",
       "\xC3\xA9\xC3\xA9"
       "ab",
       true,
       "\xC3\xA9"
       "a"},
      // U+0FFF is E0 BF BF: its equal continuation bytes are not a run.
      {TemplatePart::SHORT_SHAPE, 0, "", "\xE0\xBF\xBF\xE0\xBF\xBF", true,
       "\xE0\xBF\xBF"},
      {TemplatePart::IS_CAPITALIZED, 0, "", "Hello", true, "1"},
      {TemplatePart::IS_CAPITALIZED, 0, "", "hello", false, ""},
      {TemplatePart::IS_CAPITALIZED, 0, "", "1A", false, ""},
      {TemplatePart::IS_CAPITALIZED, 0, "", "", false, ""},
      {TemplatePart::HAS_DIGIT, 0, "", "a1b", true, "1"},
      {TemplatePart::HAS_DIGIT, 0, "", "abc", false, ""},
      {TemplatePart::ALL_CAPS, 0, "", "USA", true, "1"},
      {TemplatePart::ALL_CAPS, 0, "", "U.S.", true, "1"},
      {TemplatePart::ALL_CAPS, 0, "", "USa", false, ""},
      {TemplatePart::ALL_CAPS, 0, "", "123", false, ""},
      {TemplatePart::HAS_HYPHEN, 0, "", "co-op", true, "1"},
      {TemplatePart::HAS_HYPHEN, 0, "", "coop", false, ""},
      {TemplatePart::MATCHES, 0, "^[0-9]+$", "1984", true, "1"},
      {TemplatePart::MATCHES, 0, "^[0-9]+$", "19a4", false, ""},
      {TemplatePart::MATCHES, 0, "ing", "walking", true, "1"},
  };
  for (const TransformCase& c : cases) {
    SCOPED_TRACE(absl::StrCat(TemplatePart::Transform_Name(c.transform), " '",
                              c.input, "'"));
    FeatureConfig config;
    config.set_bias(false);
    config.set_num_buckets(uint64_t{1} << 32);
    TemplatePart* part = config.add_templates()->add_parts();
    part->set_attribute(1);
    part->set_transform(c.transform);
    part->set_k(c.k);
    part->set_pattern(c.pattern);
    absl::StatusOr<FeatureExtractor> fx = FeatureExtractor::Create(config);
    ASSERT_TRUE(fx.ok()) << fx.status();
    const Sentence s = RowSentence({{"other", c.input}});
    const Hashes h = GetHashes(*fx, s);
    if (c.kept) {
      EXPECT_THAT(At(h, 0), ElementsAre(RefHash(0, {c.expected})));
    } else {
      EXPECT_THAT(At(h, 0), IsEmpty());
    }
  }
}

TEST(FeatureExtractorTest, BosEosPaddingOnOneTokenSentence) {
  FeatureExtractor fx = MakeExtractor(R"pb(
    templates { parts { offset: -2 attribute: 0 } }
    templates { parts { offset: -1 attribute: 0 } }
    templates { parts { offset: 0 attribute: 0 } }
    templates { parts { offset: 1 attribute: 0 } }
    templates { parts { offset: 2 attribute: 0 } }
    bias: false
  )pb");
  const Hashes h = GetHashes(fx, RowSentence({{"x"}}));
  EXPECT_THAT(h.offsets, ElementsAre(0, 5));
  EXPECT_THAT(At(h, 0),
              ElementsAre(RefHash(0, {"__BOS__"}), RefHash(1, {"__BOS__"}),
                          RefHash(2, {"x"}), RefHash(3, {"__EOS__"}),
                          RefHash(4, {"__EOS__"})));
}

TEST(FeatureExtractorTest, PaddingOnLongerSentenceAndCustomMarkers) {
  // Markers are not transformed: LOWERCASE keeps "<S>", and a boolean
  // transform neither drops nor replaces a marker.
  FeatureExtractor fx = MakeExtractor(R"pb(
    templates { parts { offset: -2 attribute: 0 transform: LOWERCASE } }
    templates { parts { offset: 2 attribute: 0 transform: IS_CAPITALIZED } }
    bias: false
    bos: "<S>"
    eos: "</S>"
  )pb");
  const Hashes h = GetHashes(fx, RowSentence({{"A"}, {"b"}, {"C"}}));
  EXPECT_THAT(h.offsets, ElementsAre(0, 2, 4, 6));
  EXPECT_THAT(At(h, 0), ElementsAre(RefHash(0, {"<S>"}), RefHash(1, {"1"})));
  // t=1: t+2 = 3 is past the end; t-2 = -1 before the start.
  EXPECT_THAT(At(h, 1), ElementsAre(RefHash(0, {"<S>"}), RefHash(1, {"</S>"})));
  EXPECT_THAT(At(h, 2), ElementsAre(RefHash(0, {"a"}), RefHash(1, {"</S>"})));
}

TEST(FeatureExtractorTest, RegexTestAndMatchAreValuesNeverDropped) {
  FeatureExtractor fx = MakeExtractor(R"pb(
    templates { parts { attribute: 0 transform: REGEX_TEST pattern: "[0-9]" } }
    templates {
      parts { attribute: 0 transform: REGEX_MATCH pattern: "[0-9]+" }
    }
    bias: false
  )pb");
  const Hashes h = GetHashes(fx, RowSentence({{"a12b3"}, {"xyz"}}));
  EXPECT_THAT(At(h, 0), ElementsAre(RefHash(0, {"true"}), RefHash(1, {"12"})));
  EXPECT_THAT(At(h, 1), ElementsAre(RefHash(0, {"false"}), RefHash(1, {""})));
  EXPECT_THAT(FeatureExtractor::Create(ParseConfig(R"pb(
                templates {
                  name: "r"
                  parts { transform: REGEX_MATCH pattern: "(" }
                }
              )pb"))
                  .status()
                  .message(),
              HasSubstr("bad REGEX_MATCH pattern"));
}

TEST(FeatureExtractorTest, NumberedMarkersCountTheDistance) {
  // CRF++'s spelling, and Wapiti's, whose fifth and farther are "#"; a
  // span reads each distinct marker once.
  FeatureExtractor numbered = MakeExtractor(R"pb(
    templates { parts { offset: -3 attribute: 0 } }
    templates { parts { offset: 2 attribute: 0 } }
    templates { parts { offset: -2 attribute: 0 span: 3 } }
    bias: false
    boundary_markers: NUMBERED
  )pb");
  Hashes h = GetHashes(numbered, RowSentence({{"a"}, {"b"}}));
  EXPECT_THAT(At(h, 0), ElementsAre(RefHash(0, {"_B-3"}), RefHash(1, {"_B+1"}),
                                    RefHash(2, {"_B-2"}), RefHash(2, {"_B-1"}),
                                    RefHash(2, {"a"})));
  EXPECT_THAT(At(h, 1), ElementsAre(RefHash(0, {"_B-2"}), RefHash(1, {"_B+2"}),
                                    RefHash(2, {"_B-1"}), RefHash(2, {"a"}),
                                    RefHash(2, {"b"})));
  FeatureExtractor wapiti = MakeExtractor(R"pb(
    templates { parts { offset: -6 attribute: 0 span: 3 } }
    bias: false
    boundary_markers: WAPITI
  )pb");
  h = GetHashes(wapiti, RowSentence({{"a"}}));
  EXPECT_THAT(At(h, 0),
              ElementsAre(RefHash(0, {"_x-#"}), RefHash(0, {"_x-4"})));
  EXPECT_THAT(FeatureExtractor::Create(ParseConfig(R"pb(
                templates { parts { offset: -2000 } }
                boundary_markers: NUMBERED
              )pb"))
                  .status()
                  .message(),
              HasSubstr("NUMBERED"));
}

TEST(FeatureExtractorTest, NamesSpellTheLiteralsOrTheTemplateName) {
  FeatureExtractor fx = MakeExtractor(R"pb(
    templates {
      name: "U05:%x[-1,0]/%x[0,0]"
      parts { offset: -1 attribute: 0 }
      parts { offset: 0 attribute: 0 }
      literals: [ "U05:", "/", "" ]
    }
    templates {
      name: "w|p"
      parts { attribute: 0 }
      parts { attribute: 1 }
    }
    templates { parts { offset: 1 attribute: 1 } }
  )pb");
  std::vector<std::vector<NamedFeature>> names;
  ASSERT_TRUE(
      fx.ExtractNames(RowSentence({{"He", "PRP"}, {"reckons", "VBZ"}}), &names)
          .ok());
  ASSERT_EQ(names.size(), 2u);
  std::vector<std::string> second;
  for (const NamedFeature& f : names[1]) second.push_back(f.name);
  EXPECT_THAT(second, ElementsAre("U05:He/reckons", "w|p=reckons|VBZ",
                                  "#2=__EOS__", "bias"));
  EXPECT_EQ(names[1][0].bucket, fx.Bucket(RefHash(0, {"He", "reckons"})));
  EXPECT_EQ(names[1][3].bucket, fx.Bucket(RefHash(kBiasTemplateId, {})));
  EXPECT_THAT(FeatureExtractor::Create(ParseConfig(R"pb(
                templates {
                  parts { attribute: 0 }
                  literals: "only one"
                }
              )pb"))
                  .status()
                  .message(),
              HasSubstr("literals"));
}

TEST(FeatureExtractorTest, ConjunctionTemplates) {
  FeatureExtractor fx = MakeExtractor(R"pb(
    templates {
      name: "w[-1]|w[0]|pos[0]"
      parts { offset: -1 attribute: 0 }
      parts { offset: 0 attribute: 0 }
      parts { offset: 0 attribute: 1 }
    }
    templates {
      name: "suf2(w[1])|pos[1]"
      parts { offset: 1 attribute: 0 transform: SUFFIX k: 2 }
      parts { offset: 1 attribute: 1 }
    }
    bias: false
  )pb");
  const Hashes h = GetHashes(
      fx, RowSentence({{"The", "DT"}, {"dog", "NN"}, {"barks", "VBZ"}}));
  EXPECT_THAT(At(h, 0), ElementsAre(RefHash(0, {"__BOS__", "The", "DT"}),
                                    RefHash(1, {"og", "NN"})));
  EXPECT_THAT(At(h, 1), ElementsAre(RefHash(0, {"The", "dog", "NN"}),
                                    RefHash(1, {"ks", "VBZ"})));
  EXPECT_THAT(At(h, 2), ElementsAre(RefHash(0, {"dog", "barks", "VBZ"}),
                                    RefHash(1, {"__EOS__", "__EOS__"})));
  // The parts are separated, so "ab"|"c" and "a"|"bc" differ.
  EXPECT_NE(RefHash(0, {"ab", "c"}), RefHash(0, {"a", "bc"}));
}

TEST(FeatureExtractorTest, FalseBooleanDropsTheWholeConjunction) {
  FeatureExtractor fx = MakeExtractor(R"pb(
    templates {
      name: "cap(w[0])|w[-1]"
      parts { offset: 0 attribute: 0 transform: IS_CAPITALIZED }
      parts { offset: -1 attribute: 0 }
    }
    templates { parts { offset: 0 attribute: 0 transform: HAS_DIGIT } }
    bias: false
  )pb");
  const Hashes h =
      GetHashes(fx, RowSentence({{"Hello"}, {"world"}, {"B52"}, {"x"}}));
  EXPECT_THAT(h.offsets, ElementsAre(0, 1, 1, 3, 3));
  EXPECT_THAT(At(h, 0), ElementsAre(RefHash(0, {"1", "__BOS__"})));
  EXPECT_THAT(At(h, 2),
              ElementsAre(RefHash(0, {"1", "world"}), RefHash(1, {"1"})));
}

TEST(FeatureExtractorTest, CsrOffsetsAndSortedRows) {
  FeatureExtractor fx = MakeExtractor(R"pb(
    templates { parts { attribute: 0 transform: HAS_HYPHEN } }
    templates { parts { attribute: 0 } }
    templates { parts { offset: -1 attribute: 0 } }
    num_buckets: 4096
  )pb");
  const Sentence s = RowSentence({{"a-b"}, {"c"}, {"d-e"}});
  FeatureSequence seq;
  seq.buckets = {7, 7, 7};  // stale content must go
  ASSERT_TRUE(fx.Extract(s, &seq).ok());
  ASSERT_EQ(seq.size(), 3);
  // Position 1 has no hyphen feature: 3 features instead of 4 (with bias),
  // assuming no collision among the 4 (checked against the hashes below).
  const Hashes h = GetHashes(fx, s);
  EXPECT_THAT(h.offsets, ElementsAre(0, 4, 7, 11));
  for (int t = 0; t < 3; ++t) {
    std::map<uint32_t, float> expected;
    for (uint64_t hash : At(h, t)) expected[hash % 4096] += 1.0f;
    std::vector<uint32_t> buckets;
    std::vector<float> values;
    for (const auto& [b, v] : expected) {
      buckets.push_back(b);
      values.push_back(v);
    }
    EXPECT_EQ(std::vector<uint32_t>(seq.buckets.begin() + seq.offsets[t],
                                    seq.buckets.begin() + seq.offsets[t + 1]),
              buckets);
    EXPECT_EQ(std::vector<float>(seq.values.begin() + seq.offsets[t],
                                 seq.values.begin() + seq.offsets[t + 1]),
              values);
  }
  EXPECT_EQ(seq.offsets[0], 0);
  EXPECT_EQ(seq.offsets[3], static_cast<int32_t>(seq.buckets.size()));
  EXPECT_EQ(seq.buckets.size(), seq.values.size());
}

TEST(FeatureExtractorTest, CollidingBucketsAreMergedBySummingValues) {
  FeatureExtractor one = MakeExtractor(R"pb(
    templates { parts { attribute: 0 } }
    templates {
      parts { attribute: 0 transform: SHAPE }
      value: 2.5
    }
    templates {
      parts { offset: 1 attribute: 0 }
      value: -0.75
    }
    num_buckets: 1
  )pb");
  FeatureSequence seq;
  ASSERT_TRUE(one.Extract(RowSentence({{"Ab"}, {"cd"}}), &seq).ok());
  EXPECT_THAT(seq.offsets, ElementsAre(0, 1, 2));
  EXPECT_THAT(seq.buckets, ElementsAre(0, 0));
  EXPECT_THAT(seq.values, ElementsAre(3.75f, 3.75f));  // 1 + 2.5 - 0.75 + 1

  // Two buckets: group by hash parity by hand.
  FeatureConfig config = one.config();
  config.set_num_buckets(2);
  absl::StatusOr<FeatureExtractor> two = FeatureExtractor::Create(config);
  ASSERT_TRUE(two.ok());
  ASSERT_TRUE(two->Extract(RowSentence({{"Ab"}, {"cd"}}), &seq).ok());
  const std::vector<std::pair<uint64_t, float>> t0 = {
      {RefHash(0, {"Ab"}), 1.0f},
      {RefHash(1, {"Aa"}), 2.5f},
      {RefHash(2, {"cd"}), -0.75f},
      {RefHash(kBiasTemplateId, {}), 1.0f}};
  float sum[2] = {0, 0};
  for (const auto& [hash, value] : t0) sum[hash % 2] += value;
  std::vector<uint32_t> buckets;
  std::vector<float> values;
  for (uint32_t b = 0; b < 2; ++b) {
    if (sum[b] != 0) {
      buckets.push_back(b);
      values.push_back(sum[b]);
    }
  }
  EXPECT_EQ(std::vector<uint32_t>(seq.buckets.begin(),
                                  seq.buckets.begin() + seq.offsets[1]),
            buckets);
  EXPECT_EQ(std::vector<float>(seq.values.begin(),
                               seq.values.begin() + seq.offsets[1]),
            values);
}

TEST(FeatureExtractorTest, AttributeOutOfRangeNamesTheTemplate) {
  FeatureExtractor fx = MakeExtractor(R"pb(
    templates {
      name: "w[0]"
      parts { attribute: 0 }
    }
    templates {
      name: "pos[0]"
      parts { attribute: 1 }
    }
  )pb");
  EXPECT_EQ(fx.max_attribute(), 1);
  Sentence s = RowSentence({{"a"}, {"b"}});
  s.source = "train.txt";
  s.first_line = 7;
  FeatureSequence seq;
  absl::Status status = fx.Extract(s, &seq);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("train.txt:7:"));
  EXPECT_THAT(status.message(), HasSubstr("'pos[0]'"));
  EXPECT_EQ(seq.size(), 0);

  std::vector<int32_t> offsets;
  std::vector<uint64_t> hashes;
  std::vector<float> values;
  EXPECT_THAT(fx.ExtractHashes(s, &offsets, &hashes, &values).message(),
              HasSubstr("'pos[0]'"));
}

TEST(FeatureExtractorTest, CreateRejectsBadConfigs) {
  auto error = [](const std::string& text) {
    return FeatureExtractor::Create(ParseConfig(text)).status();
  };
  absl::Status bad_re = error(R"pb(
    templates {
      name: "ok"
      parts { attribute: 0 }
    }
    templates {
      name: "digits"
      parts { attribute: 0 transform: MATCHES pattern: "([0-9]" }
    }
  )pb");
  EXPECT_EQ(bad_re.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad_re.message(), HasSubstr("'digits'"));
  EXPECT_THAT(bad_re.message(), HasSubstr("([0-9]"));

  EXPECT_THAT(
      error("templates { name: \"p\" parts { transform: PREFIX } }").message(),
      HasSubstr("'p'"));
  EXPECT_THAT(
      error("templates { parts { transform: SUFFIX k: -1 } }").message(),
      HasSubstr("k > 0"));
  EXPECT_THAT(
      error("templates { name: \"neg\" parts { attribute: -1 } }").message(),
      HasSubstr("'neg'"));
  EXPECT_THAT(error("templates { value: inf }").message(), HasSubstr("finite"));
  EXPECT_THAT(error("num_buckets: 0").message(), HasSubstr("num_buckets"));
  EXPECT_THAT(error("num_buckets: 4294967297").message(),
              HasSubstr("num_buckets"));
  EXPECT_TRUE(error("num_buckets: 4294967296").ok());
}

TEST(FeatureExtractorTest, AccessorsAndMove) {
  FeatureExtractor fx = MakeExtractor(R"pb(
    templates { parts { attribute: 2 transform: MATCHES pattern: "^a" } }
    num_buckets: 64
  )pb");
  EXPECT_EQ(fx.num_buckets(), 64u);
  EXPECT_EQ(fx.max_attribute(), 2);
  EXPECT_EQ(fx.config().num_buckets(), 64u);
  EXPECT_EQ(fx.TemplateName(0), "#0");

  FeatureExtractor moved = std::move(fx);
  const Hashes h = GetHashes(moved, RowSentence({{"x", "y", "ab"}}));
  EXPECT_THAT(At(h, 0),
              ElementsAre(RefHash(0, {"1"}), RefHash(kBiasTemplateId, {})));

  EXPECT_EQ(MakeExtractor("").max_attribute(), -1);
}

TEST(FeatureExtractorTest, EmptySentence) {
  FeatureExtractor fx = MakeExtractor("templates { parts { attribute: 3 } }");
  FeatureSequence seq;
  ASSERT_TRUE(fx.Extract(Sentence(), &seq).ok());
  EXPECT_EQ(seq.size(), 0);
  EXPECT_THAT(seq.offsets, ElementsAre(0));
}

TEST(FeatureExtractorTest, ConcurrentExtractMatchesSerial) {
  FeatureExtractor fx = MakeExtractor(R"pb(
    templates { parts { offset: -1 attribute: 0 transform: LOWERCASE } }
    templates { parts { attribute: 0 transform: SUFFIX k: 3 } }
    templates { parts { attribute: 0 transform: MATCHES pattern: "[0-9]" } }
    num_buckets: 100
  )pb");
  std::vector<Sentence> sentences;
  for (int i = 0; i < 50; ++i) {
    std::vector<std::vector<std::string>> tokens;
    for (int t = 0; t <= i % 7; ++t) {
      tokens.push_back({absl::StrCat("Tok", i * 31 + t * 7)});
    }
    sentences.push_back(RowSentence(tokens));
  }
  std::vector<FeatureSequence> serial(sentences.size());
  for (size_t i = 0; i < sentences.size(); ++i) {
    ASSERT_TRUE(fx.Extract(sentences[i], &serial[i]).ok());
  }
  std::vector<FeatureSequence> parallel[2];
  std::vector<std::thread> threads;
  for (int k = 0; k < 2; ++k) {
    parallel[k].resize(sentences.size());
    threads.emplace_back([&, k] {
      for (int rep = 0; rep < 20; ++rep) {
        for (size_t i = 0; i < sentences.size(); ++i) {
          ASSERT_TRUE(fx.Extract(sentences[i], &parallel[k][i]).ok());
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int k = 0; k < 2; ++k) {
    for (size_t i = 0; i < sentences.size(); ++i) {
      EXPECT_EQ(parallel[k][i].offsets, serial[i].offsets);
      EXPECT_EQ(parallel[k][i].buckets, serial[i].buckets);
      EXPECT_EQ(parallel[k][i].values, serial[i].values);
    }
  }
}

TEST(FeatureExtractorTest, NgramsGiveEverySubstringOfThePaddedValue) {
  FeatureExtractor fx = MakeExtractor(R"pb(
    templates { parts { attribute: 0 transform: NGRAMS k: 3 } }
    templates { parts { attribute: 0 transform: NGRAMS k: 5 } }
    bias: false
  )pb");
  const Hashes h = GetHashes(fx, RowSentence({{"Japan"}, {"a"}}));
  EXPECT_THAT(At(h, 0),
              ElementsAre(RefHash(0, {"<Ja"}), RefHash(0, {"Jap"}),
                          RefHash(0, {"apa"}), RefHash(0, {"pan"}),
                          RefHash(0, {"an>"}), RefHash(1, {"<Japa"}),
                          RefHash(1, {"Japan"}), RefHash(1, {"apan>"})));
  // Shorter than k: the whole padded value, once.
  EXPECT_THAT(At(h, 1), ElementsAre(RefHash(0, {"<a>"}), RefHash(1, {"<a>"})));
}

TEST(FeatureExtractorTest, NgramsCountCharactersNotBytes) {
  FeatureExtractor fx = MakeExtractor(R"pb(
    templates { parts { attribute: 0 transform: NGRAMS k: 2 } }
    bias: false
  )pb");
  // é is two bytes: never split.
  const Hashes h = GetHashes(fx, RowSentence({{"\xC3\xA9t\xC3\xA9"}}));
  EXPECT_THAT(
      At(h, 0),
      ElementsAre(RefHash(0, {"<\xC3\xA9"}), RefHash(0, {"\xC3\xA9t"}),
                  RefHash(0, {"t\xC3\xA9"}), RefHash(0, {"\xC3\xA9>"})));
}

TEST(FeatureExtractorTest, RepeatedNgramsAddUp) {
  FeatureExtractor fx = MakeExtractor(R"pb(
    templates { parts { attribute: 0 transform: NGRAMS k: 3 } }
    bias: false
    num_buckets: 4294967296
  )pb");
  FeatureSequence seq;
  ASSERT_TRUE(fx.Extract(RowSentence({{"banana"}}), &seq).ok());
  // <ba ban ana nan ana na>: "ana" twice.
  ASSERT_EQ(seq.buckets.size(), 5u);
  const uint32_t ana = fx.Bucket(RefHash(0, {"ana"}));
  for (size_t i = 0; i < seq.buckets.size(); ++i) {
    EXPECT_EQ(seq.values[i], seq.buckets[i] == ana ? 2.0f : 1.0f);
  }
}

TEST(FeatureExtractorTest, SpanIsABagOfNeighbours) {
  FeatureExtractor fx = MakeExtractor(R"pb(
    templates {
      name: "lw[1..3]"
      parts { offset: 1 attribute: 0 span: 3 transform: LOWERCASE }
    }
    templates {
      name: "w[-2..-1]"
      parts { offset: -2 attribute: 0 span: 2 }
    }
    bias: false
  )pb");
  const Hashes h =
      GetHashes(fx, RowSentence({{"A"}, {"B"}, {"C"}, {"D"}, {"E"}}));
  // The positions do not enter the hash; outside positions give the
  // marker once however many there are.
  EXPECT_THAT(At(h, 0),
              ElementsAre(RefHash(0, {"b"}), RefHash(0, {"c"}),
                          RefHash(0, {"d"}), RefHash(1, {"__BOS__"})));
  EXPECT_THAT(At(h, 1), ElementsAre(RefHash(0, {"c"}), RefHash(0, {"d"}),
                                    RefHash(0, {"e"}), RefHash(1, {"__BOS__"}),
                                    RefHash(1, {"A"})));
  EXPECT_THAT(At(h, 3), ElementsAre(RefHash(0, {"e"}), RefHash(0, {"__EOS__"}),
                                    RefHash(1, {"B"}), RefHash(1, {"C"})));
  EXPECT_THAT(At(h, 4), ElementsAre(RefHash(0, {"__EOS__"}), RefHash(1, {"C"}),
                                    RefHash(1, {"D"})));
  // span 1 is the plain template: the marker as is.
  const Hashes one =
      GetHashes(MakeExtractor(R"pb(
                  templates { parts { offset: 1 attribute: 0 span: 1 } }
                  bias: false
                )pb"),
                RowSentence({{"x"}}));
  EXPECT_THAT(At(one, 0), ElementsAre(RefHash(0, {"__EOS__"})));
}

TEST(FeatureExtractorTest, MultiValuedPartsCombineWithTheOthers) {
  FeatureExtractor fx = MakeExtractor(R"pb(
    templates {
      name: "ngram2[0]|w[-1..1]"
      parts { attribute: 0 transform: NGRAMS k: 2 }
      parts { offset: -1 attribute: 1 span: 3 }
    }
    templates {
      name: "cap[0]|w[1..2]"
      parts { attribute: 0 transform: IS_CAPITALIZED }
      parts { offset: 1 attribute: 1 span: 2 }
    }
    bias: false
  )pb");
  const Hashes h = GetHashes(fx, RowSentence({{"Ab", "X"}, {"c", "Y"}}));
  // Every combination, the last part fastest.
  EXPECT_THAT(
      At(h, 0),
      ElementsAre(RefHash(0, {"<A", "__BOS__"}), RefHash(0, {"<A", "X"}),
                  RefHash(0, {"<A", "Y"}), RefHash(0, {"Ab", "__BOS__"}),
                  RefHash(0, {"Ab", "X"}), RefHash(0, {"Ab", "Y"}),
                  RefHash(0, {"b>", "__BOS__"}), RefHash(0, {"b>", "X"}),
                  RefHash(0, {"b>", "Y"}), RefHash(1, {"1", "Y"}),
                  RefHash(1, {"1", "__EOS__"})));
  // A false boolean part ("c" is not capitalised) drops every combination.
  EXPECT_THAT(
      At(h, 1),
      ElementsAre(RefHash(0, {"<c", "X"}), RefHash(0, {"<c", "Y"}),
                  RefHash(0, {"<c", "__EOS__"}), RefHash(0, {"c>", "X"}),
                  RefHash(0, {"c>", "Y"}), RefHash(0, {"c>", "__EOS__"})));
}

TEST(FeatureExtractorTest, LowercaseBeforeTheTransform) {
  FeatureExtractor fx = MakeExtractor(R"pb(
    templates { parts { attribute: 0 transform: SUFFIX k: 3 lowercase: true } }
    templates { parts { attribute: 0 transform: SUFFIX k: 3 } }
    templates { parts { attribute: 0 lowercase: true } }
    templates { parts { attribute: 0 transform: NGRAMS k: 4 lowercase: true } }
    templates { parts { attribute: 0 transform: ALL_CAPS lowercase: true } }
    bias: false
  )pb");
  const Hashes h = GetHashes(fx, RowSentence({{"GERMANY"}, {"Germany"}}));
  EXPECT_THAT(At(h, 0),
              ElementsAre(RefHash(0, {"any"}), RefHash(1, {"ANY"}),
                          RefHash(2, {"germany"}), RefHash(3, {"<ger"}),
                          RefHash(3, {"germ"}), RefHash(3, {"erma"}),
                          RefHash(3, {"rman"}), RefHash(3, {"many"}),
                          RefHash(3, {"any>"})));
  EXPECT_EQ(At(h, 1)[0], At(h, 0)[0]);
  EXPECT_EQ(At(h, 1)[2], At(h, 0)[2]);
}

TEST(FeatureExtractorTest, CreateRejectsBadMultiValuedParts) {
  auto error = [](const std::string& text) {
    return FeatureExtractor::Create(ParseConfig(text)).status();
  };
  EXPECT_THAT(
      error("templates { name: \"g\" parts { transform: NGRAMS } }").message(),
      HasSubstr("k > 0"));
  absl::Status span = error("templates { name: \"s\" parts { span: 0 } }");
  EXPECT_EQ(span.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(span.message(), HasSubstr("'s'"));
  EXPECT_THAT(span.message(), HasSubstr("span must be >= 1"));
}

TEST(FeatureExtractorTest, PairTemplatesHaveTheirOwnExtractor) {
  const std::string label_templates =
      "templates { parts { offset: 0 attribute: 0 } } ";
  const std::string pair_templates =
      "pair_templates { parts { offset: 0 attribute: 1 } } "
      "pair_templates { parts { offset: -1 attribute: 1 } "
      "                 parts { offset: 0 attribute: 1 } } ";
  const FeatureExtractor both =
      MakeExtractor(label_templates + pair_templates + "num_buckets: 64");
  const FeatureExtractor labels_only =
      MakeExtractor(label_templates + "num_buckets: 64");
  const FeatureExtractor pairs_alone = MakeExtractor(
      "templates { parts { offset: 0 attribute: 1 } } "
      "templates { parts { offset: -1 attribute: 1 } "
      "            parts { offset: 0 attribute: 1 } } "
      "bias: false num_buckets: 64");
  EXPECT_EQ(labels_only.pair_extractor(), nullptr);
  ASSERT_NE(both.pair_extractor(), nullptr);
  EXPECT_EQ(both.max_attribute(), 1);
  const Sentence s =
      RowSentence({{"He", "PRP"}, {"reckons", "VBZ"}, {"the", "DT"}});
  FeatureSequence label_features, expected_labels, pair_features,
      expected_pairs;
  ASSERT_TRUE(both.Extract(s, &label_features).ok());
  ASSERT_TRUE(labels_only.Extract(s, &expected_labels).ok());
  EXPECT_EQ(label_features.buckets, expected_labels.buckets);
  EXPECT_EQ(label_features.offsets, expected_labels.offsets);
  ASSERT_TRUE(both.pair_extractor()->Extract(s, &pair_features).ok());
  ASSERT_TRUE(pairs_alone.Extract(s, &expected_pairs).ok());
  EXPECT_EQ(pair_features.buckets, expected_pairs.buckets);
  EXPECT_EQ(pair_features.offsets, (std::vector<int32_t>{0, 2, 4, 6}));
  ClearFirstPosition(&pair_features);
  EXPECT_EQ(pair_features.offsets, (std::vector<int32_t>{0, 0, 2, 4}));
  EXPECT_EQ(pair_features.buckets,
            std::vector<uint32_t>(expected_pairs.buckets.begin() + 2,
                                  expected_pairs.buckets.end()));
  // A bad pair template is named as one.
  absl::StatusOr<FeatureExtractor> bad = FeatureExtractor::Create(
      ParseConfig("pair_templates { parts { offset: 0 attribute: -1 } }"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("pair templates"), std::string::npos);
}

}  // namespace
}  // namespace chaintag

namespace chaintag {
namespace {

TEST(FeatureExtractorTest, ClusterPrefixesOfTheWordsBitString) {
  // Two clusters "0" and "1" split again: "00", "01", "1".
  WordClusters clusters;
  clusters.set_format_version(kWordClustersVersion);
  for (const char* bits : {"00", "01", "1"}) clusters.add_bit_string(bits);
  for (const auto& [word, cluster] : std::vector<std::pair<std::string, int>>{
           {"Paris", 0}, {"Rome", 0}, {"said", 1}, {"the", 2}}) {
    clusters.add_word(word);
    clusters.add_cluster(cluster);
  }
  FeatureConfig config;
  config.set_bias(false);
  config.set_num_buckets(uint64_t{1} << 32);
  *config.mutable_clusters() = clusters;
  for (int k : {1, 0}) {
    TemplatePart* part = config.add_templates()->add_parts();
    part->set_transform(TemplatePart::CLUSTER);
    part->set_k(k);
  }
  absl::StatusOr<FeatureExtractor> fx = FeatureExtractor::Create(config);
  ASSERT_TRUE(fx.ok()) << fx.status();
  const Hashes h =
      GetHashes(*fx, RowSentence({{"Paris"}, {"said"}, {"Oslo"}, {"the"}}));
  EXPECT_THAT(At(h, 0), ElementsAre(RefHash(0, {"0"}), RefHash(1, {"00"})));
  EXPECT_THAT(At(h, 1), ElementsAre(RefHash(0, {"0"}), RefHash(1, {"01"})));
  EXPECT_THAT(At(h, 2), IsEmpty());  // no cluster: no feature
  EXPECT_THAT(At(h, 3), ElementsAre(RefHash(0, {"1"}), RefHash(1, {"1"})));
  // Without clusters, or with malformed ones, Create refuses.
  config.clear_clusters();
  EXPECT_FALSE(FeatureExtractor::Create(config).ok());
  *config.mutable_clusters() = clusters;
  config.mutable_clusters()->set_bit_string(2, "10");  // "1" lost its leaf
  EXPECT_FALSE(FeatureExtractor::Create(config).ok());
}

// A sentence with attribute lists, as the CRFsuite reader builds it.
Sentence MakeItemSentence(
    const std::vector<std::vector<std::pair<std::string, float>>>& tokens) {
  Sentence s;
  s.item_begin.push_back(0);
  bool unit = true;
  for (const auto& token : tokens) {
    for (const auto& [name, value] : token) {
      s.item_names += name;
      s.item_name_ends.push_back(static_cast<int32_t>(s.item_names.size()));
      s.item_values.push_back(value);
      unit = unit && value == 1.0f;
    }
    s.item_begin.push_back(static_cast<int32_t>(s.item_name_ends.size()));
  }
  if (unit) s.item_values.clear();
  return s;
}

// The documented bytes of a listed attribute: 0xFFFFFFFE little-endian,
// then the name, with no separator.
uint64_t ItemHash(const std::string& name, uint64_t seed) {
  const std::string bytes = std::string("\xFE\xFF\xFF\xFF", 4) + name;
  return XXH3_64bits_withSeed(bytes.data(), bytes.size(), seed);
}

TEST(FeatureExtractorTest, ListedAttributesAreHashedAsDocumented) {
  const FeatureExtractor fx =
      MakeExtractor("num_buckets: 1000 hash_seed: 7 bias: true");
  const std::string long_name(300, 'x');
  const Sentence s = MakeItemSentence(
      {{{"w[0]=He", 1.0f}, {"pos[0]=PRP", 2.5f}},
       {{long_name, -0.5f}, {"w[0]=He", 1.0f}, {"w[0]=He", 0.25f}},
       {}});
  ASSERT_EQ(s.size(), 3);

  std::vector<int32_t> offsets;
  std::vector<uint64_t> hashes;
  std::vector<float> values;
  ASSERT_TRUE(fx.ExtractHashes(s, &offsets, &hashes, &values).ok());
  const uint64_t bias = RefHash(kBiasTemplateId, {}, 7);
  EXPECT_THAT(offsets, ElementsAre(0, 3, 7, 8));
  EXPECT_THAT(hashes,
              ElementsAre(ItemHash("w[0]=He", 7), ItemHash("pos[0]=PRP", 7),
                          bias, ItemHash(long_name, 7), ItemHash("w[0]=He", 7),
                          ItemHash("w[0]=He", 7), bias, bias));
  EXPECT_THAT(values,
              ElementsAre(1.0f, 2.5f, 1.0f, -0.5f, 1.0f, 0.25f, 1.0f, 1.0f));

  // Extract: per position, buckets ascending, the repeated name summed.
  FeatureSequence seq;
  ASSERT_TRUE(fx.Extract(s, &seq).ok());
  auto bucket = [](uint64_t hash) {
    return static_cast<uint32_t>(hash % 1000);
  };
  std::vector<std::map<uint32_t, float>> expected(3);
  expected[0][bucket(ItemHash("w[0]=He", 7))] += 1.0f;
  expected[0][bucket(ItemHash("pos[0]=PRP", 7))] += 2.5f;
  expected[1][bucket(ItemHash(long_name, 7))] += -0.5f;
  expected[1][bucket(ItemHash("w[0]=He", 7))] += 1.25f;
  for (auto& row : expected) row[bucket(bias)] += 1.0f;
  ASSERT_EQ(seq.size(), 3);
  for (int t = 0; t < 3; ++t) {
    std::map<uint32_t, float> got;
    for (int32_t k = seq.offsets[t]; k < seq.offsets[t + 1]; ++k) {
      if (k > seq.offsets[t]) {
        EXPECT_LT(seq.buckets[k - 1], seq.buckets[k]);
      }
      got[seq.buckets[k]] = seq.values[k];
    }
    EXPECT_EQ(got, expected[t]) << "position " << t;
  }

  // ExtractRows with every bucket a row: the same features, unsorted.
  const BucketRows rows = BucketRows::Identity(1000);
  ASSERT_TRUE(fx.ExtractRows(s, rows, &seq).ok());
  ASSERT_EQ(seq.size(), 3);
  EXPECT_EQ(seq.offsets[1] - seq.offsets[0], 3);
  EXPECT_EQ(seq.buckets[1], bucket(ItemHash("pos[0]=PRP", 7)));
  EXPECT_EQ(seq.values[1], 2.5f);
  EXPECT_EQ(seq.buckets[3], bucket(ItemHash(long_name, 7)));
  EXPECT_EQ(seq.values[3], -0.5f);
}

TEST(FeatureExtractorTest, ListedAttributesOfValueZeroAreNoFeatures) {
  const FeatureExtractor fx = MakeExtractor("num_buckets: 1000 bias: false");
  Sentence s = MakeItemSentence({{{"a", 0.0f}, {"b", 2.0f}}, {{"a", 0.0f}}});
  // Interned names read the same.
  auto table = std::make_shared<ItemNameTable>();
  table->text = "ab";
  table->ends = {1, 2};
  Sentence interned = s;
  interned.item_names.clear();
  interned.item_name_ends.clear();
  interned.shared_item_names = table;
  interned.item_ids = {0, 1, 0};
  for (const Sentence* sentence : {&s, &interned}) {
    std::vector<int32_t> offsets;
    std::vector<uint64_t> hashes;
    std::vector<float> values;
    ASSERT_TRUE(fx.ExtractHashes(*sentence, &offsets, &hashes, &values).ok());
    EXPECT_THAT(offsets, ElementsAre(0, 1, 1));
    EXPECT_THAT(hashes, ElementsAre(ItemHash("b", 0)));
    EXPECT_THAT(values, ElementsAre(2.0f));
  }
}

TEST(FeatureExtractorTest, ListedAttributesAreNamedAsListed) {
  const FeatureExtractor fx = MakeExtractor("num_buckets: 1000 bias: true");
  const Sentence s = MakeItemSentence({{{"w[0]=a:b", 2.0f}}});
  std::vector<std::vector<NamedFeature>> names;
  ASSERT_TRUE(fx.ExtractNames(s, &names).ok());
  ASSERT_EQ(names.size(), 1u);
  ASSERT_EQ(names[0].size(), 2u);
  EXPECT_EQ(names[0][0].name, "w[0]=a:b");
  EXPECT_EQ(names[0][0].value, 2.0f);
  EXPECT_EQ(names[0][0].bucket, ItemHash("w[0]=a:b", 0) % 1000);
  EXPECT_EQ(names[0][1].name, "bias");
}

TEST(FeatureExtractorTest, ColumnTemplatesOnListedAttributesFail) {
  const FeatureExtractor fx = MakeExtractor(
      "num_buckets: 10 templates { name: \"w\" parts { attribute: 0 } }");
  Sentence s = MakeItemSentence({{{"a", 1.0f}}});
  s.source = "train.crfsuite";
  s.first_line = 4;
  FeatureSequence seq;
  const absl::Status status = fx.Extract(s, &seq);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("train.crfsuite:4: template 'w' (#0) reads attribute "
                        "columns, but the sentence has attribute lists"));
}

}  // namespace
}  // namespace chaintag

namespace chaintag {
namespace {

// Every derived value of a word: the per-type cache must give what the
// named path computes from the strings, through its start-overs and with
// other extractors sharing the thread.
constexpr char kDerivedTemplates[] = R"pb(
  templates { parts { attribute: 0 } }
  templates { parts { attribute: 0 lowercase: true offset: -1 } }
  templates { parts { attribute: 0 transform: PREFIX k: 3 } }
  templates { parts { attribute: 0 transform: SUFFIX k: 2 offset: 1 } }
  templates { parts { attribute: 0 transform: SHAPE } }
  templates { parts { attribute: 0 transform: SHORT_SHAPE } }
  templates { parts { attribute: 0 transform: MATCHES pattern: "[0-9]" } }
  templates { parts { attribute: 0 transform: NGRAMS k: 3 } }
  templates {
    parts { attribute: 0 transform: PREFIX k: 2 }
    parts { attribute: 1 offset: 1 }
  }
  templates { parts { attribute: 0 lowercase: true span: 3 offset: -1 } }
  num_buckets: 4294967296
)pb";

// Per position, the buckets of ExtractNames (spelled from strings) and of
// ExtractHashes (the cached path).
void ExpectNamedEqualsCached(const FeatureExtractor& fx, const Sentence& s) {
  std::vector<std::vector<NamedFeature>> named;
  ASSERT_TRUE(fx.ExtractNames(s, &named).ok());
  const Hashes h = GetHashes(fx, s);
  ASSERT_EQ(named.size(), h.offsets.size() - 1);
  for (size_t t = 0; t < named.size(); ++t) {
    std::vector<uint32_t> named_buckets, cached_buckets;
    for (const NamedFeature& f : named[t]) named_buckets.push_back(f.bucket);
    for (uint64_t hash : At(h, static_cast<int>(t))) {
      cached_buckets.push_back(fx.Bucket(hash));
    }
    ASSERT_EQ(named_buckets, cached_buckets) << "position " << t;
  }
}

TEST(FeatureExtractorTest, CachedDerivedValuesEqualTheNamedPath) {
  const FeatureExtractor fx = MakeExtractor(kDerivedTemplates);
  const FeatureExtractor seeded =
      MakeExtractor(std::string(kDerivedTemplates) + "hash_seed: 7");
  // 30,000 types, more than a cache holds, each seen twice (the second time
  // a hit unless the cache started over), in sentences of 50 that alternate
  // between the two extractors.
  std::vector<std::vector<std::string>> rows;
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 30000; ++i) {
      const std::string word =
          absl::StrCat(i % 3 == 0 ? "X" : "x", i, i % 7 == 0 ? "-É" : "");
      rows.push_back({word, i % 5 == 0 ? "NN" : "VB"});
      if (rows.size() == 50) {
        const Sentence s = RowSentence(rows);
        ExpectNamedEqualsCached((i / 50) % 2 == 0 ? fx : seeded, s);
        rows.clear();
      }
    }
  }
  // A word and its hashes after all that, against the documented hash.
  const Hashes h = GetHashes(fx, RowSentence({{"Ab1", "NN"}}));
  EXPECT_EQ(At(h, 0)[0], RefHash(0, {"Ab1"}));
  EXPECT_EQ(At(h, 0)[2], RefHash(2, {"Ab1"}));  // PREFIX 3
}

}  // namespace
}  // namespace chaintag
