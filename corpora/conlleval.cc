#include "corpora/conlleval.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "re2/re2.h"

namespace chaintag {
namespace {

constexpr absl::string_view kBoundary = "-X-";

// The script's endOfChunk(): did a chunk end between the previous and the
// current token? Rules for the IOB1/IOB2/IOE1/IOE2 and bracket
// representations (Tjong Kim Sang & Veenstra, EACL'99).
bool EndOfChunk(absl::string_view prev_tag, absl::string_view tag,
                absl::string_view prev_type, absl::string_view type) {
  if (prev_tag == "B" && (tag == "B" || tag == "O")) return true;
  if (prev_tag == "I" && (tag == "B" || tag == "O")) return true;
  if (prev_tag == "E" && (tag == "E" || tag == "I" || tag == "O")) return true;
  if (prev_tag != "O" && prev_tag != "." && prev_type != type) return true;
  // Bracket chunks are taken to be one token long.
  return prev_tag == "]" || prev_tag == "[";
}

// The script's startOfChunk(): did a chunk start at the current token?
bool StartOfChunk(absl::string_view prev_tag, absl::string_view tag,
                  absl::string_view prev_type, absl::string_view type) {
  if (tag == "B" && (prev_tag == "B" || prev_tag == "I" || prev_tag == "O")) {
    return true;
  }
  if (prev_tag == "O" && (tag == "I" || tag == "E")) return true;
  if (prev_tag == "E" && (tag == "E" || tag == "I")) return true;
  if (tag != "O" && tag != "." && prev_type != type) return true;
  return tag == "[" || tag == "]";
}

double Percent(int64_t part, int64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / whole : 0.0;
}

// As the script: 2PR/(P+R), evaluated in the same order so that the printed
// digits agree.
double FScore(double p, double r) {
  return p + r > 0 ? 2 * p * r / (p + r) : 0.0;
}

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

}  // namespace

ConllevalScorer::ConllevalScorer(ConllevalOptions options)
    : options_(std::move(options)) {
  if (!options_.delimiter.empty()) {
    literal_delimiter_ = options_.delimiter.find_first_of("\\^$.|?*+()[]{}") ==
                         std::string::npos;
    if (!literal_delimiter_) {
      RE2::Options re_options;
      re_options.set_log_errors(false);
      delimiter_re_ = std::make_unique<RE2>(options_.delimiter, re_options);
    }
  }
}

ConllevalScorer::~ConllevalScorer() = default;
ConllevalScorer::ConllevalScorer(ConllevalScorer&&) noexcept = default;
ConllevalScorer& ConllevalScorer::operator=(ConllevalScorer&&) noexcept =
    default;

absl::Status ConllevalScorer::SplitLine(absl::string_view line) {
  fields_.clear();
  if (options_.delimiter.empty()) {
    size_t i = 0;
    while (i < line.size()) {
      while (i < line.size() && IsBlank(line[i])) ++i;
      if (i == line.size()) break;
      size_t start = i;
      while (i < line.size() && !IsBlank(line[i])) ++i;
      fields_.push_back(line.substr(start, i - start));
    }
    return absl::OkStatus();
  }
  if (literal_delimiter_) {
    for (absl::string_view f : absl::StrSplit(line, options_.delimiter)) {
      fields_.push_back(f);
    }
  } else {
    absl::Status valid = CheckOptions();
    if (!valid.ok()) return valid;
    // Perl's split(/re/): a zero-length match never ends an empty field
    // (so an empty-matching pattern splits between characters), and no
    // split happens at the very end.
    size_t field_start = 0;
    size_t pos = 0;
    const re2::StringPiece text(line.data(), line.size());
    re2::StringPiece match;
    while (pos < line.size() &&
           delimiter_re_->Match(text, pos, text.size(), RE2::UNANCHORED, &match,
                                1)) {
      size_t match_start = match.data() - text.data();
      if (match.empty()) {
        if (match_start == field_start) {
          pos = match_start + 1;
          continue;
        }
        if (match_start >= line.size()) break;
      }
      fields_.push_back(line.substr(field_start, match_start - field_start));
      field_start = match_start + match.size();
      pos = field_start;
    }
    fields_.push_back(line.substr(field_start));
  }
  while (!fields_.empty() && fields_.back().empty()) fields_.pop_back();
  return absl::OkStatus();
}

ConllevalScorer::Tag ConllevalScorer::ParseTag(absl::string_view field) const {
  Tag tag;
  if (options_.raw) {
    if (field == options_.outside || field == "O") {
      tag.prefix = "O";
      return tag;
    }
    tag.prefix = "B";
    tag.type = field;
  } else {
    size_t dash = field.find('-');
    if (dash == absl::string_view::npos) {
      tag.prefix = field;
      return tag;
    }
    tag.prefix = field.substr(0, dash);
    tag.type = field.substr(dash + 1);
  }
  // Perl truthiness: the script replaces a false type ("0") by "".
  if (tag.type == "0") tag.type = absl::string_view();
  return tag;
}

void ConllevalScorer::ProcessToken(Tag gold, Tag guessed, bool boundary) {
  if (boundary) gold = guessed = Tag{"O", absl::string_view()};

  if (in_correct_) {
    bool gold_end =
        EndOfChunk(last_gold_, gold.prefix, last_gold_type_, gold.type);
    bool guessed_end = EndOfChunk(last_guessed_, guessed.prefix,
                                  last_guessed_type_, guessed.type);
    if (gold_end && guessed_end && last_guessed_type_ == last_gold_type_) {
      in_correct_ = false;
      ++overall_.correct;
      ++by_type_[last_gold_type_].correct;
    } else if (gold_end != guessed_end || guessed.type != gold.type) {
      in_correct_ = false;
    }
  }

  bool gold_start =
      StartOfChunk(last_gold_, gold.prefix, last_gold_type_, gold.type);
  bool guessed_start = StartOfChunk(last_guessed_, guessed.prefix,
                                    last_guessed_type_, guessed.type);
  if (gold_start && guessed_start && guessed.type == gold.type) {
    in_correct_ = true;
  }
  if (gold_start) {
    ++overall_.gold;
    auto it = by_type_.find(gold.type);
    if (it == by_type_.end()) it = by_type_.try_emplace(gold.type).first;
    ++it->second.gold;
  }
  if (guessed_start) {
    ++overall_.found;
    auto it = by_type_.find(guessed.type);
    if (it == by_type_.end()) it = by_type_.try_emplace(guessed.type).first;
    ++it->second.found;
  }
  if (!boundary) {
    if (gold.prefix == guessed.prefix && gold.type == guessed.type) {
      ++correct_tags_;
    }
    ++tokens_;
  }

  // assign() reuses the strings' capacity: no allocation once warmed up.
  last_gold_.assign(gold.prefix.data(), gold.prefix.size());
  last_gold_type_.assign(gold.type.data(), gold.type.size());
  last_guessed_.assign(guessed.prefix.data(), guessed.prefix.size());
  last_guessed_type_.assign(guessed.type.data(), guessed.type.size());
}

absl::Status ConllevalScorer::CheckOptions() const {
  if (delimiter_re_ != nullptr && !delimiter_re_->ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid delimiter pattern \"", options_.delimiter,
                     "\": ", delimiter_re_->error()));
  }
  return absl::OkStatus();
}

absl::Status ConllevalScorer::AddLine(absl::string_view line) {
  ++line_number_;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (absl::Status s = SplitLine(line); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source_, ":", line_number_, ": ", s.message()));
  }
  const int n = static_cast<int>(fields_.size());
  if (num_fields_ == 0) {
    num_fields_ = n;
  } else if (n != num_fields_ && n != 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s:%d: unexpected number of fields: %d (%d)", source_,
                        line_number_, n, num_fields_));
  }
  if (n == 0 || fields_[0] == kBoundary) {
    ProcessToken(Tag(), Tag(), /*boundary=*/true);
    return absl::OkStatus();
  }
  if (n < 2) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s:%d: expected at least 2 fields, got %d", source_, line_number_, n));
  }
  ProcessToken(ParseTag(fields_[n - 2]), ParseTag(fields_[n - 1]),
               /*boundary=*/false);
  return absl::OkStatus();
}

void ConllevalScorer::AddSentence(const std::vector<std::string>& gold,
                                  const std::vector<std::string>& guessed) {
  const size_t n = std::min(gold.size(), guessed.size());
  for (size_t t = 0; t < n; ++t) {
    ProcessToken(ParseTag(gold[t]), ParseTag(guessed[t]), /*boundary=*/false);
  }
  ProcessToken(Tag(), Tag(), /*boundary=*/true);
}

void ConllevalScorer::Finish() {
  if (in_correct_) {
    in_correct_ = false;
    ++overall_.correct;
    ++by_type_[last_gold_type_].correct;
  }
  last_gold_ = "O";
  last_gold_type_.clear();
  last_guessed_ = "O";
  last_guessed_type_.clear();
}

std::map<std::string, ChunkCounts> ConllevalScorer::by_type() const {
  return std::map<std::string, ChunkCounts>(by_type_.begin(), by_type_.end());
}

double ChunkCounts::precision() const { return Percent(correct, found); }

double ChunkCounts::recall() const { return Percent(correct, gold); }

double ChunkCounts::f1() const { return FScore(precision(), recall()); }

double ConllevalScorer::precision() const { return overall_.precision(); }

double ConllevalScorer::recall() const { return overall_.recall(); }

double ConllevalScorer::f1() const { return overall_.f1(); }

double ConllevalScorer::accuracy() const {
  return Percent(correct_tags_, tokens_);
}

std::vector<std::string> ConllevalScorer::SortedTypes() const {
  // The script sorts the keys of both its gold and found hashes together
  // and drops a key equal to its predecessor unless that predecessor is
  // Perl-false: so "" (typeless chunks) is listed twice when it occurs in
  // both columns.
  std::vector<std::string> keys;
  for (const auto& [type, counts] : by_type_) {
    if (counts.gold > 0) keys.push_back(type);
    if (counts.found > 0) keys.push_back(type);
  }
  std::sort(keys.begin(), keys.end());
  std::vector<std::string> sorted;
  const std::string* last = nullptr;
  for (const std::string& key : keys) {
    if (last == nullptr || last->empty() || *last == "0" || *last != key) {
      sorted.push_back(key);
    }
    last = &key;
  }
  return sorted;
}

std::string ConllevalScorer::Report() const {
  std::string out = absl::StrFormat(
      "processed %d tokens with %d phrases; found: %d phrases; correct: %d.\n",
      tokens_, overall_.gold, overall_.found, overall_.correct);
  if (tokens_ > 0) {
    absl::StrAppendFormat(
        &out,
        "accuracy: %6.2f%%; precision: %6.2f%%; recall: %6.2f%%; "
        "FB1: %6.2f\n",
        accuracy(), precision(), recall(), f1());
  }
  for (const std::string& type : SortedTypes()) {
    const ChunkCounts& c = by_type_.at(type);
    absl::StrAppendFormat(
        &out, "%17s: precision: %6.2f%%; recall: %6.2f%%; FB1: %6.2f  %d\n",
        type, c.precision(), c.recall(), c.f1(), c.found);
  }
  return out;
}

std::string ConllevalScorer::LatexReport() const {
  std::string out =
      "        & Precision &  Recall  & F$_{\\beta=1} \\\\\\hline";
  for (const std::string& type : SortedTypes()) {
    const ChunkCounts& c = by_type_.at(type);
    absl::StrAppendFormat(&out, "\n%-7s &  %6.2f\\%% & %6.2f\\%% & %6.2f \\\\",
                          type, c.precision(), c.recall(), c.f1());
  }
  absl::StrAppendFormat(
      &out, "\\hline\nOverall &  %6.2f\\%% & %6.2f\\%% & %6.2f \\\\\\hline\n",
      precision(), recall(), f1());
  return out;
}

}  // namespace chaintag
