#include "solvers/mp_bcfw.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/random.h"
#include "solvers/corner_store.h"
#include "solvers/duality_gap.h"
#include "solvers/pass_driver.h"

namespace chaintag {
namespace {

// A plane of a working set: the corner and its loss, never ψ. Its share
// α of the block state, and its inner products with the set's planes
// (dots[k] with plane k, dots[own index] its squared norm), let a block
// whose state the set holds whole be read without the state.
struct Plane {
  Corner corner;
  double loss = 0;
  double last_access = 0;
  double alpha = 0;
  std::vector<double> dots;
};

// C(m) = m(m+1)/2: Σ_{k≤m} k, the averaging weight normaliser.
double Triangle(int64_t m) {
  const double x = static_cast<double>(m);
  return 0.5 * x * (x + 1.0);
}

// The work done so far; the approximate-pass rule prices differences of
// these once the oracle cost r is known (r is calibrated after the first
// approximate pass, before the rule's first use).
struct Work {
  int64_t oracle_calls = 0;
  int64_t plane_evaluations = 0;
  double seconds = 0;
};

// One pass of the loop is one outer iteration: an exact pass and up to M
// approximate passes, each logged as a record (the last one by EndPass).
class MpBcfwSteps : public PassSteps {
 public:
  MpBcfwSteps(const SolverConfig& config, const Problem& problem, double lambda,
              double oracle_cost)
      : config_(config),
        problem_(problem),
        n_(problem.NumExamples()),
        dim_(problem.Dim()),
        lambda_(lambda),
        averaging_(config.weighted_averaging()),
        max_planes_(config.mp_bcfw().max_planes()),
        // With no planes there is nothing to run approximate passes on.
        max_approx_(max_planes_ > 0 ? config.mp_bcfw().max_approx_passes() : 0),
        wall_clock_(config.mp_bcfw().rule() == SolverConfig::WALL_CLOCK),
        oracle_cost_(oracle_cost),
        w_(dim_, 0.0),
        ell_block_(n_, 0.0),
        state_offset_(BlockStateOffsets(problem)),
        states_(state_offset_[n_]),
        working_sets_(n_),
        alpha_complete_(max_planes_ > 0 ? n_ : 0, 1),
        point_(dim_, 0.0),
        random_(config.seed()) {
    for (int i = 0; i < n_; ++i) problem.InitBlockState(i, state(i));
    if (averaging_) {
      exact_average_.u.assign(dim_, 0.0);
      approx_average_.u.assign(dim_, 0.0);
    }
  }

  absl::Status RunSteps(int outer, PassDriver* driver) override;
  absl::StatusOr<PassEnd> EndPass(const PassEndRequest& request,
                                  PassRecord* record) override;
  absl::Span<const double> Point() override { return point_; }
  int64_t OracleCalls() const override { return oracle_calls_; }
  absl::Status SaveState(CheckpointWriter* writer) const override;
  absl::Status LoadState(const CheckpointReader& reader) override;

  std::vector<double> TakeWeights() { return std::move(point_); }
  void CheckInvariants(MpBcfwInvariants* invariants) const;
  int max_working_set_size() const { return max_working_set_size_; }
  double oracle_cost() const { return oracle_cost_; }

 private:
  // One averaged sequence: u = Σ_s C(m_s)·Δw_s, the same for ℓ, and its
  // count.
  struct Average {
    std::vector<double> u;
    double ell_u = 0;
    int64_t count = 0;
  };

  double* state(int i) { return states_.data() + state_offset_[i]; }
  // The line-search step towards plane `p` of W_i (with ⟨w, ψ_i(y)⟩ =
  // score, ⟨v_i, w⟩ = state_dot); returns the block gap.
  double BlockStep(int i, int p, double score, double state_dot, bool exact);
  // Whether W_i holds block i's whole state (v_i = Σ_p α_p ψ_i(y_p), the
  // rest on the gold labeling): until a plane with α > 0 leaves W_i, and
  // again after a full step.
  bool AlphaComplete(int i) const {
    return !alpha_complete_.empty() && alpha_complete_[i];
  }
  // ⟨v_i, w⟩ from the planes' scores, for a block whose α is complete.
  double AlphaStateDot(int i, const double* scores) const {
    double dot = 0;
    const std::vector<Plane>& planes = working_sets_[i];
    for (size_t p = 0; p < planes.size(); ++p) {
      dot += planes[p].alpha * scores[p];
    }
    return dot;
  }
  // Plane p's dots row and column against W_i's other planes.
  void SetPlaneDots(int i, int p);
  // Removes plane p of W_i (and its dots column).
  void RemovePlane(int i, int p);
  void FormPoint();
  double PointDual() const {
    return point_ell_ - 0.5 * lambda_ * SquaredNorm(point_.data(), dim_);
  }
  double IterateDual() const {
    return ell_ - 0.5 * lambda_ * SquaredNorm(w_.data(), dim_);
  }
  Work WorkNow(const PassDriver& driver) const {
    return Work{oracle_calls_, plane_evaluations_, driver.Seconds()};
  }
  double CostBetween(const Work& from, const Work& to) const {
    if (wall_clock_) return to.seconds - from.seconds;
    return static_cast<double>(to.oracle_calls - from.oracle_calls) *
               oracle_cost_ +
           static_cast<double>(to.plane_evaluations - from.plane_evaluations);
  }
  // Returns the plane's index in W_i (-1 without planes).
  int AddToWorkingSet(int i, const OracleResult& oracle);
  // The exact pass: oracle corners; returns the sum of the block gaps.
  double ExactPass(PassDriver* driver, int64_t* steps);
  // An approximate pass over the working sets.
  void ApproxPass(PassDriver* driver, double threshold, int64_t* steps);
  // The DETERMINISTIC rule's r, once, from the first passes of each kind.
  void Calibrate(bool exact, int64_t steps, double pass_seconds,
                 int64_t planes_before);

  const SolverConfig& config_;
  const Problem& problem_;
  const int n_;
  const int64_t dim_;
  const double lambda_;
  const bool averaging_;
  const int max_planes_;
  const int max_approx_;
  const bool wall_clock_;
  double oracle_cost_;  // r; 0 until calibrated
  // Seconds per oracle call of the first exact pass (calibration).
  double oracle_seconds_ = -1;

  // The iterate: w = Σ_i v_i/(λn), ℓ = Σ_i ℓ_i, the block states v_i.
  std::vector<double> w_;
  double ell_ = 0;
  std::vector<double> ell_block_;
  const std::vector<int64_t> state_offset_;
  std::vector<double> states_;
  std::vector<std::vector<Plane>> working_sets_;
  std::vector<char> alpha_complete_;  // per block; empty without planes
  int64_t total_planes_ = 0;
  int max_working_set_size_ = 0;
  Average exact_average_, approx_average_;
  // The returned point and its ℓ.
  std::vector<double> point_;
  double point_ell_ = 0;

  SolverRandom random_;
  std::vector<int> order_;
  OracleResult oracle_;
  std::vector<const Corner*> corner_pointers_;
  // BlockStep's planes with α > 0 (and the gold rest) and their weights.
  std::vector<const Corner*> mixture_corners_;
  std::vector<double> mixture_weights_;
  std::vector<double> scores_;
  int64_t oracle_calls_ = 0;
  int64_t plane_evaluations_ = 0;
  int record_pass_ = 0;
  double timestamp_ = 0;
  // The record of the outer iteration's last pass, for EndPass.
  PassRecord last_record_;
  bool last_exact_ = false;
  double last_gap_estimate_ = 0;
};

// The BCFW line-search block step of bcfw.cc towards corner y (with loss
// `loss`, ⟨w, ψ_i(y)⟩ = score, ⟨v_i, w⟩ = state_dot); returns the block
// gap. Both averages take the step, weighted by their own C(m_s).
double MpBcfwSteps::BlockStep(int i, int p, double score, double state_dot,
                              bool exact) {
  double* block_state = state(i);
  std::vector<Plane>& planes = working_sets_[i];
  const Corner& y = p >= 0 ? planes[p].corner : oracle_.corner;
  const double loss = p >= 0 ? planes[p].loss : oracle_.loss;
  const bool from_alpha = p >= 0 && AlphaComplete(i);
  const double ell_corner = loss / n_;
  const double block_gap =
      (state_dot - score) / n_ - ell_block_[i] + ell_corner;
  const double distance =
      (from_alpha ? AlphaDistanceSquared(planes, p)
                  : problem_.StateDistanceSquared(i, block_state, y)) /
      (lambda_ * n_ * n_);
  const double gamma =
      distance > 0 ? std::clamp(block_gap / distance, 0.0, 1.0) : 0.0;
  if (gamma > 0) {
    const double c = gamma / (lambda_ * n_);
    // x += scale·(ψ_i(y) − v_i); from the planes when they hold v_i.
    mixture_corners_.clear();
    mixture_weights_.clear();
    if (from_alpha) {
      double rest = 1;
      for (const Plane& plane : planes) {
        if (plane.alpha > 0) {
          mixture_corners_.push_back(&plane.corner);
          mixture_weights_.push_back(plane.alpha);
          rest -= plane.alpha;
        }
      }
      if (rest != 0) {
        mixture_corners_.push_back(&problem_.GoldCorner(i));
        mixture_weights_.push_back(rest);
      }
    }
    auto add_step = [&](double scale, double* x) {
      if (from_alpha) {
        problem_.AddCornerMinusMixture(
            i, y, block_state, mixture_corners_.data(), mixture_weights_.data(),
            static_cast<int>(mixture_corners_.size()), scale, x);
      } else {
        problem_.AddCornerMinusState(i, y, block_state, scale, x);
      }
    };
    add_step(c, w_.data());
    const double delta_ell = gamma * (ell_corner - ell_block_[i]);
    if (averaging_) {
      for (Average* average : {&exact_average_, &approx_average_}) {
        const double weight = Triangle(average->count);
        if (weight > 0) {
          add_step(c * weight, average->u.data());
          average->ell_u += weight * delta_ell;
        }
      }
    }
    ell_ += delta_ell;
    ell_block_[i] += delta_ell;
    const int64_t size = state_offset_[i + 1] - state_offset_[i];
    const int64_t mixed = static_cast<int64_t>(mixture_corners_.size());
    if (from_alpha && mixed * 4 * static_cast<int64_t>(y.size()) < size) {
      // The state is affine in α: −γ·(its α_q on each plane and the rest
      // on the gold labeling), a few labelings' entries instead of a sweep
      // of the whole state.
      for (int64_t k = 0; k < mixed; ++k) {
        problem_.AddCornerToState(i, *mixture_corners_[k],
                                  -gamma * mixture_weights_[k], block_state);
      }
      problem_.AddCornerToState(i, y, gamma, block_state);
    } else {
      problem_.MixCorner(i, y, gamma, block_state);
    }
    if (p >= 0) {
      if (gamma >= 1) {
        for (Plane& plane : planes) plane.alpha = 0;
        planes[p].alpha = 1;
        alpha_complete_[i] = 1;
      } else {
        for (Plane& plane : planes) plane.alpha *= 1 - gamma;
        planes[p].alpha += gamma;
      }
    }
  }
  ++(exact ? exact_average_ : approx_average_).count;
  return block_gap;
}

// The returned point and its ℓ: the best dual on [w̄_E, w̄_A], or w.
void MpBcfwSteps::FormPoint() {
  if (!averaging_ || exact_average_.count == 0) {
    point_ = w_;
    point_ell_ = ell_;
    return;
  }
  const double a = 1.0 / Triangle(exact_average_.count);
  const double ell_exact = ell_ - a * exact_average_.ell_u;
  const double* u_e = exact_average_.u.data();
  if (approx_average_.count == 0) {
    for (int64_t j = 0; j < dim_; ++j) point_[j] = w_[j] - a * u_e[j];
    point_ell_ = ell_exact;
    return;
  }
  const double b = 1.0 / Triangle(approx_average_.count);
  const double ell_approx = ell_ - b * approx_average_.ell_u;
  const double* u_a = approx_average_.u.data();
  // D(t) = ℓ_E + t·Δℓ − λ/2‖w̄_E + t·d‖², d = w̄_A − w̄_E = a·u_E − b·u_A.
  double dot = 0, dd = 0;
  for (int64_t j = 0; j < dim_; ++j) {
    const double d = a * u_e[j] - b * u_a[j];
    dot += (w_[j] - a * u_e[j]) * d;
    dd += d * d;
  }
  const double delta_ell = ell_approx - ell_exact;
  double t;
  if (dd > 0) {
    t = std::clamp((delta_ell - lambda_ * dot) / (lambda_ * dd), 0.0, 1.0);
  } else {
    t = delta_ell > 0 ? 1.0 : 0.0;
  }
  for (int64_t j = 0; j < dim_; ++j) {
    point_[j] = w_[j] - a * u_e[j] + t * (a * u_e[j] - b * u_a[j]);
  }
  point_ell_ = ell_exact + t * delta_ell;
}

// The oracle's corner joins W_i unless already there (a duplicate only
// refreshes its timestamp); a full W_i overwrites its least recently
// accessed plane.
int MpBcfwSteps::AddToWorkingSet(int i, const OracleResult& oracle) {
  if (max_planes_ <= 0) return -1;
  std::vector<Plane>& planes = working_sets_[i];
  auto same = std::find_if(planes.begin(), planes.end(), [&](const Plane& p) {
    return p.corner == oracle.corner;
  });
  int index;
  if (same != planes.end()) {
    same->last_access = timestamp_;
    return static_cast<int>(same - planes.begin());
  } else if (static_cast<int>(planes.size()) < max_planes_) {
    planes.push_back({oracle.corner, oracle.loss, timestamp_});
    for (Plane& plane : planes) plane.dots.resize(planes.size(), 0.0);
    index = static_cast<int>(planes.size()) - 1;
    ++total_planes_;
  } else {
    auto oldest = std::min_element(planes.begin(), planes.end(),
                                   [](const Plane& x, const Plane& y) {
                                     return x.last_access < y.last_access;
                                   });
    if (oldest->alpha > 0) alpha_complete_[i] = 0;
    oldest->corner = oracle.corner;
    oldest->loss = oracle.loss;
    oldest->last_access = timestamp_;
    oldest->alpha = 0;
    index = static_cast<int>(oldest - planes.begin());
  }
  SetPlaneDots(i, index);
  max_working_set_size_ =
      std::max(max_working_set_size_, static_cast<int>(planes.size()));
  return index;
}

void MpBcfwSteps::SetPlaneDots(int i, int p) {
  std::vector<Plane>& planes = working_sets_[i];
  const Corner& corner = planes[p].corner;
  const double norm =
      problem_.CornerDistanceSquared(i, corner, problem_.GoldCorner(i));
  planes[p].dots.assign(planes.size(), 0.0);
  for (size_t k = 0; k < planes.size(); ++k) {
    const double dot = static_cast<int>(k) == p
                           ? norm
                           : 0.5 * (norm + planes[k].dots[k] -
                                    problem_.CornerDistanceSquared(
                                        i, corner, planes[k].corner));
    planes[p].dots[k] = dot;
    planes[k].dots[p] = dot;
  }
}

void MpBcfwSteps::RemovePlane(int i, int p) {
  std::vector<Plane>& planes = working_sets_[i];
  if (planes[p].alpha > 0) alpha_complete_[i] = 0;
  planes.erase(planes.begin() + p);
  for (Plane& plane : planes) plane.dots.erase(plane.dots.begin() + p);
}

double MpBcfwSteps::ExactPass(PassDriver* driver, int64_t* steps) {
  double gap_estimate = 0;
  for (int j = 0; j < n_; ++j) {
    const int i = order_[j];
    const std::vector<Plane>& planes = working_sets_[i];
    if (AlphaComplete(i) && !planes.empty()) {
      // ⟨v_i, w⟩ from the planes' scores, which share the oracle's pass.
      const int count = static_cast<int>(planes.size());
      corner_pointers_.resize(count);
      scores_.resize(count);
      for (int p = 0; p < count; ++p) corner_pointers_[p] = &planes[p].corner;
      problem_.ScoreCornersAndMaxOracle(i, w_.data(), nullptr,
                                        corner_pointers_.data(), count,
                                        scores_.data(), &oracle_);
      oracle_.state_dot = AlphaStateDot(i, scores_.data());
    } else {
      problem_.MaxOracleWithStateDot(
          i, w_.data(), AlphaComplete(i) ? nullptr : state(i), &oracle_);
    }
    ++oracle_calls_;
    const int p = AddToWorkingSet(i, oracle_);
    gap_estimate += BlockStep(i, p, oracle_.score, oracle_.state_dot, true);
    ++*steps;
    if (driver->Expired(j)) break;
  }
  return gap_estimate;
}

// The same step with the best plane of W_i at the current w (ties go to
// the last maximum, as in the reference code); then planes not accessed
// since `threshold` leave W_i (the chosen plane always stays).
void MpBcfwSteps::ApproxPass(PassDriver* driver, double threshold,
                             int64_t* steps) {
  for (int j = 0; j < n_; ++j) {
    const int i = order_[j];
    std::vector<Plane>& planes = working_sets_[i];
    if (!planes.empty()) {
      const int count = static_cast<int>(planes.size());
      corner_pointers_.resize(count);
      scores_.resize(count);
      for (int p = 0; p < count; ++p) corner_pointers_[p] = &planes[p].corner;
      double state_dot = 0;
      if (AlphaComplete(i)) {
        problem_.ScoreCorners(i, w_.data(), nullptr, corner_pointers_.data(),
                              count, scores_.data(), nullptr);
        state_dot = AlphaStateDot(i, scores_.data());
      } else {
        problem_.ScoreCorners(i, w_.data(), state(i), corner_pointers_.data(),
                              count, scores_.data(), &state_dot);
      }
      plane_evaluations_ += count;
      int best = 0;
      for (int p = 1; p < count; ++p) {
        if (planes[p].loss - scores_[p] >= planes[best].loss - scores_[best]) {
          best = p;
        }
      }
      planes[best].last_access = timestamp_;
      const double score = scores_[best];
      int chosen = best;
      for (int p = count - 1; p >= 0; --p) {
        if (planes[p].last_access < threshold) {
          RemovePlane(i, p);
          if (p < chosen) --chosen;
        }
      }
      total_planes_ -= count - static_cast<int64_t>(planes.size());
      BlockStep(i, chosen, score, state_dot, false);
      ++*steps;
    }
    if (driver->Expired(j)) break;
  }
}

// r is rounded to a power of two so that runs agree on it.
void MpBcfwSteps::Calibrate(bool exact, int64_t steps, double pass_seconds,
                            int64_t planes_before) {
  if (wall_clock_ || oracle_cost_ > 0) return;
  if (exact && steps > 0) {
    oracle_seconds_ = pass_seconds / static_cast<double>(steps);
  } else if (!exact && oracle_seconds_ >= 0 &&
             plane_evaluations_ > planes_before) {
    const double plane_seconds =
        std::max(pass_seconds, 1e-9) /
        static_cast<double>(plane_evaluations_ - planes_before);
    oracle_cost_ = std::exp2(
        std::round(std::log2(std::max(oracle_seconds_, 1e-9) / plane_seconds)));
  }
}

absl::Status MpBcfwSteps::RunSteps(int, PassDriver* driver) {
  timestamp_ = std::floor(timestamp_) + 1;
  const double threshold = timestamp_ - config_.mp_bcfw().inactive_iterations();
  random_.Permutation(n_, &order_);
  const double dual_start = IterateDual();
  const Work work_start = WorkNow(*driver);
  Work work_previous;
  double dual_previous = 0;
  for (int approx = 0; approx <= max_approx_; ++approx) {
    timestamp_ += 0.5 / (max_approx_ + 1);
    const bool exact = approx == 0;
    const absl::Time pass_start = absl::Now();
    const int64_t planes_before = plane_evaluations_;
    int64_t steps = 0;
    double gap_estimate = 0;
    if (exact) {
      gap_estimate = ExactPass(driver, &steps);
    } else {
      ApproxPass(driver, threshold, &steps);
    }
    Calibrate(exact, steps, absl::ToDoubleSeconds(absl::Now() - pass_start),
              planes_before);
    // The approximate-pass rule (§3.4), compared cross-multiplied (costs
    // > 0): stop when the last pass's dual increase per unit cost is below
    // the outer iteration's so far, or when it increased nothing.
    const double dual_now = IterateDual();
    const Work work_pass_end = WorkNow(*driver);
    bool stop_approx = false;
    if (!exact) {
      const double last_increase = dual_now - dual_previous;
      stop_approx = steps == 0 || !(last_increase > 0) ||
                    last_increase * CostBetween(work_start, work_previous) <
                        (dual_previous - dual_start) *
                            CostBetween(work_previous, work_pass_end);
    }
    work_previous = work_pass_end;
    dual_previous = dual_now;
    const bool outer_done =
        driver->expired() || approx == max_approx_ || (!exact && stop_approx);

    PassRecord record = driver->NewRecord(++record_pass_);
    record.set_approx_passes(approx);
    record.set_mean_active_set_size(static_cast<double>(total_planes_) / n_);
    FormPoint();
    if (outer_done) {
      last_record_ = std::move(record);
      last_exact_ = exact;
      last_gap_estimate_ = gap_estimate;
      return absl::OkStatus();
    }
    record.set_dual(PointDual());
    if (exact) {
      record.set_gap(gap_estimate);
      record.set_gap_exact(false);
    }
    absl::Status status = driver->RecordInterim(std::move(record));
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

// The outer iteration's last record: the exact gap at the returned point
// when the cadence asks (n more oracle calls), else its dual and, after an
// exact pass, the block gaps' sum as an estimate.
absl::StatusOr<PassEnd> MpBcfwSteps::EndPass(const PassEndRequest& request,
                                             PassRecord* record) {
  *record = std::move(last_record_);
  PassEnd end;
  if (request.gap_check_due) {
    end.certificate =
        ComputeDualityGap(problem_, point_.data(), point_ell_, lambda_,
                          std::max(1, config_.num_threads()));
    oracle_calls_ += n_;
    return end;
  }
  record->set_dual(PointDual());
  if (last_exact_) {
    record->set_gap(last_gap_estimate_);
    record->set_gap_exact(false);
  }
  return end;
}

absl::Status MpBcfwSteps::SaveState(CheckpointWriter* writer) const {
  writer->SparseReals("w", w_);
  writer->Real("ell", ell_);
  writer->Reals("ell_block", ell_block_);
  writer->SparseReals("states", states_);
  std::vector<int64_t> counts, labels;
  std::vector<double> losses, accesses, alphas, dots;
  for (const std::vector<Plane>& planes : working_sets_) {
    counts.push_back(static_cast<int64_t>(planes.size()));
    for (const Plane& plane : planes) {
      labels.insert(labels.end(), plane.corner.begin(), plane.corner.end());
      losses.push_back(plane.loss);
      accesses.push_back(plane.last_access);
      alphas.push_back(plane.alpha);
      dots.insert(dots.end(), plane.dots.begin(), plane.dots.end());
    }
  }
  writer->Integers("plane_counts", counts);
  writer->Integers("plane_labels", labels);
  writer->Reals("plane_losses", losses);
  writer->Reals("plane_accesses", accesses);
  writer->Reals("plane_alphas", alphas);
  writer->Reals("plane_dots", dots);
  writer->Integers("alpha_complete", alpha_complete_);
  writer->Integer("total_planes", total_planes_);
  writer->Integer("max_working_set_size", max_working_set_size_);
  for (const auto& [name, average] :
       {std::pair<const char*, const Average*>{"exact", &exact_average_},
        {"approx", &approx_average_}}) {
    writer->SparseReals(absl::StrCat(name, "_u"), average->u);
    writer->Real(absl::StrCat(name, "_ell_u"), average->ell_u);
    writer->Integer(absl::StrCat(name, "_count"), average->count);
  }
  writer->SparseReals("point", point_);
  writer->Real("point_ell", point_ell_);
  writer->Random("random", random_);
  writer->Integer("oracle_calls", oracle_calls_);
  writer->Integer("plane_evaluations", plane_evaluations_);
  writer->Integer("record_pass", record_pass_);
  writer->Real("timestamp", timestamp_);
  writer->Real("oracle_cost", oracle_cost_);
  writer->Real("oracle_seconds", oracle_seconds_);
  return absl::OkStatus();
}

absl::Status MpBcfwSteps::LoadState(const CheckpointReader& reader) {
  absl::Status status = absl::OkStatus();
  auto next = [&status](absl::Status read) {
    if (status.ok()) status = std::move(read);
  };
  next(reader.Reals("w", dim_, &w_));
  next(reader.Real("ell", &ell_));
  next(reader.Reals("ell_block", n_, &ell_block_));
  next(reader.Reals("states", static_cast<int64_t>(states_.size()), &states_));
  std::vector<int64_t> counts, labels;
  std::vector<double> losses, accesses, alphas, dots;
  next(reader.Integers("plane_counts", n_, &counts));
  next(reader.Integers("plane_labels", -1, &labels));
  next(reader.Reals("plane_losses", -1, &losses));
  next(reader.Reals("plane_accesses", -1, &accesses));
  // Checkpoints from before planes kept α: every block reads its state
  // (until a full step), and the dots are computed again.
  const bool has_alpha = reader.Has("plane_alphas");
  if (has_alpha) {
    next(reader.Reals("plane_alphas", -1, &alphas));
    next(reader.Reals("plane_dots", -1, &dots));
    next(reader.Integers("alpha_complete",
                         static_cast<int64_t>(alpha_complete_.size()),
                         &alpha_complete_));
  } else {
    std::fill(alpha_complete_.begin(), alpha_complete_.end(), 0);
  }
  next(reader.Integer("total_planes", &total_planes_));
  next(reader.Integer("max_working_set_size", &max_working_set_size_));
  for (const auto& [name, average] :
       {std::pair<const char*, Average*>{"exact", &exact_average_},
        {"approx", &approx_average_}}) {
    next(reader.Reals(absl::StrCat(name, "_u"),
                      static_cast<int64_t>(average->u.size()), &average->u));
    next(reader.Real(absl::StrCat(name, "_ell_u"), &average->ell_u));
    next(reader.Integer(absl::StrCat(name, "_count"), &average->count));
  }
  next(reader.Reals("point", dim_, &point_));
  next(reader.Real("point_ell", &point_ell_));
  next(reader.Random("random", &random_));
  next(reader.Integer("oracle_calls", &oracle_calls_));
  next(reader.Integer("plane_evaluations", &plane_evaluations_));
  next(reader.Integer("record_pass", &record_pass_));
  next(reader.Real("timestamp", &timestamp_));
  next(reader.Real("oracle_cost", &oracle_cost_));
  next(reader.Real("oracle_seconds", &oracle_seconds_));
  if (!status.ok()) return status;
  size_t plane = 0, label = 0, dot = 0;
  for (int i = 0; i < n_; ++i) {
    std::vector<Plane>& planes = working_sets_[i];
    planes.clear();
    const size_t length = problem_.GoldCorner(i).size();
    const size_t row = static_cast<size_t>(counts[i]);
    for (int64_t k = 0; k < counts[i]; ++k, ++plane) {
      if (plane >= losses.size() || plane >= accesses.size() ||
          label + length > labels.size() ||
          (has_alpha && (plane >= alphas.size() || dot + row > dots.size()))) {
        return absl::DataLossError("checkpoint's planes are truncated");
      }
      Corner corner(labels.begin() + label, labels.begin() + label + length);
      if (!problem_.IsCorner(i, corner)) {
        return absl::DataLossError(absl::StrCat("checkpoint's plane ", k,
                                                " of block ", i,
                                                " is no labeling of it"));
      }
      planes.push_back({std::move(corner), losses[plane], accesses[plane]});
      label += length;
      if (has_alpha) {
        planes.back().alpha = alphas[plane];
        planes.back().dots.assign(dots.begin() + dot, dots.begin() + dot + row);
        dot += row;
      }
    }
    if (!has_alpha) {
      for (Plane& p : planes) {
        p.dots.assign(planes.size(), 0.0);
        p.dots[&p - planes.data()] =
            problem_.CornerDistanceSquared(i, p.corner, problem_.GoldCorner(i));
      }
      for (int p = 0; p < static_cast<int>(planes.size()); ++p) {
        SetPlaneDots(i, p);
      }
    }
  }
  return absl::OkStatus();
}

void MpBcfwSteps::CheckInvariants(MpBcfwInvariants* invariants) const {
  *invariants = MpBcfwInvariants();
  invariants->max_weight_error = MaxWeightError(
      problem_, w_.data(), states_.data(), state_offset_.data(), lambda_);
  std::vector<double> from_alpha;
  for (int i = 0; i < n_; ++i) {
    if (!AlphaComplete(i)) continue;
    ++invariants->blocks_checked;
    const std::vector<Plane>& planes = working_sets_[i];
    const double* actual = states_.data() + state_offset_[i];
    from_alpha.assign(state_offset_[i + 1] - state_offset_[i], 0.0);
    double alpha_sum = 0;
    problem_.InitBlockState(i, from_alpha.data());
    for (const Plane& plane : planes) alpha_sum += plane.alpha;
    // The gold rest: 1 − Σα on the gold labeling, whose state InitBlockState
    // gave with weight 1.
    for (double& x : from_alpha) x *= 1 - alpha_sum;
    for (const Plane& plane : planes) {
      problem_.AddCornerToState(i, plane.corner, plane.alpha,
                                from_alpha.data());
    }
    invariants->max_alpha_sum = std::max(invariants->max_alpha_sum, alpha_sum);
    for (size_t k = 0; k < from_alpha.size(); ++k) {
      invariants->max_state_error = std::max(
          invariants->max_state_error, std::abs(actual[k] - from_alpha[k]));
    }
    for (int p = 0; p < static_cast<int>(planes.size()); ++p) {
      const double from_state =
          problem_.StateDistanceSquared(i, actual, planes[p].corner);
      invariants->max_distance_error =
          std::max(invariants->max_distance_error,
                   std::abs(AlphaDistanceSquared(planes, p) - from_state) /
                       std::max(1.0, from_state));
    }
  }
}

}  // namespace

absl::StatusOr<TrainingSummary> MpBcfwSolver::Solve(
    const Problem& problem, Monitor* monitor, std::vector<double>* w_out) {
  const int n = problem.NumExamples();
  if (n <= 0) {
    return absl::InvalidArgumentError("mp_bcfw: no training examples");
  }
  const SolverConfig::MpBcfw& options = config_.mp_bcfw();
  if (options.max_planes() < 0 || options.max_approx_passes() < 0 ||
      options.inactive_iterations() < 0) {
    return absl::InvalidArgumentError(
        "mp_bcfw: max_planes, max_approx_passes and inactive_iterations "
        "must be non-negative");
  }
  const double oracle_cost = options.oracle_cost();
  if (!(oracle_cost >= 0)) {
    return absl::InvalidArgumentError(
        "mp_bcfw: oracle_cost must be > 0 (or 0 to measure it)");
  }
  const double lambda = ResolveLambda(config_, n);
  MpBcfwSteps steps(config_, problem, lambda, oracle_cost);
  PassDriver driver(config_, "mp_bcfw", lambda, n, problem.Dim(), monitor);
  absl::StatusOr<TrainingSummary> summary = driver.Run(&steps);
  max_working_set_size_ = steps.max_working_set_size();
  oracle_cost_ = steps.oracle_cost();
  if (summary.ok() && invariants_ != nullptr) {
    steps.CheckInvariants(invariants_);
  }
  if (summary.ok()) *w_out = steps.TakeWeights();
  return summary;
}

}  // namespace chaintag
