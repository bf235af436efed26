#include "pipeline/stacking.h"

#include <malloc.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/parallel.h"
#include "corpora/conll_reader.h"
#include "features/document_features.h"
#include "pipeline/chain_training.h"

namespace chaintag {

absl::StatusOr<ChainModel> TrainFirstStage(const PipelineConfig& config,
                                           const PreparedCorpus& source,
                                           std::vector<Sentence> train) {
  absl::StatusOr<ChainModel> model = absl::UnknownError("not trained");
  {
    PreparedCorpus stage;
    stage.config = config;
    stage.task = std::make_unique<ConllTask>();
    stage.format = source.format;
    stage.num_columns = source.num_columns;
    stage.train = std::move(train);
    absl::Status made =
        static_cast<const ConllTask&>(*stage.task).PrepareProblem(&stage);
    if (!made.ok()) return made;
    stage.train = std::vector<Sentence>();
    // The sentences' copy and the features as extracted (on the worker
    // threads, remapped into new blocks since) are many small freed blocks
    // in malloc's arenas, which the solver's large vectors never reuse:
    // without this each stage left some hundred MB resident.
    malloc_trim(0);
    model = TrainChainModel(stage);
  }
  // The stage's features and solver state, for the next stage.
  malloc_trim(0);
  return model;
}

namespace {

bool ReadsDocumentAttributes(const FeatureTemplate& feature_template,
                             int num_attributes) {
  for (const TemplatePart& part : feature_template.parts()) {
    if (part.attribute() >= num_attributes) return true;
  }
  return false;
}

void KeepCorpusTemplates(
    int num_attributes,
    google::protobuf::RepeatedPtrField<FeatureTemplate>* templates) {
  google::protobuf::RepeatedPtrField<FeatureTemplate> kept;
  for (FeatureTemplate& feature_template : *templates) {
    if (!ReadsDocumentAttributes(feature_template, num_attributes)) {
      *kept.Add() = std::move(feature_template);
    }
  }
  *templates = std::move(kept);
}

// How many first stages train at once.
int StageThreads(const PipelineConfig& config) {
  const int parallel = config.stacking().parallel_stages();
  const int threads = WorkerThreads(config);
  return parallel > 0 ? std::min(parallel, threads) : threads;
}

// The jackknife fold that holds a sentence out: its document's, d mod folds.
int FoldOf(const Sentence& sentence, int folds) {
  return sentence.document % folds;
}

absl::Status CheckStacking(const PreparedCorpus& prepared, int num_attributes) {
  const StackingConfig& stacking = prepared.config.stacking();
  if (stacking.parallel_stages() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("config: stacking.parallel_stages must be >= 0, got ",
                     stacking.parallel_stages()));
  }
  if (stacking.folds() < 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "config: stacking.folds must be at least 2, got ", stacking.folds()));
  }
  if (stacking.word_attribute() < 0 ||
      stacking.word_attribute() >= num_attributes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "config: stacking.word_attribute ", stacking.word_attribute(),
        " is not one of the corpus's ", num_attributes, " attributes"));
  }
  // Every fold holds out some documents and trains on others: known once
  // the corpus is read, before any stage trains.
  const int folds = stacking.folds();
  std::vector<int64_t> held_out(folds, 0);
  for (const Sentence& sentence : prepared.train) {
    ++held_out[FoldOf(sentence, folds)];
  }
  const int64_t total = static_cast<int64_t>(prepared.train.size());
  for (int f = 0; f < folds; ++f) {
    if (held_out[f] == 0 || held_out[f] == total) {
      return absl::InvalidArgumentError(absl::StrCat(
          "stacking: fold ", f + 1, " of ", folds, " would hold out ",
          held_out[f], " of the ", total,
          " training sentences: too few documents (-DOCSTART- lines, "
          "corpus.format.document_blank_lines, or pseudo-documents: "
          "corpus.format.sentences_per_document); at least ",
          folds, " documents are needed"));
    }
  }
  return absl::OkStatus();
}

// The first stage's labels (IOB2) of `sentences`, a document at a time.
absl::Status LabelDocuments(const ChainModel& model,
                            const std::vector<Sentence>& sentences,
                            std::vector<std::vector<std::string>>* labels) {
  labels->resize(sentences.size());
  TagScratch scratch;
  std::vector<std::vector<std::string>> document_labels;
  for (const auto& [begin, end] : DocumentRanges(sentences)) {
    absl::Status tagged = model.DocumentLabels(
        absl::MakeConstSpan(sentences).subspan(begin, end - begin), &scratch,
        &document_labels);
    if (!tagged.ok()) return tagged;
    std::move(document_labels.begin(), document_labels.end(),
              labels->begin() + begin);
  }
  return absl::OkStatus();
}

absl::Status AppendAttributes(
    int word_attribute, const std::vector<std::vector<std::string>>& labels,
    std::vector<Sentence>* sentences) {
  for (const auto& [begin, end] : DocumentRanges(*sentences)) {
    const std::vector<std::vector<std::string>> document_labels(
        labels.begin() + begin, labels.begin() + end);
    absl::Status added = AppendDocumentAttributes(
        word_attribute, document_labels,
        absl::MakeSpan(*sentences).subspan(begin, end - begin));
    if (!added.ok()) return added;
  }
  return absl::OkStatus();
}

// Fold f of the jackknife: its documents' labels (in `labels`) from a first
// stage trained on the other folds; `line` reports it.
absl::Status LabelFold(const PipelineConfig& stage_config,
                       const PreparedCorpus& prepared, int f,
                       std::vector<std::vector<std::string>>* labels,
                       std::string* line) {
  const absl::Time start = absl::Now();
  const int folds = prepared.config.stacking().folds();
  std::vector<Sentence> rest, held_out;
  std::vector<int> held_out_index;
  for (int i = 0; i < static_cast<int>(prepared.train.size()); ++i) {
    const Sentence& sentence = prepared.train[i];
    if (FoldOf(sentence, folds) == f) {
      held_out.push_back(sentence);
      held_out_index.push_back(i);
    } else {
      rest.push_back(sentence);
    }
  }
  absl::StatusOr<ChainModel> model =
      TrainFirstStage(stage_config, prepared, std::move(rest));
  if (!model.ok()) return model.status();
  std::vector<std::vector<std::string>> fold_labels;
  absl::Status labelled = LabelDocuments(*model, held_out, &fold_labels);
  if (!labelled.ok()) return labelled;
  for (size_t k = 0; k < held_out_index.size(); ++k) {
    (*labels)[held_out_index[k]] = std::move(fold_labels[k]);
  }
  *line = absl::StrFormat("stacking: fold %d/%d, %d sentences held out, %.1fs",
                          f + 1, folds, static_cast<int>(held_out.size()),
                          absl::ToDoubleSeconds(absl::Now() - start));
  return absl::OkStatus();
}

// The saved first stage (on train) labels dev; with retraining, a first
// stage on train + dev waits for the final model.
absl::Status TrainSavedFirstStages(const PipelineConfig& stage_config,
                                   const ProgressLine& say,
                                   PreparedCorpus* prepared) {
  const absl::Time start = absl::Now();
  // On train and on train + dev, side by side.
  const bool retrain = prepared->config.corpus().retrain_on_train_and_dev();
  absl::StatusOr<ChainModel> stages[2] = {absl::UnknownError("not trained"),
                                          absl::UnknownError("not trained")};
  const int count = retrain ? 2 : 1;
  ParallelFor(count, StageThreads(prepared->config), [&](int begin, int end) {
    for (int j = begin; j < end; ++j) {
      // The larger stage (train + dev) first: one at a time, it then
      // trains while no other model is held.
      const int k = count - 1 - j;
      std::vector<Sentence> train = prepared->train;
      if (k == 1) {
        train.insert(train.end(), prepared->dev.begin(), prepared->dev.end());
      }
      stages[k] = TrainFirstStage(stage_config, *prepared, std::move(train));
    }
  });
  for (int k = 0; k < (retrain ? 2 : 1); ++k) {
    if (!stages[k].ok()) return stages[k].status();
  }
  prepared->first_stage =
      std::make_shared<const ChainModel>(*std::move(stages[0]));
  if (retrain) {
    prepared->first_stage_with_dev =
        std::make_shared<const ChainModel>(*std::move(stages[1]));
  }
  if (!prepared->dev.empty()) {
    std::vector<std::vector<std::string>> labels;
    absl::Status labelled =
        LabelDocuments(*prepared->first_stage, prepared->dev, &labels);
    if (!labelled.ok()) return labelled;
    prepared->stacked_dev = prepared->dev;
    absl::Status added =
        AppendAttributes(prepared->config.stacking().word_attribute(), labels,
                         &prepared->stacked_dev);
    if (!added.ok()) return added;
  }
  say(absl::StrFormat("stacking: the saved first stage%s, %.1fs",
                      prepared->first_stage_with_dev != nullptr
                          ? "s (train; train + dev)"
                          : " (train)",
                      absl::ToDoubleSeconds(absl::Now() - start)));
  return absl::OkStatus();
}

}  // namespace

absl::Status JackknifeLabels(const PipelineConfig& stage_config,
                             const PreparedCorpus& prepared,
                             const ProgressLine& say,
                             std::vector<std::vector<std::string>>* labels) {
  const int folds = prepared.config.stacking().folds();
  labels->assign(prepared.train.size(), {});
  std::vector<absl::Status> statuses(folds);
  std::vector<std::string> lines(folds);
  // The folds' stages train side by side: each writes only its own
  // sentences' labels, so the result does not depend on the threads.
  ParallelFor(folds, StageThreads(prepared.config), [&](int begin, int end) {
    for (int f = begin; f < end; ++f) {
      statuses[f] = LabelFold(stage_config, prepared, f, labels, &lines[f]);
    }
  });
  for (int f = 0; f < folds; ++f) {
    if (!statuses[f].ok()) return statuses[f];
    say(lines[f]);
  }
  return absl::OkStatus();
}

PipelineConfig FirstStageConfig(const PipelineConfig& config,
                                int num_attributes) {
  PipelineConfig stage = config;
  stage.clear_stacking();
  stage.mutable_corpus()->set_retrain_on_train_and_dev(false);
  stage.clear_checkpoint();
  stage.clear_predictions_path();
  stage.set_eval_every(0);
  FeatureConfig* features = stage.mutable_features();
  KeepCorpusTemplates(num_attributes, features->mutable_templates());
  KeepCorpusTemplates(num_attributes, features->mutable_pair_templates());
  const int passes = config.stacking().first_stage_passes();
  if (passes > 0) stage.mutable_solver()->set_max_passes(passes);
  return stage;
}

absl::Status StackedConllTask::Prepare(const PipelineOptions& options,
                                       PreparedCorpus* prepared) {
  absl::Status read = ReadCorpus(options, prepared);
  if (!read.ok()) return read;
  const int num_attributes = prepared->format.attribute_columns_size();
  absl::Status valid = CheckStacking(*prepared, num_attributes);
  if (!valid.ok()) return valid;
  const PipelineConfig stage_config =
      FirstStageConfig(prepared->config, num_attributes);
  const ProgressLine say = ProgressPrinter(options.progress);
  // The saved stages before the folds: the one on train + dev is the
  // largest of all, and trains before any fold's labels are held.
  absl::Status done = TrainSavedFirstStages(stage_config, say, prepared);
  std::vector<std::vector<std::string>> labels;
  if (done.ok()) done = JackknifeLabels(stage_config, *prepared, say, &labels);
  if (done.ok()) {
    done = AppendAttributes(prepared->config.stacking().word_attribute(),
                            labels, &prepared->train);
  }
  if (!done.ok()) return done;
  return PrepareProblem(prepared);
}

}  // namespace chaintag
