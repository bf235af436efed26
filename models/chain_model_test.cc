#include "models/chain_model.h"

#include <algorithm>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "corpora/sentence_testing.h"
#include "corpora/tag_scheme.h"
#include "features/document_features.h"
#include "gtest/gtest.h"
#include "models/chain_layout.h"
#include "models/chain_scores_testing.h"
#include "models/model_file_testing.h"
#include "models/second_order.h"
#include "models/transition_constraints.h"
#include "models/viterbi.h"

namespace chaintag {
namespace {

using sentence_testing::WordSentence;

using chain_testing::AllBuckets;
using chain_testing::kBuckets;
using chain_testing::NormalWeights;
using chain_testing::RandomWeights;
using chain_testing::ReadAll;
using chain_testing::SecondOrderHeader;
using chain_testing::SecondOrderTestStructure;
using chain_testing::TempPath;
using chain_testing::WordModelHeader;
using chain_testing::WriteAll;

// A small IOBES model over word identity features with random weights.
ChainModel MakeModel(const std::vector<std::string>& labels = {"O", "B-NP",
                                                               "E-NP", "S-NP"},
                     bool constrained_decoding = false,
                     WeightPrecision precision = FLOAT32) {
  const ModelFile header =
      WordModelHeader(labels, constrained_decoding, precision);
  const int L = static_cast<int>(labels.size());
  absl::StatusOr<ChainModel> model =
      ChainModel::Create(header, AllBuckets(), RandomWeights(L));
  EXPECT_TRUE(model.ok()) << model.status();
  return std::move(*model);
}

TEST(ChainModelTest, RoundTripsBitExactly) {
  ChainModel model = MakeModel();
  const std::string path = TempPath("roundtrip.model");
  ASSERT_TRUE(model.Save(path).ok());
  absl::StatusOr<ChainModel> loaded = ChainModel::Load(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  // exact, not near
  EXPECT_EQ(loaded->DenseWeights(AllBuckets()),
            model.DenseWeights(AllBuckets()));
  EXPECT_EQ(loaded->rows().buckets(), model.rows().buckets());
  EXPECT_EQ(loaded->labels().names(), model.labels().names());
  EXPECT_EQ(loaded->header().features().SerializeAsString(),
            model.header().features().SerializeAsString());
  // Saving the loaded model gives the same bytes.
  const std::string again = TempPath("roundtrip2.model");
  ASSERT_TRUE(loaded->Save(again).ok());
  EXPECT_EQ(ReadAll(path), ReadAll(again));
}

// FLOAT32 stores every emission weight rounded to the nearest float and
// keeps the transitions and biases exactly; FLOAT64 keeps everything. Both
// survive a save and a load bit for bit.
TEST(ChainModelTest, PrecisionsRoundTheEmissionsOnly) {
  const std::vector<double> original = RandomWeights(4);
  const ChainLayout layout{4, kBuckets};
  for (WeightPrecision precision : {FLOAT32, FLOAT64}) {
    ChainModel model =
        MakeModel({"O", "B-NP", "E-NP", "S-NP"}, false, precision);
    EXPECT_EQ(model.header().weight_precision(), precision);
    const std::string path = TempPath("precision.model");
    ASSERT_TRUE(model.Save(path).ok());
    absl::StatusOr<ChainModel> loaded = ChainModel::Load(path);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    const std::vector<double> dense = loaded->DenseWeights(AllBuckets());
    ASSERT_EQ(dense.size(), original.size());
    for (int64_t k = 0; k < layout.dim(); ++k) {
      const double expected =
          precision == FLOAT32 && k < layout.emission_size()
              ? static_cast<double>(static_cast<float>(original[k]))
              : original[k];
      EXPECT_EQ(dense[k], expected) << k;
    }
    // Float32 really rounds (the test would pass vacuously otherwise).
    if (precision == FLOAT32) EXPECT_NE(dense[5], original[5]);  // row 1
  }
  // Half the bytes of emission weights.
  const std::string f32 = TempPath("f32.model");
  const std::string f64 = TempPath("f64.model");
  ASSERT_TRUE(MakeModel().Save(f32).ok());
  ASSERT_TRUE(
      MakeModel({"O", "B-NP", "E-NP", "S-NP"}, false, FLOAT64).Save(f64).ok());
  EXPECT_LT(ReadAll(f32).size(), ReadAll(f64).size());
}

// Rows that are all zero are not stored, and a bucket without a row (also
// one that no training feature hit) scores zero: the model's unary scores
// equal the dense reference's, bucket by bucket.
TEST(ChainModelTest, ABucketWithoutARowScoresZero) {
  ChainModel model = MakeModel();
  EXPECT_EQ(model.rows().size(), kBuckets - (kBuckets + 2) / 3);
  for (int b = 0; b < kBuckets; ++b) {
    EXPECT_EQ(model.rows().Find(b) < 0, b % 3 == 0) << b;
  }
  const std::vector<double> dense = model.DenseWeights(AllBuckets());
  const int L = model.labels().size();
  for (int b = 0; b < kBuckets; b += 3) {
    for (int y = 0; y < L; ++y) EXPECT_EQ(dense[b * L + y], 0);
  }
  const char* words[] = {"the", "big", "dog", "barks", "a", "cat", "sat",
                         "on",  "mat", ".",   "x",     "y", "z"};
  int absent = 0;
  TagScratch scratch;
  Decoded decoded;
  for (const char* word : words) {
    const Sentence sentence = WordSentence({word});
    FeatureSequence features;
    ASSERT_TRUE(model.extractor().Extract(sentence, &features).ok());
    for (uint32_t bucket : features.buckets) absent += bucket % 3 == 0;
    std::vector<double> unary(L);
    ComputeUnaryScores(ChainLayout{L, kBuckets}, dense.data(), features,
                       unary.data());
    // With a single token, the best labeling's score is unary + start + end.
    const ChainLayout layout{L, kBuckets};
    double best = -std::numeric_limits<double>::infinity();
    for (int y = 0; y < L; ++y) {
      best = std::max(best, unary[y] + dense[layout.start_offset() + y] +
                                dense[layout.end_offset() + y]);
    }
    ASSERT_TRUE(
        model.PredictNBest(sentence, DecodeOptions(), &scratch, &decoded).ok());
    EXPECT_EQ(decoded.scores[0], best) << word;
  }
  EXPECT_GT(absent, 0) << "no word hit a bucket without a row";
}

// The file's own faults are models/model_file_test.cc's: Load reports them
// naming the file.
TEST(ChainModelTest, LoadNamesTheFileInItsErrors) {
  ModelFile file = MakeModel().ToProto();
  file.set_transitions(0, file.transitions(0) + 1e-9);
  const std::string path = TempPath("damaged.model");
  WriteAll(path, file.SerializeAsString());
  absl::StatusOr<ChainModel> loaded = ChainModel::Load(path);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find(path), std::string::npos);
  EXPECT_NE(loaded.status().message().find("checksum"), std::string::npos);
  EXPECT_EQ(ChainModel::Load(TempPath("missing.model")).status().code(),
            absl::StatusCode::kNotFound);
}

// A run on no sentences (python-crfsuite's empty Trainer) gives a model
// without labels or weights: it loads, tags an empty sentence to nothing
// and refuses a non-empty one by name. Labels are then the only thing
// missing: weight rows without labels are a damaged file.
TEST(ChainModelTest, AModelWithoutLabelsTagsOnlyEmptySentences) {
  absl::StatusOr<ChainModel> empty =
      ChainModel::Create(WordModelHeader({}, false, FLOAT32),
                         BucketRows::FromSorted({}, kBuckets).value(), {});
  ASSERT_TRUE(empty.ok()) << empty.status();
  const std::string path = TempPath("no_labels.model");
  ASSERT_TRUE(empty->Save(path).ok());
  absl::StatusOr<ChainModel> loaded = ChainModel::Load(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->labels().size(), 0);
  TagScratch scratch;
  std::vector<std::string> tags = {"stale"};
  ASSERT_TRUE(loaded->Tag(WordSentence({}), &scratch, &tags).ok());
  EXPECT_TRUE(tags.empty());
  const absl::Status refused =
      loaded->Tag(WordSentence({"a"}), &scratch, &tags);
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.message().find("no labels"), std::string::npos);
  Decoded decoded;
  EXPECT_EQ(loaded
                ->PredictNBest(WordSentence({"a"}), DecodeOptions{}, &scratch,
                               &decoded)
                .code(),
            absl::StatusCode::kFailedPrecondition);

  ModelFile damaged = loaded->ToProto();
  damaged.add_emission_buckets(3);
  WriteAll(path, damaged.SerializeAsString());
  const absl::Status status = ChainModel::Load(path).status();
  EXPECT_NE(status.message().find("no labels"), std::string::npos) << status;
}

TEST(ChainModelTest, TagsInTheOutputScheme) {
  ChainModel model = MakeModel();
  Sentence sentence;
  sentence.num_attributes = 1;
  sentence.attributes = {"the", "big", "dog", "barks"};
  TagScratch scratch;
  std::vector<int32_t> ids;
  ASSERT_TRUE(model.Predict(sentence, &scratch, &ids).ok());
  ASSERT_EQ(ids.size(), 4u);
  std::vector<std::string> tags;
  ASSERT_TRUE(model.Tag(sentence, &scratch, &tags).ok());
  ASSERT_EQ(tags.size(), 4u);
  for (const std::string& tag : tags) {
    EXPECT_TRUE(tag == "O" || tag == "B-NP" || tag == "I-NP") << tag;
  }
  // S-NP/B-NP predictions start an IOB2 chunk; E-NP never appears.
  for (size_t t = 0; t < ids.size(); ++t) {
    const std::string& name = model.labels().Name(ids[t]);
    if (name == "S-NP") {
      EXPECT_EQ(tags[t], "B-NP");
    }
  }
}

// `length` (≤ 10) distinct words: a repeated word would give permuted
// labelings equal scores that differ only by rounding, and the brute-force
// order would then depend on summation order.
Sentence RandomSentence(int length, std::mt19937* rng) {
  std::vector<std::string> words = {"the", "big", "dog", "barks", "a",
                                    "cat", "sat", "on",  "mat",   "."};
  std::shuffle(words.begin(), words.end(), *rng);
  words.resize(length);
  return WordSentence(words);
}

// Writes `file` to `path`, its weights checksum made right so that only
// what the test broke is wrong, and expects Load to refuse it saying `why`.
void ExpectLoadRejected(const std::string& path, ModelFile file,
                        const std::string& why) {
  file.set_weights_checksum(WeightsChecksum(file));
  WriteAll(path, file.SerializeAsString());
  absl::StatusOr<ChainModel> loaded = ChainModel::Load(path);
  ASSERT_FALSE(loaded.ok()) << why;
  EXPECT_NE(loaded.status().message().find(why), std::string::npos)
      << loaded.status();
}

// `a` and `b` predict the same labels on random sentences (drawn from
// `seed`).
void ExpectSamePredictions(const ChainModel& a, const ChainModel& b,
                           uint32_t seed) {
  std::mt19937 rng(seed);
  TagScratch scratch;
  for (int trial = 0; trial < 10; ++trial) {
    const Sentence sentence = RandomSentence(1 + trial % 7, &rng);
    std::vector<int32_t> from_a, from_b;
    ASSERT_TRUE(a.Predict(sentence, &scratch, &from_a).ok());
    ASSERT_TRUE(b.Predict(sentence, &scratch, &from_b).ok());
    EXPECT_EQ(from_a, from_b);
  }
}

using Scored = ScoredLabeling;

// Every labeling of the sentence under the model's weights, or only those
// that ConvertTags leaves unchanged in the training scheme (the valid ones),
// in TopKViterbi's order.
std::vector<Scored> BruteForce(const ChainModel& model,
                               const Sentence& sentence, bool valid_only) {
  FeatureSequence features;
  EXPECT_TRUE(model.extractor().Extract(sentence, &features).ok());
  const int T = features.size();
  const int L = model.labels().size();
  // The dense reference: every bucket its own row, a missing one zero.
  const ChainLayout layout{L, kBuckets};
  const std::vector<double> dense = model.DenseWeights(AllBuckets());
  std::vector<double> unary(static_cast<size_t>(T) * L);
  ComputeUnaryScores(layout, dense.data(), features, unary.data());
  const ChainScores scores =
      MakeChainScores(layout, dense.data(), T, unary.data());
  const TagScheme scheme = model.header().train_scheme();
  return SortedLabelings(scores, [&](const std::vector<int32_t>& y) {
    if (!valid_only) return true;
    std::vector<std::string> tags;
    for (int32_t label : y) tags.push_back(model.labels().Name(label));
    return ConvertTags(tags, scheme, scheme) == tags;
  });
}

TEST(ChainModelTest, PredictNBestUnconstrainedFirstIsPredict) {
  ChainModel model = MakeModel();
  std::mt19937 rng(3);
  TagScratch scratch;
  Decoded decoded;  // reused on purpose
  for (int trial = 0; trial < 50; ++trial) {
    const Sentence sentence = RandomSentence(1 + trial % 9, &rng);
    std::vector<int32_t> predicted;
    ASSERT_TRUE(model.Predict(sentence, &scratch, &predicted).ok());
    DecodeOptions options;
    ASSERT_TRUE(model.PredictNBest(sentence, options, &scratch, &decoded).ok());
    ASSERT_EQ(decoded.labelings.size(), 1u);
    EXPECT_EQ(decoded.labelings[0], predicted);
    EXPECT_FALSE(decoded.margin.has_value());
    const double one_best = decoded.scores[0];
    options.nbest = 3;
    ASSERT_TRUE(model.PredictNBest(sentence, options, &scratch, &decoded).ok());
    ASSERT_EQ(decoded.labelings.size(), 3u);
    EXPECT_EQ(decoded.labelings[0], predicted);
    EXPECT_EQ(decoded.scores[0], one_best);  // bit for bit
    ASSERT_TRUE(decoded.margin.has_value());
    EXPECT_EQ(*decoded.margin, decoded.scores[0] - decoded.scores[1]);
    EXPECT_GE(*decoded.margin, 0);
    // The same with the weights passed explicitly.
    Decoded again;
    ASSERT_TRUE(PredictNBestWithWeights(model.extractor(), model.weights(),
                                        model.constraints(), sentence, options,
                                        &scratch, &again)
                    .ok());
    EXPECT_EQ(again.labelings, decoded.labelings);
    EXPECT_EQ(again.scores, decoded.scores);
  }
}

TEST(ChainModelTest, PredictNBestMatchesBruteForce) {
  ChainModel model = MakeModel();
  ASSERT_EQ(model.header().train_scheme(), IOBES);
  std::mt19937 rng(4);
  TagScratch scratch;
  Decoded decoded;
  int constraint_mattered = 0;
  for (int trial = 0; trial < 30; ++trial) {
    const Sentence sentence = RandomSentence(1 + trial % 5, &rng);
    for (bool constrained : {false, true}) {
      const std::vector<Scored> expected =
          BruteForce(model, sentence, /*valid_only=*/constrained);
      const int n = static_cast<int>(expected.size());
      for (int nbest : {1, 2, 5, n, n + 10}) {
        DecodeOptions options;
        options.constrained = constrained;
        options.nbest = nbest;
        ASSERT_TRUE(
            model.PredictNBest(sentence, options, &scratch, &decoded).ok());
        const int m = std::min(nbest, n);
        ASSERT_EQ(decoded.labelings.size(), static_cast<size_t>(m))
            << "trial " << trial << " constrained " << constrained;
        ASSERT_EQ(decoded.scores.size(), static_cast<size_t>(m));
        // Words can share a hash bucket (or an all-zero row), so labelings
        // may tie up to rounding: rank j must hold a distinct labeling from
        // the expected list whose score is the j-th best score.
        std::vector<std::vector<int32_t>> seen;
        for (int j = 0; j < m; ++j) {
          EXPECT_NEAR(decoded.scores[j], expected[j].score, 1e-9);
          auto match = std::find_if(expected.begin(), expected.end(),
                                    [&](const Scored& e) {
                                      return e.labels == decoded.labelings[j];
                                    });
          ASSERT_NE(match, expected.end())
              << "trial " << trial << " rank " << j << " not expected";
          EXPECT_NEAR(match->score, expected[j].score, 1e-9)
              << "trial " << trial << " rank " << j;
          seen.push_back(decoded.labelings[j]);
        }
        std::sort(seen.begin(), seen.end());
        EXPECT_EQ(std::adjacent_find(seen.begin(), seen.end()), seen.end());
        if (nbest >= 2) {
          ASSERT_TRUE(decoded.margin.has_value());
          EXPECT_EQ(*decoded.margin,
                    n >= 2 ? decoded.scores[0] - decoded.scores[1]
                           : std::numeric_limits<double>::infinity());
        }
      }
    }
    // Count sentences whose unconstrained best is invalid.
    std::vector<int32_t> predicted;
    ASSERT_TRUE(model.Predict(sentence, &scratch, &predicted).ok());
    constraint_mattered +=
        !model.constraints().IsValid(predicted.data(), predicted.size());
  }
  // Otherwise the constrained half of this test would prove little.
  EXPECT_GT(constraint_mattered, 0);
}

// A model file that says constrained_decoding tags with the best valid
// labeling (brute force over valid ones), also after a save and load; where
// the plain best is valid the two agree.
TEST(ChainModelTest, TagDecodesConstrainedWhenTheModelSaysSo) {
  const ChainModel plain = MakeModel();
  const std::string path = TempPath("constrained.model");
  ASSERT_TRUE(MakeModel({"O", "B-NP", "E-NP", "S-NP"}, true).Save(path).ok());
  absl::StatusOr<ChainModel> constrained = ChainModel::Load(path);
  ASSERT_TRUE(constrained.ok()) << constrained.status();
  ASSERT_TRUE(constrained->header().constrained_decoding());
  EXPECT_FALSE(plain.header().constrained_decoding());
  std::mt19937 rng(7);
  TagScratch scratch;
  int differed = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const Sentence sentence = RandomSentence(1 + trial % 6, &rng);
    const std::vector<Scored> valid =
        BruteForce(plain, sentence, /*valid_only=*/true);
    ASSERT_FALSE(valid.empty());
    std::vector<std::string> tags, plain_tags;
    ASSERT_TRUE(constrained->Tag(sentence, &scratch, &tags).ok());
    ASSERT_TRUE(plain.Tag(sentence, &scratch, &plain_tags).ok());
    EXPECT_EQ(tags, plain.ToOutputTags(valid[0].labels)) << "trial " << trial;
    std::vector<int32_t> best;
    ASSERT_TRUE(plain.Predict(sentence, &scratch, &best).ok());
    if (plain.constraints().IsValid(best.data(), best.size())) {
      EXPECT_EQ(tags, plain_tags) << "trial " << trial;
    } else {
      differed += tags != plain_tags;
    }
  }
  EXPECT_GT(differed, 0);
  std::vector<std::string> none;
  ASSERT_TRUE(constrained->Tag(WordSentence({}), &scratch, &none).ok());
  EXPECT_TRUE(none.empty());
  // No valid labeling (IOBES over {B-NP, E-NP}, one token): an error, as
  // PredictNBest gives, not an invalid labeling.
  const absl::Status status = MakeModel({"B-NP", "E-NP"}, true)
                                  .Tag(WordSentence({"dog"}), &scratch, &none);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
}

TEST(ChainModelTest, PredictNBestEdgeCasesAndErrors) {
  ChainModel model = MakeModel();
  TagScratch scratch;
  Decoded decoded;
  DecodeOptions options;
  options.nbest = 0;
  EXPECT_EQ(
      model.PredictNBest(WordSentence({"dog"}), options, &scratch, &decoded)
          .code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(decoded.labelings.empty());

  // An empty sentence has one (empty) labeling: the margin is +inf.
  options.nbest = 2;
  ASSERT_TRUE(
      model.PredictNBest(WordSentence({}), options, &scratch, &decoded).ok());
  ASSERT_EQ(decoded.labelings.size(), 1u);
  EXPECT_TRUE(decoded.labelings[0].empty());
  EXPECT_EQ(decoded.scores, std::vector<double>{0.0});
  EXPECT_EQ(decoded.margin, std::numeric_limits<double>::infinity());

  // IOBES over {B-NP, E-NP}: only even lengths have a valid labeling.
  ChainModel pairs = MakeModel({"B-NP", "E-NP"});
  options.constrained = true;
  absl::Status status =
      pairs.PredictNBest(WordSentence({"the"}), options, &scratch, &decoded);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
  EXPECT_TRUE(decoded.labelings.empty());
  EXPECT_TRUE(decoded.scores.empty());
  options.nbest = 1;
  EXPECT_FALSE(
      pairs.PredictNBest(WordSentence({"the"}), options, &scratch, &decoded)
          .ok());
  options.nbest = 4;
  ASSERT_TRUE(pairs
                  .PredictNBest(WordSentence({"the", "dog"}), options, &scratch,
                                &decoded)
                  .ok());
  ASSERT_EQ(decoded.labelings.size(), 1u);
  EXPECT_EQ(decoded.labelings[0], (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(decoded.margin, std::numeric_limits<double>::infinity());
  // Unconstrained, every labeling is there.
  options.constrained = false;
  ASSERT_TRUE(
      pairs.PredictNBest(WordSentence({"the"}), options, &scratch, &decoded)
          .ok());
  EXPECT_EQ(decoded.labelings.size(), 2u);
}

// A second-order IOB2 model over word identity: every trigram weighted,
// pair features on the word for three label pairs, random weights.
ChainModel MakeSecondOrderModel(WeightPrecision precision = FLOAT32) {
  const ModelFile header = SecondOrderHeader(precision);
  const SecondOrderStructure structure = SecondOrderTestStructure();
  const WeightSpace space{&AllBuckets(), &AllBuckets(), &structure};
  const std::vector<double> weights =
      NormalWeights(space.Layout(header.labels_size()).dim(), 7);
  absl::StatusOr<ChainModel> model = ChainModel::Create(header, space, weights);
  EXPECT_TRUE(model.ok()) << model.status();
  return std::move(*model);
}

// score(y) of the second-order model written out from its dense weights:
// the reference the decoders are checked against.
double SecondOrderScore(const ChainModel& model, const Sentence& sentence,
                        const std::vector<int32_t>& y) {
  const SecondOrderStructure& structure = *model.structure();
  const ChainLayout layout = model.layout();
  WeightSpace all = model.space();
  all.rows = &AllBuckets();
  all.pair_rows = &AllBuckets();
  const ChainLayout dense_layout = all.Layout(layout.num_labels);
  const std::vector<double> w = model.DenseWeights(all);
  FeatureSequence features, pairs;
  EXPECT_TRUE(model.extractor().Extract(sentence, &features).ok());
  EXPECT_TRUE(
      model.extractor().pair_extractor()->Extract(sentence, &pairs).ok());
  const int L = layout.num_labels;
  const int P = dense_layout.num_pairs;
  double score = w[dense_layout.start_offset() + y.front()] +
                 w[dense_layout.end_offset() + y.back()];
  for (int t = 0; t < features.size(); ++t) {
    for (int k = features.offsets[t]; k < features.offsets[t + 1]; ++k) {
      score += features.value(k) * w[features.buckets[k] * L + y[t]];
    }
    if (t == 0) continue;
    score += w[dense_layout.transition_offset() + y[t - 1] * L + y[t]];
    const int p = structure.pair_index(y[t - 1], y[t]);
    for (int k = pairs.offsets[t]; p >= 0 && k < pairs.offsets[t + 1]; ++k) {
      score +=
          pairs.value(k) *
          w[dense_layout.pair_emission_offset() + pairs.buckets[k] * P + p];
    }
    if (t < 2) continue;
    const int trigram = structure.trigram_index(y[t - 2], y[t - 1], y[t]);
    if (trigram >= 0) score += w[dense_layout.trigram_offset() + trigram];
  }
  return score;
}

TEST(ChainModelTest, SecondOrderDecodesTheBestAllowedLabelings) {
  const ChainModel model = MakeSecondOrderModel();
  ASSERT_EQ(model.order(), 2);
  EXPECT_EQ(model.header().format_version(), kSecondOrderFormatVersion);
  std::mt19937 rng(11);
  TagScratch scratch;
  Decoded decoded;
  for (int trial = 0; trial < 20; ++trial) {
    const Sentence sentence = RandomSentence(1 + trial % 5, &rng);
    std::vector<Scored> expected;
    const int T = static_cast<int>(sentence.attributes.size());
    ForEachLabeling(T, 4, [&](const std::vector<int32_t>& y) {
      if (!model.structure()->IsAllowed(y.data(), T)) return;
      expected.push_back({SecondOrderScore(model, sentence, y), y});
    });
    std::stable_sort(
        expected.begin(), expected.end(),
        [](const Scored& a, const Scored& b) { return a.score > b.score; });
    DecodeOptions options;
    options.nbest = 4;
    ASSERT_TRUE(model.PredictNBest(sentence, options, &scratch, &decoded).ok());
    const size_t m = std::min<size_t>(4, expected.size());
    ASSERT_EQ(decoded.labelings.size(), m);
    for (size_t j = 0; j < m; ++j) {
      EXPECT_NEAR(decoded.scores[j], expected[j].score, 1e-5) << trial;
      EXPECT_NEAR(SecondOrderScore(model, sentence, decoded.labelings[j]),
                  expected[j].score, 1e-5);
    }
    std::vector<int32_t> predicted;
    ASSERT_TRUE(model.Predict(sentence, &scratch, &predicted).ok());
    EXPECT_EQ(predicted, decoded.labelings[0]);
    std::vector<std::string> tags;
    ASSERT_TRUE(model.Tag(sentence, &scratch, &tags).ok());
    EXPECT_EQ(tags, model.ToOutputTags(predicted));
  }
}

TEST(ChainModelTest, SecondOrderRoundTripsAndNeedsItsPairTemplates) {
  for (WeightPrecision precision : {FLOAT32, FLOAT64}) {
    const ChainModel model = MakeSecondOrderModel(precision);
    const std::string path = TempPath("second_order.model");
    ASSERT_TRUE(model.Save(path).ok());
    absl::StatusOr<ChainModel> loaded = ChainModel::Load(path);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    EXPECT_EQ(loaded->order(), 2);
    EXPECT_EQ(loaded->structure()->trigrams(), model.structure()->trigrams());
    EXPECT_EQ(loaded->structure()->pairs(), model.structure()->pairs());
    EXPECT_EQ(loaded->DenseWeights(loaded->space()),
              model.DenseWeights(model.space()));
    ExpectSamePredictions(model, *loaded, 2);
  }
  const ChainModel model = MakeSecondOrderModel();
  const std::string path = TempPath("second_order_damaged.model");
  // The file format is sound (models/model_file_test.cc checks it); the
  // model cannot read pair weights without their templates.
  ModelFile file = model.ToProto();
  file.mutable_features()->clear_pair_templates();
  ExpectLoadRejected(path, file, "without pair templates");
}

// A first-order IOB2 model over word identity with pair templates on the
// word: an L×L block of observation-conditioned transitions per word
// bucket, random weights, every fourth pair row zero (not stored).
ChainModel MakeFirstOrderPairModel(WeightPrecision precision = FLOAT32) {
  const ModelFile header = SecondOrderHeader(precision);
  const WeightSpace space{&AllBuckets(), &AllBuckets(), nullptr};
  const ChainLayout layout = space.Layout(header.labels_size());
  std::vector<double> weights = NormalWeights(layout.dim(), 9);
  for (int r = 0; r < kBuckets; r += 4) {
    std::fill_n(
        weights.begin() + layout.pair_emission_offset() + r * layout.num_pairs,
        layout.num_pairs, 0.0);
  }
  absl::StatusOr<ChainModel> model = ChainModel::Create(header, space, weights);
  EXPECT_TRUE(model.ok()) << model.status();
  return std::move(*model);
}

// score(y) of a first-order model with pair rows, written out from its
// dense weights.
double FirstOrderPairScore(const ChainModel& model, const Sentence& sentence,
                           const std::vector<int32_t>& y) {
  const int L = model.labels().size();
  const WeightSpace all{&AllBuckets(), &AllBuckets(), nullptr};
  const ChainLayout layout = all.Layout(L);
  EXPECT_EQ(layout.num_pairs, L * L);
  const std::vector<double> w = model.DenseWeights(all);
  FeatureSequence features, pairs;
  EXPECT_TRUE(model.extractor().Extract(sentence, &features).ok());
  EXPECT_TRUE(
      model.extractor().pair_extractor()->Extract(sentence, &pairs).ok());
  double score =
      w[layout.start_offset() + y.front()] + w[layout.end_offset() + y.back()];
  for (int t = 0; t < features.size(); ++t) {
    for (int k = features.offsets[t]; k < features.offsets[t + 1]; ++k) {
      score += features.value(k) * w[features.buckets[k] * L + y[t]];
    }
    if (t == 0) continue;
    score += w[layout.transition_offset() + y[t - 1] * L + y[t]];
    for (int k = pairs.offsets[t]; k < pairs.offsets[t + 1]; ++k) {
      score += pairs.value(k) *
               w[layout.pair_emission_offset() +
                 pairs.buckets[k] * layout.num_pairs + y[t - 1] * L + y[t]];
    }
  }
  return score;
}

TEST(ChainModelTest, FirstOrderPairTransitionsDecodeTheBestLabelings) {
  const ChainModel model = MakeFirstOrderPairModel();
  ASSERT_EQ(model.order(), 1);
  EXPECT_EQ(model.header().format_version(), kFirstOrderPairFormatVersion);
  ASSERT_EQ(model.layout().num_pairs, 16);
  EXPECT_LT(model.pair_rows().size(), kBuckets);  // zero rows dropped
  std::mt19937 rng(13);
  TagScratch scratch;
  Decoded decoded;
  for (int trial = 0; trial < 20; ++trial) {
    const Sentence sentence = RandomSentence(1 + trial % 5, &rng);
    const int T = static_cast<int>(sentence.attributes.size());
    for (bool constrained : {false, true}) {
      std::vector<double> expected;
      ForEachLabeling(T, 4, [&](const std::vector<int32_t>& y) {
        if (constrained && !model.constraints().IsValid(y.data(), T)) return;
        expected.push_back(FirstOrderPairScore(model, sentence, y));
      });
      std::sort(expected.rbegin(), expected.rend());
      DecodeOptions options;
      options.nbest = 4;
      options.constrained = constrained;
      ASSERT_TRUE(
          model.PredictNBest(sentence, options, &scratch, &decoded).ok());
      const size_t m = std::min<size_t>(4, expected.size());
      ASSERT_EQ(decoded.labelings.size(), m);
      for (size_t j = 0; j < m; ++j) {
        EXPECT_NEAR(decoded.scores[j], expected[j], 1e-9) << trial;
        EXPECT_NEAR(FirstOrderPairScore(model, sentence, decoded.labelings[j]),
                    expected[j], 1e-9);
      }
      options.nbest = 1;
      ASSERT_TRUE(
          model.PredictNBest(sentence, options, &scratch, &decoded).ok());
      EXPECT_NEAR(decoded.scores[0], expected[0], 1e-9);
      if (constrained) continue;
      std::vector<int32_t> predicted;
      ASSERT_TRUE(model.Predict(sentence, &scratch, &predicted).ok());
      EXPECT_EQ(predicted, decoded.labelings[0]);
    }
  }
}

TEST(ChainModelTest, FirstOrderPairModelRoundTripsAndIsValidated) {
  for (WeightPrecision precision : {FLOAT32, FLOAT64}) {
    const ChainModel model = MakeFirstOrderPairModel(precision);
    const std::string path = TempPath("first_order_pairs.model");
    ASSERT_TRUE(model.Save(path).ok());
    absl::StatusOr<ChainModel> loaded = ChainModel::Load(path);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    EXPECT_EQ(loaded->order(), 1);
    EXPECT_EQ(loaded->pair_rows().buckets(), model.pair_rows().buckets());
    EXPECT_EQ(loaded->DenseWeights(loaded->space()),
              model.DenseWeights(model.space()));
    ExpectSamePredictions(model, *loaded, 4);
  }
  const ChainModel model = MakeFirstOrderPairModel();
  const std::string path = TempPath("first_order_pairs_damaged.model");
  ModelFile file = model.ToProto();
  file.mutable_features()->clear_pair_templates();
  ExpectLoadRejected(path, file, "without pair templates");
  // The pair rows' shape: L² weights per row.
  file = model.ToProto();
  file.mutable_pair_weights_f32()->RemoveLast();
  ExpectLoadRejected(path, file,
                     "first-order pair rows must hold 16 weights each");
  file = model.ToProto();
  file.add_pair_labels(0);
  file.add_pair_labels(1);
  ExpectLoadRejected(path, file, "no pair labels");
  // Pair rows under the plain first-order version (what a build that does
  // not know them would write or read) are refused, as is version 9 at
  // second order.
  file = model.ToProto();
  file.set_format_version(kModelFormatVersion);
  ExpectLoadRejected(path, file, "pair rows in a first-order file of format 6");
  file = model.ToProto();
  file.set_order(2);
  ExpectLoadRejected(path, file, "format version 9 does not match order 2");
  // No format holds a stacked model with first-order pair rows.
  ModelFile stacked = SecondOrderHeader();
  *stacked.mutable_first_stage() = MakeModel().ToProto();
  const WeightSpace space{&AllBuckets(), &AllBuckets(), nullptr};
  const absl::StatusOr<ChainModel> refused = ChainModel::Create(
      stacked, space, NormalWeights(space.Layout(4).dim(), 3));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("stacked"), std::string::npos);
}

}  // namespace
}  // namespace chaintag

namespace chaintag {
namespace {

// A stacked model: MakeModel's as first stage, and a second stage whose
// templates read the word and the four document attributes.
ChainModel MakeStackedModel() {
  ModelFile header;
  for (const char* label : {"O", "B-NP", "E-NP", "S-NP"}) {
    header.add_labels(label);
  }
  FeatureConfig* features = header.mutable_features();
  features->set_num_buckets(kBuckets);
  for (int a = 0; a <= kNumDocumentAttributes; ++a) {
    features->add_templates()->add_parts()->set_attribute(a);
  }
  header.set_train_scheme(IOBES);
  header.set_output_scheme(IOB2);
  *header.mutable_first_stage() = MakeModel().ToProto();
  header.set_document_word_attribute(0);
  std::vector<double> weights = RandomWeights(4);
  for (double& w : weights) w *= 0.5;
  absl::StatusOr<ChainModel> model =
      ChainModel::Create(header, AllBuckets(), weights);
  EXPECT_TRUE(model.ok()) << model.status();
  return std::move(*model);
}

std::vector<Sentence> MakeDocument() {
  return {WordSentence({"the", "cat", "sat", "on", "the", "mat"}),
          WordSentence({"a", "cat", "and", "a", "dog"}),
          WordSentence({"the", "dog", "sat"})};
}

TEST(StackedModelTest, TagsAsTheFirstStageThenTheDocumentAttributes) {
  const ChainModel model = MakeStackedModel();
  ASSERT_NE(model.first_stage(), nullptr);
  EXPECT_EQ(model.header().format_version(), kStackedFormatVersion);
  EXPECT_EQ(model.added_attributes(), kNumDocumentAttributes);
  const std::vector<Sentence> document = MakeDocument();
  TagScratch scratch;
  std::vector<std::vector<std::string>> tags;
  ASSERT_TRUE(model.TagDocument(document, &scratch, &tags).ok());
  // By hand: the first stage's tags (IOB2 already), the attributes, then
  // the second stage on each sentence.
  std::vector<std::vector<std::string>> first(document.size());
  for (size_t s = 0; s < document.size(); ++s) {
    ASSERT_TRUE(
        model.first_stage()->Tag(document[s], &scratch, &first[s]).ok());
  }
  std::vector<Sentence> stacked = document;
  ASSERT_TRUE(AppendDocumentAttributes(0, first, absl::MakeSpan(stacked)).ok());
  for (size_t s = 0; s < document.size(); ++s) {
    std::vector<std::string> expected;
    ASSERT_TRUE(model.Tag(stacked[s], &scratch, &expected).ok());
    EXPECT_EQ(tags[s], expected) << s;
  }
  // A plain sentence lacks the document attributes: Tag refuses it.
  std::vector<std::string> plain;
  EXPECT_FALSE(model.Tag(document[0], &scratch, &plain).ok());
  // A single-stage model tags each sentence alone.
  const ChainModel single = MakeModel();
  ASSERT_TRUE(single.TagDocument(document, &scratch, &tags).ok());
  for (size_t s = 0; s < document.size(); ++s) {
    std::vector<std::string> alone;
    ASSERT_TRUE(single.Tag(document[s], &scratch, &alone).ok());
    EXPECT_EQ(tags[s], alone);
  }
}

TEST(StackedModelTest, RoundTripsAndRefusesDamage) {
  const ChainModel model = MakeStackedModel();
  const std::string path = TempPath("stacked.model");
  ASSERT_TRUE(model.Save(path).ok());
  absl::StatusOr<ChainModel> loaded = ChainModel::Load(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->ToProto().SerializeAsString(),
            model.ToProto().SerializeAsString());
  const std::vector<Sentence> document = MakeDocument();
  TagScratch scratch;
  std::vector<std::vector<std::string>> a, b;
  ASSERT_TRUE(model.TagDocument(document, &scratch, &a).ok());
  ASSERT_TRUE(loaded->TagDocument(document, &scratch, &b).ok());
  EXPECT_EQ(a, b);
  // A damaged first stage, a word attribute changed, a first stage
  // dropped from a version-4 file: each refused, naming the file.
  ModelFile file = model.ToProto();
  file.mutable_first_stage()->set_transitions(0, 42.0);
  WriteAll(path, file.SerializeAsString());
  absl::StatusOr<ChainModel> damaged = ChainModel::Load(path);
  ASSERT_FALSE(damaged.ok());
  EXPECT_NE(damaged.status().message().find("first stage"), std::string::npos)
      << damaged.status();
  file = model.ToProto();
  file.set_document_word_attribute(1);
  WriteAll(path, file.SerializeAsString());
  EXPECT_FALSE(ChainModel::Load(path).ok());
  file = model.ToProto();
  file.clear_first_stage();
  WriteAll(path, file.SerializeAsString());
  damaged = ChainModel::Load(path);
  ASSERT_FALSE(damaged.ok());
  EXPECT_NE(damaged.status().message().find(path), std::string::npos);
}

}  // namespace
}  // namespace chaintag
