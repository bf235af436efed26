// The train-evaluate-save run: reads the corpus a PipelineConfig names,
// extracts hashed features, trains a chain model with the configured solver
// (progress per pass, scored on the dev split when there is one, else on the
// test split), scores the dev and test splits exactly as conlleval does, and
// writes the model file. Predictions are converted back to the corpus's own
// tag scheme (e.g. IOB1 for CoNLL-2003) before they are scored or written,
// so conlleval on the written predictions prints the reported figures. OCR
// corpora (corpus.ocr) go through pipeline/ocr.h instead: pixel features, folds
// as splits, letter error as the score.
//
// Thread-safety: RunPipeline may be called from one thread at a time per
// output path; it uses solver.num_threads worker threads.

#ifndef CHAINTAG_PIPELINE_PIPELINE_H_
#define CHAINTAG_PIPELINE_PIPELINE_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/paths.h"
#include "corpora/corpus.pb.h"
#include "corpora/label_set.h"
#include "corpora/sentence.h"
#include "features/bucket_rows.h"
#include "features/feature_extractor.h"
#include "features/feature_stats.h"
#include "models/chain_model.h"
#include "models/chain_problem.h"
#include "pipeline/lambda_path.h"
#include "pipeline/pipeline_config.pb.h"
#include "solvers/solver_config.pb.h"

namespace chaintag {

struct PipelineOptions {
  // Where relative corpus paths are looked up.
  std::string corpora_root;
  // Where relative output paths go (the caller's directory).
  std::string output_dir = ".";
  // Progress lines and the summary; nullptr = silent.
  std::FILE* progress = stderr;
};

struct PipelineResult {
  TrainingSummary summary;
  FeatureStats feature_stats;
  int num_train_sentences = 0;
  int num_dev_sentences = 0;
  int num_test_sentences = 0;
  // conlleval's report for the test split, and its FB1 and accuracy.
  std::string test_report;
  double test_f1 = 0;
  double test_accuracy = 0;
  // The same for the dev split (corpus.dev); empty and 0 without one.
  std::string dev_report;
  double dev_f1 = 0;
  double dev_accuracy = 0;
  // OCR runs: letter error in percent (Viterbi labels ≠ gold letters) of
  // the saved model on the training and test words; -1 otherwise.
  double train_letter_error = -1;
  double test_letter_error = -1;
  // The test error as the BCFW reference codes average it (per word).
  double test_word_averaged_letter_error = -1;
  std::string model_path;
  std::string log_path;
  // corpus.retrain_on_train_and_dev: the model above (and summary, test_*)
  // is the one trained on train + dev; these describe the run on train
  // alone, which the dev figures score. Empty, -1 and unset otherwise.
  std::string train_only_model_path;
  std::string train_only_test_report;
  double train_only_test_f1 = -1;
  TrainingSummary train_only_summary;
  std::string final_log_path;  // the train + dev run's log
  // With `lambda: "path"`: the breakpoints, their dev scores and the choice.
  LambdaPath path;
};

// A corpus read, labelled and turned into a chain problem: everything a
// solver run needs.
struct PreparedCorpus {
  PipelineConfig config;  // resolved
  ConllFormat format;     // resolved column layout of the training file
  int num_columns = 0;    // fields of a labelled token line
  std::vector<Sentence> train;
  std::vector<Sentence> dev;  // empty without corpus.dev
  std::vector<Sentence> test;
  LabelSet labels;  // in the training scheme
  std::unique_ptr<FeatureExtractor> extractor;
  FeatureStats feature_stats;
  std::unique_ptr<ChainProblem> problem;
  // The buckets behind `problem`'s weight rows: those that occur in its
  // features (BucketRows::Identity for OCR pixels), so that w has no
  // coordinate that is provably zero.
  std::unique_ptr<BucketRows> rows;
  // corpus.retrain_on_train_and_dev: the dev sentences' examples (features
  // as bucket ids), until PrepareRetrainingProblem turns the training and
  // dev examples into one problem (same labels and features) for the final
  // model, with its rows.
  std::vector<ChainExample> dev_examples;
  std::unique_ptr<ChainProblem> problem_with_dev;
  std::unique_ptr<BucketRows> rows_with_dev;
  // OCR runs (corpus.ocr set): the test words as a problem, for decoding
  // and letter error; `train`, `test`, `extractor` and `feature_stats` are
  // then empty.
  std::unique_ptr<ChainProblem> ocr_test;
  std::unique_ptr<ChainProblem> ocr_dev;  // corpus.dev_folds
  std::string ocr_path;                   // resolved
  int64_t ocr_train_letters = 0;
  int64_t ocr_test_letters = 0;
  int64_t ocr_dev_letters = 0;
};

absl::StatusOr<PreparedCorpus> PrepareCorpus(const PipelineConfig& config,
                                             const PipelineOptions& options);

// Builds problem_with_dev and rows_with_dev from `problem` and
// dev_examples, releasing `problem` and `rows` first (the train-only run
// must be over). RunPreparedPipeline calls it when it retrains.
absl::Status PrepareRetrainingProblem(PreparedCorpus* prepared);

// Scores weights on the dev split (F1, or token accuracy for untyped tags;
// letter error for OCR), or, when there is none and `dev_only` is false, on
// the test split; an empty scorer when neither exists. `prepared` must
// outlive it.
HeldOutScorer MakeHeldOutScorer(const PreparedCorpus& prepared, bool dev_only);

absl::StatusOr<PipelineConfig> ReadPipelineConfig(const std::string& path);

// A config path as a user typed it: looked up from the caller's directory
// first, then as given (the //pipeline presets pass a runfiles path).
absl::StatusOr<PipelineConfig> ReadUserPipelineConfig(const std::string& path);

// The corpora root from a --corpora flag's value: empty = the default
// ($CHAINTAG_CORPORA, else ../shared/corpora beside the workspace).
std::string CorporaRootFromFlag(const std::string& flag);

// Fills defaults that depend on other fields (output names, train scheme)
// so that the model file records exactly what ran.
PipelineConfig ResolvePipelineConfig(const PipelineConfig& config);

absl::StatusOr<PipelineResult> RunPipeline(const PipelineConfig& config,
                                           const PipelineOptions& options);

// RunPipeline's training and scoring on a corpus already prepared, so that a
// caller can run more on the same problem without reading it twice (regpath's
// grid search). `start` is when the run began (for the total time); the
// prepared config's solver section is updated to what ran. The training
// sentences are released (they are featurised), and with
// corpus.retrain_on_train_and_dev `problem` and `rows` become
// problem_with_dev and rows_with_dev once the train-only model is scored,
// and the dev sentences are released.
absl::StatusOr<PipelineResult> RunPreparedPipeline(
    PreparedCorpus* prepared, const PipelineOptions& options,
    absl::Time start = absl::Now());

// Tags `sentences` with `model` (in parallel, deterministic) and scores them
// with conlleval semantics; `report` gets conlleval's text and
// `predictions` the tags, when non-null.
absl::StatusOr<double> EvaluateModel(
    const ChainModel& model, const std::vector<Sentence>& sentences,
    int num_threads, std::string* report, double* accuracy,
    std::vector<std::vector<std::string>>* predictions = nullptr);

}  // namespace chaintag

#endif  // CHAINTAG_PIPELINE_PIPELINE_H_
