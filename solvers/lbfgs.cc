#include "solvers/lbfgs.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/batch_pool.h"
#include "solvers/duality_gap.h"
#include "solvers/pass_driver.h"

namespace chaintag {
namespace {

// Examples whose oracles run between two summing phases: only a chunk's
// states are held at once.
constexpr int kChunkExamples = 256;
// Coordinates per part of the vector operations; their sums are added part
// by part in order, so they do not depend on the thread count.
constexpr int64_t kVectorPart = 1 << 14;
// The gradient is summed in two lanes, the even and the odd examples, each
// in example order into a vector of its own, then added: on two threads each
// lane's thread reads only its own examples' features, where one slice of w
// per thread would have both read all of them.
constexpr int kLanes = 2;
// Armijo's sufficient decrease, as CRFsuite's line searches use.
constexpr double kSufficientDecrease = 1e-4;

struct LbfgsSettings {
  double lambda = 0;
  double l1 = 0;
  int memories = 6;
  int max_linesearch = 20;
  int period = 10;
  double delta = 1e-5;
  double epsilon = 1e-5;
  int threads = 1;
};

// P at one point, and what its gradient and certificate need.
struct Evaluation {
  std::vector<double> loss_gradient;  // ḡ = 1/n Σ_i ∇f_i
  double loss_sum = 0;                // Σ_i f_i
  double term_sum = 0;                // Σ_i f_i − ⟨w, ∇f_i⟩
  double objective = 0;               // P
};

// The slices each lane's sum is cut into, threads/kLanes of them: a single
// slice (all of the sum's `size` coordinates) below four threads, where
// RangeGranularity's walk over every example is not needed. Slices of w
// hold whole rows; sums at the free coordinates (`at_free`) may be cut
// anywhere (Problem::AddCornerMinusStateAtFree writes each free coordinate
// in the slice that holds it).
std::vector<int64_t> LaneSlices(const Problem& problem, int threads,
                                bool at_free, int64_t size) {
  const int slices = std::max(1, threads / kLanes);
  if (slices == 1) return {0, size};
  if (at_free) return SliceBounds(size, 1, slices);
  return SliceBounds(size, RangeGranularity(problem, threads), slices);
}

class LbfgsSteps : public PassSteps {
 public:
  LbfgsSteps(const Problem& problem, const LbfgsSettings& settings)
      : problem_(problem),
        settings_(settings),
        n_(problem.NumExamples()),
        restricted_(problem.FreeCoordinates(&free_)),
        oracles_at_free_(restricted_ && problem.OraclesAtFreeAreFaster()),
        dense_sums_(restricted_ && !oracles_at_free_),
        size_(restricted_ ? static_cast<int64_t>(free_.size()) : problem.Dim()),
        w_(size_, 0.0),
        trial_w_(size_, 0.0),
        direction_(size_, 0.0),
        steps_(static_cast<size_t>(settings.memories) * size_),
        changes_(static_cast<size_t>(settings.memories) * size_),
        rho_(settings.memories, 0.0),
        alpha_(settings.memories, 0.0),
        losses_(n_, 0.0),
        terms_(n_, 0.0),
        lane_sums_(dense_sums_ ? kLanes * problem.Dim() : size_, 0.0),
        slice_bounds_(LaneSlices(problem, settings.threads, oracles_at_free_,
                                 oracles_at_free_ ? size_ : problem.Dim())),
        parts_(static_cast<int>((size_ + kVectorPart - 1) / kVectorPart)),
        part_sums_(parts_, 0.0),
        part_squares_(parts_, 0.0),
        pool_(settings.threads) {
    smoothing_.kind = Smoothing::Kind::kEntropy;
    smoothing_.mu = 1;
    current_.loss_gradient.assign(size_, 0.0);
    trial_.loss_gradient.assign(size_, 0.0);
    int64_t largest = 0;
    for (int begin = 0; begin < n_; begin += kChunkExamples) {
      int64_t size = 0;
      for (int i = begin; i < std::min(n_, begin + kChunkExamples); ++i) {
        size += problem.BlockStateSize(i);
        largest_state_ = std::max(largest_state_, problem.BlockStateSize(i));
      }
      largest = std::max(largest, size);
    }
    // SumChunks holds a chunk's states, SumLanes one state a lane.
    chunk_states_.resize(NumSlices() == 1 ? kLanes * largest_state_ : largest);
    chunk_offsets_.resize(kChunkExamples + 1);
  }

  // The first evaluation, at w = 0: the run starts certified.
  std::optional<DualityGap> StartCertificate() override {
    Evaluate(w_, &current_);
    objectives_.push_back(current_.objective);
    return Certificate();
  }

  absl::Status RunSteps(int, PassDriver*) override {
    if (stalled_) return absl::OkStatus();
    // A direction from the pairs, and should its line search fail, steepest
    // descent from the pairs forgotten.
    for (;;) {
      const bool steepest = count_ == 0;
      Direction();
      const double slope = SumParts([&](int64_t begin, int64_t end) {
        double sum = 0;
        for (int64_t j = begin; j < end; ++j) {
          sum += PseudoGradient(j) * direction_[j];
        }
        return sum;
      });
      const double step =
          steepest ? 1 / std::sqrt(Dot(direction_.data(), direction_.data()))
                   : 1.0;
      if (slope < 0 && std::isfinite(step) && LineSearch(step)) {
        Accept();
        return absl::OkStatus();
      }
      if (steepest) break;
      count_ = 0;
    }
    // No step decreases P: w is optimal to the arithmetic's precision.
    stalled_ = true;
    return absl::OkStatus();
  }

  absl::StatusOr<PassEnd> EndPass(const PassEndRequest&, PassRecord*) override {
    PassEnd end;
    end.certificate = Certificate();
    end.solver_stop = OwnStop();
    return end;
  }

  // Restricted, at the free coordinates (Problem::FreeCoordinates).
  absl::Span<const double> Point() override { return w_; }
  int64_t OracleCalls() const override { return oracle_calls_; }

  absl::Status SaveState(CheckpointWriter* writer) const override {
    writer->Reals("w", w_);
    writer->Reals("loss_gradient", current_.loss_gradient);
    writer->Real("loss_sum", current_.loss_sum);
    writer->Real("term_sum", current_.term_sum);
    writer->Real("objective", current_.objective);
    writer->Reals("steps", std::vector<double>(steps_.begin(), steps_.end()));
    writer->Reals("changes",
                  std::vector<double>(changes_.begin(), changes_.end()));
    writer->Reals("rho", rho_);
    writer->Real("scale", scale_);
    writer->Integer("count", count_);
    writer->Integer("newest", newest_);
    writer->Reals("objectives", objectives_);
    writer->Integer("stalled", stalled_ ? 1 : 0);
    writer->Integer("oracle_calls", oracle_calls_);
    return absl::OkStatus();
  }

  absl::Status LoadState(const CheckpointReader& reader) override {
    const int64_t history = static_cast<int64_t>(steps_.size());
    std::vector<double> steps, changes;
    int64_t stalled = 0;
    absl::Status status = reader.Reals("w", size_, &w_);
    if (status.ok()) {
      status = reader.Reals("loss_gradient", size_, &current_.loss_gradient);
    }
    if (status.ok()) status = reader.Real("loss_sum", &current_.loss_sum);
    if (status.ok()) status = reader.Real("term_sum", &current_.term_sum);
    if (status.ok()) status = reader.Real("objective", &current_.objective);
    if (status.ok()) status = reader.Reals("steps", history, &steps);
    if (status.ok()) status = reader.Reals("changes", history, &changes);
    if (status.ok()) status = reader.Reals("rho", settings_.memories, &rho_);
    if (status.ok()) status = reader.Real("scale", &scale_);
    if (status.ok()) status = reader.Integer("count", &count_);
    if (status.ok()) status = reader.Integer("newest", &newest_);
    if (status.ok()) status = reader.Integer("oracle_calls", &oracle_calls_);
    if (status.ok()) status = reader.Reals("objectives", -1, &objectives_);
    // One objective a pass, the start's included, each from an evaluation
    // of n oracle calls: at least one, and no more than the evaluations.
    const int64_t evaluations = oracle_calls_ / std::max(1, n_);
    if (status.ok() &&
        (objectives_.empty() ||
         static_cast<int64_t>(objectives_.size()) > evaluations)) {
      status = absl::DataLossError(absl::StrCat(
          "lbfgs checkpoint: ", objectives_.size(),
          " objectives recorded after ", evaluations, " evaluations"));
    }
    if (status.ok()) status = reader.Integer("stalled", &stalled);
    if (!status.ok()) return status;
    if (count_ < 0 || count_ > settings_.memories || newest_ < 0 ||
        newest_ >= settings_.memories) {
      return absl::DataLossError(
          absl::StrCat("lbfgs checkpoint: ", count_, " pairs, the newest at ",
                       newest_, ", with a memory of ", settings_.memories));
    }
    std::copy(steps.begin(), steps.end(), steps_.begin());
    std::copy(changes.begin(), changes.end(), changes_.begin());
    stalled_ = stalled != 0;
    return absl::OkStatus();
  }

  std::vector<double> TakeWeights() { return std::move(w_); }

 private:
  // The run's end by CRFsuite's tests, after a pass: no step found, the
  // objective's relative fall over the last `period` passes under delta,
  // or the pseudo-gradient under epsilon·max(1, ‖w‖).
  std::optional<StopReason> OwnStop() {
    if (stalled_) return StopReason::kNoProgress;
    if (settings_.epsilon > 0) {
      const double gradient_norm =
          std::sqrt(SumParts([&](int64_t begin, int64_t end) {
            double sum = 0;
            for (int64_t j = begin; j < end; ++j) {
              const double pseudo = PseudoGradient(j);
              sum += pseudo * pseudo;
            }
            return sum;
          }));
      const double norm = std::sqrt(Dot(w_.data(), w_.data()));
      if (gradient_norm < settings_.epsilon * std::max(1.0, norm)) {
        return StopReason::kGradientEpsilon;
      }
    }
    const size_t period = settings_.period;
    if (settings_.delta > 0 && period > 0 && objectives_.size() > period) {
      const double now = objectives_.back();
      const double before = objectives_[objectives_.size() - 1 - period];
      if ((before - now) / now < settings_.delta) {
        return StopReason::kObjectiveDelta;
      }
    }
    return std::nullopt;
  }

  DualityGap Certificate() const {
    return SmoothCertificate(
        w_.data(), size_, current_.loss_sum, current_.term_sum, n_,
        current_.loss_gradient.data(), 1.0, settings_.lambda, settings_.l1);
  }

  // P, ḡ and the certificate's sums at `point`: forward–backward for every
  // example, each gradient added to its lane's vector in example order
  // (SumLanes or SumChunks), then the lanes added.
  // Restricted, the oracles read the point at the free coordinates
  // (SmoothedOracleWithStateDotAtFree) and add their gradients there
  // (AddCornerMinusStateAtFree) where the problem reads that faster (many
  // labels). Else they read it in all of w's coordinates and add their
  // gradients there too, in a lane vector of w's size each, whose free
  // coordinates are then gathered: the same sums in the same order, where
  // the free coordinates' rows cost three dependent reads an addition
  // against one.
  void Evaluate(const std::vector<double>& point, Evaluation* out) {
    double* lanes[kLanes] = {out->loss_gradient.data(), lane_sums_.data()};
    const double* at = point.data();
    if (dense_sums_) {
      ScatterToDense(point.data());
      at = dense_point_.data();
      const int64_t dim = problem_.Dim();
      for (int lane = 0; lane < kLanes; ++lane) {
        lanes[lane] = lane_sums_.data() + lane * dim;
      }
      pool_.Run(kLanes, [&](int lane) {
        std::fill(lanes[lane], lanes[lane] + dim, 0.0);
      });
    } else {
      ForParts([&](int64_t begin, int64_t end) {
        for (double* lane : lanes) std::fill(lane + begin, lane + end, 0.0);
      });
    }
    if (NumSlices() == 1) {
      SumLanes(at, lanes);
    } else {
      SumChunks(at, lanes);
    }
    double* gradient = out->loss_gradient.data();
    ForParts([&](int64_t begin, int64_t end) {
      for (int64_t k = begin; k < end; ++k) {
        const int64_t at_k = dense_sums_ ? free_[k] : k;
        double sum = lanes[0][at_k];
        for (int lane = 1; lane < kLanes; ++lane) sum += lanes[lane][at_k];
        gradient[k] = sum;
      }
    });
    oracle_calls_ += n_;
    out->loss_sum = 0;
    out->term_sum = 0;
    for (int i = 0; i < n_; ++i) {
      out->loss_sum += losses_[i];
      out->term_sum += terms_[i];
    }
    const double l1 = settings_.l1;
    const double* x = point.data();
    const double penalty = SumParts([&](int64_t begin, int64_t end) {
      double sum = 0;
      for (int64_t j = begin; j < end; ++j) {
        sum += 0.5 * settings_.lambda * x[j] * x[j] + l1 * std::fabs(x[j]);
      }
      return sum;
    });
    out->objective = out->loss_sum / n_ + penalty;
  }

  // One sentence's oracle at `point` into `state`, with its f_i and term.
  void Oracle(int i, const double* point, double* state) {
    double state_dot = 0;
    losses_[i] = oracles_at_free_
                     ? problem_.SmoothedOracleWithStateDotAtFree(
                           i, point, smoothing_, state, &state_dot)
                     : problem_.SmoothedOracleWithStateDot(i, point, smoothing_,
                                                           state, &state_dot);
    terms_[i] = losses_[i] + state_dot;
  }

  // One slice a lane (below four threads): each lane's thread runs its
  // sentences' oracles and adds their gradients in turn, a sentence's state
  // still in cache.
  void SumLanes(const double* point, double* const* lanes) {
    const double rate = 1.0 / n_;
    pool_.Run(kLanes, [&](int lane) {
      double* state = chunk_states_.data() + lane * largest_state_;
      for (int i = lane; i < n_; i += kLanes) {
        Oracle(i, point, state);
        if (oracles_at_free_) {
          problem_.AddCornerMinusStateAtFree(i, problem_.GoldCorner(i), state,
                                             rate, 0, size_, lanes[lane]);
        } else {
          problem_.AddCornerMinusState(i, problem_.GoldCorner(i), state, rate,
                                       lanes[lane]);
        }
      }
    });
  }

  // More threads: chunk by chunk, the oracles on all of them, then each
  // lane's sum cut into slices of w. Each coordinate gets the same
  // additions in the same order as SumLanes gives it.
  void SumChunks(const double* point, double* const* lanes) {
    const double rate = 1.0 / n_;
    for (int begin = 0; begin < n_; begin += kChunkExamples) {
      const int size = std::min(kChunkExamples, n_ - begin);
      chunk_offsets_[0] = 0;
      for (int k = 0; k < size; ++k) {
        chunk_offsets_[k + 1] =
            chunk_offsets_[k] + problem_.BlockStateSize(begin + k);
      }
      pool_.Run(size, [&](int k) {
        Oracle(begin + k, point, chunk_states_.data() + chunk_offsets_[k]);
      });
      pool_.Run(kLanes * NumSlices(), [&](int task) {
        const int lane = task % kLanes;
        const int slice = task / kLanes;
        // The chunk's examples of this lane: i ≡ lane (mod kLanes).
        const int first = begin + (lane + kLanes - begin % kLanes) % kLanes;
        for (int i = first; i < begin + size; i += kLanes) {
          const double* state =
              chunk_states_.data() + chunk_offsets_[i - begin];
          const int64_t from = slice_bounds_[slice];
          const int64_t to = slice_bounds_[slice + 1];
          if (oracles_at_free_) {
            problem_.AddCornerMinusStateAtFree(i, problem_.GoldCorner(i), state,
                                               rate, from, to, lanes[lane]);
          } else {
            problem_.AddCornerMinusStateInSlice(
                i, problem_.GoldCorner(i), state, rate, from, to, lanes[lane]);
          }
        }
      });
    }
  }

  // At coordinate j of w: ∇P's smooth part ḡ + λw, and with ℓ1 OWL-QN's
  // pseudo-gradient, the one-sided derivative of least size (0 where both
  // sides rise). Computed where it is read, not stored: a vector of w's
  // size less, for a few operations a coordinate.
  double PseudoGradient(int64_t j) const {
    const double x = w_[j];
    const double g = current_.loss_gradient[j] + settings_.lambda * x;
    const double l1 = settings_.l1;
    if (!(l1 > 0)) return g;
    if (x > 0) return g + l1;
    if (x < 0) return g - l1;
    if (g + l1 < 0) return g + l1;
    if (g - l1 > 0) return g - l1;
    return 0;
  }

  // direction_ = −H·pseudo-gradient by the two-loop recursion over the
  // pairs held (−pseudo-gradient when none are), then, with ℓ1, zero where
  // its sign disagrees with −pseudo-gradient.
  void Direction() {
    double* d = direction_.data();
    ForParts([&](int64_t begin, int64_t end) {
      for (int64_t j = begin; j < end; ++j) d[j] = -PseudoGradient(j);
    });
    if (count_ > 0) {
      // Each update of d is one sweep with the dot product the next
      // coefficient needs: the same sums, part by part, as two sweeps.
      const int m = settings_.memories;
      auto slot = [&](int back) { return (newest_ - back + m) % m; };
      // Newest first: α_k = ρ_k⟨s_k, d⟩, d −= α_k·y_k.
      double dot = Dot(Step(slot(0)), d);
      for (int back = 0; back < count_; ++back) {
        const int k = slot(back);
        alpha_[k] = rho_[k] * dot;
        if (back + 1 < count_) {
          dot = AxpyThenDot(-alpha_[k], Change(k), d, Step(slot(back + 1)));
        }
      }
      // The oldest's update, then the initial Hessian's scale; oldest
      // first: β = ρ_k⟨y_k, d⟩, d += (α_k − β)·s_k.
      const int oldest = slot(count_ - 1);
      dot = AxpyScaleThenDot(-alpha_[oldest], Change(oldest), scale_, d,
                             Change(oldest));
      for (int forward = count_ - 1; forward >= 0; --forward) {
        const int k = slot(forward);
        const double beta = rho_[k] * dot;
        if (forward > 0) {
          dot = AxpyThenDot(alpha_[k] - beta, Step(k), d,
                            Change(slot(forward - 1)));
        } else {
          Axpy(alpha_[k] - beta, Step(k), d);
        }
      }
    }
    if (settings_.l1 > 0) {
      ForParts([&](int64_t begin, int64_t end) {
        for (int64_t j = begin; j < end; ++j) {
          if (d[j] * PseudoGradient(j) >= 0) d[j] = 0;
        }
      });
    }
  }

  // Backtracks from `step` along direction_ until Armijo's condition holds
  // at trial_w_ (projected onto w's orthant with ℓ1); trial_ holds P there.
  bool LineSearch(double step) {
    const double l1 = settings_.l1;
    for (int trial = 0; trial < settings_.max_linesearch; ++trial) {
      // The decrease the pseudo-gradient promises for the projected step.
      const double promised = SumParts([&](int64_t begin, int64_t end) {
        double sum = 0;
        for (int64_t j = begin; j < end; ++j) {
          double x = w_[j] + step * direction_[j];
          if (l1 > 0) {
            const double orthant = w_[j] != 0 ? w_[j] : -PseudoGradient(j);
            if (x * orthant <= 0) x = 0;
          }
          trial_w_[j] = x;
          sum += PseudoGradient(j) * (x - w_[j]);
        }
        return sum;
      });
      Evaluate(trial_w_, &trial_);
      if (trial_.objective <=
          current_.objective + kSufficientDecrease * promised) {
        return true;
      }
      step *= 0.5;
    }
    return false;
  }

  // The accepted trial becomes w, and its pair (s, y) the newest, y the
  // change of the smooth part's gradient ḡ + λw.
  void Accept() {
    const int m = settings_.memories;
    const int slot = count_ == 0 ? 0 : (newest_ + 1) % m;
    float* s = Step(slot);
    float* y = Change(slot);
    const double lambda = settings_.lambda;
    // ⟨s, y⟩ and ⟨y, y⟩ of the stored (float) pair, summed part by part.
    std::vector<double>& yy = part_squares_;
    const double sy = SumParts([&](int64_t begin, int64_t end) {
      double sum = 0, squares = 0;
      for (int64_t j = begin; j < end; ++j) {
        const double step = trial_w_[j] - w_[j];
        s[j] = static_cast<float>(step);
        y[j] = static_cast<float>(trial_.loss_gradient[j] -
                                  current_.loss_gradient[j] + lambda * step);
        sum += static_cast<double>(s[j]) * y[j];
        squares += static_cast<double>(y[j]) * y[j];
      }
      yy[begin / kVectorPart] = squares;
      return sum;
    });
    double squares = 0;
    for (double part : yy) squares += part;
    if (sy > 0 && squares > 0) {
      rho_[slot] = 1 / sy;
      scale_ = sy / squares;
      newest_ = slot;
      count_ = std::min<int64_t>(count_ + 1, m);
    } else {
      count_ = 0;  // no curvature to learn from: start the pairs over
    }
    std::swap(w_, trial_w_);
    std::swap(current_, trial_);
    objectives_.push_back(current_.objective);
  }

  // dense_point_ at the free coordinates = compressed (0 elsewhere, as it
  // was made).
  void ScatterToDense(const double* compressed) {
    // Made when first asked for: not at all with oracles at the free
    // coordinates.
    dense_point_.resize(problem_.Dim(), 0.0);
    ForParts([&](int64_t begin, int64_t end) {
      for (int64_t k = begin; k < end; ++k) {
        dense_point_[free_[k]] = compressed[k];
      }
    });
  }

  float* Step(int k) { return steps_.data() + static_cast<size_t>(k) * size_; }
  float* Change(int k) {
    return changes_.data() + static_cast<size_t>(k) * size_;
  }

  int NumSlices() const { return static_cast<int>(slice_bounds_.size()) - 1; }

  // body(begin, end) over the parts of [0, dim), on the threads.
  template <typename Body>
  void ForParts(const Body& body) {
    pool_.Run(parts_, [&](int part) {
      const int64_t begin = part * kVectorPart;
      body(begin, std::min(size_, begin + kVectorPart));
    });
  }

  // Σ of body(begin, end) over the parts, added in part order.
  template <typename Body>
  double SumParts(const Body& body) {
    pool_.Run(parts_, [&](int part) {
      const int64_t begin = part * kVectorPart;
      part_sums_[part] = body(begin, std::min(size_, begin + kVectorPart));
    });
    double sum = 0;
    for (double part : part_sums_) sum += part;
    return sum;
  }

  template <typename A>
  double Dot(const A* a, const double* b) {
    return SumParts([&](int64_t begin, int64_t end) {
      double sum = 0;
      for (int64_t j = begin; j < end; ++j) sum += a[j] * b[j];
      return sum;
    });
  }

  // b += c·a.
  void Axpy(double c, const float* a, double* b) {
    ForParts([&](int64_t begin, int64_t end) {
      for (int64_t j = begin; j < end; ++j) b[j] += c * a[j];
    });
  }

  // b += c·a, then ⟨next, b⟩.
  double AxpyThenDot(double c, const float* a, double* b, const float* next) {
    return SumParts([&](int64_t begin, int64_t end) {
      double sum = 0;
      for (int64_t j = begin; j < end; ++j) {
        b[j] += c * a[j];
        sum += next[j] * b[j];
      }
      return sum;
    });
  }

  // b = (b + c·a)·scale, then ⟨next, b⟩.
  double AxpyScaleThenDot(double c, const float* a, double scale, double* b,
                          const float* next) {
    return SumParts([&](int64_t begin, int64_t end) {
      double sum = 0;
      for (int64_t j = begin; j < end; ++j) {
        b[j] = (b[j] + c * a[j]) * scale;
        sum += next[j] * b[j];
      }
      return sum;
    });
  }

  const Problem& problem_;
  const LbfgsSettings settings_;
  const int n_;
  // The coordinates the solver keeps: all of w, or the problem's free
  // ones (Problem::FreeCoordinates, ascending), w being 0 at the others.
  std::vector<int64_t> free_;
  const bool restricted_;
  const bool oracles_at_free_;
  // Restricted, with the oracles and the sums in all of w's coordinates.
  const bool dense_sums_;
  const int64_t size_;
  Smoothing smoothing_;
  std::vector<double> w_, trial_w_;
  Evaluation current_, trial_;
  std::vector<double> direction_;
  // The pairs: s_k = Step(k), y_k = Change(k), ρ_k = 1/⟨s_k, y_k⟩, in a
  // ring of `memories` slots, count_ of them held, the newest at newest_;
  // the initial Hessian's scale ⟨s, y⟩/⟨y, y⟩ of the newest.
  std::vector<float> steps_, changes_;
  std::vector<double> rho_, alpha_;
  double scale_ = 1;
  int64_t count_ = 0;
  int64_t newest_ = 0;
  bool stalled_ = false;
  int64_t oracle_calls_ = 0;
  // P at the start and after every pass, for the delta test.
  std::vector<double> objectives_;
  // Per example f_i and f_i − ⟨w, ∇f_i⟩ of the last evaluation.
  std::vector<double> losses_, terms_;
  // A chunk's states, example k's at chunk_offsets_[k] (SumChunks), or a
  // lane's state at lane·largest_state_ (SumLanes).
  std::vector<double> chunk_states_;
  int64_t largest_state_ = 0;
  std::vector<int64_t> chunk_offsets_;
  // Lane 1's gradient sum (lane 0's is the evaluation's own); with
  // dense_sums_ both lanes' sums in all of w's coordinates, lane after lane.
  // Then the slices of the coordinates a lane's sum is cut into.
  std::vector<double> lane_sums_;
  // Restricted: the point in all of w's coordinates (0 off the free ones),
  // as the dense oracles read it.
  std::vector<double> dense_point_;
  std::vector<int64_t> slice_bounds_;
  const int parts_;
  std::vector<double> part_sums_, part_squares_;
  BatchPool pool_;
};

absl::StatusOr<LbfgsSettings> ResolveSettings(const SolverConfig& config,
                                              int n) {
  LbfgsSettings settings;
  settings.lambda = ResolveLambda(config, n);
  settings.l1 = ResolveL1(config, n);
  settings.memories = config.lbfgs().num_memories();
  settings.max_linesearch = config.lbfgs().max_linesearch();
  settings.period = config.lbfgs().period();
  settings.delta = config.lbfgs().delta();
  settings.epsilon = config.lbfgs().epsilon();
  settings.threads = std::max(1, config.num_threads());
  if (config.objective() != SolverConfig::LOG_SUM_EXP) {
    return absl::InvalidArgumentError(
        "lbfgs minimises a smooth objective: set model.loss to LOG or "
        "SOFTMAX_MARGIN (solver.objective LOG_SUM_EXP)");
  }
  if (!(settings.lambda > 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("lbfgs needs λ > 0 (its certificate divides by it), got ",
                     settings.lambda));
  }
  if (!(settings.l1 >= 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("solver.l1 must not be negative, got ", settings.l1));
  }
  if (settings.memories < 1 || settings.max_linesearch < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "lbfgs: num_memories and max_linesearch must be at least 1, got ",
        settings.memories, " and ", settings.max_linesearch));
  }
  if (settings.period < 0 || !(settings.delta >= 0) ||
      !(settings.epsilon >= 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "lbfgs: period, delta and epsilon must not be negative, got ",
        settings.period, ", ", settings.delta, " and ", settings.epsilon));
  }
  return settings;
}

}  // namespace

absl::StatusOr<TrainingSummary> LbfgsSolver::Solve(const Problem& problem,
                                                   Monitor* monitor,
                                                   std::vector<double>* w_out) {
  const int n = problem.NumExamples();
  if (n <= 0) return absl::InvalidArgumentError("lbfgs: no training examples");
  absl::StatusOr<LbfgsSettings> settings = ResolveSettings(config_, n);
  if (!settings.ok()) return settings.status();
  if (!problem.SupportsSmoothing(Smoothing::Kind::kEntropy)) {
    return absl::InvalidArgumentError(
        "lbfgs: the problem has no smoothed oracle of kind ENTROPY; "
        "implement Problem::SmoothedOracle");
  }
  LbfgsSteps steps(problem, *settings);
  PassDriver driver(config_, "lbfgs", settings->lambda, n, problem.Dim(),
                    monitor);
  absl::StatusOr<TrainingSummary> summary = driver.Run(&steps);
  if (summary.ok()) *w_out = steps.TakeWeights();
  return summary;
}

}  // namespace chaintag
