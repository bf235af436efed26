// The solver registry: builds a Solver from a SolverConfig by name (bcfw,
// active_set_bcfw, fw, ssg, mp_bcfw, svrg, casimir_svrg). Its own target, so
// that depending on the Solver interface does not pull in every solver.
//
// Example: BCFW with pairwise steps and gap sampling on any Problem
// (solvers/problem.h; a chain's is models/chain_problem.h):
//
//   SolverConfig config;
//   config.set_name("bcfw");
//   config.set_lambda(1e-3);
//   config.set_sampling(SolverConfig::GAP);
//   config.mutable_bcfw()->set_step(SolverConfig::PAIRWISE);
//   absl::StatusOr<std::unique_ptr<Solver>> solver = CreateSolver(config);
//   if (!solver.ok()) return solver.status();  // unknown name, bad options
//   std::vector<double> w;
//   absl::StatusOr<TrainingSummary> summary =
//       (*solver)->Solve(problem, /*monitor=*/nullptr, &w);
//   if (!summary.ok()) return summary.status();
//   // w: problem.Dim() weights; summary->gap() bounds how far their
//   // objective is above the optimum.
//
// Thread-safety: a stateless function.

#ifndef CHAINTAG_SOLVERS_REGISTRY_H_
#define CHAINTAG_SOLVERS_REGISTRY_H_

#include <memory>

#include "absl/status/statusor.h"
#include "solvers/solver.h"
#include "solvers/solver_config.pb.h"

namespace chaintag {

// The named solver's own options that need no data (svrg's and
// casimir_svrg's step size, κ and smoothing), for a caller to refuse a
// config before it reads a corpus; CreateSolver checks them too.
absl::Status CheckSolverOptions(const SolverConfig& config);

// Checks the config's generic fields (λ, passes, gap cadence, boxes) and
// builds the named solver.
absl::StatusOr<std::unique_ptr<Solver>> CreateSolver(
    const SolverConfig& config);

}  // namespace chaintag

#endif  // CHAINTAG_SOLVERS_REGISTRY_H_
