#include "solvers/solver.h"

#include <cmath>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/parallel.h"

namespace chaintag {

absl::Status Solver::SetDistribution(const BlockDistribution&) {
  return absl::UnimplementedError(
      "only bcfw and active_set_bcfw train distributed");
}

double ResolveLambda(const SolverConfig& config, int num_examples) {
  if (config.lambda() > 0) return config.lambda();
  const double n = num_examples > 0 ? num_examples : 1.0;
  if (config.c() > 0) return 1.0 / (config.c() * n);
  if (config.c2() > 0) return 2.0 * config.c2() / n;
  return 1.0 / n;
}

double ResolveL1(const SolverConfig& config, int num_examples) {
  if (config.l1() > 0 || config.c1() <= 0) return config.l1();
  return config.c1() / (num_examples > 0 ? num_examples : 1);
}

std::string LambdaRule(const SolverConfig& config, int num_examples) {
  if (config.lambda() > 0) return "lambda given";
  if (config.c() > 0) {
    return absl::StrFormat("lambda = 1/(C·n), C = %g (CRF++'s -c), n = %d",
                           config.c(), num_examples);
  }
  if (config.c2() > 0) {
    return absl::StrFormat("lambda = 2·c2/n, c2 = %g (CRFsuite's c2), n = %d",
                           config.c2(), num_examples);
  }
  return absl::StrFormat("lambda = 1/n (C = 1), n = %d", num_examples);
}

absl::Status CheckSolverSettings(const SolverConfig& config) {
  const std::pair<const char*, double> numbers[] = {
      {"lambda", config.lambda()},
      {"c", config.c()},
      {"c2", config.c2()},
      {"c1", config.c1()},
      {"l1", config.l1()},
      {"gap_tolerance", config.gap_tolerance()},
      {"relative_gap_tolerance", config.relative_gap_tolerance()},
      {"max_seconds", config.max_seconds()}};
  for (const auto& [name, value] : numbers) {
    // NaN compares false either way: refuse it rather than fall back to a
    // default as an unset field would.
    if (!std::isfinite(value)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "solver.", name, " must be a finite number, got ", value));
    }
  }
  if (config.max_seconds() < 0 || config.gap_tolerance() < 0 ||
      config.relative_gap_tolerance() < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "solver: max_seconds, gap_tolerance and relative_gap_tolerance must "
        "not be negative, got ",
        config.max_seconds(), ", ", config.gap_tolerance(), ", ",
        config.relative_gap_tolerance()));
  }
  if (config.num_threads() < 1 || config.num_threads() > kMaxThreads) {
    return absl::InvalidArgumentError(
        absl::StrCat("solver.num_threads must be between 1 and ", kMaxThreads,
                     ", got ", config.num_threads()));
  }
  if (config.lambda() < 0 || config.c() < 0 || config.c2() < 0 ||
      config.c1() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("solver: lambda, c, c2 and c1 must not be negative, got ",
                     config.lambda(), ", ", config.c(), ", ", config.c2(), ", ",
                     config.c1()));
  }
  if (config.l1() > 0 && config.c1() > 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("solver: set one of l1 and c1 (l1 = c1/n), got l1 ",
                     config.l1(), ", c1 ", config.c1()));
  }
  const int forms =
      (config.lambda() > 0) + (config.c() > 0) + (config.c2() > 0);
  if (forms > 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "solver: set one of lambda, c (lambda = 1/(C·n)) and c2 (lambda = "
        "2·c2/n), got lambda ",
        config.lambda(), ", c ", config.c(), ", c2 ", config.c2()));
  }
  return absl::OkStatus();
}

bool KeepsFreeCoordinates(const SolverConfig& config) {
  return config.name() == "lbfgs" || config.name() == "sag";
}

bool PassesAreEpochs(const std::string& solver_name) {
  return solver_name == "svrg" || solver_name == "casimir_svrg";
}

bool HasDualityGap(const SolverConfig& config) {
  if (config.name() == "ssg") return false;
  return !PassesAreEpochs(config.name()) ||
         config.objective() == SolverConfig::LOG_SUM_EXP;
}

void KeepOverriddenLambdaForm(const SolverConfig& file, SolverConfig* solver) {
  const bool lambda = file.lambda() != solver->lambda();
  const bool c = file.c() != solver->c();
  const bool c2 = file.c2() != solver->c2();
  if (lambda || c || c2) {
    if (!lambda) solver->clear_lambda();
    if (!c) solver->clear_c();
    if (!c2) solver->clear_c2();
  }
  const bool l1 = file.l1() != solver->l1();
  const bool c1 = file.c1() != solver->c1();
  if (l1 && !c1) solver->clear_c1();
  if (c1 && !l1) solver->clear_l1();
}

GapStop GapWithinTolerance(const SolverConfig& config, double gap,
                           double primal) {
  if (gap <= config.gap_tolerance()) return GapStop::kAbsolute;
  if (config.relative_gap_tolerance() > 0 &&
      gap <= config.relative_gap_tolerance() * primal) {
    return GapStop::kRelative;
  }
  return GapStop::kNone;
}

void SetCertificate(const DualityGap& gap, PassRecord* record) {
  record->set_primal(gap.primal);
  record->set_dual(gap.dual);
  record->set_gap(gap.gap);
  record->set_gap_exact(true);
}

void SetCertificate(const DualityGap& gap, TrainingSummary* summary) {
  summary->set_primal(gap.primal);
  summary->set_dual(gap.dual);
  summary->set_gap(gap.gap);
}

}  // namespace chaintag
