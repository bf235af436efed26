#include "pipeline/conll_task.h"

#include <malloc.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/types/span.h"
#include "base/parallel.h"
#include "base/paths.h"
#include "corpora/conll_reader.h"
#include "corpora/conlleval.h"
#include "corpora/tag_scheme.h"
#include "features/bigram_counts.h"
#include "features/brown_clustering.h"
#include "features/training_keys.h"
#include "models/transition_constraints.h"
#include "pipeline/conll_splits.h"

namespace chaintag {
namespace {

using TagFunction = std::function<absl::Status(const Sentence&, TagScratch*,
                                               std::vector<std::string>*)>;

// conlleval's scores of `predictions` (one per sentence) against the
// sentences' gold tags, in corpus order.
absl::StatusOr<double> ScorePredictions(
    const std::vector<Sentence>& sentences,
    std::vector<std::vector<std::string>> predictions, bool raw,
    std::string* report, double* accuracy,
    std::vector<std::vector<std::string>>* predictions_out) {
  ConllevalOptions options;
  options.raw = raw;
  ConllevalScorer scorer(options);
  for (size_t i = 0; i < sentences.size(); ++i) {
    scorer.AddSentence(sentences[i].tags, predictions[i]);
  }
  scorer.Finish();
  if (report != nullptr) *report = scorer.Report();
  if (accuracy != nullptr) *accuracy = scorer.accuracy();
  if (predictions_out != nullptr) *predictions_out = std::move(predictions);
  return scorer.f1();
}

// Tags every sentence (in parallel; each sentence's tags land in its own
// slot) and scores them in corpus order, so the result is deterministic.
absl::StatusOr<double> ScoreTagger(
    const TagFunction& tag, const std::vector<Sentence>& sentences, bool raw,
    int num_threads, std::string* report, double* accuracy,
    std::vector<std::vector<std::string>>* predictions_out = nullptr) {
  const int n = static_cast<int>(sentences.size());
  std::vector<std::vector<std::string>> predictions(n);
  std::vector<absl::Status> errors(n);
  ParallelFor(n, num_threads, [&](int begin, int end) {
    TagScratch scratch;
    for (int i = begin; i < end; ++i) {
      errors[i] = tag(sentences[i], &scratch, &predictions[i]);
    }
  });
  for (const absl::Status& error : errors) {
    if (!error.ok()) return error;
  }
  return ScorePredictions(sentences, std::move(predictions), raw, report,
                          accuracy, predictions_out);
}

// EvaluateModel for a stacked model: a document at a time (in parallel,
// each document's tags in its sentences' slots), scored in corpus order.
absl::StatusOr<double> ScoreDocuments(
    const ChainModel& model, const std::vector<Sentence>& sentences,
    int num_threads, std::string* report, double* accuracy,
    std::vector<std::vector<std::string>>* predictions_out) {
  const std::vector<std::pair<int, int>> documents = DocumentRanges(sentences);
  const int n = static_cast<int>(documents.size());
  std::vector<std::vector<std::string>> predictions(sentences.size());
  std::vector<absl::Status> errors(n);
  ParallelFor(n, num_threads, [&](int begin, int end) {
    TagScratch scratch;
    std::vector<std::vector<std::string>> tags;
    for (int d = begin; d < end; ++d) {
      const auto [first, last] = documents[d];
      errors[d] = model.TagDocument(
          absl::MakeConstSpan(sentences).subspan(first, last - first), &scratch,
          &tags);
      for (int s = first; s < last && errors[d].ok(); ++s) {
        predictions[s] = std::move(tags[s - first]);
      }
    }
  });
  for (const absl::Status& error : errors) {
    if (!error.ok()) return error;
  }
  return ScorePredictions(sentences, std::move(predictions),
                          model.header().output_scheme() == NONE, report,
                          accuracy, predictions_out);
}

// Whether features.cluster_source asks for clusters to be built from the
// training words.
bool BuildsClusters(const PipelineConfig& config) {
  return config.features().has_cluster_source() &&
         !config.features().has_clusters();
}

// features.cluster_source: Brown clusters of the training words (`counts`,
// their bigrams) and the raw text named, into the (resolved) features,
// where the model file keeps them.
absl::Status BuildClusters(const PipelineOptions& options, BigramCounts counts,
                           PreparedCorpus* prepared) {
  FeatureConfig* features = prepared->config.mutable_features();
  const ClusterSource& source = features->cluster_source();
  absl::Status added = absl::OkStatus();
  for (const std::string& path : source.raw_text()) {
    if (added.ok()) {
      added = AddRawTextFile(ResolvePath(options.corpora_root, path), &counts);
    }
  }
  if (!added.ok()) return added;
  BrownClusteringOptions clustering;
  clustering.num_clusters = source.num_clusters();
  clustering.min_count = source.min_count();
  clustering.source = "the training words";
  absl::StatusOr<WordClusters> clusters =
      BuildBrownClusters(counts, clustering);
  if (!clusters.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("features.cluster_source: ", clusters.status().message()));
  }
  *features->mutable_clusters() = *std::move(clusters);
  return absl::OkStatus();
}

absl::Status WritePredictions(
    const std::string& path, const std::vector<Sentence>& sentences,
    const std::vector<std::vector<std::string>>& predictions) {
  std::ofstream out(path);
  if (!out) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": cannot write predictions"));
  }
  for (size_t i = 0; i < sentences.size(); ++i) {
    // CRFsuite attribute files keep no lines: `tag --reference`'s
    // "reference TAB prediction" instead.
    if (sentences[i].has_items()) {
      for (size_t t = 0; t < sentences[i].tags.size(); ++t) {
        out << sentences[i].tags[t] << '\t' << predictions[i][t] << '\n';
      }
    }
    for (size_t t = 0; t < sentences[i].lines.size(); ++t) {
      out << sentences[i].lines[t] << ' ' << predictions[i][t] << '\n';
    }
    out << '\n';
  }
  out.flush();
  if (!out) {
    return absl::DataLossError(absl::StrCat(path, ": write failed"));
  }
  return absl::OkStatus();
}

// Adds the names of the features of `sentences` to the names, in sentence
// order whatever the thread count: each thread names a contiguous part, and
// the parts are merged in order.
absl::Status AddFeatureNames(const std::vector<Sentence>& sentences,
                             const PreparedCorpus& prepared,
                             FeatureNames* emission_names,
                             FeatureNames* pair_names) {
  const FeatureExtractor& extractor = *prepared.extractor;
  const int parts = std::max(1, WorkerThreads(prepared.config));
  const int64_t n = static_cast<int64_t>(sentences.size());
  std::vector<FeatureNames> emission(parts), pair(parts);
  std::vector<absl::Status> errors(parts);
  ParallelFor(parts, parts, [&](int begin, int end) {
    std::vector<std::vector<NamedFeature>> named;
    for (int part = begin; part < end; ++part) {
      for (int64_t i = SplitPoint(n, part, parts);
           i < SplitPoint(n, part + 1, parts) && errors[part].ok(); ++i) {
        errors[part] = AddSentenceNames(extractor, sentences[i], &named,
                                        &emission[part], &pair[part]);
      }
    }
  });
  for (int part = 1; part < parts; ++part) {
    if (!errors[part].ok()) return errors[part];
    emission[0].Merge(emission[part]);
    pair[0].Merge(pair[part]);
    emission[part] = FeatureNames();
    pair[part] = FeatureNames();
  }
  if (!errors[0].ok()) return errors[0];
  *emission_names = std::move(emission[0]);
  *pair_names = std::move(pair[0]);
  return absl::OkStatus();
}

// The label ids of `sentences`' tags in the training scheme, into
// `examples` when not null: new labels are added to prepared->labels in
// order of first appearance (a rank of a distributed run has them all from
// reading).
absl::Status LabelExamples(const std::vector<Sentence>& sentences,
                           PreparedCorpus* prepared,
                           std::vector<ChainExample>* examples) {
  const TagScheme input_scheme = prepared->format.tag_scheme();
  const TagScheme train_scheme = prepared->config.model().train_scheme();
  if (examples != nullptr) examples->resize(sentences.size());
  for (size_t i = 0; i < sentences.size(); ++i) {
    absl::StatusOr<std::vector<std::string>> tags =
        TrainingTags(sentences[i], input_scheme, train_scheme);
    if (!tags.ok()) return tags.status();
    for (const std::string& tag : *tags) {
      const int32_t label = prepared->labels.Add(tag);
      if (examples != nullptr) (*examples)[i].labels.push_back(label);
    }
  }
  return absl::OkStatus();
}

// The examples of `sentences`: labels as LabelExamples numbers them, and
// features as bucket ids.
absl::Status MakeExamples(const std::vector<Sentence>& sentences,
                          PreparedCorpus* prepared,
                          std::vector<ChainExample>* examples) {
  absl::Status labelled = LabelExamples(sentences, prepared, examples);
  if (!labelled.ok()) return labelled;
  const FeatureExtractor& extractor = *prepared->extractor;
  // Null without pair templates; either order reads them.
  const FeatureExtractor* pair_extractor = extractor.pair_extractor();
  std::vector<absl::Status> errors(sentences.size());
  // A chunk of sentences at a time, compacted here before the next: grown
  // by doubling, a whole corpus's features took about twice their size
  // until the problem compacted them, the peak memory of a stage. The
  // compacted blocks are allocated on this thread, in order, as the
  // problem's remapping would have allocated them.
  constexpr int kChunk = 1024;
  const int n = static_cast<int>(sentences.size());
  for (int chunk = 0; chunk < n; chunk += kChunk) {
    const int chunk_end = std::min(n, chunk + kChunk);
    ParallelFor(chunk_end - chunk, WorkerThreads(prepared->config),
                [&](int begin, int end) {
                  for (int i = chunk + begin; i < chunk + end; ++i) {
                    ChainExample& example = (*examples)[i];
                    errors[i] =
                        extractor.Extract(sentences[i], &example.features);
                    if (!errors[i].ok() || pair_extractor == nullptr) continue;
                    errors[i] = pair_extractor->Extract(sentences[i],
                                                        &example.pair_features);
                    ClearFirstPosition(&example.pair_features);
                  }
                });
    for (int i = chunk; i < chunk_end; ++i) {
      (*examples)[i].features.Compact();
      (*examples)[i].pair_features.Compact();
    }
  }
  // The extractor's errors name the sentence's file and line already
  // (FeatureExtractor::Extract), so they are returned as they are.
  for (const absl::Status& error : errors) {
    if (!error.ok()) return error;
  }
  return absl::OkStatus();
}

// Exact features (features.exact): the extractor over the key table of the
// sentences the run trains on, the training split's and, when the run
// retrains on train + dev, the dev split's; `hashing` is the one without a
// table.
absl::StatusOr<FeatureExtractor> ExactExtractor(
    const FeatureExtractor& hashing, const PreparedCorpus& prepared) {
  if (prepared.communicator != nullptr) {
    // A rank's table would be its shard's, and the ranks' rows differ.
    return absl::InvalidArgumentError(
        "config: features.exact is not supported with distributed training");
  }
  std::vector<const Sentence*> sentences;
  for (const Sentence& sentence : prepared.train)
    sentences.push_back(&sentence);
  if (prepared.config.corpus().retrain_on_train_and_dev()) {
    for (const Sentence& sentence : prepared.dev_features()) {
      sentences.push_back(&sentence);
    }
  }
  absl::StatusOr<std::shared_ptr<const FeatureKeys>> keys =
      CollectTrainingKeys(hashing, sentences, WorkerThreads(prepared.config));
  if (!keys.ok()) return keys.status();
  return FeatureExtractor::Create(prepared.config.features(), *std::move(keys));
}

// Each split's conlleval header, for the progress stream (the test report
// is the caller's to print).
std::string Headline(const std::string& report) {
  const size_t first = report.find('\n');
  const size_t second = first == std::string::npos
                            ? std::string::npos
                            : report.find('\n', first + 1);
  return report.substr(0, second);
}

// A split's score as the `done:` line gives it.
std::string ScoreText(const PreparedCorpus& prepared, double f1,
                      double accuracy) {
  return prepared.format.tag_scheme() == NONE
             ? absl::StrFormat("accuracy %.2f%%", accuracy)
             : absl::StrFormat("F1 %.2f", f1);
}

// Scores `model` on the dev split, when there is one, for `result` and the
// progress stream; returns the `done:` line's part.
absl::StatusOr<std::string> ScoreDev(const PreparedCorpus& prepared,
                                     const ChainModel& model,
                                     const ProgressLine& say,
                                     PipelineResult* result) {
  if (prepared.dev.empty()) return std::string();
  absl::StatusOr<double> f1 =
      EvaluateModel(model, prepared.dev, WorkerThreads(prepared.config),
                    &result->dev_report, &result->dev_accuracy);
  if (!f1.ok()) return f1.status();
  result->dev_f1 = *f1;
  const CorpusConfig& corpus = prepared.config.corpus();
  say(absl::StrCat("dev (",
                   corpus.dev().empty()
                       ? absl::StrCat("the last ", corpus.dev_fraction(),
                                      " of ", corpus.train())
                       : corpus.dev(),
                   "):\n", Headline(result->dev_report)));
  return absl::StrCat(
      ", dev ", ScoreText(prepared, result->dev_f1, result->dev_accuracy));
}

}  // namespace

absl::StatusOr<double> EvaluateModel(
    const ChainModel& model, const std::vector<Sentence>& sentences,
    int num_threads, std::string* report, double* accuracy,
    std::vector<std::vector<std::string>>* predictions) {
  if (model.first_stage() != nullptr) {
    return ScoreDocuments(model, sentences, num_threads, report, accuracy,
                          predictions);
  }
  return ScoreTagger(
      [&model](const Sentence& s, TagScratch* scratch,
               std::vector<std::string>* tags) {
        return model.Tag(s, scratch, tags);
      },
      sentences, model.header().output_scheme() == NONE, num_threads, report,
      accuracy, predictions);
}

void ConllTask::ResolveConfig(PipelineConfig* config) const {
  ModelConfig* model = config->mutable_model();
  // A config without a tag scheme has it read from the training labels,
  // and its training scheme with it (ReadSplits).
  if (model->train_scheme() == TAG_SCHEME_UNSPECIFIED &&
      !SchemeFromLabels(*config)) {
    model->set_train_scheme(config->corpus().format().tag_scheme());
  }
}

absl::Status ConllTask::Prepare(const PipelineOptions& options,
                                PreparedCorpus* prepared) {
  // A rank of a distributed run reads, featurises and trains its shard of
  // the training sentences.
  prepared->communicator = options.communicator;
  absl::Status read = ReadCorpus(options, prepared);
  if (!read.ok()) return read;
  return PrepareProblem(prepared);
}

absl::Status ConllTask::ReadCorpus(const PipelineOptions& options,
                                   PreparedCorpus* prepared) const {
  const CorpusConfig& corpus = prepared->config.corpus();
  if (corpus.train().empty() && options.given == nullptr) {
    return absl::InvalidArgumentError("config: corpus.train is not set");
  }
  const bool clusters = BuildsClusters(prepared->config);
  BigramCounts cluster_counts;
  absl::Status read =
      ReadSplits(options, clusters ? &cluster_counts : nullptr, prepared);
  if (!read.ok()) return read;
  if (corpus.retrain_on_train_and_dev() && prepared->dev.empty()) {
    return absl::InvalidArgumentError(
        "config: corpus.retrain_on_train_and_dev needs a dev split "
        "(corpus.dev or corpus.dev_fraction)");
  }
  if (!clusters) return absl::OkStatus();
  return BuildClusters(options, std::move(cluster_counts), prepared);
}

absl::Status ConllTask::PrepareProblem(PreparedCorpus* prepared) const {
  const bool retrain = prepared->config.corpus().retrain_on_train_and_dev();
  absl::StatusOr<FeatureExtractor> extractor =
      FeatureExtractor::Create(prepared->config.features());
  if (!extractor.ok()) return extractor.status();
  if (extractor->exact()) {
    extractor = ExactExtractor(*extractor, *prepared);
    if (!extractor.ok()) return extractor.status();
  }
  prepared->extractor =
      std::make_unique<FeatureExtractor>(std::move(*extractor));
  // Labels in order of first appearance: train first, then dev when it is
  // trained on too. A rank of a distributed run numbered them all while
  // reading, and featurises its shard.
  const bool sharded = prepared->communicator != nullptr;
  std::vector<ChainExample> examples;
  absl::Status made = MakeExamples(prepared->train, prepared, &examples);
  if (!made.ok()) return made;
  const int min_count = prepared->config.features().min_feature_count();
  if (min_count > 1 && (sharded || retrain)) {
    // Both would need counts over more than these examples.
    return absl::InvalidArgumentError(
        "config: features.min_feature_count is not supported with "
        "distributed training or corpus.retrain_on_train_and_dev");
  }
  DropRareFeatures(min_count, &examples);
  if (retrain) {
    // Dev's labels are numbered after train's, as the train + dev problem
    // numbers them; its features wait for that problem, so that the
    // train-only run does not hold them.
    made = LabelExamples(prepared->dev_features(), prepared, nullptr);
    if (!made.ok()) return made;
  }
  if (prepared->config.model().states() == ModelConfig::OBSERVED_STATES &&
      sharded) {
    // Each rank would restrict the rows to the labels of its own shard.
    return absl::InvalidArgumentError(
        "config: model.states OBSERVED_STATES is not supported with "
        "distributed training");
  }
  if (prepared->config.model().keep_feature_names() && sharded) {
    // Each rank sees its shard only, and the model must not depend on the
    // number of ranks.
    return absl::InvalidArgumentError(
        "config: model.keep_feature_names is not supported with distributed "
        "training; dump --names_from=<training file> recovers the names");
  }
  if (prepared->config.model().keep_feature_names()) {
    FeatureNames emission_names, pair_names;
    made = AddFeatureNames(prepared->train, *prepared, &emission_names,
                           &pair_names);
    if (made.ok() && retrain) {
      FeatureNames dev_emission, dev_pair;
      made = AddFeatureNames(prepared->dev_features(), *prepared, &dev_emission,
                             &dev_pair);
      emission_names.Merge(dev_emission);
      pair_names.Merge(dev_pair);
    }
    if (!made.ok()) return made;
    prepared->emission_names = emission_names.Compact();
    prepared->pair_names = pair_names.Compact();
  }
  // Over every rank's sentences; reported, and recorded in the model, by
  // rank 0.
  absl::StatusOr<FeatureStats> stats =
      sharded ? FeatureStatsOfAllRanks(*prepared->extractor, prepared->train,
                                       WorkerThreads(prepared->config),
                                       prepared->communicator)
              : ComputeFeatureStats(*prepared->extractor, prepared->train,
                                    WorkerThreads(prepared->config));
  if (!stats.ok()) return stats.status();
  prepared->feature_stats = *stats;
  // The train + dev problem is built when the final run needs it, once the
  // train-only run has released its memory (PrepareRetrainingProblem).
  // The rows of a distributed run: the union of every rank's buckets.
  std::optional<BucketRows> rows;
  if (sharded) {
    absl::StatusOr<BucketRows> all_ranks = UsedRowsOfAllRanks(
        examples, prepared->extractor->num_buckets(), prepared->communicator);
    if (!all_ranks.ok()) return all_ranks.status();
    rows = *std::move(all_ranks);
    RemapToRows(*rows, /*pair_features=*/false, &examples);
  }
  absl::StatusOr<TrainingProblem> training = MakeTrainingProblem(
      prepared->config.model(), prepared->config.solver(), prepared->labels,
      prepared->extractor->num_buckets(), std::move(examples),
      rows.has_value() ? &*rows : nullptr, WorkerThreads(prepared->config));
  if (!training.ok()) return training.status();
  prepared->SetTrainingProblem(*std::move(training));
  return absl::OkStatus();
}

void ConllTask::ReportCorpus(const PreparedCorpus& prepared,
                             const ProgressLine& say,
                             PipelineResult* result) const {
  const FeatureStats& stats = prepared.feature_stats;
  result->num_dev_sentences = static_cast<int>(prepared.dev.size());
  result->num_test_sentences = static_cast<int>(prepared.test.size());
  if (!prepared.inferred_input.empty()) {
    say(absl::StrCat("read from the training file (the config names none): ",
                     prepared.inferred_input));
  }
  say(absl::StrFormat(
      "corpus: %d training sentences, %s%d test sentences, %d labels (%s; "
      "input and output in %s)",
      result->num_train_sentences,
      prepared.dev.empty()
          ? ""
          : absl::StrFormat("%d dev sentences, ", result->num_dev_sentences),
      result->num_test_sentences, prepared.labels.size(),
      TagSchemeName(prepared.config.model().train_scheme()),
      TagSchemeName(prepared.format.tag_scheme())));
  if (!prepared.scheme_warning.empty()) say(prepared.scheme_warning);
  const int min_count = prepared.config.features().min_feature_count();
  const std::string kept =
      min_count > 1 && prepared.rows != nullptr
          ? absl::StrFormat(", %d seen at least %d times",
                            prepared.rows->size(), min_count)
          : "";
  const ChainProblem& problem = *prepared.problem;
  const std::string dim =
      problem.free_emissions().rows != nullptr
          ? absl::StrFormat(
                "dim %d (%d of them weights: model.states "
                "OBSERVED_STATES)",
                problem.layout().dim(), problem.num_free_coordinates())
          : absl::StrFormat("dim %d", problem.layout().dim());
  if (prepared.extractor->exact()) {
    say(absl::StrFormat(
        "features: %d distinct attributes, exact (a row each%s), %s",
        stats.distinct_attributes, kept, dim));
    return;
  }
  say(absl::StrFormat(
      "features: %d distinct attributes in %d buckets (%d used%s), collision "
      "rate %.2f%%, %s",
      stats.distinct_attributes, prepared.extractor->num_buckets(),
      stats.distinct_buckets, kept, 100 * stats.collision_rate, dim));
}

HeldOutScorer ConllTask::MakeHeldOutScorer(const PreparedCorpus& prepared,
                                           bool dev_only) const {
  HeldOutScorer scorer;
  const PipelineConfig& config = prepared.config;
  // Dev, when there is one, is what choices (λ, passes) are made on; the
  // test split is then scored only at the end.
  const bool on_dev = !prepared.dev.empty();
  if ((dev_only && !on_dev) || (!on_dev && prepared.test.empty())) {
    return scorer;
  }
  const std::vector<Sentence>* held_out =
      on_dev ? &prepared.dev_features() : &prepared.test;
  const bool raw = prepared.format.tag_scheme() == NONE;
  scorer.name =
      absl::StrCat(on_dev ? "dev_" : "test_", raw ? "accuracy" : "F1");
  const int threads = WorkerThreads(config);
  const FeatureExtractor* extractor = prepared.extractor.get();
  const ChainLayout layout = prepared.problem->layout();
  const WeightSpace space = prepared.space();
  const LabelSet* labels = &prepared.labels;
  const TagScheme train_scheme = config.model().train_scheme();
  const TagScheme input_scheme = prepared.format.tag_scheme();
  // Decoded as the saved model will decode (ChainModel::Tag).
  std::shared_ptr<const TransitionConstraints> constraints;
  if (config.model().constrained_decoding()) {
    constraints = std::make_shared<const TransitionConstraints>(labels->names(),
                                                                train_scheme);
  }
  // Over allowed transitions, the others as the saved model scores them.
  const std::vector<uint8_t> allowed = prepared.problem->allowed_transitions();
  std::shared_ptr<const TransitionLists> lists;
  if (!allowed.empty() && layout.num_pair_rows == 0) {
    lists = std::make_shared<const TransitionLists>(
        TransitionLists::FromMask(allowed.data(), layout.num_labels));
  }
  scorer.score = [=](const double* w) -> absl::StatusOr<double> {
    double accuracy = 0;
    WeightsView view = SolverWeightsView(layout, space, w);
    std::vector<double> tail;
    if (!allowed.empty()) {
      tail.assign(view.tail, view.tail + layout.tail_size());
      for (size_t k = 0; k < allowed.size(); ++k) {
        if (!allowed[k]) tail[k] = kForbiddenTransition;
      }
      view.tail = tail.data();
      view.lists = lists.get();
    }
    absl::StatusOr<double> f1 = ScoreTagger(
        [&](const Sentence& s, TagScratch* scratch,
            std::vector<std::string>* tags) {
          absl::Status status =
              PredictWithWeights(*extractor, view, s, scratch, &scratch->labels,
                                 constraints.get());
          if (!status.ok()) return status;
          *tags = LabelsToTags(*labels, train_scheme, input_scheme,
                               scratch->labels);
          return absl::OkStatus();
        },
        *held_out, raw, threads, nullptr, &accuracy);
    if (!f1.ok()) return f1.status();
    return raw ? accuracy : *f1;
  };
  return scorer;
}

void ConllTask::DescribeModelInput(const PreparedCorpus& prepared,
                                   ModelFile* header) const {
  ConllFormat model_format = prepared.format;
  model_format.set_allow_missing_label(true);
  *header->mutable_input_format() = model_format;
  header->set_input_num_columns(prepared.num_columns);
  header->set_output_scheme(prepared.format.tag_scheme());
  if (prepared.first_stage != nullptr) {
    *header->mutable_first_stage() = prepared.first_stage->ToProto();
    header->set_document_word_attribute(
        prepared.config.stacking().word_attribute());
  }
}

absl::StatusOr<std::string> ConllTask::ScoreSavedModel(
    const PreparedCorpus& prepared, const ChainModel& model,
    const PipelineOptions& options, const ProgressLine& say,
    PipelineResult* result) const {
  const PipelineConfig& config = prepared.config;
  const bool retrained = config.corpus().retrain_on_train_and_dev();
  std::string scores;
  if (!retrained) {
    absl::StatusOr<std::string> dev = ScoreDev(prepared, model, say, result);
    if (!dev.ok()) return dev.status();
    scores = *dev;
  }
  if (prepared.test.empty()) return scores;
  std::vector<std::vector<std::string>> predictions;
  absl::StatusOr<double> f1 =
      EvaluateModel(model, prepared.test, WorkerThreads(config),
                    &result->test_report, &result->test_accuracy, &predictions);
  if (!f1.ok()) return f1.status();
  result->test_f1 = *f1;
  // A retraining run had a dev split, released for the final run.
  if (retrained || !prepared.dev.empty()) {
    say(absl::StrCat("test (", config.corpus().test(), ")",
                     retrained ? ", final model (train + dev)" : "", ":\n",
                     Headline(result->test_report)));
  }
  absl::StrAppend(&scores, retrained ? ", final model: test " : ", test ",
                  ScoreText(prepared, result->test_f1, result->test_accuracy));
  if (!config.predictions_path().empty()) {
    absl::Status written = WritePredictions(
        ResolvePath(options.output_dir, config.predictions_path()),
        prepared.test, predictions);
    if (!written.ok()) return written;
  }
  return scores;
}

absl::StatusOr<std::string> ConllTask::ScoreTrainOnlyModel(
    const PreparedCorpus& prepared, const ChainModel& model,
    const ProgressLine& say, PipelineResult* result) const {
  absl::StatusOr<std::string> scores = ScoreDev(prepared, model, say, result);
  if (!scores.ok() || prepared.test.empty()) return scores;
  double accuracy = 0;
  absl::StatusOr<double> f1 =
      EvaluateModel(model, prepared.test, WorkerThreads(prepared.config),
                    &result->train_only_test_report, &accuracy);
  if (!f1.ok()) return f1.status();
  result->train_only_test_f1 = *f1;
  say(absl::StrCat("test (", prepared.config.corpus().test(),
                   "), model trained on train only:\n",
                   Headline(result->train_only_test_report)));
  return absl::StrCat(*scores, ", test ", ScoreText(prepared, *f1, accuracy),
                      " (train only)");
}

absl::Status ConllTask::PrepareRetrainingProblem(PreparedCorpus* prepared) {
  if (prepared->problem == nullptr || prepared->rows == nullptr) {
    return absl::FailedPreconditionError(
        "the training problem is gone: the retraining problem was built");
  }
  // The dev sentences are featurised (their labels numbered already), and
  // scored.
  absl::Status made =
      MakeExamples(prepared->dev_features(), prepared, &prepared->dev_examples);
  if (!made.ok()) return made;
  prepared->dev = std::vector<Sentence>();
  prepared->stacked_dev = std::vector<Sentence>();
  // The final model carries the first stage trained on what it is.
  if (prepared->first_stage_with_dev != nullptr) {
    prepared->first_stage = std::move(prepared->first_stage_with_dev);
  }
  // The training examples back in bucket ids, in place (rows ascend with
  // buckets, so every position stays sorted), then the dev examples.
  std::vector<ChainExample> examples = prepared->problem->TakeExamples();
  const std::vector<uint32_t>& buckets = prepared->rows->buckets();
  for (ChainExample& example : examples) {
    for (uint32_t& id : example.features.buckets) id = buckets[id];
    if (prepared->pair_rows == nullptr) continue;
    const std::vector<uint32_t>& pair_buckets = prepared->pair_rows->buckets();
    for (uint32_t& id : example.pair_features.buckets) id = pair_buckets[id];
  }
  examples.reserve(examples.size() + prepared->dev_examples.size());
  for (ChainExample& example : prepared->dev_examples) {
    examples.push_back(std::move(example));
  }
  prepared->dev_examples = std::vector<ChainExample>();
  prepared->problem.reset();
  prepared->rows.reset();
  prepared->pair_rows.reset();
  // What was freed is small blocks in malloc's heap, which the next
  // solver's large (mmapped) vectors would never reuse.
  malloc_trim(0);
  absl::StatusOr<TrainingProblem> training = MakeTrainingProblem(
      prepared->config.model(), prepared->config.solver(), prepared->labels,
      prepared->extractor->num_buckets(), std::move(examples), nullptr,
      WorkerThreads(prepared->config));
  if (!training.ok()) return training.status();
  prepared->SetRetrainingProblem(*std::move(training));
  return absl::OkStatus();
}

}  // namespace chaintag
