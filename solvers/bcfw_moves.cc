// BcfwBlockSteps' moves over a block's stored corners, once its FW corner
// is in the store: the FW, pairwise and away candidates, each with its
// exact line search and dual improvement, and the configured one or the
// best (ChooseStep); or the fully corrective solve over the active set
// (FullyCorrectiveMove). Both only read the run and write a BcfwMove, so
// that the steps of a pass and a round's phase one (bcfw_rounds.cc) share
// them.
//
// Thread-safety: const; distinct blocks' moves may be computed at once.

#include <algorithm>
#include <vector>

#include "solvers/bcfw_block_steps.h"
#include "solvers/bcfw_internal.h"
#include "solvers/corner_store.h"

namespace chaintag {

using bcfw_internal::LineSearch;

namespace {

// Fully-corrective inner solve: stop when the best pairwise gap inside the
// active set falls below this fraction of its value at the first inner step
// (or below 1e-15), or after kMaxInnerIterations steps.
constexpr double kInnerRelativeTolerance = 1e-6;
constexpr int kMaxInnerIterations = 200;

// Dual improvement of a step γ along a direction with linear coefficient
// `slope` (the direction's gap) and curvature λ‖Δw‖² per unit γ².
double Improvement(double gamma, double slope, double curvature) {
  return gamma * slope - 0.5 * gamma * gamma * curvature;
}

}  // namespace

// Maximises the block's dual over α restricted to its active set plus the FW
// corner, by pairwise steps in α-space with exact line search: with
// Q_ab = ⟨ψ_a, ψ_b⟩/(λn²), the gradient of the block dual is
// ∇_k = L_k/n − ⟨w, ψ_k⟩/n, and a step moving mass t from a to b changes
// every gradient by t·(Q_ak − Q_bk) — O(|active set|) per inner step.
void BcfwBlockSteps::FullyCorrectiveMove(int i, int fw_entry,
                                         const std::vector<double>& scores,
                                         BcfwMove* move,
                                         BcfwBlockOracle* scratch) const {
  const CornerStore& store = shared_.corners[i];
  std::vector<int>& active = scratch->inner_active;
  active.clear();
  for (int k = 0; k < store.size(); ++k) {
    if (store.entry(k).alpha > 0 || k == fw_entry) active.push_back(k);
  }
  const int m = static_cast<int>(active.size());
  const double q = 1.0 / (shared_.lambda * shared_.n * shared_.n);
  std::vector<double>& alpha = scratch->inner_alpha;
  std::vector<double>& gradient = scratch->inner_gradient;
  std::vector<double>& delta = scratch->inner_delta;
  alpha.resize(m);
  gradient.resize(m);
  delta.assign(m, 0.0);
  for (int a = 0; a < m; ++a) {
    const StoredCorner& entry = store.entry(active[a]);
    alpha[a] = entry.alpha;
    gradient[a] = (entry.loss - scores[active[a]]) / shared_.n;
  }
  auto dot = [&](int a, int b) {
    return q * store.entry(active[a]).dots[active[b]];
  };
  double tolerance = -1;
  for (int iteration = 0; iteration < kMaxInnerIterations; ++iteration) {
    int best = 0, worst = -1;
    for (int a = 1; a < m; ++a) {
      if (gradient[a] > gradient[best]) best = a;
    }
    for (int a = 0; a < m; ++a) {
      if (alpha[a] > 0 && (worst < 0 || gradient[a] < gradient[worst])) {
        worst = a;
      }
    }
    if (worst < 0 || best == worst) break;
    const double slope = gradient[best] - gradient[worst];
    if (tolerance < 0) {
      tolerance = std::max(kInnerRelativeTolerance * slope, 1e-15);
    }
    if (slope <= tolerance) break;
    const double curvature =
        dot(best, best) + dot(worst, worst) - 2 * dot(best, worst);
    const double t = LineSearch(slope, curvature, alpha[worst]);
    if (t <= 0) break;
    alpha[best] += t;
    delta[best] += t;
    if (t >= alpha[worst]) {
      delta[worst] -= alpha[worst];
      alpha[worst] = 0;  // drop step
    } else {
      alpha[worst] -= t;
      delta[worst] -= t;
    }
    for (int k = 0; k < m; ++k) {
      gradient[k] -= t * (dot(best, k) - dot(worst, k));
    }
  }
  move->Clear();
  for (int a = 0; a < m; ++a) {
    if (delta[a] != 0) move->Add(active[a], delta[a]);
  }
}

double BcfwBlockSteps::StateToCornerDistanceSquared(int i, int f) const {
  const CornerStore& store = shared_.corners[i];
  if (!shared_.keep_dots || !shared_.AlphaComplete(i)) {
    return shared_.problem.StateDistanceSquared(i, shared_.states.Read(i),
                                                store.entry(f).corner);
  }
  return AlphaDistanceSquared(store.entries(), f);
}

// The step of the configured kind (FW, pairwise, away, or the best of the
// three), each candidate with its exact dual improvement, into move_.
void BcfwBlockSteps::ChooseStep(int i, int fw, double fw_gap, double state_dot,
                                const std::vector<double>& scores,
                                BcfwMove* move) const {
  const CornerStore& store = shared_.corners[i];
  const StoredCorner& fw_entry = store.entry(fw);
  const double inverse = 1.0 / (shared_.lambda * shared_.n * shared_.n);
  double best_improvement = 0;
  const bool try_fw = shared_.step != SolverConfig::PAIRWISE;
  const bool try_pairwise = shared_.step == SolverConfig::PAIRWISE ||
                            shared_.step == SolverConfig::BEST;
  const bool try_away =
      shared_.step == SolverConfig::AWAY || shared_.step == SolverConfig::BEST;
  if (try_fw) {
    const double curvature = StateToCornerDistanceSquared(i, fw) * inverse;
    const double gamma = LineSearch(fw_gap, curvature, 1.0);
    const double improvement = Improvement(gamma, fw_gap, curvature);
    if (gamma > 0 && (improvement > 0 || shared_.step == SolverConfig::FW)) {
      best_improvement = improvement;
      move->Add(fw, gamma);
      move->state_coefficient = -gamma;
    }
  }
  if (!try_pairwise && !try_away) return;
  // The away corner: the active corner of least hinge (first on ties).
  int away = -1;
  int active = 0;
  for (int k = 0; k < store.size(); ++k) {
    if (store.entry(k).alpha <= 0) continue;
    ++active;
    if (away < 0 || store.entry(k).loss - scores[k] <
                        store.entry(away).loss - scores[away]) {
      away = k;
    }
  }
  const StoredCorner& away_entry = store.entry(away);
  const double away_gap = (scores[away] - state_dot) / shared_.n +
                          shared_.ell_block[i] - away_entry.loss / shared_.n;
  if (try_pairwise && away != fw) {
    const double slope = fw_gap + away_gap;
    const double curvature = shared_.problem.CornerDistanceSquared(
                                 i, fw_entry.corner, away_entry.corner) *
                             inverse;
    const double gamma = LineSearch(slope, curvature, away_entry.alpha);
    const double improvement = Improvement(gamma, slope, curvature);
    if (gamma > 0 && improvement > best_improvement) {
      best_improvement = improvement;
      move->Clear();
      move->Add(fw, gamma);
      move->Add(away, -gamma);
    }
  }
  if (try_away && active > 1 && away_entry.alpha < 1) {
    const double gamma_max = away_entry.alpha / (1 - away_entry.alpha);
    const double curvature = StateToCornerDistanceSquared(i, away) * inverse;
    const double gamma = LineSearch(away_gap, curvature, gamma_max);
    const double improvement = Improvement(gamma, away_gap, curvature);
    if (gamma > 0 && improvement > best_improvement) {
      move->Clear();
      move->Add(away, -gamma);
      move->state_coefficient = gamma;
    }
  }
}

}  // namespace chaintag
