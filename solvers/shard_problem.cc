#include "solvers/shard_problem.h"

#include <algorithm>
#include <vector>

namespace chaintag {

void ShardProblem::MaxOracleWithStateDot(int i, const double* w,
                                         const double* state,
                                         OracleResult* result) const {
  if (IsLocal(i)) {
    local_.MaxOracleWithStateDot(Local(i), w, state, result);
  } else {
    *result = OracleResult();
  }
}

double ShardProblem::StateDot(int i, const double* state,
                              const double* w) const {
  return IsLocal(i) ? local_.StateDot(Local(i), state, w) : 0;
}

void ShardProblem::MaxOracleScaled(int i, const double* v, double scale,
                                   OracleResult* result) const {
  if (IsLocal(i)) {
    local_.MaxOracleScaled(Local(i), v, scale, result);
  } else {
    *result = OracleResult();
  }
}

void ShardProblem::Decode(int i, const double* w, Corner* corner) const {
  if (IsLocal(i)) {
    local_.Decode(Local(i), w, corner);
  } else {
    corner->clear();
  }
}

double ShardProblem::Loss(int i, const Corner& y) const {
  return IsLocal(i) ? local_.Loss(Local(i), y) : 0;
}

double ShardProblem::Score(int i, const double* w, const Corner& y) const {
  return IsLocal(i) ? local_.Score(Local(i), w, y) : 0;
}

void ShardProblem::AddScaled(int i, const Corner& y, double c,
                             double* w) const {
  if (IsLocal(i)) local_.AddScaled(Local(i), y, c, w);
}

void ShardProblem::AddCornerDifference(int i, const Corner& a, const Corner& b,
                                       double c, double* w) const {
  if (IsLocal(i)) local_.AddCornerDifference(Local(i), a, b, c, w);
}

int64_t ShardProblem::BlockStateSize(int i) const {
  return IsLocal(i) ? local_.BlockStateSize(Local(i)) : 0;
}

void ShardProblem::InitBlockState(int i, double* state) const {
  if (IsLocal(i)) local_.InitBlockState(Local(i), state);
}

void ShardProblem::MixCorner(int i, const Corner& y, double gamma,
                             double* state) const {
  if (IsLocal(i)) local_.MixCorner(Local(i), y, gamma, state);
}

void ShardProblem::ScaleBlockState(int i, double factor, double* state) const {
  if (IsLocal(i)) local_.ScaleBlockState(Local(i), factor, state);
}

double ShardProblem::StateDistanceSquared(int i, const double* state,
                                          const Corner& y) const {
  return IsLocal(i) ? local_.StateDistanceSquared(Local(i), state, y) : 0;
}

void ShardProblem::AddCornerMinusState(int i, const Corner& y,
                                       const double* state, double c,
                                       double* w) const {
  if (IsLocal(i)) local_.AddCornerMinusState(Local(i), y, state, c, w);
}

void ShardProblem::AddCornerMinusMixture(int i, const Corner& y,
                                         const double* state,
                                         const Corner* const* corners,
                                         const double* weights, int count,
                                         double c, double* w) const {
  if (IsLocal(i)) {
    local_.AddCornerMinusMixture(Local(i), y, state, corners, weights, count, c,
                                 w);
  }
}

void ShardProblem::EncodeCornerMinusState(int i, const Corner& y,
                                          const double* state, double c,
                                          BlockUpdate* update) const {
  if (IsLocal(i)) local_.EncodeCornerMinusState(Local(i), y, state, c, update);
}

void ShardProblem::EncodeScaled(int i, const Corner& y, double c,
                                BlockUpdate* update) const {
  if (IsLocal(i)) local_.EncodeScaled(Local(i), y, c, update);
}

void ShardProblem::AddCornerMinusStateInSlice(int i, const Corner& y,
                                              const double* state, double c,
                                              int64_t begin, int64_t end,
                                              double* w) const {
  if (IsLocal(i)) {
    local_.AddCornerMinusStateInSlice(Local(i), y, state, c, begin, end, w);
  }
}

void ShardProblem::AddCornerToState(int i, const Corner& y, double c,
                                    double* state) const {
  if (IsLocal(i)) local_.AddCornerToState(Local(i), y, c, state);
}

void ShardProblem::ScoreCorners(int i, const double* w, const double* state,
                                const Corner* const* corners, int count,
                                double* scores, double* state_dot) const {
  if (IsLocal(i)) {
    local_.ScoreCorners(Local(i), w, state, corners, count, scores, state_dot);
    return;
  }
  std::fill(scores, scores + count, 0.0);
  if (state_dot != nullptr) *state_dot = 0;
}

void ShardProblem::ScoreCornersAndMaxOracle(int i, const double* w,
                                            const double* state,
                                            const Corner* const* corners,
                                            int count, double* scores,
                                            OracleResult* result) const {
  if (IsLocal(i)) {
    local_.ScoreCornersAndMaxOracle(Local(i), w, state, corners, count, scores,
                                    result);
    return;
  }
  std::fill(scores, scores + count, 0.0);
  *result = OracleResult();
}

double ShardProblem::CornerDistanceSquared(int i, const Corner& a,
                                           const Corner& b) const {
  return IsLocal(i) ? local_.CornerDistanceSquared(Local(i), a, b) : 0;
}

const Corner& ShardProblem::GoldCorner(int i) const {
  return IsLocal(i) ? local_.GoldCorner(Local(i)) : empty_;
}

bool ShardProblem::IsCorner(int i, const Corner& y) const {
  return IsLocal(i) ? local_.IsCorner(Local(i), y) : y.empty();
}

double ShardProblem::SmoothedOracle(int i, const double* w,
                                    const Smoothing& smoothing,
                                    double* state) const {
  return IsLocal(i) ? local_.SmoothedOracle(Local(i), w, smoothing, state) : 0;
}

double ShardProblem::SmoothedOracleWithStateDot(int i, const double* w,
                                                const Smoothing& smoothing,
                                                double* state,
                                                double* state_dot) const {
  if (IsLocal(i)) {
    return local_.SmoothedOracleWithStateDot(Local(i), w, smoothing, state,
                                             state_dot);
  }
  *state_dot = 0;
  return 0;
}

void ShardProblem::TouchedRanges(int i,
                                 std::vector<CoordinateRange>* ranges) const {
  if (IsLocal(i)) local_.TouchedRanges(Local(i), ranges);
}

}  // namespace chaintag
