#include "solvers/sag.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/batch_pool.h"
#include "base/parallel.h"
#include "base/random.h"
#include "solvers/catalyst.h"
#include "solvers/duality_gap.h"
#include "solvers/lazy_prox.h"
#include "solvers/pass_driver.h"

namespace chaintag {
namespace {

struct SagSettings {
  double lambda = 0;
  double l1 = 0;
  double learning_rate = 0;
  double kappa = 0;         // Catalyst's κ; 0: none
  int catalyst_passes = 1;  // passes per Catalyst center
  bool saga = false;
  bool nonuniform = false;
  int batch = 1;
  int threads = 1;
};

class SagSteps : public PassSteps {
 public:
  SagSteps(const SolverConfig& config, const Problem& problem,
           const SagSettings& settings)
      : problem_(problem),
        settings_(settings),
        n_(problem.NumExamples()),
        restricted_(problem.FreeCoordinates(nullptr)),
        dim_(SolverDimension(problem)),
        offsets_(BlockStateOffsets(problem)),
        // A restricted problem's rows hold different numbers of free
        // coordinates: slots of one.
        granularity_(restricted_ ? 1 : RangeGranularity(problem)),
        strength_(settings.lambda + settings.kappa),
        w_(dim_, 0.0),
        fixed_point_(dim_, 0.0),
        states_(offsets_[n_]),
        terms_(n_, 0.0),
        losses_(n_, 0.0),
        last_step_(dim_ / granularity_, 0),
        random_(config.seed()),
        // One slice per thread: every slice reads all of a step's
        // sentences, and writes only its own rows.
        slice_bounds_(SliceBounds(dim_, granularity_, settings.threads)) {
    smoothing_.kind = Smoothing::Kind::kEntropy;
    smoothing_.mu = 1;
    SetLearningRate(settings.learning_rate);
    int64_t largest = 0;
    for (int i = 0; i < n_; ++i) {
      largest = std::max(largest, offsets_[i + 1] - offsets_[i]);
    }
    state_stride_ = largest;
    batch_.resize(settings.batch);
    batch_ranges_.resize(settings.batch);
    batch_states_.resize(static_cast<size_t>(largest) * settings.batch);
    batch_terms_.resize(settings.batch);
    if (settings.nonuniform) BuildSampling();
    if (settings.kappa > 0) {
      center_.assign(dim_, 0.0);
      previous_.assign(dim_, 0.0);
      beta_ = CatalystMomentum(settings.lambda / strength_);
    }
    slice_ranges_.resize(slice_bounds_.size() - 1);
    pool_ = std::make_unique<BatchPool>(settings.threads);
  }

  absl::Status RunSteps(int, PassDriver* driver) override {
    if (!started_) {
      Refresh();  // the stored gradients at the start point
      started_ = true;
    }
    int32_t t = 0;
    while (t < n_ && !driver->Expired(t)) {
      const int size = std::min<int>(settings_.batch, n_ - t);
      for (int k = 0; k < size; ++k) {
        batch_[k] = Draw();
        batch_ranges_[k].clear();
        Ranges(batch_[k], &batch_ranges_[k]);
      }
      // Each coordinate is caught up and moved by the members in order,
      // whichever slice's thread owns it: the same w on any thread count.
      RunPhase(NumSlices(), [&](int slice) { CatchUpSlice(slice, size, t); });
      RunPhase(size, [this](int k) { BatchOracle(k); });
      oracle_calls_ += size;
      for (int k = 0; k < size; ++k) StoreGradient(k);
      // The batch's updates all land at step t (their rows are there), and
      // its τ steps' maps follow lazily: one catch-up per member, not two.
      RunPhase(NumSlices(), [&](int slice) { ApplySlice(slice, size); });
      t += size;
    }
    if (!FinishEpoch(t)) {
      return absl::FailedPreconditionError(
          absl::StrCat("sag: the iterate diverged (learning rate ",
                       learning_rate_, " too large); lower sag.learning_rate"));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<PassEnd> EndPass(const PassEndRequest& request,
                                  PassRecord* record) override {
    PassEnd end;
    if (settings_.kappa > 0 && request.pass % settings_.catalyst_passes == 0) {
      MoveCenter();
    }
    if (!request.gap_check_due) return end;
    end.certificate = Refresh();
    // A step size that fits the data lowers the objective from one
    // certificate to the next, but for rounding; where it rose by a share
    // of the gap, the steps overshoot (a feature at every token makes
    // f_i's curvature grow with the sentence length), and the next passes
    // take half the step.
    if (end.certificate->primal - last_primal_ > 0.01 * end.certificate->gap) {
      HalveLearningRate();
      record->set_learning_rate(learning_rate_);
    }
    last_primal_ = end.certificate->primal;
    return end;
  }

  absl::Span<const double> Point() override { return w_; }
  int64_t OracleCalls() const override { return oracle_calls_; }

  absl::Status SaveState(CheckpointWriter* writer) const override {
    writer->SparseReals("w", w_);
    writer->SparseReals("fixed_point", fixed_point_);
    writer->SparseReals("states", states_);
    writer->Reals("terms", terms_);
    if (settings_.kappa > 0) {
      writer->SparseReals("center", center_);
      writer->SparseReals("previous", previous_);
    }
    writer->Integer("started", started_ ? 1 : 0);
    writer->Real("learning_rate", learning_rate_);
    writer->Real("last_primal", last_primal_);
    writer->Integer("oracle_calls", oracle_calls_);
    writer->Random("random", random_);
    return absl::OkStatus();
  }

  absl::Status LoadState(const CheckpointReader& reader) override {
    absl::Status status = reader.Reals("w", dim_, &w_);
    if (status.ok()) status = reader.Reals("fixed_point", dim_, &fixed_point_);
    if (status.ok()) status = reader.Reals("states", offsets_[n_], &states_);
    if (status.ok()) status = reader.Reals("terms", n_, &terms_);
    if (status.ok() && settings_.kappa > 0) {
      status = reader.Reals("center", dim_, &center_);
      if (status.ok()) status = reader.Reals("previous", dim_, &previous_);
    }
    int64_t started = 0;
    if (status.ok()) status = reader.Integer("started", &started);
    started_ = started != 0;
    if (status.ok()) status = reader.Integer("oracle_calls", &oracle_calls_);
    // Checkpoints from before the step could halve hold neither.
    if (status.ok() && reader.Has("learning_rate")) {
      double learning_rate = 0;
      status = reader.Real("learning_rate", &learning_rate);
      if (status.ok()) status = reader.Real("last_primal", &last_primal_);
      if (status.ok() &&
          !(learning_rate > 0 && learning_rate <= settings_.learning_rate)) {
        status = absl::DataLossError(
            absl::StrCat("sag checkpoint: learning_rate ", learning_rate,
                         " is not in (0, ", settings_.learning_rate, "]"));
      }
      if (status.ok()) SetLearningRate(learning_rate);
    }
    if (status.ok()) status = reader.Random("random", &random_);
    return status;
  }

  std::vector<double> TakeWeights() { return std::move(w_); }

 private:
  // Forward–backward for every example at w (on the threads): the stored
  // gradients, their average and the dual terms all become w's, and the
  // primal and dual at w follow.
  DualityGap Refresh() {
    ParallelFor(n_, settings_.threads, [&](int begin, int end) {
      for (int i = begin; i < end; ++i) {
        double* state = states_.data() + offsets_[i];
        double state_dot = 0;
        losses_[i] = Oracle(i, state, &state_dot);
        terms_[i] = losses_[i] + state_dot;
      }
    });
    oracle_calls_ += n_;
    // c = (κz − ḡ)/(λ + κ), each coordinate summed in index order so that
    // it does not depend on the threads.
    const double rate = -1.0 / (n_ * strength_);
    RunPhase(NumSlices(), [&](int slice) {
      std::fill(fixed_point_.begin() + slice_bounds_[slice],
                fixed_point_.begin() + slice_bounds_[slice + 1], 0.0);
      for (int i = 0; i < n_; ++i) {
        AddToSlice(slice, i, states_.data() + offsets_[i], rate,
                   fixed_point_.data());
      }
    });
    // The certificate is the objective's own (κ = 0), at ḡ = −(λ + κ)·c
    // before c takes in κz.
    const DualityGap certificate = SmoothCertificate(
        w_.data(), dim_, LossSum(), TermSum(), n_, fixed_point_.data(),
        -strength_, settings_.lambda, settings_.l1);
    if (settings_.kappa > 0) {
      const double pull = settings_.kappa / strength_;
      RunPhase(NumSlices(), [&](int slice) {
        for (int64_t j = slice_bounds_[slice]; j < slice_bounds_[slice + 1];
             ++j) {
          fixed_point_[j] += pull * center_[j];
        }
      });
    }
    return certificate;
  }

  // Every coordinate is up to date at a pass's end: the lazy map restarts
  // with the new η.
  void SetLearningRate(double learning_rate) {
    learning_rate_ = learning_rate;
    decay_ = 1 - learning_rate_ * strength_;
    prox_.Reset(learning_rate_ * strength_, learning_rate_ * settings_.l1, n_);
  }

  void HalveLearningRate() { SetLearningRate(learning_rate_ / 2); }

  double LossSum() const {
    double sum = 0;
    for (int i = 0; i < n_; ++i) sum += losses_[i];
    return sum;
  }

  double TermSum() const {
    double sum = 0;
    for (int i = 0; i < n_; ++i) sum += terms_[i];
    return sum;
  }

  // Catalyst's outer step at a pass's end (every coordinate up to date):
  // z ← w + β(w − w_prev), and c follows z.
  void MoveCenter() {
    const double pull = settings_.kappa / strength_;
    RunPhase(NumSlices(), [&](int slice) {
      for (int64_t j = slice_bounds_[slice]; j < slice_bounds_[slice + 1];
           ++j) {
        const double center = w_[j] + beta_ * (w_[j] - previous_[j]);
        fixed_point_[j] += pull * (center - center_[j]);
        center_[j] = center;
        previous_[j] = w_[j];
      }
    });
  }

  // Sampling ∝ ½/n + ½·s_i/Σs, s_i the coordinates block i touches.
  void BuildSampling() {
    std::vector<double> sizes(n_);
    std::vector<CoordinateRange> ranges;
    double total = 0;
    for (int i = 0; i < n_; ++i) {
      ranges.clear();
      Ranges(i, &ranges);
      double size = 0;
      for (const CoordinateRange& range : ranges) size += range.length;
      sizes[i] = size;
      total += size;
    }
    cumulative_.resize(n_);
    double sum = 0;
    for (int i = 0; i < n_; ++i) {
      sum += 0.5 / n_ + (total > 0 ? 0.5 * sizes[i] / total : 0.5 / n_);
      cumulative_[i] = sum;
    }
  }

  int Draw() {
    if (cumulative_.empty()) return static_cast<int>(random_.Uniform(n_));
    const double u = random_.UniformDouble() * cumulative_.back();
    const auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), u);
    return static_cast<int>(
        std::min<ptrdiff_t>(it - cumulative_.begin(), n_ - 1));
  }

  int NumSlices() const { return static_cast<int>(slice_ranges_.size()); }

  // Block i's ranges of w's coordinates, or of the free ones.
  void Ranges(int i, std::vector<CoordinateRange>* ranges) const {
    if (restricted_) {
      problem_.TouchedRangesAtFree(i, ranges);
    } else {
      problem_.TouchedRanges(i, ranges);
    }
  }

  // f_i at w (w's free coordinates when restricted), its state and ⟨v_i, w⟩.
  double Oracle(int i, double* state, double* state_dot) const {
    if (restricted_) {
      return problem_.SmoothedOracleWithStateDotAtFree(i, w_.data(), smoothing_,
                                                       state, state_dot);
    }
    return problem_.SmoothedOracleWithStateDot(i, w_.data(), smoothing_, state,
                                               state_dot);
  }

  // job(item) for items [0, count) on the threads.
  template <typename Job>
  void RunPhase(int count, const Job& job) {
    pool_->Run(count, job);
  }

  // The batch's first `size` members' ranges inside `slice`, brought to
  // step `step`.
  void CatchUpSlice(int slice, int size, int32_t step) {
    const int64_t begin = slice_bounds_[slice];
    const int64_t end = slice_bounds_[slice + 1];
    std::vector<CoordinateRange>& clipped = slice_ranges_[slice];
    for (int k = 0; k < size; ++k) {
      if (NumSlices() == 1) {
        CatchUp(batch_ranges_[k], step);
        continue;
      }
      clipped.clear();
      for (const CoordinateRange& range : batch_ranges_[k]) {
        const int64_t from = std::max(range.begin, begin);
        const int64_t to = std::min(range.begin + range.length, end);
        if (from < to) clipped.push_back({from, to - from});
      }
      CatchUp(clipped, step);
    }
  }

  void CatchUp(const std::vector<CoordinateRange>& ranges, int32_t step) {
    prox_.CatchUp(ranges.data(), ranges.size(), step, granularity_,
                  fixed_point_.data(), w_.data(), last_step_.data());
  }

  // AddCornerMinusState(i, gold, state, rate, x) on `slice`'s coordinates.
  void AddToSlice(int slice, int i, const double* state, double rate,
                  double* x) const {
    const Corner& gold = problem_.GoldCorner(i);
    if (restricted_) {
      problem_.AddCornerMinusStateAtFree(i, gold, state, rate,
                                         slice_bounds_[slice],
                                         slice_bounds_[slice + 1], x);
    } else if (NumSlices() == 1) {
      problem_.AddCornerMinusState(i, gold, state, rate, x);
    } else {
      problem_.AddCornerMinusStateInSlice(i, gold, state, rate,
                                          slice_bounds_[slice],
                                          slice_bounds_[slice + 1], x);
    }
  }

  // Every coordinate to step `steps`, ending the epoch's lazy bookkeeping;
  // false when w is no longer finite.
  bool FinishEpoch(int32_t steps) {
    std::vector<char> finite(NumSlices(), 1);
    RunPhase(NumSlices(), [&](int slice) {
      const int64_t begin = slice_bounds_[slice];
      const int64_t end = slice_bounds_[slice + 1];
      prox_.CatchUpSlots(begin / granularity_, end / granularity_, steps,
                         granularity_, fixed_point_.data(), w_.data(),
                         last_step_.data());
      std::fill(last_step_.begin() + begin / granularity_,
                last_step_.begin() + end / granularity_, 0);
      for (int64_t j = begin; j < end; ++j) {
        if (!std::isfinite(w_[j])) finite[slice] = 0;
      }
    });
    return std::all_of(finite.begin(), finite.end(),
                       [](char ok) { return ok != 0; });
  }

  // The oracle of batch member k at the current w (its coordinates brought
  // up to date): runs on the pool's threads, writing only k's slots.
  void BatchOracle(int k) {
    const int i = batch_[k];
    double* state = batch_states_.data() + k * state_stride_;
    double state_dot = 0;
    const double loss = Oracle(i, state, &state_dot);
    batch_terms_[k] = loss + state_dot;
  }

  // Stores member k's gradient in place of the old one, leaving in its
  // oracle state the change ∇_new − ∇_old as a state (with the gold
  // corner's, so that ApplySlice's ψ(gold) − state is that change).
  void StoreGradient(int k) {
    const int i = batch_[k];
    const int64_t size = offsets_[i + 1] - offsets_[i];
    double* stored = states_.data() + offsets_[i];
    double* difference = batch_states_.data() + k * state_stride_;
    for (int64_t s = 0; s < size; ++s) {
      const double fresh = difference[s];
      difference[s] = fresh - stored[s];
      stored[s] = fresh;
    }
    terms_[i] = batch_terms_[k];
    // The state map is affine: v(new − old + gold) = v(new) − v(old).
    problem_.AddCornerToState(i, problem_.GoldCorner(i), 1.0, difference);
  }

  // Moves w's and the average's coordinates in `slice` by the first `size`
  // members' changes, in member order: c = −ḡ/λ gains
  // −(∇_new − ∇_old)/(nλ) and, for SAGA, w gains −(η/a)(∇_new − ∇_old)·scale,
  // which the next application of the map a·x + (1 − a)·c turns into the
  // step's −η·scale·(∇_new − ∇_old).
  void ApplySlice(int slice, int size) {
    for (int k = 0; k < size; ++k) {
      const int i = batch_[k];
      const double* difference = batch_states_.data() + k * state_stride_;
      AddToSlice(slice, i, difference, -1.0 / (n_ * strength_),
                 fixed_point_.data());
      if (settings_.saga) {
        double scale = 1;
        if (!cumulative_.empty()) {
          const double p = cumulative_[i] - (i > 0 ? cumulative_[i - 1] : 0.0);
          scale = 1.0 / (n_ * p);
        }
        AddToSlice(slice, i, difference, -learning_rate_ * scale / decay_,
                   w_.data());
      }
    }
  }

  const Problem& problem_;
  const SagSettings settings_;
  const int n_;
  // On a problem with FreeCoordinates w and the vectors beside it hold the
  // free coordinates alone (dim_ of them).
  const bool restricted_;
  const int64_t dim_;
  const std::vector<int64_t> offsets_;
  const int64_t granularity_;
  const double strength_;  // λ + κ
  // η: the config's, halved each time the primal rises between two
  // certificates.
  double learning_rate_ = 0;
  double decay_ = 1;  // a = 1 − η(λ + κ)
  double last_primal_ = std::numeric_limits<double>::infinity();
  Smoothing smoothing_;
  LazyProx prox_;
  // w, its rows at the step last_step_ says (plus, on the rows of this
  // step's batch, the SAGA correction the map has yet to apply; see
  // Apply), and c = −ḡ/λ, the point the smooth part of a step pulls
  // towards.
  std::vector<double> w_;
  std::vector<double> fixed_point_;
  // Catalyst: the center z and the iterate at its last move, w_prev.
  std::vector<double> center_;
  std::vector<double> previous_;
  double beta_ = 0;
  // Per example: the stored gradient as a block state, and the dual term
  // f_i − ⟨w_i, ∇f_i⟩ at its point; losses_ at the last refresh.
  std::vector<double> states_;
  std::vector<double> terms_;
  std::vector<double> losses_;
  // The step each slot of granularity_ coordinates stands at this epoch.
  std::vector<int32_t> last_step_;
  bool started_ = false;            // the first Refresh is done
  std::vector<double> cumulative_;  // non-uniform sampling
  SolverRandom random_;
  int64_t oracle_calls_ = 0;
  // The mini-batch: examples, their ranges, oracle states and dual terms.
  int64_t state_stride_ = 0;
  std::vector<int> batch_;
  std::vector<std::vector<CoordinateRange>> batch_ranges_;
  std::vector<double> batch_states_;
  std::vector<double> batch_terms_;
  // w's slices, [slice_bounds_[s], slice_bounds_[s + 1]), whole slots each,
  // and each slice's clipped ranges.
  std::vector<int64_t> slice_bounds_;
  std::vector<std::vector<CoordinateRange>> slice_ranges_;
  std::unique_ptr<BatchPool> pool_;
};

// κ with ηn(λ + κ) = 0.5, when λ alone gives ηnλ under 0.05: the steps'
// contraction per pass, ηnλ, is then about 1% (CRFsuite's c2 = 0.1 on
// chunking), where Catalyst gains √(λ/(λ + κ)) = 0.14 per center
// (docs/experiments.md, the elastic net against OWL-QN).
double AutomaticKappa(double learning_rate, double lambda, int n) {
  const double target = 0.5 / (learning_rate * n);
  return target >= 10 * lambda ? target - lambda : 0;
}

absl::StatusOr<SagSettings> ResolveSettings(const SolverConfig& config, int n) {
  SagSettings settings;
  settings.lambda = ResolveLambda(config, n);
  settings.l1 = ResolveL1(config, n);
  settings.learning_rate = config.sag().learning_rate();
  settings.kappa =
      config.sag().has_catalyst_kappa()
          ? config.sag().catalyst_kappa()
          : AutomaticKappa(settings.learning_rate, settings.lambda, n);
  settings.catalyst_passes = config.sag().catalyst_passes();
  settings.saga = config.sag().variant() == SolverConfig::SAGA;
  settings.nonuniform = config.sag().nonuniform_sampling();
  settings.batch = config.minibatch();
  settings.threads = std::max(1, config.num_threads());
  if (config.objective() != SolverConfig::LOG_SUM_EXP) {
    return absl::InvalidArgumentError(
        "sag minimises a smooth objective: set model.loss to LOG or "
        "SOFTMAX_MARGIN (solver.objective LOG_SUM_EXP)");
  }
  if (!(settings.kappa >= 0) || settings.catalyst_passes < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sag: catalyst_kappa must not be negative and catalyst_passes must be "
        "at least 1, got ",
        settings.kappa, " and ", settings.catalyst_passes));
  }
  const double strength = settings.lambda + settings.kappa;
  if (!(settings.learning_rate > 0) ||
      !(settings.learning_rate * strength < 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sag: learning_rate must be positive and below 1/(λ + κ) = ",
        1 / strength, ", got ", settings.learning_rate));
  }
  if (!(settings.l1 >= 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("solver.l1 must not be negative, got ", settings.l1));
  }
  if (settings.batch < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "solver.minibatch must be at least 1, got ", settings.batch));
  }
  return settings;
}

}  // namespace

absl::StatusOr<TrainingSummary> SagSolver::Solve(const Problem& problem,
                                                 Monitor* monitor,
                                                 std::vector<double>* w_out) {
  const int n = problem.NumExamples();
  if (n <= 0) return absl::InvalidArgumentError("sag: no training examples");
  absl::StatusOr<SagSettings> settings = ResolveSettings(config_, n);
  if (!settings.ok()) return settings.status();
  if (!problem.SupportsSmoothing(Smoothing::Kind::kEntropy)) {
    return absl::InvalidArgumentError(
        "sag: the problem has no smoothed oracle of kind ENTROPY; implement "
        "Problem::SmoothedOracle");
  }
  SagSteps steps(config_, problem, *settings);
  PassDriver driver(config_, "sag", settings->lambda, n, problem.Dim(),
                    monitor);
  absl::StatusOr<TrainingSummary> summary = driver.Run(&steps);
  if (summary.ok()) *w_out = steps.TakeWeights();
  return summary;
}

}  // namespace chaintag
