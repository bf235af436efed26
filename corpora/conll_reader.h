// Reader for CoNLL column files: one token per line, fields separated by
// spaces and/or tabs, a blank line between sentences, optional -DOCSTART-
// lines. With ConllFormat::CRFSUITE it reads CRFsuite's attribute files
// instead (see Next). Streams one sentence at a time so memory stays constant
// in the input size; ReadConllFile collects a whole file.
//
// Thread-safety: a ConllReader is used by one thread at a time; distinct
// readers are independent.

#ifndef CHAINTAG_CORPORA_CONLL_READER_H_
#define CHAINTAG_CORPORA_CONLL_READER_H_

#include <cstdint>
#include <functional>
#include <istream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "corpora/corpus.pb.h"
#include "corpora/sentence.h"

namespace chaintag {

// Layout rules (see ConllFormat): label_column < 0 counts from the end and is
// resolved, like an empty attribute_columns ("every column but the label"),
// against the field count of the first token line; every token line must
// have that many fields. With allow_missing_label a file may instead
// consistently lack the label column when it is the last one; this is
// recognised when the first token line has exactly label_column fields
// (label_column >= 0), or when a negative label_column would land on one of
// the explicit attribute_columns. So for tagging input, pass the
// resolved_format() of the training file, not a format with label_column -1
// and empty attribute_columns (which cannot tell "word POS" without label
// from "word" with label POS).
class ConllReader {
 public:
  struct Item {
    enum Kind { kSentence, kDocStart };
    Kind kind = kSentence;
    Sentence sentence;        // for kSentence
    std::string line;         // for kDocStart: the line as read (no CR/LF)
    int64_t line_number = 0;  // 1-based line of the item's first line
  };

  // Streams from `input` (not owned, must outlive the reader); `source`
  // names the input in errors ("train.txt", "stdin").
  ConllReader(std::istream* input, std::string source,
              const ConllFormat& format);

  ConllReader(const ConllReader&) = delete;
  ConllReader& operator=(const ConllReader&) = delete;

  // Fills the next item: true, or false at the end of input. The blank line
  // after a -DOCSTART- line is dropped. After an error every later call
  // returns the same error.
  //
  // ConllFormat::CRFSUITE reads CRFsuite's format (its frontend's reader):
  // TAB-separated fields, the first the label, the others attributes `name`
  // or `name:value` (an empty value means 1), `\:` a colon and `\\` a
  // backslash in names and values, consecutive TABs one separator, blank
  // lines between sequences. A field starting with `#` comments out the rest
  // of the line (a line that starts with one adds no token); a first field
  // `@weight:V` declares the sequence's weight, which must be 1 (there are
  // no per-sequence weights), and any other `@` declaration is an error, as
  // are a value that is not a finite number and an empty name. Sentences
  // get the item_* lists and tags (the first field, also for tagging input)
  // but no `lines`; there are no documents.
  absl::StatusOr<bool> Next(Item* item);

  // `format` with label_column made non-negative and attribute_columns
  // listed explicitly, as resolved against the first token line (and
  // allow_missing_label as given). Valid once Next() has returned a sentence.
  const ConllFormat& resolved_format() const { return resolved_; }
  // Whether the token lines carry the label column; valid as above.
  bool has_labels() const { return has_labels_; }
  // Fields of every token line; valid as above.
  int num_fields() const { return num_fields_; }

 private:
  // Reads the next line into line_; false at end of input.
  bool ReadLine();
  // Splits line_ into fields_.
  void SplitLine();
  // A document boundary: the next sentence begins a new document, unless
  // the current one has none yet.
  void StartDocument();
  // Fixes the column layout from the first token line (fields_).
  absl::Status ResolveLayout();
  // Next() for ConllFormat::CRFSUITE, and its parse of one line (line_)
  // into `sentence`: false (and nothing added) for a line without an item.
  absl::StatusOr<bool> NextCrfsuite(Item* item);
  absl::StatusOr<bool> ParseCrfsuiteLine(Sentence* sentence);
  absl::Status Error(absl::string_view message) const;

  std::istream* input_;
  std::string source_;
  ConllFormat format_;
  ConllFormat resolved_;

  std::string line_;
  int64_t line_number_ = 0;
  bool pending_ = false;  // line_ was read but belongs to the next item
  int64_t document_ = 0;
  bool document_has_sentence_ = false;
  int blank_run_ = 0;  // blank lines since the last token line
  // Sentences of the current document, and whether the file's documents
  // are format_.sentences_per_document sentences long (decided at its
  // first sentence: no -DOCSTART- before it, no blank-line documents).
  int64_t document_sentences_ = 0;
  bool pseudo_documents_ = false;
  bool first_sentence_seen_ = false;
  std::vector<absl::string_view> fields_;
  std::string scratch_;  // a CRFsuite label or value, unescaped
  absl::Status status_;

  bool layout_fixed_ = false;
  bool has_labels_ = true;
  int num_fields_ = 0;
  int64_t layout_line_ = 0;  // the first token line, which fixed the layout
  int label_column_ = -1;
  std::vector<int> attribute_columns_;
};

// The [begin, end) sentence ranges of each document (runs of one
// Sentence::document), in order.
std::vector<std::pair<int, int>> DocumentRanges(
    const std::vector<Sentence>& sentences);

// Streams the sentences of the file at `path` (named as given in errors;
// -DOCSTART- items dropped) to visit(index, sentence), index counting them
// from 0, until visit returns false or an error, which is returned. Errors
// when the file cannot be opened. When non-null, `resolved` and
// `num_fields` are set as by ReadConllFile, once a sentence is read.
absl::Status ForEachConllSentence(
    const std::string& path, const ConllFormat& format,
    const std::function<absl::StatusOr<bool>(int64_t index,
                                             Sentence* sentence)>& visit,
    ConllFormat* resolved = nullptr, int* num_fields = nullptr);

// Reads the whole file at `path` (named as given in errors); -DOCSTART-
// items are dropped. Errors when the file cannot be opened.
// When non-null, `resolved` gets the reader's resolved_format() and
// `num_fields` its num_fields() (both unset for a file without sentences).
absl::StatusOr<std::vector<Sentence>> ReadConllFile(
    const std::string& path, const ConllFormat& format,
    ConllFormat* resolved = nullptr, int* num_fields = nullptr);

}  // namespace chaintag

#endif  // CHAINTAG_CORPORA_CONLL_READER_H_
