#include "solvers/problem.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/parallel.h"

namespace chaintag {

double MaxWeightError(const Problem& problem, const double* v,
                      const double* states, const int64_t* offsets,
                      double lambda) {
  const int n = problem.NumExamples();
  // Σ_i v_i/(λn): w += −c·(ψ(gold) − v_i) with ψ(gold) = 0.
  std::vector<double> sum(problem.Dim(), 0.0);
  for (int i = 0; i < n; ++i) {
    problem.AddCornerMinusState(i, problem.GoldCorner(i), states + offsets[i],
                                -1.0 / (lambda * n), sum.data());
  }
  double error = 0;
  for (int64_t j = 0; j < problem.Dim(); ++j) {
    error = std::max(error, std::abs(v[j] - sum[j]));
  }
  return error;
}

void AddBlockUpdate(const BlockUpdate& update, double* w) {
  for (size_t j = 0; j < update.targets.size(); ++j) {
    update.AddTo(j, w + update.targets[j]);
  }
}

std::vector<int64_t> SliceBounds(int64_t dim, int64_t granularity, int parts) {
  const int64_t slots = dim / granularity;
  const int slices =
      static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(slots, parts)));
  std::vector<int64_t> bounds;
  for (int slice = 0; slice <= slices; ++slice) {
    bounds.push_back(SplitPoint(slots, slice, slices) * granularity);
  }
  return bounds;
}

int64_t SolverDimension(const Problem& problem) {
  std::vector<int64_t> free;
  return problem.FreeCoordinates(&free) ? static_cast<int64_t>(free.size())
                                        : problem.Dim();
}

absl::StatusOr<std::vector<double>> WeightsInAllCoordinates(
    const Problem& problem, absl::Span<const double> w) {
  std::vector<int64_t> free;
  const bool restricted = problem.FreeCoordinates(&free);
  const size_t size = restricted ? free.size() : problem.Dim();
  if (w.size() != size) {
    return absl::InvalidArgumentError(
        absl::StrCat("weights of ", w.size(), " entries for a problem of ",
                     size, restricted ? " free coordinates" : " coordinates"));
  }
  if (!restricted) return std::vector<double>(w.begin(), w.end());
  std::vector<double> all(problem.Dim(), 0.0);
  for (size_t k = 0; k < free.size(); ++k) all[free[k]] = w[k];
  return all;
}

int64_t RangeGranularity(const Problem& problem, int num_threads) {
  const int n = problem.NumExamples();
  const int parts = std::max(1, std::min(num_threads, n));
  // gcd is exact: the parts' results combine to the same g in any order.
  std::vector<int64_t> part_g(parts, problem.Dim());
  ParallelFor(parts, parts, [&](int part, int) {
    int64_t g = part_g[part];
    std::vector<CoordinateRange> ranges;
    const int end = static_cast<int>(SplitPoint(n, part + 1, parts));
    for (int i = static_cast<int>(SplitPoint(n, part, parts)); i < end && g > 1;
         ++i) {
      ranges.clear();
      problem.TouchedRanges(i, &ranges);
      for (const CoordinateRange& range : ranges) {
        if (range.begin % g != 0 || range.length % g != 0) {
          g = std::gcd(g, std::gcd(range.begin, range.length));
        }
      }
    }
    part_g[part] = g;
  });
  int64_t g = problem.Dim();
  for (int64_t part : part_g) g = std::gcd(g, part);
  return std::max<int64_t>(g, 1);
}

// ---- The speed paths' defaults, from the core ----

namespace {

double Dot(const std::vector<double>& a, const double* b) {
  double sum = 0;
  for (size_t j = 0; j < a.size(); ++j) sum += a[j] * b[j];
  return sum;
}

double SquaredNorm(const std::vector<double>& a) {
  double sum = 0;
  for (double x : a) sum += x * x;
  return sum;
}

// v_i as a dense vector.
std::vector<double> DenseState(const Problem& problem, int i,
                               const double* state) {
  std::vector<double> v(problem.Dim(), 0.0);
  problem.AddCornerMinusState(i, problem.GoldCorner(i), state, -1.0, v.data());
  return v;
}

// `dense` (Dim() entries) as a BlockUpdate of one vector per distinct range
// block i touches.
void EncodeDense(const Problem& problem, int i,
                 const std::vector<double>& dense, BlockUpdate* update) {
  std::vector<CoordinateRange> ranges;
  problem.TouchedRanges(i, &ranges);
  std::sort(ranges.begin(), ranges.end(),
            [](const CoordinateRange& a, const CoordinateRange& b) {
              return a.begin < b.begin;
            });
  int64_t covered = 0;  // ranges are equal or disjoint: skip repeats
  for (const CoordinateRange& range : ranges) {
    if (range.length <= 0 || range.begin < covered) continue;
    covered = range.begin + range.length;
    const int32_t v = update->AddVector(range.length);
    std::copy(dense.begin() + range.begin, dense.begin() + covered,
              update->values.begin() + update->VectorBegin(v));
    update->AddAddition(range.begin, v, 1.0);
  }
}

}  // namespace

void Problem::MaxOracleWithStateDot(int i, const double* w, const double* state,
                                    OracleResult* result) const {
  MaxOracle(i, w, result);
  result->state_dot = state == nullptr ? 0 : StateDot(i, state, w);
}

double Problem::StateDot(int i, const double* state, const double* w) const {
  return Dot(DenseState(*this, i, state), w);
}

void Problem::MaxOracleScaled(int i, const double* v, double scale,
                              OracleResult* result) const {
  std::vector<double> w(v, v + Dim());
  for (double& x : w) x *= scale;
  MaxOracle(i, w.data(), result);
}

double Problem::Score(int i, const double* w, const Corner& y) const {
  std::vector<double> psi(Dim(), 0.0);
  AddScaled(i, y, 1.0, psi.data());
  return Dot(psi, w);
}

void Problem::AddCornerDifference(int i, const Corner& a, const Corner& b,
                                  double c, double* w) const {
  AddScaled(i, a, c, w);
  AddScaled(i, b, -c, w);
}

void Problem::InitBlockState(int i, double* state) const {
  std::fill(state, state + BlockStateSize(i), 0.0);
  AddCornerToState(i, GoldCorner(i), 1.0, state);
}

void Problem::MixCorner(int i, const Corner& y, double gamma,
                        double* state) const {
  ScaleBlockState(i, 1 - gamma, state);
  AddCornerToState(i, y, gamma, state);
}

void Problem::ScaleBlockState(int i, double factor, double* state) const {
  const int64_t size = BlockStateSize(i);
  for (int64_t k = 0; k < size; ++k) state[k] *= factor;
}

double Problem::StateDistanceSquared(int i, const double* state,
                                     const Corner& y) const {
  std::vector<double> difference(Dim(), 0.0);
  AddCornerMinusState(i, y, state, 1.0, difference.data());
  return SquaredNorm(difference);
}

void Problem::AddCornerMinusMixture(int i, const Corner& y, const double* state,
                                    const Corner* const*, const double*, int,
                                    double c, double* w) const {
  AddCornerMinusState(i, y, state, c, w);
}

void Problem::AddCornerMinusStateInSlice(int i, const Corner& y,
                                         const double* state, double c,
                                         int64_t begin, int64_t end,
                                         double* w) const {
  std::vector<double> change(Dim(), 0.0);
  AddCornerMinusState(i, y, state, c, change.data());
  for (int64_t j = begin; j < end; ++j) w[j] += change[j];
}

void Problem::EncodeCornerMinusState(int i, const Corner& y,
                                     const double* state, double c,
                                     BlockUpdate* update) const {
  std::vector<double> change(Dim(), 0.0);
  AddCornerMinusState(i, y, state, c, change.data());
  EncodeDense(*this, i, change, update);
}

void Problem::EncodeScaled(int i, const Corner& y, double c,
                           BlockUpdate* update) const {
  std::vector<double> change(Dim(), 0.0);
  AddScaled(i, y, c, change.data());
  EncodeDense(*this, i, change, update);
}

void Problem::ScoreCorners(int i, const double* w, const double* state,
                           const Corner* const* corners, int count,
                           double* scores, double* state_dot) const {
  for (int k = 0; k < count; ++k) scores[k] = Score(i, w, *corners[k]);
  if (state != nullptr) *state_dot = StateDot(i, state, w);
}

void Problem::ScoreCornersAndMaxOracle(int i, const double* w,
                                       const double* state,
                                       const Corner* const* corners, int count,
                                       double* scores,
                                       OracleResult* result) const {
  ScoreCorners(i, w, nullptr, corners, count, scores, nullptr);
  MaxOracleWithStateDot(i, w, state, result);
}

double Problem::CornerDistanceSquared(int i, const Corner& a,
                                      const Corner& b) const {
  std::vector<double> difference(Dim(), 0.0);
  AddCornerDifference(i, a, b, 1.0, difference.data());
  return SquaredNorm(difference);
}

bool Problem::IsCorner(int i, const Corner& y) const {
  return y.size() == GoldCorner(i).size();
}

bool Problem::SupportsSmoothing(Smoothing::Kind kind) const {
  return kind == Smoothing::Kind::kNone;
}

double Problem::SmoothedOracle(int i, const double* w,
                               const Smoothing& smoothing,
                               double* state) const {
  // Unsmoothed: q on the oracle's corner, f = max_y h(y). The smoothed
  // solvers check SupportsSmoothing before they call this.
  OracleResult result;
  MaxOracle(i, w, &result);
  std::fill(state, state + BlockStateSize(i), 0.0);
  AddCornerToState(i, result.corner, 1.0, state);
  (void)smoothing;
  return result.loss - result.score;
}

double Problem::SmoothedOracleWithStateDot(int i, const double* w,
                                           const Smoothing& smoothing,
                                           double* state,
                                           double* state_dot) const {
  const double value = SmoothedOracle(i, w, smoothing, state);
  *state_dot = StateDot(i, state, w);
  return value;
}

bool Problem::FreeCoordinates(std::vector<int64_t>*) const { return false; }

double Problem::SmoothedOracleWithStateDotAtFree(int i, const double* free_w,
                                                 const Smoothing& smoothing,
                                                 double* state,
                                                 double* state_dot) const {
  std::vector<int64_t> free;
  if (!FreeCoordinates(&free)) {
    return SmoothedOracleWithStateDot(i, free_w, smoothing, state, state_dot);
  }
  std::vector<double> w(Dim(), 0.0);
  for (size_t k = 0; k < free.size(); ++k) w[free[k]] = free_w[k];
  return SmoothedOracleWithStateDot(i, w.data(), smoothing, state, state_dot);
}

void Problem::AddCornerMinusStateAtFree(int i, const Corner& y,
                                        const double* state, double c,
                                        int64_t begin, int64_t end,
                                        double* free_w) const {
  std::vector<int64_t> free;
  if (!FreeCoordinates(&free)) {
    AddCornerMinusStateInSlice(i, y, state, c, begin, end, free_w);
    return;
  }
  std::vector<double> change(Dim(), 0.0);
  AddCornerMinusState(i, y, state, c, change.data());
  for (int64_t k = begin; k < end; ++k) free_w[k] += change[free[k]];
}

void Problem::TouchedRanges(int, std::vector<CoordinateRange>* ranges) const {
  ranges->push_back({0, Dim()});
}

void Problem::TouchedRangesAtFree(int i,
                                  std::vector<CoordinateRange>* ranges) const {
  std::vector<int64_t> free;
  if (!FreeCoordinates(&free)) {
    TouchedRanges(i, ranges);
    return;
  }
  ranges->push_back({0, static_cast<int64_t>(free.size())});
}

}  // namespace chaintag
