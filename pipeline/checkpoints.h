// How a training run checkpoints and resumes (PipelineConfig.checkpoint,
// `train --resume`): the plan handed to the solver's monitor (where, how
// often, tagged with the run's fingerprint), and the resume checkpoint,
// refused by name when it comes from another config, run or format. The
// solvers write and read their own state (solvers/checkpoint.h).
//
// Thread-safety: stateless functions.

#ifndef CHAINTAG_PIPELINE_CHECKPOINTS_H_
#define CHAINTAG_PIPELINE_CHECKPOINTS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "pipeline/pipeline_config.pb.h"
#include "solvers/checkpoint.pb.h"
#include "solvers/monitor.h"

namespace chaintag {

// The runs of one pipeline: the solve on the training split, and with
// corpus.retrain_on_train_and_dev the solve on train + dev.
constexpr char kTrainRun[] = "train";
constexpr char kTrainAndDevRun[] = "train_and_dev";

// XXH3-64 of what decides the run's result: `recorded_config` is the
// config the model file records (RecordedConfig in chain_training.h), so
// neither threads, output paths nor checkpointing count.
uint64_t ConfigFingerprint(const PipelineConfig& recorded_config);

// Where the checkpoints of a model saved at `model_path` go.
std::string CheckpointPath(const std::string& model_path);

// The monitor's plan for `run` of a config with `fingerprint`: empty (no
// checkpoints) unless `checkpoint` asks for them.
Monitor::CheckpointPlan CheckpointPlanFor(const CheckpointConfig& checkpoint,
                                          uint64_t fingerprint,
                                          const std::string& model_path,
                                          const std::string& run);

// Whether `checkpoint` continues `run` of the config with `fingerprint`;
// the error names `path` and what differs.
absl::Status CheckResumeCheckpoint(const SolverCheckpoint& checkpoint,
                                   const std::string& path,
                                   uint64_t fingerprint,
                                   const std::string& run);

// Sets the monitor's plan and opens its log for a run, or, resuming (when
// `resume` is not null), keeps the records the checkpoint counted and
// hands the checkpoint (moved) to the solver.
absl::Status StartMonitor(const std::string& log_path,
                          Monitor::CheckpointPlan plan,
                          SolverCheckpoint* resume, Monitor* monitor);

}  // namespace chaintag

#endif  // CHAINTAG_PIPELINE_CHECKPOINTS_H_
