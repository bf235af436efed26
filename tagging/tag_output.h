// Output formats of `tag --pipeline` for one tagged sentence: CoNLL columns,
// bracketed chunks and JSON lines. Kept apart from the binary so that the
// formats are pinned by tests.
//
//   conll      one line per token: the token, then each stage's tag, space
//              separated; a blank line after the sentence. With n-best, the
//              last stage has one column per labeling (best first; "_" where
//              fewer labelings exist).
//   bracketed  one line per sentence: the chunks of one chunking stage as
//              "[NP Rockwell International Corp. ] [VP said ]", tokens
//              outside chunks bare. With n-best on that stage, one line per
//              labeling, each "<score>\t<bracketing>".
//   json       one TaggedSentenceRecord (tagging/tag_output.proto) per line.
//
// Thread-safety: stateless functions; safe from any thread.

#ifndef CHAINTAG_TAGGING_TAG_OUTPUT_H_
#define CHAINTAG_TAGGING_TAG_OUTPUT_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tagging/bundle.h"
#include "tagging/tag_output.pb.h"

namespace chaintag {

enum class OutputFormat { kConll, kBracketed, kJson };

// Where the tag streams (conll_tagging.h, text_tagging.h) hand their output,
// a batch at a time; an error (a full disk, a closed pipe) ends the stream.
using OutputSink = std::function<absl::Status(const std::string& output)>;

// "conll", "bracketed" or "json".
absl::StatusOr<OutputFormat> ParseOutputFormat(absl::string_view name);

// What the formats need to know of a bundle's stages.
struct OutputStage {
  std::string name;
  std::string column;
  bool chunking = false;  // writes chunk tags (IOB1, IOB2, IOBES)
};

std::vector<OutputStage> OutputStages(const Bundle& bundle);

// The stage whose chunks the bracketed format shows: the one named (or
// writing the column named) `name` when given, else the stage writing
// "chunk", else the last chunking stage. Fails when there is none, or the
// named stage does not write chunks.
absl::StatusOr<int> BracketStage(const std::vector<OutputStage>& stages,
                                 absl::string_view name = "");

// A tagged sentence: its tokens, optionally their byte offsets into the
// input (empty = unknown), and every stage's output.
struct TaggedSentence {
  std::vector<std::string> tokens;
  std::vector<std::pair<int64_t, int64_t>> offsets;
  std::vector<StageOutput> outputs;
  int64_t line = 0;  // 1-based input line; 0 = unknown
};

// `nbest`: the columns of a stage with n-best labelings (the --nbest asked
// for), padded with "_" where fewer labelings exist.
void AppendConll(const TaggedSentence& sentence, int nbest, std::string* out);

// `stage` indexes a chunking stage of `sentence.outputs`.
void AppendBracketed(const TaggedSentence& sentence, int stage,
                     std::string* out);

// The bracketing of `tags` over `tokens` (no newline).
std::string Bracketed(const std::vector<std::string>& tokens,
                      const std::vector<std::string>& tags);

TaggedSentenceRecord ToRecord(const std::vector<OutputStage>& stages,
                              const TaggedSentence& sentence);

// One JSON line (with its newline).
absl::Status AppendJson(const std::vector<OutputStage>& stages,
                        const TaggedSentence& sentence, std::string* out);

}  // namespace chaintag

#endif  // CHAINTAG_TAGGING_TAG_OUTPUT_H_
