#include "models/transition_constraints.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "corpora/tag_scheme.h"
#include "gtest/gtest.h"
#include "models/chain_scores_testing.h"
#include "models/top_k_viterbi.h"
#include "models/viterbi.h"

namespace chaintag {
namespace {

constexpr double kMinusInf = -std::numeric_limits<double>::infinity();
using Kind = SchemeLabel::Kind;

const std::vector<std::string> kIobLabels = {"O", "B-A", "I-A", "B-B", "I-B"};
const std::vector<std::string> kIobesLabels = {"O", "B-A", "I-A", "E-A", "S-A"};
const std::vector<std::string> kIobesTwoTypes = {"O", "B-A", "E-A", "S-A",
                                                 "S-B"};

struct LabelSetCase {
  TagScheme scheme;
  std::vector<std::string> labels;
};

std::vector<LabelSetCase> SchemeCases() {
  return {{IOB1, kIobLabels},      {IOB2, kIobLabels},
          {IOBES, kIobesLabels},   {IOBES, kIobesTwoTypes},
          {IOB2, {"O", "B", "I"}}, {NONE, kIobLabels}};
}

// Every labeling of length T over L labels, first label slowest.
std::vector<std::vector<int32_t>> AllLabelings(int T, int L) {
  std::vector<std::vector<int32_t>> all;
  ForEachLabeling(T, L,
                  [&](const std::vector<int32_t>& y) { all.push_back(y); });
  return all;
}

// The independent validity oracle: a tag sequence is valid in a scheme when
// ConvertTags leaves it as it is (its canonical form).
bool ValidByConversion(const std::vector<std::string>& names, TagScheme scheme,
                       const std::vector<int32_t>& ids) {
  std::vector<std::string> tags;
  for (int32_t y : ids) tags.push_back(names[y]);
  return ConvertTags(tags, scheme, scheme) == tags;
}

using Scored = ScoredLabeling;

// The valid labelings (by the oracle) with their unconstrained scores, in
// TopKViterbi's order.
std::vector<Scored> ValidLabelingsSorted(const ChainScores& scores,
                                         const LabelSetCase& c) {
  return SortedLabelings(scores, [&](const std::vector<int32_t>& y) {
    return ValidByConversion(c.labels, c.scheme, y);
  });
}

TEST(ParseSchemeLabelTest, ReadsPrefixesAndTypesAsConllevalDoes) {
  SchemeLabel label = ParseSchemeLabel("B-NP", IOB2);
  EXPECT_EQ(label.kind, Kind::kBegin);
  EXPECT_EQ(label.type, "NP");
  label = ParseSchemeLabel("I-B-X", IOB1);  // split at the first '-'
  EXPECT_EQ(label.kind, Kind::kInside);
  EXPECT_EQ(label.type, "B-X");
  label = ParseSchemeLabel("E-PER", IOBES);
  EXPECT_EQ(label.kind, Kind::kEnd);
  EXPECT_EQ(label.type, "PER");
  label = ParseSchemeLabel("S-PER", IOBES);
  EXPECT_EQ(label.kind, Kind::kSingle);
  label = ParseSchemeLabel("I", IOB2);
  EXPECT_EQ(label.kind, Kind::kInside);
  EXPECT_EQ(label.type, "");
  label = ParseSchemeLabel("B-0", IOB2);
  EXPECT_EQ(label.kind, Kind::kBegin);
  EXPECT_EQ(label.type, "");
  EXPECT_EQ(ParseSchemeLabel("O", IOB2).kind, Kind::kOutside);
  // Unknown prefixes read as outside.
  EXPECT_EQ(ParseSchemeLabel("E-PER", IOB2).kind, Kind::kOutside);
  EXPECT_EQ(ParseSchemeLabel("S-PER", IOB1).kind, Kind::kOutside);
  EXPECT_EQ(ParseSchemeLabel("NN", IOBES).kind, Kind::kOutside);
  // A custom outside tag; a literal "O" still reads as outside.
  EXPECT_EQ(ParseSchemeLabel("NONE", IOB2, "NONE").kind, Kind::kOutside);
  EXPECT_EQ(ParseSchemeLabel("O", IOB2, "NONE").kind, Kind::kOutside);
  EXPECT_EQ(ParseSchemeLabel("B-NP", IOB2, "B-NP").kind, Kind::kOutside);
  // No chunk structure: everything is outside.
  EXPECT_EQ(ParseSchemeLabel("B-NP", NONE).kind, Kind::kOutside);
  EXPECT_EQ(ParseSchemeLabel("I-NP", TAG_SCHEME_UNSPECIFIED).kind,
            Kind::kOutside);
}

// Labels: 0 O, 1 B-A, 2 I-A, 3 B-B, 4 I-B.
TEST(TransitionConstraintsTest, Iob2TableByHand) {
  const TransitionConstraints c(kIobLabels, IOB2);
  ASSERT_EQ(c.num_labels(), 5);
  EXPECT_FALSE(c.trivial());
  EXPECT_TRUE(c.start_allowed(0));
  EXPECT_TRUE(c.start_allowed(1));
  EXPECT_FALSE(c.start_allowed(2));
  EXPECT_TRUE(c.start_allowed(3));
  EXPECT_FALSE(c.start_allowed(4));
  for (int y = 0; y < 5; ++y) EXPECT_TRUE(c.end_allowed(y)) << y;
  EXPECT_TRUE(c.transition_allowed(1, 2));   // B-A I-A
  EXPECT_TRUE(c.transition_allowed(2, 2));   // I-A I-A
  EXPECT_FALSE(c.transition_allowed(0, 2));  // O I-A
  EXPECT_FALSE(c.transition_allowed(3, 2));  // B-B I-A
  EXPECT_FALSE(c.transition_allowed(4, 2));  // I-B I-A
  EXPECT_TRUE(c.transition_allowed(3, 4));   // B-B I-B
  EXPECT_FALSE(c.transition_allowed(2, 4));  // I-A I-B
  for (int prev = 0; prev < 5; ++prev) {
    for (int next : {0, 1, 3}) {
      EXPECT_TRUE(c.transition_allowed(prev, next)) << prev << "->" << next;
    }
  }
}

TEST(TransitionConstraintsTest, Iob1TableByHand) {
  const TransitionConstraints c(kIobLabels, IOB1);
  EXPECT_TRUE(c.start_allowed(0));
  EXPECT_FALSE(c.start_allowed(1));  // B-A cannot open a sentence
  EXPECT_TRUE(c.start_allowed(2));   // I-A starts a chunk anywhere
  EXPECT_FALSE(c.start_allowed(3));
  EXPECT_TRUE(c.start_allowed(4));
  for (int y = 0; y < 5; ++y) EXPECT_TRUE(c.end_allowed(y)) << y;
  EXPECT_TRUE(c.transition_allowed(2, 1));   // I-A B-A
  EXPECT_TRUE(c.transition_allowed(1, 1));   // B-A B-A
  EXPECT_FALSE(c.transition_allowed(0, 1));  // O B-A
  EXPECT_FALSE(c.transition_allowed(4, 1));  // I-B B-A
  EXPECT_FALSE(c.transition_allowed(3, 1));  // B-B B-A
  EXPECT_TRUE(c.transition_allowed(0, 2));   // O I-A
  EXPECT_TRUE(c.transition_allowed(4, 2));   // I-B I-A
  EXPECT_TRUE(c.transition_allowed(1, 2));   // B-A I-A
  EXPECT_TRUE(c.transition_allowed(1, 0));   // B-A O
}

// Labels: 0 O, 1 B-A, 2 I-A, 3 E-A, 4 S-A.
TEST(TransitionConstraintsTest, IobesTableByHand) {
  const TransitionConstraints c(kIobesLabels, IOBES);
  const std::vector<bool> starts = {true, true, false, false, true};
  const std::vector<bool> ends = {true, false, false, true, true};
  for (int y = 0; y < 5; ++y) {
    EXPECT_EQ(c.start_allowed(y), starts[y]) << kIobesLabels[y];
    EXPECT_EQ(c.end_allowed(y), ends[y]) << kIobesLabels[y];
  }
  // allowed[prev][next]
  const std::vector<std::vector<bool>> allowed = {
      {true, true, false, false, true},   // O -> O, B-A, S-A
      {false, false, true, true, false},  // B-A -> I-A, E-A
      {false, false, true, true, false},  // I-A -> I-A, E-A
      {true, true, false, false, true},   // E-A -> O, B-A, S-A
      {true, true, false, false, true},   // S-A -> O, B-A, S-A
  };
  for (int prev = 0; prev < 5; ++prev) {
    for (int next = 0; next < 5; ++next) {
      EXPECT_EQ(c.transition_allowed(prev, next), allowed[prev][next])
          << kIobesLabels[prev] << " -> " << kIobesLabels[next];
    }
  }
  // Types must match inside a chunk.
  const TransitionConstraints two({"B-A", "E-A", "E-B", "S-B"}, IOBES);
  EXPECT_TRUE(two.transition_allowed(0, 1));
  EXPECT_FALSE(two.transition_allowed(0, 2));
  EXPECT_FALSE(two.transition_allowed(0, 3));
  EXPECT_TRUE(two.transition_allowed(1, 3));
}

TEST(TransitionConstraintsTest, NoneAndUnspecifiedAllowEverything) {
  for (TagScheme scheme : {NONE, TAG_SCHEME_UNSPECIFIED}) {
    const TransitionConstraints c(kIobesLabels, scheme);
    EXPECT_TRUE(c.trivial());
    for (int y = 0; y < 5; ++y) {
      EXPECT_TRUE(c.start_allowed(y));
      EXPECT_TRUE(c.end_allowed(y));
      for (int z = 0; z < 5; ++z) EXPECT_TRUE(c.transition_allowed(y, z));
    }
  }
  // A chunk scheme over outside-only labels restricts nothing either.
  EXPECT_TRUE(TransitionConstraints({"O", "NN"}, IOBES).trivial());
  EXPECT_FALSE(TransitionConstraints({"O", "B-A"}, IOB1).trivial());
}

TEST(TransitionConstraintsTest, UnknownPrefixesActAsOutside) {
  // Under IOB2, "NN" and "E-A" read as O.
  const TransitionConstraints c({"NN", "B-A", "I-A", "E-A"}, IOB2);
  const TransitionConstraints o({"O", "B-A", "I-A", "O"}, IOB2);
  for (int y = 0; y < 4; ++y) {
    EXPECT_EQ(c.start_allowed(y), o.start_allowed(y));
    EXPECT_EQ(c.end_allowed(y), o.end_allowed(y));
    for (int z = 0; z < 4; ++z) {
      EXPECT_EQ(c.transition_allowed(y, z), o.transition_allowed(y, z));
    }
  }
  EXPECT_FALSE(c.transition_allowed(0, 2));  // NN I-A
  EXPECT_FALSE(c.transition_allowed(3, 2));  // E-A I-A
  EXPECT_TRUE(c.transition_allowed(1, 3));   // B-A E-A (= B-A O)
  // A custom outside tag.
  const TransitionConstraints custom({"NONE", "B-A", "I-A"}, IOB2, "NONE");
  EXPECT_TRUE(custom.start_allowed(0));
  EXPECT_FALSE(custom.transition_allowed(0, 2));
  EXPECT_TRUE(custom.transition_allowed(1, 2));
}

TEST(TransitionConstraintsTest, IsValidMatchesConvertTagsFixedPoints) {
  for (const LabelSetCase& c : SchemeCases()) {
    const TransitionConstraints constraints(c.labels, c.scheme);
    const int L = static_cast<int>(c.labels.size());
    for (int T = 0; T <= 5; ++T) {
      int num_valid = 0;
      for (const std::vector<int32_t>& y : AllLabelings(T, L)) {
        const bool expected = ValidByConversion(c.labels, c.scheme, y);
        num_valid += expected;
        ASSERT_EQ(constraints.IsValid(y.data(), T), expected)
            << TagSchemeName(c.scheme) << " T=" << T << " first label "
            << (T > 0 ? c.labels[y[0]] : "");
      }
      // Some labelings are invalid in a chunk scheme (not the test's own
      // doing).
      if (c.scheme != NONE && T >= 1) {
        EXPECT_LT(num_valid, static_cast<int>(AllLabelings(T, L).size()));
      }
      EXPECT_GE(num_valid, 1);
    }
  }
}

TEST(TransitionConstraintsTest, ApplyCopiesAllowedScoresAndForbidsTheRest) {
  std::mt19937 rng(21);
  const RandomChain chain = MakeChain(3, 5, &rng, /*integer_scores=*/false);
  const TransitionConstraints c(kIobesLabels, IOBES);
  ConstrainedScoresBuffer buffer;
  absl::StatusOr<ChainScores> applied = c.Apply(chain.scores(), &buffer);
  ASSERT_TRUE(applied.ok()) << applied.status();
  EXPECT_EQ(applied->unary, chain.unary.data());
  EXPECT_EQ(applied->length, 3);
  EXPECT_EQ(applied->num_labels, 5);
  for (int y = 0; y < 5; ++y) {
    EXPECT_EQ(applied->start[y],
              c.start_allowed(y) ? chain.start[y] : kMinusInf);
    EXPECT_EQ(applied->end[y], c.end_allowed(y) ? chain.end[y] : kMinusInf);
    for (int z = 0; z < 5; ++z) {
      EXPECT_EQ(
          applied->transition[y * 5 + z],
          c.transition_allowed(y, z) ? chain.transition[y * 5 + z] : kMinusInf);
    }
  }
  // Trivial constraints hand the scores back untouched.
  const TransitionConstraints none(kIobesLabels, NONE);
  applied = none.Apply(chain.scores(), &buffer);
  ASSERT_TRUE(applied.ok());
  EXPECT_EQ(applied->transition, chain.transition.data());
  EXPECT_EQ(applied->start, chain.start.data());
  EXPECT_EQ(applied->end, chain.end.data());
  // The label counts must agree.
  const TransitionConstraints four({"O", "B-A", "I-A", "B-B"}, IOB2);
  EXPECT_FALSE(four.Apply(chain.scores(), &buffer).ok());
}

// Constrained Viterbi: the best valid labeling by enumeration, and with
// exact ties the same one TopKViterbi's order puts first.
TEST(TransitionConstraintsTest, ConstrainedViterbiIsTheBestValidLabeling) {
  std::mt19937 rng(22);
  ViterbiDecoder viterbi;
  ConstrainedScoresBuffer buffer;
  for (const LabelSetCase& c : SchemeCases()) {
    const TransitionConstraints constraints(c.labels, c.scheme);
    const int L = static_cast<int>(c.labels.size());
    for (int trial = 0; trial < 100; ++trial) {
      const int T = 1 + trial % 5;
      const RandomChain chain = MakeChain(T, L, &rng, trial % 2 == 1);
      const std::vector<Scored> valid = ValidLabelingsSorted(chain.scores(), c);
      ASSERT_FALSE(valid.empty());
      absl::StatusOr<ChainScores> applied =
          constraints.Apply(chain.scores(), &buffer);
      ASSERT_TRUE(applied.ok());
      std::vector<int32_t> labels(T);
      const double best = viterbi.Decode(*applied, labels.data());
      EXPECT_EQ(labels, valid[0].labels)
          << TagSchemeName(c.scheme) << " trial " << trial;
      EXPECT_NEAR(best, valid[0].score, 1e-12);
      EXPECT_EQ(ScoreLabeling(chain.scores(), labels.data()),
                ScoreLabeling(*applied, labels.data()));
      EXPECT_TRUE(constraints.IsValid(labels.data(), T));
    }
  }
}

// With pair scores: constrained Viterbi and n-best give the best valid
// labelings' scores, computed by hand.
TEST(TransitionConstraintsTest, ConstrainedDecodingWithPairScores) {
  std::mt19937 rng(24);
  ViterbiDecoder viterbi;
  TopKViterbi top_k;
  ConstrainedScoresBuffer buffer;
  for (const LabelSetCase& c : SchemeCases()) {
    const TransitionConstraints constraints(c.labels, c.scheme);
    const int L = static_cast<int>(c.labels.size());
    for (int trial = 0; trial < 40; ++trial) {
      const int T = 1 + trial % 4;
      const RandomChain chain = MakePairChain(T, L, &rng, false);
      std::vector<double> valid;
      ForEachLabeling(T, L, [&](const std::vector<int32_t>& y) {
        if (ValidByConversion(c.labels, c.scheme, y)) {
          valid.push_back(HandScore(chain, y));
        }
      });
      std::sort(valid.rbegin(), valid.rend());
      ASSERT_FALSE(valid.empty());
      absl::StatusOr<ChainScores> applied =
          constraints.Apply(chain.scores(), &buffer);
      ASSERT_TRUE(applied.ok());
      std::vector<int32_t> labels(T);
      EXPECT_NEAR(viterbi.Decode(*applied, labels.data()), valid[0], 1e-12)
          << TagSchemeName(c.scheme) << " trial " << trial;
      EXPECT_TRUE(constraints.IsValid(labels.data(), T));
      const int k = 5;
      std::vector<int32_t> labelings;
      std::vector<double> scores;
      const int m = top_k.Decode(*applied, k, &labelings, &scores);
      ASSERT_EQ(m, std::min<int>(k, valid.size()));
      for (int j = 0; j < m; ++j) {
        EXPECT_NEAR(scores[j], valid[j], 1e-12) << "rank " << j;
        EXPECT_TRUE(constraints.IsValid(labelings.data() + j * T, T));
      }
    }
  }
}

// Constrained n-best: exactly the valid labelings in order, all of them when
// K exceeds their count; NONE (trivial constraints) is the unconstrained
// n-best over all L^T labelings.
TEST(TransitionConstraintsTest, ConstrainedNBestIsTheSortedValidLabelings) {
  std::mt19937 rng(23);
  TopKViterbi top_k;
  ConstrainedScoresBuffer buffer;
  for (const LabelSetCase& c : SchemeCases()) {
    const TransitionConstraints constraints(c.labels, c.scheme);
    const int L = static_cast<int>(c.labels.size());
    for (int trial = 0; trial < 60; ++trial) {
      const int T = 1 + trial % 5;
      const RandomChain chain = MakeChain(T, L, &rng, trial % 2 == 1);
      const std::vector<Scored> valid = ValidLabelingsSorted(chain.scores(), c);
      const int n = static_cast<int>(valid.size());
      absl::StatusOr<ChainScores> applied =
          constraints.Apply(chain.scores(), &buffer);
      ASSERT_TRUE(applied.ok());
      int total = 1;
      for (int t = 0; t < T; ++t) total *= L;
      if (c.scheme == NONE) {
        ASSERT_EQ(n, total);
      }
      for (int k : {1, 2, 4, n, n + 1, n + 9, total + 1}) {
        std::vector<int32_t> labelings;
        std::vector<double> scores;
        const int m = top_k.Decode(*applied, k, &labelings, &scores);
        ASSERT_EQ(m, std::min(k, n))
            << TagSchemeName(c.scheme) << " T=" << T << " k=" << k;
        for (int j = 0; j < m; ++j) {
          const std::vector<int32_t> row(labelings.begin() + j * T,
                                         labelings.begin() + (j + 1) * T);
          EXPECT_EQ(row, valid[j].labels)
              << TagSchemeName(c.scheme) << " trial " << trial << " rank " << j;
          EXPECT_NEAR(scores[j], valid[j].score, 1e-12);
          EXPECT_TRUE(std::isfinite(scores[j]));
        }
      }
    }
  }
}

TEST(TransitionConstraintsTest, NoValidLabelingIsReportedAsMinusInfinity) {
  std::mt19937 rng(24);
  // IOBES over {B-A, E-A}: only even lengths can be labeled (B-A E-A ...).
  const TransitionConstraints c({"B-A", "E-A"}, IOBES);
  ViterbiDecoder viterbi;
  TopKViterbi top_k;
  ConstrainedScoresBuffer buffer;
  for (int T = 1; T <= 5; ++T) {
    const RandomChain chain = MakeChain(T, 2, &rng, /*integer_scores=*/false);
    absl::StatusOr<ChainScores> applied = c.Apply(chain.scores(), &buffer);
    ASSERT_TRUE(applied.ok());
    std::vector<int32_t> labels(T);
    const double best = viterbi.Decode(*applied, labels.data());
    std::vector<int32_t> labelings;
    std::vector<double> scores;
    const int m = top_k.Decode(*applied, 5, &labelings, &scores);
    if (T % 2 == 1) {
      EXPECT_EQ(best, kMinusInf) << T;
      EXPECT_EQ(m, 0) << T;
    } else {
      EXPECT_TRUE(std::isfinite(best)) << T;
      EXPECT_EQ(m, 1) << T;  // B-A E-A B-A E-A ... only
      EXPECT_TRUE(c.IsValid(labels.data(), T));
    }
  }
}

}  // namespace
}  // namespace chaintag
