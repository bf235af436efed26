// The pass loop every solver shares. PassDriver owns what is the same for
// all of them: the clock and the time budget, the pass budget (in passes, or
// in oracle calls for the SVRG family), the exact-gap cadence (every
// gap_check passes and, with final_gap, after the last), the stop rules and
// their names, one PassRecord per pass to the Monitor (with the point
// formed only when the monitor evaluates it), and the run's
// TrainingSummary. A solver supplies its step logic as PassSteps. An
// interrupt (base/interrupt.h) ends the run after the current step: the
// last pass then still gets its exact gap (final_gap), unless a second
// interrupt asked to skip it. With the monitor's checkpoint plan, the
// driver writes the solver's state at pass ends, and resumes from the
// monitor's checkpoint.
//
// Thread-safety: one driver per run, used by the solver's own thread.

#ifndef CHAINTAG_SOLVERS_PASS_DRIVER_H_
#define CHAINTAG_SOLVERS_PASS_DRIVER_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "base/interrupt.h"
#include "solvers/checkpoint.h"
#include "solvers/duality_gap.h"
#include "solvers/monitor.h"
#include "solvers/solver_config.pb.h"

namespace chaintag {

// Why a run stopped; TrainingSummary.stop_reason holds its name.
enum class StopReason {
  kMaxPasses,     // the pass (or oracle-call) budget is spent
  kMaxSeconds,    // the time budget is spent
  kGapTolerance,  // an exact duality gap within gap_tolerance
  kRelativeGap,   // an exact gap within relative_gap_tolerance · primal
  kGapEstimate,   // stale block-gap estimates within it (heuristic stop)
  kInterrupted,   // SIGINT or SIGTERM (base/interrupt.h)
  // The solver's own tests (lbfgs, CRFsuite's rules): no step lowers the
  // objective any more; the objective fell by less than a share over the
  // last passes; the (pseudo-)gradient is small next to w.
  kNoProgress,
  kObjectiveDelta,
  kGradientEpsilon,
};
absl::string_view StopReasonName(StopReason reason);

// What the driver knows when a pass's steps are done.
struct PassEndRequest {
  int pass = 0;
  // The budget (passes, oracle calls or seconds) ends with this pass.
  bool last_pass = false;
  // The cadence asks for the exact gap: every gap_check passes, and after
  // the last pass with final_gap.
  bool gap_check_due = false;
  // The monitor evaluates the point after this pass unless the solver
  // converges first (then it always does).
  bool evaluation_due = false;
};

// What a pass's end reports back.
struct PassEnd {
  // The exact gap at the returned point, when computed this pass.
  std::optional<DualityGap> certificate;
  // The primal at the returned point, for solvers without a dual.
  std::optional<double> primal;
  // The solver's stale estimates say it has converged, and it stops on them
  // without an exact check (the heuristic regularization path).
  bool estimate_converged = false;
  // The solver's own test ends the run (kNoProgress, kObjectiveDelta or
  // kGradientEpsilon), certified when `certificate` is set.
  std::optional<StopReason> solver_stop;
};

class PassDriver;

// A solver's side of the loop.
class PassSteps {
 public:
  virtual ~PassSteps() = default;

  // The exact gap before any step, for a solver that computes it anyway
  // (fw): a start already within tolerance is recorded as pass 0 and the
  // run stops there.
  virtual std::optional<DualityGap> StartCertificate() { return std::nullopt; }
  // Runs the steps of pass `pass`, ending the pass early once
  // driver->Expired(step) says the time budget is spent.
  virtual absl::Status RunSteps(int pass, PassDriver* driver) = 0;
  // After the steps: fills `record` with the solver's own figures (dual,
  // gap estimates, cache and active-set statistics) and computes the
  // certificate when request.gap_check_due, or when its own rule asks.
  virtual absl::StatusOr<PassEnd> EndPass(const PassEndRequest& request,
                                          PassRecord* record) = 0;
  // The point the solver returns now (w̄ with averaging), formed on demand,
  // in the form Solver::Solve returns w.
  virtual absl::Span<const double> Point() = 0;
  // Oracle calls so far, exact gap passes included.
  virtual int64_t OracleCalls() const = 0;

  // Checkpoints (solvers/checkpoint.h): the solver's whole state at the end
  // of a pass, and its restoration, after which the run continues exactly
  // as if it had not stopped. The defaults refuse.
  virtual absl::Status SaveState(CheckpointWriter* writer) const;
  virtual absl::Status LoadState(const CheckpointReader& reader);
};

class PassDriver {
 public:
  // `solver` names the solver in records and the summary; `lambda` is the
  // λ being solved for.
  PassDriver(const SolverConfig& config, std::string solver, double lambda,
             int num_examples, int64_t dim, Monitor* monitor);

  // The pass budget counts oracle calls / n (config.max_passes · n calls),
  // not passes: for solvers whose pass makes several calls per example.
  void CountBudgetInOracleCalls() { budget_in_oracle_calls_ = true; }

  // Runs passes of `steps` until a stop rule holds.
  absl::StatusOr<TrainingSummary> Run(PassSteps* steps);

  // Whether the run must end this pass: the time budget is spent (the
  // clock is read at every 64th step of a pass only, so that the check
  // costs nothing) or an interrupt was requested.
  bool Expired(int64_t step);
  // Whether an earlier check found the run must end.
  bool expired() const { return expired_; }
  // Seconds of training since the run started: the held-out evaluations the
  // monitor makes (forming the point and scoring it) are left out, so the
  // figure does not depend on how often the run is evaluated.
  double Seconds() const;
  // Logs a record that is not the pass's last (mp_bcfw's approximate
  // passes): counts and seconds are filled in, and the monitor evaluates
  // the point when its cadence asks.
  absl::Status RecordInterim(PassRecord record);
  // A record with the solver's name, λ and `pass`.
  PassRecord NewRecord(int pass) const;

 private:
  // From the monitor's resume checkpoint: the solver's state and the
  // driver's; `pass` becomes the passes it had completed.
  absl::Status Resume(const SolverCheckpoint& checkpoint, int* pass);
  absl::Status WriteCheckpoint(int pass);
  bool BudgetSpent(int pass) const;
  // Fills the record's counts and seconds and hands it to the monitor.
  absl::Status Record(PassRecord record, bool final_pass);
  TrainingSummary Summary(int passes, StopReason reason) const;

  const SolverConfig config_;  // a copy: callers may pass a temporary
  const std::string solver_;
  const double lambda_;
  const int num_examples_;
  const int64_t dim_;
  Monitor* const monitor_;
  bool budget_in_oracle_calls_ = false;
  const absl::Time start_ = absl::Now();
  absl::Duration evaluation_time_;  // spent in held-out evaluations
  // The training seconds before the checkpoint a resumed run starts from:
  // its records and summary count on from them (max_seconds does not).
  double seconds_before_ = 0;
  bool expired_ = false;
  bool interrupted_ = false;
  PassSteps* steps_ = nullptr;  // during Run
  std::optional<DualityGap> certificate_;
  std::optional<double> primal_;
};

}  // namespace chaintag

#endif  // CHAINTAG_SOLVERS_PASS_DRIVER_H_
