// The exact duality gap of a structured SVM at a dual-feasible point, which
// certifies how far the primal value is from the optimum. One loss-augmented
// oracle call per example, run in parallel and reduced in example order.
//
// Thread-safety: stateless functions.

#ifndef CHAINTAG_SOLVERS_DUALITY_GAP_H_
#define CHAINTAG_SOLVERS_DUALITY_GAP_H_

#include <cstdint>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "base/communicator.h"
#include "solvers/problem.h"

namespace chaintag {

struct DualityGap {
  double primal = 0;  // λ/2‖w‖² + 1/n Σ_i H_i(w)
  double dual = 0;    // ℓ − λ/2‖w‖²
  double gap = 0;     // primal − dual
};

double SquaredNorm(const double* w, int64_t dim);

// The certificate of a smooth objective P(w) = 1/n Σ_i f_i(w) + λ/2‖w‖² +
// ℓ1‖w‖₁ (docs/solvers.md): P from loss_sum = Σ_i f_i(w), and the dual of
// the gradients v_i = ∇f_i(w_i) taken at points w_i,
//   D = term_sum/n − Σ_j max(|ḡ_j| − ℓ1, 0)²/(2λ),
// term_sum = Σ_i f_i(w_i) − ⟨w_i, v_i⟩, ḡ = 1/n Σ_i v_i given as
// gradient_scale · gradient[j]. The losses are non-negative (the CRF's and
// softmax-margin's are), so f_i*(0) ≤ 0 and the scaled gradients s·v_i,
// s in [0, 1], have the dual D(s) ≥ s·term_sum/n − Σ_j max(s|ḡ_j| − ℓ1,
// 0)²/(2λ): the certificate takes the best s. Far from the optimum, where
// ḡ is still large next to λ, this is far above D(1); at the optimum s = 1.
DualityGap SmoothCertificate(const double* w, int64_t dim, double loss_sum,
                             double term_sum, int n, const double* gradient,
                             double gradient_scale, double lambda, double l1);

// 1/n Σ_i H_i(w): the average structured hinge loss.

double AverageHingeLoss(const Problem& problem, const double* w,
                        int num_threads);

// The gap at (w, ℓ), valid when w = Σ_i w_i and ℓ = Σ_i ℓ_i come from one
// dual-feasible α (as BCFW's iterates and their weighted averages do).
DualityGap ComputeDualityGap(const Problem& problem, const double* w,
                             double ell, double lambda, int num_threads);

// Block i's state v_i, dense; called on the threads, each block once.
using StateReader = absl::FunctionRef<const double*(int i)>;

// The gap at a block-coordinate iterate (w, ℓ) whose blocks have states v_i
// (`state`) and loss terms ℓ_i, plus each block's
// own gap g_i = λ⟨w_i − w_s, w⟩ − ℓ_i + ℓ_s at w (unclipped; Σ g_i = gap
// when w = Σ w_i), and, when `state_dots` is non-null, each ⟨v_i, w⟩. One
// oracle call per block, as ComputeDualityGap.
DualityGap ComputeBlockGaps(const Problem& problem, const double* w, double ell,
                            const double* ell_block, StateReader state,
                            double lambda, int num_threads,
                            std::vector<double>* block_gaps,
                            std::vector<double>* state_dots = nullptr);

// A distributed run's blocks: this process computes the per-block values of
// blocks [shard.begin, shard.end) (of a ShardProblem), and every rank
// gathers all of them and reduces them in example order, so that every
// rank, and a run in one process, gets the same numbers to the bit.
struct BlockDistribution {
  Communicator* communicator = nullptr;
  BlockShard shard;
};

// values[shard.begin, shard.end) of every rank into values[0, n).
absl::Status GatherBlockValues(const BlockDistribution& distribution,
                               std::vector<double>* values);

// ComputeDualityGap and ComputeBlockGaps over a distributed run's blocks.
absl::StatusOr<DualityGap> ComputeDualityGap(
    const Problem& problem, const double* w, double ell, double lambda,
    int num_threads, const BlockDistribution& distribution);
absl::StatusOr<DualityGap> ComputeBlockGaps(
    const Problem& problem, const double* w, double ell,
    const double* ell_block, StateReader state, double lambda, int num_threads,
    const BlockDistribution& distribution, std::vector<double>* block_gaps,
    std::vector<double>* state_dots);

}  // namespace chaintag

#endif  // CHAINTAG_SOLVERS_DUALITY_GAP_H_
