#include "features/feature_stats.h"

#include <xxhash.h>

#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "base/thread_communicator.h"
#include "corpora/sentence.h"
#include "features/feature_config.pb.h"
#include "features/feature_extractor.h"
#include "gtest/gtest.h"

namespace chaintag {
namespace {

Sentence Words(const std::vector<std::string>& words) {
  Sentence s;
  s.num_attributes = 1;
  s.attributes = words;
  return s;
}

// w[0] plus a HAS_DIGIT feature, and the bias.
FeatureExtractor MakeExtractor(uint64_t num_buckets) {
  FeatureConfig config;
  config.set_num_buckets(num_buckets);
  config.add_templates()->add_parts()->set_attribute(0);
  TemplatePart* digit = config.add_templates()->add_parts();
  digit->set_attribute(0);
  digit->set_transform(TemplatePart::HAS_DIGIT);
  absl::StatusOr<FeatureExtractor> fx = FeatureExtractor::Create(config);
  EXPECT_TRUE(fx.ok()) << fx.status();
  return *std::move(fx);
}

// {a, b, a}, {b, 7}: attributes w=a, w=b, w=7, digit=1, bias = 5;
// occurrences 5 (w) + 1 (digit) + 5 (bias) = 11.
const std::vector<Sentence>& Corpus() {
  static const auto* corpus =
      new std::vector<Sentence>{Words({"a", "b", "a"}), Words({"b", "7"})};
  return *corpus;
}

TEST(FeatureStatsTest, OneBucketCollidesEverything) {
  absl::StatusOr<FeatureStats> stats =
      ComputeFeatureStats(MakeExtractor(1), Corpus());
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->distinct_attributes, 5);
  EXPECT_EQ(stats->distinct_buckets, 1);
  EXPECT_EQ(stats->occurrences, 11);
  EXPECT_DOUBLE_EQ(stats->collision_rate, 1.0 - 1.0 / 5.0);
}

TEST(FeatureStatsTest, ManyBucketsCollideNothing) {
  absl::StatusOr<FeatureStats> stats =
      ComputeFeatureStats(MakeExtractor(uint64_t{1} << 32), Corpus());
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->distinct_attributes, 5);
  EXPECT_EQ(stats->distinct_buckets, 5);
  EXPECT_EQ(stats->occurrences, 11);
  EXPECT_DOUBLE_EQ(stats->collision_rate, 0.0);
}

TEST(FeatureStatsTest, ThreeBucketsMatchHandReduction) {
  // The five attribute hashes in the documented layout, reduced by hand.
  auto hash = [](uint32_t j, const std::string& part) {
    std::string bytes = {static_cast<char>(j & 0xFF),
                         static_cast<char>((j >> 8) & 0xFF),
                         static_cast<char>((j >> 16) & 0xFF),
                         static_cast<char>((j >> 24) & 0xFF)};
    if (j != kBiasTemplateId) bytes += part + "\x1f";
    return XXH3_64bits_withSeed(bytes.data(), bytes.size(), 0);
  };
  absl::flat_hash_set<uint64_t> buckets;
  for (uint64_t h : {hash(0, "a"), hash(0, "b"), hash(0, "7"), hash(1, "1"),
                     hash(kBiasTemplateId, "")}) {
    buckets.insert(h % 3);
  }
  absl::StatusOr<FeatureStats> stats =
      ComputeFeatureStats(MakeExtractor(3), Corpus());
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->distinct_attributes, 5);
  EXPECT_EQ(stats->distinct_buckets, static_cast<int64_t>(buckets.size()));
  EXPECT_LE(stats->distinct_buckets, 3);
  EXPECT_DOUBLE_EQ(stats->collision_rate,
                   1.0 - static_cast<double>(buckets.size()) / 5.0);
}

TEST(FeatureStatsTest, EmptyCorpusAndErrors) {
  absl::StatusOr<FeatureStats> empty =
      ComputeFeatureStats(MakeExtractor(8), {});
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->distinct_attributes, 0);
  EXPECT_EQ(empty->distinct_buckets, 0);
  EXPECT_EQ(empty->occurrences, 0);
  EXPECT_EQ(empty->collision_rate, 0.0);

  FeatureConfig config;
  config.add_templates()->add_parts()->set_attribute(1);
  absl::StatusOr<FeatureExtractor> fx = FeatureExtractor::Create(config);
  ASSERT_TRUE(fx.ok());
  EXPECT_FALSE(ComputeFeatureStats(*fx, Corpus()).ok());
  EXPECT_FALSE(ComputeFeatureStats(*fx, Corpus(), 2).ok());
}

// 23 sentences of seven distinct first words: w=w0..w6, w=x, w=1, digit=1
// (w0..w6 and 1 have digits) and the bias; per sentence 3 + 2 + 3
// occurrences.
std::vector<Sentence> TwentyThreeSentences() {
  std::vector<Sentence> corpus;
  for (int i = 0; i < 23; ++i) {
    corpus.push_back(Words({"w" + std::to_string(i % 7), "x", "1"}));
  }
  return corpus;
}

TEST(FeatureStatsTest, ThreadsCountTheSame) {
  const std::vector<Sentence> corpus = TwentyThreeSentences();
  absl::StatusOr<FeatureStats> one =
      ComputeFeatureStats(MakeExtractor(5), corpus, 1);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->distinct_attributes, 11);
  EXPECT_EQ(one->occurrences, 23 * 8);
  for (int threads : {2, 3, 30}) {
    absl::StatusOr<FeatureStats> many =
        ComputeFeatureStats(MakeExtractor(5), corpus, threads);
    ASSERT_TRUE(many.ok()) << many.status();
    EXPECT_EQ(many->distinct_attributes, one->distinct_attributes);
    EXPECT_EQ(many->distinct_buckets, one->distinct_buckets);
    EXPECT_EQ(many->occurrences, one->occurrences);
  }
}

TEST(FeatureStatsTest, AllRanksCountAsOneProcess) {
  const std::vector<Sentence> corpus = TwentyThreeSentences();
  absl::StatusOr<FeatureStats> one =
      ComputeFeatureStats(MakeExtractor(5), corpus, 1);
  ASSERT_TRUE(one.ok()) << one.status();
  for (int ranks : {1, 2, 3}) {
    ThreadHub hub(ranks);
    std::vector<absl::StatusOr<FeatureStats>> results(ranks);
    std::vector<std::thread> threads;
    for (int rank = 0; rank < ranks; ++rank) {
      threads.emplace_back([&, rank] {
        ThreadCommunicator communicator(&hub, rank);
        const BlockShard shard = ShardOf(23, rank, ranks);
        const std::vector<Sentence> mine(corpus.begin() + shard.begin,
                                         corpus.begin() + shard.end);
        results[rank] =
            FeatureStatsOfAllRanks(MakeExtractor(5), mine, 2, &communicator);
      });
    }
    for (std::thread& thread : threads) thread.join();
    for (int rank = 0; rank < ranks; ++rank) {
      ASSERT_TRUE(results[rank].ok()) << results[rank].status();
      EXPECT_EQ(results[rank]->distinct_attributes, one->distinct_attributes);
      EXPECT_EQ(results[rank]->distinct_buckets, one->distinct_buckets);
      EXPECT_EQ(results[rank]->occurrences, one->occurrences);
      EXPECT_EQ(results[rank]->collision_rate, one->collision_rate);
    }
  }
}

TEST(FeatureStatsTest, AllRanksReportARanksErrorWithoutWaiting) {
  FeatureConfig config;
  config.set_num_buckets(8);
  config.add_templates()->add_parts()->set_attribute(1);
  absl::StatusOr<FeatureExtractor> fx = FeatureExtractor::Create(config);
  ASSERT_TRUE(fx.ok());
  ThreadHub hub(2);
  std::vector<absl::Status> statuses(2);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 2; ++rank) {
    threads.emplace_back([&, rank] {
      ThreadCommunicator communicator(&hub, rank);
      // Rank 1's sentences lack attribute 1; rank 0 has none at all.
      const std::vector<Sentence> mine =
          rank == 1 ? Corpus() : std::vector<Sentence>();
      statuses[rank] =
          FeatureStatsOfAllRanks(*fx, mine, 1, &communicator).status();
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_FALSE(statuses[0].ok());
  EXPECT_FALSE(statuses[1].ok());
  EXPECT_NE(statuses[0].message().find("rank 1"), std::string::npos)
      << statuses[0];
}

}  // namespace
}  // namespace chaintag
