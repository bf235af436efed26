// ShardProblem: one process's view of a problem whose blocks are spread
// over the ranks of a distributed run (base/communicator.h). The process
// holds blocks [shard.begin, shard.end) of n as a Problem of their own
// (`local`, block i − begin); the other blocks are remote: their state is
// empty and every update of it or of w is a no-op, so a solver can keep
// global block indices, counters and scalars for every block while only
// the owner touches a block's data. A remote block's oracle, scores and
// losses are never asked for (the solver exchanges them); they return
// zeros.
//
// Thread-safety: as the local problem (const).

#ifndef CHAINTAG_SOLVERS_SHARD_PROBLEM_H_
#define CHAINTAG_SOLVERS_SHARD_PROBLEM_H_

#include <cstdint>
#include <vector>

#include "base/communicator.h"
#include "solvers/problem.h"

namespace chaintag {

class ShardProblem : public Problem {
 public:
  // `local` holds shard.end − shard.begin blocks and outlives this.
  ShardProblem(const Problem& local, int num_examples, BlockShard shard)
      : local_(local), n_(num_examples), shard_(shard) {}

  const BlockShard& shard() const { return shard_; }
  bool IsLocal(int i) const { return i >= shard_.begin && i < shard_.end; }

  int NumExamples() const override { return n_; }
  int64_t Dim() const override { return local_.Dim(); }
  void MaxOracle(int i, const double* w, OracleResult* result) const override {
    MaxOracleWithStateDot(i, w, nullptr, result);
  }
  void MaxOracleWithStateDot(int i, const double* w, const double* state,
                             OracleResult* result) const override;
  double StateDot(int i, const double* state, const double* w) const override;
  bool SupportsSmoothing(Smoothing::Kind kind) const override {
    return local_.SupportsSmoothing(kind);
  }
  void MaxOracleScaled(int i, const double* v, double scale,
                       OracleResult* result) const override;
  void Decode(int i, const double* w, Corner* corner) const override;
  double Loss(int i, const Corner& y) const override;
  double Score(int i, const double* w, const Corner& y) const override;
  void AddScaled(int i, const Corner& y, double c, double* w) const override;
  void AddCornerDifference(int i, const Corner& a, const Corner& b, double c,
                           double* w) const override;
  int64_t BlockStateSize(int i) const override;
  void InitBlockState(int i, double* state) const override;
  void MixCorner(int i, const Corner& y, double gamma,
                 double* state) const override;
  void ScaleBlockState(int i, double factor, double* state) const override;
  double StateDistanceSquared(int i, const double* state,
                              const Corner& y) const override;
  void AddCornerMinusState(int i, const Corner& y, const double* state,
                           double c, double* w) const override;
  void AddCornerMinusMixture(int i, const Corner& y, const double* state,
                             const Corner* const* corners,
                             const double* weights, int count, double c,
                             double* w) const override;
  void AddCornerMinusStateInSlice(int i, const Corner& y, const double* state,
                                  double c, int64_t begin, int64_t end,
                                  double* w) const override;
  void EncodeCornerMinusState(int i, const Corner& y, const double* state,
                              double c, BlockUpdate* update) const override;
  void EncodeScaled(int i, const Corner& y, double c,
                    BlockUpdate* update) const override;
  void AddCornerToState(int i, const Corner& y, double c,
                        double* state) const override;
  void ScoreCorners(int i, const double* w, const double* state,
                    const Corner* const* corners, int count, double* scores,
                    double* state_dot) const override;
  void ScoreCornersAndMaxOracle(int i, const double* w, const double* state,
                                const Corner* const* corners, int count,
                                double* scores,
                                OracleResult* result) const override;
  double CornerDistanceSquared(int i, const Corner& a,
                               const Corner& b) const override;
  const Corner& GoldCorner(int i) const override;
  bool IsCorner(int i, const Corner& y) const override;
  double SmoothedOracle(int i, const double* w, const Smoothing& smoothing,
                        double* state) const override;
  double SmoothedOracleWithStateDot(int i, const double* w,
                                    const Smoothing& smoothing, double* state,
                                    double* state_dot) const override;
  void TouchedRanges(int i,
                     std::vector<CoordinateRange>* ranges) const override;
  bool FreeCoordinates(std::vector<int64_t>* coordinates) const override {
    return local_.FreeCoordinates(coordinates);
  }
  bool OraclesAtFreeAreFaster() const override {
    return local_.OraclesAtFreeAreFaster();
  }
  double SmoothedOracleWithStateDotAtFree(int i, const double* free_w,
                                          const Smoothing& smoothing,
                                          double* state,
                                          double* state_dot) const override {
    if (IsLocal(i)) {
      return local_.SmoothedOracleWithStateDotAtFree(
          Local(i), free_w, smoothing, state, state_dot);
    }
    *state_dot = 0;
    return 0;
  }
  void AddCornerMinusStateAtFree(int i, const Corner& y, const double* state,
                                 double c, int64_t begin, int64_t end,
                                 double* free_w) const override {
    if (IsLocal(i)) {
      local_.AddCornerMinusStateAtFree(Local(i), y, state, c, begin, end,
                                       free_w);
    }
  }

 private:
  int Local(int i) const { return i - shard_.begin; }

  const Problem& local_;
  const int n_;
  const BlockShard shard_;
  const Corner empty_;
};

}  // namespace chaintag

#endif  // CHAINTAG_SOLVERS_SHARD_PROBLEM_H_
