#include "tagging/bundle_eval.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "corpora/conll_reader.h"
#include "corpora/conlleval.h"

namespace chaintag {
namespace {

absl::Status AddSentence(const std::vector<std::string>& gold,
                         const std::vector<std::string>& predicted,
                         ConllevalScorer* scorer) {
  for (size_t t = 0; t < gold.size(); ++t) {
    absl::Status status =
        scorer->AddLine(absl::StrCat("x ", gold[t], " ", predicted[t]));
    if (!status.ok()) return status;
  }
  return scorer->AddLine("");
}

StageScore Finish(ConllevalScorer* scorer) {
  scorer->Finish();
  StageScore score;
  score.f1 = scorer->f1();
  score.accuracy = scorer->accuracy();
  score.tokens = scorer->tokens();
  score.report = scorer->Report();
  return score;
}

}  // namespace

absl::StatusOr<StageScore> ScoreBundleStage(
    const Bundle& bundle, int stage, const std::vector<Sentence>& sentences,
    const BundleOptions& options) {
  if (stage < 0 || stage >= bundle.num_stages()) {
    return absl::InvalidArgumentError(absl::StrCat("no stage ", stage));
  }
  ConllevalScorer scorer;
  BundleScratch scratch;
  std::vector<StageOutput> outputs;
  std::vector<std::string> words;
  for (const Sentence& sentence : sentences) {
    if (!sentence.has_tags()) {
      return absl::InvalidArgumentError(absl::StrCat(
          sentence.source, ":", sentence.first_line, ": no gold tags"));
    }
    words.clear();
    for (int t = 0; t < sentence.size(); ++t) {
      words.push_back(sentence.attribute(t, 0));
    }
    absl::Status status = bundle.Tag(words, options, &scratch, &outputs);
    if (!status.ok()) return status;
    status = AddSentence(sentence.tags, outputs[stage].tags, &scorer);
    if (!status.ok()) return status;
  }
  return Finish(&scorer);
}

absl::StatusOr<StageScore> ScoreModel(const ChainModel& model,
                                      const std::vector<Sentence>& sentences,
                                      bool constrained) {
  ConllevalScorer scorer;
  TagScratch scratch;
  Decoded decoded;
  DecodeOptions options;
  options.constrained = constrained;
  // A stacked model reads its documents' attributes.
  std::vector<Sentence> stacked;
  if (model.first_stage() != nullptr) {
    stacked = sentences;
    for (const auto& [begin, end] : DocumentRanges(stacked)) {
      absl::Status added = model.AddDocumentAttributes(
          absl::MakeSpan(stacked).subspan(begin, end - begin), &scratch);
      if (!added.ok()) return added;
    }
  }
  for (const Sentence& sentence : stacked.empty() ? sentences : stacked) {
    if (!sentence.has_tags()) {
      return absl::InvalidArgumentError(absl::StrCat(
          sentence.source, ":", sentence.first_line, ": no gold tags"));
    }
    if (sentence.size() == 0) continue;
    absl::Status status =
        model.PredictNBest(sentence, options, &scratch, &decoded);
    if (!status.ok()) return status;
    status = AddSentence(sentence.tags,
                         model.ToOutputTags(decoded.labelings[0]), &scorer);
    if (!status.ok()) return status;
  }
  return Finish(&scorer);
}

}  // namespace chaintag
