// ConllevalScorer: chunk-level precision/recall/F1 and token accuracy with
// exactly the numbers and output text of the CoNLL-2000 `conlleval` Perl
// script (version 2004-01-26), so that results are comparable with published
// ones. It reads the script's input format one line at a time (constant
// memory) or takes whole sentences of tags from the training pipeline.
//
// Faithful quirks worth knowing (all as in the script):
//  - chunk boundaries follow the script's startOfChunk/endOfChunk rules for
//    B, I, E, O, '[' and ']'; there is no rule for S, so "S-X S-X" is one
//    chunk (a type change still splits);
//  - the outside tag (-o) only matters in raw mode; otherwise a tag without
//    a type ("NONE", "B") is outside after "O" but starts a chunk of type ""
//    after a typed tag;
//  - a type spelled "0" counts as no type (Perl truthiness);
//  - lines whose first field is "-X-" and empty lines are boundaries and do
//    not count as tokens; every other line (also -DOCSTART-) does.
//
// Thread-safety: not thread-safe; use one scorer per thread. Const methods
// may be called concurrently when no thread mutates.

#ifndef CHAINTAG_CORPORA_CONLLEVAL_H_
#define CHAINTAG_CORPORA_CONLLEVAL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace re2 {
class RE2;
}  // namespace re2

namespace chaintag {

struct ConllevalOptions {
  // Empty: fields are separated by runs of spaces/tabs (leading and trailing
  // blanks ignored). Otherwise a regular expression used like the script's
  // split(/$delimiter/): e.g. " " is exactly one space, "\t" one tab, and
  // trailing empty fields are dropped.
  std::string delimiter;
  // In raw mode, the tag meaning "outside any chunk".
  std::string outside = "O";
  // Raw tags: no B-/I- prefixes; every non-outside tag is a one-token chunk
  // of its own type (the script prefixes "B-").
  bool raw = false;
};

struct ChunkCounts {
  int64_t correct = 0;  // guessed chunks matching a gold chunk exactly
  int64_t gold = 0;     // chunks in the gold column ("phrases")
  int64_t found = 0;    // chunks in the guessed column ("found")

  // In percent, as the script computes them (0 when undefined).
  double precision() const;
  double recall() const;
  double f1() const;
};

class ConllevalScorer {
 public:
  explicit ConllevalScorer(ConllevalOptions options = {});
  ~ConllevalScorer();
  ConllevalScorer(ConllevalScorer&&) noexcept;
  ConllevalScorer& operator=(ConllevalScorer&&) noexcept;

  // Names the input in error messages ("<source>:<line>: ..."); default
  // "stdin".
  void set_source(std::string source) { source_ = std::move(source); }

  // InvalidArgument when the options cannot read any line (an invalid
  // delimiter pattern), so that a tool can say so before reading input and
  // without naming a line.
  absl::Status CheckOptions() const;

  // Streaming, as the script reads its input: one line at a time (terminator
  // removed; a trailing '\r' is ignored). The last two fields are the gold
  // and the guessed tag. Fails on a field count that differs from the first
  // non-empty line, on a line with fewer than two fields, or on an invalid
  // delimiter pattern; the failing line leaves the counts unchanged.
  absl::Status AddLine(absl::string_view line);

  // One sentence's gold and guessed tags (same length; extra tags in the
  // longer vector are ignored), followed by an implicit boundary. Gives the
  // same counts as lines "w gold guess" followed by an empty line.
  void AddSentence(const std::vector<std::string>& gold,
                   const std::vector<std::string>& guessed);

  // Ends the input: counts a chunk still open at the end. Idempotent. Lines
  // added afterwards start afresh as after a boundary.
  void Finish();

  // Non-boundary lines seen, and those whose gold and guessed tags agree.
  int64_t tokens() const { return tokens_; }
  int64_t correct_tags() const { return correct_tags_; }

  // Counts so far; a chunk still open (before Finish) is not yet counted.
  ChunkCounts overall() const { return overall_; }
  // Per chunk type (the type "" collects typeless chunks), sorted by name.
  std::map<std::string, ChunkCounts> by_type() const;

  // In percent, like the script: 0 when undefined (nothing found / no gold
  // chunks / precision + recall == 0).
  double precision() const;
  double recall() const;
  double f1() const;
  double accuracy() const;  // 0 when there are no tokens

  // Byte for byte the script's standard output (call Finish first).
  std::string Report() const;
  // Byte for byte the script's output with -l (a LaTeX table body).
  std::string LatexReport() const;

 private:
  // The script's (tag, type) split of one column value, as views into either
  // the input or static strings.
  struct Tag {
    absl::string_view prefix;
    absl::string_view type;
  };
  Tag ParseTag(absl::string_view field) const;
  void ProcessToken(Tag gold, Tag guessed, bool boundary);
  // Splits `line` into fields_ the way the script's split() does.
  absl::Status SplitLine(absl::string_view line);
  // The script's list of type names for the per-type lines (sorted; "" can
  // appear twice, as in the script).
  std::vector<std::string> SortedTypes() const;

  ConllevalOptions options_;
  std::string source_ = "stdin";
  std::unique_ptr<re2::RE2> delimiter_re_;  // null: blanks or literal split
  bool literal_delimiter_ = false;

  int64_t line_number_ = 0;
  int num_fields_ = 0;  // of the first non-empty line; 0 = not yet known
  std::vector<absl::string_view> fields_;  // scratch, reused across lines

  // State carried from the previous token (the script's $last* variables).
  std::string last_gold_ = "O";
  std::string last_gold_type_;
  std::string last_guessed_ = "O";
  std::string last_guessed_type_;
  bool in_correct_ = false;

  int64_t tokens_ = 0;
  int64_t correct_tags_ = 0;
  ChunkCounts overall_;
  absl::flat_hash_map<std::string, ChunkCounts> by_type_;
};

}  // namespace chaintag

#endif  // CHAINTAG_CORPORA_CONLLEVAL_H_
