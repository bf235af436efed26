#include "base/thread_communicator.h"

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace chaintag {
namespace {

std::string ToBytes(const double* data, int64_t count) {
  return std::string(reinterpret_cast<const char*>(data),
                     static_cast<size_t>(count) * sizeof(double));
}

}  // namespace

ThreadHub::ThreadHub(int size) : size_(size), slots_(size) {}

// Two phases, so that a fast rank's next exchange cannot overwrite slots
// that a slow rank has not copied yet.
void ThreadHub::Exchange(int rank, std::string local,
                         std::vector<std::string>* all) {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return collected_ == 0; });
  slots_[rank] = std::move(local);
  const int64_t generation = generation_;
  if (++deposited_ == size_) {
    ++generation_;
    changed_.notify_all();
  } else {
    changed_.wait(lock, [&] { return generation_ != generation; });
  }
  *all = slots_;
  if (++collected_ == size_) {
    deposited_ = collected_ = 0;
    changed_.notify_all();
  }
}

void ThreadHub::Post(int from, int to, std::string message) {
  std::lock_guard<std::mutex> lock(mutex_);
  mailboxes_[{from, to}].push_back(std::move(message));
  changed_.notify_all();
}

std::string ThreadHub::Take(int from, int to) {
  std::unique_lock<std::mutex> lock(mutex_);
  std::deque<std::string>& box = mailboxes_[{from, to}];
  changed_.wait(lock, [&] { return !box.empty(); });
  std::string message = std::move(box.front());
  box.pop_front();
  return message;
}

absl::Status ThreadCommunicator::AllGather(absl::string_view local,
                                           std::string* all,
                                           std::vector<int64_t>* offsets) {
  bytes_sent_ += static_cast<int64_t>(local.size()) * (size() - 1);
  std::vector<std::string> parts;
  hub_->Exchange(rank_, std::string(local), &parts);
  all->clear();
  offsets->assign(1, 0);
  for (int r = 0; r < size(); ++r) {
    if (r != rank_) bytes_received_ += static_cast<int64_t>(parts[r].size());
    all->append(parts[r]);
    offsets->push_back(static_cast<int64_t>(all->size()));
  }
  return absl::OkStatus();
}

absl::Status ThreadCommunicator::Broadcast(int root, double* data,
                                           int64_t count) {
  std::vector<std::string> parts;
  hub_->Exchange(rank_, rank_ == root ? ToBytes(data, count) : std::string(),
                 &parts);
  if (parts[root].size() != static_cast<size_t>(count) * sizeof(double)) {
    return absl::InternalError(absl::StrCat("broadcast from rank ", root,
                                            ": count differs between ranks"));
  }
  if (rank_ != root) {
    std::memcpy(data, parts[root].data(), parts[root].size());
    bytes_received_ += static_cast<int64_t>(parts[root].size());
  } else {
    bytes_sent_ += static_cast<int64_t>(parts[root].size()) * (size() - 1);
  }
  return absl::OkStatus();
}

absl::Status ThreadCommunicator::Send(int to, const double* data,
                                      int64_t count) {
  bytes_sent_ += count * static_cast<int64_t>(sizeof(double));
  hub_->Post(rank_, to, ToBytes(data, count));
  return absl::OkStatus();
}

absl::Status ThreadCommunicator::Receive(int from, double* data,
                                         int64_t count) {
  const std::string message = hub_->Take(from, rank_);
  if (message.size() != static_cast<size_t>(count) * sizeof(double)) {
    return absl::InternalError(absl::StrCat("message from rank ", from, " has ",
                                            message.size() / sizeof(double),
                                            " doubles, expected ", count));
  }
  if (count > 0) std::memcpy(data, message.data(), message.size());
  bytes_received_ += static_cast<int64_t>(message.size());
  return absl::OkStatus();
}

}  // namespace chaintag
