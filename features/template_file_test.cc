#include "features/template_file.h"

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "corpora/sentence.h"
#include "corpora/sentence_testing.h"
#include "features/feature_config.pb.h"
#include "features/feature_extractor.h"
#include "features/temp_files_testing.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace chaintag {
namespace {

using sentence_testing::RowSentence;

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// "He reckons the", words and POS tags.
Sentence HeReckons() {
  return RowSentence({{"He", "PRP"}, {"reckons", "VBZ"}, {"the", "DT"}});
}

TemplateFile Parse(const std::string& text) {
  absl::StatusOr<TemplateFile> file = ParseTemplateFile(text, "t.template");
  EXPECT_TRUE(file.ok()) << file.status();
  return file.ok() ? *std::move(file) : TemplateFile();
}

FeatureConfig ConfigOf(const TemplateFile& file,
                       FeatureConfig::BoundaryMarkers markers) {
  FeatureConfig config;
  config.set_bias(false);
  config.set_boundary_markers(markers);
  for (const FeatureTemplate& t : file.templates) *config.add_templates() = t;
  for (const FeatureTemplate& t : file.pair_templates) {
    *config.add_pair_templates() = t;
  }
  return config;
}

// Per position, the feature names; and checks that each name's bucket is
// the one ExtractHashes gives for the same feature.
std::vector<std::vector<std::string>> Names(const FeatureExtractor& fx,
                                            const Sentence& sentence) {
  std::vector<std::vector<NamedFeature>> named;
  absl::Status status = fx.ExtractNames(sentence, &named);
  EXPECT_TRUE(status.ok()) << status;
  std::vector<int32_t> offsets;
  std::vector<uint64_t> hashes;
  std::vector<float> values;
  EXPECT_TRUE(fx.ExtractHashes(sentence, &offsets, &hashes, &values).ok());
  std::vector<std::vector<std::string>> names;
  for (size_t t = 0; t < named.size(); ++t) {
    names.emplace_back();
    EXPECT_EQ(static_cast<int32_t>(named[t].size()),
              offsets[t + 1] - offsets[t]);
    for (size_t k = 0; k < named[t].size(); ++k) {
      EXPECT_EQ(named[t][k].bucket, fx.Bucket(hashes[offsets[t] + k]));
      names.back().push_back(named[t][k].name);
    }
  }
  return names;
}

std::vector<std::vector<std::string>> Names(const TemplateFile& file,
                                            FeatureConfig::BoundaryMarkers m,
                                            const Sentence& sentence,
                                            bool pairs = false) {
  absl::StatusOr<FeatureExtractor> fx =
      FeatureExtractor::Create(ConfigOf(file, m));
  EXPECT_TRUE(fx.ok()) << fx.status();
  if (!fx.ok()) return {};
  if (pairs) {
    EXPECT_NE(fx->pair_extractor(), nullptr);
    return Names(*fx->pair_extractor(), sentence);
  }
  return Names(*fx, sentence);
}

TEST(TemplateFileTest, CrfppTemplateExpandsAsCrfppSpellsIt) {
  const TemplateFile file = Parse(
      "# Unigram\n"
      "U00:%x[-2,0]\n"
      "U05:%x[-1,0]/%x[0,0]\n"
      "U10:%x[1,1]\n"
      "U20:%x[3,0]\n"
      "\n"
      "# Bigram\n"
      "B\n");
  ASSERT_EQ(file.templates.size(), 4u);
  EXPECT_THAT(file.pair_templates, IsEmpty());
  EXPECT_TRUE(file.plain_transitions);
  EXPECT_EQ(file.templates[1].name(), "U05:%x[-1,0]/%x[0,0]");
  EXPECT_THAT(file.templates[1].literals(), ElementsAre("U05:", "/", ""));
  ASSERT_EQ(file.templates[1].parts_size(), 2);
  EXPECT_EQ(file.templates[1].parts(0).offset(), -1);
  EXPECT_EQ(file.templates[1].parts(0).attribute(), 0);
  EXPECT_EQ(file.templates[1].parts(1).offset(), 0);
  // CRF++: BOS[-idx-1] before the sentence, EOS[idx-size] after it.
  EXPECT_THAT(
      Names(file, FeatureConfig::NUMBERED, HeReckons()),
      ElementsAre(
          ElementsAre("U00:_B-2", "U05:_B-1/He", "U10:VBZ", "U20:_B+1"),
          ElementsAre("U00:_B-1", "U05:He/reckons", "U10:DT", "U20:_B+2"),
          ElementsAre("U00:He", "U05:reckons/the", "U10:_B+1", "U20:_B+3")));
  // FIXED keeps one marker a side.
  EXPECT_THAT(
      Names(file, FeatureConfig::FIXED, HeReckons())[0],
      ElementsAre("U00:__BOS__", "U05:__BOS__/He", "U10:VBZ", "U20:__EOS__"));
}

TEST(TemplateFileTest, NumberedMarkersChangeTheHashOnlyOutsideTheSentence) {
  const TemplateFile file = Parse("U00:%x[-1,0]\n");
  absl::StatusOr<FeatureExtractor> fixed =
      FeatureExtractor::Create(ConfigOf(file, FeatureConfig::FIXED));
  absl::StatusOr<FeatureExtractor> numbered =
      FeatureExtractor::Create(ConfigOf(file, FeatureConfig::NUMBERED));
  ASSERT_TRUE(fixed.ok() && numbered.ok());
  std::vector<int32_t> o1, o2;
  std::vector<uint64_t> h1, h2;
  std::vector<float> v1, v2;
  ASSERT_TRUE(fixed->ExtractHashes(HeReckons(), &o1, &h1, &v1).ok());
  ASSERT_TRUE(numbered->ExtractHashes(HeReckons(), &o2, &h2, &v2).ok());
  ASSERT_EQ(h1.size(), 3u);
  ASSERT_EQ(h2.size(), 3u);
  EXPECT_NE(h1[0], h2[0]);  // __BOS__ against _B-1
  EXPECT_EQ(h1[1], h2[1]);
  EXPECT_EQ(h1[2], h2[2]);
}

TEST(TemplateFileTest, WapitiPatterns) {
  const TemplateFile file = Parse(
      "*:w=%x[0,0]\n"
      "u:cap=%t[0,0,\"^[A-Z]\"]\n"
      "u:sfx=%m[0,0,\"[a-z]+s$\"]\n"
      "U:low %X[-1,0]\n"
      "u:far=%x[-6,0]|%x[4,0]|%x[5,0]\n"
      "u:mark=%t[-1,0,\"^_x\"]/%m[-1,0,\"\\d\"]\n"
      "b:p=%x[-1,1]/%x[0,1]\n");
  ASSERT_EQ(file.templates.size(), 6u);
  ASSERT_EQ(file.pair_templates.size(), 2u);
  EXPECT_FALSE(file.plain_transitions);
  EXPECT_EQ(file.pair_templates[0].name(), "*:w=%x[0,0]");
  EXPECT_EQ(file.templates[1].parts(0).transform(), TemplatePart::REGEX_TEST);
  EXPECT_EQ(file.templates[1].parts(0).pattern(), "^[A-Z]");
  EXPECT_EQ(file.templates[2].parts(0).transform(), TemplatePart::REGEX_MATCH);
  EXPECT_TRUE(file.templates[3].parts(0).lowercase());
  // Wapiti's bval[min(-pos-1, 4)] and eval[min(pos-T, 4)]; %t and %m read
  // the marker itself ("_x-1" matches ^_x, its digit is \d).
  EXPECT_THAT(
      Names(file, FeatureConfig::WAPITI, HeReckons()),
      ElementsAre(
          ElementsAre("*:w=He", "u:cap=true", "u:sfx=", "U:low _x-1",
                      "u:far=_x-#|_x+2|_x+3", "u:mark=true/1"),
          ElementsAre("*:w=reckons", "u:cap=false", "u:sfx=reckons", "U:low he",
                      "u:far=_x-#|_x+3|_x+4", "u:mark=false/"),
          ElementsAre("*:w=the", "u:cap=false", "u:sfx=", "U:low reckons",
                      "u:far=_x-4|_x+4|_x+#", "u:mark=false/")));
  EXPECT_THAT(Names(file, FeatureConfig::WAPITI, HeReckons(), /*pairs=*/true),
              ElementsAre(ElementsAre("*:w=He", "b:p=_x-1/PRP"),
                          ElementsAre("*:w=reckons", "b:p=PRP/VBZ"),
                          ElementsAre("*:w=the", "b:p=VBZ/DT")));
}

TEST(TemplateFileTest, BlanksBeforeTheNumbersAsWapitiReadsThem) {
  // Wapiti's sscanf("[%i,%u") skips blanks before each number.
  const TemplateFile blanks = Parse(
      "U:Wrd-1 X=%x[ 0,0]\n"
      "U:a=%x[\t-1, 1]\n"
      "U:t=%t[ 0, +0,\"^[A-Z]\"]\n");
  const TemplateFile tight = Parse(
      "U:Wrd-1 X=%x[0,0]\n"
      "U:a=%x[-1,1]\n"
      "U:t=%t[0,0,\"^[A-Z]\"]\n");
  ASSERT_EQ(blanks.templates.size(), 3u);
  EXPECT_EQ(blanks.templates[0].name(), "U:Wrd-1 X=%x[ 0,0]");
  EXPECT_THAT(blanks.templates[0].literals(), ElementsAre("U:Wrd-1 X=", ""));
  EXPECT_EQ(blanks.templates[1].parts(0).offset(), -1);
  EXPECT_EQ(blanks.templates[1].parts(0).attribute(), 1);
  EXPECT_EQ(blanks.templates[2].parts(0).pattern(), "^[A-Z]");
  EXPECT_THAT(Names(blanks, FeatureConfig::WAPITI, HeReckons())[0],
              ElementsAre("U:Wrd-1 X=He", "U:a=_x-1", "U:t=true"));
  // The same features as without the blanks: the hash reads the line's
  // index and the values.
  absl::StatusOr<FeatureExtractor> a =
      FeatureExtractor::Create(ConfigOf(blanks, FeatureConfig::WAPITI));
  absl::StatusOr<FeatureExtractor> b =
      FeatureExtractor::Create(ConfigOf(tight, FeatureConfig::WAPITI));
  ASSERT_TRUE(a.ok() && b.ok());
  std::vector<int32_t> o1, o2;
  std::vector<uint64_t> h1, h2;
  std::vector<float> v1, v2;
  ASSERT_TRUE(a->ExtractHashes(HeReckons(), &o1, &h1, &v1).ok());
  ASSERT_TRUE(b->ExtractHashes(HeReckons(), &o2, &h2, &v2).ok());
  EXPECT_EQ(h1, h2);

  // Wapiti refuses a blank after a number, and so does chaintag, saying
  // where.
  absl::StatusOr<TemplateFile> after =
      ParseTemplateFile("*\nU:a=%x[0 ,0]\n", "chpattern.txt");
  EXPECT_EQ(after.status().message(),
            "chpattern.txt:2: expected ',' (a blank may come before a "
            "number, not after it) in the macro at column 5: 'U:a=%x[0 ,0]'");
  after = ParseTemplateFile("U:a=%x[ 0,0 ]\n", "chpattern.txt");
  EXPECT_EQ(after.status().message(),
            "chpattern.txt:1: expected ']' (a blank may come before a "
            "number, not after it) in the macro at column 5: "
            "'U:a=%x[ 0,0 ]'");
}

TEST(TemplateFileTest, AWapitiChunkingPatternFile) {
  absl::StatusOr<TemplateFile> file =
      ReadTemplateFile("features/testdata/wapiti_chunking.pattern");
  ASSERT_TRUE(file.ok()) << file.status();
  // `*`, 7 word, 3 shape and 12 POS lines, and `*:Pos`.
  ASSERT_EQ(file->templates.size(), 24u);
  ASSERT_EQ(file->pair_templates.size(), 1u);
  EXPECT_TRUE(file->plain_transitions);
  EXPECT_EQ(file->templates[3].name(), "U:Wrd   X=%x[ 0,0]");
  EXPECT_EQ(file->templates[10].name(), "U:Suf   X=%m[ 0,0,\".?.?.?$\"]");
  EXPECT_EQ(file->pair_templates[0].name(), "*:Pos   X=%x[ 0,1]");
  EXPECT_THAT(
      Names(*file, FeatureConfig::WAPITI, HeReckons())[1],
      ElementsAre("*", "U:Wrd-2 X=_x-1", "U:Wrd-1 X=He", "U:Wrd   X=reckons",
                  "U:Wrd+1 X=the", "U:Wrd+2 X=_x+1", "U:Wrd-1 X=He/reckons",
                  "U:Wrd+1 X=reckons/the", "U:Cap   X=false", "U:Num   X=false",
                  "U:Suf   X=ons", "U:Pos-2 X=_x-1", "U:Pos-1 X=PRP",
                  "U:Pos   X=VBZ", "U:Pos+1 X=DT", "U:Pos+2 X=_x+1",
                  "U:Pos-2 X=_x-1/PRP", "U:Pos-1 X=PRP/VBZ", "U:Pos+1 X=VBZ/DT",
                  "U:Pos+2 X=DT/_x+1", "U:Pos-3 X=_x-1/PRP/VBZ",
                  "U:Pos   X=PRP/VBZ/DT", "U:Pos+3 X=VBZ/DT/_x+1",
                  "*:Pos   X=VBZ"));
}

TEST(TemplateFileTest, BareBigramsAndMacroFreeLines) {
  TemplateFile file = Parse("B\n");
  EXPECT_TRUE(file.plain_transitions);
  EXPECT_THAT(file.templates, IsEmpty());
  EXPECT_THAT(file.pair_templates, IsEmpty());
  // A macro-free * line: a constant unigram feature and the transitions.
  file = Parse("*\nU99:const\nB01:%x[0,1]\n");
  EXPECT_TRUE(file.plain_transitions);
  ASSERT_EQ(file.templates.size(), 2u);
  ASSERT_EQ(file.pair_templates.size(), 1u);
  EXPECT_EQ(file.pair_templates[0].parts(0).attribute(), 1);
  EXPECT_THAT(file.pair_templates[0].literals(), ElementsAre("B01:", ""));
  EXPECT_THAT(Names(file, FeatureConfig::NUMBERED,
                    RowSentence({{"a", "X"}, {"b", "Y"}}))[1],
              ElementsAre("*", "U99:const"));
  EXPECT_THAT(Names(file, FeatureConfig::NUMBERED,
                    RowSentence({{"a", "X"}, {"b", "Y"}}), /*pairs=*/true),
              ElementsAre(ElementsAre("B01:X"), ElementsAre("B01:Y")));
}

TEST(TemplateFileTest, CommentsBlankLinesAndLiteralText) {
  const TemplateFile file = Parse(
      "# a comment\n"
      "   \n"
      "\tU01:%x[0,0] # after a blank: a comment\r\n"
      "U02:a#b%x[0,0]=%x[1,0]!\n"
      "U03:%t[0,0,\"#\\\"\"]\n");
  ASSERT_EQ(file.templates.size(), 3u);
  EXPECT_EQ(file.templates[0].name(), "U01:%x[0,0]");
  EXPECT_THAT(file.templates[1].literals(), ElementsAre("U02:a#b", "=", "!"));
  EXPECT_EQ(file.templates[2].parts(0).pattern(), "#\\\"");
  EXPECT_THAT(
      Names(file, FeatureConfig::NUMBERED, RowSentence({{"x#\""}, {"y"}})),
      ElementsAre(ElementsAre("U01:x#\"", "U02:a#bx#\"=y!", "U03:true"),
                  ElementsAre("U01:y", "U02:a#by=_B+1!", "U03:false")));
}

TEST(TemplateFileTest, ErrorsNameTheFileAndLine) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"U01:%y[0,0]", "unknown command '%y'"},
      {"U01:%x[0,0", "expected ']'"},
      {"U01:%x[a,0]", "expected a row number"},
      {"U01:%x[0,-1]", "expected a column number"},
      {"U01:%x[0;0]", "expected ','"},
      {"U01:%x[@1,0]", "absolute, indirect"},
      {"U01:%x[*1,0]", "absolute, indirect"},
      {"U01:%x[0 ,0]", "expected ','"},
      {"U01:%x[0,0 ]", "expected ']'"},
      {"U01:%x[ ,0]", "expected a row number"},
      {"U01:%t[0,0]", "expected ,\"regex\""},
      {"U01:%t[0,0,\"abc]", "an unterminated quote"},
      {"U01:%m[0,0,\"(\"]", "a bad regex \"(\""},
      {"U01:%M[0,0,\"a\"]", "%M"},
      {"U01:100%", "a '%' without a command"},
      {"X01:%x[0,0]", "starts with U (unigram), B (bigram) or * (both)"},
  };
  for (const auto& [line, message] : cases) {
    absl::StatusOr<TemplateFile> file = ParseTemplateFile(
        absl::StrCat("# first\nU00:%x[0,0]\n", line, "\n"), "dir/t.template");
    ASSERT_FALSE(file.ok()) << line;
    EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(file.status().message(), HasSubstr("dir/t.template:3: "))
        << line;
    EXPECT_THAT(file.status().message(), HasSubstr(message)) << line;
    EXPECT_THAT(file.status().message(), HasSubstr(line)) << line;
  }
}

TEST(TemplateFileTest, ColumnOutOfRangeIsCheckedAgainstTheData) {
  const TemplateFile file = Parse("U00:%x[0,0]\nU07:%x[0,5]\n");
  absl::StatusOr<FeatureExtractor> fx =
      FeatureExtractor::Create(ConfigOf(file, FeatureConfig::NUMBERED));
  ASSERT_TRUE(fx.ok());
  Sentence sentence = HeReckons();
  sentence.source = "train.txt";
  sentence.first_line = 12;
  FeatureSequence features;
  absl::Status status = fx->Extract(sentence, &features);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("train.txt:12: "));
  EXPECT_THAT(status.message(), HasSubstr("'U07:%x[0,5]'"));
  EXPECT_THAT(status.message(), HasSubstr("reads attribute 5"));
}

TEST(TemplateFileTest, ExpandResolvesAgainstTheBaseDirectory) {
  const std::string dir = temp_files_testing::TmpPath("expand");
  ASSERT_EQ(system(absl::StrCat("mkdir -p ", dir, "/sub").c_str()), 0);
  temp_files_testing::WriteText(dir + "/sub/t.template",
                                "U00:%x[0,0]\nB01:%x[-1,0]\nB\n");
  FeatureConfig config;
  config.add_templates()->set_name("mine");
  config.set_template_file("sub/t.template");
  ASSERT_TRUE(ExpandTemplateFile(dir, &config).ok());
  EXPECT_FALSE(config.has_template_file());
  ASSERT_EQ(config.templates_size(), 2);
  EXPECT_EQ(config.templates(0).name(), "mine");
  EXPECT_EQ(config.templates(1).name(), "U00:%x[0,0]");
  ASSERT_EQ(config.pair_templates_size(), 1);
  EXPECT_EQ(config.pair_templates(0).name(), "B01:%x[-1,0]");
  // Expanded once: a second call changes nothing.
  ASSERT_TRUE(ExpandTemplateFile(dir, &config).ok());
  EXPECT_EQ(config.templates_size(), 2);

  FeatureConfig missing;
  missing.set_template_file("nope.template");
  absl::Status status = ExpandTemplateFile(dir, &missing);
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(status.message(), HasSubstr(dir + "/nope.template"));

  FeatureConfig unexpanded;
  unexpanded.set_template_file("t.template");
  EXPECT_THAT(FeatureExtractor::Create(unexpanded).status().message(),
              HasSubstr("not expanded"));
}

}  // namespace
}  // namespace chaintag
