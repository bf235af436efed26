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
  shared_.lambda = lambda;
  Initialize();
  shared_.ell = 0;
  const double c = 1.0 / (shared_.lambda * shared_.n);
  for (int i = 0; i < shared_.n; ++i) {
    const Corner& corner = corners[i];
    const double loss = shared_.problem.Loss(i, corner);
    shared_.problem.MixCorner(i, corner, 1.0, shared_.states.Open(i));
    shared_.states.Close(i);
    shared_.ell_block[i] = loss / shared_.n;
    shared_.ell += shared_.ell_block[i];
    shared_.problem.AddScaled(i, corner, c, shared_.w.data());
    if (shared_.keep_corners && corner != shared_.problem.GoldCorner(i)) {
      // The gold labeling stays in the store with α = 0, as the reference
      // code's path initialisation keeps it.
      CornerStore& store = shared_.corners[i];
      store.entry(0).alpha = 0;
      std::vector<double> dots;
      if (shared_.keep_dots) dots = block_steps_.CornerDots(i, corner);
      store.Add(corner, loss, 1.0, shared_.keep_dots ? &dots : nullptr);
    }
    shared_.SetBlockGap(i, block_gaps[i]);
  }
  shared_.cache_global_gap = shared_.GapEstimate();
  shared_.refresh_block_gaps = true;
}

double BcfwRun::BlockDeltas(std::vector<double>* deltas, bool allow_stale) {
  const bool fresh = shared_.state_dots_steps == shared_.steps;
  if (!fresh && !allow_stale) {
    // ⟨v_i, w⟩ from one unary pass per block (no stored corners asked).
    shared_.state_dots.resize(shared_.n);
    ParallelFor(shared_.n, shared_.NumThreads(), [&](int begin, int end) {
      for (int i = begin; i < end; ++i) {
        shared_.problem.ScoreCorners(i, shared_.w.data(),
                                     shared_.states.Read(i), nullptr, 0,
                                     nullptr, &shared_.state_dots[i]);
      }
    });
    shared_.oracle_calls += shared_.n;
    shared_.state_dots_steps = shared_.steps;
  }
  const bool stale = !fresh && allow_stale;
  const std::vector<double>& dots =
      stale ? shared_.visit_state_dots : shared_.state_dots;
  deltas->resize(shared_.n);
  // Δ_i = ℓ_i − λ⟨w_i, w⟩ with w_i = v_i/(λn).
  for (int i = 0; i < shared_.n; ++i) {
    (*deltas)[i] = shared_.ell_block[i] - dots[i] / shared_.n;
  }
  // ΣΔ_i = ℓ − λ⟨Σ w_i, w⟩ = ℓ − λ‖w‖², exact even when the Δ_i are stale.
  return shared_.ell -
         shared_.lambda * SquaredNorm(shared_.w.data(), shared_.dim);
}

void BcfwRun::ScaleLambda(double rho, const std::vector<double>& deltas,
                          bool gaps_exact) {
  shared_.lambda *= rho;
  shared_.ell *= rho;
  for (int i = 0; i < shared_.n; ++i) {
    const Corner& gold = shared_.problem.GoldCorner(i);
    // v_i ← ρv_i + (1−ρ)ψ_i(y_i): α moves to the gold labeling, so that
    // w_i = v_i/(λn) is unchanged and w with it.
    shared_.problem.MixCorner(i, gold, 1.0 - rho, shared_.states.Open(i));
    shared_.states.Close(i);
    shared_.ell_block[i] *= rho;
    if (shared_.keep_corners) {
      CornerStore& store = shared_.corners[i];
      int gold_entry = store.Find(gold);
      if (gold_entry < 0) {
        std::vector<double> dots;
        if (shared_.keep_dots) dots = block_steps_.CornerDots(i, gold);
        gold_entry = store.Add(gold, shared_.problem.Loss(i, gold), 0.0,
                               shared_.keep_dots ? &dots : nullptr);
      }
      double others = 0;
      for (int k = 0; k < store.size(); ++k) {
        if (k == gold_entry) continue;
        store.entry(k).alpha *= rho;
        others += store.entry(k).alpha;
      }
      store.entry(gold_entry).alpha = std::max(0.0, 1.0 - others);
    }
    if (shared_.block_gap[i] != kInfinity) {
      const double delta = gaps_exact ? deltas[i] : std::max(deltas[i], 0.0);
      shared_.SetBlockGap(i, shared_.block_gap[i] + (1.0 - rho) * delta);
    }
  }
  shared_.cache_global_gap = gaps_exact ? shared_.GapEstimate() : 0;
  shared_.state_dots_steps = -1;
  shared_.exact_gaps_steps = -1;
}

}  // namespace chaintag
