#include "tagging/conll_tagging.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "base/batch_pool.h"
#include "corpora/conll_reader.h"

namespace chaintag {
namespace {

// What the tag is appended with: a TAB to a line whose fields TABs
// separate (as CRF++'s crf_test keeps them), a space otherwise.
char FieldSeparator(const std::string& line) {
  return line.find('\t') != std::string::npos ? '\t' : ' ';
}

int CountFields(const std::string& line) {
  return static_cast<int>(
      std::vector<absl::string_view>(
          absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty()))
          .size());
}

// TagConllStream's state. Two batches: one is tagged while the next is
// read. Each holds the items as read and each sentence's tags, output lines
// and status; the slots are reused, keeping their buffers. One TagScratch
// per thread.
class ConllStreamTagger {
 public:
  ConllStreamTagger(const ChainModel& model, std::istream* input,
                    absl::string_view source, const ConllFormat& format,
                    const ConllTaggingOptions& options,
                    const OutputSink& write);
  ConllStreamTagger(const ConllStreamTagger&) = delete;
  ConllStreamTagger& operator=(const ConllStreamTagger&) = delete;

  absl::Status Run();

 private:
  struct Batch {
    std::vector<ConllReader::Item> items;
    std::vector<std::vector<std::string>> tags;
    std::vector<std::string> tagged;
    std::vector<absl::Status> statuses;
    int size = 0;
    // A stacked model's documents: item ranges between -DOCSTART- items.
    std::vector<std::pair<int, int>> documents;
  };

  // Item i of the batch being tagged, on `worker`'s scratch. The workers
  // format its output lines too: only the concatenation and the write are
  // left to the reading thread.
  void TagItem(int worker, int i);
  // A stacked model's document d of the batch being tagged: its sentences
  // tagged together (ChainModel::TagDocument), each formatted as TagItem
  // does.
  void TagDocumentItems(int worker, int d);
  void FormatItem(int i);
  // Item i's nbest labelings, decoded and formatted (ConllTaggingOptions).
  absl::Status TagItemNBest(int worker, int i);
  // Appends the sentence's lines, each with its tag, and a blank line.
  void AppendTaggedLines(const Sentence& sentence,
                         const std::vector<std::string>& tags,
                         std::string* lines) const;
  // Whether the batch just read ends here: a stacked model's batches hold
  // whole documents, so they end only after a -DOCSTART- (or at the end).
  bool BatchEndsAfter(const ConllReader::Item& item) const;
  // Room for one more item in the batch being read (stacked models' long
  // documents can outgrow the batch).
  void MakeRoom();
  // Hands the batch just read to the workers; the other becomes the one
  // being read.
  void StartTagging();
  // Finishes the batch being tagged, hands the batch just read to the
  // workers, and writes the finished one while they tag: the writing (and
  // on_tagged) then overlaps the tagging instead of idling the helpers.
  absl::Status HandOver();
  // Finishes and writes the batch being tagged.
  absl::Status FinishTagging();
  // Writes a finished batch in input order; at the first failing sentence,
  // writes the output before it and says why.
  absl::Status WriteBatch(Batch* batch);
  // Finishes the batch being tagged, then tags and finishes the one just
  // read.
  absl::Status TagRemainingBatches();
  // The -DOCSTART- lines held back, padded to the output's field count.
  void AppendPendingDocStarts();

  const ChainModel& model_;
  std::istream* const input_;
  const absl::string_view source_;
  const OutputSink& write_;
  ConllReader reader_;
  const std::string outside_ = "O";
  const int threads_;
  const int capacity_;
  const bool stacked_;
  // CRFsuite's layout: labels only (see ConllTaggingOptions).
  const bool crfsuite_;
  const bool reference_;
  const ConllTaggingOptions& options_;
  Batch batches_[2];
  std::vector<TagScratch> scratch_;
  std::vector<std::vector<double>> probabilities_;  // per worker, marginals
  std::vector<Decoded> decoded_;                    // per worker, nbest
  std::vector<std::string> pending_docstarts_;
  int output_fields_ = 0;  // fields of a tagged token line, once known
  std::string out_;
  Batch* tagging_ = nullptr;
  Batch* reading_ = &batches_[0];
  // Last: destroyed first, so its helpers are joined before the batches and
  // scratch they work on go.
  BatchPool tagger_;
};

ConllStreamTagger::ConllStreamTagger(const ChainModel& model,
                                     std::istream* input,
                                     absl::string_view source,
                                     const ConllFormat& format,
                                     const ConllTaggingOptions& options,
                                     const OutputSink& write)
    : model_(model),
      input_(input),
      source_(source),
      write_(write),
      reader_(input, std::string(source), format),
      threads_(std::max(1, options.threads)),
      capacity_(options.batch_per_thread * threads_),
      stacked_(model.first_stage() != nullptr),
      crfsuite_(format.layout() == ConllFormat::CRFSUITE),
      reference_(options.reference),
      options_(options),
      scratch_(threads_),
      probabilities_(threads_),
      decoded_(threads_),
      tagger_(threads_, [this](int worker, int i) {
        if (stacked_) {
          TagDocumentItems(worker, i);
        } else {
          TagItem(worker, i);
        }
      }) {
  for (Batch& batch : batches_) {
    batch.items.resize(capacity_);
    batch.tags.resize(capacity_);
    batch.tagged.resize(capacity_);
    batch.statuses.resize(capacity_);
  }
}

void ConllStreamTagger::TagItem(int worker, int i) {
  Batch& batch = *tagging_;
  if (batch.items[i].kind != ConllReader::Item::kSentence) return;
  const Sentence& sentence = batch.items[i].sentence;
  if (options_.marginals) {
    batch.statuses[i] = model_.TagWithMarginals(
        sentence, &scratch_[worker], &batch.tags[i], &probabilities_[worker]);
    if (batch.statuses[i].ok()) {
      std::vector<std::string>& tags = batch.tags[i];
      const LabelSet& labels = model_.labels();
      // TagWithMarginals leaves the T×L label marginals first.
      const double* marginals = scratch_[worker].marginals.data();
      for (size_t t = 0; t < tags.size(); ++t) {
        tags[t] =
            absl::StrFormat("%s:%.6f", tags[t], probabilities_[worker][t]);
        if (!options_.label_marginals) continue;
        for (int l = 0; l < labels.size(); ++l) {
          absl::StrAppendFormat(&tags[t], " %s:%.6f", labels.Name(l),
                                marginals[t * labels.size() + l]);
        }
      }
    }
  } else if (options_.nbest > 1) {
    batch.statuses[i] = TagItemNBest(worker, i);
    return;
  } else {
    batch.statuses[i] = model_.Tag(sentence, &scratch_[worker], &batch.tags[i]);
  }
  if (batch.statuses[i].ok()) FormatItem(i);
}

absl::Status ConllStreamTagger::TagItemNBest(int worker, int i) {
  Batch& batch = *tagging_;
  const Sentence& sentence = batch.items[i].sentence;
  DecodeOptions decode;
  decode.constrained = model_.header().constrained_decoding();
  decode.nbest = options_.nbest;
  Decoded& decoded = decoded_[worker];
  absl::Status status =
      model_.PredictNBest(sentence, decode, &scratch_[worker], &decoded);
  if (!status.ok()) return status;
  std::string& lines = batch.tagged[i];
  lines.clear();
  for (size_t k = 0; k < decoded.labelings.size(); ++k) {
    std::vector<std::string> tags = model_.ToOutputTags(decoded.labelings[k]);
    absl::StrAppendFormat(&lines, "# %d %.6f\n", k, decoded.scores[k]);
    AppendTaggedLines(sentence, tags, &lines);
    if (k == 0) batch.tags[i] = std::move(tags);
  }
  return absl::OkStatus();
}

void ConllStreamTagger::AppendTaggedLines(const Sentence& sentence,
                                          const std::vector<std::string>& tags,
                                          std::string* lines) const {
  for (size_t t = 0; t < tags.size(); ++t) {
    if (crfsuite_) {
      if (reference_) lines->append(sentence.tags[t]).append("\t");
    } else {
      lines->append(sentence.lines[t])
          .push_back(FieldSeparator(sentence.lines[t]));
    }
    lines->append(tags[t]).append("\n");
  }
  lines->append("\n");
}

void ConllStreamTagger::TagDocumentItems(int worker, int d) {
  Batch& batch = *tagging_;
  const auto [begin, end] = batch.documents[d];
  // The sentences are moved out for TagDocument's contiguous span, and
  // back, with their buffers, for the output and the next read.
  std::vector<Sentence> document;
  std::vector<int> items;
  for (int i = begin; i < end; ++i) {
    if (batch.items[i].kind != ConllReader::Item::kSentence) continue;
    document.push_back(std::move(batch.items[i].sentence));
    items.push_back(i);
  }
  std::vector<std::vector<std::string>> tags;
  const absl::Status status =
      model_.TagDocument(document, &scratch_[worker], &tags);
  for (size_t k = 0; k < items.size(); ++k) {
    batch.items[items[k]].sentence = std::move(document[k]);
    batch.statuses[items[k]] = status;
    if (!status.ok()) continue;
    batch.tags[items[k]] = std::move(tags[k]);
    FormatItem(items[k]);
  }
}

void ConllStreamTagger::FormatItem(int i) {
  Batch& batch = *tagging_;
  const Sentence& sentence = batch.items[i].sentence;
  std::string& lines = batch.tagged[i];
  lines.clear();
  if (crfsuite_) {
    AppendTaggedLines(sentence, batch.tags[i], &lines);
    return;
  }
  // Sized once and filled with plain copies: four appends a token, each
  // checking and growing the string, showed in tag's profile.
  const std::vector<std::string>& tags = batch.tags[i];
  size_t size = 1;
  for (size_t t = 0; t < sentence.lines.size(); ++t) {
    size += sentence.lines[t].size() + tags[t].size() + 2;
  }
  lines.resize(size);
  char* out = &lines[0];
  for (size_t t = 0; t < sentence.lines.size(); ++t) {
    const std::string& line = sentence.lines[t];
    std::memcpy(out, line.data(), line.size());
    out += line.size();
    *out++ = FieldSeparator(line);
    std::memcpy(out, tags[t].data(), tags[t].size());
    out += tags[t].size();
    *out++ = '\n';
  }
  *out = '\n';
}

bool ConllStreamTagger::BatchEndsAfter(const ConllReader::Item& item) const {
  if (stacked_ && item.kind != ConllReader::Item::kDocStart) return false;
  return reading_->size >= capacity_ || InputWouldBlock(input_);
}

void ConllStreamTagger::MakeRoom() {
  Batch& batch = *reading_;
  if (batch.size < static_cast<int>(batch.items.size())) return;
  const size_t size = batch.items.size() * 2;
  batch.items.resize(size);
  batch.tags.resize(size);
  batch.tagged.resize(size);
  batch.statuses.resize(size);
}

void ConllStreamTagger::StartTagging() {
  tagging_ = reading_;
  if (stacked_) {
    Batch& batch = *reading_;
    batch.documents.clear();
    int begin = 0;
    for (int i = 0; i <= batch.size; ++i) {
      if (i == batch.size ||
          batch.items[i].kind == ConllReader::Item::kDocStart) {
        if (i > begin) batch.documents.emplace_back(begin, i);
        begin = i + 1;
      }
    }
  }
  tagger_.Start(stacked_ ? static_cast<int>(reading_->documents.size())
                         : reading_->size);
  reading_ = reading_ == &batches_[0] ? &batches_[1] : &batches_[0];
}

absl::Status ConllStreamTagger::HandOver() {
  if (tagging_ == nullptr) {
    StartTagging();
    return absl::OkStatus();
  }
  tagger_.Finish();
  Batch* finished = tagging_;
  // The batch just read goes to the workers; `finished` becomes the one
  // read next, once written.
  StartTagging();
  return WriteBatch(finished);
}

absl::Status ConllStreamTagger::FinishTagging() {
  if (tagging_ == nullptr) return absl::OkStatus();
  tagger_.Finish();
  Batch* finished = tagging_;
  tagging_ = nullptr;
  return WriteBatch(finished);
}

absl::Status ConllStreamTagger::WriteBatch(Batch* finished) {
  Batch& batch = *finished;
  out_.clear();
  for (int i = 0; i < batch.size; ++i) {
    const ConllReader::Item& item = batch.items[i];
    if (item.kind == ConllReader::Item::kDocStart) {
      // Held back until the next sentence shows the output field count.
      pending_docstarts_.push_back(item.line);
      continue;
    }
    if (!batch.statuses[i].ok()) {
      absl::Status written = write_(out_);
      if (!written.ok()) return written;
      return absl::Status(batch.statuses[i].code(),
                          absl::StrCat(source_, ":", item.line_number, ": ",
                                       batch.statuses[i].message()));
    }
    if (options_.on_tagged) {
      absl::Status observed = options_.on_tagged(item.sentence, batch.tags[i]);
      if (!observed.ok()) {
        absl::Status written = write_(out_);
        if (!written.ok()) return written;
        return observed;
      }
    }
    if (output_fields_ == 0 && !item.sentence.lines.empty()) {
      output_fields_ = CountFields(item.sentence.lines[0]) + 1;
    }
    AppendPendingDocStarts();
    out_.append(batch.tagged[i]);
  }
  batch.size = 0;
  return write_(out_);
}

absl::Status ConllStreamTagger::TagRemainingBatches() {
  absl::Status written = FinishTagging();
  if (!written.ok()) return written;
  StartTagging();
  return FinishTagging();
}

void ConllStreamTagger::AppendPendingDocStarts() {
  for (const std::string& line : pending_docstarts_) {
    out_.append(line);
    if (output_fields_ > 0 && CountFields(line) < output_fields_) {
      out_.push_back(FieldSeparator(line));
      out_.append(outside_);
    }
    out_.append("\n\n");
  }
  pending_docstarts_.clear();
}

absl::Status ConllStreamTagger::Run() {
  while (true) {
    // A read that could block waits for input: what was read goes out
    // first, so a pipe is answered sentence by sentence.
    if (InputWouldBlock(input_)) {
      absl::Status written = FinishTagging();
      if (!written.ok()) return written;
    }
    MakeRoom();
    absl::StatusOr<bool> more = reader_.Next(&reading_->items[reading_->size]);
    if (!more.ok()) {
      // An earlier sentence that fails comes first.
      absl::Status written = TagRemainingBatches();
      return written.ok() ? more.status() : written;
    }
    if (!*more) break;
    ++reading_->size;
    if (BatchEndsAfter(reading_->items[reading_->size - 1])) {
      absl::Status written = HandOver();
      if (!written.ok()) return written;
    }
  }
  absl::Status written = TagRemainingBatches();
  if (!written.ok()) return written;
  out_.clear();
  AppendPendingDocStarts();
  return write_(out_);
}

}  // namespace

bool InputWouldBlock(std::istream* input) {
  return input->rdbuf()->in_avail() <= 0;
}

absl::Status TagConllStream(const ChainModel& model, std::istream* input,
                            absl::string_view source,
                            const ConllTaggingOptions& options,
                            const OutputSink& write) {
  if (!model.header().has_input_format()) {
    return absl::FailedPreconditionError(
        "the model has no CoNLL input format (an OCR pixel model?)");
  }
  if (options.marginals &&
      (model.first_stage() != nullptr || model.order() != 1)) {
    return absl::UnimplementedError(
        "marginals are computed for first-order, single-stage models only");
  }
  if (options.nbest < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("nbest must be at least 1, got ", options.nbest));
  }
  if (options.nbest > 1 && (options.marginals || model.first_stage())) {
    return absl::UnimplementedError(
        "n-best labelings are listed for single-stage models, without "
        "marginals");
  }
  ConllFormat format = model.header().input_format();
  format.set_allow_missing_label(true);
  ConllStreamTagger tagger(model, input, source, format, options, write);
  return tagger.Run();
}

}  // namespace chaintag
