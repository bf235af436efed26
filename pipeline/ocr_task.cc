#include "pipeline/ocr_task.h"

#include <iterator>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/types/span.h"
#include "pipeline/ocr.h"
#include "solvers/problem.h"

namespace chaintag {

void OcrTask::ResolveConfig(PipelineConfig* config) const {
  // The OCR feature map and labels are fixed; record them as they ran.
  *config->mutable_features() = OcrFeatureConfig();
  config->mutable_model()->set_train_scheme(NONE);
}

absl::Status OcrTask::Prepare(const PipelineOptions& options,
                              PreparedCorpus* prepared) {
  if (prepared->config.corpus().retrain_on_train_and_dev() &&
      prepared->config.corpus().dev_folds_size() == 0) {
    return absl::InvalidArgumentError(
        "config: corpus.retrain_on_train_and_dev needs corpus.dev_folds");
  }
  absl::StatusOr<OcrSplit> split =
      ReadOcrSplit(prepared->config.corpus(), options.corpora_root);
  if (!split.ok()) return split.status();
  prepared->labels = std::move(split->labels);
  path_ = split->path;
  train_letters_ = split->train_letters;
  test_letters_ = split->test_letters;
  dev_letters_ = split->dev_letters;
  const ModelConfig& model = prepared->config.model();
  const BucketRows pixels = BucketRows::Identity(split->layout.num_rows);
  absl::StatusOr<TrainingProblem> training = MakeTrainingProblem(
      model, prepared->config.solver(), prepared->labels, pixels.num_buckets(),
      std::move(split->train), &pixels, WorkerThreads(prepared->config));
  if (!training.ok()) return training.status();
  prepared->SetTrainingProblem(*std::move(training));
  // The held-out words are scored in the training problem's space.
  const ChainLayout& layout = prepared->problem->layout();
  test_ = std::make_unique<ChainProblem>(layout, std::move(split->test),
                                         model.normalize_loss(),
                                         prepared->structure);
  dev_ = std::make_unique<ChainProblem>(layout, std::move(split->dev),
                                        model.normalize_loss(),
                                        prepared->structure);
  return absl::OkStatus();
}

void OcrTask::ReportCorpus(const PreparedCorpus& prepared,
                           const ProgressLine& say,
                           PipelineResult* result) const {
  const ChainLayout& layout = prepared.problem->layout();
  result->num_test_sentences = test_->NumExamples();
  say(absl::StrFormat(
      "corpus: OCR %s, %d training words (%d letters), %d test words (%d "
      "letters), %d labels",
      path_, result->num_train_sentences, train_letters_,
      result->num_test_sentences, test_letters_, prepared.labels.size()));
  say(absl::StrFormat("features: %d pixels + constant per letter, dim %d",
                      layout.num_rows - 1, layout.dim()));
}

HeldOutScorer OcrTask::MakeHeldOutScorer(const PreparedCorpus& prepared,
                                         bool dev_only) const {
  HeldOutScorer scorer;
  const int threads = WorkerThreads(prepared.config);
  const bool on_dev = dev_ != nullptr && dev_->NumExamples() > 0;
  const ChainProblem* held_out = on_dev ? dev_.get() : test_.get();
  if ((dev_only && !on_dev) || held_out == nullptr ||
      held_out->NumExamples() == 0) {
    return scorer;
  }
  scorer.name = on_dev ? "dev_letter_error" : "test_letter_error";
  scorer.lower_is_better = true;
  const ChainProblem* trained = prepared.problem.get();
  scorer.score = [held_out, trained,
                  threads](const double* w) -> absl::StatusOr<double> {
    if (trained->free_emissions().rows == nullptr) {
      return LetterErrorPercent(*held_out, w, threads);
    }
    // A restricted problem's w (model.states OBSERVED_STATES) holds the
    // free coordinates; the letters are scored in all of w.
    absl::StatusOr<std::vector<double>> all = trained->WeightsInLayout(
        absl::MakeConstSpan(w, trained->num_free_coordinates()));
    if (!all.ok()) return all.status();
    return LetterErrorPercent(*held_out, all->data(), threads);
  };
  return scorer;
}

void OcrTask::DescribeModelInput(const PreparedCorpus& /*prepared*/,
                                 ModelFile* header) const {
  // Pixels have no input format; letters have no chunks.
  header->set_output_scheme(NONE);
}

absl::StatusOr<std::string> OcrTask::ScoreSavedModel(
    const PreparedCorpus& prepared, const ChainModel& model,
    const PipelineOptions& /*options*/, const ProgressLine& /*say*/,
    PipelineResult* result) const {
  const int threads = WorkerThreads(prepared.config);
  const std::vector<double> saved_weights =
      model.DenseWeights(prepared.current_space());
  const double* w = saved_weights.data();
  // The training problem reads w in its own space (the free coordinates
  // alone when they are its space).
  absl::StatusOr<std::vector<double>> in_space =
      prepared.current_problem().WeightsInSpace(saved_weights);
  if (!in_space.ok()) return in_space.status();
  result->train_letter_error =
      LetterErrorPercent(prepared.current_problem(), in_space->data(), threads);
  const LetterErrors test_errors = ComputeLetterErrors(*test_, w, threads);
  result->test_letter_error = test_errors.letter_percent;
  result->test_word_averaged_letter_error = test_errors.word_averaged_percent;
  result->test_report = absl::StrFormat(
      "letter error: train %.2f%% (%d words, %d letters), test %.2f%% (%d "
      "words, %d letters)\n"
      "test error averaged per word (as the BCFW reference code reports "
      "it): %.2f%%\n",
      result->train_letter_error, prepared.current_problem().NumExamples(),
      train_letters_, result->test_letter_error, result->num_test_sentences,
      test_letters_, test_errors.word_averaged_percent);
  return absl::StrFormat(", train letter error %.2f%%, test %.2f%%",
                         result->train_letter_error, result->test_letter_error);
}

absl::StatusOr<std::string> OcrTask::ScoreTrainOnlyModel(
    const PreparedCorpus& prepared, const ChainModel& model,
    const ProgressLine& say, PipelineResult* /*result*/) const {
  const int threads = WorkerThreads(prepared.config);
  const std::vector<double> weights = model.DenseWeights(prepared.space());
  const double dev = LetterErrorPercent(*dev_, weights.data(), threads);
  const double test = LetterErrorPercent(*test_, weights.data(), threads);
  say(absl::StrFormat(
      "model trained on the training folds only: letter error dev %.2f%%, "
      "test %.2f%%",
      dev, test));
  return absl::StrFormat(", dev letter error %.2f%%, test %.2f%% (train only)",
                         dev, test);
}

absl::Status OcrTask::PrepareRetrainingProblem(PreparedCorpus* prepared) {
  if (prepared->problem == nullptr) {
    return absl::FailedPreconditionError(
        "the training problem is gone: the retraining problem was built");
  }
  std::vector<ChainExample> examples = prepared->problem->TakeExamples();
  std::vector<ChainExample> dev = dev_->TakeExamples();
  examples.insert(examples.end(), std::make_move_iterator(dev.begin()),
                  std::make_move_iterator(dev.end()));
  train_letters_ += dev_letters_;
  const ModelConfig& model = prepared->config.model();
  const BucketRows pixels = *prepared->rows;
  prepared->problem.reset();
  absl::StatusOr<TrainingProblem> training = MakeTrainingProblem(
      model, prepared->config.solver(), prepared->labels, pixels.num_buckets(),
      std::move(examples), &pixels, WorkerThreads(prepared->config));
  if (!training.ok()) return training.status();
  prepared->SetRetrainingProblem(*std::move(training));
  // The test words in the new space (its trigrams are train + dev's).
  test_ = std::make_unique<ChainProblem>(
      prepared->problem_with_dev->layout(), test_->TakeExamples(),
      model.normalize_loss(), prepared->structure_with_dev);
  return absl::OkStatus();
}

}  // namespace chaintag
