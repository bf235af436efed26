#include "base/parallel.h"

#include <algorithm>
#include <thread>
#include <vector>

namespace chaintag {

void ParallelFor(int n, int num_threads,
                 const std::function<void(int begin, int end)>& body) {
  const int threads = std::max(1, std::min(num_threads, n));
  if (threads <= 1) {
    if (n > 0) body(0, n);
    return;
  }
  std::vector<std::thread> workers;
  workers.reserve(threads - 1);
  for (int t = 1; t < threads; ++t) {
    const int begin = static_cast<int>(SplitPoint(n, t, threads));
    const int end = static_cast<int>(SplitPoint(n, t + 1, threads));
    workers.emplace_back([&body, begin, end] { body(begin, end); });
  }
  body(0, static_cast<int>(SplitPoint(n, 1, threads)));
  for (std::thread& worker : workers) worker.join();
}

}  // namespace chaintag
