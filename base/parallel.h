// ParallelFor: splits [0, n) into one contiguous range per thread. Callers
// write per-example results into their own slots and reduce them in index
// order afterwards, so results never depend on the thread count.
//
// Thread-safety: `body` runs concurrently on disjoint ranges.

#ifndef CHAINTAG_BASE_PARALLEL_H_
#define CHAINTAG_BASE_PARALLEL_H_

#include <cstdint>
#include <functional>

namespace chaintag {

// The most threads a run starts: `train`, `tag`, `serve` and the Python
// bindings refuse more (a mistyped count would otherwise abort on thread
// creation).
constexpr int kMaxThreads = 256;

// Where part `part` of [0, n) starts when it is cut into `parts`
// contiguous, nearly equal ranges (part == parts gives n): how ParallelFor
// cuts, for callers that keep one result per part.
inline int64_t SplitPoint(int64_t n, int part, int parts) {
  return n * part / parts;
}

// Calls body(begin, end) for disjoint ranges covering [0, n), on up to
// `num_threads` threads (the calling thread is one of them).
void ParallelFor(int n, int num_threads,
                 const std::function<void(int begin, int end)>& body);

}  // namespace chaintag

#endif  // CHAINTAG_BASE_PARALLEL_H_
