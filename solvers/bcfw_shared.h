// BcfwShared: the data of one BCFW run (bcfw_run.h) that its parts share,
// and the types they pass each other. BcfwRun owns it; BcfwBlockSteps (the
// step on one block) and BcfwRounds (mini-batch rounds) hold a reference.
// Keeping the data in one plain struct lets each part be a small class
// with one concern, while a checkpoint still saves one state.
//
// Thread-safety: as its owner's; the parts document which fields their
// threads write.

#ifndef CHAINTAG_SOLVERS_BCFW_SHARED_H_
#define CHAINTAG_SOLVERS_BCFW_SHARED_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "base/random.h"
#include "solvers/bcfw_internal.h"
#include "solvers/block_average.h"
#include "solvers/block_states.h"
#include "solvers/box_constraints.h"
#include "solvers/corner_store.h"
#include "solvers/duality_gap.h"
#include "solvers/problem.h"
#include "solvers/round_merge.h"
#include "solvers/solver.h"
#include "solvers/solver_config.pb.h"
#include "solvers/sum_tree.h"

namespace chaintag {

// A block move dv_i = sum_k c_k*psi_i(y_k) + c_state*v_i with
// sum c_k + c_state = 0 (so alpha stays on the simplex). FW: c_s = g,
// c_state = -g. Pairwise: c_s = g, c_a = -g. Away: c_a = -g, c_state = g.
// Fully corrective: c_k = d alpha_k.
struct BcfwMove {
  std::vector<int> entries;  // store indices, or -1 for the oracle corner
  std::vector<double> coefficients;
  double state_coefficient = 0;
  void Clear() {
    entries.clear();
    coefficients.clear();
    state_coefficient = 0;
  }
  void Add(int entry, double c) {
    entries.push_back(entry);
    coefficients.push_back(c);
  }
};

// The oracle side of one block step, computed at the round's w
// (BcfwBlockSteps::ComputeBlockOracle): what the step then needs.
struct BcfwBlockOracle {
  OracleResult oracle;  // the max oracle's corner, unless a cache hit
  std::vector<const Corner*> corner_pointers;
  std::vector<double> scores;  // the stored corners' <w, psi_i(y)>
  double state_dot = 0;        // <v_i, w>
  int cache_hit = -1;          // the store index of a cached FW corner
  double cache_gap = 0;        // its block gap
  // Rounds of tau > 1: the step chosen from these (at the round's w), its
  // FW corner's store index and block gap, and the step's linear dual
  // change per unit (the derivative the round's joint line search uses).
  BcfwMove move;
  int fw_entry = -1;
  double fw_gap = 0;
  double slope = 0;
  // Whether the step moves (so has a delta), its change of l per unit,
  // and its change of w per unit, dw = dv/(lambda n), in the problem's
  // encoding, located for the round's merge: what a round sums, and what
  // a distributed run's ranks exchange.
  bool moves = false;
  double ell_slope = 0;
  LocatedDelta located;
  // The fully corrective inner solve's scratch.
  std::vector<int> inner_active;
  std::vector<double> inner_alpha, inner_gradient, inner_delta;
};

struct BcfwShared {
  BcfwShared(const SolverConfig& solver_config, const Problem& run_problem)
      : config(solver_config),
        problem(run_problem),
        n(run_problem.NumExamples()),
        dim(run_problem.Dim()),
        lambda(ResolveLambda(solver_config, n)),
        averaging(solver_config.weighted_averaging()),
        fully_corrective(solver_config.name() == "active_set_bcfw"),
        step(fully_corrective ? SolverConfig::FW : solver_config.bcfw().step()),
        track_alpha(fully_corrective || step != SolverConfig::FW),
        use_cache(solver_config.bcfw().cache()),
        keep_corners(track_alpha || use_cache),
        keep_dots(fully_corrective || (use_cache && !track_alpha)),
        gap_sampling(solver_config.sampling() == SolverConfig::GAP),
        refresh_block_gaps(gap_sampling || use_cache),
        random(solver_config.seed()),
        minibatch(std::max(1, solver_config.minibatch())),
        block_average(run_problem, states) {}

  // alpha_i concentrated on the gold labelings: w = 0, every gap unknown.
  // The large arrays are faulted in on the threads.
  void Initialize();

  // solver.num_threads, at least one.
  int NumThreads() const { return std::max(1, config.num_threads()); }
  // RangeGranularity(problem), computed on first use (it costs a look at
  // every block's ranges).
  int64_t Granularity() {
    if (granularity == 0) granularity = RangeGranularity(problem, NumThreads());
    return granularity;
  }
  // Whether block i's store holds all of its alpha, so that
  // v_i = sum_k alpha_k psi_k over the stored corners: always with active
  // sets; with FW steps and the cache until a full store evicts a corner
  // with alpha > 0 (its mass then lives only in the state), and again after
  // a full step.
  bool AlphaComplete(int i) const {
    return track_alpha || (!alpha_complete.empty() && alpha_complete[i]);
  }
  // Whether this process computes block i (always, unless distributed).
  bool IsLocal(int i) const {
    return distribution.communicator == nullptr ||
           (i >= distribution.shard.begin && i < distribution.shard.end);
  }
  void SetBlockGap(int i, double gap) {
    if (block_gap[i] == bcfw_internal::kInfinity) --num_unvisited;
    block_gap[i] = std::max(gap, 0.0);
    if (gap_sampling) gap_tree.Set(i, block_gap[i]);
  }
  double GapEstimate() const {
    double sum = 0;
    for (double g : block_gap) sum += g;
    return sum;
  }

  // Settings.
  const SolverConfig config;
  const Problem& problem;
  const int n;
  const int64_t dim;
  double lambda;
  const bool averaging;
  const bool fully_corrective;
  const SolverConfig::Step step;
  const bool track_alpha;  // alpha per corner is authoritative (active sets)
  const bool use_cache;
  const bool keep_corners;
  // The stored corners keep their inner products (StoredCorner::dots):
  // fully-corrective moves need them, and FW steps with the cache read
  // ||v_i - psi_i(y)||^2 from them while AlphaComplete.
  const bool keep_dots;
  const bool gap_sampling;
  // Block-gap estimates kept and refreshed by exact passes (gap sampling,
  // caches, and runs that a regularization path warm-starts).
  bool refresh_block_gaps;
  SolverRandom random;
  const int minibatch;  // tau
  // A distributed run (BcfwRun::set_distribution); no communicator
  // otherwise.
  BlockDistribution distribution;
  int64_t granularity = 0;  // see Granularity

  // Dual iterate: w = sum_i w_i, l = sum_i l_i, block states v_i
  // (w_i = v_i/(lambda n)), held sparsely (block_states.h).
  std::vector<double> w;
  double ell = 0;
  std::vector<double> ell_block;
  BlockStates states;
  int64_t steps = 0;
  // Weighted averaging, per block (see bcfw.h).
  BlockAverage block_average;
  // Box constraints: the boxed coordinates of w hold the truncation of
  // v = A*alpha, whose own values the boxes keep.
  BoxConstraints boxes;
  std::vector<CornerStore> corners;
  // Per block (FW steps with the cache): see AlphaComplete.
  std::vector<char> alpha_complete;

  // Stale block-gap estimates g_i (+inf until the block's first oracle
  // call), refreshed by oracle calls and exact passes, never by cache hits.
  std::vector<double> block_gap;
  int num_unvisited = 0;
  int next_unvisited = 0;
  SumTree gap_tree{0};
  double cache_global_gap = 1;  // G of the hit test: last exact gap
  std::vector<int> order;       // this pass's permutation

  int64_t oracle_calls = 0;
  // <v_i, w> from the last exact gap pass, valid while no step has moved w
  // since (state_dots_steps == steps).
  std::vector<double> state_dots;
  int64_t state_dots_steps = -1;
  int64_t exact_gaps_steps = -1;  // steps at the last exact gap pass
  // <v_i, w> at block i's last visit (before its step).
  std::vector<double> visit_state_dots;
  int64_t pass_draws = 0;
  int64_t pass_hits = 0;
};

}  // namespace chaintag

#endif  // CHAINTAG_SOLVERS_BCFW_SHARED_H_
