#include "base/huge_pages.h"

#include <algorithm>
#include <cstdint>

#include "base/parallel.h"

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

void FaultInPages(void* data, size_t bytes, int num_threads) {
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
  constexpr uintptr_t kPage = 4096;
  const uintptr_t first =
      (reinterpret_cast<uintptr_t>(data) + kPage - 1) & ~(kPage - 1);
  const uintptr_t end = reinterpret_cast<uintptr_t>(data) + bytes;
  if (end <= first) return;
  // Cut at huge page boundaries, so that no huge page is split between
  // threads.
  const uintptr_t base = first & ~(kHugePage - 1);
  const int64_t pieces =
      static_cast<int64_t>((end - base + kHugePage - 1) / kHugePage);
  const int threads =
      static_cast<int>(std::min<int64_t>(std::max(num_threads, 1), pieces));
  // One thread touches as fast as the caller's writes will.
  if (threads <= 1) return;
  auto cut = [&](int part) {
    return std::clamp<uintptr_t>(
        base + SplitPoint(pieces, part, threads) * kHugePage, first, end);
  };
  ParallelFor(threads, threads, [&](int part, int) {
    const uintptr_t from = cut(part), to = cut(part + 1);
    // A failure (a kernel before 5.14) leaves the pages to the writes.
    if (to > from) {
      madvise(reinterpret_cast<void*>(from), to - from, MADV_POPULATE_WRITE);
    }
  });
#else
  (void)data;
  (void)bytes;
  (void)num_threads;
#endif
}

}  // namespace chaintag
