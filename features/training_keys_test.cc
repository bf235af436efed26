// Exact features: the key table gathered from training sentences, and
// extraction through it (features/training_keys.h, FeatureConfig.exact).

#include "features/training_keys.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "corpora/sentence.h"
#include "corpora/sentence_testing.h"
#include "features/feature_extractor.h"
#include "features/feature_keys.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace chaintag {
namespace {

using sentence_testing::RowSentence;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

FeatureConfig Config(const std::string& text) {
  FeatureConfig config;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &config));
  return config;
}

// A sentence with attribute lists (unit values), as the CRFsuite reader
// builds it.
Sentence Items(const std::vector<std::vector<std::string>>& tokens) {
  Sentence s;
  s.item_begin.push_back(0);
  for (const auto& token : tokens) {
    for (const std::string& name : token) {
      s.item_names += name;
      s.item_name_ends.push_back(static_cast<int32_t>(s.item_names.size()));
    }
    s.item_begin.push_back(static_cast<int32_t>(s.item_name_ends.size()));
  }
  return s;
}

std::vector<const Sentence*> Pointers(const std::vector<Sentence>& sentences) {
  std::vector<const Sentence*> pointers;
  for (const Sentence& s : sentences) pointers.push_back(&s);
  return pointers;
}

// Every hash of the sentences, sorted and distinct.
std::vector<uint64_t> DistinctHashes(const FeatureExtractor& fx,
                                     const std::vector<Sentence>& sentences) {
  std::vector<uint64_t> all;
  for (const Sentence& s : sentences) {
    std::vector<int32_t> offsets;
    std::vector<uint64_t> hashes;
    std::vector<float> values;
    EXPECT_TRUE(fx.ExtractHashes(s, &offsets, &hashes, &values).ok());
    all.insert(all.end(), hashes.begin(), hashes.end());
  }
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  return all;
}

std::vector<Sentence> Corpus() {
  std::vector<Sentence> corpus;
  for (int i = 0; i < 40; ++i) {
    corpus.push_back(Items({{"w=the", "p=DT"},
                            {"w=" + std::to_string(i % 7), "p=NN"},
                            {"w=" + std::to_string(i % 11), "p=VB"}}));
  }
  return corpus;
}

TEST(TrainingKeysTest, TheTableIsTheSortedDistinctHashesForAnyThreadCount) {
  absl::StatusOr<FeatureExtractor> fx =
      FeatureExtractor::Create(Config("exact: true bias: false"));
  ASSERT_TRUE(fx.ok()) << fx.status();
  const std::vector<Sentence> corpus = Corpus();
  const std::vector<const Sentence*> sentences = Pointers(corpus);
  const std::vector<uint64_t> expected = DistinctHashes(*fx, corpus);
  // the, DT, NN, VB, 7 + 11 distinct words, with 0..6 shared: 3 + 1 + 11.
  EXPECT_EQ(expected.size(), 15u);
  for (int threads : {1, 2, 3, 8}) {
    absl::StatusOr<std::shared_ptr<const FeatureKeys>> keys =
        CollectTrainingKeys(*fx, sentences, threads);
    ASSERT_TRUE(keys.ok()) << keys.status();
    EXPECT_EQ((*keys)->keys(), expected) << threads << " threads";
  }
}

TEST(TrainingKeysTest, EveryKeyIsItsOwnBucketAndUnseenOnesAreDropped) {
  const std::string text = "exact: true bias: true";
  absl::StatusOr<FeatureExtractor> hashing =
      FeatureExtractor::Create(Config(text));
  ASSERT_TRUE(hashing.ok());
  const std::vector<Sentence> corpus = Corpus();
  absl::StatusOr<std::shared_ptr<const FeatureKeys>> keys =
      CollectTrainingKeys(*hashing, Pointers(corpus), 2);
  ASSERT_TRUE(keys.ok()) << keys.status();
  absl::StatusOr<FeatureExtractor> fx =
      FeatureExtractor::Create(Config(text), *keys);
  ASSERT_TRUE(fx.ok()) << fx.status();
  EXPECT_TRUE(fx->exact());
  EXPECT_EQ(fx->keys(), keys->get());
  EXPECT_EQ(fx->num_buckets(), 16u);  // 15 attributes and the bias

  // A training sentence: each feature's bucket is its key's rank.
  std::vector<int32_t> offsets;
  std::vector<uint64_t> hashes;
  std::vector<float> values;
  ASSERT_TRUE(fx->ExtractHashes(corpus[3], &offsets, &hashes, &values).ok());
  const std::vector<uint64_t>& sorted = (*keys)->keys();
  auto rank = [&sorted](uint64_t hash) {
    return static_cast<uint32_t>(
        std::lower_bound(sorted.begin(), sorted.end(), hash) - sorted.begin());
  };
  FeatureSequence seq;
  ASSERT_TRUE(fx->Extract(corpus[3], &seq).ok());
  ASSERT_EQ(seq.size(), 3);
  for (int t = 0; t < 3; ++t) {
    std::vector<uint32_t> expected;
    for (int32_t k = offsets[t]; k < offsets[t + 1]; ++k) {
      expected.push_back(rank(hashes[k]));
      EXPECT_EQ(fx->FindBucket(hashes[k]), rank(hashes[k]));
    }
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(std::vector<uint32_t>(seq.buckets.begin() + seq.offsets[t],
                                    seq.buckets.begin() + seq.offsets[t + 1]),
              expected)
        << "position " << t;
  }

  // Unseen attributes have no bucket: only "w=the" and the bias remain.
  const Sentence unseen = Items({{"w=the", "w=unseen", "p=XX"}});
  ASSERT_TRUE(fx->Extract(unseen, &seq).ok());
  ASSERT_EQ(seq.size(), 1);
  ASSERT_TRUE(fx->ExtractHashes(unseen, &offsets, &hashes, &values).ok());
  EXPECT_EQ(fx->FindBucket(hashes[1]), -1);
  EXPECT_EQ(fx->FindBucket(hashes[2]), -1);
  std::vector<uint32_t> kept = {rank(hashes[0]), rank(hashes[3])};
  std::sort(kept.begin(), kept.end());
  EXPECT_EQ(seq.buckets, kept);
  // ExtractRows drops them the same way, and ExtractNames names the rest.
  const BucketRows rows = BucketRows::Identity(fx->num_buckets());
  ASSERT_TRUE(fx->ExtractRows(unseen, rows, &seq).ok());
  EXPECT_THAT(seq.buckets, ElementsAre(rank(hashes[0]), rank(hashes[3])));
  // Rows for some buckets only (a training problem's, when the table holds
  // more keys): the others are dropped, the rest renumbered.
  const uint32_t the = rank(hashes[0]);
  absl::StatusOr<BucketRows> some =
      BucketRows::FromSorted({the}, fx->num_buckets());
  ASSERT_TRUE(some.ok());
  ASSERT_TRUE(fx->ExtractRows(unseen, *some, &seq).ok());
  EXPECT_THAT(seq.buckets, ElementsAre(0));
  std::vector<std::vector<NamedFeature>> named;
  ASSERT_TRUE(fx->ExtractNames(unseen, &named).ok());
  ASSERT_EQ(named.size(), 1u);
  ASSERT_EQ(named[0].size(), 2u);
  EXPECT_EQ(named[0][0].name, "w=the");
  EXPECT_EQ(named[0][0].bucket, rank(hashes[0]));
  EXPECT_EQ(named[0][1].name, "bias");
}

TEST(TrainingKeysTest, FeaturesThatHashingMergesGetRowsOfTheirOwn) {
  // One bucket holds every hashed feature; exact features stay apart.
  const std::vector<Sentence> corpus = {
      RowSentence({{"a", "x"}, {"b", "y"}, {"c", "x"}})};
  const std::string templates =
      "templates { parts { attribute: 0 } } "
      "templates { parts { attribute: 0 } parts { attribute: 1 offset: 1 } } "
      "templates { parts { attribute: 1 span: 2 } } bias: false";
  absl::StatusOr<FeatureExtractor> hashed =
      FeatureExtractor::Create(Config("num_buckets: 1 " + templates));
  ASSERT_TRUE(hashed.ok());
  FeatureSequence seq;
  ASSERT_TRUE(hashed->Extract(corpus[0], &seq).ok());
  EXPECT_THAT(seq.buckets, ElementsAre(0, 0, 0));

  const FeatureConfig exact = Config("exact: true " + templates);
  absl::StatusOr<FeatureExtractor> hashing = FeatureExtractor::Create(exact);
  ASSERT_TRUE(hashing.ok());
  absl::StatusOr<std::shared_ptr<const FeatureKeys>> keys =
      CollectTrainingKeys(*hashing, Pointers(corpus));
  ASSERT_TRUE(keys.ok()) << keys.status();
  // w: a b c; w|p[+1]: a|y b|x c|EOS; p in t..t+1: {x,y} {y,x} {x,EOS}:
  // x, y, EOS once each.
  EXPECT_EQ((*keys)->size(), 9);
  absl::StatusOr<FeatureExtractor> fx = FeatureExtractor::Create(exact, *keys);
  ASSERT_TRUE(fx.ok());
  ASSERT_TRUE(fx->Extract(corpus[0], &seq).ok());
  EXPECT_EQ(seq.num_features(0), 4);  // a, a|y, x, y
  std::vector<uint32_t> all = seq.buckets;
  std::sort(all.begin(), all.end());
  EXPECT_EQ(std::unique(all.begin(), all.end()) - all.begin(), 9);
}

TEST(TrainingKeysTest, AnExactExtractorWithoutATableOnlyHashes) {
  absl::StatusOr<FeatureExtractor> fx =
      FeatureExtractor::Create(Config("exact: true"));
  ASSERT_TRUE(fx.ok());
  EXPECT_EQ(fx->num_buckets(), 0u);
  EXPECT_EQ(fx->keys(), nullptr);
  const Sentence s = Items({{"a"}});
  std::vector<int32_t> offsets;
  std::vector<uint64_t> hashes;
  std::vector<float> values;
  EXPECT_TRUE(fx->ExtractHashes(s, &offsets, &hashes, &values).ok());
  EXPECT_EQ(fx->FindBucket(hashes[0]), -1);
  FeatureSequence seq;
  const absl::Status status = fx->Extract(s, &seq);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("needs their key table"));
  EXPECT_FALSE(fx->ExtractRows(s, BucketRows::Identity(1), &seq).ok());
  std::vector<std::vector<NamedFeature>> named;
  EXPECT_FALSE(fx->ExtractNames(s, &named).ok());
}

TEST(TrainingKeysTest, ConfigsThatCannotBeExactAreRefused) {
  // A table for hashed features, pair templates, and gathering keys of
  // hashed features.
  auto keys = std::make_shared<const FeatureKeys>();
  EXPECT_THAT(FeatureExtractor::Create(Config("num_buckets: 8"), keys)
                  .status()
                  .message(),
              HasSubstr("a key table is for exact features"));
  EXPECT_THAT(
      FeatureExtractor::Create(
          Config("exact: true pair_templates { parts { attribute: 0 } }"))
          .status()
          .message(),
      HasSubstr("exact features do not support pair_templates"));
  absl::StatusOr<FeatureExtractor> hashed =
      FeatureExtractor::Create(Config("num_buckets: 8"));
  ASSERT_TRUE(hashed.ok());
  EXPECT_FALSE(CollectTrainingKeys(*hashed, {}).ok());
}

TEST(TrainingKeysTest, ASentenceThatFailsFailsTheGathering) {
  absl::StatusOr<FeatureExtractor> fx = FeatureExtractor::Create(
      Config("exact: true templates { parts { attribute: 3 } }"));
  ASSERT_TRUE(fx.ok());
  const std::vector<Sentence> corpus = {RowSentence({{"a"}})};
  EXPECT_THAT(CollectTrainingKeys(*fx, Pointers(corpus)).status().message(),
              HasSubstr("reads attribute 3"));
}

}  // namespace
}  // namespace chaintag
