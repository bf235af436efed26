// The output formats of `tag --pipeline`, pinned on small sentences.

#include "tagging/tag_output.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace chaintag {
namespace {

using ::testing::HasSubstr;

std::vector<OutputStage> PosChunkStages() {
  return {{"pos", "pos", false}, {"chunk", "chunk", true}};
}

// "Rockwell International Corp. said it signed a tentative agreement.",
// tokenized, with offsets into that line.
TaggedSentence Rockwell() {
  TaggedSentence sentence;
  sentence.tokens = {
      "Rockwell", "International", "Corp.",     "said", "it", "signed",
      "a",        "tentative",     "agreement", "."};
  sentence.offsets = {{0, 8},   {9, 22},  {23, 28}, {29, 33}, {34, 36},
                      {37, 43}, {44, 45}, {46, 55}, {56, 65}, {65, 66}};
  sentence.line = 3;
  StageOutput pos;
  pos.tags = {"NNP", "NNP", "NNP", "VBD", "PRP", "VBD", "DT", "JJ", "NN", "."};
  pos.score = 40.5;
  StageOutput chunk;
  chunk.tags = {"B-NP", "I-NP", "I-NP", "B-VP", "B-NP",
                "B-VP", "B-NP", "I-NP", "I-NP", "O"};
  chunk.score = 31.25;
  sentence.outputs = {pos, chunk};
  return sentence;
}

TEST(TagOutputTest, ParsesFormatNames) {
  EXPECT_EQ(*ParseOutputFormat("conll"), OutputFormat::kConll);
  EXPECT_EQ(*ParseOutputFormat("bracketed"), OutputFormat::kBracketed);
  EXPECT_EQ(*ParseOutputFormat("json"), OutputFormat::kJson);
  EXPECT_THAT(ParseOutputFormat("xml").status().message(),
              HasSubstr("conll | bracketed | json"));
}

TEST(TagOutputTest, Conll) {
  std::string out;
  AppendConll(Rockwell(), 1, &out);
  EXPECT_EQ(out,
            "Rockwell NNP B-NP\n"
            "International NNP I-NP\n"
            "Corp. NNP I-NP\n"
            "said VBD B-VP\n"
            "it PRP B-NP\n"
            "signed VBD B-VP\n"
            "a DT B-NP\n"
            "tentative JJ I-NP\n"
            "agreement NN I-NP\n"
            ". . O\n"
            "\n");
}

TEST(TagOutputTest, ConllWithNBestColumns) {
  TaggedSentence sentence;
  sentence.tokens = {"it", "rained"};
  StageOutput pos;
  pos.tags = {"PRP", "VBD"};
  StageOutput chunk;
  chunk.tags = {"B-NP", "B-VP"};
  chunk.nbest_tags = {{"B-NP", "B-VP"}, {"B-NP", "I-NP"}};
  chunk.nbest_scores = {3, 1};
  sentence.outputs = {pos, chunk};
  std::string out;
  AppendConll(sentence, 3, &out);
  EXPECT_EQ(out, "it PRP B-NP B-NP _\nrained VBD B-VP I-NP _\n\n");
}

TEST(TagOutputTest, Bracketed) {
  std::string out;
  AppendBracketed(Rockwell(), 1, &out);
  EXPECT_EQ(out,
            "[NP Rockwell International Corp. ] [VP said ] [NP it ] "
            "[VP signed ] [NP a tentative agreement ] .\n");
  // Tokens outside chunks are bare, also at the start; IOB1 reads alike.
  EXPECT_EQ(Bracketed({"In", "Paris", ",", "John", "Mary", "met"},
                      {"O", "I-LOC", "O", "I-PER", "B-PER", "O"}),
            "In [LOC Paris ] , [PER John ] [PER Mary ] met");
  EXPECT_EQ(Bracketed({}, {}), "");
}

TEST(TagOutputTest, BracketedNBest) {
  TaggedSentence sentence;
  sentence.tokens = {"it", "rained"};
  StageOutput chunk;
  chunk.tags = {"B-NP", "B-VP"};
  chunk.nbest_tags = {{"B-NP", "B-VP"}, {"B-NP", "I-NP"}};
  chunk.nbest_scores = {3, 1.5};
  sentence.outputs = {chunk};
  std::string out;
  AppendBracketed(sentence, 0, &out);
  EXPECT_EQ(out, "3.0000\t[NP it ] [VP rained ]\n1.5000\t[NP it rained ]\n");
}

TEST(TagOutputTest, ChoosesTheStageToBracket) {
  std::vector<OutputStage> stages = PosChunkStages();
  EXPECT_EQ(*BracketStage(stages), 1);
  stages.push_back({"ner", "ner", true});
  EXPECT_EQ(*BracketStage(stages), 1);  // "chunk" wins over the last one
  EXPECT_EQ(*BracketStage(stages, "ner"), 2);
  EXPECT_THAT(BracketStage(stages, "pos").status().message(),
              HasSubstr("does not write chunk tags"));
  EXPECT_THAT(BracketStage(stages, "srl").status().message(),
              HasSubstr("no stage 'srl'"));
  EXPECT_FALSE(BracketStage({{"pos", "pos", false}}).ok());
  EXPECT_EQ(*BracketStage({{"pos", "pos", false}, {"ner", "ner", true}}), 1);
}

TEST(TagOutputTest, Json) {
  TaggedSentence sentence;
  sentence.tokens = {"John", "left", "."};
  sentence.offsets = {{0, 4}, {5, 9}, {9, 10}};
  sentence.line = 2;
  StageOutput pos;
  pos.tags = {"NNP", "VBD", "."};
  pos.score = 12.5;
  pos.margin = 0.75;
  StageOutput chunk;
  chunk.tags = {"B-NP", "B-VP", "O"};
  chunk.score = 7;
  chunk.margin = 2;
  chunk.nbest_tags = {{"B-NP", "B-VP", "O"}, {"B-NP", "I-NP", "O"}};
  chunk.nbest_scores = {7, 5};
  sentence.outputs = {pos, chunk};
  std::string out;
  ASSERT_TRUE(AppendJson(PosChunkStages(), sentence, &out).ok());
  EXPECT_EQ(
      out, R"({"line":2,"tokens":["John","left","."],)"
           R"("offsets":[{"begin":0,"end":4},{"begin":5,"end":9},)"
           R"({"begin":9,"end":10}],)"
           R"("stages":[{"name":"pos","column":"pos","tags":["NNP","VBD","."],)"
           R"("score":12.5,"margin":0.75},)"
           R"({"name":"chunk","column":"chunk","tags":["B-NP","B-VP","O"],)"
           R"("spans":[{"begin":0,"end":1,"type":"NP","text":"John"},)"
           R"({"begin":1,"end":2,"type":"VP","text":"left"}],)"
           R"("score":7,"margin":2,)"
           R"("nbest":[{"tags":["B-NP","B-VP","O"],"score":7},)"
           R"({"tags":["B-NP","I-NP","O"],"score":5}]}]})"
           "\n");
}

TEST(TagOutputTest, JsonSpansOfAMultiTokenChunkAndAnEmptySentence) {
  std::string out;
  ASSERT_TRUE(AppendJson(PosChunkStages(), Rockwell(), &out).ok());
  EXPECT_THAT(out, HasSubstr(R"({"begin":0,"end":3,"type":"NP",)"
                             R"("text":"Rockwell International Corp."})"));
  EXPECT_THAT(out, HasSubstr(R"("line":3)"));
  EXPECT_EQ(out.back(), '\n');
  EXPECT_EQ(out.find('\n'), out.size() - 1);  // one line

  TaggedSentence empty;
  empty.outputs.resize(2);
  out.clear();
  ASSERT_TRUE(AppendJson(PosChunkStages(), empty, &out).ok());
  EXPECT_EQ(out, R"({"stages":[{"name":"pos","column":"pos"},)"
                 R"({"name":"chunk","column":"chunk"}]})"
                 "\n");
}

}  // namespace
}  // namespace chaintag
