// Monitor: what a solver reports after every pass. Prints one progress line
// per pass, appends a JSON-lines PassRecord to a log file, and runs an
// optional held-out evaluation every few passes.
//
// Thread-safety: not thread-safe; a solver calls it from its own thread.

#ifndef CHAINTAG_SOLVERS_MONITOR_H_
#define CHAINTAG_SOLVERS_MONITOR_H_

#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "solvers/checkpoint.pb.h"
#include "solvers/solver_config.pb.h"

namespace chaintag {

class Monitor {
 public:
  // Scores weights on held-out data (w as Solver::Solve returns it);
  // higher or lower is better as the metric says, the monitor only reports
  // it.
  using Evaluator =
      std::function<absl::StatusOr<double>(absl::Span<const double> w)>;

  Monitor() = default;
  Monitor(const Monitor&) = delete;
  Monitor& operator=(const Monitor&) = delete;
  ~Monitor();

  // Progress lines go to `stream` (stderr by default, nullptr = silent).
  void set_progress_stream(std::FILE* stream) { progress_ = stream; }
  // Starts (truncates) a JSON-lines log.
  absl::Status OpenLog(const std::string& path);
  void SetEvaluator(std::string metric, int every_passes, Evaluator evaluator);

  // Whether the evaluator wants to run after `pass` (or the run is ending).
  bool WantsEvaluation(int pass, bool final_pass) const;

  // Fills eval_score when an evaluation is due (using `w`), prints the line
  // and logs the record.
  absl::Status Record(PassRecord record, absl::Span<const double> w,
                      bool final_pass);

  const std::vector<PassRecord>& records() const { return records_; }
  // Records written since the log was opened (or resumed).
  int64_t records_written() const { return records_written_; }

  // Checkpoints (solvers/checkpoint.h): written to `path` every
  // `every_passes` passes and/or `every_seconds` seconds (0 = not by that
  // measure), tagged with the run's fingerprint and name.
  struct CheckpointPlan {
    std::string path;
    int every_passes = 0;
    double every_seconds = 0;
    uint64_t fingerprint = 0;
    std::string run = "train";
  };
  void SetCheckpointPlan(CheckpointPlan plan) { plan_ = std::move(plan); }
  const CheckpointPlan& checkpoint_plan() const { return plan_; }
  // Whether a checkpoint is due after `pass` at `seconds` into the run.
  bool CheckpointDue(int pass, double seconds);
  // Writes `checkpoint` (the solver's state) with the plan's tags and the
  // log's record count. A write that fails does not end the run (it would
  // lose what the run has trained): the failure goes to the progress stream
  // and to checkpoint_error(), and the last checkpoint written stays.
  void WriteCheckpoint(SolverCheckpoint checkpoint);
  // Why the last checkpoint due was not written; empty when it was.
  const std::string& checkpoint_error() const { return checkpoint_error_; }

  // A checkpoint for the solver to resume from (checked against the plan's
  // fingerprint and run when the solver starts).
  void SetResume(SolverCheckpoint checkpoint);
  const SolverCheckpoint* resume() const {
    return resume_.has_value() ? &*resume_ : nullptr;
  }
  // Once the solver has read it: its arrays are as large as the solver's.
  void ReleaseResume() { resume_.reset(); }
  // The passes of the last checkpoint written (0 = none).
  int checkpoint_passes() const { return checkpoint_passes_; }
  // The log as it was at the checkpoint: its first `records` records, kept,
  // and appended to from there.
  absl::Status ResumeLog(const std::string& path, int64_t records);

 private:
  std::FILE* progress_ = stderr;
  std::FILE* log_ = nullptr;
  std::string log_path_;
  std::string metric_;
  int every_passes_ = 0;
  Evaluator evaluator_;
  std::vector<PassRecord> records_;
  int64_t records_written_ = 0;
  CheckpointPlan plan_;
  double last_checkpoint_seconds_ = 0;
  int checkpoint_passes_ = 0;
  std::string checkpoint_error_;
  std::optional<SolverCheckpoint> resume_;
};

}  // namespace chaintag

#endif  // CHAINTAG_SOLVERS_MONITOR_H_
