// Communicator: the collective operations distributed training needs from
// its processes (ranks), behind an interface so that the solvers do not
// depend on MPI: MpiCommunicator (mpi_communicator.h) runs ranks as MPI
// processes, ThreadCommunicator (thread_communicator.h) as threads of one
// process (tests). Every operation is collective unless it says otherwise:
// every rank calls it, in the same order, with matching sizes. Results are
// the same bytes on every rank; nothing is summed by the transport, so
// reductions stay in an order the caller fixes.
//
// Thread-safety: one thread per rank calls a communicator.

#ifndef CHAINTAG_BASE_COMMUNICATOR_H_
#define CHAINTAG_BASE_COMMUNICATOR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace chaintag {

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;

  // Every rank's `local` bytes, to every rank: concatenated in rank order
  // into `all` (whose capacity is reused), rank r's at
  // [(*offsets)[r], (*offsets)[r + 1]).
  virtual absl::Status AllGather(absl::string_view local, std::string* all,
                                 std::vector<int64_t>* offsets) = 0;
  // Every rank's `local` doubles concatenated in rank order into `all`.
  absl::Status AllGatherDoubles(absl::Span<const double> local,
                                std::vector<double>* all);
  // data[0, count) of rank `root` to every rank.
  virtual absl::Status Broadcast(int root, double* data, int64_t count) = 0;
  // Point to point (not collective): data[0, count) to rank `to`, or from
  // rank `from`, which sends the same count.
  virtual absl::Status Send(int to, const double* data, int64_t count) = 0;
  virtual absl::Status Receive(int from, double* data, int64_t count) = 0;

  // Bytes this rank sent and received so far (the payloads).
  int64_t bytes_sent() const { return bytes_sent_; }
  int64_t bytes_received() const { return bytes_received_; }

 protected:
  int64_t bytes_sent_ = 0;
  int64_t bytes_received_ = 0;
};

// Blocks [begin, end) of 0..n−1 held by `rank` of `size`: contiguous, in
// rank order, sizes differing by at most one.
struct BlockShard {
  int begin = 0;
  int end = 0;
};
BlockShard ShardOf(int n, int rank, int size);

}  // namespace chaintag

#endif  // CHAINTAG_BASE_COMMUNICATOR_H_
