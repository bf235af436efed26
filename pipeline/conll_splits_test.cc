#include "pipeline/conll_splits.h"

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/thread_communicator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace chaintag {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

std::string TmpDir() { return std::getenv("TEST_TMPDIR"); }

// `count` one-token sentences "w<i> <tag>", the tag V for even i and N for
// odd i but Z for the last; sentence i starts on line 2i + 1.
void WriteCorpus(const std::string& name, int count) {
  std::ofstream out(TmpDir() + "/" + name);
  for (int i = 0; i < count; ++i) {
    out << "w" << i << ' '
        << (i == count - 1 ? "Z"
            : i % 2 == 0   ? "V"
                           : "N")
        << "\n\n";
  }
}

// "w<first>", ..., "w<last>".
std::vector<std::string> WordRange(int first, int last) {
  std::vector<std::string> words;
  for (int i = first; i <= last; ++i) words.push_back(absl::StrCat("w", i));
  return words;
}

std::vector<std::string> Words(const std::vector<Sentence>& sentences) {
  std::vector<std::string> words;
  for (const Sentence& sentence : sentences) {
    words.push_back(sentence.attribute(0, 0));
  }
  return words;
}

class ConllSplitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteCorpus("train.txt", 10);
    WriteCorpus("test.txt", 2);
    options_.corpora_root = TmpDir();
    options_.progress = nullptr;
    CorpusConfig* corpus = config_.mutable_corpus();
    corpus->set_train("train.txt");
    corpus->set_test("test.txt");
    corpus->mutable_format()->add_attribute_columns(0);
    corpus->mutable_format()->set_label_column(1);
    corpus->mutable_format()->set_tag_scheme(NONE);
    config_.mutable_model()->set_train_scheme(NONE);
  }

  // ReadSplits of config_; a rank of `size` when size > 0.
  absl::Status Read(PreparedCorpus* prepared, int rank = 0, int size = 0) {
    prepared->config = config_;
    PipelineOptions options = options_;
    ThreadHub hub(size > 0 ? size : 1);
    ThreadCommunicator communicator(&hub, rank);
    if (size > 0) options.communicator = &communicator;
    return ReadSplits(options, nullptr, prepared);
  }

  PipelineConfig config_;
  PipelineOptions options_;
};

TEST(DevFractionCountTest, HoldsOutTheCeilingOfTheFraction) {
  CorpusConfig corpus;
  corpus.set_dev_fraction(0.25);
  EXPECT_EQ(DevFractionCount(corpus, 10).value(), 3u);  // ceil(2.5)
  EXPECT_EQ(DevFractionCount(corpus, 8).value(), 2u);   // exactly 2
  EXPECT_EQ(DevFractionCount(corpus, 2).value(), 1u);   // ceil(0.5)
  corpus.set_dev_fraction(0.5);
  EXPECT_EQ(DevFractionCount(corpus, 7).value(), 4u);  // ceil(3.5)
  corpus.set_dev_fraction(0.01);
  EXPECT_EQ(DevFractionCount(corpus, 10).value(), 1u);  // ceil(0.1)
}

TEST(DevFractionCountTest, Errors) {
  CorpusConfig corpus;
  for (double fraction : {0.0, 1.0, -0.5, 1.5}) {
    corpus.set_dev_fraction(fraction);
    EXPECT_THAT(DevFractionCount(corpus, 10).status().message(),
                HasSubstr("corpus.dev_fraction must be in (0, 1)"))
        << fraction;
  }
  // Nothing left to train on: ceil(9.5) = 10 of 10, ceil(0.5) = 1 of 1.
  corpus.set_dev_fraction(0.95);
  EXPECT_THAT(DevFractionCount(corpus, 10).status().message(),
              HasSubstr("leaves no dev or no training sentences"));
  corpus.set_dev_fraction(0.5);
  EXPECT_THAT(DevFractionCount(corpus, 1).status().message(),
              HasSubstr("leaves no dev or no training sentences"));
  EXPECT_THAT(DevFractionCount(corpus, 0).status().message(),
              HasSubstr("leaves no dev or no training sentences"));
  corpus.set_dev("dev.txt");
  EXPECT_THAT(DevFractionCount(corpus, 10).status().message(),
              HasSubstr("corpus.dev and corpus.dev_fraction are exclusive"));
}

TEST(HoldOutDevFractionTest, TheLastSentencesBecomeDevInOrder) {
  std::vector<Sentence> train(7);
  for (int i = 0; i < 7; ++i) train[i].tags = {absl::StrCat("t", i)};
  std::vector<Sentence> dev;
  CorpusConfig corpus;
  corpus.set_dev_fraction(0.5);  // ceil(3.5) = 4
  ASSERT_TRUE(HoldOutDevFraction(corpus, &train, &dev).ok());
  ASSERT_EQ(train.size(), 3u);
  ASSERT_EQ(dev.size(), 4u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(train[i].tags[0], absl::StrCat("t", i));
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(dev[i].tags[0], absl::StrCat("t", i + 3));
  }
  corpus.set_dev_fraction(2);
  EXPECT_FALSE(HoldOutDevFraction(corpus, &train, &dev).ok());
  EXPECT_EQ(train.size(), 3u);
}

TEST(TrainingTagsTest, ConvertsToTheTrainingSchemeOrNamesTheSentence) {
  Sentence sentence;
  sentence.tags = {"I-PER", "I-PER", "O", "I-LOC"};
  EXPECT_THAT(TrainingTags(sentence, IOB1, IOB2).value(),
              ElementsAre("B-PER", "I-PER", "O", "B-LOC"));
  EXPECT_THAT(TrainingTags(sentence, IOB1, IOB1).value(),
              ElementsAre("I-PER", "I-PER", "O", "I-LOC"));
  sentence.tags.clear();
  sentence.source = "corpus.txt";
  sentence.first_line = 17;
  EXPECT_EQ(TrainingTags(sentence, IOB1, IOB2).status().message(),
            "corpus.txt:17: training data needs a label column");
}

// A declared scheme the labels contradict is told, with the counts that
// show it; labels that agree, plain labels declared NONE, and all-O files
// are not.
TEST(SchemeMismatchTest, NamesTheSchemeTheLabelsReadAs) {
  auto sentences = [](std::vector<std::vector<std::string>> tags) {
    std::vector<Sentence> out(tags.size());
    for (size_t i = 0; i < tags.size(); ++i) out[i].tags = tags[i];
    return out;
  };
  const std::vector<Sentence> iob1 =
      sentences({{"I-PER", "I-PER", "O", "I-LOC"}, {"I-ORG", "B-ORG"}});
  const std::vector<Sentence> iob2 =
      sentences({{"B-PER", "I-PER", "O", "B-LOC"}, {"B-ORG", "B-ORG"}});
  EXPECT_EQ(SchemeMismatch(iob1, IOB1), "");
  EXPECT_EQ(SchemeMismatch(iob2, IOB2), "");
  EXPECT_EQ(SchemeMismatch(iob2, NONE), "");
  EXPECT_EQ(SchemeMismatch(iob2, TAG_SCHEME_UNSPECIFIED), "");
  EXPECT_EQ(SchemeMismatch(sentences({{"O", "O"}}), IOB2), "");
  const std::string declared_iob2 = SchemeMismatch(iob1, IOB2);
  EXPECT_THAT(declared_iob2,
              HasSubstr("tag_scheme is iob2, but the training labels read as "
                        "iob1 (3 chunks begin with I, 1 with B)"));
  EXPECT_THAT(SchemeMismatch(iob2, IOB1),
              HasSubstr("read as iob2 (0 chunks begin with I, 4 with B)"));
  EXPECT_THAT(SchemeMismatch(sentences({{"B-X", "E-X", "S-Y"}}), IOB2),
              HasSubstr("read as iobes"));
  EXPECT_THAT(SchemeMismatch(iob2, IOBES), HasSubstr("read as iob2"));
  EXPECT_THAT(SchemeMismatch(sentences({{"NN", "VBZ"}}), IOB2),
              HasSubstr("labels such as 'NN' are no chunk tags"));
}

TEST_F(ConllSplitsTest, ReadsTrainDevAndTest) {
  WriteCorpus("dev.txt", 3);
  config_.mutable_corpus()->set_dev("dev.txt");
  PreparedCorpus prepared;
  ASSERT_TRUE(Read(&prepared).ok());
  EXPECT_THAT(Words(prepared.train), ElementsAreArray(WordRange(0, 9)));
  EXPECT_THAT(Words(prepared.dev), ElementsAre("w0", "w1", "w2"));
  EXPECT_THAT(Words(prepared.test), ElementsAre("w0", "w1"));
  EXPECT_EQ(prepared.num_columns, 2);
  EXPECT_EQ(prepared.train[9].tags[0], "Z");
}

TEST_F(ConllSplitsTest, DevFractionHoldsOutTheLastSentences) {
  config_.mutable_corpus()->set_dev_fraction(0.25);  // ceil(2.5) = 3 of 10
  PreparedCorpus prepared;
  ASSERT_TRUE(Read(&prepared).ok());
  EXPECT_THAT(Words(prepared.train), ElementsAreArray(WordRange(0, 6)));
  EXPECT_THAT(Words(prepared.dev), ElementsAre("w7", "w8", "w9"));
  EXPECT_THAT(Words(prepared.test), ElementsAre("w0", "w1"));
}

TEST_F(ConllSplitsTest, MaxTrainSentencesComesBeforeTheDevFraction) {
  config_.mutable_corpus()->set_max_train_sentences(4);
  PreparedCorpus first;
  ASSERT_TRUE(Read(&first).ok());
  EXPECT_THAT(Words(first.train), ElementsAre("w0", "w1", "w2", "w3"));
  EXPECT_TRUE(first.dev.empty());
  // The first 8, of which ceil(0.25 * 8) = 2 are dev.
  config_.mutable_corpus()->set_max_train_sentences(8);
  config_.mutable_corpus()->set_dev_fraction(0.25);
  PreparedCorpus held_out;
  ASSERT_TRUE(Read(&held_out).ok());
  EXPECT_THAT(Words(held_out.train), ElementsAreArray(WordRange(0, 5)));
  EXPECT_THAT(Words(held_out.dev), ElementsAre("w6", "w7"));
  // More than the file holds: all of it.
  config_.mutable_corpus()->set_max_train_sentences(100);
  config_.mutable_corpus()->clear_dev_fraction();
  PreparedCorpus all;
  ASSERT_TRUE(Read(&all).ok());
  EXPECT_EQ(all.train.size(), 10u);
}

TEST_F(ConllSplitsTest, RanksKeepTheirShardAndTheWholeDev) {
  config_.mutable_corpus()->set_dev_fraction(0.25);
  // 7 training sentences: rank 0 holds [0, 3), rank 1 [3, 7).
  PreparedCorpus rank0;
  PreparedCorpus rank1;
  ASSERT_TRUE(Read(&rank0, 0, 2).ok());
  ASSERT_TRUE(Read(&rank1, 1, 2).ok());
  EXPECT_THAT(Words(rank0.train), ElementsAre("w0", "w1", "w2"));
  EXPECT_THAT(Words(rank1.train), ElementsAre("w3", "w4", "w5", "w6"));
  for (const PreparedCorpus* rank : {&rank0, &rank1}) {
    EXPECT_THAT(Words(rank->dev), ElementsAre("w7", "w8", "w9"));
    EXPECT_THAT(Words(rank->test), ElementsAre("w0", "w1"));
    EXPECT_EQ(rank->num_train_examples, 7);
    EXPECT_EQ(rank->num_columns, 2);
    // Z, only in dev, is no training label.
    EXPECT_THAT(rank->labels.names(), ElementsAre("V", "N"));
  }
  EXPECT_EQ(rank1.train_shard.begin, 3);
  EXPECT_EQ(rank1.train_shard.end, 7);
  // Without dev_fraction every label is a training label.
  config_.mutable_corpus()->clear_dev_fraction();
  PreparedCorpus whole;
  ASSERT_TRUE(Read(&whole, 1, 2).ok());
  EXPECT_THAT(Words(whole.train), ElementsAreArray(WordRange(5, 9)));
  EXPECT_TRUE(whole.dev.empty());
  EXPECT_THAT(whole.labels.names(), ElementsAre("V", "N", "Z"));
}

TEST_F(ConllSplitsTest, TrainingSentencesWithoutLabelsAreRefused) {
  // Tagging input: no label column, which the format allows.
  std::ofstream(TmpDir() + "/unlabelled.txt") << "a\nb\n\nc\n\n";
  config_.mutable_corpus()->set_train("unlabelled.txt");
  config_.mutable_corpus()->mutable_format()->set_allow_missing_label(true);
  const std::string expected = absl::StrCat(
      TmpDir(), "/unlabelled.txt:1: training data needs a label column");
  PreparedCorpus whole;
  EXPECT_EQ(std::string(Read(&whole).message()), expected);
  PreparedCorpus rank;
  EXPECT_EQ(std::string(Read(&rank, 0, 2).message()), expected);
}

TEST_F(ConllSplitsTest, HeldOutSplitsNeedLabels) {
  // The training file may allow missing labels; the test file may not.
  std::ofstream(TmpDir() + "/unlabelled_test.txt") << "a V\n\nb\n\n";
  config_.mutable_corpus()->mutable_format()->set_allow_missing_label(true);
  config_.mutable_corpus()->set_test("unlabelled_test.txt");
  PreparedCorpus prepared;
  const absl::Status read = Read(&prepared);
  EXPECT_FALSE(read.ok());
  EXPECT_THAT(read.message(),
              HasSubstr(absl::StrCat(TmpDir(), "/unlabelled_test.txt:3")));
}

TEST_F(ConllSplitsTest, AnEmptyTrainingFileIsRefused) {
  std::ofstream(TmpDir() + "/empty.txt") << "";
  config_.mutable_corpus()->set_train("empty.txt");
  const std::string expected =
      absl::StrCat(TmpDir(), "/empty.txt: no sentences to train on");
  PreparedCorpus whole;
  EXPECT_EQ(std::string(Read(&whole).message()), expected);
  PreparedCorpus rank;
  EXPECT_EQ(std::string(Read(&rank, 0, 2).message()), expected);
}

// Sentences given in memory: one token each, word "w<i>", tagged `tag`.
GivenSentences GivenWords(int count, const std::string& tag) {
  GivenSentences given;
  for (int i = 0; i < count; ++i) {
    Sentence sentence;
    sentence.num_attributes = 1;
    sentence.attributes = {absl::StrCat("w", i)};
    sentence.tags = {tag};
    given.train.push_back(std::move(sentence));
  }
  return given;
}

TEST_F(ConllSplitsTest, GivenSentencesReplaceTheTrainingFile) {
  config_.mutable_corpus()->clear_train();
  config_.mutable_corpus()->set_dev_fraction(0.25);
  GivenSentences given = GivenWords(8, "V");
  options_.given = &given;
  PreparedCorpus prepared;
  ASSERT_TRUE(Read(&prepared).ok());
  EXPECT_THAT(Words(prepared.train), ElementsAreArray(WordRange(0, 5)));
  EXPECT_THAT(Words(prepared.dev), ElementsAre("w6", "w7"));
  EXPECT_THAT(Words(prepared.test), ElementsAre("w0", "w1"));  // the file
  EXPECT_TRUE(given.train.empty());                            // taken
}

TEST_F(ConllSplitsTest, GivenSentencesDecideTheSchemeTheConfigLeavesOut) {
  config_.mutable_corpus()->clear_train();
  config_.mutable_corpus()->mutable_format()->clear_tag_scheme();
  config_.mutable_model()->clear_train_scheme();
  GivenSentences chunks = GivenWords(3, "B-NP");
  options_.given = &chunks;
  PreparedCorpus prepared;
  ASSERT_TRUE(Read(&prepared).ok());
  EXPECT_EQ(prepared.format.tag_scheme(), IOB2);
  EXPECT_EQ(prepared.config.model().train_scheme(), IOB2);
  // No columns to note: the sentences came as they are.
  EXPECT_EQ(prepared.inferred_input,
            "labels B-X, I-X, O: IOB2 chunks, scored by conlleval F1");
  GivenSentences letters = GivenWords(3, "a");
  options_.given = &letters;
  PreparedCorpus plain;
  ASSERT_TRUE(Read(&plain).ok());
  EXPECT_EQ(plain.format.tag_scheme(), NONE);
  // Set to TAG_SCHEME_UNSPECIFIED is as good as left out.
  config_.mutable_corpus()->mutable_format()->set_tag_scheme(
      TAG_SCHEME_UNSPECIFIED);
  GivenSentences again = GivenWords(3, "B-NP");
  options_.given = &again;
  PreparedCorpus unspecified;
  ASSERT_TRUE(Read(&unspecified).ok());
  EXPECT_EQ(unspecified.format.tag_scheme(), IOB2);
}

TEST_F(ConllSplitsTest, EmptyGivenSentencesAreLeftOut) {
  config_.mutable_corpus()->clear_train();
  GivenSentences given = GivenWords(2, "V");
  given.train.insert(given.train.begin() + 1, Sentence());  // no tokens
  options_.given = &given;
  PreparedCorpus prepared;
  ASSERT_TRUE(Read(&prepared).ok());
  EXPECT_THAT(Words(prepared.train), ElementsAre("w0", "w1"));
  GivenSentences only_empty;
  only_empty.train.resize(3);
  options_.given = &only_empty;
  PreparedCorpus none;
  EXPECT_EQ(std::string(Read(&none).message()), "no sentences to train on");
}

TEST_F(ConllSplitsTest, GivenSentencesErrors) {
  GivenSentences given = GivenWords(2, "V");
  options_.given = &given;
  PreparedCorpus with_file;
  EXPECT_THAT(Read(&with_file).message(),
              HasSubstr("leave them unset when the sentences are given"));
  config_.mutable_corpus()->clear_train();
  given.train[1].tags.clear();
  given.train[1].source = "X";
  given.train[1].first_line = 2;
  PreparedCorpus untagged;
  EXPECT_EQ(std::string(Read(&untagged).message()),
            "X:2: training data needs a label column");
  GivenSentences none;
  options_.given = &none;
  PreparedCorpus empty;
  EXPECT_EQ(std::string(Read(&empty).message()), "no sentences to train on");
}

}  // namespace
}  // namespace chaintag
