// BcfwRun's pass loop side (bcfw_run.h) and BcfwSolver: initialisation
// and the config's checks, the steps of a pass, the returned point, and
// EndPass with its exact gap passes. Checkpoints are in bcfw_checkpoint.cc,
// warm starts in bcfw_warm_start.cc.
//
// Thread-safety: a BcfwRun is used by one thread at a time (exact gap
// passes use solver.num_threads threads); BcfwSolver: see Solver.

#include "solvers/bcfw.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/huge_pages.h"
#include "solvers/bcfw_internal.h"
#include "solvers/bcfw_run.h"
#include "solvers/corner_store.h"
#include "solvers/duality_gap.h"

namespace chaintag {

using bcfw_internal::kInfinity;

BcfwRun::BcfwRun(const SolverConfig& config, const Problem& problem)
    : shared_(config, problem),
      block_steps_(&shared_),
      rounds_(&shared_, &block_steps_) {}

void BcfwRun::Initialize() { shared_.Initialize(); }

// The average point is formed from the blocks' sums only when read: the
// cost of about one pass of BCFW updates.
const std::vector<double>& BcfwRun::ReturnedPoint() {
  if (!shared_.averaging) return shared_.w;
  if (average_steps_ == shared_.steps) return average_;  // already current
  average_steps_ = shared_.steps;
  ReserveFaultedIn(&average_, shared_.dim, /*huge_pages=*/true,
                   shared_.NumThreads());
  average_.resize(shared_.dim);
  shared_.boxes.ClearAverage();
  if (shared_.steps == 0) {
    average_ = shared_.w;
    return average_;
  }
  distribution_status_.Update(shared_.block_average.Form(
      shared_.steps, shared_.lambda, shared_.Granularity(),
      shared_.NumThreads(), shared_.distribution, average_.data()));
  shared_.boxes.TruncateAverage(average_.data());
  return average_;
}

absl::Status BcfwRun::Validate() {
  const std::string& name = shared_.config.name();
  if (shared_.config.objective() != SolverConfig::MAX_MARGIN) {
    return absl::InvalidArgumentError(
        name + ": the BCFW family minimises the max-margin objective only");
  }
  if (shared_.n <= 0)
    return absl::InvalidArgumentError(name + ": no training examples");
  if (shared_.track_alpha && !shared_.config.line_search()) {
    return absl::InvalidArgumentError(
        name +
        ": pairwise, away, best and fully-corrective steps need "
        "line_search");
  }
  if (shared_.config.minibatch() < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": minibatch must be at least 1, got ",
                     shared_.config.minibatch()));
  }
  if (shared_.config.minibatch() > 1 && shared_.config.bcfw().box_size() > 0) {
    return absl::InvalidArgumentError(name +
                                      ": box constraints need minibatch 1");
  }
  if (shared_.distribution.communicator != nullptr) {
    if (shared_.config.minibatch() < 2) {
      return absl::InvalidArgumentError(
          name + ": distributed training needs minibatch of at least 2");
    }
    if (shared_.config.max_seconds() > 0) {
      return absl::InvalidArgumentError(
          name +
          ": distributed training has no time budget (max_seconds): "
          "the ranks must agree on every round");
    }
    // The exchange sends 32-bit slots.
    if (shared_.dim / shared_.Granularity() >
        std::numeric_limits<uint32_t>::max()) {
      return absl::InvalidArgumentError(absl::StrCat(
          name, ": distributed training needs w in at most 2^32 slots, has ",
          shared_.dim / shared_.Granularity()));
    }
  }
  if (shared_.use_cache && shared_.config.bcfw().max_cache_size() < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": max_cache_size must be at least 2, got ",
                     shared_.config.bcfw().max_cache_size()));
  }
  return absl::OkStatus();
}

absl::StatusOr<TrainingSummary> BcfwRun::Solve(Monitor* monitor,
                                               std::vector<double>* w_out) {
  absl::Status valid = Validate();
  if (!valid.ok()) return valid;
  Initialize();
  absl::Status boxes =
      shared_.boxes.Initialize(shared_.config, shared_.dim, shared_.w.data());
  if (!boxes.ok()) return boxes;
  absl::StatusOr<TrainingSummary> summary = Run(monitor);
  if (!summary.ok()) return summary;
  if (invariants_ != nullptr) CheckInvariants(invariants_);
  // Hand over the buffer instead of copying: at this size a copy is the
  // run's peak memory. The last pass has already formed w̄.
  if (shared_.averaging) ReturnedPoint();
  *w_out = shared_.averaging ? std::move(average_) : std::move(shared_.w);
  return summary;
}

absl::StatusOr<TrainingSummary> BcfwRun::Run(Monitor* monitor) {
  PassDriver driver(shared_.config, shared_.config.name(), shared_.lambda,
                    shared_.n, shared_.dim, monitor);
  return driver.Run(this);
}

absl::Status BcfwRun::RunSteps(int, PassDriver* driver) {
  if (shared_.config.sampling() == SolverConfig::PERMUTATION) {
    shared_.random.Permutation(shared_.n, &shared_.order);
  }
  shared_.pass_draws = shared_.pass_hits = 0;
  if (shared_.minibatch == 1) {
    std::optional<StepHelpers::Lend> lend;
    if (shared_.NumThreads() > 1) {
      if (step_helpers_ == nullptr) {
        step_helpers_ = std::make_unique<StepHelpers>(shared_.NumThreads());
      }
      lend.emplace(step_helpers_.get());
    }
    for (int j = 0; j < shared_.n; ++j) {
      const int i = block_steps_.NextBlock(j, shared_.order);
      block_steps_.ComputeBlockOracle(i, &oracle_);
      block_steps_.ApplyBlockStep(i, &oracle_);
      if (driver->Expired(j)) break;
    }
    return absl::OkStatus();
  }
  for (int j = 0, round = 0; j < shared_.n; j += shared_.minibatch, ++round) {
    absl::Status status =
        rounds_.RunRound(j, std::min(shared_.minibatch, shared_.n - j));
    if (!status.ok()) return status;
    // Ranks must agree on every round: a distributed run has no time
    // budget (Validate) and leaves interrupts to mpirun.
    if (shared_.distribution.communicator == nullptr && driver->Expired(round))
      break;
  }
  return absl::OkStatus();
}

// Exact block gaps at the iterate: they refresh every estimate, and without
// averaging they are also the certificate.
absl::StatusOr<DualityGap> BcfwRun::RefreshBlockGaps() {
  const int threads = shared_.NumThreads();
  auto read_state = [this](int i) { return shared_.states.Read(i); };
  DualityGap at_iterate;
  if (shared_.distribution.communicator == nullptr) {
    at_iterate = ComputeBlockGaps(
        shared_.problem, shared_.w.data(),
        shared_.ell - shared_.boxes.Term(shared_.lambda, false),
        shared_.ell_block.data(), read_state, shared_.lambda, threads,
        &exact_block_gaps_, &shared_.state_dots);
  } else {
    absl::StatusOr<DualityGap> gap = ComputeBlockGaps(
        shared_.problem, shared_.w.data(),
        shared_.ell - shared_.boxes.Term(shared_.lambda, false),
        shared_.ell_block.data(), read_state, shared_.lambda, threads,
        shared_.distribution, &exact_block_gaps_, &shared_.state_dots);
    if (!gap.ok()) return gap.status();
    at_iterate = *gap;
  }
  shared_.state_dots_steps = shared_.steps;
  shared_.exact_gaps_steps = shared_.steps;
  shared_.oracle_calls += shared_.n;
  double sum = 0;
  for (int i = 0; i < shared_.n; ++i) {
    shared_.SetBlockGap(i, exact_block_gaps_[i]);
    sum += shared_.block_gap[i];
  }
  shared_.cache_global_gap = sum;
  return at_iterate;
}

absl::StatusOr<PassEnd> BcfwRun::EndPass(const PassEndRequest& request,
                                         PassRecord* record) {
  const double estimate = shared_.GapEstimate();
  // As the reference code does: a small gap estimate triggers an exact
  // check at once (estimates are stale, so 80% of the tolerance). The
  // relative tolerance reads the primal the estimate implies at the
  // iterate, its dual plus the estimate.
  bool estimate_converged = false;
  if (shared_.refresh_block_gaps && shared_.num_unvisited == 0) {
    const SolverConfig& config = shared_.config;
    double primal = 0;
    if (config.relative_gap_tolerance() > 0) {
      primal =
          shared_.ell - shared_.boxes.Term(shared_.lambda, false) -
          0.5 * shared_.lambda * SquaredNorm(shared_.w.data(), shared_.dim) +
          estimate;
    }
    estimate_converged =
        GapWithinTolerance(config, estimate / 0.8, primal) != GapStop::kNone;
  }
  const bool confirm = shared_.config.exact_gap_when_converged();
  const bool check_gap =
      request.gap_check_due || (estimate_converged && confirm);
  PassEnd end;
  // The heuristic stop trusts the stale estimates (no exact pass).
  end.estimate_converged = estimate_converged && !confirm;
  if (check_gap && shared_.refresh_block_gaps) {
    absl::StatusOr<DualityGap> at_iterate = RefreshBlockGaps();
    if (!at_iterate.ok()) return at_iterate.status();
    if (!shared_.averaging) end.certificate = *at_iterate;
  }
  // w̄ is formed only when something reads it (the box term reads v̄); its
  // dual is logged whenever it is formed.
  const bool need_point = check_gap || request.last_pass ||
                          !shared_.boxes.empty() || request.evaluation_due;
  const double* point = need_point ? ReturnedPoint().data() : nullptr;
  if (!distribution_status_.ok()) return distribution_status_;
  const double ell =
      (shared_.averaging ? shared_.block_average.Ell(shared_.ell, shared_.steps)
                         : shared_.ell) -
      shared_.boxes.Term(shared_.lambda, shared_.averaging);
  if (check_gap) {
    if (shared_.averaging || !shared_.refresh_block_gaps) {
      const int threads = shared_.NumThreads();
      if (shared_.distribution.communicator == nullptr) {
        end.certificate = ComputeDualityGap(shared_.problem, point, ell,
                                            shared_.lambda, threads);
      } else {
        absl::StatusOr<DualityGap> gap =
            ComputeDualityGap(shared_.problem, point, ell, shared_.lambda,
                              threads, shared_.distribution);
        if (!gap.ok()) return gap.status();
        end.certificate = *gap;
      }
      shared_.oracle_calls += shared_.n;
    }
  } else {
    // The dual at w̄ needs w̄: between reads, averaging logs none.
    if (need_point || !shared_.averaging) {
      const double norm =
          SquaredNorm(need_point ? point : shared_.w.data(), shared_.dim);
      record->set_dual(ell - 0.5 * shared_.lambda * norm);
    }
    // The block-gap estimates are at the iterate, not at w̄.
    if (shared_.num_unvisited == 0 && !shared_.averaging) {
      record->set_gap(estimate);
      record->set_gap_exact(false);
    }
  }
  if (shared_.use_cache && shared_.pass_draws > 0) {
    record->set_cache_hit_rate(static_cast<double>(shared_.pass_hits) /
                               shared_.pass_draws);
  }
  if (shared_.track_alpha) {
    int64_t active = 0;
    for (const CornerStore& store : shared_.corners)
      active += store.NumActive();
    record->set_mean_active_set_size(static_cast<double>(active) / shared_.n);
  }
  return end;
}

absl::StatusOr<TrainingSummary> BcfwSolver::Solve(const Problem& problem,
                                                  Monitor* monitor,
                                                  std::vector<double>* w_out) {
  BcfwRun run(config_, problem);
  run.set_invariants_output(invariants_);
  if (distribution_.communicator != nullptr) {
    run.set_distribution(distribution_);
  }
  return run.Solve(monitor, w_out);
}

}  // namespace chaintag
