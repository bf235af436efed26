// BcfwRun's core (bcfw_run.h) and BcfwSolver: initialisation and the
// config's checks, box constraints, the block steps of a pass (the oracle
// or a cache hit, the FW corner joining the store, the plain BCFW step, a
// move applied to w, the block state and the corners' α), block sampling,
// and the pass loop's side (RunSteps; EndPass with its exact gap passes).
// BcfwRun's other parts are in the bcfw_*.cc files beside this one (see
// bcfw_run.h).
//
// Thread-safety: a BcfwRun is used by one thread at a time (exact gap
// passes use solver.num_threads threads); BcfwSolver: see Solver.

#include "solvers/bcfw.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/huge_pages.h"
#include "base/random.h"
#include "solvers/bcfw_internal.h"
#include "solvers/bcfw_run.h"
#include "solvers/corner_store.h"
#include "solvers/duality_gap.h"
#include "solvers/sum_tree.h"

namespace chaintag {

using bcfw_internal::kInfinity;

namespace {

// The sum of a block's α is renormalised when it drifts this far from one.
constexpr double kAlphaSumTolerance = 1e-12;

}  // namespace

BcfwRun::BcfwRun(const SolverConfig& config, const Problem& problem)
    : config_(config),
      problem_(problem),
      n_(problem.NumExamples()),
      dim_(problem.Dim()),
      lambda_(ResolveLambda(config, n_)),
      averaging_(config.weighted_averaging()),
      fully_corrective_(config.name() == "active_set_bcfw"),
      step_(fully_corrective_ ? SolverConfig::FW : config.bcfw().step()),
      track_alpha_(fully_corrective_ || step_ != SolverConfig::FW),
      use_cache_(config.bcfw().cache()),
      keep_corners_(track_alpha_ || use_cache_),
      keep_dots_(fully_corrective_ || (use_cache_ && !track_alpha_)),
      gap_sampling_(config.sampling() == SolverConfig::GAP),
      refresh_block_gaps_(gap_sampling_ || use_cache_),
      random_(config.seed()),
      block_average_(problem, states_, state_offset_),
      minibatch_(std::max(1, config.minibatch())),
      round_oracles_(1) {}

void BcfwRun::Initialize() {
  // Steps read and write w's rows at random: huge pages. The large arrays
  // are faulted in on the threads.
  const int threads = NumThreads();
  ReserveFaultedIn(&w_, dim_, /*huge_pages=*/true, threads);
  w_.assign(dim_, 0.0);
  ell_block_.assign(n_, 0.0);
  state_offset_ = BlockStateOffsets(problem_);
  ReserveFaultedIn(&states_, state_offset_[n_], /*huge_pages=*/false, threads);
  states_.resize(state_offset_[n_]);
  for (int i = 0; i < n_; ++i) problem_.InitBlockState(i, state(i));
  visit_state_dots_.assign(n_, 0.0);
  if (averaging_) block_average_.Initialize(threads);
  block_gap_.assign(n_, kInfinity);
  num_unvisited_ = n_;
  if (gap_sampling_) gap_tree_ = SumTree(n_);
  if (keep_corners_) {
    corners_.resize(n_);
    for (int i = 0; i < n_; ++i) {
      const Corner& gold = problem_.GoldCorner(i);
      std::vector<double> dots;
      if (keep_dots_) dots = CornerDots(i, gold);
      corners_[i].Add(gold, problem_.Loss(i, gold), 1.0,
                      keep_dots_ ? &dots : nullptr);
    }
  }
  if (keep_corners_ && !track_alpha_) alpha_complete_.assign(n_, 1);
}

// The average point is formed from the blocks' sums only when read: the
// cost of about one pass of BCFW updates.
const std::vector<double>& BcfwRun::ReturnedPoint() {
  if (!averaging_) return w_;
  if (average_steps_ == steps_) return average_;  // already current
  average_steps_ = steps_;
  ReserveFaultedIn(&average_, dim_, /*huge_pages=*/true, NumThreads());
  average_.resize(dim_);
  boxes_.ClearAverage();
  if (steps_ == 0) {
    average_ = w_;
    return average_;
  }
  distribution_status_.Update(
      block_average_.Form(steps_, lambda_, Granularity(), NumThreads(),
                          distribution_, average_.data()));
  boxes_.TruncateAverage(average_.data());
  return average_;
}

double BcfwRun::GapEstimate() const {
  double sum = 0;
  for (double g : block_gap_) sum += g;
  return sum;
}

std::vector<double> BcfwRun::CornerDots(int i, const Corner& corner) const {
  return chaintag::CornerDots(problem_, i, corners_[i].entries(), corner);
}

void BcfwRun::SetBlockGap(int i, double gap) {
  if (block_gap_[i] == kInfinity) --num_unvisited_;
  block_gap_[i] = std::max(gap, 0.0);
  if (gap_sampling_) gap_tree_.Set(i, block_gap_[i]);
}

int BcfwRun::NextBlock(int j, const std::vector<int>& order) {
  switch (config_.sampling()) {
    case SolverConfig::PERMUTATION:
      return order[j];
    case SolverConfig::GAP:
      // Unvisited blocks first, in index order (the reference code's +∞
      // estimates make its sampler sweep them so).
      if (num_unvisited_ > 0) {
        while (block_gap_[next_unvisited_] != kInfinity) ++next_unvisited_;
        return next_unvisited_;
      }
      if (gap_tree_.Total() > 0) {
        return gap_tree_.Sample(random_.UniformDouble());
      }
      return static_cast<int>(random_.Uniform(n_));
    default:
      return static_cast<int>(random_.Uniform(n_));
  }
}

void BcfwRun::ApplyToVector(int i, const BcfwMove& move,
                            const Corner& oracle_corner, double scale,
                            double* x) const {
  const double c = scale / (lambda_ * n_);
  auto corner_of = [&](int entry) -> const Corner& {
    return entry < 0 ? oracle_corner : corners_[i].entry(entry).corner;
  };
  if (move.state_coefficient != 0) {
    // FW or away: one corner, Δv = c_y·(ψ(y) − v_i).
    const double* block_state = states_.data() + state_offset_[i];
    if (!AlphaComplete(i)) {
      problem_.AddCornerMinusState(i, corner_of(move.entries[0]), block_state,
                                   c * move.coefficients[0], x);
      return;
    }
    // v_i is the stored corners' mixture: the problem may read them.
    mixture_corners_.clear();
    mixture_weights_.clear();
    for (const StoredCorner& entry : corners_[i].entries()) {
      if (entry.alpha > 0) {
        mixture_corners_.push_back(&entry.corner);
        mixture_weights_.push_back(entry.alpha);
      }
    }
    problem_.AddCornerMinusMixture(
        i, corner_of(move.entries[0]), block_state, mixture_corners_.data(),
        mixture_weights_.data(), static_cast<int>(mixture_corners_.size()),
        c * move.coefficients[0], x);
    return;
  }
  if (move.entries.size() == 2 &&
      move.coefficients[0] == -move.coefficients[1]) {
    // Pairwise: the gold labeling cancels, and so does every position
    // where the two corners agree.
    problem_.AddCornerDifference(i, corner_of(move.entries[0]),
                                 corner_of(move.entries[1]),
                                 c * move.coefficients[0], x);
    return;
  }
  for (size_t k = 0; k < move.entries.size(); ++k) {
    if (move.coefficients[k] == 0) continue;
    problem_.AddScaled(i, corner_of(move.entries[k]), c * move.coefficients[k],
                       x);
  }
}

void BcfwRun::ApplyMove(int i, const BcfwMove& move,
                        const Corner& oracle_corner, double oracle_loss) {
  const int64_t step = ++steps_;  // s, 1-based
  // The step moves v; boxed coordinates of w are re-truncated around it.
  boxes_.Untruncate(w_.data());
  ApplyToVector(i, move, oracle_corner, 1.0, w_.data());
  boxes_.Truncate(w_.data());
  UpdateBlock(i, move, oracle_corner, oracle_loss, step);
}

void BcfwRun::UpdateBlock(int i, const BcfwMove& move,
                          const Corner& oracle_corner, double oracle_loss,
                          int64_t step) {
  double delta_ell = move.state_coefficient * ell_block_[i];
  for (size_t k = 0; k < move.entries.size(); ++k) {
    const int entry = move.entries[k];
    const double loss = entry < 0 ? oracle_loss : corners_[i].entry(entry).loss;
    delta_ell += move.coefficients[k] * loss / n_;
  }
  if (averaging_) block_average_.Fold(i, step - 1);
  UpdateBlockScalars(i, delta_ell, step);
  UpdateBlockState(i, move, oracle_corner);
}

void BcfwRun::UpdateBlockScalars(int i, double delta_ell, int64_t step) {
  if (averaging_) block_average_.AddEllChange(step, delta_ell);
  ell_ += delta_ell;
  ell_block_[i] += delta_ell;
}

void BcfwRun::UpdateBlockState(int i, const BcfwMove& move,
                               const Corner& oracle_corner) {
  // The block state: v ← (1 + c_state)·v + Σ c_k ψ_k, in the problem's
  // representation (affine in α).
  double* block_state = state(i);
  if (move.state_coefficient != 0) {
    const int64_t size = state_offset_[i + 1] - state_offset_[i];
    if (ScalesStateThroughAlpha(i, size)) {
      // c·v_i = Σ_k c·α_k ψ_k: a few labelings' entries instead of a sweep
      // of the whole state (its tail's every trigram).
      for (const StoredCorner& entry : corners_[i].entries()) {
        if (entry.alpha > 0) {
          problem_.AddCornerToState(i, entry.corner,
                                    move.state_coefficient * entry.alpha,
                                    block_state);
        }
      }
    } else {
      problem_.ScaleBlockState(i, 1.0 + move.state_coefficient, block_state);
    }
  }
  for (size_t k = 0; k < move.entries.size(); ++k) {
    const int entry = move.entries[k];
    problem_.AddCornerToState(
        i, entry < 0 ? oracle_corner : corners_[i].entry(entry).corner,
        move.coefficients[k], block_state);
  }

  if (!keep_corners_) return;
  CornerStore& store = corners_[i];
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
  if (!track_alpha_) return;
  const double sum = store.AlphaSum();
  if (std::abs(sum - 1) > kAlphaSumTolerance) {
    for (int k = 0; k < store.size(); ++k) store.entry(k).alpha /= sum;
  }
  // An away step scales the state up by 1/(1 − α_away), and the rounding
  // of its earlier steps with it; ⟨v_i, w⟩ is read from α, so the state is
  // rebuilt from α instead.
  if (move.state_coefficient > 0) {
    const int64_t size = state_offset_[i + 1] - state_offset_[i];
    std::fill(block_state, block_state + size, 0.0);
    for (int k = 0; k < store.size(); ++k) {
      const StoredCorner& entry = store.entry(k);
      if (entry.alpha > 0) {
        problem_.AddCornerToState(i, entry.corner, entry.alpha, block_state);
      }
    }
  }
}

bool BcfwRun::ScalesStateThroughAlpha(int i, int64_t state_size) const {
  if (!keep_corners_ || !AlphaComplete(i)) return false;
  const CornerStore& store = corners_[i];
  // A labeling's entries: a label, a pair and about two tail entries a
  // position.
  const int64_t entries =
      4 * static_cast<int64_t>(store.entry(0).corner.size());
  return store.NumActive() * entries < state_size;
}

// Plain BCFW: one FW step towards the oracle's corner (line search or
// 2n/(k+2n)).
void BcfwRun::PlainStep(int i, const OracleResult& oracle) {
  double* block_state = state(i);
  ++oracle_calls_;
  // Block gap g_i = λ⟨w_i − w_s, w⟩ − ℓ_i + ℓ_s with w_i = v_i/(λn) and
  // w_s = ψ_i(y*)/(λn).
  const double gap =
      (oracle.state_dot - oracle.score) / n_ - ell_block_[i] + oracle.loss / n_;
  SetBlockGap(i, gap);
  visit_state_dots_[i] = oracle.state_dot;
  double gamma;
  if (config_.line_search()) {
    const double curvature =
        problem_.StateDistanceSquared(i, block_state, oracle.corner) /
        (lambda_ * n_ * n_);  // λ‖w_i − w_s‖²
    gamma = curvature > 0 ? std::clamp(gap / curvature, 0.0, 1.0) : 0;
  } else {
    gamma = 2.0 * n_ / (static_cast<double>(steps_) + 2.0 * n_);
  }
  if (gamma > 0) {
    move_.Clear();
    move_.Add(-1, gamma);
    move_.state_coefficient = -gamma;
    ApplyMove(i, move_, oracle.corner, oracle.loss);
  } else {
    ++steps_;  // the average still counts the iterate
  }
}

// A full store makes room for a new corner: the least violated inactive
// corner goes first; a pure FW solver may evict an active one (its α are
// then only bookkeeping); with away/pairwise steps active corners stay and
// the store grows.
void BcfwRun::MakeRoom(int i, CornerStore* store, std::vector<double>* scores) {
  if (!use_cache_ || store->size() < config_.bcfw().max_cache_size()) return;
  auto hinge = [&](int k) { return store->entry(k).loss - (*scores)[k]; };
  int evict = -1;
  for (int k = 0; k < store->size(); ++k) {
    if (store->entry(k).alpha == 0 && (evict < 0 || hinge(k) < hinge(evict))) {
      evict = k;
    }
  }
  if (evict < 0 && !track_alpha_) {
    evict = 0;
    for (int k = 1; k < store->size(); ++k) {
      if (hinge(k) < hinge(evict)) evict = k;
    }
  }
  if (evict >= 0) {
    if (store->entry(evict).alpha > 0) alpha_complete_[i] = 0;
    store->Remove(evict);
    scores->erase(scores->begin() + evict);
  }
}

// The oracle side of block i's step at the current w, changing nothing of
// the run (so distinct blocks may be computed at once): the oracle's
// corner, or, with corners kept, the stored corners' scores, ⟨v_i, w⟩ and
// either a cached corner that passes the hit test ĝ ≥ max(F·g_i, ν·G/n) or
// the oracle's corner.
void BcfwRun::ComputeBlockOracle(int i, BlockOracle* out) const {
  const double* block_state = states_.data() + state_offset_[i];
  out->cache_hit = -1;
  if (!keep_corners_) {
    problem_.MaxOracleWithStateDot(i, w_.data(), block_state, &out->oracle);
    out->state_dot = out->oracle.state_dot;
    return;
  }
  const CornerStore& store = corners_[i];
  out->corner_pointers.clear();
  for (const StoredCorner& entry : store.entries()) {
    out->corner_pointers.push_back(&entry.corner);
  }
  std::vector<double>& scores = out->scores;
  scores.resize(store.size());
  // When the store holds every corner with α > 0, v_i = Σ_k α_k ψ_i(y_k):
  // ⟨v_i, w⟩ follows from the stored corners' scores, which then need only
  // the stored labels' unary scores, and the block state is not read.
  const bool from_alpha = AlphaComplete(i);
  auto alpha_state_dot = [&] {
    double dot = 0;
    for (int k = 0; k < store.size(); ++k) {
      dot += store.entry(k).alpha * scores[k];
    }
    return dot;
  };
  // Without a possible cache hit the oracle runs anyway: one shared pass.
  const bool oracle_certain = !use_cache_ || block_gap_[i] == kInfinity;
  if (oracle_certain) {
    problem_.ScoreCornersAndMaxOracle(
        i, w_.data(), from_alpha ? nullptr : block_state,
        out->corner_pointers.data(), store.size(), scores.data(), &out->oracle);
    if (from_alpha) out->oracle.state_dot = alpha_state_dot();
    out->state_dot = out->oracle.state_dot;
    return;
  }
  if (from_alpha) {
    problem_.ScoreCorners(i, w_.data(), nullptr, out->corner_pointers.data(),
                          store.size(), scores.data(), nullptr);
    out->state_dot = alpha_state_dot();
  } else {
    problem_.ScoreCorners(i, w_.data(), block_state,
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
  const double gap = (out->state_dot - scores[best]) / n_ - ell_block_[i] +
                     store.entry(best).loss / n_;
  if (gap >= std::max(config_.bcfw().cache_factor() * block_gap_[i],
                      config_.bcfw().cache_nu() * cache_global_gap_ / n_)) {
    out->cache_hit = best;
    out->cache_gap = gap;
    return;
  }
  problem_.MaxOracleWithStateDot(
      i, w_.data(), from_alpha ? nullptr : block_state, &out->oracle);
  if (from_alpha) out->oracle.state_dot = out->state_dot;
}

// The FW corner of a step from `oracle`: the cache hit, or the oracle's
// corner, which joins the store (with its score). Returns its store index
// and its block gap; touches only block i's store.
int BcfwRun::PrepareFwCorner(int i, BlockOracle* oracle, double* fw_gap) {
  if (oracle->cache_hit >= 0) {
    *fw_gap = oracle->cache_gap;
    return oracle->cache_hit;
  }
  const OracleResult& result = oracle->oracle;
  *fw_gap =
      (result.state_dot - result.score) / n_ - ell_block_[i] + result.loss / n_;
  CornerStore& store = corners_[i];
  int fw = store.Find(result.corner);
  if (fw >= 0) return fw;
  MakeRoom(i, &store, &oracle->scores);
  std::vector<double> dots;
  if (keep_dots_) dots = CornerDots(i, result.corner);
  fw = store.Add(result.corner, result.loss, 0.0, keep_dots_ ? &dots : nullptr);
  oracle->scores.push_back(result.score);
  return fw;
}

int BcfwRun::FwCorner(int i, BlockOracle* oracle, double* fw_gap) {
  const int fw = PrepareFwCorner(i, oracle, fw_gap);
  oracle->fw_gap = *fw_gap;
  RecordBlockOracle(i, *oracle);
  return fw;
}

void BcfwRun::RecordBlockOracle(int i, const BlockOracle& oracle) {
  visit_state_dots_[i] = oracle.state_dot;
  if (oracle.cache_hit >= 0) {
    ++pass_hits_;
    return;
  }
  ++oracle_calls_;
  SetBlockGap(i, oracle.fw_gap);
}

void BcfwRun::ApplyBlockStep(int i, BlockOracle* oracle) {
  ++pass_draws_;
  if (!keep_corners_) {
    PlainStep(i, oracle->oracle);
    return;
  }
  double fw_gap = 0;
  const int fw = FwCorner(i, oracle, &fw_gap);
  CornerStore& store = corners_[i];
  move_.Clear();
  if (fully_corrective_) {
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
      if (!alpha_complete_.empty()) alpha_complete_[i] = 1;
    }
  } else {
    ++steps_;
  }
  // Without a cache the store is the active set only.
  if (!use_cache_) store.RemoveInactive();
}

absl::Status BcfwRun::Validate() {
  const std::string& name = config_.name();
  if (n_ <= 0)
    return absl::InvalidArgumentError(name + ": no training examples");
  if (track_alpha_ && !config_.line_search()) {
    return absl::InvalidArgumentError(
        name +
        ": pairwise, away, best and fully-corrective steps need "
        "line_search");
  }
  if (config_.minibatch() < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, ": minibatch must be at least 1, got ", config_.minibatch()));
  }
  if (config_.minibatch() > 1 && config_.bcfw().box_size() > 0) {
    return absl::InvalidArgumentError(name +
                                      ": box constraints need minibatch 1");
  }
  if (distribution_.communicator != nullptr) {
    if (config_.minibatch() < 2) {
      return absl::InvalidArgumentError(
          name + ": distributed training needs minibatch of at least 2");
    }
    if (config_.max_seconds() > 0) {
      return absl::InvalidArgumentError(
          name +
          ": distributed training has no time budget (max_seconds): "
          "the ranks must agree on every round");
    }
    // The exchange sends 32-bit slots.
    if (dim_ / Granularity() > std::numeric_limits<uint32_t>::max()) {
      return absl::InvalidArgumentError(absl::StrCat(
          name, ": distributed training needs w in at most 2^32 slots, has ",
          dim_ / Granularity()));
    }
  }
  if (use_cache_ && config_.bcfw().max_cache_size() < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": max_cache_size must be at least 2, got ",
                     config_.bcfw().max_cache_size()));
  }
  return absl::OkStatus();
}

absl::StatusOr<TrainingSummary> BcfwRun::Solve(Monitor* monitor,
                                               std::vector<double>* w_out) {
  absl::Status valid = Validate();
  if (!valid.ok()) return valid;
  Initialize();
  absl::Status boxes = boxes_.Initialize(config_, dim_, w_.data());
  if (!boxes.ok()) return boxes;
  absl::StatusOr<TrainingSummary> summary = Run(monitor);
  if (!summary.ok()) return summary;
  if (invariants_ != nullptr) CheckInvariants(invariants_);
  // Hand over the buffer instead of copying: at this size a copy is the
  // run's peak memory. The last pass has already formed w̄.
  if (averaging_) ReturnedPoint();
  *w_out = averaging_ ? std::move(average_) : std::move(w_);
  return summary;
}

absl::StatusOr<TrainingSummary> BcfwRun::Run(Monitor* monitor) {
  PassDriver driver(config_, config_.name(), lambda_, n_, dim_, monitor);
  return driver.Run(this);
}

absl::Status BcfwRun::RunSteps(int, PassDriver* driver) {
  if (config_.sampling() == SolverConfig::PERMUTATION) {
    random_.Permutation(n_, &order_);
  }
  pass_draws_ = pass_hits_ = 0;
  if (minibatch_ == 1) {
    for (int j = 0; j < n_; ++j) {
      const int i = NextBlock(j, order_);
      ComputeBlockOracle(i, &round_oracles_[0]);
      ApplyBlockStep(i, &round_oracles_[0]);
      if (driver->Expired(j)) break;
    }
    return absl::OkStatus();
  }
  for (int j = 0, round = 0; j < n_; j += minibatch_, ++round) {
    absl::Status status = RunRound(j, std::min(minibatch_, n_ - j));
    if (!status.ok()) return status;
    // Ranks must agree on every round: a distributed run has no time
    // budget (Validate) and leaves interrupts to mpirun.
    if (distribution_.communicator == nullptr && driver->Expired(round)) break;
  }
  return absl::OkStatus();
}

// Exact block gaps at the iterate: they refresh every estimate, and without
// averaging they are also the certificate.
absl::StatusOr<DualityGap> BcfwRun::RefreshBlockGaps() {
  const int threads = NumThreads();
  DualityGap at_iterate;
  if (distribution_.communicator == nullptr) {
    at_iterate = ComputeBlockGaps(
        problem_, w_.data(), ell_ - boxes_.Term(lambda_, false),
        ell_block_.data(), states_.data(), state_offset_.data(), lambda_,
        threads, &exact_block_gaps_, &state_dots_);
  } else {
    absl::StatusOr<DualityGap> gap = ComputeBlockGaps(
        problem_, w_.data(), ell_ - boxes_.Term(lambda_, false),
        ell_block_.data(), states_.data(), state_offset_.data(), lambda_,
        threads, distribution_, &exact_block_gaps_, &state_dots_);
    if (!gap.ok()) return gap.status();
    at_iterate = *gap;
  }
  state_dots_steps_ = steps_;
  exact_gaps_steps_ = steps_;
  oracle_calls_ += n_;
  double sum = 0;
  for (int i = 0; i < n_; ++i) {
    SetBlockGap(i, exact_block_gaps_[i]);
    sum += block_gap_[i];
  }
  cache_global_gap_ = sum;
  return at_iterate;
}

absl::StatusOr<PassEnd> BcfwRun::EndPass(const PassEndRequest& request,
                                         PassRecord* record) {
  const double estimate = GapEstimate();
  // As the reference code does: a small gap estimate triggers an exact
  // check at once (estimates are stale, so 80% of the tolerance).
  const bool estimate_converged = refresh_block_gaps_ && num_unvisited_ == 0 &&
                                  estimate <= 0.8 * config_.gap_tolerance();
  const bool confirm = config_.exact_gap_when_converged();
  const bool check_gap =
      request.gap_check_due || (estimate_converged && confirm);
  PassEnd end;
  // The heuristic stop trusts the stale estimates (no exact pass).
  end.estimate_converged = estimate_converged && !confirm;
  if (check_gap && refresh_block_gaps_) {
    absl::StatusOr<DualityGap> at_iterate = RefreshBlockGaps();
    if (!at_iterate.ok()) return at_iterate.status();
    if (!averaging_) end.certificate = *at_iterate;
  }
  // w̄ is formed only when something reads it (the box term reads v̄); its
  // dual is logged whenever it is formed.
  const bool need_point = check_gap || request.last_pass || !boxes_.empty() ||
                          request.evaluation_due;
  const double* point = need_point ? ReturnedPoint().data() : nullptr;
  if (!distribution_status_.ok()) return distribution_status_;
  const double ell = (averaging_ ? block_average_.Ell(ell_, steps_) : ell_) -
                     boxes_.Term(lambda_, averaging_);
  if (check_gap) {
    if (averaging_ || !refresh_block_gaps_) {
      const int threads = NumThreads();
      if (distribution_.communicator == nullptr) {
        end.certificate =
            ComputeDualityGap(problem_, point, ell, lambda_, threads);
      } else {
        absl::StatusOr<DualityGap> gap = ComputeDualityGap(
            problem_, point, ell, lambda_, threads, distribution_);
        if (!gap.ok()) return gap.status();
        end.certificate = *gap;
      }
      oracle_calls_ += n_;
    }
  } else {
    // The dual at w̄ needs w̄: between reads, averaging logs none.
    if (need_point || !averaging_) {
      const double norm = SquaredNorm(need_point ? point : w_.data(), dim_);
      record->set_dual(ell - 0.5 * lambda_ * norm);
    }
    // The block-gap estimates are at the iterate, not at w̄.
    if (num_unvisited_ == 0 && !averaging_) {
      record->set_gap(estimate);
      record->set_gap_exact(false);
    }
  }
  if (use_cache_ && pass_draws_ > 0) {
    record->set_cache_hit_rate(static_cast<double>(pass_hits_) / pass_draws_);
  }
  if (track_alpha_) {
    int64_t active = 0;
    for (const CornerStore& store : corners_) active += store.NumActive();
    record->set_mean_active_set_size(static_cast<double>(active) / n_);
  }
  return end;
}

absl::StatusOr<TrainingSummary> BcfwSolver::Solve(const Problem& problem,
                                                  Monitor* monitor,
                                                  std::vector<double>* w_out) {
  BcfwRun run(config_, problem);
  run.set_invariants_output(invariants_);
  if (distribution_.communicator != nullptr) {
    run.set_distribution(distribution_);
  }
  return run.Solve(monitor, w_out);
}

}  // namespace chaintag
