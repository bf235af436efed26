#include "models/viterbi.h"

#include <cstddef>
#include <limits>

#include "base/cpu_dispatch.h"

namespace chaintag {
namespace {

// The best last label's total, max_y last[y] + end[y], and that label (the
// lowest on ties).
double BestLastLabel(const double* last, const ChainScores& scores,
                     int32_t* label) {
  double best = last[0] + scores.end[0];
  *label = 0;
  for (int y = 1; y < scores.num_labels; ++y) {
    const double candidate = last[y] + scores.end[y];
    if (candidate > best) {
      best = candidate;
      *label = y;
    }
  }
  return best;
}

}  // namespace

double ScoreLabeling(const ChainScores& scores, const int32_t* labels) {
  const int T = scores.length;
  const int L = scores.num_labels;
  if (T == 0) return 0;
  double total = scores.start[labels[0]] + scores.end[labels[T - 1]];
  for (int t = 0; t < T; ++t) {
    total += scores.unary[static_cast<int64_t>(t) * L + labels[t]];
    if (t > 0) total += TransitionInto(scores, t, labels[t - 1], labels[t]);
  }
  return total;
}

TransitionLists TransitionLists::FromMask(const uint8_t* allowed,
                                          int num_labels) {
  const int L = num_labels;
  TransitionLists lists;
  lists.num_labels = L;
  lists.next_begin.assign(1, 0);
  lists.previous_begin.assign(1, 0);
  for (int p = 0; p < L; ++p) {
    for (int y = 0; y < L; ++y) {
      if (allowed[static_cast<int64_t>(p) * L + y]) lists.next.push_back(y);
    }
    lists.next_begin.push_back(static_cast<int32_t>(lists.next.size()));
  }
  for (int y = 0; y < L; ++y) {
    for (int p = 0; p < L; ++p) {
      if (allowed[static_cast<int64_t>(p) * L + y]) lists.previous.push_back(p);
    }
    lists.previous_begin.push_back(static_cast<int32_t>(lists.previous.size()));
  }
  return lists;
}

double ViterbiDecoder::DecodeListedAsReady(
    const ChainScores& scores, int32_t* labels,
    absl::FunctionRef<void(int t)> before_position) {
  const int T = scores.length;
  const int L = scores.num_labels;
  if (T == 0) return 0;  // as Decode: one empty labeling
  const TransitionLists& lists = *scores.lists;
  constexpr double kNone = -std::numeric_limits<double>::infinity();
  delta_.resize(static_cast<size_t>(T) * L);
  double* delta = delta_.data();
  before_position(0);
  for (int y = 0; y < L; ++y) delta[y] = scores.start[y] + scores.unary[y];
  // Target-major: each label's maximum stays in a register over its listed
  // predecessors, whose transition values are gathered once per chain into
  // list order (the positions share them), so the loop reads delta (in L1)
  // and one contiguous array. Maxima are exact, so the order of the
  // candidates does not change the values.
  const int32_t* previous_begin = lists.previous_begin.data();
  const int32_t* previous_labels = lists.previous.data();
  listed_transition_.resize(lists.previous.size());
  for (int y = 0; y < L; ++y) {
    for (int32_t k = previous_begin[y]; k < previous_begin[y + 1]; ++k) {
      listed_transition_[k] =
          scores.transition[static_cast<int64_t>(previous_labels[k]) * L + y];
    }
  }
  const double* listed = listed_transition_.data();
  for (int t = 1; t < T; ++t) {
    before_position(t);
    const double* previous = delta + static_cast<int64_t>(t - 1) * L;
    double* __restrict current = delta + static_cast<int64_t>(t) * L;
    const double* unary = scores.unary + static_cast<int64_t>(t) * L;
    for (int y = 0; y < L; ++y) {
      // Four running maxima, so that consecutive candidates do not wait on
      // each other's comparison.
      double best[4] = {kNone, kNone, kNone, kNone};
      int32_t k = previous_begin[y];
      const int32_t end = previous_begin[y + 1];
      for (; k + 4 <= end; k += 4) {
        for (int lane = 0; lane < 4; ++lane) {
          const double candidate =
              previous[previous_labels[k + lane]] + listed[k + lane];
          best[lane] = best[lane] < candidate ? candidate : best[lane];
        }
      }
      for (; k < end; ++k) {
        const double candidate = previous[previous_labels[k]] + listed[k];
        best[0] = best[0] < candidate ? candidate : best[0];
      }
      const double left = best[0] < best[1] ? best[1] : best[0];
      const double right = best[2] < best[3] ? best[3] : best[2];
      current[y] = (left < right ? right : left) + unary[y];
    }
  }
  int32_t label = 0;
  const double best =
      BestLastLabel(delta + static_cast<int64_t>(T - 1) * L, scores, &label);
  // Backward as the full decoder: the lowest previous label of the best
  // sum (label 0 where every sum is −∞, as the full decoder gives). The
  // transitions come from the gathered list (the same values), not from
  // the L×L matrix, whose rows the predecessors scatter over.
  labels[T - 1] = label;
  for (int t = T - 1; t > 0; --t) {
    const double* previous = delta + static_cast<int64_t>(t - 1) * L;
    double best_previous = kNone;
    int32_t from = 0;
    for (int32_t k = previous_begin[label]; k < previous_begin[label + 1];
         ++k) {
      const int32_t p = previous_labels[k];
      const double candidate = previous[p] + listed[k];
      if (candidate > best_previous) {
        best_previous = candidate;
        from = p;
      }
    }
    label = from;
    labels[t - 1] = label;
  }
  return best;
}

// Also built for AVX2 and picked at load time where the CPU has it: the
// max-plus loop then runs four labels wide instead of two (same values).
CHAINTAG_AVX2_CLONES double ViterbiDecoder::Decode(const ChainScores& scores,
                                                   int32_t* labels) {
  const int T = scores.length;
  const int L = scores.num_labels;
  if (T == 0) return 0;
  if (scores.lists != nullptr && scores.pair == nullptr) {
    return DecodeListed(scores, labels);
  }
  delta_.resize(static_cast<size_t>(T) * L);
  double* delta = delta_.data();
  for (int y = 0; y < L; ++y) delta[y] = scores.start[y] + scores.unary[y];
  if (scores.pair != nullptr) transition_.resize(static_cast<size_t>(L) * L);
  // Forward: maxima only, previous label outermost, so the inner loop runs
  // over a contiguous transition row and vectorises (max is exact, so the
  // order of the candidates does not change the values).
  for (int t = 1; t < T; ++t) {
    const double* previous = delta + static_cast<int64_t>(t - 1) * L;
    double* __restrict current = delta + static_cast<int64_t>(t) * L;
    const double* transition = TransitionsInto(scores, t, transition_.data());
    for (int y = 0; y < L; ++y) current[y] = previous[0] + transition[y];
    for (int p = 1; p < L; ++p) {
      const double from_p = previous[p];
      const double* row = transition + static_cast<int64_t>(p) * L;
      for (int y = 0; y < L; ++y) {
        const double candidate = from_p + row[y];
        current[y] = current[y] < candidate ? candidate : current[y];
      }
    }
    const double* unary = scores.unary + static_cast<int64_t>(t) * L;
    for (int y = 0; y < L; ++y) current[y] += unary[y];
  }
  int32_t label = 0;
  const double best =
      BestLastLabel(delta + static_cast<int64_t>(T - 1) * L, scores, &label);
  // Backward: the argmax for the chosen label only, from the same sums; the
  // strict '>' over ascending previous labels keeps the lowest on ties.
  // Pair scores are added as TransitionsInto adds them; without them the
  // loop reads the transitions alone, as it always did.
  labels[T - 1] = label;
  const int64_t squared = static_cast<int64_t>(L) * L;
  for (int t = T - 1; t > 0; --t) {
    const double* previous = delta + static_cast<int64_t>(t - 1) * L;
    const double* pair =
        scores.pair == nullptr ? nullptr : scores.pair + t * squared;
    double best_previous = previous[0] + scores.transition[label];
    int32_t from = 0;
    if (pair == nullptr) {
      for (int p = 1; p < L; ++p) {
        const double candidate =
            previous[p] +
            scores.transition[static_cast<int64_t>(p) * L + label];
        if (candidate > best_previous) {
          best_previous = candidate;
          from = p;
        }
      }
    } else {
      best_previous = previous[0] + (scores.transition[label] + pair[label]);
      for (int p = 1; p < L; ++p) {
        const int64_t k = static_cast<int64_t>(p) * L + label;
        const double candidate = previous[p] + (scores.transition[k] + pair[k]);
        if (candidate > best_previous) {
          best_previous = candidate;
          from = p;
        }
      }
    }
    label = from;
    labels[t - 1] = label;
  }
  return best;
}

}  // namespace chaintag
