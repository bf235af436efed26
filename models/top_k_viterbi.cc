#include "models/top_k_viterbi.h"

#include <cstddef>
#include <limits>

#include "models/top_k_merge.h"

namespace chaintag {
namespace {

constexpr double kMinusInfinity = -std::numeric_limits<double>::infinity();

}  // namespace

int TopKViterbi::Decode(const ChainScores& scores, int k,
                        std::vector<int32_t>* labelings,
                        std::vector<double>* labeling_scores) {
  const int T = scores.length;
  const int L = scores.num_labels;
  if (k <= 0 || (T > 0 && L <= 0)) {
    labelings->clear();
    labeling_scores->clear();
    return 0;
  }
  if (T == 0) {
    labelings->clear();
    labeling_scores->assign(1, 0.0);
    return 1;
  }
  const int K = TopKWidth(k, L, T);
  const size_t cells = static_cast<size_t>(T) * L;
  score_.resize(cells * K);
  from_label_.resize(cells * K);
  from_rank_.resize(cells * K);
  count_.resize(cells);
  if (scores.pair != nullptr) transition_.resize(static_cast<size_t>(L) * L);

  // Position 0: one partial labeling per label (the paper's ranks ≥ 1 are −∞
  // there; counting valid rows instead never lets a −∞ row pose as a path),
  // none where its score is −∞ (a forbidden start).
  for (int y = 0; y < L; ++y) {
    const double value = scores.start[y] + scores.unary[y];
    score_[static_cast<size_t>(y) * K] = value;
    count_[y] = value == kMinusInfinity ? 0 : 1;
  }
  for (int t = 1; t < T; ++t) {
    const size_t previous = static_cast<size_t>(t - 1) * L;
    const double* unary = scores.unary + static_cast<int64_t>(t) * L;
    const double* transition = TransitionsInto(scores, t, transition_.data());
    for (int y = 0; y < L; ++y) {
      const size_t cell = static_cast<size_t>(t) * L + y;
      double* value = &score_[cell * K];
      int n = MergeSortedLists(&score_[previous * K], &count_[previous], K,
                               nullptr, L, transition + y, L, value,
                               &from_label_[cell * K], &from_rank_[cell * K]);
      // Added after the merge, as ViterbiDecoder does, so rank 0 rounds
      // exactly like its delta. Rows that become −∞ (a −∞ unary) are dropped.
      for (int r = 0; r < n; ++r) value[r] += unary[y];
      while (n > 0 && value[n - 1] == kMinusInfinity) --n;
      count_[cell] = n;
    }
  }

  final_score_.resize(K);
  final_label_.resize(K);
  final_rank_.resize(K);
  const size_t last = static_cast<size_t>(T - 1) * L;
  const int m = MergeSortedLists(&score_[last * K], &count_[last], K, nullptr,
                                 L, scores.end, 1, final_score_.data(),
                                 final_label_.data(), final_rank_.data());

  labelings->resize(static_cast<size_t>(m) * T);
  labeling_scores->assign(final_score_.begin(), final_score_.begin() + m);
  for (int j = 0; j < m; ++j) {
    int32_t* row = labelings->data() + static_cast<size_t>(j) * T;
    int32_t label = final_label_[j];
    int32_t rank = final_rank_[j];
    for (int t = T - 1; t >= 0; --t) {
      row[t] = label;
      if (t == 0) break;
      const size_t entry = (static_cast<size_t>(t) * L + label) * K + rank;
      label = from_label_[entry];
      rank = from_rank_[entry];
    }
  }
  return m;
}

}  // namespace chaintag
