#include "features/brown_clustering.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "features/bigram_counts.h"
#include "features/word_clusters.h"
#include "features/word_clusters.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace chaintag {
namespace {

using ::testing::HasSubstr;
using Sentences = std::vector<std::vector<std::string>>;

Sentences Split(const std::vector<std::string>& lines) {
  Sentences sentences;
  for (const std::string& line : lines) {
    sentences.push_back(absl::StrSplit(line, ' ', absl::SkipEmpty()));
  }
  return sentences;
}

// Sentences from a toy grammar with skewed choices, so that the ten words
// have mostly distinct counts; fixed seed, raw engine output only (the
// standard distributions differ between libraries).
Sentences ToyCorpus(int num_sentences) {
  const std::vector<std::string> determiners = {"the", "the", "the", "a"};
  const std::vector<std::string> nouns = {"dog", "dog", "cat",
                                          "man", "cat", "dog"};
  const std::vector<std::string> verbs = {"saw", "saw", "chased", "ate"};
  std::mt19937 random(20240611);
  auto pick = [&](const std::vector<std::string>& words) {
    return words[random() % words.size()];
  };
  Sentences sentences;
  for (int i = 0; i < num_sentences; ++i) {
    std::vector<std::string> sentence = {pick(determiners), pick(nouns),
                                         pick(verbs), pick(determiners),
                                         pick(nouns)};
    if (random() % 3 == 0) {
      for (const std::string& word :
           {std::string("and"), pick(determiners), pick(nouns), pick(verbs)}) {
        sentence.push_back(word);
      }
    }
    sentence.push_back(".");
    sentences.push_back(sentence);
  }
  return sentences;
}

// The text as the reference sees it: kept words by rank, their counts and
// bigrams, recomputed here from the sentences.
struct ReferenceText {
  std::vector<int64_t> counts;
  std::map<std::pair<int, int>, int64_t> bigrams;
  int64_t num_tokens = 0;
  int64_t num_bigrams = 0;
};

ReferenceText CountText(const Sentences& sentences,
                        const std::vector<std::string>& kept_words) {
  absl::flat_hash_map<std::string, int> rank;
  for (size_t r = 0; r < kept_words.size(); ++r) rank[kept_words[r]] = r;
  ReferenceText text;
  text.counts.assign(kept_words.size(), 0);
  for (const std::vector<std::string>& sentence : sentences) {
    for (size_t i = 0; i < sentence.size(); ++i) {
      const auto word = rank.find(sentence[i]);
      if (word == rank.end()) continue;
      ++text.counts[word->second];
      ++text.num_tokens;
      if (i == 0) continue;
      const auto before = rank.find(sentence[i - 1]);
      if (before == rank.end()) continue;
      ++text.bigrams[{before->second, word->second}];
      ++text.num_bigrams;
    }
  }
  return text;
}

// I = Σ p(c,c') log p(c,c') / (p(c) p(c')) over the words in `clusters`,
// straight from the definition.
double AverageMutualInformation(const ReferenceText& text,
                                const std::vector<std::vector<int>>& clusters) {
  std::vector<int> cluster_of(text.counts.size(), -1);
  std::vector<double> p(clusters.size(), 0);
  for (size_t c = 0; c < clusters.size(); ++c) {
    for (int word : clusters[c]) {
      cluster_of[word] = c;
      p[c] += static_cast<double>(text.counts[word]) / text.num_tokens;
    }
  }
  std::map<std::pair<int, int>, double> joint;
  for (const auto& [pair, count] : text.bigrams) {
    const int c = cluster_of[pair.first], d = cluster_of[pair.second];
    if (c >= 0 && d >= 0) {
      joint[{c, d}] += static_cast<double>(count) / text.num_bigrams;
    }
  }
  double information = 0;
  for (const auto& [pair, pcd] : joint) {
    information += pcd * std::log(pcd / (p[pair.first] * p[pair.second]));
  }
  return information;
}

std::vector<std::vector<int>> ClustersOf(
    const std::vector<int>& active,
    const std::vector<std::vector<int>>& members) {
  std::vector<std::vector<int>> clusters;
  for (int node : active) clusters.push_back(members[node]);
  return clusters;
}

// I before minus I after merging active[i] and active[j].
double ReferenceLoss(const ReferenceText& text, const std::vector<int>& active,
                     const std::vector<std::vector<int>>& members, size_t i,
                     size_t j) {
  std::vector<std::vector<int>> clusters = ClustersOf(active, members);
  const double before = AverageMutualInformation(text, clusters);
  clusters[i].insert(clusters[i].end(), clusters[j].begin(), clusters[j].end());
  clusters.erase(clusters.begin() + j);
  return before - AverageMutualInformation(text, clusters);
}

// Replays the merges: the words enter in rank order, and every merge must
// join two active clusters, report the loss the definition gives, and lose
// no more than any other pair would.
void CheckEveryMergeIsGreedyOptimal(const Sentences& sentences,
                                    const BrownClusteringOptions& options) {
  BigramCounts counts;
  for (const std::vector<std::string>& sentence : sentences) {
    counts.AddSentence(sentence);
  }
  absl::StatusOr<BrownHierarchy> hierarchy =
      RunBrownClustering(counts, options);
  ASSERT_TRUE(hierarchy.ok()) << hierarchy.status();
  const int num_words = static_cast<int>(hierarchy->words.size());
  const int num_clusters = hierarchy->num_clusters;
  ASSERT_EQ(hierarchy->merges.size(), static_cast<size_t>(num_words - 1));
  const ReferenceText text = CountText(sentences, hierarchy->words);
  std::vector<std::vector<int>> members(2 * num_words - 1);
  std::vector<int> active;
  for (int word = 0; word < num_words; ++word) {
    members[word] = {word};
    if (word < num_clusters) active.push_back(word);
  }
  for (int k = 0; k < num_words - 1; ++k) {
    SCOPED_TRACE(absl::StrCat("merge ", k, ", C = ", num_clusters));
    if (k < num_words - num_clusters) active.push_back(num_clusters + k);
    const BrownMerge& merge = hierarchy->merges[k];
    const auto left = std::find(active.begin(), active.end(), merge.left);
    const auto right = std::find(active.begin(), active.end(), merge.right);
    ASSERT_TRUE(left != active.end() && right != active.end());
    EXPECT_LT(members[merge.left][0], members[merge.right][0]);
    double best = INFINITY;
    for (size_t i = 0; i < active.size(); ++i) {
      for (size_t j = i + 1; j < active.size(); ++j) {
        best = std::min(best, ReferenceLoss(text, active, members, i, j));
      }
    }
    const size_t i = std::min(left, right) - active.begin();
    const size_t j = std::max(left, right) - active.begin();
    const double chosen = ReferenceLoss(text, active, members, i, j);
    EXPECT_NEAR(merge.loss, chosen, 1e-9);
    EXPECT_LE(chosen, best + 1e-9);
    members[num_words + k] = members[merge.left];
    members[num_words + k].insert(members[num_words + k].end(),
                                  members[merge.right].begin(),
                                  members[merge.right].end());
    std::sort(members[num_words + k].begin(), members[num_words + k].end());
    active.erase(active.begin() + j);
    active.erase(active.begin() + i);
    active.push_back(num_words + k);
  }
}

TEST(BrownClusteringTest, WordsEnterByCountThenBytes) {
  BigramCounts counts;
  counts.AddSentence(std::vector<std::string>{"b", "a", "c", "b", "d", "a"});
  BrownClusteringOptions options;
  options.num_clusters = 2;
  absl::StatusOr<BrownHierarchy> hierarchy =
      RunBrownClustering(counts, options);
  ASSERT_TRUE(hierarchy.ok()) << hierarchy.status();
  EXPECT_EQ(hierarchy->words, (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ(hierarchy->counts, (std::vector<int64_t>{2, 2, 1, 1}));
  EXPECT_EQ(hierarchy->num_clusters, 2);
  EXPECT_EQ(hierarchy->num_tokens, 6);
}

// Worked by hand: "cat" and "dog" both follow "the" once and precede "sat"
// once, so merging them keeps every term of I (p(cat, sat) and p(cat) both
// double, so their ratio stays): loss 0. Every other pair has different
// neighbours, and merging it lowers some ratio p(c, c') / p(c) p(c'), so
// its loss is positive.
TEST(BrownClusteringTest, FirstMergeJoinsTheInterchangeableWordsAtNoLoss) {
  BigramCounts counts;
  for (const auto& sentence : Split({"the cat sat .", "the dog sat ."})) {
    counts.AddSentence(sentence);
  }
  BrownClusteringOptions options;
  options.num_clusters = 5;
  absl::StatusOr<BrownHierarchy> hierarchy =
      RunBrownClustering(counts, options);
  ASSERT_TRUE(hierarchy.ok()) << hierarchy.status();
  // Ranks: "." "sat" "the" (2 each, in byte order), then "cat" "dog".
  ASSERT_EQ(hierarchy->words[3], "cat");
  ASSERT_EQ(hierarchy->merges.size(), 4u);
  EXPECT_EQ(hierarchy->merges[0].left, 3);
  EXPECT_EQ(hierarchy->merges[0].right, 4);
  EXPECT_NEAR(hierarchy->merges[0].loss, 0, 1e-12);
  for (size_t k = 1; k < hierarchy->merges.size(); ++k) {
    EXPECT_GT(hierarchy->merges[k].loss, 1e-3) << k;
  }
}

TEST(BrownClusteringTest, EveryMergeIsTheBruteForceBestWithAllWordsActive) {
  CheckEveryMergeIsGreedyOptimal(ToyCorpus(60), {/*num_clusters=*/100});
}

TEST(BrownClusteringTest, EveryMergeIsTheBruteForceBestInTheWindow) {
  for (int num_clusters : {2, 3, 4, 6}) {
    CheckEveryMergeIsGreedyOptimal(ToyCorpus(60), {num_clusters});
  }
}

// No structure at all: twelve words with skewed counts, random neighbours,
// sentences of 1 to 8 words (some with no bigram).
TEST(BrownClusteringTest, EveryMergeIsTheBruteForceBestOnRandomText) {
  std::mt19937 random(7);
  Sentences sentences;
  for (int i = 0; i < 70; ++i) {
    std::vector<std::string> sentence(1 + random() % 8);
    for (std::string& word : sentence) {
      // Word k with weight 12 - k.
      int pick = static_cast<int>(random() % 78);
      int k = 0;
      while (pick >= 12 - k) pick -= 12 - k++;
      word = absl::StrCat("w", k);
    }
    sentences.push_back(sentence);
  }
  for (int num_clusters : {2, 5, 12}) {
    CheckEveryMergeIsGreedyOptimal(sentences, {num_clusters});
  }
}

TEST(BrownClusteringTest, EveryMergeIsTheBruteForceBestWithRareWordsDropped) {
  Sentences sentences = ToyCorpus(40);
  sentences.push_back({"the", "zebra", "saw", "a", "yak", "."});
  BrownClusteringOptions options;
  options.num_clusters = 4;
  options.min_count = 2;
  CheckEveryMergeIsGreedyOptimal(sentences, options);
}

// a1..a3 are always followed by some b and b1..b3 by some a, every pair
// equally often: words within a group are interchangeable (merging them
// loses nothing), across groups they are not, so the root splits the groups.
TEST(BrownClusteringTest, TopSplitSeparatesTwoInterchangeableGroups) {
  Sentences sentences;
  for (int i = 1; i <= 3; ++i) {
    for (int j = 1; j <= 3; ++j) {
      for (int k = 1; k <= 3; ++k) {
        sentences.push_back(
            {absl::StrCat("a", i), absl::StrCat("b", j), absl::StrCat("a", k)});
        sentences.push_back(
            {absl::StrCat("b", i), absl::StrCat("a", j), absl::StrCat("b", k)});
      }
    }
  }
  for (int num_clusters : {2, 3, 4, 6}) {
    SCOPED_TRACE(absl::StrCat("C = ", num_clusters));
    absl::StatusOr<WordClusters> clusters =
        BuildBrownClusters(sentences, {num_clusters});
    ASSERT_TRUE(clusters.ok()) << clusters.status();
    absl::StatusOr<WordClusterTable> table =
        WordClusterTable::Create(*clusters);
    ASSERT_TRUE(table.ok()) << table.status();
    const char a_side = table->BitString("a1")[0];
    for (const char* word : {"a1", "a2", "a3"}) {
      EXPECT_EQ(table->BitString(word)[0], a_side) << word;
    }
    for (const char* word : {"b1", "b2", "b3"}) {
      EXPECT_NE(table->BitString(word)[0], a_side) << word;
    }
    EXPECT_EQ(table->num_clusters(), num_clusters);
  }
}

TEST(BrownClusteringTest, SameTextSameClustersWhateverTheSentenceOrder) {
  const Sentences sentences = ToyCorpus(80);
  BrownClusteringOptions options;
  options.num_clusters = 4;
  options.source = "toy";
  absl::StatusOr<WordClusters> first = BuildBrownClusters(sentences, options);
  absl::StatusOr<WordClusters> again = BuildBrownClusters(sentences, options);
  const Sentences reversed(sentences.rbegin(), sentences.rend());
  absl::StatusOr<WordClusters> other = BuildBrownClusters(reversed, options);
  ASSERT_TRUE(first.ok() && again.ok() && other.ok());
  EXPECT_EQ(first->SerializeAsString(), again->SerializeAsString());
  EXPECT_EQ(first->SerializeAsString(), other->SerializeAsString());
}

TEST(BrownClusteringTest, WordClustersHoldEveryKeptWordAndTheOptions) {
  Sentences sentences = ToyCorpus(50);
  sentences.push_back({"the", "zebra", "saw", "a", "cat", "."});
  BrownClusteringOptions options;
  options.num_clusters = 3;
  options.min_count = 2;
  options.source = "toy corpus";
  absl::StatusOr<WordClusters> clusters =
      BuildBrownClusters(sentences, options);
  ASSERT_TRUE(clusters.ok()) << clusters.status();
  EXPECT_TRUE(ValidateWordClusters(*clusters).ok());
  EXPECT_EQ(clusters->format_version(), kWordClustersVersion);
  EXPECT_EQ(clusters->num_clusters(), 3);
  EXPECT_EQ(clusters->min_count(), 2);
  EXPECT_EQ(clusters->source(), "toy corpus");
  EXPECT_EQ(clusters->bit_string_size(), 3);
  EXPECT_EQ(clusters->word_size(), 10);  // not "zebra"
  EXPECT_TRUE(std::is_sorted(clusters->bit_string().begin(),
                             clusters->bit_string().end()));
  int64_t tokens = 0;
  for (const auto& sentence : sentences) tokens += sentence.size();
  EXPECT_EQ(clusters->num_tokens(), tokens);
  absl::StatusOr<WordClusterTable> table = WordClusterTable::Create(*clusters);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(table->BitString("zebra"), "");
  EXPECT_EQ(table->Cluster("zebra"), -1);
  EXPECT_EQ(table->num_words(), 10);
  EXPECT_FALSE(table->BitString("dog").empty());
}

TEST(BrownClusteringTest, RejectsBadOptionsAndTooFewWords) {
  const Sentences sentences = Split({"a b a b", "c"});
  EXPECT_THAT(BuildBrownClusters(sentences, {1}).status().message(),
              HasSubstr("num_clusters is 1; it must be between 2 and 4096"));
  EXPECT_THAT(BuildBrownClusters(sentences, {5000}).status().message(),
              HasSubstr("num_clusters is 5000"));
  BrownClusteringOptions options;
  options.min_count = 0;
  EXPECT_THAT(BuildBrownClusters(sentences, options).status().message(),
              HasSubstr("min_count is 0"));
  options.min_count = 2;
  EXPECT_TRUE(BuildBrownClusters(sentences, options).ok());
  options.min_count = 3;
  EXPECT_THAT(BuildBrownClusters(sentences, options).status().message(),
              HasSubstr("at least 2 distinct words"));
}

TEST(BrownClusteringTest, TwoWordsMakeTwoOneBitClusters) {
  absl::StatusOr<WordClusters> clusters =
      BuildBrownClusters(Split({"x y", "y"}), {100});
  ASSERT_TRUE(clusters.ok()) << clusters.status();
  EXPECT_EQ(clusters->word(0), "y");
  ASSERT_EQ(clusters->bit_string_size(), 2);
  EXPECT_EQ(clusters->bit_string(clusters->cluster(0)), "0");
  EXPECT_EQ(clusters->bit_string(clusters->cluster(1)), "1");
}

}  // namespace
}  // namespace chaintag
