#include "solvers/mp_bcfw.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/random.h"
#include "solvers/duality_gap.h"

namespace chaintag {
namespace {

// A plane of a working set: the corner and its loss, never ψ.
struct Plane {
  Corner corner;
  double loss = 0;
  double last_access = 0;
};

// C(m) = m(m+1)/2: Σ_{k≤m} k, the averaging weight normaliser.
double Triangle(int64_t m) {
  const double x = static_cast<double>(m);
  return 0.5 * x * (x + 1.0);
}

// One averaged sequence: u = Σ_s C(m_s)·Δw_s, the same for ℓ, and its count.
struct Average {
  std::vector<double> u;
  double ell_u = 0;
  int64_t count = 0;
};

}  // namespace

absl::StatusOr<TrainingSummary> MpBcfwSolver::Solve(
    const Problem& problem, Monitor* monitor, std::vector<double>* w_out) {
  const int n = problem.NumExamples();
  const int64_t dim = problem.Dim();
  if (n <= 0) {
    return absl::InvalidArgumentError("mp_bcfw: no training examples");
  }
  if (config_.mp_bcfw().max_planes() < 0 ||
      config_.mp_bcfw().max_approx_passes() < 0 ||
      config_.mp_bcfw().inactive_iterations() < 0) {
    return absl::InvalidArgumentError(
        "mp_bcfw: mp_max_planes, mp_max_approx_passes and "
        "mp_inactive_iterations must be non-negative");
  }
  if (fixed_oracle_cost_ < 0) {
    return absl::InvalidArgumentError("mp_bcfw: oracle cost must be > 0");
  }
  const double lambda = ResolveLambda(config_, n);
  const bool averaging = config_.weighted_averaging();
  const int threads = std::max(1, config_.num_threads());
  const int max_planes = config_.mp_bcfw().max_planes();
  // With no planes there is nothing to run approximate passes on (BCFW).
  const int max_approx =
      max_planes > 0 ? config_.mp_bcfw().max_approx_passes() : 0;
  const double inactive = config_.mp_bcfw().inactive_iterations();
  const bool wall_clock = config_.mp_bcfw().rule() == SolverConfig::WALL_CLOCK;
  max_working_set_size_ = 0;
  oracle_cost_ = fixed_oracle_cost_;

  // The iterate: w = Σ_i v_i/(λn), ℓ = Σ_i ℓ_i, the block states v_i.
  std::vector<double> w(dim, 0.0);
  double ell = 0;
  std::vector<double> ell_block(n, 0.0);
  const std::vector<int64_t> state_offset = BlockStateOffsets(problem);
  std::vector<double> states(state_offset[n]);
  for (int i = 0; i < n; ++i) {
    problem.InitBlockState(i, states.data() + state_offset[i]);
  }
  std::vector<std::vector<Plane>> working_sets(n);
  int64_t total_planes = 0;
  Average exact_average, approx_average;
  if (averaging) {
    exact_average.u.assign(dim, 0.0);
    approx_average.u.assign(dim, 0.0);
  }

  // The BCFW line-search block step of bcfw.cc towards corner y (with loss
  // `loss`, ⟨w, ψ_i(y)⟩ = score, ⟨v_i, w⟩ = state_dot); returns the block
  // gap. Both averages take the step, weighted by their own C(m_s).
  auto block_step = [&](int i, const Corner& y, double loss, double score,
                        double state_dot, bool exact) {
    double* state = states.data() + state_offset[i];
    const double ell_corner = loss / n;
    const double block_gap =
        (state_dot - score) / n - ell_block[i] + ell_corner;
    const double distance =
        problem.StateDistanceSquared(i, state, y) / (lambda * n * n);
    const double gamma =
        distance > 0 ? std::clamp(block_gap / distance, 0.0, 1.0) : 0.0;
    if (gamma > 0) {
      const double c = gamma / (lambda * n);
      problem.AddCornerMinusState(i, y, state, c, w.data());
      const double delta_ell = gamma * (ell_corner - ell_block[i]);
      if (averaging) {
        for (Average* average : {&exact_average, &approx_average}) {
          const double weight = Triangle(average->count);
          if (weight > 0) {
            problem.AddCornerMinusState(i, y, state, c * weight,
                                        average->u.data());
            average->ell_u += weight * delta_ell;
          }
        }
      }
      ell += delta_ell;
      ell_block[i] += delta_ell;
      problem.MixCorner(i, y, gamma, state);
    }
    ++(exact ? exact_average : approx_average).count;
    return block_gap;
  };

  // The returned point and its ℓ: the best dual on [w̄_E, w̄_A], or w.
  std::vector<double> point(dim, 0.0);
  double point_ell = 0;
  auto form_point = [&] {
    if (!averaging || exact_average.count == 0) {
      point = w;
      point_ell = ell;
      return;
    }
    const double a = 1.0 / Triangle(exact_average.count);
    const double ell_exact = ell - a * exact_average.ell_u;
    const double* u_e = exact_average.u.data();
    if (approx_average.count == 0) {
      for (int64_t j = 0; j < dim; ++j) point[j] = w[j] - a * u_e[j];
      point_ell = ell_exact;
      return;
    }
    const double b = 1.0 / Triangle(approx_average.count);
    const double ell_approx = ell - b * approx_average.ell_u;
    const double* u_a = approx_average.u.data();
    // D(t) = ℓ_E + t·Δℓ − λ/2‖w̄_E + t·d‖², d = w̄_A − w̄_E = a·u_E − b·u_A.
    double dot = 0, dd = 0;
    for (int64_t j = 0; j < dim; ++j) {
      const double d = a * u_e[j] - b * u_a[j];
      dot += (w[j] - a * u_e[j]) * d;
      dd += d * d;
    }
    const double delta_ell = ell_approx - ell_exact;
    double t;
    if (dd > 0) {
      t = std::clamp((delta_ell - lambda * dot) / (lambda * dd), 0.0, 1.0);
    } else {
      t = delta_ell > 0 ? 1.0 : 0.0;
    }
    for (int64_t j = 0; j < dim; ++j) {
      point[j] = w[j] - a * u_e[j] + t * (a * u_e[j] - b * u_a[j]);
    }
    point_ell = ell_exact + t * delta_ell;
  };
  auto iterate_dual = [&] {
    return ell - 0.5 * lambda * SquaredNorm(w.data(), dim);
  };

  SolverRandom random(config_.seed());
  std::vector<int> order;
  OracleResult oracle;
  std::vector<const Corner*> corner_ptrs;
  std::vector<double> scores;
  const absl::Time start = absl::Now();
  const double max_seconds = config_.max_seconds();
  auto elapsed = [&] { return absl::ToDoubleSeconds(absl::Now() - start); };

  TrainingSummary summary;
  summary.set_solver("mp_bcfw");
  summary.set_lambda(lambda);
  summary.set_num_examples(n);
  summary.set_dim(dim);
  int64_t oracle_calls = 0;
  int64_t plane_evaluations = 0;
  std::string stop_reason = "max_passes";
  DualityGap last_gap;
  bool have_gap = false;
  bool out_of_time = false;
  int record_pass = 0;
  double timestamp = 0;
  // DETERMINISTIC rule calibration: the first exact pass's seconds per
  // oracle call, then the first approximate pass's seconds per plane.
  double oracle_seconds = -1;

  // The work done so far; the rule prices differences of these once r is
  // known (r is calibrated after the first approximate pass, before the
  // rule's first use).
  struct Work {
    int64_t oracle_calls = 0;
    int64_t plane_evaluations = 0;
    double seconds = 0;
  };
  auto work_now = [&] {
    return Work{oracle_calls, plane_evaluations, elapsed()};
  };
  auto cost_between = [&](const Work& from, const Work& to) {
    if (wall_clock) return to.seconds - from.seconds;
    return static_cast<double>(to.oracle_calls - from.oracle_calls) *
               oracle_cost_ +
           static_cast<double>(to.plane_evaluations - from.plane_evaluations);
  };
  bool done = false;

  for (int outer = 1; outer <= config_.max_passes(); ++outer) {
    timestamp = std::floor(timestamp) + 1;
    const double threshold = timestamp - inactive;
    random.Permutation(n, &order);
    const double dual_start = iterate_dual();
    const Work work_start = work_now();
    Work work_previous;
    double dual_previous = 0;

    for (int approx = 0; approx <= max_approx; ++approx) {
      timestamp += 0.5 / (max_approx + 1);
      const bool exact = approx == 0;
      const absl::Time pass_start = absl::Now();
      const int64_t planes_before = plane_evaluations;
      int64_t steps = 0;
      double gap_estimate = 0;
      for (int j = 0; j < n; ++j) {
        const int i = order[j];
        std::vector<Plane>& planes = working_sets[i];
        const double* state = states.data() + state_offset[i];
        if (exact) {
          problem.MaxOracle(i, w.data(), state, &oracle);
          ++oracle_calls;
          if (max_planes > 0) {
            auto same = std::find_if(
                planes.begin(), planes.end(),
                [&](const Plane& p) { return p.corner == oracle.corner; });
            if (same != planes.end()) {
              same->last_access = timestamp;
            } else if (static_cast<int>(planes.size()) < max_planes) {
              planes.push_back({oracle.corner, oracle.loss, timestamp});
              ++total_planes;
            } else {
              auto oldest =
                  std::min_element(planes.begin(), planes.end(),
                                   [](const Plane& x, const Plane& y) {
                                     return x.last_access < y.last_access;
                                   });
              *oldest = {oracle.corner, oracle.loss, timestamp};
            }
            max_working_set_size_ = std::max(max_working_set_size_,
                                             static_cast<int>(planes.size()));
          }
          gap_estimate += block_step(i, oracle.corner, oracle.loss,
                                     oracle.score, oracle.state_dot, true);
          ++steps;
        } else if (!planes.empty()) {
          const int count = static_cast<int>(planes.size());
          corner_ptrs.resize(count);
          scores.resize(count);
          for (int p = 0; p < count; ++p) corner_ptrs[p] = &planes[p].corner;
          double state_dot = 0;
          problem.ScoreCorners(i, w.data(), state, corner_ptrs.data(), count,
                               scores.data(), &state_dot);
          plane_evaluations += count;
          int best = 0;
          for (int p = 1; p < count; ++p) {
            // '>=': ties go to the last maximum, as in the reference code.
            if (planes[p].loss - scores[p] >=
                planes[best].loss - scores[best]) {
              best = p;
            }
          }
          planes[best].last_access = timestamp;
          const Plane chosen = planes[best];
          const double score = scores[best];
          // The chosen plane was just accessed, so at least it stays.
          planes.erase(std::remove_if(planes.begin(), planes.end(),
                                      [&](const Plane& p) {
                                        return p.last_access < threshold;
                                      }),
                       planes.end());
          total_planes -= count - static_cast<int64_t>(planes.size());
          block_step(i, chosen.corner, chosen.loss, score, state_dot, false);
          ++steps;
        }
        if (max_seconds > 0 && (j & 63) == 0 && elapsed() >= max_seconds) {
          out_of_time = true;
          break;
        }
      }
      const double pass_seconds =
          absl::ToDoubleSeconds(absl::Now() - pass_start);

      // Calibrate the DETERMINISTIC rule once, on the first passes of each
      // kind; r is rounded to a power of two so runs agree on it.
      if (!wall_clock && oracle_cost_ <= 0) {
        if (exact && steps > 0) {
          oracle_seconds = pass_seconds / static_cast<double>(steps);
        } else if (!exact && oracle_seconds >= 0 &&
                   plane_evaluations > planes_before) {
          const double plane_seconds =
              std::max(pass_seconds, 1e-9) /
              static_cast<double>(plane_evaluations - planes_before);
          oracle_cost_ = std::exp2(std::round(
              std::log2(std::max(oracle_seconds, 1e-9) / plane_seconds)));
        }
      }

      // The approximate-pass rule, compared cross-multiplied (costs > 0).
      bool stop_approx = false;
      const double dual_now = iterate_dual();
      const Work work_pass_end = work_now();
      if (!exact) {
        const double last_increase = dual_now - dual_previous;
        stop_approx = steps == 0 || !(last_increase > 0) ||
                      last_increase * cost_between(work_start, work_previous) <
                          (dual_previous - dual_start) *
                              cost_between(work_previous, work_pass_end);
      }
      work_previous = work_pass_end;
      dual_previous = dual_now;
      const bool outer_done =
          exact ? (max_approx == 0 || out_of_time)
                : (stop_approx || approx == max_approx || out_of_time);
      const bool last_outer = outer == config_.max_passes() || out_of_time;

      PassRecord record;
      record.set_solver("mp_bcfw");
      record.set_pass(++record_pass);
      record.set_lambda(lambda);
      record.set_approx_passes(approx);
      record.set_mean_active_set_size(static_cast<double>(total_planes) / n);
      form_point();
      const bool check_gap =
          outer_done && (outer % config_.gap_check() == 0 ||
                         (last_outer && config_.final_gap()));
      bool converged = false;
      if (check_gap) {
        last_gap = ComputeDualityGap(problem, point.data(), point_ell, lambda,
                                     threads);
        have_gap = true;
        oracle_calls += n;
        SetCertificate(last_gap, &record);
        converged = last_gap.gap <= config_.gap_tolerance();
      } else {
        record.set_dual(point_ell -
                        0.5 * lambda * SquaredNorm(point.data(), dim));
        if (exact) {
          record.set_gap(gap_estimate);
          record.set_gap_exact(false);
        }
      }
      if (converged) {
        stop_reason = "gap_tolerance";
      } else if (out_of_time) {
        stop_reason = "max_seconds";
      }
      record.set_oracle_calls(oracle_calls);
      record.set_effective_passes(static_cast<double>(oracle_calls) / n);
      record.set_seconds(elapsed());
      const bool final_pass = outer_done && (last_outer || converged);
      if (monitor != nullptr) {
        absl::Status status = monitor->Record(record, point, final_pass);
        if (!status.ok()) return status;
      }
      summary.set_passes(outer);
      done = final_pass;
      if (outer_done) break;
    }
    if (done) break;
  }

  *w_out = std::move(point);
  summary.set_oracle_calls(oracle_calls);
  summary.set_seconds(elapsed());
  if (have_gap) {
    SetCertificate(last_gap, &summary);
  }
  summary.set_stop_reason(stop_reason);
  return summary;
}

}  // namespace chaintag
