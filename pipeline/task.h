// The pipeline by task: what differs between training on CoNLL columns and
// on OCR letters sits behind Task (reading the corpus into a training
// problem, the lines that describe it, the held-out score the solver
// reports, the model file's input description, the final scores and
// outputs, and, for CoNLL, the train + dev problem of a retraining run), so
// that the shared train stage (pipeline.h: one λ, λ along the path, the
// retraining run) never asks which corpus it trains on. Also the structs
// the task and the stage share: the run's options, the corpus once
// prepared, and the result.
//
// Thread-safety: a Task and the PreparedCorpus it fills are used from one
// thread at a time; scoring runs solver.num_threads worker threads of its
// own over const data.

#ifndef CHAINTAG_PIPELINE_TASK_H_
#define CHAINTAG_PIPELINE_TASK_H_

#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/communicator.h"
#include "corpora/corpus.pb.h"
#include "corpora/label_set.h"
#include "corpora/sentence.h"
#include "features/bucket_rows.h"
#include "features/feature_extractor.h"
#include "features/feature_names.h"
#include "features/feature_stats.h"
#include "models/chain_model.h"
#include "models/chain_problem.h"
#include "models/model_file.pb.h"
#include "pipeline/lambda_path.h"
#include "pipeline/pipeline_config.pb.h"
#include "pipeline/training_problem.h"
#include "solvers/solver_config.pb.h"

namespace chaintag {

// Training sentences given by the caller instead of corpus files (the
// Python estimator's data), in the layout corpus.format names (e.g.
// CRFSUITE attribute lists): each non-empty one must have its gold tags;
// empty ones are left out.
struct GivenSentences {
  std::vector<Sentence> train;
  std::vector<Sentence> dev;  // empty: none, or corpus.dev_fraction's
};

struct PipelineOptions {
  // Where relative corpus paths are looked up.
  std::string corpora_root;
  // Where relative output paths go (the caller's directory).
  std::string output_dir = ".";
  // Progress lines and the summary; nullptr = silent.
  std::FILE* progress = stderr;
  // `train --resume`: the checkpoint (pipeline/checkpoints.h) of an earlier
  // run of the same config to continue; empty = start afresh.
  std::string resume_path;
  // Distributed training (`train_mpi --distributed`): this process is one
  // rank; it featurises and trains its shard of the training sentences,
  // and only rank 0 writes the model, the log and the outputs.
  Communicator* communicator = nullptr;
  // Not null: the run trains on these sentences (it takes them) instead of
  // reading corpus.train and corpus.dev; corpus.test is still read when set.
  GivenSentences* given = nullptr;
};

struct PipelineResult {
  TrainingSummary summary;
  // How λ was chosen (the summary's lambda_rule), for the log line.
  std::string lambda_rule;
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
  // An interrupt (base/interrupt.h) ended the run: the model it had is
  // saved at model_path (the train-only one when the retraining run had
  // not begun), and nothing was scored.
  bool interrupted = false;
  // The run's last checkpoint, kept when the run was interrupted (empty
  // when none was written or the run finished), and its passes.
  std::string checkpoint_path;
  int checkpoint_passes = 0;
  // Why the run's last checkpoint due was not written (empty when it was).
  std::string checkpoint_error;
};

// Receives one line of the progress stream (without its newline).
using ProgressLine = std::function<void(const std::string& line)>;

// Lines to `progress`, flushed each (nullptr: silent).
ProgressLine ProgressPrinter(std::FILE* progress);

// The threads that featurise and score: solver.num_threads, at least one.
int WorkerThreads(const PipelineConfig& config);

struct PreparedCorpus;

class Task {
 public:
  virtual ~Task() = default;

  // Fills the config's defaults that depend on the task (the training tag
  // scheme; OCR's fixed feature map), so that the model file records
  // exactly what ran. What depends on the data (CoNLL: a tag scheme the
  // config leaves to the labels) is filled by Prepare, in prepared->config.
  virtual void ResolveConfig(PipelineConfig* config) const = 0;

  // Reads the corpus prepared->config names (resolved, paths against
  // options.corpora_root) and sets the labels, the training problem, its
  // rows and the feature statistics; the task keeps what else it needs.
  virtual absl::Status Prepare(const PipelineOptions& options,
                               PreparedCorpus* prepared) = 0;

  // The corpus and feature lines of the progress stream, and the held-out
  // example counts of `result` (its num_train_sentences is set).
  virtual void ReportCorpus(const PreparedCorpus& prepared,
                            const ProgressLine& say,
                            PipelineResult* result) const = 0;

  // Scores weights on the dev split, or, when there is none and `dev_only`
  // is false, on the test split; an empty scorer when neither exists. The
  // task and `prepared` must outlive it.
  virtual HeldOutScorer MakeHeldOutScorer(const PreparedCorpus& prepared,
                                          bool dev_only) const = 0;

  // The model header's description of its input and output: the input
  // format and columns (none for pixels) and the output tag scheme.
  virtual void DescribeModelInput(const PreparedCorpus& prepared,
                                  ModelFile* header) const = 0;

  // Scores `model`, the one the run delivers (already saved), on the
  // held-out data and writes the task's outputs (CoNLL: the predictions;
  // OCR: the letter error report); returns the `done:` line's scores.
  virtual absl::StatusOr<std::string> ScoreSavedModel(
      const PreparedCorpus& prepared, const ChainModel& model,
      const PipelineOptions& options, const ProgressLine& say,
      PipelineResult* result) const = 0;

  // corpus.retrain_on_train_and_dev (the defaults fail): the dev and test
  // scores of the model trained on train alone, before the retraining run
  // replaces it, as the `done:` line's scores...
  virtual absl::StatusOr<std::string> ScoreTrainOnlyModel(
      const PreparedCorpus& prepared, const ChainModel& model,
      const ProgressLine& say, PipelineResult* result) const;

  // ...and the problem of that run: the training and dev examples (same
  // labels and features) as problem_with_dev over rows_with_dev. Releases
  // `problem`, `rows` and the dev sentences first, so the train-only run
  // must be over.
  virtual absl::Status PrepareRetrainingProblem(PreparedCorpus* prepared);
};

// A corpus read, labelled and turned into a chain problem: everything a
// solver run needs, and the task that made it.
struct PreparedCorpus {
  PipelineConfig config;  // resolved
  std::unique_ptr<Task> task;
  LabelSet labels;  // in the training scheme
  FeatureStats feature_stats;
  // The training attributes' names by bucket (model.keep_feature_names),
  // for the model file: the emission features' and the pair features'.
  CompactFeatureNames emission_names;
  CompactFeatureNames pair_names;
  std::unique_ptr<ChainProblem> problem;
  // Distributed training: `problem` holds the training examples of
  // train_shard only, of num_train_examples on all ranks.
  Communicator* communicator = nullptr;
  BlockShard train_shard;
  int num_train_examples = 0;
  // The buckets behind `problem`'s weight rows: those that occur in its
  // features (BucketRows::Identity for OCR pixels), so that w has no
  // coordinate that is provably zero.
  std::unique_ptr<BucketRows> rows;
  // Second order (model.order 2): the structure and, with pair templates,
  // the pair-feature rows behind `problem`.
  std::unique_ptr<BucketRows> pair_rows;
  std::shared_ptr<const SecondOrderStructure> structure;
  // The problem of the run on train + dev, with its rows (and second-order
  // parts), once Task::PrepareRetrainingProblem has replaced `problem` and
  // `rows`.
  std::unique_ptr<ChainProblem> problem_with_dev;
  std::unique_ptr<BucketRows> rows_with_dev;
  std::unique_ptr<BucketRows> pair_rows_with_dev;
  std::shared_ptr<const SecondOrderStructure> structure_with_dev;

  // Training examples on all ranks.
  int TrainExamples() const {
    return communicator != nullptr ? num_train_examples
                                   : problem->NumExamples();
  }
  // Whether this process writes the model, the log and the outputs.
  bool writes_outputs() const {
    return communicator == nullptr || communicator->rank() == 0;
  }
  // The problem trained last (problem_with_dev once it is built) and its
  // space.
  const ChainProblem& current_problem() const {
    return problem_with_dev != nullptr ? *problem_with_dev : *problem;
  }
  WeightSpace current_space() const {
    return problem_with_dev != nullptr ? space_with_dev() : space();
  }
  // What `problem`'s (problem_with_dev's) weights are over.
  WeightSpace space() const {
    WeightSpace space{rows.get(), pair_rows.get(), structure.get()};
    if (problem != nullptr) space.free = problem->free_emissions();
    return space;
  }
  WeightSpace space_with_dev() const {
    WeightSpace space{rows_with_dev.get(), pair_rows_with_dev.get(),
                      structure_with_dev.get()};
    if (problem_with_dev != nullptr) {
      space.free = problem_with_dev->free_emissions();
    }
    return space;
  }
  // Moves a built problem and its space into `problem` and its space.
  void SetTrainingProblem(TrainingProblem training);
  void SetRetrainingProblem(TrainingProblem training);

  // The CoNLL task's corpus, here where tools and tests read it; empty for
  // OCR, whose held-out words live in its task.
  ConllFormat format;   // resolved column layout of the training file
  int num_columns = 0;  // fields of a labelled token line
  // What the training file decided because the config did not (its columns,
  // its tag scheme), for the progress stream; empty when the config said it
  // all.
  std::string inferred_input;
  // Where the training labels contradict the tag scheme the config names
  // (SchemeMismatch), for the progress stream; empty when they agree.
  std::string scheme_warning;
  std::vector<Sentence> train;
  std::vector<Sentence> dev;  // empty without corpus.dev
  std::vector<Sentence> test;
  std::unique_ptr<FeatureExtractor> extractor;
  // corpus.retrain_on_train_and_dev: the dev sentences' examples (features
  // as bucket ids), made by PrepareRetrainingProblem for the train + dev
  // problem (the train-only run does not hold them).
  std::vector<ChainExample> dev_examples;
  // Two-stage stacking (pipeline/stacking.h): the dev sentences with their
  // document attributes, for what reads dev features during training (the
  // dev scorer, the train + dev examples; `dev` stays as read, for the
  // saved model, which makes its own); the first stage the saved model
  // carries, and the one trained on train + dev, which replaces it when
  // the retraining problem is built.
  std::vector<Sentence> stacked_dev;
  std::shared_ptr<const ChainModel> first_stage;
  std::shared_ptr<const ChainModel> first_stage_with_dev;
  // The dev sentences whose features training reads.
  const std::vector<Sentence>& dev_features() const {
    return stacked_dev.empty() ? dev : stacked_dev;
  }
};

}  // namespace chaintag

#endif  // CHAINTAG_PIPELINE_TASK_H_
