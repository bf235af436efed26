#include "base/huge_pages.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace chaintag {
namespace {

// How many pages of [data, data + bytes) are resident.
int64_t ResidentPages(const void* data, size_t bytes) {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = reinterpret_cast<uintptr_t>(data) & ~(page - 1);
  const uintptr_t end = reinterpret_cast<uintptr_t>(data) + bytes;
  std::vector<unsigned char> resident((end - begin + page - 1) / page);
  EXPECT_EQ(
      mincore(reinterpret_cast<void*>(begin), end - begin, resident.data()), 0);
  int64_t count = 0;
  for (unsigned char r : resident) count += r & 1;
  return count;
}

TEST(FaultInPagesTest, FaultsInEveryPageOnSeveralThreads) {
  // Fresh anonymous memory (mmap), untouched, at an offset that is not
  // page-aligned, several huge pages long.
  const size_t bytes = (size_t{9} << 20) + 12345;
  void* mapping = mmap(nullptr, bytes + 8192, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mapping, MAP_FAILED);
  char* data = static_cast<char*>(mapping) + 100;
  ASSERT_EQ(ResidentPages(data, bytes), 0);
  FaultInPages(data, bytes, 3);
  // Every whole page inside the range, where the kernel can (5.14 on).
  const int64_t page = sysconf(_SC_PAGESIZE);
  void* probe = mmap(nullptr, page, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(probe, MAP_FAILED);
#ifdef MADV_POPULATE_WRITE
  if (madvise(probe, page, MADV_POPULATE_WRITE) == 0) {
    EXPECT_GE(ResidentPages(data, bytes), static_cast<int64_t>(bytes) / page);
  }
#endif
  munmap(probe, page);
  // The memory still reads as zeros.
  for (size_t k = 0; k < bytes; k += 4096) ASSERT_EQ(data[k], 0);
  munmap(mapping, bytes + 8192);
}

TEST(ReserveFaultedInTest, KeepsElementsAndGivesCapacity) {
  for (bool huge : {false, true}) {
    for (int threads : {1, 2, 4}) {
      std::vector<double> v = {1.5, -2.0, 3.25};
      const size_t n = size_t{3} << 20;  // 24 MB
      ReserveFaultedIn(&v, n, huge, threads);
      ASSERT_GE(v.capacity(), n);
      EXPECT_EQ(v, (std::vector<double>{1.5, -2.0, 3.25}));
      v.resize(n, 7.0);
      EXPECT_EQ(v[2], 3.25);
      EXPECT_EQ(v[3], 7.0);
      EXPECT_EQ(v[n - 1], 7.0);
      // Enough capacity already: nothing changes.
      const double* data = v.data();
      ReserveFaultedIn(&v, n / 2, huge, threads);
      EXPECT_EQ(v.data(), data);
    }
  }
}

TEST(FaultInPagesTest, EmptyAndTinyRangesAreFine) {
  char byte = 5;
  FaultInPages(&byte, 0, 2);
  FaultInPages(&byte, 1, 2);
  FaultInPages(nullptr, 0, 4);
  EXPECT_EQ(byte, 5);
}

}  // namespace
}  // namespace chaintag
