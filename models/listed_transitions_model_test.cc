// A model trained over allowed transitions (the others at
// kForbiddenTransition) decodes over its listed transitions: the best
// labeling that avoids the others, by brute force; and where none does,
// the full decoder's labeling.

#include <limits>
#include <random>
#include <string>
#include <vector>

#include "corpora/sentence_testing.h"
#include "gtest/gtest.h"
#include "models/chain_model.h"
#include "models/chain_model_testing.h"
#include "models/chain_scores_testing.h"
#include "models/viterbi.h"

namespace chaintag {
namespace {

constexpr int kLabels = 5;
constexpr int kBuckets = 16;

// Word-identity features over kLabels labels, random weights, the
// transitions `allowed` forbids at kForbiddenTransition.
ChainModel MakeModel(const std::vector<uint8_t>& allowed, uint32_t seed) {
  return chain_testing::RandomWordModel(
      {"A", "B", "C", "D", "E"}, NONE, kBuckets, seed,
      [&allowed](const ChainLayout& layout, std::vector<double>* weights) {
        for (int k = 0; k < kLabels * kLabels; ++k) {
          if (!allowed[k]) {
            (*weights)[layout.transition_offset() + k] = kForbiddenTransition;
          }
        }
      });
}

Sentence RandomSentence(int length, std::mt19937* rng) {
  std::uniform_int_distribution<int> word(0, 40);
  std::vector<std::string> words;
  for (int t = 0; t < length; ++t) {
    words.push_back("w" + std::to_string(word(*rng)));
  }
  return sentence_testing::WordSentence(words);
}

// The best labeling by brute force, over those `keep` accepts.
template <typename Keep>
std::vector<int32_t> BruteForce(const ChainScores& scores, Keep keep) {
  double best = -std::numeric_limits<double>::infinity();
  std::vector<int32_t> best_labels;
  ForEachLabeling(scores.length, scores.num_labels,
                  [&](const std::vector<int32_t>& y) {
                    if (!keep(y)) return;
                    const double score = ScoreLabeling(scores, y.data());
                    if (score > best) {
                      best = score;
                      best_labels = y;
                    }
                  });
  return best_labels;
}

TEST(ListedTransitionsModelTest, DecodesTheBestAllowedLabeling) {
  std::mt19937 rng(5);
  std::bernoulli_distribution coin(0.15);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<uint8_t> allowed(kLabels * kLabels);
    for (uint8_t& a : allowed) a = coin(rng);
    allowed[0] = 1;  // 0 → 0: every length has an allowed labeling
    allowed[1] = 0;
    allowed[kLabels + 1] = 0;
    int count = 0;
    for (uint8_t a : allowed) count += a;
    if (count * 4 > kLabels * kLabels) continue;
    const ChainModel model = MakeModel(allowed, trial);
    ASSERT_NE(model.weights().lists, nullptr);
    TagScratch scratch;
    for (int length = 1; length <= 5; ++length) {
      const Sentence sentence = RandomSentence(length, &rng);
      std::vector<int32_t> predicted;
      ASSERT_TRUE(model.Predict(sentence, &scratch, &predicted).ok());
      absl::StatusOr<ChainScores> scores =
          model.FirstOrderScores(sentence, /*constrained=*/false, &scratch);
      ASSERT_TRUE(scores.ok());
      const std::vector<int32_t> expected =
          BruteForce(*scores, [&](const std::vector<int32_t>& y) {
            for (size_t t = 1; t < y.size(); ++t) {
              if (!allowed[y[t - 1] * kLabels + y[t]]) return false;
            }
            return true;
          });
      EXPECT_EQ(predicted, expected) << "trial " << trial;
    }
  }
}

// Only 0 → 1 and 1 → 2 allowed: from three labels on no labeling avoids
// the forbidden transitions, and the full decoder's labeling is tagged.
TEST(ListedTransitionsModelTest, FallsBackWhereNoLabelingIsAllowed) {
  std::vector<uint8_t> allowed(kLabels * kLabels, 0);
  allowed[0 * kLabels + 1] = 1;
  allowed[1 * kLabels + 2] = 1;
  const ChainModel model = MakeModel(allowed, 3);
  ASSERT_NE(model.weights().lists, nullptr);
  std::mt19937 rng(9);
  TagScratch scratch;
  for (int length = 1; length <= 5; ++length) {
    const Sentence sentence = RandomSentence(length, &rng);
    std::vector<int32_t> predicted;
    ASSERT_TRUE(model.Predict(sentence, &scratch, &predicted).ok());
    absl::StatusOr<ChainScores> scores =
        model.FirstOrderScores(sentence, /*constrained=*/false, &scratch);
    ASSERT_TRUE(scores.ok());
    // Every labeling of three or more labels crosses a −1e30 transition,
    // which rounds their other scores away: many tie, so the check is the
    // full decoder's own labeling and a brute-force best score.
    ViterbiDecoder full;
    std::vector<int32_t> expected(length);
    full.Decode(*scores, expected.data());
    EXPECT_EQ(predicted, expected) << "length " << length;
    const std::vector<int32_t> best =
        BruteForce(*scores, [](const std::vector<int32_t>&) { return true; });
    EXPECT_EQ(ScoreLabeling(*scores, predicted.data()),
              ScoreLabeling(*scores, best.data()));
  }
}

}  // namespace
}  // namespace chaintag
