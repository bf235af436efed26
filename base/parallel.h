// ParallelFor: splits [0, n) into one contiguous range per thread. Callers
// write per-example results into their own slots and reduce them in index
// order afterwards, so results never depend on the thread count.
//
// Thread-safety: `body` runs concurrently on disjoint ranges.

#ifndef CHAINTAG_BASE_PARALLEL_H_
#define CHAINTAG_BASE_PARALLEL_H_

#include <functional>

namespace chaintag {

// Calls body(begin, end) for disjoint ranges covering [0, n), on up to
// `num_threads` threads (the calling thread is one of them).
void ParallelFor(int n, int num_threads,
                 const std::function<void(int begin, int end)>& body);

}  // namespace chaintag

#endif  // CHAINTAG_BASE_PARALLEL_H_
