#include "corpora/tag_scheme.h"

#include <cstdlib>
#include <fstream>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "corpora/conll_reader.h"
#include "corpora/conlleval.h"
#include "corpora/corpus.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace chaintag {

void PrintTo(const Chunk& c, std::ostream* os) {
  *os << "[" << c.begin << "," << c.end << ")" << c.type;
}

namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using Tags = std::vector<std::string>;

TEST(TagSchemeTest, ParseIsCaseInsensitive) {
  EXPECT_EQ(*ParseTagScheme("iob1"), IOB1);
  EXPECT_EQ(*ParseTagScheme("IOB2"), IOB2);
  EXPECT_EQ(*ParseTagScheme("IoBeS"), IOBES);
  EXPECT_EQ(*ParseTagScheme("none"), NONE);
  const auto bad = ParseTagScheme("bio");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()),
              ::testing::HasSubstr("\"bio\""));
}

TEST(TagSchemeTest, NamesRoundTrip) {
  for (TagScheme s : {IOB1, IOB2, IOBES, NONE}) {
    EXPECT_EQ(*ParseTagScheme(TagSchemeName(s)), s);
  }
  EXPECT_EQ(TagSchemeName(IOBES), "iobes");
  EXPECT_EQ(TagSchemeName(TAG_SCHEME_UNSPECIFIED), "unspecified");
}

// Adjacent chunks of one type: PER PER, LOC LOC.
const Tags kIob1 = {"I-PER", "I-PER", "B-PER", "O",     "I-LOC",
                    "B-LOC", "I-ORG", "O",     "I-MISC"};
const Tags kIob2 = {"B-PER", "I-PER", "B-PER", "O",     "B-LOC",
                    "B-LOC", "B-ORG", "O",     "B-MISC"};
const Tags kIobes = {"B-PER", "E-PER", "S-PER", "O",     "S-LOC",
                     "S-LOC", "S-ORG", "O",     "S-MISC"};
const std::vector<Chunk> kChunks = {{0, 2, "PER"}, {2, 3, "PER"},
                                    {4, 5, "LOC"}, {5, 6, "LOC"},
                                    {6, 7, "ORG"}, {8, 9, "MISC"}};

TEST(TagSchemeTest, ExtractChunksSameInEveryScheme) {
  EXPECT_THAT(ExtractChunks(kIob1), ElementsAreArray(kChunks));
  EXPECT_THAT(ExtractChunks(kIob2), ElementsAreArray(kChunks));
  EXPECT_THAT(ExtractChunks(kIobes), ElementsAreArray(kChunks));
  EXPECT_TRUE(ExtractChunks({}).empty());
  EXPECT_TRUE(ExtractChunks({"O", "O"}).empty());
}

TEST(TagSchemeTest, ConvertsBetweenAllSchemes) {
  const std::vector<std::pair<TagScheme, const Tags*>> all = {
      {IOB1, &kIob1}, {IOB2, &kIob2}, {IOBES, &kIobes}};
  for (const auto& [from, from_tags] : all) {
    for (const auto& [to, to_tags] : all) {
      EXPECT_EQ(ConvertTags(*from_tags, from, to), *to_tags)
          << TagSchemeName(from) << " -> " << TagSchemeName(to);
    }
  }
}

// Invalid in every scheme: I-X after O, B-X ... E-X followed by I-X, S-X
// followed by E-X, E-X after O.
const Tags kInvalid = {"O",    "I-NP", "I-NP", "I-VP", "B-NP", "E-NP",
                       "I-NP", "S-PP", "E-PP", "O",    "E-X"};

TEST(TagSchemeTest, ExtractChunksOnInvalidSequence) {
  EXPECT_THAT(
      ExtractChunks(kInvalid),
      ElementsAre(Chunk{1, 3, "NP"}, Chunk{3, 4, "VP"}, Chunk{4, 6, "NP"},
                  Chunk{6, 7, "NP"}, Chunk{7, 8, "PP"}, Chunk{8, 9, "PP"},
                  Chunk{10, 11, "X"}));
}

TEST(TagSchemeTest, ConvertsInvalidSequenceChunkForChunk) {
  const Tags iob2 = {"O",    "B-NP", "I-NP", "B-VP", "B-NP", "I-NP",
                     "B-NP", "B-PP", "B-PP", "O",    "B-X"};
  const Tags iob1 = {"O",    "I-NP", "I-NP", "I-VP", "I-NP", "I-NP",
                     "B-NP", "I-PP", "B-PP", "O",    "I-X"};
  const Tags iobes = {"O",    "B-NP", "E-NP", "S-VP", "B-NP", "E-NP",
                      "S-NP", "S-PP", "S-PP", "O",    "S-X"};
  for (TagScheme from : {IOB1, IOB2, IOBES}) {
    EXPECT_EQ(ConvertTags(kInvalid, from, IOB2), iob2);
    EXPECT_EQ(ConvertTags(kInvalid, from, IOB1), iob1);
    EXPECT_EQ(ConvertTags(kInvalid, from, IOBES), iobes);
  }
  EXPECT_EQ(ExtractChunks(iob1), ExtractChunks(kInvalid));
  EXPECT_EQ(ExtractChunks(iob2), ExtractChunks(kInvalid));
  EXPECT_EQ(ExtractChunks(iobes), ExtractChunks(kInvalid));
}

TEST(TagSchemeTest, TypesKeepHyphensAfterTheFirst) {
  const Tags tags = {"B-A-B", "I-A-B", "I-A"};
  EXPECT_THAT(ExtractChunks(tags),
              ElementsAre(Chunk{0, 2, "A-B"}, Chunk{2, 3, "A"}));
  EXPECT_EQ(ConvertTags(tags, IOB2, IOBES), Tags({"B-A-B", "E-A-B", "S-A"}));
}

TEST(TagSchemeTest, UntypedTagsAndCustomOutside) {
  // "B"/"I" without a type form chunks of empty type.
  EXPECT_THAT(ExtractChunks({"B", "I", "O", "I"}),
              ElementsAre(Chunk{0, 2, ""}, Chunk{3, 4, ""}));
  EXPECT_EQ(ConvertTags({"B", "I", "O", "I"}, IOB2, IOBES),
            Tags({"B", "E", "O", "S"}));
  EXPECT_THAT(ExtractChunks({"NIL", "B-X", "I-X", "NIL"}, "NIL"),
              ElementsAre(Chunk{1, 3, "X"}));
  EXPECT_EQ(ConvertTags({"NIL", "I-X", "B-X", "NIL"}, IOB1, IOB2, "NIL"),
            Tags({"NIL", "B-X", "B-X", "NIL"}));
}

TEST(TagSchemeTest, NoneIsLeftUnchanged) {
  const Tags pos = {"NN", "I-VP", "O"};
  EXPECT_EQ(ConvertTags(pos, NONE, IOB2), pos);
  EXPECT_EQ(ConvertTags(pos, IOB2, NONE), pos);
  EXPECT_EQ(ConvertTags(pos, TAG_SCHEME_UNSPECIFIED, IOB1), pos);
}

TEST(TagSchemeTest, SameSchemeCanonicalises) {
  EXPECT_EQ(ConvertTags({"O", "I-NP", "I-NP"}, IOB2, IOB2),
            Tags({"O", "B-NP", "I-NP"}));
  EXPECT_EQ(ConvertTags(kIob2, IOB2, IOB2), kIob2);
}

// Brute force against the conlleval port on random (mostly invalid)
// sequences: without S and without E followed by B, ExtractChunks must find
// the script's chunks. The guess is the canonical IOB2 re-encoding, which the
// script reads like ExtractChunks; so every gold chunk must count as correct.
// Not in the alphabet: prefixes other than B I E O ("NN", ".", "[", "]").
// With those the script can leave a chunk open across the sentence boundary
// or count overlapping chunks, which a per-sentence chunk list cannot show.
TEST(TagSchemeTest, AgreesWithConllevalOnSequencesWithoutIobes) {
  const std::vector<std::string> alphabet = {"O",   "B-X", "I-X", "E-X", "B-Y",
                                             "I-Y", "E-Y", "B",   "I",   "E",
                                             "O-X", "B-0", "I-0"};
  std::mt19937 rng(7);
  int checked = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    Tags gold(1 + rng() % 7);
    for (std::string& tag : gold) tag = alphabet[rng() % alphabet.size()];
    bool e_then_b = false;
    for (size_t t = 1; t < gold.size(); ++t) {
      e_then_b |= gold[t - 1][0] == 'E' && gold[t][0] == 'B';
    }
    if (e_then_b) continue;
    const std::vector<Chunk> chunks = ExtractChunks(gold);
    ConllevalScorer scorer;
    scorer.AddSentence(gold, ConvertTags(gold, IOB1, IOB2));
    scorer.Finish();
    ASSERT_EQ(scorer.overall().gold, static_cast<int64_t>(chunks.size()))
        << ::testing::PrintToString(gold);
    ASSERT_EQ(scorer.overall().found, static_cast<int64_t>(chunks.size()))
        << ::testing::PrintToString(gold);
    ASSERT_EQ(scorer.overall().correct, static_cast<int64_t>(chunks.size()))
        << ::testing::PrintToString(gold);
    ++checked;
  }
  EXPECT_GT(checked, 10000);
}

TagSchemeInference Infer(const std::vector<Tags>& sentences) {
  TagSchemeInference inference;
  for (const Tags& tags : sentences) inference.Add(tags);
  return inference;
}

TEST(TagSchemeInferenceTest, ChunkTagsAndTheirScheme) {
  // CoNLL-2000: every chunk begins with B.
  TagSchemeInference iob2 =
      Infer({{"B-NP", "I-NP", "B-VP", "O"}, {"B-PP", "B-NP", "I-NP"}});
  EXPECT_EQ(iob2.scheme(), IOB2);
  EXPECT_TRUE(iob2.typed());
  // CoNLL-2003: I begins a chunk, B only between two of a type.
  EXPECT_EQ(Infer({{"I-PER", "O", "I-LOC", "I-LOC"},
                   {"I-ORG", "B-ORG", "O"},
                   {"O", "I-MISC"}})
                .scheme(),
            IOB1);
  // A chunk of another type after I-X begins there too.
  EXPECT_EQ(Infer({{"I-PER", "I-LOC"}}).scheme(), IOB1);
  // A stray I-X in IOB2 data does not outvote the B-X starts.
  EXPECT_EQ(Infer({{"B-NP", "I-NP", "O", "I-NP"}, {"B-VP"}}).scheme(), IOB2);
  EXPECT_EQ(Infer({{"B-PER", "E-PER", "O", "S-LOC"}}).scheme(), IOBES);
  // Untyped chunk tags (word segmentation): chunks of one type.
  TagSchemeInference untyped = Infer({{"B", "I", "B", "B", "I", "I"}});
  EXPECT_EQ(untyped.scheme(), IOB2);
  EXPECT_FALSE(untyped.typed());
  EXPECT_EQ(Infer({{"B", "E", "S", "B", "I", "E"}}).scheme(), IOBES);
  EXPECT_EQ(Infer({{"B", "O", "I"}, {"I", "O"}}).scheme(), IOB1);
}

TEST(TagSchemeInferenceTest, OtherLabelsArePlain) {
  // POS tags: a label outside the chunk form anywhere makes all plain.
  TagSchemeInference pos = Infer({{"NN", "VBZ", "DT"}});
  EXPECT_EQ(pos.scheme(), NONE);
  EXPECT_EQ(pos.plain_label(), "NN");
  TagSchemeInference mixed = Infer({{"B-NP", "I-NP"}, {"O", "IN", "B-NP"}});
  EXPECT_EQ(mixed.scheme(), NONE);
  EXPECT_EQ(mixed.plain_label(), "IN");
  // "BI" and "Is" are not B-/I- tags; letters of OCR are plain.
  EXPECT_EQ(Infer({{"BI", "I"}}).scheme(), NONE);
  EXPECT_EQ(Infer({{"b", "i"}}).scheme(), NONE);
  // Only "O": no chunk at all.
  EXPECT_EQ(Infer({{"O", "O"}}).scheme(), NONE);
  EXPECT_EQ(Infer({}).scheme(), NONE);
}

}  // namespace
}  // namespace chaintag
