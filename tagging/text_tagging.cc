#include "tagging/text_tagging.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/batch_pool.h"
#include "tagging/conll_tagging.h"

namespace chaintag {

TextTagger::TextTagger(const Bundle* bundle, const Tokenizer* tokenizer,
                       OutputFormat format, int bracket_stage,
                       BundleOptions options)
    : bundle_(bundle),
      tokenizer_(tokenizer),
      format_(format),
      bracket_stage_(bracket_stage),
      options_(options),
      stages_(OutputStages(*bundle)) {}

absl::Status TextTagger::Emit(int64_t line, std::string* out) {
  if (sentence_.tokens.empty()) return absl::OkStatus();
  sentence_.line = line;
  absl::Status status =
      bundle_->Tag(sentence_.tokens, options_, &scratch_, &sentence_.outputs);
  if (!status.ok()) return status;
  tokens_tagged_ += static_cast<int64_t>(sentence_.tokens.size());
  ++sentences_tagged_;
  const size_t size = out->size();
  switch (format_) {
    case OutputFormat::kConll:
      AppendConll(sentence_, options_.nbest, out);
      break;
    case OutputFormat::kBracketed:
      AppendBracketed(sentence_, bracket_stage_, out);
      break;
    case OutputFormat::kJson:
      status = AppendJson(stages_, sentence_, out);
      if (!status.ok()) {
        out->resize(size);
        return status;
      }
      break;
  }
  return absl::OkStatus();
}

absl::Status TextTagger::EmitTokens(const std::vector<Token>& tokens,
                                    int64_t line, std::string* out) {
  sentence_.tokens.clear();
  sentence_.offsets.clear();
  for (const Token& token : tokens) {
    sentence_.tokens.push_back(token.text);
    sentence_.offsets.emplace_back(token.begin, token.end);
  }
  return Emit(line, out);
}

absl::Status TextTagger::Line(absl::string_view text, int64_t line,
                              std::string* out) {
  return EmitTokens(tokenizer_->Tokenize(text), line, out);
}

absl::Status TextTagger::Paragraph(absl::string_view text, int64_t first_line,
                                   std::string* out) {
  for (const std::vector<Token>& tokens : tokenizer_->SplitSentences(text)) {
    absl::Status status = EmitTokens(tokens, first_line, out);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

absl::Status TextTagger::Words(const std::vector<std::string>& words,
                               int64_t line, std::string* out) {
  sentence_.tokens = words;
  sentence_.offsets.clear();
  return Emit(line, out);
}

absl::Status TagTextStream(const Bundle& bundle, const Tokenizer& tokenizer,
                           std::istream* input, absl::string_view source,
                           const TextTaggingOptions& options,
                           const OutputSink& write) {
  const int threads = std::max(1, options.threads);
  std::vector<TextTagger> taggers;
  taggers.reserve(threads);
  for (int t = 0; t < threads; ++t) {
    taggers.emplace_back(&bundle, &tokenizer, options.format,
                         options.bracket_stage, options.decode);
  }
  const bool paragraphs = options.paragraphs;

  // The batch: lines (or paragraphs) with their first line number, and what
  // tagging each gave. The slots are reused, keeping their buffers.
  const int capacity = options.batch_per_thread * threads;
  std::vector<std::string> texts(capacity);
  std::vector<int64_t> text_lines(capacity);
  std::vector<std::string> outs(capacity);
  std::vector<absl::Status> statuses(capacity);
  int batch = 0;
  std::string out;
  // Tags and writes the batch; at the first failing sentence, writes the
  // output before it and says why.
  BatchPool pool(threads, [&](int worker, int i) {
    outs[i].clear();
    statuses[i] =
        paragraphs
            ? taggers[worker].Paragraph(texts[i], text_lines[i], &outs[i])
            : taggers[worker].Line(texts[i], text_lines[i], &outs[i]);
  });
  auto flush = [&]() -> absl::Status {
    pool.Start(batch);
    pool.Finish();
    out.clear();
    for (int i = 0; i < batch; ++i) {
      out.append(outs[i]);
      if (!statuses[i].ok()) {
        absl::Status written = write(out);
        if (!written.ok()) return written;
        return absl::Status(statuses[i].code(),
                            absl::StrCat(source, ":", text_lines[i], ": ",
                                         statuses[i].message()));
      }
    }
    batch = 0;
    return write(out);
  };

  std::string line;
  std::string paragraph;
  int64_t line_number = 0;
  int64_t paragraph_line = 0;
  auto add_paragraph = [&] {
    if (paragraph.empty()) return;  // no tokens, no output
    std::swap(texts[batch], paragraph);
    paragraph.clear();
    text_lines[batch++] = paragraph_line;
  };
  while (std::getline(*input, line)) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!paragraphs) {
      std::swap(texts[batch], line);
      text_lines[batch++] = line_number;
    } else if (line.find_first_not_of(" \t") == std::string::npos) {
      add_paragraph();
    } else {
      if (paragraph.empty()) {
        paragraph_line = line_number;
      } else {
        paragraph.push_back('\n');
      }
      paragraph.append(line);
    }
    if (batch == capacity || (batch > 0 && InputWouldBlock(input))) {
      absl::Status written = flush();
      if (!written.ok()) return written;
    }
  }
  if (paragraphs) add_paragraph();
  absl::Status written = flush();
  if (!written.ok()) return written;
  if (input->bad()) {
    return absl::DataLossError(absl::StrCat(source, ": read error"));
  }
  return absl::OkStatus();
}

}  // namespace chaintag
