// tag: reads CoNLL columns from stdin (the gold column may be present or
// absent) and writes the same lines with the predicted tag appended, one
// sentence at a time (constant memory; flushed per sentence, so it works
// in a pipe).
//
//   bazel run //tools:tag -- --model=chunker.model < test.txt > tagged.txt
//
// -DOCSTART- lines are passed through; when the tagged lines carry a gold
// column, the outside tag is appended to them too, so that the output has
// one field count throughout, as conlleval requires.

#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "corpora/conll_reader.h"
#include "models/chain_model.h"
#include "pipeline/paths.h"

ABSL_FLAG(std::string, model, "", "Model file written by train.");
ABSL_FLAG(std::string, input, "", "Read this file instead of stdin.");

namespace chaintag {
namespace {

int CountFields(const std::string& line) {
  return static_cast<int>(
      std::vector<absl::string_view>(
          absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty()))
          .size());
}

int Run() {
  if (absl::GetFlag(FLAGS_model).empty()) {
    std::fprintf(stderr, "tag: --model=<file> is required\n");
    return 2;
  }
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
  std::ifstream file;
  std::istream* input = &std::cin;
  std::string source = "stdin";
  if (!absl::GetFlag(FLAGS_input).empty()) {
    source = ResolveUserPath(absl::GetFlag(FLAGS_input));
    file.open(source);
    if (!file) {
      std::fprintf(stderr, "tag: %s: cannot open\n", source.c_str());
      return 1;
    }
    input = &file;
  }
  std::ios::sync_with_stdio(false);
  ConllFormat format = model->header().input_format();
  format.set_allow_missing_label(true);
  ConllReader reader(input, source, format);
  const std::string outside = "O";
  TagScratch scratch;
  std::vector<std::string> tags;
  std::vector<std::string> pending_docstarts;
  int output_fields = 0;  // fields of a tagged token line, once known
  std::string out;
  auto emit_docstarts = [&] {
    for (const std::string& line : pending_docstarts) {
      out.append(line);
      if (output_fields > 0 && CountFields(line) < output_fields) {
        out.append(" ").append(outside);
      }
      out.append("\n\n");
    }
    pending_docstarts.clear();
  };
  ConllReader::Item item;
  while (true) {
    absl::StatusOr<bool> more = reader.Next(&item);
    if (!more.ok()) {
      std::fprintf(stderr, "tag: %s\n", more.status().ToString().c_str());
      return 1;
    }
    if (!*more) break;
    out.clear();
    if (item.kind == ConllReader::Item::kDocStart) {
      // Held back until the next sentence shows the output field count.
      pending_docstarts.push_back(item.line);
      continue;
    }
    const Sentence& sentence = item.sentence;
    absl::Status status = model->Tag(sentence, &scratch, &tags);
    if (!status.ok()) {
      std::fprintf(stderr, "tag: %s:%lld: %s\n", source.c_str(),
                   static_cast<long long>(item.line_number),
                   std::string(status.message()).c_str());
      return 1;
    }
    if (output_fields == 0) output_fields = CountFields(sentence.lines[0]) + 1;
    emit_docstarts();
    for (size_t t = 0; t < sentence.lines.size(); ++t) {
      out.append(sentence.lines[t]).append(" ").append(tags[t]).append("\n");
    }
    out.append("\n");
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fflush(stdout);
  }
  out.clear();
  emit_docstarts();
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
  return 0;
}

}  // namespace
}  // namespace chaintag

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Tags CoNLL columns from stdin: tag --model=<file> < in > out");
  absl::ParseCommandLine(argc, argv);
  return chaintag::Run();
}
