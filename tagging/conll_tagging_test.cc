#include "tagging/conll_tagging.h"

#include <algorithm>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "corpora/conll_reader.h"
#include "gtest/gtest.h"
#include "models/chain_model.h"
#include "models/chain_model_testing.h"

namespace chaintag {
namespace {

ChainModel MakeModel() { return chain_testing::RandomWordChunker(5); }

// `n` sentences of 1–6 words, with a gold column; a -DOCSTART- line
// before every tenth.
std::string Corpus(int n) {
  const std::vector<std::string> words = {"the", "dog", "barks", "a",
                                          "cat", "sat", "on",    "mat"};
  std::mt19937 rng(7);
  std::string text;
  for (int s = 0; s < n; ++s) {
    if (s % 10 == 0) text += "-DOCSTART- O\n\n";
    for (int t = 0; t <= static_cast<int>(rng() % 6); ++t) {
      absl::StrAppend(&text, words[rng() % words.size()], " O\n");
    }
    text += "\n";
  }
  return text;
}

absl::Status Tag(const ChainModel& model, const std::string& text, int threads,
                 int batch, std::string* out, int nbest = 1) {
  std::istringstream input(text);
  ConllTaggingOptions options;
  options.threads = threads;
  options.batch_per_thread = batch;
  options.nbest = nbest;
  out->clear();
  return TagConllStream(model, &input, "in.txt", options,
                        [out](const std::string& part) {
                          out->append(part);
                          return absl::OkStatus();
                        });
}

TEST(ConllTaggingTest, AppendsOneTagALineInInputOrder) {
  const ChainModel model = MakeModel();
  const std::string text = Corpus(57);
  std::string out;
  ASSERT_TRUE(Tag(model, text, 1, 256, &out).ok());
  const std::vector<std::string> in_lines = absl::StrSplit(text, '\n');
  const std::vector<std::string> out_lines = absl::StrSplit(out, '\n');
  ASSERT_EQ(in_lines.size(), out_lines.size());
  for (size_t k = 0; k < in_lines.size(); ++k) {
    if (in_lines[k].empty()) {
      EXPECT_TRUE(out_lines[k].empty()) << k;
      continue;
    }
    // Every line, -DOCSTART- included, gains one field: the prediction (the
    // outside tag for -DOCSTART-, so that conlleval sees one field count).
    ASSERT_EQ(out_lines[k].rfind(in_lines[k] + " ", 0), 0u) << out_lines[k];
    const std::string tag = out_lines[k].substr(in_lines[k].size() + 1);
    EXPECT_TRUE(tag == "O" || tag == "B-NP" || tag == "I-NP") << tag;
    if (in_lines[k].rfind("-DOCSTART-", 0) == 0) EXPECT_EQ(tag, "O");
  }
}

// A file whose fields TABs separate (CRF++'s columns) gets its tags
// appended with a TAB, as crf_test does, so that TAB-based tools (conlleval
// -d '\t') read one delimiter; the tags are those of the same file with
// spaces.
TEST(ConllTaggingTest, TabSeparatedLinesGetTheirTagAfterATab) {
  const ChainModel model = MakeModel();
  const std::string text = Corpus(23);
  std::string tabbed = text;
  std::replace(tabbed.begin(), tabbed.end(), ' ', '\t');
  std::string spaced_out, tabbed_out;
  ASSERT_TRUE(Tag(model, text, 1, 256, &spaced_out).ok());
  ASSERT_TRUE(Tag(model, tabbed, 1, 256, &tabbed_out).ok());
  EXPECT_EQ(tabbed_out.find(' '), std::string::npos) << tabbed_out;
  std::replace(tabbed_out.begin(), tabbed_out.end(), '\t', ' ');
  EXPECT_EQ(tabbed_out, spaced_out);
}

TEST(ConllTaggingTest, OutputDoesNotDependOnThreadsOrBatches) {
  const ChainModel model = MakeModel();
  const std::string text = Corpus(203);
  std::string one;
  ASSERT_TRUE(Tag(model, text, 1, 256, &one).ok());
  for (int threads : {1, 2, 3, 5}) {
    for (int batch : {1, 2, 7, 256}) {
      std::string out;
      ASSERT_TRUE(Tag(model, text, threads, batch, &out).ok());
      EXPECT_EQ(out, one) << threads << " threads, batches of " << batch;
    }
  }
}

// --nbest as crf_test -n: for each sentence, its best labelings (fewer
// when fewer exist), each after a line "# k score", as PredictNBest decodes
// them; the first is what plain tagging prints, and the output does not
// depend on the threads.
TEST(ConllTaggingTest, NBestListsEachSentencesBestLabelingsAsCrfTestDoes) {
  const ChainModel model = MakeModel();
  const std::string text = Corpus(41);
  std::string plain, out;
  ASSERT_TRUE(Tag(model, text, 1, 256, &plain).ok());
  ASSERT_TRUE(Tag(model, text, 1, 256, &out, 4).ok());
  for (int threads : {2, 3}) {
    std::string threaded;
    ASSERT_TRUE(Tag(model, text, threads, 2, &threaded, 4).ok());
    EXPECT_EQ(threaded, out) << threads;
  }
  std::istringstream input(text);
  ConllFormat format = model.header().input_format();
  format.set_allow_missing_label(true);
  ConllReader reader(&input, "in.txt", format);
  const std::vector<std::string> plain_blocks =
      absl::StrSplit(plain, "\n\n", absl::SkipEmpty());
  std::string expected;
  size_t sentence = 0;
  TagScratch scratch;
  Decoded decoded;
  DecodeOptions decode;
  decode.constrained = model.header().constrained_decoding();
  decode.nbest = 4;
  ConllReader::Item item;
  int fewer = 0;
  while (*reader.Next(&item)) {
    if (item.kind == ConllReader::Item::kDocStart) {
      absl::StrAppend(&expected, item.line, " O\n\n");
      ++sentence;
      continue;
    }
    ASSERT_TRUE(
        model.PredictNBest(item.sentence, decode, &scratch, &decoded).ok());
    if (decoded.labelings.size() < 4) ++fewer;
    for (size_t k = 0; k < decoded.labelings.size(); ++k) {
      if (k > 0) EXPECT_LE(decoded.scores[k], decoded.scores[k - 1]);
      std::string block;
      const std::vector<std::string> tags =
          model.ToOutputTags(decoded.labelings[k]);
      for (size_t t = 0; t < tags.size(); ++t) {
        absl::StrAppend(&block, item.sentence.lines[t], " ", tags[t], "\n");
      }
      if (k == 0) EXPECT_EQ(block + "\n", plain_blocks[sentence] + "\n\n");
      absl::StrAppend(&expected,
                      absl::StrFormat("# %d %.6f\n", k, decoded.scores[k]),
                      block, "\n");
    }
    ++sentence;
  }
  EXPECT_EQ(out, expected);
  EXPECT_GT(fewer, 0);  // one-word sentences have fewer than 4 labelings
  // Not with marginals, nor below 1.
  std::istringstream again(text);
  ConllTaggingOptions options;
  options.nbest = 2;
  options.marginals = true;
  const auto ignore = [](const std::string&) { return absl::OkStatus(); };
  EXPECT_EQ(TagConllStream(model, &again, "in.txt", options, ignore).code(),
            absl::StatusCode::kUnimplemented);
  options.marginals = false;
  options.nbest = 0;
  EXPECT_EQ(TagConllStream(model, &again, "in.txt", options, ignore).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ConllTaggingTest, AnErrorStopsAfterTheSentencesBeforeIt) {
  const ChainModel model = MakeModel();
  const std::string good = Corpus(40);
  const int bad_line =
      static_cast<int>(std::count(good.begin(), good.end(), '\n')) + 2;
  const std::string text = good + "zebra O\nyak O extra\n\n" + Corpus(20);
  std::string before;
  ASSERT_TRUE(Tag(model, good, 1, 256, &before).ok());
  for (int threads : {1, 3}) {
    for (int batch : {1, 4, 256}) {
      std::string out;
      absl::Status status = Tag(model, text, threads, batch, &out);
      ASSERT_FALSE(status.ok());
      EXPECT_NE(status.message().find(absl::StrCat("in.txt:", bad_line)),
                std::string::npos)
          << status;
      // -DOCSTART- lines are held until the next sentence, so compare the
      // sentences: everything before the bad one, and nothing after it.
      EXPECT_EQ(out.substr(0, std::min(out.size(), before.size())),
                before.substr(0, std::min(out.size(), before.size())));
      EXPECT_GE(out.size() + 16, before.size()) << threads << " " << batch;
      EXPECT_EQ(out.find("zebra"), std::string::npos) << out;
    }
  }
}

// The batch before is written while the workers tag the next one (and
// on_tagged runs there too): a failing on_tagged still ends the output
// right before its sentence, at any thread count and batch size.
TEST(ConllTaggingTest, AFailingObserverStopsAtItsSentence) {
  const ChainModel model = MakeModel();
  const std::string text = Corpus(60);
  for (int threads : {1, 2, 3}) {
    for (int batch : {1, 4, 256}) {
      std::istringstream input(text);
      ConllTaggingOptions options;
      options.threads = threads;
      options.batch_per_thread = batch;
      int seen = 0;
      options.on_tagged = [&seen](const Sentence&,
                                  const std::vector<std::string>&) {
        return ++seen == 30 ? absl::DataLossError("stop here")
                            : absl::OkStatus();
      };
      std::string out;
      const absl::Status status = TagConllStream(
          model, &input, "in.txt", options, [&out](const std::string& part) {
            out.append(part);
            return absl::OkStatus();
          });
      EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
      EXPECT_EQ(seen, 30);
      // The 29 sentences before it, each ending in a blank line, as do the
      // -DOCSTART- lines.
      int blank_ends = 0;
      for (size_t at = out.find("\n\n"); at != std::string::npos;
           at = out.find("\n\n", at + 2)) {
        ++blank_ends;
      }
      int doc_starts = 0;
      for (size_t at = out.find("-DOCSTART-"); at != std::string::npos;
           at = out.find("-DOCSTART-", at + 1)) {
        ++doc_starts;
      }
      EXPECT_EQ(blank_ends - doc_starts, 29) << threads << " " << batch;
    }
  }
}

}  // namespace
}  // namespace chaintag
