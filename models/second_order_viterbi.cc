#include "models/second_order_viterbi.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <limits>
#include <type_traits>

#include "base/cpu_dispatch.h"

namespace chaintag {
namespace {

constexpr double kMinusInfinity = -std::numeric_limits<double>::infinity();

// Four doubles: one AVX2 register, two SSE2 ones in the default build.
// Written explicitly because GCC unrolls the fixed-width loops below into
// scalar code instead of vectorising them.
using Vector4 = double __attribute__((vector_size(32)));
// What the last block's kernel may store past the last row: less than a
// vector.
constexpr size_t kVectorSlack = 4;

// One block's max-plus step for 4·kVectors of its targets:
// out[j] = max_i ((previous[sources[i]] + unary) + edge[i·stride + j]). The
// padded rows hold 4·kVectors columns, so the maxima stay in registers and
// the loops have no remainder; whole vectors are stored, past the block's
// last target if it has fewer (see SecondOrderViterbi::Advance). Sources
// outermost, as in ViterbiDecoder; max is exact, so the order of the candidates
// does not change the values.
template <int kVectors>
__attribute__((always_inline)) inline void MaxPlusColumnsOf(
    const double* previous, const int32_t* sources, int num_sources,
    double unary, const double* edge, int stride, double* out) {
  Vector4 best[kVectors];
  const double from_first = previous[sources[0]] + unary;
  for (int v = 0; v < kVectors; ++v) {
    Vector4 weight;
    std::memcpy(&weight, edge + 4 * v, sizeof(weight));
    best[v] = from_first + weight;
  }
  for (int i = 1; i < num_sources; ++i) {
    const double from = previous[sources[i]] + unary;
    const double* row = edge + static_cast<size_t>(i) * stride;
    for (int v = 0; v < kVectors; ++v) {
      Vector4 weight;
      std::memcpy(&weight, row + 4 * v, sizeof(weight));
      const Vector4 candidate = from + weight;
      best[v] = best[v] < candidate ? candidate : best[v];
    }
  }
  std::memcpy(out, best, sizeof(best));
}

}  // namespace

// Rows of delta_ leave out their position's unary (see Advance).
double SecondOrderViterbi::Decode(const SecondOrderStructure& structure,
                                  const SecondOrderScores& scores,
                                  int32_t* labels) {
  const int T = scores.length;
  if (T == 0) return 0;
  const int L = structure.num_labels_;
  const int S = structure.num_states();
  delta_.resize(structure.RowOffset(T) + kVectorSlack);
  double* first = delta_.data();
  for (int y = 0; y < L; ++y) {
    first[y] = structure.start_allowed_[y] ? scores.start[y] : kMinusInfinity;
  }
  if (T > 1) {
    double* second = delta_.data() + structure.RowOffset(1);
    for (int s = 0; s < S; ++s) {
      const auto [a, b] = structure.state_labels_[s];
      second[s] = (first[a] + scores.unary[a]) +
                  scores.transition[static_cast<size_t>(a) * L + b];
    }
    structure.AddPairScores(scores, 1, second);
  }
  if (T > 2) {
    edge_score_.resize(structure.num_edge_slots());
    structure.TransitionEdgeScores(scores, edge_score_.data());
  }
  for (int t = 2; t < T; ++t) Advance(structure, scores, t);
  // The best final label (T = 1) or state; ties to the lowest.
  const double* last = delta_.data() + structure.RowOffset(T - 1);
  const double* unary = scores.unary + static_cast<size_t>(T - 1) * L;
  double best = kMinusInfinity;
  int32_t choice = -1;
  for (int cell = 0; cell < (T == 1 ? L : S); ++cell) {
    const int32_t y = T == 1 ? cell : structure.state_labels_[cell][1];
    const double candidate = (last[cell] + unary[y]) + scores.end[y];
    if (structure.end_allowed_[y] && candidate > best) {
      best = candidate;
      choice = cell;
    }
  }
  if (choice < 0) {
    std::fill(labels, labels + T, 0);
  } else if (T == 1) {
    labels[0] = choice;
  } else {
    Backtrack(structure, scores, T, choice, labels);
  }
  return best;
}

// Also built for AVX2 and picked at load time where the CPU has it, as
// ViterbiDecoder::Decode is: the max-plus kernels run four targets wide.
// The sources of a block (a, b) all end in b, so b's unary at t − 1 is
// added once per source rather than once per state at t − 1.
CHAINTAG_AVX2_CLONES void SecondOrderViterbi::Advance(
    const SecondOrderStructure& structure, const SecondOrderScores& scores,
    int t) {
  const double* previous = delta_.data() + structure.RowOffset(t - 1);
  double* current = delta_.data() + structure.RowOffset(t);
  const double* unary =
      scores.unary + static_cast<size_t>(t - 1) * structure.num_labels_;
  for (int b = 0; b < structure.num_labels_; ++b) {
    const SecondOrderStructure::Block& block = structure.blocks_[b];
    const int n = block.num_targets;
    double* out = current + block.first_target;
    if (block.num_sources == 0) {
      std::fill(out, out + n, kMinusInfinity);
      continue;
    }
    const int32_t* sources =
        structure.source_state_.data() + block.first_source;
    const double* edge = edge_score_.data() + block.first_edge;
    // Up to 16 targets at a time, their maxima in registers (a switch, not
    // a table of kernels, so that each is inlined into this clone). The
    // kernels store whole vectors: the slots past the block belong to later
    // blocks (or rows, or delta_'s slack), written after this one.
    for (int j = 0; j < n; j += 16) {
      const int columns = std::min(16, n - j);
      auto kernel = [&](auto width) {
        MaxPlusColumnsOf<decltype(width)::value>(
            previous, sources, block.num_sources, unary[b], edge + j,
            block.row_stride, out + j);
      };
      switch ((columns + 3) / 4) {
        case 1:
          kernel(std::integral_constant<int, 1>());
          break;
        case 2:
          kernel(std::integral_constant<int, 2>());
          break;
        case 3:
          kernel(std::integral_constant<int, 3>());
          break;
        default:
          kernel(std::integral_constant<int, 4>());
      }
    }
  }
  structure.AddPairScores(scores, t, current);
}

void SecondOrderViterbi::Backtrack(const SecondOrderStructure& structure,
                                   const SecondOrderScores& scores, int length,
                                   int32_t state, int32_t* labels) const {
  labels[length - 1] = structure.state_labels_[state][1];
  // The argmax for the chosen state only, from the same sums; the strict
  // '>' over ascending sources (a) keeps the lowest y_{t−2} on ties.
  for (int t = length - 1; t >= 2; --t) {
    const int32_t b = structure.state_labels_[state][0];
    const SecondOrderStructure::Block& block = structure.blocks_[b];
    const int32_t* sources =
        structure.source_state_.data() + block.first_source;
    const double* previous = delta_.data() + structure.RowOffset(t - 1);
    const double unary =
        scores.unary[static_cast<size_t>(t - 1) * structure.num_labels_ + b];
    const double* edge =
        edge_score_.data() + block.first_edge + (state - block.first_target);
    int32_t from = sources[0];
    double best = (previous[from] + unary) + edge[0];
    for (int i = 1; i < block.num_sources; ++i) {
      const double candidate = (previous[sources[i]] + unary) +
                               edge[static_cast<size_t>(i) * block.row_stride];
      if (candidate > best) {
        best = candidate;
        from = sources[i];
      }
    }
    labels[t - 1] = b;
    state = from;
  }
  labels[0] = structure.state_labels_[state][0];
}

}  // namespace chaintag
