#include "tagging/tag_output.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "corpora/tag_scheme.h"
#include "google/protobuf/util/json_util.h"

namespace chaintag {

absl::StatusOr<OutputFormat> ParseOutputFormat(absl::string_view name) {
  if (name == "conll") return OutputFormat::kConll;
  if (name == "bracketed") return OutputFormat::kBracketed;
  if (name == "json") return OutputFormat::kJson;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown output format '", name,
                   "' (expected conll | bracketed | json)"));
}

std::vector<OutputStage> OutputStages(const Bundle& bundle) {
  std::vector<OutputStage> stages;
  for (int i = 0; i < bundle.num_stages(); ++i) {
    stages.push_back(
        {bundle.stage_name(i), bundle.stage_column(i), bundle.is_chunking(i)});
  }
  return stages;
}

absl::StatusOr<int> BracketStage(const std::vector<OutputStage>& stages,
                                 absl::string_view name) {
  const int n = static_cast<int>(stages.size());
  if (!name.empty()) {
    for (int i = 0; i < n; ++i) {
      if (stages[i].name != name && stages[i].column != name) continue;
      if (!stages[i].chunking) {
        return absl::InvalidArgumentError(absl::StrCat(
            "stage '", name, "' does not write chunk tags to bracket"));
      }
      return i;
    }
    return absl::InvalidArgumentError(
        absl::StrCat("the bundle has no stage '", name, "'"));
  }
  for (int i = 0; i < n; ++i) {
    if (stages[i].column == "chunk" && stages[i].chunking) return i;
  }
  for (int i = n - 1; i >= 0; --i) {
    if (stages[i].chunking) return i;
  }
  return absl::InvalidArgumentError(
      "the bundle has no chunking stage to bracket");
}

void AppendConll(const TaggedSentence& sentence, int nbest, std::string* out) {
  const size_t T = sentence.tokens.size();
  if (T == 0) return;
  for (size_t t = 0; t < T; ++t) {
    out->append(sentence.tokens[t]);
    for (size_t s = 0; s < sentence.outputs.size(); ++s) {
      const StageOutput& stage = sentence.outputs[s];
      if (stage.nbest_tags.empty()) {
        absl::StrAppend(out, " ", stage.tags[t]);
        continue;
      }
      for (const std::vector<std::string>& tags : stage.nbest_tags) {
        absl::StrAppend(out, " ", tags[t]);
      }
      for (int k = static_cast<int>(stage.nbest_tags.size()); k < nbest; ++k) {
        out->append(" _");
      }
    }
    out->append("\n");
  }
  out->append("\n");
}

std::string Bracketed(const std::vector<std::string>& tokens,
                      const std::vector<std::string>& tags) {
  std::string line;
  const std::vector<Chunk> chunks = ExtractChunks(tags);
  size_t next = 0;
  auto add = [&line](absl::string_view text) {
    if (!line.empty()) line.append(" ");
    line.append(text.data(), text.size());
  };
  for (size_t t = 0; t < tokens.size();) {
    if (next < chunks.size() && chunks[next].begin == static_cast<int>(t)) {
      const Chunk& chunk = chunks[next++];
      add(absl::StrCat("[", chunk.type));
      for (int u = chunk.begin; u < chunk.end; ++u) add(tokens[u]);
      add("]");
      t = static_cast<size_t>(chunk.end);
    } else {
      add(tokens[t]);
      ++t;
    }
  }
  return line;
}

void AppendBracketed(const TaggedSentence& sentence, int stage,
                     std::string* out) {
  if (sentence.tokens.empty()) return;
  const StageOutput& output = sentence.outputs[stage];
  if (output.nbest_tags.empty()) {
    absl::StrAppend(out, Bracketed(sentence.tokens, output.tags), "\n");
    return;
  }
  for (size_t k = 0; k < output.nbest_tags.size(); ++k) {
    absl::StrAppend(out, absl::StrFormat("%.4f", output.nbest_scores[k]), "\t",
                    Bracketed(sentence.tokens, output.nbest_tags[k]), "\n");
  }
}

TaggedSentenceRecord ToRecord(const std::vector<OutputStage>& stages,
                              const TaggedSentence& sentence) {
  TaggedSentenceRecord record;
  if (sentence.line > 0) record.set_line(static_cast<int32_t>(sentence.line));
  for (const std::string& token : sentence.tokens) record.add_tokens(token);
  for (const auto& [begin, end] : sentence.offsets) {
    TokenOffset* offset = record.add_offsets();
    offset->set_begin(static_cast<int32_t>(begin));
    offset->set_end(static_cast<int32_t>(end));
  }
  for (size_t s = 0; s < sentence.outputs.size(); ++s) {
    const StageOutput& output = sentence.outputs[s];
    StageRecord* stage = record.add_stages();
    stage->set_name(stages[s].name);
    stage->set_column(stages[s].column);
    for (const std::string& tag : output.tags) stage->add_tags(tag);
    if (stages[s].chunking) {
      for (const Chunk& chunk : ExtractChunks(output.tags)) {
        SpanRecord* span = stage->add_spans();
        span->set_begin(chunk.begin);
        span->set_end(chunk.end);
        span->set_type(chunk.type);
        span->set_text(absl::StrJoin(sentence.tokens.begin() + chunk.begin,
                                     sentence.tokens.begin() + chunk.end, " "));
      }
    }
    if (!sentence.tokens.empty()) stage->set_score(output.score);
    if (output.margin.has_value()) stage->set_margin(*output.margin);
    for (size_t k = 0; k < output.nbest_tags.size(); ++k) {
      LabelingRecord* labeling = stage->add_nbest();
      for (const std::string& tag : output.nbest_tags[k]) {
        labeling->add_tags(tag);
      }
      labeling->set_score(output.nbest_scores[k]);
    }
  }
  return record;
}

absl::Status AppendJson(const std::vector<OutputStage>& stages,
                        const TaggedSentence& sentence, std::string* out) {
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  const auto status = google::protobuf::util::MessageToJsonString(
      ToRecord(stages, sentence), &json, options);
  if (!status.ok()) {
    return absl::InternalError(
        absl::StrCat("JSON output: ", std::string(status.message())));
  }
  absl::StrAppend(out, json, "\n");
  return absl::OkStatus();
}

}  // namespace chaintag
