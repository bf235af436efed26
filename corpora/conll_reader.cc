#include "corpora/conll_reader.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <istream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "corpora/corpus.pb.h"
#include "corpora/sentence.h"

namespace chaintag {
namespace {

constexpr absl::string_view kDocStart = "-DOCSTART-";

// Overwrites element `*used` of `v` (reusing its string's capacity when the
// caller hands the same Item back) or appends, then advances `*used`.
void Put(std::vector<std::string>* v, size_t* used, absl::string_view value) {
  if (*used < v->size()) {
    (*v)[*used].assign(value.data(), value.size());
  } else {
    v->emplace_back(value);
  }
  ++*used;
}

}  // namespace

ConllReader::ConllReader(std::istream* input, std::string source,
                         const ConllFormat& format)
    : input_(input), source_(std::move(source)), format_(format) {}

absl::Status ConllReader::Error(absl::string_view message) const {
  return absl::InvalidArgumentError(
      absl::StrCat(source_, ":", line_number_, ": ", message));
}

bool ConllReader::ReadLine() {
  if (!std::getline(*input_, line_)) return false;
  ++line_number_;
  if (!line_.empty() && line_.back() == '\r') line_.pop_back();
  if (line_number_ == 1 && absl::string_view(line_).substr(0, 3) ==
                               "\xEF\xBB\xBF") {  // UTF-8 byte order mark
    line_.erase(0, 3);
  }
  return true;
}

void ConllReader::SplitLine() {
  fields_.clear();
  const char* p = line_.data();
  const char* const end = p + line_.size();
  while (p < end) {
    while (p < end && (*p == ' ' || *p == '\t')) ++p;
    const char* const begin = p;
    while (p < end && *p != ' ' && *p != '\t') ++p;
    if (p > begin) fields_.emplace_back(begin, p - begin);
  }
}

absl::Status ConllReader::ResolveLayout() {
  if (format_.sentences_per_document() < 0) {
    return Error(absl::StrCat("sentences_per_document must be >= 0, got ",
                              format_.sentences_per_document()));
  }
  const int num_fields = static_cast<int>(fields_.size());
  const bool allow_missing = format_.allow_missing_label();
  const auto& explicit_columns = format_.attribute_columns();
  auto is_explicit_attribute = [&](int column) {
    for (int c : explicit_columns) {
      if (c == column) return true;
    }
    return false;
  };

  int label = format_.label_column();
  has_labels_ = true;
  if (label >= 0) {
    if (allow_missing && label == num_fields) {
      has_labels_ = false;
    } else if (label >= num_fields) {
      return Error(absl::StrCat("label column ", label, " out of range (",
                                num_fields, " fields)"));
    }
  } else if (allow_missing && label == -1 &&
             is_explicit_attribute(num_fields - 1)) {
    // The last field is an attribute, so the label column (the last one)
    // must be missing.
    has_labels_ = false;
    label = num_fields;
  } else {
    if (num_fields + label < 0) {
      return Error(absl::StrCat("label column ", label, " out of range (",
                                num_fields, " fields)"));
    }
    label += num_fields;
  }

  attribute_columns_.clear();
  if (explicit_columns.empty()) {
    for (int c = 0; c < num_fields; ++c) {
      if (c != label) attribute_columns_.push_back(c);
    }
  } else {
    for (int c : explicit_columns) {
      if (c < 0 || c >= num_fields) {
        return Error(absl::StrCat("attribute column ", c, " out of range (",
                                  num_fields, " fields)"));
      }
      if (c == label) {
        return Error(
            absl::StrCat("attribute column ", c, " is the label column"));
      }
      attribute_columns_.push_back(c);
    }
  }
  if (attribute_columns_.empty()) {
    return Error(absl::StrCat("no attribute columns (", num_fields,
                              " fields, label column ", label, ")"));
  }

  num_fields_ = num_fields;
  label_column_ = label;
  resolved_ = format_;
  resolved_.set_label_column(label);
  resolved_.clear_attribute_columns();
  for (int c : attribute_columns_) resolved_.add_attribute_columns(c);
  layout_fixed_ = true;
  return absl::OkStatus();
}

void ConllReader::StartDocument() {
  if (!document_has_sentence_) return;
  ++document_;
  document_has_sentence_ = false;
  document_sentences_ = 0;
}

absl::StatusOr<bool> ConllReader::Next(Item* item) {
  if (!status_.ok()) return status_;
  Sentence& s = item->sentence;
  bool in_sentence = false;
  size_t num_attributes = 0, num_tags = 0, num_lines = 0;
  auto finish = [&]() {
    s.attributes.resize(num_attributes);
    s.tags.resize(num_tags);
    s.lines.resize(num_lines);
    return true;
  };

  while (pending_ || ReadLine()) {
    pending_ = false;
    SplitLine();
    if (fields_.empty()) {  // blank line
      ++blank_run_;
      if (in_sentence) return finish();
      continue;  // also drops the blank line after -DOCSTART-
    }
    if (fields_[0] == kDocStart) {
      if (in_sentence) {
        pending_ = true;
        return finish();
      }
      first_sentence_seen_ = true;  // the file marks its own documents
      StartDocument();
      item->kind = Item::kDocStart;
      item->line = line_;
      item->line_number = line_number_;
      return true;
    }
    if (!layout_fixed_) {
      status_ = ResolveLayout();
      if (!status_.ok()) return status_;
    }
    if (static_cast<int>(fields_.size()) != num_fields_) {
      status_ = Error(absl::StrCat("expected ", num_fields_, " fields, got ",
                                   fields_.size()));
      return status_;
    }
    if (!in_sentence) {
      if (!first_sentence_seen_) {
        first_sentence_seen_ = true;
        pseudo_documents_ = format_.sentences_per_document() > 0 &&
                            format_.document_blank_lines() == 0;
      }
      if (format_.document_blank_lines() > 0 &&
          blank_run_ >= format_.document_blank_lines()) {
        StartDocument();
      }
      if (pseudo_documents_ &&
          document_sentences_ == format_.sentences_per_document()) {
        StartDocument();
      }
      ++document_sentences_;
      document_has_sentence_ = true;
      s.document = document_;
      in_sentence = true;
      item->kind = Item::kSentence;
      item->line.clear();
      item->line_number = line_number_;
      s.num_attributes = static_cast<int>(attribute_columns_.size());
      s.source = source_;
      s.first_line = line_number_;
    }
    blank_run_ = 0;
    for (int c : attribute_columns_)
      Put(&s.attributes, &num_attributes, fields_[c]);
    if (has_labels_) Put(&s.tags, &num_tags, fields_[label_column_]);
    Put(&s.lines, &num_lines, line_);
  }
  if (input_->bad()) {
    status_ = absl::DataLossError(
        absl::StrCat(source_, ":", line_number_, ": read error"));
    return status_;
  }
  if (in_sentence) return finish();
  return false;
}

std::vector<std::pair<int, int>> DocumentRanges(
    const std::vector<Sentence>& sentences) {
  std::vector<std::pair<int, int>> ranges;
  const int n = static_cast<int>(sentences.size());
  for (int begin = 0; begin < n;) {
    int end = begin + 1;
    while (end < n && sentences[end].document == sentences[begin].document) {
      ++end;
    }
    ranges.emplace_back(begin, end);
    begin = end;
  }
  return ranges;
}

absl::Status ForEachConllSentence(
    const std::string& path, const ConllFormat& format,
    const std::function<absl::StatusOr<bool>(int64_t index,
                                             Sentence* sentence)>& visit,
    ConllFormat* resolved, int* num_fields) {
  std::ifstream input(path, std::ios::in | std::ios::binary);
  if (!input) {
    return absl::NotFoundError(
        absl::StrCat(path, ": cannot open: ", std::strerror(errno)));
  }
  ConllReader reader(&input, path, format);
  ConllReader::Item item;
  for (int64_t index = 0;;) {
    absl::StatusOr<bool> more = reader.Next(&item);
    if (!more.ok()) return more.status();
    if (!*more) return absl::OkStatus();
    if (item.kind != ConllReader::Item::kSentence) continue;
    if (index == 0) {
      if (resolved != nullptr) *resolved = reader.resolved_format();
      if (num_fields != nullptr) *num_fields = reader.num_fields();
    }
    absl::StatusOr<bool> go_on = visit(index++, &item.sentence);
    item.sentence = Sentence();
    if (!go_on.ok()) return go_on.status();
    if (!*go_on) return absl::OkStatus();
  }
}

absl::StatusOr<std::vector<Sentence>> ReadConllFile(const std::string& path,
                                                    const ConllFormat& format,
                                                    ConllFormat* resolved,
                                                    int* num_fields) {
  std::vector<Sentence> sentences;
  absl::Status read = ForEachConllSentence(
      path, format,
      [&sentences](int64_t, Sentence* sentence) -> absl::StatusOr<bool> {
        sentences.push_back(std::move(*sentence));
        return true;
      },
      resolved, num_fields);
  if (!read.ok()) return read;
  return sentences;
}

}  // namespace chaintag
