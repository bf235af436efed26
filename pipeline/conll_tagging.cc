#include "pipeline/conll_tagging.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/batch_pool.h"
#include "corpora/conll_reader.h"

namespace chaintag {
namespace {

int CountFields(const std::string& line) {
  return static_cast<int>(
      std::vector<absl::string_view>(
          absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty()))
          .size());
}

}  // namespace

bool InputWouldBlock(std::istream* input) {
  return input->rdbuf()->in_avail() <= 0;
}

absl::Status TagConllStream(
    const ChainModel& model, std::istream* input, absl::string_view source,
    const ConllTaggingOptions& options,
    const std::function<void(const std::string&)>& write) {
  if (!model.header().has_input_format()) {
    return absl::FailedPreconditionError(
        "the model has no CoNLL input format (an OCR pixel model?)");
  }
  ConllFormat format = model.header().input_format();
  format.set_allow_missing_label(true);
  ConllReader reader(input, std::string(source), format);
  const std::string outside = "O";

  // Two batches: one is tagged while the next is read. Each holds the items
  // as read and each sentence's tags, output lines and status; the slots
  // are reused, keeping their buffers. One TagScratch per thread.
  struct Batch {
    std::vector<ConllReader::Item> items;
    std::vector<std::vector<std::string>> tags;
    std::vector<std::string> tagged;
    std::vector<absl::Status> statuses;
    int size = 0;
  };
  const int threads = std::max(1, options.threads);
  const int capacity = options.batch_per_thread * threads;
  Batch batches[2];
  for (Batch& batch : batches) {
    batch.items.resize(capacity);
    batch.tags.resize(capacity);
    batch.tagged.resize(capacity);
    batch.statuses.resize(capacity);
  }
  std::vector<TagScratch> scratch(threads);

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
  // The batch being tagged. The workers format its output lines too: only
  // the concatenation and the write are left to this thread.
  Batch* tagging = nullptr;
  BatchPool tagger(threads, [&](int worker, int i) {
    Batch& batch = *tagging;
    if (batch.items[i].kind != ConllReader::Item::kSentence) return;
    const Sentence& sentence = batch.items[i].sentence;
    batch.statuses[i] = model.Tag(sentence, &scratch[worker], &batch.tags[i]);
    if (!batch.statuses[i].ok()) return;
    std::string& lines = batch.tagged[i];
    lines.clear();
    for (size_t t = 0; t < sentence.lines.size(); ++t) {
      lines.append(sentence.lines[t]).append(" ").append(batch.tags[i][t]);
      lines.append("\n");
    }
    lines.append("\n");
  });
  // Finishes and writes the batch being tagged, in input order; at the
  // first failing sentence, writes the output before it and says why.
  auto finish = [&]() -> absl::Status {
    if (tagging == nullptr) return absl::OkStatus();
    tagger.Finish();
    Batch& batch = *tagging;
    tagging = nullptr;
    out.clear();
    for (int i = 0; i < batch.size; ++i) {
      const ConllReader::Item& item = batch.items[i];
      if (item.kind == ConllReader::Item::kDocStart) {
        // Held back until the next sentence shows the output field count.
        pending_docstarts.push_back(item.line);
        continue;
      }
      if (!batch.statuses[i].ok()) {
        write(out);
        return absl::Status(batch.statuses[i].code(),
                            absl::StrCat(source, ":", item.line_number, ": ",
                                         batch.statuses[i].message()));
      }
      if (output_fields == 0) {
        output_fields = CountFields(item.sentence.lines[0]) + 1;
      }
      emit_docstarts();
      out.append(batch.tagged[i]);
    }
    write(out);
    batch.size = 0;
    return absl::OkStatus();
  };
  Batch* reading = &batches[0];
  auto start = [&] {
    tagging = reading;
    tagger.Start(reading->size);
    reading = reading == &batches[0] ? &batches[1] : &batches[0];
  };

  while (true) {
    // A read that could block waits for input: what was read goes out
    // first, so a pipe is answered sentence by sentence.
    if (InputWouldBlock(input)) {
      absl::Status written = finish();
      if (!written.ok()) return written;
    }
    absl::StatusOr<bool> more = reader.Next(&reading->items[reading->size]);
    if (!more.ok()) {
      // An earlier sentence that fails comes first.
      absl::Status written = finish();
      if (written.ok()) {
        start();
        written = finish();
      }
      return written.ok() ? more.status() : written;
    }
    if (!*more) break;
    ++reading->size;
    if (reading->size == capacity || InputWouldBlock(input)) {
      absl::Status written = finish();
      if (!written.ok()) return written;
      start();
    }
  }
  absl::Status written = finish();
  if (!written.ok()) return written;
  start();
  written = finish();
  if (!written.ok()) return written;
  out.clear();
  emit_docstarts();
  write(out);
  return absl::OkStatus();
}

}  // namespace chaintag
