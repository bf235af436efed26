// NonzeroMask: which of up to 64 doubles are non-zero, as the bits of a
// word, by vector compares (four values at a time with AVX2, picked at run
// time; two with the SSE2 every x86-64 processor has). Block states scan
// their label marginals for the few labels that hold mass, over hundreds
// of labels a position, several times a step; a compare and a branch per
// label was the scan's cost.
//
//   for (uint64_t m = NonzeroMask(row, 45); m != 0; m &= m - 1)
//     Visit(__builtin_ctzll(m));
//
// Thread-safety: a pure function.

#ifndef CHAINTAG_MODELS_NONZERO_MASK_H_
#define CHAINTAG_MODELS_NONZERO_MASK_H_

#include <cstdint>

namespace chaintag {

// Bit y set where values[y] != 0 (as the operator says: NaN set, -0 not),
// for y < width; width in [0, 64].
uint64_t NonzeroMask(const double* values, int width);

// The ways NonzeroMask picks from, each testable on any machine that runs
// it: AVX2 (callable only where Avx2Available), and SSE2 on x86-64 or a
// scalar loop elsewhere.
namespace nonzero_mask_internal {
bool Avx2Available();
uint64_t Avx2(const double* values, int width);
uint64_t Portable(const double* values, int width);
}  // namespace nonzero_mask_internal

}  // namespace chaintag

#endif  // CHAINTAG_MODELS_NONZERO_MASK_H_
