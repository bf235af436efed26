// CHAINTAG_AVX2_CLONES: builds a hot function for AVX2 beside the portable
// default and picks one at load time, so that the binary runs anywhere.
// Empty under clang (the fuzz build): clang 14 names a multiversioned
// function's dispatcher so that callers in other files do not link, and
// refuses to multiversion a function called above its definition; the
// default clone is the same source.
//
// CpuPause(): the spin-wait hint, for a thread that polls a flag another
// thread will set (it frees the core's resources and eases the exit from
// the loop); nothing on other processors.
//
// SpinBackoff: how such a thread waits. It pauses at every poll and yields
// its core every kPausesPerYield polls, so that when there are more
// runnable threads than cores (another process on the machine, or more
// threads asked for than it has) the thread it waits for can run on this
// core instead of queueing behind the spin. With a core each, a yield
// returns at once.
//
//   SpinBackoff backoff;
//   while (!flag.load(std::memory_order_acquire)) backoff.Pause();
//
// Thread-safety: a macro and a pure function; a SpinBackoff belongs to the
// thread that waits with it.

#ifndef CHAINTAG_BASE_CPU_DISPATCH_H_
#define CHAINTAG_BASE_CPU_DISPATCH_H_

#include <thread>

#if defined(__clang__)
#define CHAINTAG_AVX2_CLONES
#else
#define CHAINTAG_AVX2_CLONES __attribute__((target_clones("avx2", "default")))
#endif

namespace chaintag {

inline void CpuPause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

class SpinBackoff {
 public:
  static constexpr int kPausesPerYield = 64;

  // Pauses; every kPausesPerYield-th call also yields and returns true (a
  // caller with a deadline reads its clock then).
  bool Pause() {
    CpuPause();
    if (++polls_ < kPausesPerYield) return false;
    polls_ = 0;
    std::this_thread::yield();
    return true;
  }

 private:
  int polls_ = 0;
};

}  // namespace chaintag

#endif  // CHAINTAG_BASE_CPU_DISPATCH_H_
