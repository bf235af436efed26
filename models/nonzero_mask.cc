#include "models/nonzero_mask.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace chaintag {
namespace nonzero_mask_internal {

#if defined(__x86_64__)
__attribute__((target("avx2"))) uint64_t Avx2(const double* values, int width) {
  uint64_t mask = 0;
  int y = 0;
  const __m256d zero = _mm256_setzero_pd();
  for (; y + 4 <= width; y += 4) {
    const __m256d nonzero =
        _mm256_cmp_pd(_mm256_loadu_pd(values + y), zero, _CMP_NEQ_UQ);
    mask |= static_cast<uint64_t>(_mm256_movemask_pd(nonzero)) << y;
  }
  for (; y < width; ++y) mask |= static_cast<uint64_t>(values[y] != 0) << y;
  return mask;
}

bool Avx2Available() { return __builtin_cpu_supports("avx2"); }
#else
uint64_t Avx2(const double* values, int width) {
  return Portable(values, width);
}

bool Avx2Available() { return false; }
#endif

uint64_t Portable(const double* values, int width) {
  uint64_t mask = 0;
  int y = 0;
#if defined(__x86_64__)
  const __m128d zero = _mm_setzero_pd();
  for (; y + 2 <= width; y += 2) {
    const __m128d nonzero = _mm_cmpneq_pd(_mm_loadu_pd(values + y), zero);
    mask |= static_cast<uint64_t>(_mm_movemask_pd(nonzero)) << y;
  }
#endif
  for (; y < width; ++y) mask |= static_cast<uint64_t>(values[y] != 0) << y;
  return mask;
}

}  // namespace nonzero_mask_internal

uint64_t NonzeroMask(const double* values, int width) {
  static const bool avx2 = nonzero_mask_internal::Avx2Available();
  return avx2 ? nonzero_mask_internal::Avx2(values, width)
              : nonzero_mask_internal::Portable(values, width);
}

}  // namespace chaintag
