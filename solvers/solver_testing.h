// Helpers shared by the solver tests: the random multiclass problem they
// train on, the optimum a tightly converged BCFW run certifies, a solve
// that reports the point its monitor evaluates, and the check that a log's
// exact gaps are certificates.

#ifndef CHAINTAG_SOLVERS_SOLVER_TESTING_H_
#define CHAINTAG_SOLVERS_SOLVER_TESTING_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "solvers/duality_gap.h"
#include "solvers/multiclass_problem_testing.h"
#include "solvers/problem.h"
#include "solvers/registry.h"
#include "solvers/solver.h"
#include "solvers/solver_config.pb.h"

namespace chaintag {

// `n` examples with `features` inputs each, drawn from N(0, 1) by
// std::mt19937(seed) in example order; example i has gold class
// i % `classes`.
MulticlassProblem RandomMulticlassProblem(int n, int features, int classes,
                                          uint32_t seed);

// The optimum of `problem` at `lambda`, from BCFW (no averaging) run to a
// 1e-10 duality gap. Adds a test failure when the run fails or stops on
// anything but the gap tolerance.
double ReferencePrimal(const Problem& problem, double lambda);

// Checks a solve of the one-example problem MulticlassProblem({{1.0}}, {0}, 2)
// at `lambda` against its hand-computed optimum (to 1e-12): with
// w = a·(1, -1), P(a) = λa² + max(0, 1 − 2a), so a = 1/2, P* = λ/4 for
// λ ≤ 2 and a = 1/λ, P* = 1 − 1/λ for λ > 2; the dual must equal P* and
// the run must stop on the gap tolerance. Fatal if w is not of size 2.
void ExpectOneExampleOptimum(double lambda, const std::vector<double>& w,
                             const TrainingSummary& summary);

// Solves the 20-example RandomMulticlassProblem(20, 4, 3, 2) with `config`
// and a 1e-9 s budget through CreateSolver, and checks that the run stops
// after its first pass with reason "max_seconds" and a full-size w.
// Returns the summary for solver-specific checks.
TrainingSummary ExpectStopsOnTheTimeBudget(SolverConfig config);

// Solves `problem` with `config` through CreateSolver into `w`, with a
// monitor whose evaluator, run after the last pass, copies the point it is
// given into `evaluated` (the w a held-out evaluation would read).
absl::StatusOr<TrainingSummary> SolveReportingLastPoint(
    const Problem& problem, const SolverConfig& config, std::vector<double>* w,
    std::vector<double>* evaluated);

// Adds a test failure unless every record with an exact gap is a
// certificate: gap ≥ -1e-12 and primal − dual = gap (to 1e-12). Records
// without an exact gap are skipped.
void ExpectExactGapsAreCertificates(const std::vector<PassRecord>& records);

// The duality gap of P(w) = lambda/2||w||^2 + 1/n sum_i f_{i,mu}(w) with
// entropy smoothing (f_i = max_q <q, h_i> + mu H(q); with mu = 1 the CRF's
// log-loss on a loss-free problem, problem.h). Its dual at distributions
// q_i is D(q) = 1/n sum_i [<q_i, L_i> + mu H(q_i)] - lambda/2||w(q)||^2
// with w(q) = 1/(lambda n) sum_i E_{q_i} psi_i; taking q_i the smoothed
// oracle's distribution at w, <q_i, L_i> + mu H(q_i) = f_i(w) + <w, v_i>
// (v_i its block state), so one pass of smoothed oracles gives P, D and
// the gap P - D = lambda/2||w - w(q)||^2 = ||grad P(w)||^2/(2 lambda).
// Blocks are summed in index order, so the result does not depend on
// num_threads. The tests' reference for SvrgEpoch::Certify, which reads
// the same quantities off its full-gradient pass.
DualityGap SmoothedDualityGap(const Problem& problem, const double* w,
                              double lambda, const Smoothing& smoothing,
                              int num_threads);

// `n` examples of `features` inputs with two non-zero entries each (2·N(0,
// 1) at uniform positions, std::mt19937(seed)) and gold class i % classes:
// steps skip most coordinates, and the elastic net's optimum has zeros.
MulticlassProblem SparseMulticlassProblem(int n, int features, int classes,
                                          uint32_t seed);

// ∇f_i(w) of the CRF's log-loss (entropy smoothing at μ = 1), dense.
std::vector<double> SmoothGradient(const Problem& problem, int i,
                                   const std::vector<double>& w);

// P(w) = 1/n Σ_i log Σ_y exp(L_i(y) − ⟨w, ψ_i(y)⟩) + λ/2‖w‖² + ℓ1‖w‖₁ by
// enumerating the classes.
double ElasticNetObjective(const MulticlassProblem& problem,
                           const std::vector<double>& w, double lambda,
                           double l1);

// The elastic-net optimum of that P by proximal gradient descent on the
// whole sum (ISTA, step 0.2), run until its steps bound the distance to it
// by 1e-12 (at most 20,000 steps).
std::vector<double> ElasticNetOptimum(const Problem& problem, double lambda,
                                      double l1);

}  // namespace chaintag

#endif  // CHAINTAG_SOLVERS_SOLVER_TESTING_H_
