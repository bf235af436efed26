// Solver: the interface every structured-SVM solver implements (the
// registry that builds one by name is solvers/registry.h).
//
// Thread-safety: a Solver is used by one thread at a time; it may use
// worker threads internally (config.num_threads) for batch passes.

#ifndef CHAINTAG_SOLVERS_SOLVER_H_
#define CHAINTAG_SOLVERS_SOLVER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "solvers/duality_gap.h"
#include "solvers/monitor.h"
#include "solvers/problem.h"
#include "solvers/solver_config.pb.h"

namespace chaintag {

class Solver {
 public:
  virtual ~Solver() = default;

  // Minimises the objective of `problem`. On success `w` holds the returned
  // weights: Dim() entries, or one per free coordinate on a problem that
  // fixes the others at 0 (Problem::FreeCoordinates, which only solvers
  // that support it accept). `monitor` receives a record per pass, and its
  // evaluations w in the same form.
  virtual absl::StatusOr<TrainingSummary> Solve(const Problem& problem,
                                                Monitor* monitor,
                                                std::vector<double>* w) = 0;

  // Distributed training (duality_gap.h's BlockDistribution): Solve's
  // problem is then this process's ShardProblem, and every rank gets the
  // same w as one process would. Solvers that cannot run distributed
  // refuse (the default).
  virtual absl::Status SetDistribution(const BlockDistribution& distribution);
};

// λ as the config resolves it for `num_examples`: lambda when set, else
// 1/(c·n) or 2·c2/n (the peers' per-sum forms), else 1/n.
double ResolveLambda(const SolverConfig& config, int num_examples);
// The ℓ1 weight: l1 when set, else c1/n (CRFsuite's c1), else 0.
double ResolveL1(const SolverConfig& config, int num_examples);
// How ResolveLambda chose λ, in words, for the log and the model's summary
// ("lambda = 1/(C·n), C = 1 (CRF++'s -c), n = 8936").
std::string LambdaRule(const SolverConfig& config, int num_examples);
// Refuses a config that sets λ two ways (lambda with c or c2, or both c and
// c2), a negative or non-finite λ, c, c2, c1 or l1, non-finite tolerances or
// time budget, or num_threads outside [1, kMaxThreads] (base/parallel.h).
absl::Status CheckSolverSettings(const SolverConfig& config);
// λ (or ℓ1) stated one way by an override (`train --set` or a flag,
// Python's overrides) replaces the `file`'s other ways of stating it:
// `--lambda=1e-4` on a preset with `c: 0.1` means λ = 1e-4, `--c2=1` on it
// CRFsuite's c2 = 1. A field counts as overridden when `solver` differs
// from `file` there.
void KeepOverriddenLambdaForm(const SolverConfig& file, SolverConfig* solver);
// Whether the config's solver keeps its vectors over a problem's free
// coordinates (Problem::FreeCoordinates) itself: lbfgs and sag. The others
// minimise over every coordinate of the problem they are given (the
// registry refuses them one with free coordinates); a chain restricted to
// its observed labels is given to them with its free coordinates made its
// space (ChainProblem::MakeFreeCoordinatesTheSpace).
bool KeepsFreeCoordinates(const SolverConfig& config);
// Whether the named solver's passes (its progress lines, a summary's
// passes()) are epochs of two passes over the data each: svrg and
// casimir_svrg, whose max_passes counts passes over the data.
bool PassesAreEpochs(const std::string& solver_name);
// Whether the config's solver reports a duality gap, which its tolerances
// can stop on: every solver but ssg, and svrg and casimir_svrg only on the
// smooth LOG_SUM_EXP objective (the others keep no dual).
bool HasDualityGap(const SolverConfig& config);

// Which tolerance an exact gap meets, if any: the absolute gap_tolerance
// first, then relative_gap_tolerance · primal.
enum class GapStop { kNone, kAbsolute, kRelative };
GapStop GapWithinTolerance(const SolverConfig& config, double gap,
                           double primal);

// Copies an exact duality gap (with its primal and dual) into a pass record,
// marked exact, or into a run's summary.
void SetCertificate(const DualityGap& gap, PassRecord* record);
void SetCertificate(const DualityGap& gap, TrainingSummary* summary);

}  // namespace chaintag

#endif  // CHAINTAG_SOLVERS_SOLVER_H_
