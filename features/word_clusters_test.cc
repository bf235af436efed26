#include "features/word_clusters.h"

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "features/temp_files_testing.h"
#include "features/word_clusters.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace chaintag {
namespace {

using temp_files_testing::TmpPath;
using temp_files_testing::WriteText;
using ::testing::HasSubstr;

WordClusters SmallValidClusters() {
  WordClusters clusters;
  clusters.set_format_version(kWordClustersVersion);
  for (const char* bits : {"00", "01", "1"}) clusters.add_bit_string(bits);
  for (const auto& [word, cluster] : std::vector<std::pair<std::string, int>>{
           {"the", 2}, {"cat", 0}, {"dog", 0}, {"sat", 1}}) {
    clusters.add_word(word);
    clusters.add_cluster(cluster);
    clusters.add_count(5);
  }
  return clusters;
}

TEST(WordClustersValidationTest, AcceptsAFullTreeWithCountsOrWithout) {
  WordClusters clusters = SmallValidClusters();
  EXPECT_TRUE(ValidateWordClusters(clusters).ok());
  clusters.clear_count();
  EXPECT_TRUE(ValidateWordClusters(clusters).ok());
}

TEST(WordClustersValidationTest, NamesWhatIsWrong) {
  const std::vector<std::pair<std::function<void(WordClusters*)>, std::string>>
      cases = {
          {[](WordClusters* c) { c->set_format_version(7); },
           "format version 7"},
          {[](WordClusters* c) { c->clear_bit_string(); }, "no bit-strings"},
          {[](WordClusters* c) { c->set_bit_string(2, ""); }, "is empty"},
          {[](WordClusters* c) { c->set_bit_string(2, "x"); },
           "other than 0 and 1"},
          {[](WordClusters* c) { c->set_bit_string(1, "00"); }, "repeats"},
          {[](WordClusters* c) { c->set_bit_string(2, "0"); },
           "is a prefix of"},
          {[](WordClusters* c) { c->set_bit_string(0, "0"); },
           "\"0\" is a prefix of bit_string 1 \"01\""},
          {[](WordClusters* c) { c->set_bit_string(2, "10"); },
           "no bit-string starts with \"11\""},
          {[](WordClusters* c) { c->set_word(2, "cat"); },
           "word 2 \"cat\" appears twice"},
          {[](WordClusters* c) { c->set_word(0, ""); }, "word 0 is empty"},
          {[](WordClusters* c) { c->set_cluster(1, 3); },
           "has cluster 3, not in [0, 3)"},
          {[](WordClusters* c) { c->add_cluster(0); }, "4 words but 5"},
          {[](WordClusters* c) { c->set_count(3, 0); }, "has count 0"},
      };
  for (const auto& [mutate, expected] : cases) {
    WordClusters clusters = SmallValidClusters();
    mutate(&clusters);
    const absl::Status status = ValidateWordClusters(clusters);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << expected;
    EXPECT_THAT(status.message(), HasSubstr(expected));
    EXPECT_FALSE(WordClusterTable::Create(clusters).ok()) << expected;
  }
}

// Every field, the clustering's options and counts included, comes back.
TEST(WordClustersFileTest, WritesAndReadsTheSameProto) {
  WordClusters clusters = SmallValidClusters();
  clusters.set_num_clusters(3);
  clusters.set_min_count(2);
  clusters.set_source("toy");
  clusters.set_num_tokens(20);
  const std::string path = TmpPath("toy.clusters");
  ASSERT_TRUE(WriteWordClusters(clusters, path).ok());
  absl::StatusOr<WordClusters> read = ReadWordClusters(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->SerializeAsString(), clusters.SerializeAsString());
}

TEST(WordClusterTableTest, LooksUpEveryWordsBitString) {
  absl::StatusOr<WordClusterTable> table =
      WordClusterTable::Create(SmallValidClusters());
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(table->num_clusters(), 3);
  EXPECT_EQ(table->num_words(), 4);
  EXPECT_EQ(table->BitString("the"), "1");
  EXPECT_EQ(table->BitString("cat"), "00");
  EXPECT_EQ(table->BitString("dog"), "00");
  EXPECT_EQ(table->Cluster("sat"), 1);
  EXPECT_EQ(table->BitString("zebra"), "");
  EXPECT_EQ(table->Cluster("zebra"), -1);
}

TEST(WordClustersFileTest, ReadingNamesTheFile) {
  const std::string missing = TmpPath("missing.clusters");
  EXPECT_EQ(ReadWordClusters(missing).status(),
            absl::NotFoundError(missing + ": cannot open"));
  const std::string garbage = TmpPath("garbage.clusters");
  WriteText(garbage, "\xff\xff\xff");
  EXPECT_THAT(ReadWordClusters(garbage).status().message(),
              HasSubstr(garbage + ": not a WordClusters proto"));
  WordClusters bad = SmallValidClusters();
  bad.set_format_version(2);
  const std::string old = TmpPath("version.clusters");
  WriteText(old, bad.SerializeAsString());
  EXPECT_THAT(ReadWordClusters(old).status().message(),
              HasSubstr(old + ": invalid word clusters: format version 2"));
  EXPECT_FALSE(WriteWordClusters(bad, TmpPath("not_written")).ok());
}

TEST(WordClustersFileTest, PathsTextListsClustersInBitStringOrder) {
  EXPECT_EQ(WordClustersPathsText(SmallValidClusters()),
            "00\tcat\t5\n00\tdog\t5\n01\tsat\t5\n1\tthe\t5\n");
}

}  // namespace
}  // namespace chaintag
