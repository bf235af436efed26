#include "features/bigram_counts.h"

#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "corpora/conll_reader.h"
#include "corpora/corpus.pb.h"
#include "corpora/tokenizer.h"

namespace chaintag {
namespace {

// The offset of the first byte that does not start a valid UTF-8 sequence
// (overlong forms, surrogates and code points above U+10FFFF are invalid),
// or -1.
int64_t FirstInvalidUtf8(absl::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const unsigned char lead = text[i];
    if (lead < 0x80) {
      ++i;
      continue;
    }
    size_t length;
    uint32_t code_point, smallest;
    if ((lead & 0xe0) == 0xc0) {
      length = 2, code_point = lead & 0x1f, smallest = 0x80;
    } else if ((lead & 0xf0) == 0xe0) {
      length = 3, code_point = lead & 0x0f, smallest = 0x800;
    } else if ((lead & 0xf8) == 0xf0) {
      length = 4, code_point = lead & 0x07, smallest = 0x10000;
    } else {
      return static_cast<int64_t>(i);
    }
    if (i + length > text.size()) return static_cast<int64_t>(i);
    for (size_t k = 1; k < length; ++k) {
      const unsigned char next = text[i + k];
      if ((next & 0xc0) != 0x80) return static_cast<int64_t>(i);
      code_point = code_point << 6 | (next & 0x3f);
    }
    if (code_point < smallest || code_point > 0x10ffff ||
        (code_point >= 0xd800 && code_point <= 0xdfff)) {
      return static_cast<int64_t>(i);
    }
    i += length;
  }
  return -1;
}

}  // namespace

template <typename Word>
void BigramCounts::AddWords(absl::Span<const Word> words) {
  int32_t previous = -1;
  for (const Word& word : words) {
    if (absl::string_view(word).empty()) continue;
    const int32_t id = Intern(word);
    ++counts_[id];
    ++num_tokens_;
    if (previous >= 0) {
      ++bigrams_[static_cast<uint64_t>(previous) << 32 |
                 static_cast<uint32_t>(id)];
    }
    previous = id;
  }
}

void BigramCounts::AddSentence(absl::Span<const absl::string_view> words) {
  AddWords(words);
}

void BigramCounts::AddSentence(absl::Span<const std::string> words) {
  AddWords(words);
}

int32_t BigramCounts::Intern(absl::string_view word) {
  const auto found = index_.find(word);
  if (found != index_.end()) return found->second;
  const int32_t id = static_cast<int32_t>(words_.size());
  index_.emplace(std::string(word), id);
  words_.emplace_back(word);
  counts_.push_back(0);
  return id;
}

absl::Status AddRawTextFile(const std::string& path, BigramCounts* counts) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  std::string line;
  for (int64_t line_number = 1; std::getline(file, line); ++line_number) {
    absl::string_view text = line;
    // A byte-order mark is not part of the first word.
    if (line_number == 1) absl::ConsumePrefix(&text, "\xef\xbb\xbf");
    const int64_t invalid = FirstInvalidUtf8(text);
    if (invalid >= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ":", line_number, ": invalid UTF-8 at byte ",
          invalid + 1 + static_cast<int64_t>(line.size() - text.size())));
    }
    counts->AddSentence(SplitAtSpaces(text));
  }
  if (file.bad()) {
    return absl::DataLossError(absl::StrCat(path, ": read error"));
  }
  return absl::OkStatus();
}

absl::Status AddConllWords(absl::Span<const Sentence> sentences, int attribute,
                           BigramCounts* counts) {
  std::vector<absl::string_view> words;
  for (const Sentence& sentence : sentences) {
    if (attribute < 0 || attribute >= sentence.num_attributes) {
      return absl::InvalidArgumentError(absl::StrCat(
          sentence.source, ":", sentence.first_line, ": no attribute ",
          attribute, " (the sentence has ", sentence.num_attributes, ")"));
    }
    words.clear();
    for (int t = 0; t < sentence.size(); ++t) {
      words.push_back(sentence.attribute(t, attribute));
    }
    counts->AddSentence(words);
  }
  return absl::OkStatus();
}

absl::Status AddConllFile(const std::string& path, int column,
                          BigramCounts* counts) {
  ConllFormat format;
  format.add_attribute_columns(column);
  // Words only: a file with or without the other columns will do.
  format.set_allow_missing_label(true);
  absl::StatusOr<std::vector<Sentence>> sentences = ReadConllFile(path, format);
  if (!sentences.ok()) return sentences.status();
  return AddConllWords(*sentences, 0, counts);
}

}  // namespace chaintag
