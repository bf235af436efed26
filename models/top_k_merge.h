// The merge step of top-K max-sum decoding: the K best rows of several
// lists sorted best first, each shifted by its own offset. TopKViterbi
// merges the lists of the previous position's labels, SecondOrderTopK those
// of a lattice state's sources.
//
// Thread-safety: a pure function.

#ifndef CHAINTAG_MODELS_TOP_K_MERGE_H_
#define CHAINTAG_MODELS_TOP_K_MERGE_H_

#include <cstdint>

namespace chaintag {

// min(k, L^length) without overflow: how many labelings a top-k decoder
// keeps per cell (k ≥ 1).
int TopKWidth(int k, int num_labels, int length);

// Writes the up to `width` best rows of the lists to value/cell/rank, best
// first, and returns how many it wrote. List l is the cell
// list_cells[l] (cell l when list_cells is null): its rows are
// cell_scores[cell·width + r] for r < cell_counts[cell], sorted descending,
// each plus offsets[l·offset_stride]. Equal values come out in increasing
// (list, rank): the decoders' tie orders rest on it, and it keeps rank 0
// their Viterbi choice (the lowest list). A −∞ row is a forbidden path, not
// a labeling: it never enters, nor do the rows after it.
int MergeSortedLists(const double* cell_scores, const int32_t* cell_counts,
                     int width, const int32_t* list_cells, int num_lists,
                     const double* offsets, int offset_stride, double* value,
                     int32_t* cell, int32_t* rank);

}  // namespace chaintag

#endif  // CHAINTAG_MODELS_TOP_K_MERGE_H_
