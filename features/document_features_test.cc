#include "features/document_features.h"

#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "corpora/sentence.h"
#include "corpora/tag_scheme.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace chaintag {
namespace {

using ::testing::ElementsAre;

// A sentence of words (attribute 0) and a second attribute "x".
Sentence MakeSentence(const std::string& words) {
  Sentence sentence;
  sentence.num_attributes = 2;
  for (absl::string_view word : absl::StrSplit(words, ' ')) {
    sentence.attributes.emplace_back(word);
    sentence.attributes.emplace_back("x");
  }
  return sentence;
}

std::vector<std::string> Split(const std::string& text) {
  return absl::StrSplit(text, ' ');
}

// Token t's four document attributes.
std::vector<std::string> Attributes(const Sentence& s, int t) {
  std::vector<std::string> values;
  for (int a = 2; a < 2 + kNumDocumentAttributes; ++a) {
    values.push_back(s.attribute(t, a));
  }
  return values;
}

TEST(DocumentFeaturesTest, HandComputedDocument) {
  std::vector<Sentence> document = {
      MakeSentence("Leicester City beat Leeds"),
      MakeSentence("Leicester scored at leicester"),
      MakeSentence("Leicester City fans")};
  const std::vector<std::vector<std::string>> labels = {
      Split("B-ORG I-ORG O B-ORG"), Split("B-LOC O O O"),
      Split("B-ORG I-ORG O")};
  ASSERT_TRUE(
      AppendDocumentAttributes(0, labels, absl::MakeSpan(document)).ok());
  for (const Sentence& s : document) ASSERT_EQ(s.num_attributes, 6);
  // The own attributes stay in place.
  EXPECT_EQ(document[1].attribute(3, 0), "leicester");
  EXPECT_EQ(document[1].attribute(3, 1), "x");
  // "Leicester" in sentence 0: the other exact occurrences are B-LOC and
  // B-ORG (a tie, to the smaller "B-LOC"); lowercased, "leicester" (O)
  // joins: B-LOC, B-ORG, O each once -> "B-LOC". Its entity "Leicester
  // City" is mentioned once more as ORG. The longest other entity with
  // "Leicester" is sentence 2's "Leicester City", where it comes first.
  EXPECT_THAT(Attributes(document[0], 0),
              ElementsAre("B-LOC", "B-LOC", "ORG", "B-ORG"));
  // "beat": no other occurrence, in no entity, in no entity elsewhere.
  EXPECT_THAT(Attributes(document[0], 2), ElementsAre("-", "-", "-", "-"));
  // "Leicester" in sentence 1: other exact occurrences are B-ORG twice;
  // lowercased adds the O of "leicester": B-ORG 2, O 1. Its entity
  // "Leicester" (LOC) has no other mention of that surface string.
  EXPECT_THAT(Attributes(document[1], 0),
              ElementsAre("B-ORG", "B-ORG", "-", "B-ORG"));
  // "leicester": no other exact occurrence; lowercased: B-ORG 2, B-LOC 1;
  // in no entity; no entity contains the word as written.
  EXPECT_THAT(Attributes(document[1], 3), ElementsAre("-", "B-ORG", "-", "-"));
  // "City" in sentence 2: the other "City" is I-ORG, in sentence 0's
  // "Leicester City", not first.
  EXPECT_THAT(Attributes(document[2], 1),
              ElementsAre("I-ORG", "I-ORG", "ORG", "I-ORG"));
}

// The four attributes as the header defines them, written out by scanning
// the whole document for every token.
std::vector<std::string> BruteForceAttributes(
    const std::vector<Sentence>& document,
    const std::vector<std::vector<std::string>>& labels, int s, int t) {
  struct Mention {
    int sentence, begin, end;
    std::string type, surface;
  };
  std::vector<Mention> mentions;
  for (int d = 0; d < static_cast<int>(document.size()); ++d) {
    for (const Chunk& chunk : ExtractChunks(labels[d])) {
      std::vector<std::string> words;
      for (int u = chunk.begin; u < chunk.end; ++u) {
        words.push_back(document[d].attribute(u, 0));
      }
      mentions.push_back(
          {d, chunk.begin, chunk.end, chunk.type, absl::StrJoin(words, " ")});
    }
  }
  auto majority = [](const std::map<std::string, int>& counts) {
    std::string best = "-";
    int best_count = 0;
    for (const auto& [key, count] : counts) {
      if (count > best_count) best = key, best_count = count;
    }
    return best;
  };
  const std::string word = document[s].attribute(t, 0);
  std::map<std::string, int> exact, lower;
  for (int d = 0; d < static_cast<int>(document.size()); ++d) {
    for (int u = 0; u < document[d].size(); ++u) {
      if (d == s && u == t) continue;
      const std::string other = document[d].attribute(u, 0);
      if (other == word) ++exact[labels[d][u]];
      if (absl::AsciiStrToLower(other) == absl::AsciiStrToLower(word)) {
        ++lower[labels[d][u]];
      }
    }
  }
  int own = -1;
  for (int m = 0; m < static_cast<int>(mentions.size()); ++m) {
    if (mentions[m].sentence == s && t >= mentions[m].begin &&
        t < mentions[m].end) {
      own = m;
    }
  }
  std::string surface = "-";
  if (own >= 0) {
    std::map<std::string, int> types;
    for (int m = 0; m < static_cast<int>(mentions.size()); ++m) {
      if (m != own && mentions[m].surface == mentions[own].surface) {
        ++types[mentions[m].type];
      }
    }
    surface = majority(types);
  }
  int longest = -1;
  for (int m = 0; m < static_cast<int>(mentions.size()); ++m) {
    if (m == own) continue;
    bool holds = false;
    for (int u = mentions[m].begin; u < mentions[m].end; ++u) {
      holds |= document[mentions[m].sentence].attribute(u, 0) == word;
    }
    const auto length = [&](int k) {
      return mentions[k].end - mentions[k].begin;
    };
    if (holds && (longest < 0 || length(m) > length(longest))) longest = m;
  }
  std::string containing = "-";
  if (longest >= 0) {
    const Mention& m = mentions[longest];
    containing =
        (document[m.sentence].attribute(m.begin, 0) == word ? "B-" : "I-") +
        m.type;
  }
  return {majority(exact), majority(lower), surface, containing};
}

// Random documents of few words, repeated often and in many entities: every
// token's attributes are the brute-force ones.
TEST(DocumentFeaturesTest, RandomDocumentsMatchBruteForce) {
  std::mt19937 rng(7);
  const std::vector<std::string> words = {"a", "A", "b", "B", "c"};
  const std::vector<std::string> tags = {"O", "B-X", "I-X", "B-Y", "I-Y"};
  std::uniform_int_distribution<int> word(0, 4), tag(0, 4), length(1, 6);
  for (int round = 0; round < 50; ++round) {
    std::vector<Sentence> document;
    std::vector<std::vector<std::string>> labels;
    for (int s = 0, n = length(rng); s < n; ++s) {
      std::vector<std::string> text, sentence_labels;
      for (int t = 0, m = length(rng); t < m; ++t) {
        text.push_back(words[word(rng)]);
        std::string label = tags[tag(rng)];
        // IOB2: an I- continues the same type only.
        if (label[0] == 'I' &&
            (sentence_labels.empty() || sentence_labels.back().size() < 2 ||
             sentence_labels.back().substr(2) != label.substr(2))) {
          label[0] = 'B';
        }
        sentence_labels.push_back(label);
      }
      document.push_back(MakeSentence(absl::StrJoin(text, " ")));
      labels.push_back(sentence_labels);
    }
    const std::vector<Sentence> before = document;
    ASSERT_TRUE(
        AppendDocumentAttributes(0, labels, absl::MakeSpan(document)).ok());
    for (int s = 0; s < static_cast<int>(document.size()); ++s) {
      for (int t = 0; t < document[s].size(); ++t) {
        ASSERT_EQ(Attributes(document[s], t),
                  BruteForceAttributes(before, labels, s, t))
            << "round " << round << " sentence " << s << " token " << t;
      }
    }
  }
}

TEST(DocumentFeaturesTest, ASentenceElsewhereChangesTheFeatures) {
  const std::vector<std::string> words = {"Smith said", "Smith left",
                                          "Paris is big"};
  std::vector<std::vector<std::string>> labels = {
      Split("B-PER O"), Split("B-PER O"), Split("B-LOC O O")};
  auto attributes_of_first =
      [&](const std::vector<std::vector<std::string>>& labels) {
        std::vector<Sentence> document;
        for (const std::string& w : words) document.push_back(MakeSentence(w));
        EXPECT_TRUE(
            AppendDocumentAttributes(0, labels, absl::MakeSpan(document)).ok());
        return Attributes(document[0], 0);
      };
  EXPECT_THAT(attributes_of_first(labels),
              ElementsAre("B-PER", "B-PER", "PER", "B-PER"));
  // Only sentence 1's labels change: sentence 0's attributes follow.
  labels[1] = Split("B-ORG O");
  EXPECT_THAT(attributes_of_first(labels),
              ElementsAre("B-ORG", "B-ORG", "ORG", "B-ORG"));
  // A sentence of another document does not count: alone, no evidence.
  std::vector<Sentence> alone = {MakeSentence("Smith said")};
  ASSERT_TRUE(
      AppendDocumentAttributes(0, {Split("B-PER O")}, absl::MakeSpan(alone))
          .ok());
  EXPECT_THAT(Attributes(alone[0], 0), ElementsAre("-", "-", "-", "-"));
}

TEST(DocumentFeaturesTest, MismatchesAreRefusedAndChangeNothing) {
  std::vector<Sentence> document = {MakeSentence("a b")};
  EXPECT_FALSE(
      AppendDocumentAttributes(0, {Split("O")}, absl::MakeSpan(document)).ok());
  EXPECT_FALSE(AppendDocumentAttributes(0, {}, absl::MakeSpan(document)).ok());
  EXPECT_FALSE(
      AppendDocumentAttributes(2, {Split("O O")}, absl::MakeSpan(document))
          .ok());
  EXPECT_EQ(document[0].num_attributes, 2);
  EXPECT_EQ(document[0].attributes.size(), 4u);
}

}  // namespace
}  // namespace chaintag
