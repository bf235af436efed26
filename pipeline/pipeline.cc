#include "pipeline/pipeline.h"

#include <malloc.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/file_io.h"
#include "base/parallel.h"
#include "corpora/conll_reader.h"
#include "corpora/conlleval.h"
#include "corpora/label_set.h"
#include "corpora/tag_scheme.h"
#include "features/feature_extractor.h"
#include "google/protobuf/text_format.h"
#include "models/chain_problem.h"
#include "models/transition_constraints.h"
#include "pipeline/ocr.h"
#include "solvers/duality_gap.h"
#include "solvers/monitor.h"
#include "solvers/registry.h"
#include "solvers/regularization_path.h"
#include "solvers/solver.h"

namespace chaintag {
namespace {

using TagFunction = std::function<absl::Status(const Sentence&, TagScratch*,
                                               std::vector<std::string>*)>;

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
  ConllevalOptions options;
  options.raw = raw;
  ConllevalScorer scorer(options);
  for (int i = 0; i < n; ++i) {
    if (!errors[i].ok()) return errors[i];
    scorer.AddSentence(sentences[i].tags, predictions[i]);
  }
  scorer.Finish();
  if (report != nullptr) *report = scorer.Report();
  if (accuracy != nullptr) *accuracy = scorer.accuracy();
  if (predictions_out != nullptr) *predictions_out = std::move(predictions);
  return scorer.f1();
}

absl::StatusOr<std::vector<Sentence>> ReadTrainingFile(
    const std::string& path, const ConllFormat& format, ConllFormat* resolved,
    int* num_columns) {
  absl::StatusOr<std::vector<Sentence>> sentences =
      ReadConllFile(path, format, resolved, num_columns);
  if (!sentences.ok()) return sentences.status();
  if (sentences->empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": no sentences to train on"));
  }
  for (const Sentence& sentence : *sentences) {
    if (!sentence.has_tags()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", sentence.first_line,
                       ": training data needs a label column"));
    }
  }
  return sentences;
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

}  // namespace

absl::StatusOr<PipelineConfig> ReadPipelineConfig(const std::string& path) {
  PipelineConfig config;
  absl::Status status = ReadTextProto(path, " the config", &config);
  if (!status.ok()) return status;
  return config;
}

absl::StatusOr<PipelineConfig> ReadUserPipelineConfig(const std::string& path) {
  absl::StatusOr<PipelineConfig> config =
      ReadPipelineConfig(ResolveUserPath(path));
  if (absl::IsNotFound(config.status()) && ResolveUserPath(path) != path) {
    config = ReadPipelineConfig(path);
  }
  return config;
}

std::string CorporaRootFromFlag(const std::string& flag) {
  return flag.empty() ? DefaultCorporaRoot() : ResolveUserPath(flag);
}

PipelineConfig ResolvePipelineConfig(const PipelineConfig& config) {
  PipelineConfig resolved = config;
  const std::string name = config.name().empty() ? "model" : config.name();
  if (!resolved.has_model_path()) {
    resolved.set_model_path(absl::StrCat(name, ".model"));
  }
  if (!resolved.has_log_path()) {
    resolved.set_log_path(absl::StrCat(name, ".log.jsonl"));
  }
  ModelConfig* model = resolved.mutable_model();
  if (resolved.corpus().has_ocr()) {
    // The OCR feature map and labels are fixed; record them as they ran.
    *resolved.mutable_features() = OcrFeatureConfig();
    model->set_train_scheme(NONE);
  } else if (model->train_scheme() == TAG_SCHEME_UNSPECIFIED) {
    model->set_train_scheme(resolved.corpus().format().tag_scheme());
  }
  return resolved;
}

absl::StatusOr<double> EvaluateModel(
    const ChainModel& model, const std::vector<Sentence>& sentences,
    int num_threads, std::string* report, double* accuracy,
    std::vector<std::vector<std::string>>* predictions) {
  return ScoreTagger(
      [&model](const Sentence& s, TagScratch* scratch,
               std::vector<std::string>* tags) {
        return model.Tag(s, scratch, tags);
      },
      sentences, model.header().output_scheme() == NONE, num_threads, report,
      accuracy, predictions);
}

namespace {

// The rows for the buckets that the examples' features use: w is zero on
// every other bucket, whatever the solver.
BucketRows UsedRows(const std::vector<ChainExample>& examples,
                    uint64_t num_buckets) {
  std::vector<const FeatureSequence*> sequences;
  sequences.reserve(examples.size());
  for (const ChainExample& example : examples) {
    sequences.push_back(&example.features);
  }
  return BucketRows::FromFeatures(sequences, num_buckets);
}

// The problem over `rows` of examples whose features hold bucket ids.
absl::Status MakeRowProblem(int num_labels, bool normalize_loss,
                            const BucketRows& rows,
                            std::vector<ChainExample> examples,
                            std::unique_ptr<ChainProblem>* problem) {
  for (ChainExample& example : examples) {
    rows.Remap(&example.features);
    example.features.Compact();
  }
  const ChainLayout layout{num_labels, rows.size()};
  absl::Status valid = ChainProblem::Validate(layout, examples);
  if (!valid.ok()) return valid;
  *problem = std::make_unique<ChainProblem>(layout, std::move(examples),
                                            normalize_loss);
  return absl::OkStatus();
}

// The OCR words of the config's folds as a training problem and a test
// problem (pipeline/ocr.h).
absl::Status PrepareOcrCorpus(const PipelineOptions& options,
                              PreparedCorpus* prepared) {
  absl::StatusOr<OcrSplit> split =
      ReadOcrSplit(prepared->config.corpus(), options.corpora_root);
  if (!split.ok()) return split.status();
  prepared->labels = std::move(split->labels);
  prepared->ocr_path = split->path;
  prepared->ocr_train_letters = split->train_letters;
  prepared->ocr_test_letters = split->test_letters;
  prepared->format.set_tag_scheme(NONE);
  const bool normalize = prepared->config.model().normalize_loss();
  prepared->rows = std::make_unique<BucketRows>(
      BucketRows::Identity(split->layout.num_rows));
  prepared->problem = std::make_unique<ChainProblem>(
      split->layout, std::move(split->train), normalize);
  prepared->ocr_test = std::make_unique<ChainProblem>(
      split->layout, std::move(split->test), normalize);
  prepared->ocr_dev_letters = split->dev_letters;
  prepared->ocr_dev = std::make_unique<ChainProblem>(
      split->layout, std::move(split->dev), normalize);
  return absl::OkStatus();
}

// CoNLL column files: read, label, extract hashed features.
absl::Status PrepareConllCorpus(const PipelineOptions& options,
                                PreparedCorpus* out) {
  PreparedCorpus& prepared = *out;
  const CorpusConfig& corpus = prepared.config.corpus();
  if (corpus.train().empty()) {
    return absl::InvalidArgumentError("config: corpus.train is not set");
  }
  const int threads = std::max(1, prepared.config.solver().num_threads());

  absl::StatusOr<std::vector<Sentence>> train = ReadTrainingFile(
      ResolvePath(options.corpora_root, corpus.train()), corpus.format(),
      &prepared.format, &prepared.num_columns);
  if (!train.ok()) return train.status();
  prepared.train = std::move(*train);
  if (corpus.max_train_sentences() > 0 &&
      static_cast<int>(prepared.train.size()) > corpus.max_train_sentences()) {
    prepared.train.resize(corpus.max_train_sentences());
  }
  if (corpus.dev_fraction() != 0) {
    if (!(corpus.dev_fraction() > 0 && corpus.dev_fraction() < 1)) {
      return absl::InvalidArgumentError(
          absl::StrCat("config: corpus.dev_fraction must be in (0, 1), got ",
                       corpus.dev_fraction()));
    }
    if (!corpus.dev().empty()) {
      return absl::InvalidArgumentError(
          "config: corpus.dev and corpus.dev_fraction are exclusive");
    }
    // The last sentences, as the protocol asks: no shuffling, so
    // the split is the same on every machine.
    const size_t held_out = static_cast<size_t>(
        std::ceil(corpus.dev_fraction() * prepared.train.size()));
    if (held_out == 0 || held_out >= prepared.train.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("config: corpus.dev_fraction ", corpus.dev_fraction(),
                       " of ", prepared.train.size(),
                       " training sentences leaves no dev or no "
                       "training sentences"));
    }
    const size_t keep = prepared.train.size() - held_out;
    prepared.dev.assign(std::make_move_iterator(prepared.train.begin() + keep),
                        std::make_move_iterator(prepared.train.end()));
    prepared.train.resize(keep);
  }
  // Held-out splits: the training file's layout, gold tags required.
  ConllFormat held_out_format = prepared.format;
  held_out_format.set_allow_missing_label(false);
  for (const auto& [path, split] :
       {std::pair<const std::string*, std::vector<Sentence>*>{&corpus.dev(),
                                                              &prepared.dev},
        {&corpus.test(), &prepared.test}}) {
    if (path->empty()) continue;
    absl::StatusOr<std::vector<Sentence>> read = ReadConllFile(
        ResolvePath(options.corpora_root, *path), held_out_format);
    if (!read.ok()) return read.status();
    *split = std::move(*read);
  }

  const bool retrain = corpus.retrain_on_train_and_dev();
  if (retrain && prepared.dev.empty()) {
    return absl::InvalidArgumentError(
        "config: corpus.retrain_on_train_and_dev needs a dev split "
        "(corpus.dev or corpus.dev_fraction)");
  }
  absl::StatusOr<FeatureExtractor> extractor =
      FeatureExtractor::Create(prepared.config.features());
  if (!extractor.ok()) return extractor.status();
  prepared.extractor =
      std::make_unique<FeatureExtractor>(std::move(*extractor));

  // Labels in the training scheme, in order of first appearance (train
  // first, then dev when it is trained on too), and features.
  const TagScheme input_scheme = prepared.format.tag_scheme();
  const TagScheme train_scheme = prepared.config.model().train_scheme();
  auto make_examples = [&](const std::vector<Sentence>& sentences,
                           std::vector<ChainExample>* examples) {
    examples->resize(sentences.size());
    for (size_t i = 0; i < sentences.size(); ++i) {
      const std::vector<std::string> tags =
          input_scheme == train_scheme
              ? sentences[i].tags
              : ConvertTags(sentences[i].tags, input_scheme, train_scheme);
      for (const std::string& tag : tags) {
        (*examples)[i].labels.push_back(prepared.labels.Add(tag));
      }
    }
    std::vector<absl::Status> errors(sentences.size());
    ParallelFor(static_cast<int>(sentences.size()), threads,
                [&](int begin, int end) {
                  for (int i = begin; i < end; ++i) {
                    errors[i] = prepared.extractor->Extract(
                        sentences[i], &(*examples)[i].features);
                  }
                });
    for (size_t i = 0; i < errors.size(); ++i) {
      if (!errors[i].ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(sentences[i].source, ":", sentences[i].first_line,
                         ": ", errors[i].message()));
      }
    }
    return absl::OkStatus();
  };
  const std::vector<Sentence>& sentences = prepared.train;
  std::vector<ChainExample> examples;
  absl::Status made = make_examples(sentences, &examples);
  if (!made.ok()) return made;
  std::vector<ChainExample> dev_examples;
  if (retrain) {
    made = make_examples(prepared.dev, &dev_examples);
    if (!made.ok()) return made;
  }
  absl::StatusOr<FeatureStats> stats =
      ComputeFeatureStats(*prepared.extractor, sentences);
  if (!stats.ok()) return stats.status();
  prepared.feature_stats = *stats;
  prepared.rows = std::make_unique<BucketRows>(
      UsedRows(examples, prepared.extractor->num_buckets()));
  // The train + dev problem is built when the final run needs it, once the
  // train-only run has released its memory (PrepareRetrainingProblem).
  if (retrain) {
    for (ChainExample& example : dev_examples) example.features.Compact();
    prepared.dev_examples = std::move(dev_examples);
  }
  return MakeRowProblem(prepared.labels.size(),
                        prepared.config.model().normalize_loss(),
                        *prepared.rows, std::move(examples), &prepared.problem);
}

}  // namespace

absl::StatusOr<PreparedCorpus> PrepareCorpus(const PipelineConfig& config,
                                             const PipelineOptions& options) {
  PreparedCorpus prepared;
  prepared.config = ResolvePipelineConfig(config);
  if (prepared.config.corpus().has_ocr() &&
      prepared.config.corpus().retrain_on_train_and_dev()) {
    return absl::InvalidArgumentError(
        "config: corpus.retrain_on_train_and_dev is for CoNLL corpora, not "
        "OCR");
  }
  absl::Status status = prepared.config.corpus().has_ocr()
                            ? PrepareOcrCorpus(options, &prepared)
                            : PrepareConllCorpus(options, &prepared);
  if (!status.ok()) return status;
  return prepared;
}

absl::Status PrepareRetrainingProblem(PreparedCorpus* prepared) {
  if (prepared->problem == nullptr || prepared->rows == nullptr) {
    return absl::FailedPreconditionError(
        "the training problem is gone: the retraining problem was built");
  }
  // The training examples back in bucket ids, in place (rows ascend with
  // buckets, so every position stays sorted), then the dev examples.
  const int num_labels = prepared->problem->layout().num_labels;
  std::vector<ChainExample> examples = prepared->problem->TakeExamples();
  const std::vector<uint32_t>& buckets = prepared->rows->buckets();
  for (ChainExample& example : examples) {
    for (uint32_t& id : example.features.buckets) id = buckets[id];
  }
  examples.reserve(examples.size() + prepared->dev_examples.size());
  for (ChainExample& example : prepared->dev_examples) {
    examples.push_back(std::move(example));
  }
  prepared->dev_examples = std::vector<ChainExample>();
  prepared->problem.reset();
  prepared->rows.reset();
  // What was freed is small blocks in malloc's heap, which the next
  // solver's large (mmapped) vectors would never reuse.
  malloc_trim(0);
  prepared->rows_with_dev = std::make_unique<BucketRows>(
      UsedRows(examples, prepared->extractor->num_buckets()));
  return MakeRowProblem(num_labels, prepared->config.model().normalize_loss(),
                        *prepared->rows_with_dev, std::move(examples),
                        &prepared->problem_with_dev);
}

HeldOutScorer MakeHeldOutScorer(const PreparedCorpus& prepared, bool dev_only) {
  HeldOutScorer scorer;
  const PipelineConfig& config = prepared.config;
  const int threads = std::max(1, config.solver().num_threads());
  if (config.corpus().has_ocr()) {
    const bool on_dev =
        prepared.ocr_dev != nullptr && prepared.ocr_dev->NumExamples() > 0;
    const ChainProblem* held_out =
        on_dev ? prepared.ocr_dev.get() : prepared.ocr_test.get();
    if ((dev_only && !on_dev) || held_out == nullptr ||
        held_out->NumExamples() == 0) {
      return scorer;
    }
    scorer.name = on_dev ? "dev_letter_error" : "test_letter_error";
    scorer.lower_is_better = true;
    scorer.score = [held_out,
                    threads](const double* w) -> absl::StatusOr<double> {
      return LetterErrorPercent(*held_out, w, threads);
    };
    return scorer;
  }
  // Dev, when there is one, is what choices (λ, passes) are made on; the
  // test split is then scored only at the end.
  const bool on_dev = !prepared.dev.empty();
  if ((dev_only && !on_dev) || (!on_dev && prepared.test.empty())) {
    return scorer;
  }
  const std::vector<Sentence>* held_out =
      on_dev ? &prepared.dev : &prepared.test;
  const bool raw = prepared.format.tag_scheme() == NONE;
  scorer.name =
      absl::StrCat(on_dev ? "dev_" : "test_", raw ? "accuracy" : "F1");
  const FeatureExtractor* extractor = prepared.extractor.get();
  const ChainLayout layout = prepared.problem->layout();
  const BucketRows* rows = prepared.rows.get();
  const LabelSet* labels = &prepared.labels;
  const TagScheme train_scheme = config.model().train_scheme();
  const TagScheme input_scheme = prepared.format.tag_scheme();
  // Decoded as the saved model will decode (ChainModel::Tag).
  std::shared_ptr<const TransitionConstraints> constraints;
  if (config.model().constrained_decoding()) {
    constraints = std::make_shared<const TransitionConstraints>(labels->names(),
                                                                train_scheme);
  }
  scorer.score = [=](const double* w) -> absl::StatusOr<double> {
    double accuracy = 0;
    absl::StatusOr<double> f1 = ScoreTagger(
        [&](const Sentence& s, TagScratch* scratch,
            std::vector<std::string>* tags) {
          absl::Status status = PredictWithWeights(
              *extractor, SolverWeightsView(layout, *rows, w), s, scratch,
              &scratch->labels, constraints.get());
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

namespace {

absl::Status CheckLambdaSelection(const PipelineConfig& config) {
  if (config.lambda().empty() || config.lambda() == "path") {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("config: lambda must be empty or \"path\", got \"",
                   config.lambda(), "\" (a fixed λ goes in solver.lambda)"));
}

// `lambda: "path"`: the regularization path scored on dev; the best
// breakpoint's λ goes into `solver_config` and its weights into `weights`.
absl::StatusOr<TrainingSummary> TrainOnPath(
    const ChainProblem& problem, const PreparedCorpus& prepared,
    const std::function<void(const std::string&)>& say,
    SolverConfig* solver_config, std::vector<double>* weights,
    LambdaPath* path) {
  const HeldOutScorer scorer = MakeHeldOutScorer(prepared, true);
  say(absl::StrFormat(
      "training: regularization path (%s, epsilon %g), solver %s, "
      "choosing lambda on %s",
      RegularizationPathConfig::Mode_Name(solver_config->path().mode()),
      solver_config->path().epsilon(), solver_config->name(),
      scorer.score ? scorer.name : "(no dev split)"));
  absl::StatusOr<LambdaPath> chosen =
      ChooseLambdaOnPath(problem, *solver_config, scorer, say);
  if (!chosen.ok()) return chosen.status();
  *path = *std::move(chosen);
  say(FormatPathTable(*path));
  const PathPoint& best = path->points[path->best];
  const PathPoint& last = path->points.back();
  solver_config->set_lambda(best.lambda);
  *weights = std::move(path->best_weights);
  path->best_weights.clear();
  TrainingSummary summary;
  summary.set_solver(absl::StrCat(solver_config->name(), " (path)"));
  summary.set_lambda(best.lambda);
  summary.set_num_examples(problem.NumExamples());
  summary.set_dim(problem.Dim());
  summary.set_passes(static_cast<int>(std::ceil(last.cumulative_passes)));
  summary.set_oracle_calls(static_cast<int64_t>(
      std::llround(last.cumulative_passes * problem.NumExamples())));
  summary.set_seconds(last.seconds);
  summary.set_stop_reason(absl::StrFormat(
      "regularization path: %d breakpoints, chosen J = %d by %s %.2f",
      static_cast<int>(path->points.size()), best.index, path->score_name,
      path->scores[path->best]));
  if (best.gap_exact) {
    summary.set_gap(best.gap);
    const double norm = SquaredNorm(weights->data(), problem.Dim());
    summary.set_dual(best.ell - 0.5 * best.lambda * norm);
    summary.set_primal(summary.dual() + best.gap);
  }
  return summary;
}

// The corpus and feature lines of the progress stream, and the example
// counts of the result.
void ReportCorpus(const PreparedCorpus& prepared,
                  const std::function<void(const std::string&)>& say,
                  PipelineResult* result) {
  const ChainLayout& layout = prepared.problem->layout();
  const LabelSet& labels = prepared.labels;
  result->num_train_sentences = prepared.problem->NumExamples();
  if (prepared.config.corpus().has_ocr()) {
    result->num_test_sentences = prepared.ocr_test->NumExamples();
    say(absl::StrFormat(
        "corpus: OCR %s, %d training words (%d letters), %d test words (%d "
        "letters), %d labels",
        prepared.ocr_path, result->num_train_sentences,
        prepared.ocr_train_letters, result->num_test_sentences,
        prepared.ocr_test_letters, labels.size()));
    say(absl::StrFormat("features: %d pixels + constant per letter, dim %d",
                        layout.num_rows - 1, layout.dim()));
    return;
  }
  const FeatureStats& stats = prepared.feature_stats;
  result->num_dev_sentences = static_cast<int>(prepared.dev.size());
  result->num_test_sentences = static_cast<int>(prepared.test.size());
  say(absl::StrFormat(
      "corpus: %d training sentences, %s%d test sentences, %d labels (%s; "
      "input and output in %s)",
      result->num_train_sentences,
      prepared.dev.empty()
          ? ""
          : absl::StrFormat("%d dev sentences, ", result->num_dev_sentences),
      result->num_test_sentences, labels.size(),
      TagSchemeName(prepared.config.model().train_scheme()),
      TagSchemeName(prepared.format.tag_scheme())));
  say(absl::StrFormat(
      "features: %d distinct attributes in %d buckets (%d used), collision "
      "rate %.2f%%, dim %d",
      stats.distinct_attributes, prepared.extractor->num_buckets(),
      stats.distinct_buckets, 100 * stats.collision_rate, layout.dim()));
}

// The model file of `weights` (over `rows`). An OCR model has the same file
// format: its feature config (129 buckets, no templates, no hashed bias) and
// resolved_config (with corpus.ocr) say that its input is pixels, and it has
// no input_format.
absl::StatusOr<ChainModel> MakeModel(const PreparedCorpus& prepared,
                                     const SolverConfig& solver_config,
                                     const std::vector<double>& weights,
                                     const BucketRows& rows,
                                     const TrainingSummary& training) {
  const PipelineConfig& config = prepared.config;
  ModelFile header;
  for (const std::string& name : prepared.labels.names()) {
    header.add_labels(name);
  }
  *header.mutable_features() = config.features();
  if (!config.corpus().has_ocr()) {
    ConllFormat model_format = prepared.format;
    model_format.set_allow_missing_label(true);
    *header.mutable_input_format() = model_format;
    header.set_input_num_columns(prepared.num_columns);
  }
  header.set_train_scheme(config.model().train_scheme());
  header.set_output_scheme(prepared.format.tag_scheme());
  header.set_normalize_loss(config.model().normalize_loss());
  header.set_weight_precision(config.model().weight_precision());
  // Set only when true: a plain model's file stays as it was.
  if (config.model().constrained_decoding()) {
    header.set_constrained_decoding(true);
  }
  *header.mutable_solver() = solver_config;
  *header.mutable_training() = training;
  google::protobuf::TextFormat::PrintToString(config,
                                              header.mutable_resolved_config());
  return ChainModel::Create(std::move(header), rows, weights);
}

// Letter errors of the saved (rounded) model on the training and test
// words; returns the `done:` line's scores.
std::string ScoreOcrModel(const PreparedCorpus& prepared,
                          const ChainModel& model, int threads,
                          PipelineResult* result) {
  const std::vector<double> saved_weights = model.DenseWeights(*prepared.rows);
  const double* w = saved_weights.data();
  result->train_letter_error =
      LetterErrorPercent(*prepared.problem, w, threads);
  const LetterErrors test_errors =
      ComputeLetterErrors(*prepared.ocr_test, w, threads);
  result->test_letter_error = test_errors.letter_percent;
  result->test_word_averaged_letter_error = test_errors.word_averaged_percent;
  result->test_report = absl::StrFormat(
      "letter error: train %.2f%% (%d words, %d letters), test %.2f%% (%d "
      "words, %d letters)\n"
      "test error averaged per word (as the BCFW reference code reports "
      "it): %.2f%%\n",
      result->train_letter_error, result->num_train_sentences,
      prepared.ocr_train_letters, result->test_letter_error,
      result->num_test_sentences, prepared.ocr_test_letters,
      test_errors.word_averaged_percent);
  return absl::StrFormat(", train letter error %.2f%%, test %.2f%%",
                         result->train_letter_error, result->test_letter_error);
}

// corpus.retrain_on_train_and_dev: trains again, with the same solver
// settings, on train + dev (built from the train-only problem, which is
// released, as are the dev sentences), and returns that model for the
// caller to save.
absl::StatusOr<ChainModel> TrainFinalModel(
    PreparedCorpus* prepared, const SolverConfig& solver_config,
    std::FILE* progress, const std::function<void(const std::string&)>& say,
    PipelineResult* result) {
  prepared->dev = std::vector<Sentence>();
  absl::Status made = PrepareRetrainingProblem(prepared);
  if (!made.ok()) return made;
  const ChainProblem& with_dev = *prepared->problem_with_dev;
  say(absl::StrFormat(
      "final model: training again on train + dev (%d sentences), "
      "lambda %g, up to %d passes",
      with_dev.NumExamples(), solver_config.lambda(),
      solver_config.max_passes()));
  absl::StatusOr<std::unique_ptr<Solver>> solver = CreateSolver(solver_config);
  if (!solver.ok()) return solver.status();
  Monitor monitor;
  monitor.set_progress_stream(progress);
  result->final_log_path = absl::StrCat(result->log_path, ".train_and_dev");
  absl::Status log = monitor.OpenLog(result->final_log_path);
  if (!log.ok()) return log;
  std::vector<double> weights;
  absl::StatusOr<TrainingSummary> summary =
      (*solver)->Solve(with_dev, &monitor, &weights);
  if (!summary.ok()) return summary.status();
  solver->reset();
  result->train_only_summary = result->summary;
  result->summary = *summary;
  return MakeModel(*prepared, solver_config, weights, *prepared->rows_with_dev,
                   *summary);
}

// Scores the train-only model on dev (and on test, with retraining), trains
// and saves the final model on train + dev when asked, scores it on test and
// writes the predictions; returns the `done:` line's scores.
absl::StatusOr<std::string> ScoreConllModels(
    PreparedCorpus* prepared, const SolverConfig& solver_config,
    const PipelineOptions& options,
    const std::function<void(const std::string&)>& say,
    absl::StatusOr<ChainModel>* model, PipelineResult* result_out) {
  const PipelineConfig& config = prepared->config;
  const std::vector<Sentence>& dev = prepared->dev;
  const bool has_dev = !dev.empty();  // released before retraining
  const std::vector<Sentence>& test = prepared->test;
  const bool raw = prepared->format.tag_scheme() == NONE;
  const bool retrain = config.corpus().retrain_on_train_and_dev();
  const int threads = std::max(1, config.solver().num_threads());
  PipelineResult& result = *result_out;
  std::string scores;
  // Each split's conlleval header, for the progress stream (the test
  // report is the caller's to print).
  auto headline = [](const std::string& report) {
    const size_t first = report.find('\n');
    const size_t second = first == std::string::npos
                              ? std::string::npos
                              : report.find('\n', first + 1);
    return report.substr(0, second);
  };
  auto score_name = [raw](double f1, double accuracy) {
    return raw ? absl::StrFormat("accuracy %.2f%%", accuracy)
               : absl::StrFormat("F1 %.2f", f1);
  };
  if (!dev.empty()) {
    absl::StatusOr<double> f1 = EvaluateModel(
        **model, dev, threads, &result.dev_report, &result.dev_accuracy);
    if (!f1.ok()) return f1.status();
    result.dev_f1 = *f1;
    say(absl::StrCat("dev (", config.corpus().dev(), "):\n",
                     headline(result.dev_report)));
    scores =
        absl::StrCat(", dev ", score_name(result.dev_f1, result.dev_accuracy));
  }
  if (retrain) {
    if (!test.empty()) {
      double accuracy = 0;
      absl::StatusOr<double> f1 = EvaluateModel(
          **model, test, threads, &result.train_only_test_report, &accuracy);
      if (!f1.ok()) return f1.status();
      result.train_only_test_f1 = *f1;
      say(absl::StrCat("test (", config.corpus().test(),
                       "), model trained on train only:\n",
                       headline(result.train_only_test_report)));
      absl::StrAppend(&scores, ", test ", score_name(*f1, accuracy),
                      " (train only)");
    }
    // The train-only model is saved and scored: its weights (as large as
    // the solver's) are released before the final run needs the memory.
    *model = absl::UnavailableError("the train-only model was released");
    *model = TrainFinalModel(prepared, solver_config, options.progress, say,
                             &result);
    if (!model->ok()) return model->status();
    absl::Status saved = (**model).Save(result.model_path);
    if (!saved.ok()) return saved;
  }
  if (!test.empty()) {
    std::vector<std::vector<std::string>> predictions;
    absl::StatusOr<double> f1 =
        EvaluateModel(**model, test, threads, &result.test_report,
                      &result.test_accuracy, &predictions);
    if (!f1.ok()) return f1.status();
    result.test_f1 = *f1;
    if (has_dev) {
      say(absl::StrCat("test (", config.corpus().test(), ")",
                       retrain ? ", final model (train + dev)" : "", ":\n",
                       headline(result.test_report)));
    }
    absl::StrAppend(&scores, retrain ? ", final model: test " : ", test ",
                    score_name(result.test_f1, result.test_accuracy));
    if (!config.predictions_path().empty()) {
      absl::Status written = WritePredictions(
          ResolvePath(options.output_dir, config.predictions_path()), test,
          predictions);
      if (!written.ok()) return written;
    }
  }
  return scores;
}

// Trains on the training problem, at the configured λ or along the path
// (`lambda: "path"`, which settles solver_config's λ); the pass records, or
// the path's JSON, go to the log. `solver` is released once it has run.
absl::Status TrainOnTrainingSplit(
    PreparedCorpus* prepared, const PipelineOptions& options,
    const std::function<void(const std::string&)>& say,
    std::unique_ptr<Solver> solver, SolverConfig* solver_config,
    std::vector<double>* weights, PipelineResult* result) {
  PipelineConfig& config = prepared->config;
  const ChainProblem& problem = *prepared->problem;
  Monitor monitor;
  monitor.set_progress_stream(options.progress);
  result->log_path = ResolvePath(options.output_dir, config.log_path());
  const bool on_path = config.lambda() == "path";
  // A path run's log is the path's JSON, written once it is known; both
  // are opened now, so that an unwritable path fails before training.
  std::ofstream path_log;
  if (on_path) {
    path_log.open(result->log_path, std::ios::trunc);
    if (!path_log) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot write the path log ", result->log_path));
    }
  } else {
    absl::Status log = monitor.OpenLog(result->log_path);
    if (!log.ok()) return log;
  }
  const int eval_every =
      config.eval_every() > 0 ? config.eval_every() : 1 << 30;
  const HeldOutScorer scorer = MakeHeldOutScorer(*prepared, false);
  if (scorer.score) {
    monitor.SetEvaluator(scorer.name, eval_every,
                         [&scorer](absl::Span<const double> w) {
                           return scorer.score(w.data());
                         });
  }
  absl::StatusOr<TrainingSummary> summary;
  if (on_path) {
    absl::StatusOr<TrainingSummary> chosen = TrainOnPath(
        problem, *prepared, say, solver_config, weights, &result->path);
    if (!chosen.ok()) return chosen.status();
    summary = *chosen;
    *config.mutable_solver() = *solver_config;
    // The log holds the path's breakpoints instead of pass records. A
    // failed write is reported, but the model is still saved below.
    absl::StatusOr<std::string> json = RecordToJson(PathRecord(result->path));
    path_log << (json.ok() ? *json : "");
    path_log.close();
    if (!json.ok() || !path_log) {
      say(absl::StrCat("warning: cannot write the path log ",
                       result->log_path));
    }
  } else {
    summary = solver->Solve(problem, &monitor, weights);
    // Nothing of the solver is read after its run; a retraining run should
    // not share the memory with whatever state it keeps.
    solver.reset();
  }
  if (!summary.ok()) return summary.status();
  result->summary = *summary;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<PipelineResult> RunPipeline(const PipelineConfig& input_config,
                                           const PipelineOptions& options) {
  // Checked before the corpus is read: a typo should not cost a minute.
  absl::Status lambda = CheckLambdaSelection(input_config);
  if (!lambda.ok()) return lambda;
  const absl::Time start = absl::Now();
  absl::StatusOr<PreparedCorpus> prepared =
      PrepareCorpus(input_config, options);
  if (!prepared.ok()) return prepared.status();
  return RunPreparedPipeline(&*prepared, options, start);
}

absl::StatusOr<PipelineResult> RunPreparedPipeline(
    PreparedCorpus* prepared, const PipelineOptions& options,
    absl::Time start) {
  std::FILE* progress = options.progress;
  auto say = [progress](const std::string& text) {
    if (progress != nullptr) {
      std::fprintf(progress, "%s\n", text.c_str());
      std::fflush(progress);
    }
  };
  PipelineConfig& config = prepared->config;
  absl::Status lambda = CheckLambdaSelection(config);
  if (!lambda.ok()) return lambda;
  const bool ocr = config.corpus().has_ocr();
  const ChainProblem& problem = *prepared->problem;
  const ChainLayout& layout = problem.layout();
  const int threads = std::max(1, config.solver().num_threads());

  // The training sentences are featurised: their text is not read again,
  // and it is as large as the features.
  prepared->train = std::vector<Sentence>();
  // Their many small blocks sit in malloc's heap, which the solver's large
  // (mmapped) vectors never reuse: hand the freed pages back.
  malloc_trim(0);

  PipelineResult result;
  result.feature_stats = prepared->feature_stats;
  ReportCorpus(*prepared, say, &result);

  // Solver.
  SolverConfig solver_config = config.solver();
  solver_config.set_lambda(ResolveLambda(solver_config, problem.NumExamples()));
  if (config.model().nonnegative_transitions()) {
    SolverConfig::Box* box = solver_config.add_box();
    box->set_begin(layout.transition_offset());
    box->set_end(layout.start_offset());
    box->set_lower(0);
  }
  *config.mutable_solver() = solver_config;
  absl::StatusOr<std::unique_ptr<Solver>> solver = CreateSolver(solver_config);
  if (!solver.ok()) return solver.status();
  // A path run announces itself in TrainOnPath: its λ is not this one.
  if (config.lambda() != "path") {
    say(absl::StrFormat("training: solver %s, lambda %g, up to %d passes",
                        solver_config.name(), solver_config.lambda(),
                        solver_config.max_passes()));
  }

  std::vector<double> weights;
  absl::Status trained =
      TrainOnTrainingSplit(prepared, options, say, std::move(*solver),
                           &solver_config, &weights, &result);
  if (!trained.ok()) return trained;

  absl::StatusOr<ChainModel> model = MakeModel(
      *prepared, solver_config, weights, *prepared->rows, result.summary);
  // The model holds its own copy; the solver's vector is not read again.
  weights = std::vector<double>();
  if (!model.ok()) return model.status();
  result.model_path = ResolvePath(options.output_dir, config.model_path());
  // With retraining, the model trained on train alone is kept beside the
  // final one: it is the one the dev figures describe.
  const bool retrain = config.corpus().retrain_on_train_and_dev();
  if (retrain) {
    result.train_only_model_path =
        absl::StrCat(result.model_path, ".train_only");
  }
  absl::Status saved =
      model->Save(retrain ? result.train_only_model_path : result.model_path);
  if (!saved.ok()) return saved;

  // The final scores come from the model's own weights (for CoNLL through
  // the tagging path `tag` runs), not from the solver's vector.
  std::string scores;
  if (ocr) {
    scores = ScoreOcrModel(*prepared, *model, threads, &result);
  } else {
    absl::StatusOr<std::string> conll_scores = ScoreConllModels(
        prepared, solver_config, options, say, &model, &result);
    if (!conll_scores.ok()) return conll_scores.status();
    scores = *conll_scores;
  }
  // Solvers without a dual (ssg) certify nothing: say so rather than print
  // a zero gap.
  const std::string certificate =
      result.summary.has_gap()
          ? absl::StrFormat("primal %.6g, dual %.6g, gap %.3e",
                            result.summary.primal(), result.summary.dual(),
                            result.summary.gap())
          : absl::StrFormat("primal %.6g, no duality gap (%s keeps no dual)",
                            result.summary.primal(), result.summary.solver());
  say(absl::StrFormat("done: %d passes, %s (%s), %.1fs training, %.1fs total%s",
                      result.summary.passes(), certificate,
                      result.summary.stop_reason(), result.summary.seconds(),
                      absl::ToDoubleSeconds(absl::Now() - start), scores));
  return result;
}

}  // namespace chaintag
