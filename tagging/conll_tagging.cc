#include "tagging/conll_tagging.h"

#include <algorithm>
#include <cstring>
#include <istream>
#include <streambuf>
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

int CountFields(absl::string_view line) {
  return static_cast<int>(
      std::vector<absl::string_view>(
          absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty()))
          .size());
}

// A string read as a stream, in place.
class StringStreamBuffer : public std::streambuf {
 public:
  explicit StringStreamBuffer(const std::string& text) {
    char* begin = const_cast<char*>(text.data());
    setg(begin, begin, begin + text.size());
  }
};

// Whether [begin, end), a line without its '\n', ends a sentence as
// ConllReader reads it: after one trailing CR, nothing but blanks (TABs in
// CRFsuite's layout, spaces and TABs in CoNLL's).
bool IsBlankLine(const char* begin, const char* end, bool crfsuite) {
  if (end > begin && end[-1] == '\r') --end;
  for (; begin < end; ++begin) {
    if (*begin != '\t' && (crfsuite || *begin != ' ')) return false;
  }
  return true;
}

// TagConllStream's state. The calling thread reads; the workers (the
// caller among them when it waits) parse, tag and format. The unit of work
// is a chunk: about options.chunk_bytes of whole sentences as raw text,
// which its worker parses with a ConllReader continuing the file's first
// one, or, for a stacked model, one document's items as the calling thread
// read them (its documents are read in order: they number their sentences
// across the file). Two batches of chunks: one is tagged while the next is
// read; the slots keep their buffers. Each chunk's output is one string,
// written as it is, in input order.
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
  struct Chunk {
    // Raw lines to parse, the first being line lines_before + 1; empty when
    // the items were read by the calling thread.
    std::string text;
    int64_t lines_before = 0;
    std::vector<ConllReader::Item> items;
    int size = 0;  // items in use
    std::vector<std::vector<std::string>> tags;
    absl::Status read_status;  // the text's error after its `size` items
    int failed = -1;           // the first item whose tagging failed
    absl::Status tag_status;
    std::string output;               // items [0, size or failed)
    std::vector<size_t> output_ends;  // per item, its end in `output`
  };
  struct Batch {
    std::vector<Chunk> chunks;
    int size = 0;  // chunks in use
  };

  // Chunk c of the batch being tagged, on `worker`'s scratch.
  void TagChunk(int worker, int c);
  void ParseChunk(Chunk* chunk) const;
  // Tags item i (a sentence) of `chunk` into chunk->tags[i].
  absl::Status TagItem(int worker, Chunk* chunk, int i);
  // A stacked model's chunk: its sentences tagged as one document.
  absl::Status TagDocument(int worker, Chunk* chunk);
  void FormatItem(const Chunk& chunk, int i, std::string* lines) const;
  // The next chunk slot of the batch being read, emptied.
  Chunk* AddChunk();
  // Ends the batch being read when it holds `capacity_` chunks.
  absl::Status EndBatchIfFull();
  // Hands the batch just read to the workers; the other becomes the one
  // being read.
  void StartTagging();
  // Finishes and writes the batch being tagged, in input order; at the
  // first failing sentence, writes the output before it and says why.
  absl::Status FinishTagging();
  // Finishes the batch being tagged, then tags and finishes the one read.
  absl::Status TagRemainingBatches();
  // Reads items with reader_ into the batch being read until the first
  // sentence (and the line it holds), so the layout and the output's field
  // count are known before anything is tagged: false at the end of input.
  absl::StatusOr<bool> ReadHead();
  // Runs with raw chunks (single-stage models) or read items (stacked).
  absl::Status RunChunks();
  absl::Status RunDocuments();
  // Moves carry_'s whole sentences, when it holds at least `min_bytes`, to
  // a chunk of the batch being read.
  absl::Status CutChunk(size_t min_bytes);
  // The end of carry_'s last blank line (after its '\n'); 0 when none.
  size_t EndOfLastBlankLine();

  const ChainModel& model_;
  std::istream* const input_;
  const absl::string_view source_;
  const OutputSink& write_;
  ConllReader reader_;
  const std::string outside_ = "O";
  const int capacity_;
  const size_t chunk_bytes_;
  const bool stacked_;
  // CRFsuite's layout: labels only (see ConllTaggingOptions).
  const bool crfsuite_;
  const ConllTaggingOptions& options_;
  Batch batches_[2];
  std::vector<TagScratch> scratch_;
  std::vector<std::vector<double>> probabilities_;  // per worker, marginals
  int output_fields_ = 0;  // fields of a tagged token line, once known
  bool seen_sentence_ = false;
  std::string carry_;  // raw text read after the head, not yet in a chunk
  size_t carry_scanned_ = 0;  // carry_'s first bytes hold no blank line
  int64_t lines_before_carry_ = 0;
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
      capacity_(std::max(1, options.batch_per_thread) *
                std::max(1, options.threads)),
      chunk_bytes_(std::max<size_t>(1, options.chunk_bytes)),
      stacked_(model.first_stage() != nullptr),
      crfsuite_(format.layout() == ConllFormat::CRFSUITE),
      options_(options),
      scratch_(std::max(1, options.threads)),
      probabilities_(std::max(1, options.threads)),
      tagger_(std::max(1, options.threads),
              [this](int worker, int c) { TagChunk(worker, c); }) {}

void ConllStreamTagger::TagChunk(int worker, int c) {
  Chunk& chunk = tagging_->chunks[c];
  if (!chunk.text.empty()) ParseChunk(&chunk);
  if (chunk.tags.size() < chunk.items.size()) {
    chunk.tags.resize(chunk.items.size());
  }
  chunk.failed = -1;
  chunk.output.clear();
  chunk.output_ends.clear();
  absl::Status document = absl::OkStatus();
  if (stacked_) document = TagDocument(worker, &chunk);
  for (int i = 0; i < chunk.size; ++i) {
    if (chunk.items[i].kind == ConllReader::Item::kSentence) {
      absl::Status status = stacked_ ? document : TagItem(worker, &chunk, i);
      if (!status.ok()) {
        chunk.failed = i;
        chunk.tag_status = std::move(status);
        return;
      }
    }
    FormatItem(chunk, i, &chunk.output);
    chunk.output_ends.push_back(chunk.output.size());
  }
}

void ConllStreamTagger::ParseChunk(Chunk* chunk) const {
  StringStreamBuffer buffer(chunk->text);
  std::istream stream(&buffer);
  ConllReader reader(&stream, reader_, chunk->lines_before);
  chunk->size = 0;
  chunk->read_status = absl::OkStatus();
  while (true) {
    if (chunk->size == static_cast<int>(chunk->items.size())) {
      chunk->items.resize(chunk->items.size() * 2 + 8);
    }
    absl::StatusOr<bool> more = reader.Next(&chunk->items[chunk->size]);
    if (!more.ok()) {
      chunk->read_status = more.status();
      return;
    }
    if (!*more) return;
    ++chunk->size;
  }
}

absl::Status ConllStreamTagger::TagItem(int worker, Chunk* chunk, int i) {
  const Sentence& sentence = chunk->items[i].sentence;
  std::vector<std::string>& tags = chunk->tags[i];
  if (!options_.marginals) {
    return model_.Tag(sentence, &scratch_[worker], &tags);
  }
  std::vector<double>& probabilities = probabilities_[worker];
  absl::Status status = model_.TagWithMarginals(sentence, &scratch_[worker],
                                                &tags, &probabilities);
  if (!status.ok()) return status;
  for (size_t t = 0; t < tags.size(); ++t) {
    tags[t] = absl::StrFormat("%s:%.6f", tags[t], probabilities[t]);
  }
  return absl::OkStatus();
}

absl::Status ConllStreamTagger::TagDocument(int worker, Chunk* chunk) {
  // The sentences are moved out for TagDocument's contiguous span, and
  // back, with their buffers, for the output and the next read.
  std::vector<Sentence> document;
  std::vector<int> items;
  for (int i = 0; i < chunk->size; ++i) {
    if (chunk->items[i].kind != ConllReader::Item::kSentence) continue;
    document.push_back(std::move(chunk->items[i].sentence));
    items.push_back(i);
  }
  if (document.empty()) return absl::OkStatus();
  std::vector<std::vector<std::string>> tags;
  const absl::Status status =
      model_.TagDocument(document, &scratch_[worker], &tags);
  for (size_t k = 0; k < items.size(); ++k) {
    chunk->items[items[k]].sentence = std::move(document[k]);
    if (status.ok()) chunk->tags[items[k]] = std::move(tags[k]);
  }
  return status;
}

void ConllStreamTagger::FormatItem(const Chunk& chunk, int i,
                                   std::string* lines) const {
  const ConllReader::Item& item = chunk.items[i];
  if (item.kind == ConllReader::Item::kDocStart) {
    lines->append(item.line);
    if (output_fields_ > 0 && CountFields(item.line) < output_fields_) {
      lines->append(" ").append(outside_);
    }
    lines->append("\n\n");
    return;
  }
  const Sentence& sentence = item.sentence;
  const std::vector<std::string>& tags = chunk.tags[i];
  if (crfsuite_) {
    for (size_t t = 0; t < tags.size(); ++t) {
      if (options_.reference) lines->append(sentence.tags[t]).append("\t");
      lines->append(tags[t]).append("\n");
    }
    lines->append("\n");
    return;
  }
  // Sized once and filled with plain copies: four appends a token, each
  // checking and growing the string, showed in tag's profile.
  size_t size = 1;
  for (size_t t = 0; t < sentence.lines.size(); ++t) {
    size += sentence.lines[t].size() + tags[t].size() + 2;
  }
  const size_t begin = lines->size();
  lines->resize(begin + size);
  char* out = &(*lines)[begin];
  for (size_t t = 0; t < sentence.lines.size(); ++t) {
    const std::string& line = sentence.lines[t];
    std::memcpy(out, line.data(), line.size());
    out += line.size();
    *out++ = ' ';
    std::memcpy(out, tags[t].data(), tags[t].size());
    out += tags[t].size();
    *out++ = '\n';
  }
  *out = '\n';
}

ConllStreamTagger::Chunk* ConllStreamTagger::AddChunk() {
  Batch& batch = *reading_;
  if (batch.size == static_cast<int>(batch.chunks.size())) {
    batch.chunks.emplace_back();
  }
  Chunk* chunk = &batch.chunks[batch.size++];
  chunk->text.clear();
  chunk->size = 0;
  return chunk;
}

absl::Status ConllStreamTagger::EndBatchIfFull() {
  if (reading_->size < capacity_) return absl::OkStatus();
  absl::Status written = FinishTagging();
  if (written.ok()) StartTagging();
  return written;
}

void ConllStreamTagger::StartTagging() {
  tagging_ = reading_;
  tagger_.Start(reading_->size);
  reading_ = reading_ == &batches_[0] ? &batches_[1] : &batches_[0];
  reading_->size = 0;
}

absl::Status ConllStreamTagger::FinishTagging() {
  if (tagging_ == nullptr) return absl::OkStatus();
  tagger_.Finish();
  Batch& batch = *tagging_;
  tagging_ = nullptr;
  for (int c = 0; c < batch.size; ++c) {
    const Chunk& chunk = batch.chunks[c];
    const int good = chunk.failed >= 0 ? chunk.failed : chunk.size;
    absl::Status status = absl::OkStatus();
    int end = good;  // the items whose output goes out
    for (int i = 0; i < good && status.ok(); ++i) {
      const ConllReader::Item& item = chunk.items[i];
      if (options_.on_tagged && item.kind == ConllReader::Item::kSentence) {
        status = options_.on_tagged(item.sentence, chunk.tags[i]);
        if (!status.ok()) end = i;
      }
    }
    if (status.ok() && chunk.failed >= 0) {
      status = absl::Status(
          chunk.tag_status.code(),
          absl::StrCat(source_, ":", chunk.items[chunk.failed].line_number,
                       ": ", chunk.tag_status.message()));
    }
    if (status.ok()) status = chunk.read_status;
    if (end == chunk.size) {
      absl::Status written = write_(chunk.output);
      if (!written.ok()) return written;
    } else if (end > 0) {
      absl::Status written =
          write_(chunk.output.substr(0, chunk.output_ends[end - 1]));
      if (!written.ok()) return written;
    }
    if (!status.ok()) return status;
  }
  batch.size = 0;
  return absl::OkStatus();
}

absl::Status ConllStreamTagger::TagRemainingBatches() {
  absl::Status written = FinishTagging();
  if (!written.ok()) return written;
  StartTagging();
  return FinishTagging();
}

absl::StatusOr<bool> ConllStreamTagger::ReadHead() {
  Chunk* chunk = AddChunk();
  // A stacked model's reader goes on reading: the line it holds starts the
  // next document.
  while (!seen_sentence_ || (!stacked_ && reader_.holds_line())) {
    if (chunk->size == static_cast<int>(chunk->items.size())) {
      chunk->items.resize(chunk->items.size() + 1);
    }
    absl::StatusOr<bool> more = reader_.Next(&chunk->items[chunk->size]);
    if (!more.ok()) return more.status();
    if (!*more) return false;
    if (chunk->items[chunk->size++].kind == ConllReader::Item::kSentence &&
        !seen_sentence_) {
      seen_sentence_ = true;
      if (!crfsuite_) output_fields_ = reader_.num_fields() + 1;
    }
  }
  return true;
}

size_t ConllStreamTagger::EndOfLastBlankLine() {
  // Lines are scanned backwards from the last whole one, down to where an
  // earlier scan found none.
  size_t line_end = carry_.rfind('\n');
  while (line_end != std::string::npos && line_end >= carry_scanned_) {
    const size_t previous =
        line_end == 0 ? std::string::npos : carry_.rfind('\n', line_end - 1);
    const size_t begin = previous == std::string::npos ? 0 : previous + 1;
    if (IsBlankLine(carry_.data() + begin, carry_.data() + line_end,
                    crfsuite_)) {
      return line_end + 1;
    }
    line_end = previous;
  }
  const size_t last = carry_.rfind('\n');
  carry_scanned_ = last == std::string::npos ? 0 : last + 1;
  return 0;
}

absl::Status ConllStreamTagger::CutChunk(size_t min_bytes) {
  if (carry_.size() < min_bytes) return absl::OkStatus();
  const size_t cut = EndOfLastBlankLine();
  if (cut == 0) return absl::OkStatus();
  Chunk* chunk = AddChunk();
  // The read text becomes the chunk's, and only its tail, the start of the
  // next sentence, is copied back.
  chunk->text.swap(carry_);
  carry_.assign(chunk->text, cut, std::string::npos);
  chunk->text.resize(cut);
  chunk->lines_before = lines_before_carry_;
  lines_before_carry_ +=
      std::count(chunk->text.begin(), chunk->text.end(), '\n');
  carry_scanned_ = 0;
  return EndBatchIfFull();
}

absl::Status ConllStreamTagger::RunChunks() {
  lines_before_carry_ = reader_.lines_read();
  // The head is one chunk of its own.
  absl::Status written = EndBatchIfFull();
  if (!written.ok()) return written;
  std::streambuf* const buffer = input_->rdbuf();
  while (true) {
    if (InputWouldBlock(input_)) {
      // A read that could block waits for input: what was read goes out
      // first, so a pipe is answered sentence by sentence.
      written = CutChunk(0);
      if (written.ok() && reading_->size > 0) {
        written = FinishTagging();
        if (written.ok()) StartTagging();
      }
      if (written.ok()) written = FinishTagging();
      if (!written.ok()) return written;
      if (input_->peek() == std::char_traits<char>::eof()) break;
    }
    const size_t ready = static_cast<size_t>(std::max<std::streamsize>(
        1, std::min<std::streamsize>(buffer->in_avail(), chunk_bytes_)));
    const size_t old_size = carry_.size();
    carry_.resize(old_size + ready);
    input_->read(&carry_[old_size], static_cast<std::streamsize>(ready));
    carry_.resize(old_size + static_cast<size_t>(input_->gcount()));
    written = CutChunk(chunk_bytes_);
    if (!written.ok()) return written;
  }
  if (input_->bad()) {
    written = TagRemainingBatches();
    if (!written.ok()) return written;
    return absl::DataLossError(absl::StrCat(
        source_, ":",
        lines_before_carry_ + std::count(carry_.begin(), carry_.end(), '\n'),
        ": read error"));
  }
  if (!carry_.empty()) {
    // The last sentence, with no blank line after it.
    Chunk* chunk = AddChunk();
    chunk->text.swap(carry_);
    chunk->lines_before = lines_before_carry_;
  }
  return TagRemainingBatches();
}

absl::Status ConllStreamTagger::RunDocuments() {
  Chunk* chunk = &reading_->chunks[reading_->size - 1];
  while (true) {
    if (InputWouldBlock(input_)) {
      absl::Status written = FinishTagging();
      if (!written.ok()) return written;
    }
    if (chunk->size == static_cast<int>(chunk->items.size())) {
      chunk->items.resize(chunk->items.size() * 2 + 8);
    }
    ConllReader::Item* item = &chunk->items[chunk->size];
    absl::StatusOr<bool> more = reader_.Next(item);
    if (!more.ok()) {
      // An earlier sentence that fails comes first.
      absl::Status written = TagRemainingBatches();
      return written.ok() ? more.status() : written;
    }
    if (!*more) break;
    if (item->kind == ConllReader::Item::kDocStart && chunk->size > 0) {
      // A new document: a batch ends before it when full or when the input
      // could block.
      ConllReader::Item docstart;
      std::swap(docstart, *item);
      if (reading_->size >= capacity_ || InputWouldBlock(input_)) {
        absl::Status written = FinishTagging();
        if (!written.ok()) return written;
        StartTagging();
      }
      chunk = AddChunk();
      if (chunk->items.empty()) chunk->items.resize(8);
      std::swap(chunk->items[0], docstart);
    }
    ++chunk->size;
  }
  return TagRemainingBatches();
}

absl::Status ConllStreamTagger::Run() {
  absl::StatusOr<bool> more = ReadHead();
  if (!more.ok()) return more.status();
  if (!*more) return TagRemainingBatches();
  return stacked_ ? RunDocuments() : RunChunks();
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
  ConllFormat format = model.header().input_format();
  format.set_allow_missing_label(true);
  ConllStreamTagger tagger(model, input, source, format, options, write);
  return tagger.Run();
}

}  // namespace chaintag
