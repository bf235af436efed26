#include "models/top_k_merge.h"

#include <algorithm>
#include <cstddef>
#include <limits>

namespace chaintag {

int TopKWidth(int k, int num_labels, int length) {
  int64_t count = 1;
  for (int t = 0; t < length && count < k; ++t) count *= num_labels;
  return static_cast<int>(std::min<int64_t>(count, k));
}

int MergeSortedLists(const double* cell_scores, const int32_t* cell_counts,
                     int width, const int32_t* list_cells, int num_lists,
                     const double* offsets, int offset_stride, double* value,
                     int32_t* cell, int32_t* rank) {
  constexpr double kMinusInfinity = -std::numeric_limits<double>::infinity();
  // Insertion into the sorted best-so-far: candidates arrive in increasing
  // (list, rank), so an equal value lands after the ones already there, and
  // a list stops at its first row that cannot enter (its later rows are no
  // better). With K much smaller than the number of lists, most lists cost
  // one comparison.
  int written = 0;
  for (int list = 0; list < num_lists; ++list) {
    const int32_t from = list_cells == nullptr ? list : list_cells[list];
    const double shift = offsets[static_cast<size_t>(list) * offset_stride];
    const double* rows = cell_scores + static_cast<size_t>(from) * width;
    for (int32_t r = 0; r < cell_counts[from]; ++r) {
      const double candidate = rows[r] + shift;
      if (candidate == kMinusInfinity) break;
      if (written == width && !(candidate > value[width - 1])) break;
      int position = written < width ? written : width - 1;
      while (position > 0 && candidate > value[position - 1]) {
        value[position] = value[position - 1];
        cell[position] = cell[position - 1];
        rank[position] = rank[position - 1];
        --position;
      }
      value[position] = candidate;
      cell[position] = from;
      rank[position] = r;
      if (written < width) ++written;
    }
  }
  return written;
}

}  // namespace chaintag
