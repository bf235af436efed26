#include "tagging/text_tagging.h"

#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "models/chain_model.h"
#include "models/chain_model_testing.h"

namespace chaintag {
namespace {

// A one-stage bundle: an IOB2 chunker over word identity, random weights.
Bundle MakeBundle() {
  ChainModel model = chain_testing::RandomWordChunker(3);
  BundleManifest manifest;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(
        name: "one"
        stages {
          name: "chunk"
          model: "chunk.model"
          inputs { column: "word" }
          writes: "chunk"
        }
      )pb",
      &manifest));
  std::vector<ChainModel> models;
  models.push_back(std::move(model));
  absl::StatusOr<Bundle> bundle =
      Bundle::Create(manifest, std::move(models), "one.textproto");
  EXPECT_TRUE(bundle.ok()) << bundle.status();
  return std::move(*bundle);
}

// `n` lines of 0–7 words (a line of spaces has no tokens); a blank line
// after every fifth, so that paragraphs form.
std::string Text(int n) {
  const std::vector<std::string> words = {"The", "dog", "barks", ".",    "A",
                                          "cat", "sat", "on",    "mats", ","};
  std::mt19937 rng(11);
  std::string text;
  for (int k = 0; k < n; ++k) {
    const int length = static_cast<int>(rng() % 8);
    if (length == 0) text += "   ";
    for (int t = 0; t < length; ++t) {
      absl::StrAppend(&text, t > 0 ? " " : "", words[rng() % words.size()]);
    }
    text += "\n";
    if (k % 5 == 4) text += "\n";
  }
  return text;
}

absl::Status Tag(const Bundle& bundle, const Tokenizer& tokenizer,
                 const std::string& text, TextTaggingOptions options,
                 std::string* out) {
  std::istringstream input(text);
  out->clear();
  return TagTextStream(bundle, tokenizer, &input, "text.txt", options,
                       [out](const std::string& part) {
                         out->append(part);
                         return absl::OkStatus();
                       });
}

TEST(TextTaggingTest, OneBlockPerSentenceInOrder) {
  const Bundle bundle = MakeBundle();
  absl::StatusOr<std::unique_ptr<Tokenizer>> tokenizer = Tokenizer::Create();
  ASSERT_TRUE(tokenizer.ok());
  const std::string text = Text(40);
  std::string out;
  ASSERT_TRUE(Tag(bundle, **tokenizer, text, TextTaggingOptions(), &out).ok());
  // CoNLL output: a token and its chunk tag a line, a blank line after each
  // sentence; the tokens read back give the input's lines with tokens.
  std::vector<std::string> sentences;
  std::string current;
  for (absl::string_view line : absl::StrSplit(out, '\n')) {
    if (line.empty()) {
      if (!current.empty()) sentences.push_back(current);
      current.clear();
      continue;
    }
    const std::vector<std::string> fields = absl::StrSplit(line, ' ');
    ASSERT_EQ(fields.size(), 2u) << line;
    EXPECT_TRUE(fields[1] == "O" || fields[1] == "B-NP" || fields[1] == "I-NP");
    absl::StrAppend(&current, current.empty() ? "" : " ", fields[0]);
  }
  std::vector<std::string> expected;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    const std::vector<std::string> tokens =
        absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (!tokens.empty()) expected.push_back(absl::StrJoin(tokens, " "));
  }
  EXPECT_EQ(sentences, expected);
}

TEST(TextTaggingTest, OutputDoesNotDependOnThreadsOrBatches) {
  const Bundle bundle = MakeBundle();
  absl::StatusOr<std::unique_ptr<Tokenizer>> tokenizer = Tokenizer::Create();
  ASSERT_TRUE(tokenizer.ok());
  const std::string text = Text(150);
  for (OutputFormat format :
       {OutputFormat::kConll, OutputFormat::kBracketed, OutputFormat::kJson}) {
    for (bool paragraphs : {false, true}) {
      TextTaggingOptions options;
      options.format = format;
      options.bracket_stage = 0;
      options.paragraphs = paragraphs;
      std::string one;
      ASSERT_TRUE(Tag(bundle, **tokenizer, text, options, &one).ok());
      EXPECT_FALSE(one.empty());
      for (int threads : {2, 3}) {
        for (int batch : {1, 4, 256}) {
          options.threads = threads;
          options.batch_per_thread = batch;
          std::string out;
          ASSERT_TRUE(Tag(bundle, **tokenizer, text, options, &out).ok());
          EXPECT_EQ(out, one) << static_cast<int>(format) << " " << paragraphs
                              << " " << threads << " " << batch;
        }
      }
    }
  }
}

}  // namespace
}  // namespace chaintag
