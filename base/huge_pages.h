// Large arrays: transparent huge pages for those read at random (weight
// rows: with 4 KiB pages nearly every such read is a TLB miss), and their
// first touch on several threads (a first touch is the kernel zeroing the
// page, in the thread that touches it, and on a VM whose host backs the
// memory only then it costs more still;
// docs/experiments.md#mini-batch-and-distributed-training). The helpers are
// hints (Linux madvise), ignored where unsupported.
//
// Thread-safety: stateless functions and an allocator without state.

#ifndef CHAINTAG_BASE_HUGE_PAGES_H_
#define CHAINTAG_BASE_HUGE_PAGES_H_

#include <cstddef>
#include <new>
#include <vector>

namespace chaintag {

// Blocks of 2 MiB or more are 2 MiB-aligned and marked for huge pages.
void* AllocateHugePageHinted(size_t bytes);
void DeallocateHugePageHinted(void* p, size_t bytes);

// Marks the whole 2 MiB pages inside [data, data + bytes) for huge pages;
// call it before the memory is first touched.
void AdviseHugePages(void* data, size_t bytes);

// Faults in the pages of [data, data + bytes) for writing, on up to
// num_threads threads, each taking whole 2 MiB pieces.
void FaultInPages(void* data, size_t bytes, int num_threads);

// Gives `v` capacity for n elements, when it has less, and faults that
// memory in on num_threads threads before the caller's assign() or resize()
// writes it (then at memory speed); with huge_pages it is first marked for
// huge pages. Existing elements are kept.
template <typename T>
void ReserveFaultedIn(std::vector<T>* v, size_t n, bool huge_pages,
                      int num_threads) {
  if (v->capacity() >= n) return;
  v->reserve(n);
  if (huge_pages) AdviseHugePages(v->data(), n * sizeof(T));
  // Only past the elements already there: those pages are touched.
  const size_t kept = v->size() * sizeof(T);
  FaultInPages(reinterpret_cast<char*>(v->data()) + kept, n * sizeof(T) - kept,
               num_threads);
}

// std::allocator on AllocateHugePageHinted.
template <typename T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}  // NOLINT
  T* allocate(size_t n) {
    return static_cast<T*>(AllocateHugePageHinted(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) {
    DeallocateHugePageHinted(p, n * sizeof(T));
  }
  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const {
    return true;
  }
  template <typename U>
  bool operator!=(const HugePageAllocator<U>&) const {
    return false;
  }
};

template <typename T>
using HugePageVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace chaintag

#endif  // CHAINTAG_BASE_HUGE_PAGES_H_
