// Training a prepared corpus's problem into a ChainModel: the solver
// config as it runs (λ resolved, boxes), the model file's header (the
// config the model records, the task's input description), and a whole
// silent run in memory, as the stacking's first stages need.
//
// Thread-safety: stateless functions; a prepared corpus is used by one
// run at a time.

#ifndef CHAINTAG_PIPELINE_CHAIN_TRAINING_H_
#define CHAINTAG_PIPELINE_CHAIN_TRAINING_H_

#include <vector>

#include "absl/status/statusor.h"
#include "models/chain_model.h"
#include "pipeline/pipeline_config.pb.h"
#include "pipeline/task.h"
#include "solvers/solver_config.pb.h"

namespace chaintag {

// What a model file records of the (resolved) config that trained it: the
// config without how the run was executed (threads, output paths,
// checkpointing), so that a model is a function of data, config and seed.
PipelineConfig RecordedConfig(const PipelineConfig& config);

// The model file of `weights` (over `space`; with space.free, a restricted
// solver's free coordinates), trained on `problem`: the
// task describes its input, the config and the run the rest. The
// transitions `problem` does not allow (ChainProblem::
// allowed_transitions) are first set to kForbiddenTransition in *weights.
absl::StatusOr<ChainModel> MakeModel(const PreparedCorpus& prepared,
                                     const ChainProblem& problem,
                                     const SolverConfig& solver_config,
                                     std::vector<double>* weights,
                                     const WeightSpace& space,
                                     const TrainingSummary& training);

// The solver as it runs on `prepared`: λ resolved against the number of
// examples, and the box of model.nonnegative_transitions.
SolverConfig SolverConfigFor(const PreparedCorpus& prepared);

// Trains prepared->problem with the configured solver and λ, silently (no
// log, no evaluation), and returns its model; nothing is written.
absl::StatusOr<ChainModel> TrainChainModel(const PreparedCorpus& prepared);

}  // namespace chaintag

#endif  // CHAINTAG_PIPELINE_CHAIN_TRAINING_H_
