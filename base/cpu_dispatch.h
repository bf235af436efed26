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
// Thread-safety: a macro and a pure function.

#ifndef CHAINTAG_BASE_CPU_DISPATCH_H_
#define CHAINTAG_BASE_CPU_DISPATCH_H_

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

}  // namespace chaintag

#endif  // CHAINTAG_BASE_CPU_DISPATCH_H_
