// The staged corpora read as the readers, the tag schemes and the scorer
// see them: sentence, token, chunk, entity and document counts of
// CoNLL-2000 and CoNLL-2003, IOB1 <-> IOB2 <-> IOBES round trips on real
// NER tags, and OCR's words, letters and folds. Needs $CHAINTAG_CORPORA
// (tagged requires-corpora); the readers' own tests use written files.

#include <cstdint>
#include <fstream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/corpora_testing.h"
#include "corpora/conll_reader.h"
#include "corpora/conlleval.h"
#include "corpora/corpus.pb.h"
#include "corpora/label_set.h"
#include "corpora/ocr_reader.h"
#include "corpora/sentence.h"
#include "corpora/tag_scheme.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace chaintag {
namespace {

using ::testing::ElementsAre;
using Tags = std::vector<std::string>;

struct Counts {
  int64_t sentences = 0;
  int64_t tokens = 0;
};

Counts Count(const std::vector<Sentence>& sentences) {
  Counts c;
  c.sentences = sentences.size();
  for (const Sentence& s : sentences) c.tokens += s.size();
  return c;
}

TEST(ConllCorpusTest, Conll2000) {
  const std::string train = CorpusFile("conll2000/train.txt");
  const std::string test = CorpusFile("conll2000/test.txt");
  ASSERT_FALSE(train.empty()) << MissingCorpus("conll2000/train.txt");
  ASSERT_FALSE(test.empty()) << MissingCorpus("conll2000/test.txt");
  const auto train_sentences = ReadConllFile(train, ConllFormat());
  ASSERT_TRUE(train_sentences.ok()) << train_sentences.status();
  const Counts train_counts = Count(*train_sentences);
  EXPECT_EQ(train_counts.sentences, 8936);
  EXPECT_EQ(train_counts.tokens, 211727);
  const Sentence& first = (*train_sentences)[0];
  EXPECT_EQ(first.attribute(0, 0), "Confidence");
  EXPECT_EQ(first.attribute(1, 1), "IN");
  EXPECT_EQ(first.tags[1], "B-PP");

  const auto test_sentences = ReadConllFile(test, ConllFormat());
  ASSERT_TRUE(test_sentences.ok()) << test_sentences.status();
  const Counts test_counts = Count(*test_sentences);
  EXPECT_EQ(test_counts.sentences, 2012);
  EXPECT_EQ(test_counts.tokens, 47377);

  // 22 chunk tags in train, 19 in test; I-LST is only in test.
  LabelSet labels;
  for (const Sentence& s : *train_sentences) {
    for (const std::string& tag : s.tags) labels.Add(tag);
  }
  EXPECT_EQ(labels.size(), 22);
  std::set<std::string> test_tags;
  for (const Sentence& s : *test_sentences) {
    test_tags.insert(s.tags.begin(), s.tags.end());
  }
  EXPECT_EQ(test_tags.size(), 19u);
  EXPECT_EQ(labels.Find("I-LST"), -1);
  EXPECT_EQ(test_tags.count("I-LST"), 1u);
}

TEST(ConllCorpusTest, Conll2003) {
  struct Expected {
    const char* file;
    int64_t sentences, tokens, documents;
  };
  for (const Expected& e : {Expected{"eng.train", 14041, 203621, 946},
                            Expected{"eng.testa", 3250, 51362, 216},
                            Expected{"eng.testb", 3453, 46435, 231}}) {
    const std::string path = CorpusFile(absl::StrCat("conll2003/", e.file));
    ASSERT_FALSE(path.empty())
        << MissingCorpus(absl::StrCat("conll2003/", e.file));
    std::ifstream input(path, std::ios::binary);
    ConllReader reader(&input, e.file, ConllFormat());
    ConllReader::Item item;
    Counts counts;
    int64_t documents = 0;
    while (true) {
      const absl::StatusOr<bool> more = reader.Next(&item);
      ASSERT_TRUE(more.ok()) << more.status();
      if (!*more) break;
      if (item.kind == ConllReader::Item::kDocStart) {
        ++documents;
      } else {
        ++counts.sentences;
        counts.tokens += item.sentence.size();
        ASSERT_EQ(item.sentence.num_attributes, 3);
        ASSERT_EQ(item.sentence.document, documents - 1);
      }
    }
    EXPECT_EQ(counts.sentences, e.sentences) << e.file;
    EXPECT_EQ(counts.tokens, e.tokens) << e.file;
    EXPECT_EQ(documents, e.documents) << e.file;
  }
}

ConllFormat Conll2003Ner() {
  ConllFormat format;
  format.set_label_column(3);
  format.set_tag_scheme(IOB1);
  return format;
}

TEST(TagSchemeCorpusTest, Conll2003NerRoundTripsThroughIob2AndIobes) {
  const std::string path = CorpusFile("conll2003/eng.train");
  ASSERT_FALSE(path.empty()) << MissingCorpus("conll2003/eng.train");
  const auto sentences = ReadConllFile(path, Conll2003Ner());
  ASSERT_TRUE(sentences.ok()) << sentences.status();
  ASSERT_EQ(sentences->size(), 14041u);

  int64_t entities = 0, changed_by_canonical_iob1 = 0;
  for (const Sentence& s : *sentences) {
    const std::vector<Chunk> chunks = ExtractChunks(s.tags);
    entities += chunks.size();
    const Tags iob2 = ConvertTags(s.tags, IOB1, IOB2);
    const Tags iob1 = ConvertTags(iob2, IOB2, IOB1);
    const Tags iobes = ConvertTags(iob1, IOB1, IOBES);
    ASSERT_EQ(ExtractChunks(iob2), chunks) << s.source << ":" << s.first_line;
    ASSERT_EQ(ExtractChunks(iob1), chunks) << s.source << ":" << s.first_line;
    ASSERT_EQ(ExtractChunks(iobes), chunks) << s.source << ":" << s.first_line;
    ASSERT_EQ(ConvertTags(iobes, IOBES, IOB1), iob1);
    for (size_t t = 0; t < iob1.size(); ++t) {
      changed_by_canonical_iob1 += iob1[t] != s.tags[t];
    }
  }
  EXPECT_EQ(entities, 23499);
  // Only the two B-MISC directly after O (Atlanta, Urdu-speaking) become I-.
  EXPECT_EQ(changed_by_canonical_iob1, 2);

  // First sentence: "EU rejects German call to boycott British lamb ."
  EXPECT_EQ(ConvertTags((*sentences)[0].tags, IOB1, IOB2),
            Tags({"B-ORG", "O", "B-MISC", "O", "O", "O", "B-MISC", "O", "O"}));
}

TEST(TagSchemeCorpusTest, Conll2000ChunkCounts) {
  const std::string train = CorpusFile("conll2000/train.txt");
  const std::string test = CorpusFile("conll2000/test.txt");
  ASSERT_FALSE(train.empty()) << MissingCorpus("conll2000/train.txt");
  ASSERT_FALSE(test.empty()) << MissingCorpus("conll2000/test.txt");
  for (const auto& [path, expected] :
       {std::pair<std::string, int64_t>{train, 106978}, {test, 23852}}) {
    const auto sentences = ReadConllFile(path, ConllFormat());
    ASSERT_TRUE(sentences.ok()) << sentences.status();
    int64_t chunks = 0;
    for (const Sentence& s : *sentences) {
      chunks += ExtractChunks(s.tags).size();
      // The file is valid IOB2: canonicalising changes nothing.
      ASSERT_EQ(ConvertTags(s.tags, IOB2, IOB2), s.tags);
    }
    EXPECT_EQ(chunks, expected) << path;
  }
}

TEST(OcrCorpusTest, LetterData) {
  const std::string path = CorpusFile("ocr/letter.data.gz");
  ASSERT_FALSE(path.empty()) << MissingCorpus("ocr/letter.data.gz");
  const auto words = ReadOcrFile(path);
  ASSERT_TRUE(words.ok()) << words.status();
  EXPECT_EQ(words->size(), 6877u);
  int64_t letters = 0;
  std::vector<int> words_per_fold(10, 0), letters_per_fold(10, 0);
  for (const OcrWord& w : *words) {
    letters += w.letters.size();
    ASSERT_EQ(w.pixels.size(), w.letters.size() * kOcrPixelsPerLetter);
    ASSERT_GE(w.fold, 0);
    ASSERT_LT(w.fold, 10);
    ++words_per_fold[w.fold];
    letters_per_fold[w.fold] += w.letters.size();
  }
  EXPECT_EQ(letters, 52152);
  EXPECT_THAT(words_per_fold,
              ElementsAre(626, 704, 684, 698, 693, 651, 739, 717, 690, 675));
  EXPECT_THAT(letters_per_fold, ElementsAre(4617, 5375, 5110, 5353, 5270, 5001,
                                            5583, 5370, 5331, 5142));
  std::string first;
  for (int l : words->front().letters) first += static_cast<char>('a' + l);
  EXPECT_EQ(first, "ommanding");
  EXPECT_EQ(words->front().first_line, 1);
  EXPECT_EQ(words->back().first_line, 52152 - 13);  // last word: 14 letters
  EXPECT_EQ(words->back().letters.back(), 'l' - 'a');
}

}  // namespace
}  // namespace chaintag
