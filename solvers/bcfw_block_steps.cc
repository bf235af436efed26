// BcfwBlockSteps (bcfw_block_steps.h): one block's step of a pass or a
// round: the oracle or a cache hit, the FW corner joining the store, the
// plain BCFW step, a move applied to w, the block state and the corners'
// alpha, and block sampling. The moves over a block's stored corners are in
// bcfw_moves.cc.
//
// Thread-safety: see bcfw_block_steps.h.

#include "solvers/bcfw_block_steps.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "solvers/bcfw_internal.h"
#include "solvers/corner_store.h"

namespace chaintag {

using bcfw_internal::kInfinity;

namespace {

// The sum of a block's α is renormalised when it drifts this far from one.
constexpr double kAlphaSumTolerance = 1e-12;

}  // namespace

std::vector<double> BcfwBlockSteps::CornerDots(int i,
                                               const Corner& corner) const {
  return chaintag::CornerDots(shared_.problem, i, shared_.corners[i].entries(),
                              corner);
}

int BcfwBlockSteps::NextBlock(int j, const std::vector<int>& order) {
  switch (shared_.config.sampling()) {
    case SolverConfig::PERMUTATION:
      return order[j];
    case SolverConfig::GAP:
      // Unvisited blocks first, in index order (the reference code's +∞
      // estimates make its sampler sweep them so).
      if (shared_.num_unvisited > 0) {
        while (shared_.block_gap[shared_.next_unvisited] != kInfinity)
          ++shared_.next_unvisited;
        return shared_.next_unvisited;
      }
      if (shared_.gap_tree.Total() > 0) {
        return shared_.gap_tree.Sample(shared_.random.UniformDouble());
      }
      return static_cast<int>(shared_.random.Uniform(shared_.n));
    default:
      return static_cast<int>(shared_.random.Uniform(shared_.n));
  }
}

void BcfwBlockSteps::ApplyToVector(int i, const BcfwMove& move,
                                   const Corner& oracle_corner, double scale,
                                   double* x) const {
  const double c = scale / (shared_.lambda * shared_.n);
  auto corner_of = [&](int entry) -> const Corner& {
    return entry < 0 ? oracle_corner : shared_.corners[i].entry(entry).corner;
  };
  if (move.state_coefficient != 0) {
    // FW or away: one corner, Δv = c_y·(ψ(y) − v_i).
    const double* block_state = shared_.states.Read(i);
    if (!shared_.AlphaComplete(i)) {
      shared_.problem.AddCornerMinusState(i, corner_of(move.entries[0]),
                                          block_state, c * move.coefficients[0],
                                          x);
      return;
    }
    // v_i is the stored corners' mixture: the problem may read them.
    mixture_corners_.clear();
    mixture_weights_.clear();
    for (const StoredCorner& entry : shared_.corners[i].entries()) {
      if (entry.alpha > 0) {
        mixture_corners_.push_back(&entry.corner);
        mixture_weights_.push_back(entry.alpha);
      }
    }
    shared_.problem.AddCornerMinusMixture(
        i, corner_of(move.entries[0]), block_state, mixture_corners_.data(),
        mixture_weights_.data(), static_cast<int>(mixture_corners_.size()),
        c * move.coefficients[0], x);
    return;
  }
  if (move.entries.size() == 2 &&
      move.coefficients[0] == -move.coefficients[1]) {
    // Pairwise: the gold labeling cancels, and so does every position
    // where the two corners agree.
    shared_.problem.AddCornerDifference(i, corner_of(move.entries[0]),
                                        corner_of(move.entries[1]),
                                        c * move.coefficients[0], x);
    return;
  }
  for (size_t k = 0; k < move.entries.size(); ++k) {
    if (move.coefficients[k] == 0) continue;
    shared_.problem.AddScaled(i, corner_of(move.entries[k]),
                              c * move.coefficients[k], x);
  }
}

void BcfwBlockSteps::ApplyMove(int i, const BcfwMove& move,
                               const Corner& oracle_corner,
                               double oracle_loss) {
  const int64_t step = ++shared_.steps;  // s, 1-based
  // The step moves v; boxed coordinates of w are re-truncated around it.
  shared_.boxes.Untruncate(shared_.w.data());
  ApplyToVector(i, move, oracle_corner, 1.0, shared_.w.data());
  shared_.boxes.Truncate(shared_.w.data());
  UpdateBlock(i, move, oracle_corner, oracle_loss, step);
}

void BcfwBlockSteps::UpdateBlock(int i, const BcfwMove& move,
                                 const Corner& oracle_corner,
                                 double oracle_loss, int64_t step) {
  double delta_ell = move.state_coefficient * shared_.ell_block[i];
  for (size_t k = 0; k < move.entries.size(); ++k) {
    const int entry = move.entries[k];
    const double loss =
        entry < 0 ? oracle_loss : shared_.corners[i].entry(entry).loss;
    delta_ell += move.coefficients[k] * loss / shared_.n;
  }
  if (shared_.averaging) shared_.block_average.Fold(i, step - 1);
  UpdateBlockScalars(i, delta_ell, step);
  UpdateBlockState(i, move, oracle_corner);
}

void BcfwBlockSteps::UpdateBlockScalars(int i, double delta_ell, int64_t step) {
  if (shared_.averaging) shared_.block_average.AddEllChange(step, delta_ell);
  shared_.ell += delta_ell;
  shared_.ell_block[i] += delta_ell;
}

void BcfwBlockSteps::UpdateBlockState(int i, const BcfwMove& move,
                                      const Corner& oracle_corner) {
  // The block state: v ← (1 + c_state)·v + Σ c_k ψ_k, in the problem's
  // representation (affine in α).
  double* block_state = shared_.states.Open(i);
  if (move.state_coefficient != 0) {
    const int64_t size = shared_.states.Size(i);
    if (ScalesStateThroughAlpha(i, size)) {
      // c·v_i = Σ_k c·α_k ψ_k: a few labelings' entries instead of a sweep
      // of the whole state (its tail's every trigram).
      for (const StoredCorner& entry : shared_.corners[i].entries()) {
        if (entry.alpha > 0) {
          shared_.problem.AddCornerToState(i, entry.corner,
                                           move.state_coefficient * entry.alpha,
                                           block_state);
        }
      }
    } else {
      shared_.problem.ScaleBlockState(i, 1.0 + move.state_coefficient,
                                      block_state);
    }
  }
  for (size_t k = 0; k < move.entries.size(); ++k) {
    const int entry = move.entries[k];
    shared_.problem.AddCornerToState(
        i, entry < 0 ? oracle_corner : shared_.corners[i].entry(entry).corner,
        move.coefficients[k], block_state);
  }
  shared_.states.Close(i);

  if (!shared_.keep_corners) return;
  CornerStore& store = shared_.corners[i];
  if (move.state_coefficient != 0) {
    for (int k = 0; k < store.size(); ++k) {
      store.entry(k).alpha *= 1.0 + move.state_coefficient;
    }
  }
  for (size_t k = 0; k < move.entries.size(); ++k) {
    StoredCorner& entry = store.entry(move.entries[k]);
    entry.alpha += move.coefficients[k];
    // Exact zeros mark drop steps; rounding must not leave ghosts.
    if (entry.alpha < 1e-15) entry.alpha = 0;
  }
  if (!shared_.track_alpha) return;
  const double sum = store.AlphaSum();
  if (std::abs(sum - 1) > kAlphaSumTolerance) {
    for (int k = 0; k < store.size(); ++k) store.entry(k).alpha /= sum;
  }
  // An away step scales the state up by 1/(1 − α_away), and the rounding
  // of its earlier steps with it; ⟨v_i, w⟩ is read from α, so the state is
  // rebuilt from α instead.
  if (move.state_coefficient > 0) {
    const int64_t size = shared_.states.Size(i);
    block_state = shared_.states.Open(i);
    std::fill(block_state, block_state + size, 0.0);
    for (int k = 0; k < store.size(); ++k) {
      const StoredCorner& entry = store.entry(k);
      if (entry.alpha > 0) {
        shared_.problem.AddCornerToState(i, entry.corner, entry.alpha,
                                         block_state);
      }
    }
    shared_.states.Close(i);
  }
}

bool BcfwBlockSteps::ScalesStateThroughAlpha(int i, int64_t state_size) const {
  if (!shared_.keep_corners || !shared_.AlphaComplete(i)) return false;
  const CornerStore& store = shared_.corners[i];
  // A labeling's entries: a label, a pair and about two tail entries a
  // position.
  const int64_t entries =
      4 * static_cast<int64_t>(store.entry(0).corner.size());
  return store.NumActive() * entries < state_size;
}

// Plain BCFW: one FW step towards the oracle's corner (line search or
// 2n/(k+2n)).
void BcfwBlockSteps::PlainStep(int i, const OracleResult& oracle) {
  const double* block_state = shared_.states.Read(i);
  ++shared_.oracle_calls;
  // Block gap g_i = λ⟨w_i − w_s, w⟩ − ℓ_i + ℓ_s with w_i = v_i/(λn) and
  // w_s = ψ_i(y*)/(λn).
  const double gap = (oracle.state_dot - oracle.score) / shared_.n -
                     shared_.ell_block[i] + oracle.loss / shared_.n;
  shared_.SetBlockGap(i, gap);
  shared_.visit_state_dots[i] = oracle.state_dot;
  double gamma;
  if (shared_.config.line_search()) {
    const double curvature =
        shared_.problem.StateDistanceSquared(i, block_state, oracle.corner) /
        (shared_.lambda * shared_.n * shared_.n);  // λ‖w_i − w_s‖²
    gamma = curvature > 0 ? std::clamp(gap / curvature, 0.0, 1.0) : 0;
  } else {
    gamma = 2.0 * shared_.n /
            (static_cast<double>(shared_.steps) + 2.0 * shared_.n);
  }
  if (gamma > 0) {
    move_.Clear();
    move_.Add(-1, gamma);
    move_.state_coefficient = -gamma;
    ApplyMove(i, move_, oracle.corner, oracle.loss);
  } else {
    ++shared_.steps;  // the average still counts the iterate
  }
}

// A full store makes room for a new corner: the least violated inactive
// corner goes first; a pure FW solver may evict an active one (its α are
// then only bookkeeping); with away/pairwise steps active corners stay and
// the store grows.
void BcfwBlockSteps::MakeRoom(int i, CornerStore* store,
                              std::vector<double>* scores) {
  if (!shared_.use_cache ||
      store->size() < shared_.config.bcfw().max_cache_size())
    return;
  auto hinge = [&](int k) { return store->entry(k).loss - (*scores)[k]; };
  int evict = -1;
  for (int k = 0; k < store->size(); ++k) {
    if (store->entry(k).alpha == 0 && (evict < 0 || hinge(k) < hinge(evict))) {
      evict = k;
    }
  }
  if (evict < 0 && !shared_.track_alpha) {
    evict = 0;
    for (int k = 1; k < store->size(); ++k) {
      if (hinge(k) < hinge(evict)) evict = k;
    }
  }
  if (evict >= 0) {
    if (store->entry(evict).alpha > 0) shared_.alpha_complete[i] = 0;
    store->Remove(evict);
    scores->erase(scores->begin() + evict);
  }
}

// The oracle side of block i's step at the current w, changing nothing of
// the run (so distinct blocks may be computed at once): the oracle's
// corner, or, with corners kept, the stored corners' scores, ⟨v_i, w⟩ and
// either a cached corner that passes the hit test ĝ ≥ max(F·g_i, ν·G/n) or
// the oracle's corner.
void BcfwBlockSteps::ComputeBlockOracle(int i, BcfwBlockOracle* out) const {
  const double* block_state = shared_.states.Read(i);
  out->cache_hit = -1;
  if (!shared_.keep_corners) {
    shared_.problem.MaxOracleWithStateDot(i, shared_.w.data(), block_state,
                                          &out->oracle);
    out->state_dot = out->oracle.state_dot;
    return;
  }
  const CornerStore& store = shared_.corners[i];
  out->corner_pointers.clear();
  for (const StoredCorner& entry : store.entries()) {
    out->corner_pointers.push_back(&entry.corner);
  }
  std::vector<double>& scores = out->scores;
  scores.resize(store.size());
  // When the store holds every corner with α > 0, v_i = Σ_k α_k ψ_i(y_k):
  // ⟨v_i, w⟩ follows from the stored corners' scores, which then need only
  // the stored labels' unary scores, and the block state is not read.
  const bool from_alpha = shared_.AlphaComplete(i);
  auto alpha_state_dot = [&] {
    double dot = 0;
    for (int k = 0; k < store.size(); ++k) {
      dot += store.entry(k).alpha * scores[k];
    }
    return dot;
  };
  // Without a possible cache hit the oracle runs anyway: one shared pass.
  const bool oracle_certain =
      !shared_.use_cache || shared_.block_gap[i] == kInfinity;
  if (oracle_certain) {
    shared_.problem.ScoreCornersAndMaxOracle(
        i, shared_.w.data(), from_alpha ? nullptr : block_state,
        out->corner_pointers.data(), store.size(), scores.data(), &out->oracle);
    if (from_alpha) out->oracle.state_dot = alpha_state_dot();
    out->state_dot = out->oracle.state_dot;
    return;
  }
  if (from_alpha) {
    shared_.problem.ScoreCorners(i, shared_.w.data(), nullptr,
                                 out->corner_pointers.data(), store.size(),
                                 scores.data(), nullptr);
    out->state_dot = alpha_state_dot();
  } else {
    shared_.problem.ScoreCorners(i, shared_.w.data(), block_state,
                                 out->corner_pointers.data(), store.size(),
                                 scores.data(), &out->state_dot);
  }
  int best = 0;
  for (int k = 1; k < store.size(); ++k) {
    if (store.entry(k).loss - scores[k] >
        store.entry(best).loss - scores[best]) {
      best = k;
    }
  }
  const double gap = (out->state_dot - scores[best]) / shared_.n -
                     shared_.ell_block[i] + store.entry(best).loss / shared_.n;
  if (gap >=
      std::max(shared_.config.bcfw().cache_factor() * shared_.block_gap[i],
               shared_.config.bcfw().cache_nu() * shared_.cache_global_gap /
                   shared_.n)) {
    out->cache_hit = best;
    out->cache_gap = gap;
    return;
  }
  shared_.problem.MaxOracleWithStateDot(
      i, shared_.w.data(), from_alpha ? nullptr : block_state, &out->oracle);
  if (from_alpha) out->oracle.state_dot = out->state_dot;
}

// The FW corner of a step from `oracle`: the cache hit, or the oracle's
// corner, which joins the store (with its score). Returns its store index
// and its block gap; touches only block i's store.
int BcfwBlockSteps::PrepareFwCorner(int i, BcfwBlockOracle* oracle,
                                    double* fw_gap) {
  if (oracle->cache_hit >= 0) {
    *fw_gap = oracle->cache_gap;
    return oracle->cache_hit;
  }
  const OracleResult& result = oracle->oracle;
  *fw_gap = (result.state_dot - result.score) / shared_.n -
            shared_.ell_block[i] + result.loss / shared_.n;
  CornerStore& store = shared_.corners[i];
  int fw = store.Find(result.corner);
  if (fw >= 0) return fw;
  MakeRoom(i, &store, &oracle->scores);
  std::vector<double> dots;
  if (shared_.keep_dots) dots = CornerDots(i, result.corner);
  fw = store.Add(result.corner, result.loss, 0.0,
                 shared_.keep_dots ? &dots : nullptr);
  oracle->scores.push_back(result.score);
  return fw;
}

int BcfwBlockSteps::FwCorner(int i, BcfwBlockOracle* oracle, double* fw_gap) {
  const int fw = PrepareFwCorner(i, oracle, fw_gap);
  oracle->fw_gap = *fw_gap;
  RecordBlockOracle(i, *oracle);
  return fw;
}

void BcfwBlockSteps::RecordBlockOracle(int i, const BcfwBlockOracle& oracle) {
  shared_.visit_state_dots[i] = oracle.state_dot;
  if (oracle.cache_hit >= 0) {
    ++shared_.pass_hits;
    return;
  }
  ++shared_.oracle_calls;
  shared_.SetBlockGap(i, oracle.fw_gap);
}

void BcfwBlockSteps::ApplyBlockStep(int i, BcfwBlockOracle* oracle) {
  ++shared_.pass_draws;
  if (!shared_.keep_corners) {
    PlainStep(i, oracle->oracle);
    return;
  }
  double fw_gap = 0;
  const int fw = FwCorner(i, oracle, &fw_gap);
  CornerStore& store = shared_.corners[i];
  move_.Clear();
  if (shared_.fully_corrective) {
    FullyCorrectiveMove(i, fw, oracle->scores, &move_, oracle);
  } else {
    ChooseStep(i, fw, fw_gap, oracle->state_dot, oracle->scores, &move_);
  }
  if (!move_.entries.empty()) {
    ApplyMove(i, move_, store.entry(fw).corner, 0.0);
    if (move_.state_coefficient <= -1.0) {
      // A full FW step: α is exactly one-hot on the FW corner.
      for (int k = 0; k < store.size(); ++k) store.entry(k).alpha = 0;
      store.entry(fw).alpha = 1;
      if (!shared_.alpha_complete.empty()) shared_.alpha_complete[i] = 1;
    }
  } else {
    ++shared_.steps;
  }
  // Without a cache the store is the active set only.
  if (!shared_.use_cache) store.RemoveInactive();
}

}  // namespace chaintag
