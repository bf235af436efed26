#include "solvers/registry.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "solvers/bcfw.h"
#include "solvers/casimir_svrg.h"
#include "solvers/fw.h"
#include "solvers/lbfgs.h"
#include "solvers/mp_bcfw.h"
#include "solvers/sag.h"
#include "solvers/ssg.h"

namespace chaintag {
namespace {

// A solver of every coordinate, which refuses a problem that fixes some at
// 0 (Problem::FreeCoordinates) instead of minimising over them too.
class WholeSpaceSolver : public Solver {
 public:
  WholeSpaceSolver(std::unique_ptr<Solver> solver, std::string name)
      : solver_(std::move(solver)), name_(std::move(name)) {}

  absl::StatusOr<TrainingSummary> Solve(const Problem& problem,
                                        Monitor* monitor,
                                        std::vector<double>* w) override {
    if (problem.FreeCoordinates(nullptr)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "solver ", name_,
          " minimises over every weight; this problem has features for some "
          "only: give it the problem with its free coordinates as its "
          "space, or use solver lbfgs or sag"));
    }
    return solver_->Solve(problem, monitor, w);
  }

  absl::Status SetDistribution(const BlockDistribution& distribution) override {
    return solver_->SetDistribution(distribution);
  }

 private:
  std::unique_ptr<Solver> solver_;
  const std::string name_;
};

absl::StatusOr<std::unique_ptr<Solver>> CreateNamedSolver(
    const SolverConfig& config) {
  if (config.name() == "sag") {
    return std::unique_ptr<Solver>(new SagSolver(config));
  }
  if (config.name() == "lbfgs") {
    return std::unique_ptr<Solver>(new LbfgsSolver(config));
  }
  if (config.name() == "bcfw" || config.name() == "active_set_bcfw") {
    return std::unique_ptr<Solver>(new BcfwSolver(config));
  }
  if (config.name() == "fw") {
    return std::unique_ptr<Solver>(new FwSolver(config));
  }
  if (config.name() == "ssg") {
    return std::unique_ptr<Solver>(new SsgSolver(config));
  }
  if (config.name() == "mp_bcfw") {
    return std::unique_ptr<Solver>(new MpBcfwSolver(config));
  }
  if (config.name() == "svrg" || config.name() == "casimir_svrg") {
    return std::unique_ptr<Solver>(new CasimirSvrgSolver(config));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown solver \"", config.name(),
                   "\" (known: bcfw, active_set_bcfw, fw, ssg, mp_bcfw, sag, "
                   "lbfgs, svrg, casimir_svrg)"));
}

}  // namespace

absl::Status CheckSolverOptions(const SolverConfig& config) {
  if (PassesAreEpochs(config.name())) return CheckSvrgOptions(config);
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Solver>> CreateSolver(
    const SolverConfig& config) {
  if (config.lambda() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("solver.lambda must be positive (or 0 for 1/n), got ",
                     config.lambda()));
  }
  if (config.max_passes() <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "solver.max_passes must be positive, got ", config.max_passes()));
  }
  if (config.gap_check() <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "solver.gap_check must be positive, got ", config.gap_check()));
  }
  if (config.bcfw().box_size() > 0 && config.name() != "bcfw" &&
      config.name() != "active_set_bcfw") {
    return absl::InvalidArgumentError(absl::StrCat(
        "solver ", config.name(),
        " does not support box constraints (bcfw and active_set_bcfw do)"));
  }
  if (config.objective() == SolverConfig::LOG_SUM_EXP &&
      config.name() != "sag" && config.name() != "lbfgs" &&
      config.name() != "svrg" && config.name() != "casimir_svrg") {
    return absl::InvalidArgumentError(absl::StrCat(
        "solver ", config.name(),
        " minimises the max-margin objective; the LOG_SUM_EXP objective "
        "(model.loss LOG or SOFTMAX_MARGIN) is solved by sag, lbfgs, svrg "
        "and casimir_svrg"));
  }
  if ((config.l1() != 0 || config.c1() != 0) && config.name() != "sag" &&
      config.name() != "lbfgs") {
    return absl::InvalidArgumentError(
        absl::StrCat("solver ", config.name(), " does not support solver.l1 (",
                     config.l1(), ") or c1 (", config.c1(),
                     "): the elastic net is solved by sag and "
                     "lbfgs"));
  }
  absl::Status options = CheckSolverOptions(config);
  if (!options.ok()) return options;
  absl::StatusOr<std::unique_ptr<Solver>> solver = CreateNamedSolver(config);
  if (!solver.ok() || KeepsFreeCoordinates(config)) {
    return solver;
  }
  return std::unique_ptr<Solver>(
      new WholeSpaceSolver(*std::move(solver), config.name()));
}

}  // namespace chaintag
