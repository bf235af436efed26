#include "corpora/conll_reader.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <istream>
#include <string>
#include <utility>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
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
    } else if (allow_missing && label > num_fields) {
      // Input to tag: say what a line holds rather than where the label
      // would be.
      return Error(absl::StrCat("expected ", label, " fields (", label + 1,
                                " with the label), got ", num_fields));
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
  layout_line_ = line_number_;
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

namespace {

// Copies a CRFsuite name or value, [p, end), to the end of `out` with
// `\:` and `\\` unescaped (another backslash is kept as it is), stopping
// at the first unescaped ':' (or `end`); returns where it stopped.
const char* AppendUnescaped(const char* p, const char* end, std::string* out) {
  const char* run = p;
  while (p < end && *p != ':') {
    if (*p == '\\' && p + 1 < end && (p[1] == ':' || p[1] == '\\')) {
      out->append(run, p - run);
      out->push_back(p[1]);
      p += 2;
      run = p;
    } else {
      ++p;
    }
  }
  out->append(run, p - run);
  return p;
}

// How many of the kBlock bytes at `p` come before the first TAB, ':' or
// backslash: kBlock when there is none. SSE2 compares sixteen bytes at
// once; elsewhere eight are tested as one word.
#if defined(__SSE2__)
constexpr int kBlock = 16;
int PlainBytes(const char* p) {
  const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i special =
      _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(bytes, _mm_set1_epi8('\t')),
                                _mm_cmpeq_epi8(bytes, _mm_set1_epi8(':'))),
                   _mm_cmpeq_epi8(bytes, _mm_set1_epi8('\\')));
  const int marks = _mm_movemask_epi8(special);
  return marks == 0 ? kBlock : __builtin_ctz(marks);
}
#else
constexpr int kBlock = 8;
int PlainBytes(const char* p) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  uint64_t word;
  std::memcpy(&word, p, 8);
  constexpr uint64_t kOnes = 0x0101010101010101u;
  // The high bit of each byte that is zero; bytes above the first zero one
  // may be marked wrongly, so only the lowest mark counts.
  auto zero_bytes = [](uint64_t x) { return (x - kOnes) & ~x & (kOnes << 7); };
  const uint64_t marks = zero_bytes(word ^ (kOnes * '\t')) |
                         zero_bytes(word ^ (kOnes * ':')) |
                         zero_bytes(word ^ (kOnes * '\\'));
  return marks == 0 ? 8 : __builtin_ctzll(marks) / 8;
#else
  return 0;  // byte by byte
#endif
}
#endif

}  // namespace

absl::StatusOr<bool> ConllReader::ParseCrfsuiteLine(Sentence* sentence) {
  Sentence& s = *sentence;
  const char* p = line_.data();
  const char* const end = p + line_.size();
  while (p < end && *p == '\t') ++p;
  if (p == end || *p == '#') return false;  // nothing, or a comment
  const char* field_end =
      static_cast<const char*>(std::memchr(p, '\t', end - p));
  if (field_end == nullptr) field_end = end;
  if (*p == '@') {
    scratch_.clear();
    const char* colon = AppendUnescaped(p, field_end, &scratch_);
    if (scratch_ != "@weight") {
      return Error(absl::StrCat("unknown declaration '", scratch_,
                                "' (CRFsuite knows only @weight)"));
    }
    const absl::string_view value =
        colon < field_end ? absl::string_view(colon + 1, field_end - colon - 1)
                          : absl::string_view();
    double weight = 1;
    if (!value.empty() &&
        (!absl::SimpleAtod(value, &weight) || !std::isfinite(weight))) {
      return Error(absl::StrCat("@weight '", value, "' is not a number"));
    }
    if (weight != 1) {
      return Error(absl::StrCat(
          "@weight:", value,
          ": sequence weights other than 1 are not supported (every "
          "sequence weighs the same in training)"));
    }
    // The rest of the line may hold only comments.
    p = field_end;
    while (p < end && *p == '\t') ++p;
    if (p < end && *p != '#') {
      return Error("unexpected field after the @weight declaration");
    }
    return false;
  }
  // The label: the field's name part, as CRFsuite reads it.
  if (s.item_begin.empty()) s.item_begin.push_back(0);
  scratch_.clear();
  AppendUnescaped(p, field_end, &scratch_);
  s.tags.push_back(scratch_);
  p = field_end;

  // The attributes, unescaped straight into item_names: one pass over the
  // line's bytes, no call per attribute. The names take at most the
  // line's size; the buffer is cut to what they took at the end.
  const size_t base = s.item_names.size();
  s.item_names.resize(base + (end - p));
  char* const names = &s.item_names[0];
  char* w = names + base;
  while (p < end) {
    if (*p == '\t') {
      ++p;
      continue;
    }
    if (*p == '#') break;  // a comment to the end of the line
    const char* const field = p;
    char* const name = w;
    for (;;) {
      // A block at a time up to the first byte that ends the name or
      // escapes (w never passes p's offset, so the buffer has room for the
      // block), then that byte on its own.
      if (end - p >= kBlock) {
        std::memcpy(w, p, kBlock);
        const int plain = PlainBytes(p);
        p += plain;
        w += plain;
        if (plain == kBlock) continue;
      } else if (p == end) {
        break;
      }
      if (*p == '\t' || *p == ':') break;
      if (*p == '\\' && p + 1 < end && (p[1] == ':' || p[1] == '\\')) ++p;
      *w++ = *p++;
    }
    if (w == name) {
      while (p < end && *p != '\t') ++p;
      s.item_names.resize(base);
      return Error(absl::StrCat("empty attribute name in field '",
                                absl::string_view(field, p - field), "'"));
    }
    s.item_name_ends.push_back(static_cast<int32_t>(w - names));
    float value = 1;
    if (p < end && *p == ':') {
      const char* const text = ++p;
      while (p < end && *p != '\t') ++p;
      // A number has nothing to unescape: the value is parsed as written.
      if (p > text &&
          (!absl::SimpleAtof(absl::string_view(text, p - text), &value) ||
           !std::isfinite(value))) {
        s.item_names.resize(w - names);
        return Error(absl::StrCat(
            "attribute '", s.item_name(s.num_items() - 1), "': value '",
            absl::string_view(text, p - text),
            "' is not a finite number in single precision (values are "
            "stored as 32-bit floats, up to about 3.4e38)"));
      }
    }
    if (value != 1 || !s.item_values.empty()) {
      s.item_values.resize(s.item_name_ends.size() - 1, 1.0f);
      s.item_values.push_back(value);
    }
  }
  s.item_names.resize(w - names);
  s.item_begin.push_back(static_cast<int32_t>(s.item_name_ends.size()));
  return true;
}

absl::StatusOr<bool> ConllReader::NextCrfsuite(Item* item) {
  Sentence& s = item->sentence;
  bool in_sentence = false;
  while (ReadLine()) {
    if (line_.find_first_not_of('\t') == std::string::npos) {  // blank
      if (in_sentence) return true;
      continue;
    }
    if (!in_sentence) {
      item->kind = Item::kSentence;
      item->line.clear();
      s.num_attributes = 0;
      s.attributes.clear();
      s.lines.clear();
      s.tags.clear();
      s.item_names.clear();
      s.item_name_ends.clear();
      s.item_values.clear();
      s.item_begin.clear();
      s.source = source_;
      s.document = 0;
    }
    absl::StatusOr<bool> added = ParseCrfsuiteLine(&s);
    if (!added.ok()) {
      status_ = added.status();
      return status_;
    }
    if (*added && !in_sentence) {
      in_sentence = true;
      item->line_number = line_number_;
      s.first_line = line_number_;
      if (!layout_fixed_) {
        layout_fixed_ = true;
        resolved_ = format_;
        has_labels_ = true;
      }
    }
  }
  if (input_->bad()) {
    status_ = absl::DataLossError(
        absl::StrCat(source_, ":", line_number_, ": read error"));
    return status_;
  }
  return in_sentence;
}

absl::StatusOr<bool> ConllReader::Next(Item* item) {
  if (!status_.ok()) return status_;
  if (format_.layout() == ConllFormat::CRFSUITE) return NextCrfsuite(item);
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
      status_ = Error(absl::StrCat(
          "expected ", num_fields_, " fields, got ", fields_.size(),
          " (every token line has the fields of the first, line ", layout_line_,
          ")"));
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
    // Attribute lists are parsed into the item's buffers, which are kept
    // for the next sentence (the reader clears them); a visitor copies what
    // it keeps, at its exact size.
    if (!item.sentence.has_items()) item.sentence = Sentence();
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
        if (sentence->has_items()) {
          sentences.push_back(*sentence);
        } else {
          sentences.push_back(std::move(*sentence));
        }
        return true;
      },
      resolved, num_fields);
  if (!read.ok()) return read;
  return sentences;
}

}  // namespace chaintag
