// The regularization path of the structured SVM (Osokin et al. 2016, §4,
// Algorithms 6–7, as the reference gapBCFW code runs it): solutions w_J at a
// decreasing sequence of breakpoints λ_0 = λ∞ > λ_1 > …, each ε-approximate
// (duality gap ≤ ε) on its whole segment [λ_{J+1}, λ_J], so that λ can be
// chosen on dev data from one run instead of a grid of cold solves.
//
// One BCFW dual state travels down the path (bcfw_run.h). At λ_J, with
// Δ_i = ℓ_i − λ_J⟨w_i, w⟩, keeping w while λ shrinks to ρλ_J grows the gap
// linearly, by (1 − ρ)ΣΔ_i; the largest step that keeps it within ε is
// ρ = 1 − (ε − Σg_i)/ΣΔ_i, and when ΣΔ_i ≤ ε − Σg_i the current w is
// ε-approximate for every smaller λ and the path ends. At λ_{J+1} the
// solver warm-starts from the rescaled dual ("keep_primal") and runs to κε.
//
// The grid-search baseline solves the same problem at given λ values (the
// paper's 2^15 … 2^-15), cold or warm-started the same way.
//
// Requirements: L_i(y_i) = 0 for every block (checked); a solver of the
// bcfw family ("bcfw" with any step, sampling or cache, or
// "active_set_bcfw"); no box constraints; the iterate, not the weighted
// average, is what travels (weighted_averaging is turned off, as the
// reference code never averages).
//
// Thread-safety: the functions are reentrant; callbacks run on the calling
// thread.

#ifndef CHAINTAG_SOLVERS_REGULARIZATION_PATH_H_
#define CHAINTAG_SOLVERS_REGULARIZATION_PATH_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "solvers/duality_gap.h"
#include "solvers/problem.h"
#include "solvers/solver_config.pb.h"

namespace chaintag {

// Appended to the stop_reason of the point where max_seconds ended a path.
constexpr char kPathTimeBudgetSpent[] = "; the path's max_seconds";

// One solution on the path or the grid.
struct PathPoint {
  int index = 0;      // J; 0 is λ∞ on a path
  double lambda = 0;  // λ_J, where w_J was solved
  // The segment's lower end λ_{J+1}: w_J is ε-approximate on
  // [lambda_end, lambda]. 0 when it is so for every smaller λ. (Grid
  // points: equal to lambda.)
  double lambda_end = 0;
  double gap = 0;  // at λ_J: exact, or the block-gap estimate
  bool gap_exact = false;
  // ℓ = Σ_i ℓ_i at λ_J: with w_J it gives the dual at any λ of the segment,
  // ℓ·λ/λ_J − λ/2‖w_J‖² (see GapOnSegment).
  double ell = 0;
  double cumulative_passes = 0;  // effective passes since the start
  double seconds = 0;            // since the start
  int inner_passes = 0;          // passes of this point's own solve
  std::string stop_reason;       // of this point's solve
};

// Receives each point with its weights (Dim() entries) as soon as it is
// final. A non-OK status stops the run and is returned.
using PathCallback =
    std::function<absl::Status(const PathPoint&, const std::vector<double>&)>;

// Runs the path with `config` (its `path` field, and the inner solver's
// options; gap_tolerance is replaced by κε, the seed of breakpoint J is
// seed + J). max_seconds, when set, is the whole path's budget (each
// breakpoint's solve is held to it too): no solve starts past it, and the
// last point says so in its stop_reason. Returns the points in order.
absl::StatusOr<std::vector<PathPoint>> RunRegularizationPath(
    const Problem& problem, const SolverConfig& config,
    const PathCallback& callback);

// Solves at each of `lambdas` (in the given order) to config.gap_tolerance,
// from scratch or warm-started from the previous solution (the path's
// rescaling). Effective passes accumulate over the grid.
absl::StatusOr<std::vector<PathPoint>> RunGridSearch(
    const Problem& problem, const SolverConfig& config,
    const std::vector<double>& lambdas, bool warm_start,
    const PathCallback& callback);

// 2^high, 2^(high−1), …, 2^low.
std::vector<double> PowersOfTwo(int high, int low);

// The duality gap at `lambda` of the path point (`w`, `point`), recomputed
// from scratch with one oracle pass: the dual point is the point's α
// rescaled towards the gold labelings, ℓ·λ/λ_J with the same w.
DualityGap GapOnSegment(const Problem& problem, const PathPoint& point,
                        const std::vector<double>& w, double lambda,
                        int num_threads);

}  // namespace chaintag

#endif  // CHAINTAG_SOLVERS_REGULARIZATION_PATH_H_
