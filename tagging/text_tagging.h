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

#include <functional>
#include <istream>
#include <string>

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
