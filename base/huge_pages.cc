#include "base/huge_pages.h"

#include <cstdint>

#ifdef __linux__
#include <sys/mman.h>
#endif

namespace chaintag {
namespace {

constexpr size_t kHugePage = size_t{1} << 21;

}  // namespace

void* AllocateHugePageHinted(size_t bytes) {
  if (bytes < kHugePage) return ::operator new(bytes);
  const size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  void* p = ::operator new(rounded, std::align_val_t(kHugePage));
  AdviseHugePages(p, rounded);
  return p;
}

void DeallocateHugePageHinted(void* p, size_t bytes) {
  if (bytes < kHugePage) {
    ::operator delete(p);
  } else {
    ::operator delete(p, std::align_val_t(kHugePage));
  }
}

void AdviseHugePages(void* data, size_t bytes) {
#ifdef __linux__
  const uintptr_t begin = reinterpret_cast<uintptr_t>(data);
  const uintptr_t first = (begin + kHugePage - 1) & ~(kHugePage - 1);
  const uintptr_t last = (begin + bytes) & ~(kHugePage - 1);
  if (last > first) {
    madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
  }
#else
  (void)data;
  (void)bytes;
#endif
}

}  // namespace chaintag
