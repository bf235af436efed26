// Transparent huge pages for large arrays read at random (weight rows):
// with 4 KiB pages nearly every such read is a TLB miss. Both helpers are
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

// Gives an empty `v` capacity for n elements, marked for huge pages before
// any of it is touched, so that assign() then faults huge pages in.
template <typename T>
void ReserveHugePages(std::vector<T>* v, size_t n) {
  if (v->capacity() >= n) return;
  v->reserve(n);
  AdviseHugePages(v->data(), n * sizeof(T));
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
