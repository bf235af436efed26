// ThreadCommunicator: the ranks of a Communicator as threads of one
// process, for tests of distributed code without MPI. A ThreadHub joins
// `size` ranks; each rank's thread uses its own ThreadCommunicator.
//
// Thread-safety: a hub is shared by its ranks' threads; each communicator
// is used by one thread.

#ifndef CHAINTAG_BASE_THREAD_COMMUNICATOR_H_
#define CHAINTAG_BASE_THREAD_COMMUNICATOR_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "base/communicator.h"

namespace chaintag {

class ThreadHub {
 public:
  explicit ThreadHub(int size);

  int size() const { return size_; }
  // Deposits rank's bytes, waits for every rank's, and copies all of them.
  void Exchange(int rank, std::string local, std::vector<std::string>* all);
  void Post(int from, int to, std::string message);
  std::string Take(int from, int to);

 private:
  const int size_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::string> slots_;
  int deposited_ = 0;
  int collected_ = 0;
  int64_t generation_ = 0;
  std::map<std::pair<int, int>, std::deque<std::string>> mailboxes_;
};

class ThreadCommunicator : public Communicator {
 public:
  ThreadCommunicator(ThreadHub* hub, int rank) : hub_(hub), rank_(rank) {}

  int rank() const override { return rank_; }
  int size() const override { return hub_->size(); }
  absl::Status AllGather(absl::string_view local, std::string* all,
                         std::vector<int64_t>* offsets) override;
  absl::Status Broadcast(int root, double* data, int64_t count) override;
  absl::Status Send(int to, const double* data, int64_t count) override;
  absl::Status Receive(int from, double* data, int64_t count) override;

 private:
  ThreadHub* const hub_;
  const int rank_;
};

}  // namespace chaintag

#endif  // CHAINTAG_BASE_THREAD_COMMUNICATOR_H_
