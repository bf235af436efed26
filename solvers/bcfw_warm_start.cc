// BcfwRun's warm starts down a regularization path (regularization_path.h):
// the start at given corners at λ∞, the block quantities Δ_i that tell how
// each block's gap grows as λ shrinks, and the move of the dual state to a
// smaller λ that keeps w.
//
// Thread-safety: BcfwRun's, one thread at a time; BlockDeltas' scoring pass
// runs on solver.num_threads threads.

#include <algorithm>
#include <vector>

#include "base/parallel.h"
#include "solvers/bcfw_internal.h"
#include "solvers/bcfw_run.h"
#include "solvers/corner_store.h"
#include "solvers/duality_gap.h"
#include "solvers/problem.h"

namespace chaintag {

using bcfw_internal::kInfinity;

void BcfwRun::InitializeAtCorners(double lambda,
                                  const std::vector<Corner>& corners,
                                  const std::vector<double>& block_gaps) {
  lambda_ = lambda;
  Initialize();
  ell_ = 0;
  const double c = 1.0 / (lambda_ * n_);
  for (int i = 0; i < n_; ++i) {
    const Corner& corner = corners[i];
    const double loss = problem_.Loss(i, corner);
    problem_.MixCorner(i, corner, 1.0, state(i));
    ell_block_[i] = loss / n_;
    ell_ += ell_block_[i];
    problem_.AddScaled(i, corner, c, w_.data());
    if (keep_corners_ && corner != problem_.GoldCorner(i)) {
      // The gold labeling stays in the store with α = 0, as the reference
      // code's path initialisation keeps it.
      CornerStore& store = corners_[i];
      store.entry(0).alpha = 0;
      std::vector<double> dots;
      if (keep_dots_) dots = CornerDots(i, corner);
      store.Add(corner, loss, 1.0, keep_dots_ ? &dots : nullptr);
    }
    SetBlockGap(i, block_gaps[i]);
  }
  cache_global_gap_ = GapEstimate();
  refresh_block_gaps_ = true;
}

double BcfwRun::BlockDeltas(std::vector<double>* deltas, bool allow_stale) {
  const bool fresh = state_dots_steps_ == steps_;
  if (!fresh && !allow_stale) {
    // ⟨v_i, w⟩ from one unary pass per block (no stored corners asked).
    state_dots_.resize(n_);
    ParallelFor(n_, NumThreads(), [&](int begin, int end) {
      for (int i = begin; i < end; ++i) {
        problem_.ScoreCorners(i, w_.data(), state(i), nullptr, 0, nullptr,
                              &state_dots_[i]);
      }
    });
    oracle_calls_ += n_;
    state_dots_steps_ = steps_;
  }
  const bool stale = !fresh && allow_stale;
  const std::vector<double>& dots = stale ? visit_state_dots_ : state_dots_;
  deltas->resize(n_);
  // Δ_i = ℓ_i − λ⟨w_i, w⟩ with w_i = v_i/(λn).
  for (int i = 0; i < n_; ++i) {
    (*deltas)[i] = ell_block_[i] - dots[i] / n_;
  }
  // ΣΔ_i = ℓ − λ⟨Σ w_i, w⟩ = ℓ − λ‖w‖², exact even when the Δ_i are stale.
  return ell_ - lambda_ * SquaredNorm(w_.data(), dim_);
}

void BcfwRun::ScaleLambda(double rho, const std::vector<double>& deltas,
                          bool gaps_exact) {
  lambda_ *= rho;
  ell_ *= rho;
  for (int i = 0; i < n_; ++i) {
    const Corner& gold = problem_.GoldCorner(i);
    // v_i ← ρv_i + (1−ρ)ψ_i(y_i): α moves to the gold labeling, so that
    // w_i = v_i/(λn) is unchanged and w with it.
    problem_.MixCorner(i, gold, 1.0 - rho, state(i));
    ell_block_[i] *= rho;
    if (keep_corners_) {
      CornerStore& store = corners_[i];
      int gold_entry = store.Find(gold);
      if (gold_entry < 0) {
        std::vector<double> dots;
        if (keep_dots_) dots = CornerDots(i, gold);
        gold_entry = store.Add(gold, problem_.Loss(i, gold), 0.0,
                               keep_dots_ ? &dots : nullptr);
      }
      double others = 0;
      for (int k = 0; k < store.size(); ++k) {
        if (k == gold_entry) continue;
        store.entry(k).alpha *= rho;
        others += store.entry(k).alpha;
      }
      store.entry(gold_entry).alpha = std::max(0.0, 1.0 - others);
    }
    if (block_gap_[i] != kInfinity) {
      const double delta = gaps_exact ? deltas[i] : std::max(deltas[i], 0.0);
      SetBlockGap(i, block_gap_[i] + (1.0 - rho) * delta);
    }
  }
  cache_global_gap_ = gaps_exact ? GapEstimate() : 0;
  state_dots_steps_ = -1;
  exact_gaps_steps_ = -1;
}

}  // namespace chaintag
