#include "solvers/pass_driver.h"

#include <cmath>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "solvers/solver.h"

namespace chaintag {
namespace {

// The stop reason of an exact certificate, if it ends the run.
std::optional<StopReason> CertifiedStop(const SolverConfig& config,
                                        const DualityGap& certificate) {
  switch (GapWithinTolerance(config, certificate.gap, certificate.primal)) {
    case GapStop::kAbsolute:
      return StopReason::kGapTolerance;
    case GapStop::kRelative:
      return StopReason::kRelativeGap;
    case GapStop::kNone:
      break;
  }
  return std::nullopt;
}

}  // namespace

absl::string_view StopReasonName(StopReason reason) {
  switch (reason) {
    case StopReason::kMaxSeconds:
      return "max_seconds";
    case StopReason::kGapTolerance:
      return "gap_tolerance";
    case StopReason::kRelativeGap:
      return "relative_gap_tolerance";
    case StopReason::kGapEstimate:
      return "gap_estimate";
    case StopReason::kInterrupted:
      return "interrupted";
    case StopReason::kNoProgress:
      return "no_progress";
    case StopReason::kObjectiveDelta:
      return "delta";
    case StopReason::kGradientEpsilon:
      return "epsilon";
    case StopReason::kMaxPasses:
      break;
  }
  return "max_passes";
}

absl::Status PassSteps::SaveState(CheckpointWriter*) const {
  return absl::UnimplementedError("this solver writes no checkpoints");
}

absl::Status PassSteps::LoadState(const CheckpointReader&) {
  return absl::UnimplementedError("this solver reads no checkpoints");
}

PassDriver::PassDriver(const SolverConfig& config, std::string solver,
                       double lambda, int num_examples, int64_t dim,
                       Monitor* monitor)
    : config_(config),
      solver_(std::move(solver)),
      lambda_(lambda),
      num_examples_(num_examples),
      dim_(dim),
      monitor_(monitor) {}

double PassDriver::Seconds() const {
  return absl::ToDoubleSeconds(absl::Now() - start_ - evaluation_time_);
}

bool PassDriver::Expired(int64_t step) {
  if (expired_) return true;
  if (InterruptRequests() > 0) {
    interrupted_ = expired_ = true;
  } else if (config_.max_seconds() > 0 && (step & 63) == 0 &&
             Seconds() >= config_.max_seconds()) {
    expired_ = true;
  }
  return expired_;
}

PassRecord PassDriver::NewRecord(int pass) const {
  PassRecord record;
  record.set_solver(solver_);
  record.set_pass(pass);
  record.set_lambda(lambda_);
  return record;
}

bool PassDriver::BudgetSpent(int pass) const {
  if (budget_in_oracle_calls_) {
    return steps_->OracleCalls() >=
           static_cast<int64_t>(config_.max_passes()) * num_examples_;
  }
  return pass >= config_.max_passes();
}

absl::Status PassDriver::Record(PassRecord record, bool final_pass) {
  const int64_t calls = steps_->OracleCalls();
  record.set_oracle_calls(calls);
  record.set_effective_passes(static_cast<double>(calls) / num_examples_);
  record.set_seconds(seconds_before_ + Seconds());
  record.set_evaluation_seconds(absl::ToDoubleSeconds(evaluation_time_));
  if (monitor_ == nullptr) return absl::OkStatus();
  if (!monitor_->WantsEvaluation(record.pass(), final_pass)) {
    return monitor_->Record(std::move(record), {}, final_pass);
  }
  // The point is formed only when the monitor evaluates it, and both are
  // left out of the training clock.
  const absl::Time evaluation_start = absl::Now();
  absl::Status recorded =
      monitor_->Record(std::move(record), steps_->Point(), final_pass);
  evaluation_time_ += absl::Now() - evaluation_start;
  return recorded;
}

absl::Status PassDriver::RecordInterim(PassRecord record) {
  return Record(std::move(record), false);
}

TrainingSummary PassDriver::Summary(int passes, StopReason reason) const {
  TrainingSummary summary;
  summary.set_solver(solver_);
  summary.set_lambda(lambda_);
  summary.set_num_examples(num_examples_);
  summary.set_dim(dim_);
  summary.set_passes(passes);
  summary.set_oracle_calls(steps_->OracleCalls());
  summary.set_seconds(seconds_before_ + Seconds());
  if (certificate_.has_value()) {
    SetCertificate(*certificate_, &summary);
  } else if (primal_.has_value()) {
    summary.set_primal(*primal_);
  }
  summary.set_stop_reason(std::string(StopReasonName(reason)));
  return summary;
}

// The driver's own entry among the solver's arrays in a checkpoint.
constexpr char kTrainingSecondsArray[] = "pass_driver.training_seconds";

absl::Status PassDriver::Resume(const SolverCheckpoint& checkpoint, int* pass) {
  if (checkpoint.solver() != solver_) {
    return absl::FailedPreconditionError(
        absl::StrCat("the checkpoint is of solver ", checkpoint.solver(),
                     ", the run's is ", solver_));
  }
  // Passes count up from here to the budget: a negative count would run
  // (nearly) forever.
  if (checkpoint.passes() < 0) {
    return absl::DataLossError(absl::StrCat(
        "checkpoint's passes ", checkpoint.passes(), " is negative"));
  }
  const CheckpointReader reader(checkpoint);
  absl::Status loaded = steps_->LoadState(reader);
  if (!loaded.ok()) return loaded;
  // Checkpoints written before the seconds were kept hold none.
  if (reader.Has(kTrainingSecondsArray)) {
    loaded = reader.Real(kTrainingSecondsArray, &seconds_before_);
    if (!loaded.ok()) return loaded;
    if (!(seconds_before_ >= 0) || !std::isfinite(seconds_before_)) {
      return absl::DataLossError(absl::StrCat("checkpoint's training seconds ",
                                              seconds_before_, " are invalid"));
    }
  }
  *pass = checkpoint.passes();
  if (checkpoint.has_certificate()) {
    certificate_ =
        DualityGap{checkpoint.primal(), checkpoint.dual(), checkpoint.gap()};
  } else if (checkpoint.primal_only()) {
    primal_ = checkpoint.primal();
  }
  return absl::OkStatus();
}

absl::Status PassDriver::WriteCheckpoint(int pass) {
  SolverCheckpoint checkpoint;
  checkpoint.set_solver(solver_);
  checkpoint.set_passes(pass);
  if (certificate_.has_value()) {
    checkpoint.set_has_certificate(true);
    checkpoint.set_primal(certificate_->primal);
    checkpoint.set_dual(certificate_->dual);
    checkpoint.set_gap(certificate_->gap);
  } else if (primal_.has_value()) {
    checkpoint.set_primal_only(true);
    checkpoint.set_primal(*primal_);
  }
  CheckpointWriter writer(&checkpoint);
  writer.Real(kTrainingSecondsArray, seconds_before_ + Seconds());
  absl::Status saved = steps_->SaveState(&writer);
  if (!saved.ok()) return saved;
  monitor_->WriteCheckpoint(std::move(checkpoint));
  return absl::OkStatus();
}

absl::StatusOr<TrainingSummary> PassDriver::Run(PassSteps* steps) {
  steps_ = steps;
  int pass = 0;
  if (monitor_ != nullptr && monitor_->resume() != nullptr) {
    absl::Status resumed = Resume(*monitor_->resume(), &pass);
    if (!resumed.ok()) return resumed;
    monitor_->ReleaseResume();
  } else {
    certificate_ = steps->StartCertificate();
  }
  if (pass == 0 && certificate_.has_value()) {
    const std::optional<StopReason> certified =
        CertifiedStop(config_, *certificate_);
    if (certified.has_value()) {
      PassRecord record = NewRecord(0);
      SetCertificate(*certificate_, &record);
      absl::Status status = Record(std::move(record), true);
      if (!status.ok()) return status;
      return Summary(0, *certified);
    }
  }
  StopReason reason = StopReason::kMaxPasses;
  while (!BudgetSpent(pass)) {
    ++pass;
    absl::Status ran = steps->RunSteps(pass, this);
    if (!ran.ok()) return ran;
    if (InterruptRequests() > 0) {
      interrupted_ = expired_ = true;
    } else if (config_.max_seconds() > 0 &&
               Seconds() >= config_.max_seconds()) {
      expired_ = true;
    }
    PassEndRequest request;
    request.pass = pass;
    request.last_pass = BudgetSpent(pass) || expired_;
    // A second interrupt asks to skip the exact gap pass.
    request.gap_check_due =
        !(interrupted_ && InterruptRequests() >= 2) &&
        ((config_.gap_check() > 0 && pass % config_.gap_check() == 0) ||
         (request.last_pass && config_.final_gap()));
    request.evaluation_due = monitor_ != nullptr &&
                             monitor_->WantsEvaluation(pass, request.last_pass);
    PassRecord record = NewRecord(pass);
    absl::StatusOr<PassEnd> end = steps->EndPass(request, &record);
    if (!end.ok()) return end.status();
    if (end->certificate.has_value()) {
      certificate_ = end->certificate;
      SetCertificate(*certificate_, &record);
    }
    if (end->primal.has_value()) {
      primal_ = end->primal;
      record.set_primal(*primal_);
    }
    const std::optional<StopReason> certified_stop =
        end->certificate.has_value() ? CertifiedStop(config_, *end->certificate)
                                     : std::nullopt;
    const bool certified = certified_stop.has_value();
    if (certified) {
      reason = *certified_stop;
    } else if (end->estimate_converged) {
      reason = StopReason::kGapEstimate;
    } else if (end->solver_stop.has_value()) {
      reason = *end->solver_stop;
    } else if (interrupted_) {
      reason = StopReason::kInterrupted;
    } else if (expired_ && !BudgetSpent(pass)) {
      reason = StopReason::kMaxSeconds;
    }
    const bool final_pass = request.last_pass || certified ||
                            end->estimate_converged ||
                            end->solver_stop.has_value();
    absl::Status recorded = Record(std::move(record), final_pass);
    if (!recorded.ok()) return recorded;
    if (final_pass) break;
    // Between passes only, where a resumed run continues exactly.
    if (monitor_ != nullptr && monitor_->CheckpointDue(pass, Seconds())) {
      absl::Status written = WriteCheckpoint(pass);
      if (!written.ok()) return written;
    }
  }
  return Summary(pass, reason);
}

}  // namespace chaintag
