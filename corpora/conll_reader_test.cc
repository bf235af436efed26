#include "corpora/conll_reader.h"

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "corpora/corpus.pb.h"
#include "corpora/label_set.h"
#include "corpora/sentence.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace chaintag {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Reads every item of `text`; fails the test on an error.
std::vector<ConllReader::Item> ReadItems(const std::string& text,
                                         const ConllFormat& format) {
  std::istringstream input(text);
  ConllReader reader(&input, "in.txt", format);
  std::vector<ConllReader::Item> items;
  ConllReader::Item item;
  while (true) {
    const absl::StatusOr<bool> more = reader.Next(&item);
    EXPECT_TRUE(more.ok()) << more.status();
    if (!more.ok() || !*more) break;
    items.push_back(item);
  }
  return items;
}

absl::Status ReadError(const std::string& text, const ConllFormat& format) {
  std::istringstream input(text);
  ConllReader reader(&input, "train.txt", format);
  ConllReader::Item item;
  while (true) {
    const absl::StatusOr<bool> more = reader.Next(&item);
    if (!more.ok()) return more.status();
    if (!*more) return absl::OkStatus();
  }
}

TEST(ConllReaderTest, ReadsSentencesWithDefaultLayout) {
  const auto items = ReadItems(
      "Confidence NN B-NP\nin IN B-PP\n\nRockwell NNP B-NP\n", ConllFormat());
  ASSERT_EQ(items.size(), 2u);
  const Sentence& s = items[0].sentence;
  EXPECT_EQ(items[0].kind, ConllReader::Item::kSentence);
  EXPECT_EQ(items[0].line_number, 1);
  EXPECT_EQ(s.num_attributes, 2);
  EXPECT_EQ(s.size(), 2);
  EXPECT_THAT(s.attributes, ElementsAre("Confidence", "NN", "in", "IN"));
  EXPECT_THAT(s.tags, ElementsAre("B-NP", "B-PP"));
  EXPECT_THAT(s.lines, ElementsAre("Confidence NN B-NP", "in IN B-PP"));
  EXPECT_EQ(s.source, "in.txt");
  EXPECT_EQ(s.first_line, 1);
  EXPECT_EQ(items[1].sentence.first_line, 4);
  EXPECT_EQ(items[1].line_number, 4);
  EXPECT_THAT(items[1].sentence.attributes, ElementsAre("Rockwell", "NNP"));
}

TEST(ConllReaderTest, AcceptsCrlf) {
  const auto items = ReadItems(
      "a DT B-NP\r\ncat NN I-NP\r\n\r\nran VBD B-VP\r\n", ConllFormat());
  ASSERT_EQ(items.size(), 2u);
  EXPECT_THAT(items[0].sentence.tags, ElementsAre("B-NP", "I-NP"));
  EXPECT_THAT(items[0].sentence.lines, ElementsAre("a DT B-NP", "cat NN I-NP"));
  EXPECT_THAT(items[1].sentence.tags, ElementsAre("B-VP"));
  EXPECT_EQ(items[1].sentence.first_line, 4);
}

TEST(ConllReaderTest, DocStartIsAnItemAndItsBlankLineIsDropped) {
  const auto items = ReadItems(
      "-DOCSTART- -X- O O\n\nEU NNP I-NP I-ORG\nrejects VBZ I-VP O\n\n"
      "-DOCSTART- -X- -X- O\n\nPeter NNP I-NP I-PER\n",
      ConllFormat());
  ASSERT_EQ(items.size(), 4u);
  EXPECT_EQ(items[0].kind, ConllReader::Item::kDocStart);
  EXPECT_EQ(items[0].line, "-DOCSTART- -X- O O");
  EXPECT_EQ(items[0].line_number, 1);
  EXPECT_EQ(items[1].kind, ConllReader::Item::kSentence);
  EXPECT_EQ(items[1].sentence.first_line, 3);
  EXPECT_THAT(items[1].sentence.tags, ElementsAre("I-ORG", "O"));
  EXPECT_EQ(items[2].kind, ConllReader::Item::kDocStart);
  EXPECT_EQ(items[2].line, "-DOCSTART- -X- -X- O");
  EXPECT_EQ(items[2].line_number, 6);
  EXPECT_EQ(items[3].sentence.first_line, 8);
  EXPECT_THAT(items[3].sentence.attributes,
              ElementsAre("Peter", "NNP", "I-NP"));
}

std::vector<int64_t> Documents(const std::string& text,
                               const ConllFormat& format) {
  std::vector<int64_t> documents;
  for (const ConllReader::Item& item : ReadItems(text, format)) {
    if (item.kind == ConllReader::Item::kSentence) {
      documents.push_back(item.sentence.document);
    }
  }
  return documents;
}

TEST(ConllReaderTest, SentencesKnowTheirDocument) {
  // No boundaries: one document. A -DOCSTART- before any sentence, or two
  // in a row, starts no empty document.
  EXPECT_THAT(Documents("a X\n\nb Y\n\n", ConllFormat()), ElementsAre(0, 0));
  EXPECT_THAT(Documents("-DOCSTART- O\n\na X\n\nb Y\n\n-DOCSTART- O\n\n"
                        "-DOCSTART- O\n\nc X\n\n-DOCSTART- O\nd X\n",
                        ConllFormat()),
              ElementsAre(0, 0, 1, 2));
  // The blank-line rule: a run of at least three blank lines.
  const std::string text = "a X\n\nb Y\n\n\n\nc X\n\n\nd X\n\n\n\n\ne X\n";
  EXPECT_THAT(Documents(text, ConllFormat()), ElementsAre(0, 0, 0, 0, 0));
  ConllFormat by_blanks;
  by_blanks.set_document_blank_lines(3);
  EXPECT_THAT(Documents(text, by_blanks), ElementsAre(0, 0, 1, 1, 2));
}

TEST(ConllReaderTest, PseudoDocumentsOnlyWhereTheFileHasNoMarks) {
  ConllFormat pseudo;
  pseudo.set_sentences_per_document(2);
  const std::string plain = "a X\n\nb Y\n\nc X\n\nd X\n\ne X\n";
  EXPECT_THAT(Documents(plain, pseudo), ElementsAre(0, 0, 1, 1, 2));
  pseudo.set_sentences_per_document(1);
  EXPECT_THAT(Documents(plain, pseudo), ElementsAre(0, 1, 2, 3, 4));
  pseudo.set_sentences_per_document(5);
  EXPECT_THAT(Documents(plain, pseudo), ElementsAre(0, 0, 0, 0, 0));
  // A file that starts with -DOCSTART- keeps its own documents.
  pseudo.set_sentences_per_document(2);
  EXPECT_THAT(Documents("-DOCSTART- O\n\n" + plain, pseudo),
              ElementsAre(0, 0, 0, 0, 0));
  // So does one whose documents are runs of blank lines.
  pseudo.set_document_blank_lines(3);
  EXPECT_THAT(Documents("a X\n\nb Y\n\nc X\n\n\n\nd X\n", pseudo),
              ElementsAre(0, 0, 0, 1));
  // A negative count is an error naming the field.
  ConllFormat negative;
  negative.set_sentences_per_document(-1);
  std::istringstream input(plain);
  ConllReader reader(&input, "neg.txt", negative);
  ConllReader::Item item;
  const absl::StatusOr<bool> next = reader.Next(&item);
  ASSERT_FALSE(next.ok());
  EXPECT_THAT(std::string(next.status().message()),
              ::testing::HasSubstr("sentences_per_document"));
}

TEST(ConllReaderTest, DocStartRightAfterATokenEndsTheSentence) {
  const auto items =
      ReadItems("a X O\n-DOCSTART- -X- O\nb Y O\n", ConllFormat());
  ASSERT_EQ(items.size(), 3u);
  EXPECT_THAT(items[0].sentence.attributes, ElementsAre("a", "X"));
  EXPECT_EQ(items[1].kind, ConllReader::Item::kDocStart);
  EXPECT_EQ(items[1].line_number, 2);
  EXPECT_THAT(items[2].sentence.attributes, ElementsAre("b", "Y"));
  EXPECT_EQ(items[2].sentence.first_line, 3);
}

TEST(ConllReaderTest, ManyAndTrailingBlankLines) {
  const auto items =
      ReadItems("\n \n a X O\n\n\t\n\nb Y O\nc Z O\n\n\n  \n", ConllFormat());
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].sentence.first_line, 3);
  EXPECT_THAT(items[0].sentence.lines, ElementsAre(" a X O"));
  EXPECT_EQ(items[1].sentence.first_line, 7);
  EXPECT_EQ(items[1].sentence.size(), 2);
}

TEST(ConllReaderTest, EmptyInputHasNoSentences) {
  EXPECT_THAT(ReadItems("", ConllFormat()), IsEmpty());
  EXPECT_THAT(ReadItems("\n\n", ConllFormat()), IsEmpty());
}

TEST(ConllReaderTest, MixedTabsAndSpacesCollapse) {
  const auto items =
      ReadItems("a\tDT  B-NP\ncat \t NN\tI-NP\t\n", ConllFormat());
  ASSERT_EQ(items.size(), 1u);
  EXPECT_THAT(items[0].sentence.attributes,
              ElementsAre("a", "DT", "cat", "NN"));
  EXPECT_THAT(items[0].sentence.tags, ElementsAre("B-NP", "I-NP"));
  EXPECT_THAT(items[0].sentence.lines,
              ElementsAre("a\tDT  B-NP", "cat \t NN\tI-NP\t"));
}

TEST(ConllReaderTest, WrongFieldCountNamesSourceAndLine) {
  const absl::Status status = ReadError(
      "a DT B-NP\ncat NN I-NP\n\ndog NN I-NP\nran VBD\n", ConllFormat());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "train.txt:5: expected 3 fields, got 2 (every token line has the "
            "fields of the first, line 1)");
}

TEST(ConllReaderTest, ErrorIsSticky) {
  std::istringstream input("a b c\nd e\nf g h\n");
  ConllReader reader(&input, "x", ConllFormat());
  ConllReader::Item item;
  const std::string message =
      "x:2: expected 3 fields, got 2 (every token line has the fields of the "
      "first, line 1)";
  EXPECT_EQ(reader.Next(&item).status().message(), message);
  EXPECT_EQ(reader.Next(&item).status().message(), message);
}

TEST(ConllReaderTest, LabelColumnInTheMiddle) {
  ConllFormat format;
  format.set_label_column(1);
  const auto items = ReadItems("w1 NN x1\nw2 VB x2\n", format);
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].sentence.num_attributes, 2);
  EXPECT_THAT(items[0].sentence.attributes,
              ElementsAre("w1", "x1", "w2", "x2"));
  EXPECT_THAT(items[0].sentence.tags, ElementsAre("NN", "VB"));
}

TEST(ConllReaderTest, ExplicitAttributeColumnsInTheirOrder) {
  ConllFormat format;
  format.add_attribute_columns(3);
  format.add_attribute_columns(0);
  format.set_label_column(-2);
  std::istringstream input("w1 NN x1 y1\n");
  ConllReader reader(&input, "in", format);
  ConllReader::Item item;
  ASSERT_TRUE(*reader.Next(&item));
  EXPECT_EQ(item.sentence.num_attributes, 2);
  EXPECT_THAT(item.sentence.attributes, ElementsAre("y1", "w1"));
  EXPECT_THAT(item.sentence.tags, ElementsAre("x1"));
  EXPECT_EQ(reader.resolved_format().label_column(), 2);
  EXPECT_THAT(reader.resolved_format().attribute_columns(), ElementsAre(3, 0));
}

TEST(ConllReaderTest, ColumnErrors) {
  ConllFormat format;
  format.set_label_column(5);
  EXPECT_EQ(ReadError("\na b c\n", format).message(),
            "train.txt:2: label column 5 out of range (3 fields)");
  format.set_label_column(-4);
  EXPECT_EQ(ReadError("a b c\n", format).message(),
            "train.txt:1: label column -4 out of range (3 fields)");
  format.set_label_column(-1);
  format.add_attribute_columns(0);
  format.add_attribute_columns(3);
  EXPECT_EQ(ReadError("a b c\n", format).message(),
            "train.txt:1: attribute column 3 out of range (3 fields)");
  format.set_attribute_columns(1, 2);
  EXPECT_EQ(ReadError("a b c\n", format).message(),
            "train.txt:1: attribute column 2 is the label column");
  EXPECT_EQ(ReadError("x\n", ConllFormat()).code(),
            absl::StatusCode::kInvalidArgument);  // no attribute columns
}

TEST(ConllReaderTest, AllowMissingLabelWithResolvedFormat) {
  ConllFormat format;
  format.set_label_column(2);
  format.set_allow_missing_label(true);
  // Tagging input without the label column.
  std::istringstream input("a DT\ncat NN\n\ndog NN\n");
  ConllReader reader(&input, "stdin", format);
  ConllReader::Item item;
  ASSERT_TRUE(*reader.Next(&item));
  EXPECT_FALSE(reader.has_labels());
  EXPECT_FALSE(item.sentence.has_tags());
  EXPECT_THAT(item.sentence.attributes, ElementsAre("a", "DT", "cat", "NN"));
  ASSERT_TRUE(*reader.Next(&item));
  EXPECT_THAT(item.sentence.attributes, ElementsAre("dog", "NN"));
  EXPECT_FALSE(*reader.Next(&item));

  // The same format on labelled input reads the labels.
  const auto labelled = ReadItems("a DT B-NP\n", format);
  ASSERT_EQ(labelled.size(), 1u);
  EXPECT_THAT(labelled[0].sentence.tags, ElementsAre("B-NP"));

  // Missing consistently, not line by line.
  EXPECT_EQ(ReadError("a DT\ncat NN I-NP\n", format).message(),
            "train.txt:2: expected 2 fields, got 3 (every token line has the "
            "fields of the first, line 1)");
  EXPECT_EQ(ReadError("a DT B-NP\ncat NN\n", format).message(),
            "train.txt:2: expected 3 fields, got 2 (every token line has the "
            "fields of the first, line 1)");
  // Too few fields even without the label: what a line holds.
  EXPECT_EQ(ReadError("a\n", format).message(),
            "train.txt:1: expected 2 fields (3 with the label), got 1");
  format.set_allow_missing_label(false);
  EXPECT_EQ(ReadError("a DT\n", format).message(),
            "train.txt:1: label column 2 out of range (2 fields)");
}

TEST(ConllReaderTest, AllowMissingLabelWithLastColumnAndExplicitAttributes) {
  ConllFormat format;  // label_column -1
  format.add_attribute_columns(0);
  format.add_attribute_columns(1);
  format.set_allow_missing_label(true);
  std::istringstream input("a DT\ncat NN\n");
  ConllReader reader(&input, "stdin", format);
  ConllReader::Item item;
  ASSERT_TRUE(*reader.Next(&item));
  EXPECT_FALSE(item.sentence.has_tags());
  EXPECT_THAT(item.sentence.attributes, ElementsAre("a", "DT", "cat", "NN"));
  EXPECT_EQ(reader.resolved_format().label_column(), 2);

  const auto labelled = ReadItems("a DT B-NP\n", format);
  EXPECT_THAT(labelled[0].sentence.tags, ElementsAre("B-NP"));
}

TEST(ConllReaderTest, UnseenTestLabelsAreJustStrings) {
  const auto train = ReadItems("a X B-NP\nb Y O\n", ConllFormat());
  const auto test = ReadItems("c Z I-LST\n", ConllFormat());
  LabelSet labels;
  for (const std::string& tag : train[0].sentence.tags) labels.Add(tag);
  EXPECT_EQ(labels.size(), 2);
  EXPECT_THAT(test[0].sentence.tags, ElementsAre("I-LST"));
  EXPECT_EQ(labels.Find(test[0].sentence.tags[0]), -1);
}

TEST(ConllReaderTest, ReusedItemIsOverwritten) {
  std::istringstream input("aaaaaaaaaaaaaaaaaaaaaaa b c\nd e f\n\ng h i\n");
  ConllReader reader(&input, "in", ConllFormat());
  ConllReader::Item item;
  ASSERT_TRUE(*reader.Next(&item));
  ASSERT_TRUE(*reader.Next(&item));
  EXPECT_THAT(item.sentence.attributes, ElementsAre("g", "h"));
  EXPECT_THAT(item.sentence.tags, ElementsAre("i"));
  EXPECT_THAT(item.sentence.lines, ElementsAre("g h i"));
  EXPECT_FALSE(*reader.Next(&item));
}

TEST(ReadConllFileTest, ReadsFileAndDropsDocStart) {
  const std::string path =
      std::string(std::getenv("TEST_TMPDIR")) + "/small.conll";
  {
    std::ofstream out(path, std::ios::binary);
    out << "-DOCSTART- -X- O O\n\nEU NNP I-NP I-ORG\n\nPeter NNP I-NP I-PER\n";
  }
  const auto sentences = ReadConllFile(path, ConllFormat());
  ASSERT_TRUE(sentences.ok()) << sentences.status();
  ASSERT_EQ(sentences->size(), 2u);
  EXPECT_EQ((*sentences)[0].source, path);
  EXPECT_EQ((*sentences)[0].first_line, 3);
  EXPECT_THAT((*sentences)[1].tags, ElementsAre("I-PER"));
}

TEST(ForEachConllSentenceTest, VisitsInOrderStopsWhenToldAndPassesErrors) {
  const std::string path =
      std::string(std::getenv("TEST_TMPDIR")) + "/visit.conll";
  {
    std::ofstream out(path, std::ios::binary);
    out << "-DOCSTART- -X- O\n\na x B\n\nb y I\nc z O\n\nd w O\n";
  }
  std::vector<std::pair<int64_t, std::string>> seen;
  ConllFormat resolved;
  int num_fields = 0;
  absl::Status status = ForEachConllSentence(
      path, ConllFormat(),
      [&](int64_t index, Sentence* sentence) -> absl::StatusOr<bool> {
        seen.emplace_back(index, sentence->lines[0]);
        return true;
      },
      &resolved, &num_fields);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_THAT(seen, ElementsAre(std::make_pair(int64_t{0}, "a x B"),
                                std::make_pair(int64_t{1}, "b y I"),
                                std::make_pair(int64_t{2}, "d w O")));
  EXPECT_EQ(resolved.label_column(), 2);
  EXPECT_EQ(num_fields, 3);
  // Stops after the sentence visit declines to go past.
  seen.clear();
  status = ForEachConllSentence(
      path, ConllFormat(),
      [&](int64_t index, Sentence* sentence) -> absl::StatusOr<bool> {
        seen.emplace_back(index, sentence->lines[0]);
        return index < 1;
      });
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(seen.size(), 2u);
  // The visitor's error ends the walk and is returned as it is.
  status = ForEachConllSentence(
      path, ConllFormat(),
      [&](int64_t index, Sentence* sentence) -> absl::StatusOr<bool> {
        if (index == 1) return absl::InvalidArgumentError("no");
        return true;
      });
  EXPECT_EQ(status, absl::InvalidArgumentError("no"));
}

TEST(ReadConllFileTest, MissingFileNamesThePath) {
  const auto sentences = ReadConllFile("/nonexistent/train.txt", ConllFormat());
  EXPECT_FALSE(sentences.ok());
  EXPECT_THAT(std::string(sentences.status().message()),
              ::testing::HasSubstr("/nonexistent/train.txt"));
}

ConllFormat CrfsuiteFormat() {
  ConllFormat format;
  format.set_layout(ConllFormat::CRFSUITE);
  return format;
}

// Token t's attributes as "name=value" strings.
std::vector<std::string> ItemsOf(const Sentence& s, int t) {
  std::vector<std::string> out;
  for (int k = s.item_begin[t]; k < s.item_begin[t + 1]; ++k) {
    out.push_back(std::string(s.item_name(k)) + "=" +
                  std::to_string(s.item_value(k)).substr(0, 4));
  }
  return out;
}

TEST(ConllReaderCrfsuiteTest, ReadsLabelsAttributesAndValues) {
  const auto items = ReadItems(
      "B-NP\tw=He\tpos=PRP:2.5\t__BOS__\r\n"
      "B-VP\tw=reckons\tx:\n"
      "\n\n\n"
      "O\tw=.\n",
      CrfsuiteFormat());
  ASSERT_EQ(items.size(), 2u);
  const Sentence& s = items[0].sentence;
  EXPECT_EQ(items[0].line_number, 1);
  EXPECT_EQ(s.first_line, 1);
  EXPECT_EQ(s.source, "in.txt");
  EXPECT_EQ(s.num_attributes, 0);
  EXPECT_THAT(s.attributes, IsEmpty());
  EXPECT_THAT(s.lines, IsEmpty());
  EXPECT_EQ(s.size(), 2);
  EXPECT_THAT(s.tags, ElementsAre("B-NP", "B-VP"));
  EXPECT_THAT(s.item_begin, ElementsAre(0, 3, 5));
  EXPECT_EQ(s.item_names, "w=Hepos=PRP__BOS__w=reckonsx");
  EXPECT_THAT(s.item_name_ends, ElementsAre(4, 11, 18, 27, 28));
  // One value is not 1, so every value is stored; "x:" is 1.
  EXPECT_THAT(s.item_values, ElementsAre(1.0f, 2.5f, 1.0f, 1.0f, 1.0f));
  EXPECT_THAT(ItemsOf(s, 0),
              ElementsAre("w=He=1.00", "pos=PRP=2.50", "__BOS__=1.00"));
  const Sentence& s2 = items[1].sentence;
  EXPECT_EQ(s2.first_line, 6);
  EXPECT_EQ(s2.size(), 1);
  EXPECT_THAT(s2.tags, ElementsAre("O"));
  EXPECT_EQ(s2.item_names, "w=.");
  EXPECT_THAT(s2.item_values, IsEmpty());  // all 1
  EXPECT_EQ(s2.item_value(0), 1.0f);
}

TEST(ConllReaderCrfsuiteTest, UnescapesNamesAndKeepsSpacesAndOtherBackslashes) {
  const auto items =
      ReadItems("a\\:b\tw=x\\:y:0.5\tback\\\\slash\tw is\\n\t\t\tlast\\\n",
                CrfsuiteFormat());
  ASSERT_EQ(items.size(), 1u);
  const Sentence& s = items[0].sentence;
  EXPECT_THAT(s.tags, ElementsAre("a:b"));
  ASSERT_EQ(s.num_items(), 4);
  EXPECT_EQ(s.item_name(0), "w=x:y");
  EXPECT_EQ(s.item_value(0), 0.5f);
  EXPECT_EQ(s.item_name(1), "back\\slash");
  EXPECT_EQ(s.item_name(2), "w is\\n");
  EXPECT_EQ(s.item_name(3), "last\\");
  EXPECT_EQ(s.item_value(3), 1.0f);
}

TEST(ConllReaderCrfsuiteTest, CommentsAndWeightDeclarations) {
  const auto items = ReadItems(
      "# a comment line\n"
      "@weight:1\n"
      "B-NP\tw=a\t#w=b\tignored\n"
      "#\tanother\n"
      "I-NP\t# only a label\n"
      "\t\t\n"  // only TABs: blank
      "@weight:1.0\t# a comment\n"
      "O\tw=c\n",
      CrfsuiteFormat());
  ASSERT_EQ(items.size(), 2u);
  const Sentence& s = items[0].sentence;
  EXPECT_EQ(s.first_line, 3);  // the first token's line
  EXPECT_THAT(s.tags, ElementsAre("B-NP", "I-NP"));
  EXPECT_THAT(s.item_begin, ElementsAre(0, 1, 1));
  EXPECT_EQ(s.item_names, "w=a");
  EXPECT_EQ(items[1].sentence.first_line, 8);
  EXPECT_THAT(items[1].sentence.tags, ElementsAre("O"));
}

TEST(ConllReaderCrfsuiteTest, ReusedItemStartsClean) {
  std::istringstream input("A\tx:2\ty\n\nB\tz\n");
  ConllReader reader(&input, "in.txt", CrfsuiteFormat());
  ConllReader::Item item;
  ASSERT_TRUE(*reader.Next(&item));
  ASSERT_TRUE(*reader.Next(&item));
  EXPECT_THAT(item.sentence.tags, ElementsAre("B"));
  EXPECT_EQ(item.sentence.item_names, "z");
  EXPECT_THAT(item.sentence.item_values, IsEmpty());
  EXPECT_THAT(item.sentence.item_begin, ElementsAre(0, 1));
  EXPECT_FALSE(*reader.Next(&item));
}

TEST(ConllReaderCrfsuiteTest, ErrorsNameFileAndLine) {
  const ConllFormat format = CrfsuiteFormat();
  struct Case {
    std::string text;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"A\tx\n\nB\tx:abc\n", "train.txt:3: attribute 'x': value 'abc' is not"},
      {"A\tx:1e999\n", "train.txt:1: attribute 'x': value '1e999' is not"},
      {"A\tx:nan\n", "train.txt:1: attribute 'x': value 'nan' is not"},
      {"A\tx:1:2\n", "train.txt:1: attribute 'x': value '1:2' is not"},
      {"A\tx\nB\t:3\n", "train.txt:2: empty attribute name in field ':3'"},
      {"A\t:\n", "train.txt:1: empty attribute name"},
      {"@weight:2\nA\tx\n",
       "train.txt:1: @weight:2: sequence weights other than 1 are not "
       "supported"},
      {"A\tx\n@weight:0.5\n", "train.txt:2: @weight:0.5: sequence weights"},
      {"@weight:heavy\n", "train.txt:1: @weight 'heavy' is not a number"},
      {"@label:x\n", "train.txt:1: unknown declaration '@label'"},
      {"@weight:1\tA\n", "train.txt:1: unexpected field after the @weight"},
  };
  for (const Case& c : cases) {
    const absl::Status status = ReadError(c.text, format);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.text;
    EXPECT_THAT(std::string(status.message()), ::testing::StartsWith(c.message))
        << c.text;
  }
}

TEST(ConllReaderCrfsuiteTest, ReadConllFileDropsNothingAndResolvesFormat) {
  const std::string path =
      std::string(std::getenv("TEST_TMPDIR")) + "/crfsuite.txt";
  {
    std::ofstream out(path);
    out << "B-NP\tw=He\n\nO\tw=.\n\n";
  }
  ConllFormat resolved;
  absl::StatusOr<std::vector<Sentence>> sentences =
      ReadConllFile(path, CrfsuiteFormat(), &resolved);
  ASSERT_TRUE(sentences.ok()) << sentences.status();
  ASSERT_EQ(sentences->size(), 2u);
  EXPECT_EQ((*sentences)[1].item_names, "w=.");
  EXPECT_EQ(resolved.layout(), ConllFormat::CRFSUITE);
}

}  // namespace
}  // namespace chaintag
