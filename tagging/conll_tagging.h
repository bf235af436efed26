// Tagging CoNLL columns as `tag --model` does: sentences are read from a
// stream, tagged with a ChainModel and written back with the predicted tag
// appended to every line, in input order.
//
// Sentences are read in batches of options.batch_per_thread per thread; a
// batch also ends when the input has nothing buffered (the next read could
// block), and what was read is tagged and written before that read, so a
// pipe is answered sentence by sentence. With threads ≥ 2, threads − 1
// helpers tag a batch while the calling thread reads the next one, then it
// joins in and writes; the output does not depend on the thread count.
// -DOCSTART- lines are passed through; when the tagged lines carry a gold
// column, the outside tag is appended to them too, so that the output has
// one field count throughout, as conlleval requires.
//
// A stacked model (ChainModel::first_stage) tags whole documents: its
// batches end only after a -DOCSTART- line (or at the end of the input),
// documents are tagged in parallel, and a pipe is answered document by
// document.
//
// Thread-safety: one call per stream; the model is only read.

#ifndef CHAINTAG_TAGGING_CONLL_TAGGING_H_
#define CHAINTAG_TAGGING_CONLL_TAGGING_H_

#include <functional>
#include <istream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "corpora/sentence.h"
#include "models/chain_model.h"
#include "tagging/tag_output.h"

namespace chaintag {

// Whether the next read from `input` could block: nothing is left in its
// buffer, nor ready in the file underneath (libstdc++ asks the descriptor
// with FIONREAD, so this works for pipes, terminals and files). A streaming
// tagger writes what it has read before such a read.
bool InputWouldBlock(std::istream* input);

struct ConllTaggingOptions {
  int threads = 1;
  int batch_per_thread = 256;
  // A model trained on CRFsuite's layout (ConllFormat::CRFSUITE) prints
  // what `crfsuite tag` prints: the predicted label of each token on its own
  // line, a blank line after each sequence; with `reference`, each line is
  // the reference label (the input's first field), a TAB, then the
  // predicted one (`crfsuite tag -r`). Ignored for other layouts.
  bool reference = false;
  // Each predicted tag followed by ":" and the probability the model gives
  // it at its position (ChainModel::TagWithMarginals), as `crfsuite tag -i`
  // prints: the CRF's marginal for a LOG model, normalised scores for a
  // max-margin one. First-order, single-stage models only.
  bool marginals = false;
  // With marginals: after TAG:P, every label of the model as LABEL:P, in
  // the model's label order and its training tag scheme (crf_test -v2).
  bool label_marginals = false;
  // The nbest best labelings of each sentence as `crf_test -n` prints them:
  // for k = 0, 1, …, a line "# k score" (⟨w, φ(x, y)⟩), the sentence with
  // the k-th labeling appended, a blank line; decoded as Tag decodes
  // (constrained when the model file says so). Single-stage models; not
  // with marginals.
  int nbest = 1;
  // When set, called with every tagged sentence and its predicted tags, in
  // input order, before its output is written (e.g. to evaluate); an error
  // ends the run with it.
  std::function<absl::Status(const Sentence&, const std::vector<std::string>&)>
      on_tagged;
};

// Tags `input` (named `source` in messages) and hands the output to
// `write`, a batch at a time. On an error the output written holds exactly
// the sentences before the failing one; a tagging error is reported as
// "<source>:<line>: <why>", a reading error as the reader reports it (file
// and line). A failed write (OutputSink) ends the run with its status.
absl::Status TagConllStream(const ChainModel& model, std::istream* input,
                            absl::string_view source,
                            const ConllTaggingOptions& options,
                            const OutputSink& write);

}  // namespace chaintag

#endif  // CHAINTAG_TAGGING_CONLL_TAGGING_H_
