// MulticlassProblem: a small multiclass SVM written as a Problem with
// explicit dense ψ vectors, for solver tests. Solvers must not care how a
// problem stores its blocks, and on problems this small every quantity can
// be checked by brute force.
//
// φ(x, y) = x ⊗ e_y and loss 1 on every wrong class. A corner is one class
// id; the block state is v_i itself, densely, or, after
// set_offset_states(true), v_i plus a fixed vector o, affine in α as the
// contract asks (a corner's state is ψ_i(y) + o): the gold labeling's
// state is then not zero, as a chain's marginals are not, which catches
// solvers that read a state, or a part of α, as if it were.
//
// Thread-safety: const methods are safe to call concurrently.

#ifndef CHAINTAG_SOLVERS_MULTICLASS_PROBLEM_TESTING_H_
#define CHAINTAG_SOLVERS_MULTICLASS_PROBLEM_TESTING_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "solvers/problem.h"

namespace chaintag {

class MulticlassProblem : public Problem {
 public:
  MulticlassProblem(std::vector<std::vector<double>> inputs,
                    std::vector<int> gold, int num_classes)
      : inputs_(std::move(inputs)),
        num_classes_(num_classes),
        features_(static_cast<int>(inputs_[0].size())) {
    for (int y : gold) gold_.push_back({y});
  }

  // Examples [begin, end) as a problem of their own (one rank's shard).
  MulticlassProblem Slice(int begin, int end) const {
    std::vector<int> gold;
    for (int i = begin; i < end; ++i) gold.push_back(gold_[i][0]);
    MulticlassProblem slice(std::vector<std::vector<double>>(
                                inputs_.begin() + begin, inputs_.begin() + end),
                            gold, num_classes_);
    slice.set_offset_states(offset_states_);
    return slice;
  }

  int NumExamples() const override { return static_cast<int>(inputs_.size()); }
  int64_t Dim() const override {
    return static_cast<int64_t>(features_) * num_classes_;
  }
  int num_classes() const { return num_classes_; }
  void set_offset_states(bool offset) { offset_states_ = offset; }
  // o[j]: 0 unless offset states.
  double Offset(int64_t j) const {
    return offset_states_ ? 0.5 + 0.25 * static_cast<double>(j % 3) : 0.0;
  }

  std::vector<double> Psi(int i, int y) const {
    std::vector<double> psi(Dim(), 0.0);
    for (int j = 0; j < features_; ++j) {
      psi[gold_[i][0] * features_ + j] += inputs_[i][j];
      psi[y * features_ + j] -= inputs_[i][j];
    }
    return psi;
  }
  static double Dot(const std::vector<double>& a, const double* b) {
    double sum = 0;
    for (size_t j = 0; j < a.size(); ++j) sum += a[j] * b[j];
    return sum;
  }

  void MaxOracle(int i, const double* w, OracleResult* result) const override {
    MaxOracleWithStateDot(i, w, nullptr, result);
  }
  bool SupportsSmoothing(Smoothing::Kind) const override { return true; }
  double StateDot(int, const double* state, const double* w) const override {
    double sum = 0;
    for (int64_t j = 0; j < Dim(); ++j) sum += (state[j] - Offset(j)) * w[j];
    return sum;
  }
  void MaxOracleWithStateDot(int i, const double* w, const double* state,
                             OracleResult* result) const override {
    double best = -1e300;
    for (int y = 0; y < num_classes_; ++y) {
      const double value = Loss(i, {y}) - Dot(Psi(i, y), w);
      if (value > best) {
        best = value;
        result->corner = {y};
      }
    }
    result->loss = Loss(i, result->corner);
    result->score = Score(i, w, result->corner);
    result->state_dot = 0;
    if (state != nullptr) {
      for (int64_t j = 0; j < Dim(); ++j) {
        result->state_dot += (state[j] - Offset(j)) * w[j];
      }
    }
  }
  void MaxOracleScaled(int i, const double* v, double scale,
                       OracleResult* result) const override {
    std::vector<double> w(v, v + Dim());
    for (double& x : w) x *= scale;
    MaxOracle(i, w.data(), result);
  }
  void Decode(int i, const double* w, Corner* corner) const override {
    double best = -1e300;
    for (int y = 0; y < num_classes_; ++y) {
      double value = 0;
      for (int j = 0; j < features_; ++j) {
        value += w[y * features_ + j] * inputs_[i][j];
      }
      if (value > best) {
        best = value;
        *corner = {y};
      }
    }
  }
  double Loss(int i, const Corner& y) const override {
    return y[0] == gold_[i][0] ? 0 : 1;
  }
  double Score(int i, const double* w, const Corner& y) const override {
    return Dot(Psi(i, y[0]), w);
  }
  void AddScaled(int i, const Corner& y, double c, double* w) const override {
    const std::vector<double> psi = Psi(i, y[0]);
    for (int64_t j = 0; j < Dim(); ++j) w[j] += c * psi[j];
  }
  int64_t BlockStateSize(int) const override { return Dim(); }
  void InitBlockState(int, double* state) const override {
    for (int64_t j = 0; j < Dim(); ++j) state[j] = Offset(j);
  }
  void MixCorner(int i, const Corner& y, double gamma,
                 double* state) const override {
    const std::vector<double> psi = Psi(i, y[0]);
    for (int64_t j = 0; j < Dim(); ++j) {
      state[j] = (1 - gamma) * state[j] + gamma * (psi[j] + Offset(j));
    }
  }
  double StateDistanceSquared(int i, const double* state,
                              const Corner& y) const override {
    const std::vector<double> psi = Psi(i, y[0]);
    double sum = 0;
    for (int64_t j = 0; j < Dim(); ++j) {
      const double d = state[j] - Offset(j) - psi[j];
      sum += d * d;
    }
    return sum;
  }
  void AddCornerMinusState(int i, const Corner& y, const double* state,
                           double c, double* w) const override {
    AddCornerMinusStateInSlice(i, y, state, c, 0, Dim(), w);
  }
  void AddCornerMinusStateInSlice(int i, const Corner& y, const double* state,
                                  double c, int64_t begin, int64_t end,
                                  double* w) const override {
    const std::vector<double> psi = Psi(i, y[0]);
    for (int64_t j = begin; j < end; ++j) {
      w[j] += c * (psi[j] - (state[j] - Offset(j)));
    }
  }
  void EncodeCornerMinusState(int i, const Corner& y, const double* state,
                              double c, BlockUpdate* update) const override {
    const std::vector<double> psi = Psi(i, y[0]);
    const int32_t v = update->AddVector(Dim());
    double* values = update->values.data() + update->VectorBegin(v);
    for (int64_t j = 0; j < Dim(); ++j) {
      values[j] = c * (psi[j] - (state[j] - Offset(j)));
    }
    update->AddAddition(0, v, 1.0);
  }
  void EncodeScaled(int i, const Corner& y, double c,
                    BlockUpdate* update) const override {
    // ψ at scale c (AddScaled's arithmetic exactly): a scale other than 1,
    // which distributed runs send as it is.
    const std::vector<double> psi = Psi(i, y[0]);
    const int32_t v = update->AddVector(Dim());
    double* values = update->values.data() + update->VectorBegin(v);
    for (int64_t j = 0; j < Dim(); ++j) values[j] = psi[j];
    update->AddAddition(0, v, c);
  }
  void AddCornerToState(int i, const Corner& y, double c,
                        double* state) const override {
    const std::vector<double> psi = Psi(i, y[0]);
    for (int64_t j = 0; j < Dim(); ++j) state[j] += c * (psi[j] + Offset(j));
  }
  void ScoreCorners(int i, const double* w, const double* state,
                    const Corner* const* corners, int count, double* scores,
                    double* state_dot) const override {
    for (int k = 0; k < count; ++k) scores[k] = Score(i, w, *corners[k]);
    if (state != nullptr) {
      *state_dot = 0;
      for (int64_t j = 0; j < Dim(); ++j) {
        *state_dot += (state[j] - Offset(j)) * w[j];
      }
    }
  }
  void ScoreCornersAndMaxOracle(int i, const double* w, const double* state,
                                const Corner* const* corners, int count,
                                double* scores,
                                OracleResult* result) const override {
    double state_dot = 0;
    ScoreCorners(i, w, state, corners, count, scores, &state_dot);
    MaxOracleWithStateDot(i, w, state, result);
  }
  double CornerDistanceSquared(int i, const Corner& a,
                               const Corner& b) const override {
    const std::vector<double> pa = Psi(i, a[0]), pb = Psi(i, b[0]);
    double sum = 0;
    for (int64_t j = 0; j < Dim(); ++j)
      sum += (pa[j] - pb[j]) * (pa[j] - pb[j]);
    return sum;
  }
  const Corner& GoldCorner(int i) const override { return gold_[i]; }
  bool IsCorner(int, const Corner& y) const override {
    return y.size() == 1 && y[0] >= 0 && y[0] < num_classes_;
  }

  // By definition, over all classes: h(y) = L(y) − ⟨w, ψ_i(y)⟩, classes
  // ranked by h with ties to the lower id; ℓ2 weights from a sort-based
  // projection onto the simplex.
  double SmoothedOracle(int i, const double* w, const Smoothing& smoothing,
                        double* state) const override {
    std::vector<double> h(num_classes_);
    for (int y = 0; y < num_classes_; ++y) {
      h[y] = Loss(i, {y}) - Dot(Psi(i, y), w);
    }
    std::vector<int> order(num_classes_);
    for (int y = 0; y < num_classes_; ++y) order[y] = y;
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return h[a] > h[b]; });
    std::vector<double> q(num_classes_, 0.0);
    double value = 0;
    if (smoothing.kind == Smoothing::Kind::kNone) {
      q[order[0]] = 1;
      value = h[order[0]];
    } else if (smoothing.kind == Smoothing::Kind::kTopKL2) {
      const int k = std::min(smoothing.top_k, num_classes_);
      // Projection of h/μ onto the simplex: u_j = max(0, s_j − τ) with τ
      // from the largest prefix whose members stay positive; s is shifted
      // so that its top is 0 (the projection does not move), which keeps
      // tiny μ exact.
      const double top = h[order[0]];
      auto s = [&](int j) { return (h[order[j]] - top) / smoothing.mu; };
      double prefix = 0, tau = 0;
      for (int j = 0; j < k; ++j) {
        prefix += s(j);
        const double candidate = (prefix - 1) / (j + 1);
        if (s(j) - candidate > 0) tau = candidate;
      }
      double norm = 0;
      for (int j = 0; j < k; ++j) {
        const double u = std::max(0.0, s(j) - tau);
        q[order[j]] = u;
        value += u * h[order[j]];
        norm += u * u;
      }
      value -= 0.5 * smoothing.mu * norm;
    } else {
      const double top = h[order[0]];
      double z = 0;
      for (int y = 0; y < num_classes_; ++y) {
        q[y] = std::exp((h[y] - top) / smoothing.mu);
        z += q[y];
      }
      for (double& p : q) p /= z;
      value = top + smoothing.mu * std::log(z);
    }
    std::fill(state, state + Dim(), 0.0);
    for (int y = 0; y < num_classes_; ++y) {
      if (q[y] != 0) AddCornerToState(i, {y}, q[y], state);
    }
    return value;
  }
  // Every class row at the example's non-zero inputs.
  void TouchedRanges(int i,
                     std::vector<CoordinateRange>* ranges) const override {
    for (int y = 0; y < num_classes_; ++y) {
      for (int j = 0; j < features_; ++j) {
        if (inputs_[i][j] != 0) {
          ranges->push_back({static_cast<int64_t>(y) * features_ + j, 1});
        }
      }
    }
  }

 private:
  std::vector<std::vector<double>> inputs_;
  std::vector<Corner> gold_;
  int num_classes_;
  int features_;
  bool offset_states_ = false;
};

// A problem whose model has features for two coordinates in three only
// (Problem::FreeCoordinates), as a chain with model.states OBSERVED_STATES.
class RestrictedProblem : public MulticlassProblem {
 public:
  explicit RestrictedProblem(const MulticlassProblem& problem)
      : MulticlassProblem(problem) {}
  static bool Free(int64_t j) { return j % 3 != 1; }
  bool FreeCoordinates(std::vector<int64_t>* coordinates) const override {
    if (coordinates == nullptr) return true;
    coordinates->clear();
    for (int64_t j = 0; j < Dim(); ++j) {
      if (Free(j)) coordinates->push_back(j);
    }
    return true;
  }
};

}  // namespace chaintag

#endif  // CHAINTAG_SOLVERS_MULTICLASS_PROBLEM_TESTING_H_
