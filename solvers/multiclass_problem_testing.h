// MulticlassProblem: a small multiclass SVM written as a Problem with
// explicit dense ψ vectors, for solver tests. Solvers must not care how a
// problem stores its blocks, and on problems this small every quantity can
// be checked by brute force.
//
// φ(x, y) = x ⊗ e_y and loss 1 on every wrong class. A corner is one class
// id; the block state is v_i itself, densely.
//
// Thread-safety: const methods are safe to call concurrently.

#ifndef CHAINTAG_SOLVERS_MULTICLASS_PROBLEM_TESTING_H_
#define CHAINTAG_SOLVERS_MULTICLASS_PROBLEM_TESTING_H_

#include <algorithm>
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

  int NumExamples() const override { return static_cast<int>(inputs_.size()); }
  int64_t Dim() const override {
    return static_cast<int64_t>(features_) * num_classes_;
  }
  int num_classes() const { return num_classes_; }

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

  void MaxOracle(int i, const double* w, const double* state,
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
      for (int64_t j = 0; j < Dim(); ++j) result->state_dot += state[j] * w[j];
    }
  }
  void MaxOracleScaled(int i, const double* v, double scale,
                       OracleResult* result) const override {
    std::vector<double> w(v, v + Dim());
    for (double& x : w) x *= scale;
    MaxOracle(i, w.data(), nullptr, result);
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
    std::fill(state, state + Dim(), 0.0);
  }
  void MixCorner(int i, const Corner& y, double gamma,
                 double* state) const override {
    const std::vector<double> psi = Psi(i, y[0]);
    for (int64_t j = 0; j < Dim(); ++j) {
      state[j] = (1 - gamma) * state[j] + gamma * psi[j];
    }
  }
  double StateDistanceSquared(int i, const double* state,
                              const Corner& y) const override {
    const std::vector<double> psi = Psi(i, y[0]);
    double sum = 0;
    for (int64_t j = 0; j < Dim(); ++j) {
      sum += (state[j] - psi[j]) * (state[j] - psi[j]);
    }
    return sum;
  }
  void AddCornerMinusState(int i, const Corner& y, const double* state,
                           double c, double* w) const override {
    const std::vector<double> psi = Psi(i, y[0]);
    for (int64_t j = 0; j < Dim(); ++j) w[j] += c * (psi[j] - state[j]);
  }
  void AddCornerToState(int i, const Corner& y, double c,
                        double* state) const override {
    const std::vector<double> psi = Psi(i, y[0]);
    for (int64_t j = 0; j < Dim(); ++j) state[j] += c * psi[j];
  }
  void ScoreCorners(int i, const double* w, const double* state,
                    const Corner* const* corners, int count, double* scores,
                    double* state_dot) const override {
    for (int k = 0; k < count; ++k) scores[k] = Score(i, w, *corners[k]);
    if (state != nullptr) {
      *state_dot = 0;
      for (int64_t j = 0; j < Dim(); ++j) *state_dot += state[j] * w[j];
    }
  }
  void ScoreCornersAndMaxOracle(int i, const double* w, const double* state,
                                const Corner* const* corners, int count,
                                double* scores,
                                OracleResult* result) const override {
    double state_dot = 0;
    ScoreCorners(i, w, state, corners, count, scores, &state_dot);
    MaxOracle(i, w, state, result);
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

 private:
  std::vector<std::vector<double>> inputs_;
  std::vector<Corner> gold_;
  int num_classes_;
  int features_;
};

}  // namespace chaintag

#endif  // CHAINTAG_SOLVERS_MULTICLASS_PROBLEM_TESTING_H_
