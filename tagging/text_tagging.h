// Tagging raw text with a bundle, as `tag --pipeline` does: UTF-8 text, one
// sentence per line (or paragraphs separated by blank lines, split into
// sentences), tokenized Penn-Treebank style and tagged stage by stage, each
// sentence written in the chosen format (tagging/tag_output.h), in input
// order. Lines without tokens print nothing.
//
// Lines (or paragraphs) are read in batches of options.batch_per_thread per
// thread, or until the input has nothing buffered, and tagged on
// options.threads threads; the output does not depend on the thread count.
//
// Thread-safety: one call per stream; the bundle and tokenizer are only read.

#ifndef CHAINTAG_TAGGING_TEXT_TAGGING_H_
#define CHAINTAG_TAGGING_TEXT_TAGGING_H_

#include <cstdint>
#include <functional>
#include <istream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "corpora/tokenizer.h"
#include "tagging/bundle.h"
#include "tagging/tag_output.h"

namespace chaintag {

struct TextTaggingOptions {
  OutputFormat format = OutputFormat::kConll;
  // The stage whose chunks kBracketed shows (BracketStage()).
  int bracket_stage = -1;
  BundleOptions decode;
  bool paragraphs = false;
  int threads = 1;
  int batch_per_thread = 256;
};

// Tags raw text (or given tokens) with a bundle, a sentence at a time,
// appending each sentence's output in the chosen format. One per thread: it
// holds that thread's buffers; the bundle and tokenizer must outlive it.
class TextTagger {
 public:
  TextTagger(const Bundle* bundle, const Tokenizer* tokenizer,
             OutputFormat format, int bracket_stage, BundleOptions options);

  // One sentence per call; on failure `out` is left as it was.
  absl::Status Line(absl::string_view text, int64_t line, std::string* out);
  // Split into sentences; on failure `out` holds the sentences before the
  // failing one.
  absl::Status Paragraph(absl::string_view text, int64_t first_line,
                         std::string* out);
  // Already tokenized: the output has no byte offsets.
  absl::Status Words(const std::vector<std::string>& words, int64_t line,
                     std::string* out);

  const BundleOptions& options() const { return options_; }
  // Totals over the calls so far (sentences without tokens not counted).
  int64_t tokens_tagged() const { return tokens_tagged_; }
  int64_t sentences_tagged() const { return sentences_tagged_; }

 private:
  absl::Status EmitTokens(const std::vector<Token>& tokens, int64_t line,
                          std::string* out);
  // Tags sentence_ (tokens and offsets set) and appends its output.
  absl::Status Emit(int64_t line, std::string* out);

  const Bundle* bundle_;
  const Tokenizer* tokenizer_;
  const OutputFormat format_;
  const int bracket_stage_;
  const BundleOptions options_;
  const std::vector<OutputStage> stages_;
  BundleScratch scratch_;
  TaggedSentence sentence_;
  int64_t tokens_tagged_ = 0;
  int64_t sentences_tagged_ = 0;
};

// Tags `input` (named `source` in messages) and hands the output to
// `write`, a batch at a time. On an error the output written holds exactly
// the sentences before the failing one, and the message is
// "<source>:<line>: <why>" (the paragraph's first line with --paragraphs).
absl::Status TagTextStream(const Bundle& bundle, const Tokenizer& tokenizer,
                           std::istream* input, absl::string_view source,
                           const TextTaggingOptions& options,
                           const OutputSink& write);

}  // namespace chaintag

#endif  // CHAINTAG_TAGGING_TEXT_TAGGING_H_
