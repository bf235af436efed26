// tag: two modes, both streaming in batches (memory bounded by the batch,
// not the input) and tagging each batch on --threads threads; the output is
// written in input order, so it does not depend on the thread count.
//
// --model: reads CoNLL columns from stdin (the gold column may be present or
// absent) and writes the same lines with the predicted tag appended.
//
//   bazel run //tools:tag -- --model=chunker.model < test.txt > tagged.txt
//
// -DOCSTART- lines are passed through; when the tagged lines carry a gold
// column, the outside tag is appended to them too, so that the output has
// one field count throughout, as conlleval requires.
//
// A model trained on CRFsuite attribute files (corpus.format.layout
// CRFSUITE, as pipeline/configs/crfsuite_attributes.textproto) reads the
// same format and prints what `crfsuite tag` prints: one label a line, a
// blank line after each sequence; --reference (crfsuite's -r) prints the
// input's label, a TAB and the prediction. --evaluate (-t) appends
// crfsuite's evaluation (per-label precision, recall and F1, macro
// averages, item and instance accuracy) and --quiet (-q) drops the labels,
// so `tag --model=M --quiet --evaluate < test.crfsuite` is
// `crfsuite tag -qt -m M test.crfsuite`. Chunk tags are scored by conlleval
// through the evaluate tool:
//
//   tag --model=M --reference < test.crfsuite | evaluate
//
// --pipeline: reads raw UTF-8 text, one sentence per line (or, with
// --paragraphs, paragraphs separated by blank lines, split into sentences),
// tokenizes it Penn-Treebank style (corpora/tokenizer.h) and runs a bundle
// (tagging/bundle.h), e.g. the one //pipeline:english_bundle writes:
//
//   echo "Rockwell International Corp. said it signed a tentative agreement." \
//     | bazel run //tools:tag -- --pipeline=english_bundle --format=bracketed
//
// Output formats (tagging/tag_output.h): conll (token and one column per
// stage), bracketed (the chunk stage's chunks) and json (one object per
// sentence: tokens, byte offsets into the line or paragraph, each stage's
// tags, score and margin, chunk spans). Decoding: --constrained (valid tag
// scheme transitions only; default on), --nbest=K (the last stage's K best
// labelings), --margins (every stage's best minus second-best score).
// Lines without tokens print nothing. With --model, --nbest=K prints each
// sentence's K best labelings as crf_test -n does.
//
// Batches, threads and streaming through a pipe are the libraries'
// (tagging/conll_tagging.h, tagging/text_tagging.h): on an error the
// output holds exactly the sentences before the failing one.

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/parallel.h"
#include "base/paths.h"
#include "corpora/tokenizer.h"
#include "models/chain_model.h"
#include "tagging/bundle.h"
#include "tagging/conll_tagging.h"
#include "tagging/label_evaluation.h"
#include "tagging/tag_output.h"
#include "tagging/text_tagging.h"

ABSL_FLAG(std::string, model, "", "Model file written by train.");
ABSL_FLAG(std::string, input, "", "Read this file instead of stdin.");
ABSL_FLAG(int, threads, 1,
          "Tagging threads (1 to 256), for --model and --pipeline. The "
          "output is the same for any count: batches are written in input "
          "order.");
ABSL_FLAG(bool, reference, false,
          "--model on CRFsuite's format: print the input's label, a TAB, "
          "then the predicted one (crfsuite tag -r).");
ABSL_FLAG(bool, evaluate, false,
          "--model: after the output, print CRFsuite's evaluation of the "
          "predictions against the input's labels (crfsuite tag -t).");
ABSL_FLAG(bool, quiet, false,
          "--model: print no tagged output (crfsuite tag -q; with "
          "--evaluate, only the evaluation).");
ABSL_FLAG(std::string, pipeline, "",
          "Bundle directory (or its bundle.textproto): tag raw text instead "
          "of CoNLL columns.");
ABSL_FLAG(std::string, format, "conll",
          "--pipeline output: conll | bracketed | json.");
ABSL_FLAG(bool, paragraphs, false,
          "--pipeline input: paragraphs separated by blank lines, split into "
          "sentences (default: one sentence per line).");
ABSL_FLAG(bool, constrained, true,
          "--pipeline: decode only labelings valid in each model's tag "
          "scheme (false: plain Viterbi).");
ABSL_FLAG(int, nbest, 1,
          "Print the K best labelings. --pipeline: the last stage's (conll: "
          "K columns; bracketed: K scored lines; json: nbest with scores). "
          "--model: as crf_test -n K, for each sentence K copies, each after "
          "a line '# k score'.");
ABSL_FLAG(bool, marginals, false,
          "Print each predicted tag as TAG:P, P the probability the model "
          "gives it at its position (crfsuite tag -i): the CRF's marginal for "
          "a model trained with --loss=crf, normalised scores otherwise. "
          "First-order, single-stage models.");
ABSL_FLAG(bool, label_marginals, false,
          "--marginals and, after each TAG:P, every label of the model as "
          "LABEL:P (crf_test -v2), in the model's label order and training "
          "tag scheme.");
ABSL_FLAG(bool, margins, false,
          "--pipeline: every stage's margin between its best and second-best "
          "labeling (json).");
ABSL_FLAG(std::string, bracket_stage, "",
          "--pipeline --format=bracketed: the stage whose chunks to show "
          "(default: the \"chunk\" column, else the last chunking stage).");

namespace chaintag {
namespace {

// A full disk or a closed pipe ends the run with a message and a non-zero
// exit, rather than tagging the rest of the input into the void.
absl::Status Write(const std::string& out) {
  if (std::fwrite(out.data(), 1, out.size(), stdout) != out.size() ||
      std::fflush(stdout) != 0) {
    return absl::UnavailableError(absl::StrCat(
        "cannot write the output (standard output): ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

// --input, when given, replaces stdin; false (after saying why) when it
// cannot be opened. Binary mode: the text is tagged byte for byte. Read
// through `buffer` (1 MiB): the streams' default of 8 KiB costs a read
// call per 8 KiB, which on a large input is a sizeable part of the run
// (docs/experiments.md#crfsuite-attribute-files). Standard
// input is reopened the same way (/dev/stdin), or used as it is when that
// fails.
bool OpenInput(std::ifstream* file, std::vector<char>* buffer,
               std::istream** input, std::string* source) {
  buffer->resize(1 << 20);
  file->rdbuf()->pubsetbuf(buffer->data(),
                           static_cast<std::streamsize>(buffer->size()));
  if (absl::GetFlag(FLAGS_input).empty()) {
    file->open("/dev/stdin", std::ios::binary);
    if (*file) *input = file;
    return true;
  }
  *source = ResolveUserPath(absl::GetFlag(FLAGS_input));
  file->open(*source, std::ios::binary);
  if (!*file) {
    std::fprintf(stderr, "tag: %s: cannot open\n", source->c_str());
    return false;
  }
  *input = file;
  return true;
}

int RunBundle(int threads) {
  const std::string path = ResolveUserPath(absl::GetFlag(FLAGS_pipeline));
  absl::StatusOr<OutputFormat> format =
      ParseOutputFormat(absl::GetFlag(FLAGS_format));
  if (!format.ok()) {
    std::fprintf(stderr, "tag: --format: %s\n",
                 std::string(format.status().message()).c_str());
    return 2;
  }
  BundleOptions options;
  options.constrained = absl::GetFlag(FLAGS_constrained);
  options.nbest = absl::GetFlag(FLAGS_nbest);
  options.margins = absl::GetFlag(FLAGS_margins);
  if (options.nbest < 1) {
    std::fprintf(stderr, "tag: --nbest must be at least 1\n");
    return 2;
  }
  absl::StatusOr<Bundle> bundle = Bundle::Load(path);
  if (!bundle.ok()) {
    std::fprintf(stderr, "tag: %s\n", bundle.status().ToString().c_str());
    return 1;
  }
  int bracket_stage = -1;
  if (*format == OutputFormat::kBracketed) {
    absl::StatusOr<int> stage =
        BracketStage(OutputStages(*bundle), absl::GetFlag(FLAGS_bracket_stage));
    if (!stage.ok()) {
      std::fprintf(stderr, "tag: %s: %s\n", path.c_str(),
                   std::string(stage.status().message()).c_str());
      return 2;
    }
    bracket_stage = *stage;
  }
  absl::StatusOr<std::unique_ptr<Tokenizer>> tokenizer = Tokenizer::Create();
  if (!tokenizer.ok()) {
    std::fprintf(stderr, "tag: %s\n", tokenizer.status().ToString().c_str());
    return 1;
  }
  std::vector<char> buffer;  // outlives `file`, which reads through it
  std::ifstream file;
  std::istream* input = &std::cin;
  std::string source = "stdin";
  if (!OpenInput(&file, &buffer, &input, &source)) return 1;
  std::ios::sync_with_stdio(false);
  TextTaggingOptions text_options;
  text_options.format = *format;
  text_options.bracket_stage = bracket_stage;
  text_options.decode = options;
  text_options.paragraphs = absl::GetFlag(FLAGS_paragraphs);
  text_options.threads = threads;
  absl::Status status =
      TagTextStream(*bundle, **tokenizer, input, source, text_options, Write);
  if (!status.ok()) {
    // The message names the file and line.
    std::fprintf(stderr, "tag: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  return 0;
}

int RunModel(int threads) {
  absl::StatusOr<ChainModel> model =
      ChainModel::Load(ResolveUserPath(absl::GetFlag(FLAGS_model)));
  if (!model.ok()) {
    std::fprintf(stderr, "tag: %s\n", model.status().ToString().c_str());
    return 1;
  }
  // OCR models (pipeline/ocr.h) read pixels, not CoNLL columns: their file
  // has no input format, and tagging text with them would be silent noise.
  if (!model->header().has_input_format()) {
    std::fprintf(stderr,
                 "tag: %s: the model has no CoNLL input format (an OCR pixel "
                 "model?); tag reads CoNLL columns\n",
                 absl::GetFlag(FLAGS_model).c_str());
    return 1;
  }
  std::vector<char> buffer;  // outlives `file`, which reads through it
  std::ifstream file;
  std::istream* input = &std::cin;
  std::string source = "stdin";
  if (!OpenInput(&file, &buffer, &input, &source)) return 1;
  std::ios::sync_with_stdio(false);
  ConllTaggingOptions options;
  options.threads = threads;
  options.reference = absl::GetFlag(FLAGS_reference);
  if (options.reference &&
      model->header().input_format().layout() != ConllFormat::CRFSUITE) {
    std::fprintf(stderr,
                 "tag: --reference applies to models trained on CRFsuite's "
                 "attribute files (crfsuite tag -r); %s reads CoNLL columns, "
                 "whose output keeps the gold column beside the prediction\n",
                 absl::GetFlag(FLAGS_model).c_str());
    return 2;
  }
  options.label_marginals = absl::GetFlag(FLAGS_label_marginals);
  options.nbest = absl::GetFlag(FLAGS_nbest);
  options.marginals = absl::GetFlag(FLAGS_marginals) || options.label_marginals;
  const bool quiet = absl::GetFlag(FLAGS_quiet);
  const bool evaluate = absl::GetFlag(FLAGS_evaluate);
  LabelEvaluation evaluation(model->labels());
  int64_t sequences = 0;
  if (evaluate) {
    options.on_tagged = [&](const Sentence& sentence,
                            const std::vector<std::string>& tags) {
      ++sequences;
      if (!sentence.has_tags()) {
        return absl::InvalidArgumentError(
            absl::StrCat(sentence.source, ":", sentence.first_line,
                         ": --evaluate needs the input's labels"));
      }
      return evaluation.Add(sentence.tags, tags);
    };
  }
  const absl::Time start = absl::Now();
  absl::Status status = TagConllStream(
      *model, input, source, options, [quiet](const std::string& out) {
        return quiet ? absl::OkStatus() : Write(out);
      });
  if (!status.ok()) {
    // The message names the file and line.
    std::fprintf(stderr, "tag: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  if (evaluate) {
    const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
    status = Write(absl::StrCat(
        evaluation.Report(),
        absl::StrFormat("Elapsed time: %f [sec] (%.1f [instance/sec])\n",
                        seconds, seconds > 0 ? sequences / seconds : 0.0)));
    if (!status.ok()) {
      std::fprintf(stderr, "tag: %s\n", std::string(status.message()).c_str());
      return 1;
    }
  }
  return 0;
}

int Run() {
  const int threads = absl::GetFlag(FLAGS_threads);
  if (threads < 1 || threads > kMaxThreads) {
    std::fprintf(stderr, "tag: --threads must be between 1 and %d\n",
                 kMaxThreads);
    return 2;
  }
  if (!absl::GetFlag(FLAGS_pipeline).empty()) {
    if (!absl::GetFlag(FLAGS_model).empty()) {
      std::fprintf(stderr, "tag: give --model or --pipeline, not both\n");
      return 2;
    }
    return RunBundle(threads);
  }
  if (absl::GetFlag(FLAGS_model).empty()) {
    std::fprintf(stderr,
                 "tag: --model=<file> (CoNLL columns) or --pipeline=<bundle> "
                 "(raw text) is required\n");
    return 2;
  }
  // A --pipeline flag given to --model would be silently ignored.
  const char* pipeline_only = nullptr;
  if (absl::GetFlag(FLAGS_format) != "conll") pipeline_only = "--format";
  if (absl::GetFlag(FLAGS_paragraphs)) pipeline_only = "--paragraphs";
  if (!absl::GetFlag(FLAGS_constrained)) pipeline_only = "--constrained";
  if (absl::GetFlag(FLAGS_margins)) pipeline_only = "--margins";
  if (!absl::GetFlag(FLAGS_bracket_stage).empty()) {
    pipeline_only = "--bracket_stage";
  }
  if (pipeline_only != nullptr) {
    std::fprintf(stderr,
                 "tag: %s applies to --pipeline (raw text through a bundle), "
                 "not to --model\n",
                 pipeline_only);
    return 2;
  }
  return RunModel(threads);
}

}  // namespace
}  // namespace chaintag

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Tags CoNLL columns from stdin: tag --model=<file> [--threads=N] < in "
      "> out\n"
      "or raw text: tag --pipeline=<bundle> [--format=conll|bracketed|json] "
      "[--threads=N] < text > out");
  absl::ParseCommandLine(argc, argv);
  return chaintag::Run();
}
