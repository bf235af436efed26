#include "base/mpi_communicator.h"

#include <mpi.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace chaintag {
namespace {

// MPI counts are ints: larger payloads go in chunks of this many elements.
constexpr int64_t kChunk = int64_t{1} << 30;

absl::Status Check(int code, const char* what) {
  if (code == MPI_SUCCESS) return absl::OkStatus();
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return absl::InternalError(
      absl::StrCat("MPI ", what, " failed: ", std::string(text, length)));
}

}  // namespace

absl::StatusOr<std::unique_ptr<MpiCommunicator>> MpiCommunicator::Create(
    int* argc, char*** argv) {
  int provided = 0;
  absl::Status status =
      Check(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided),
            "MPI_Init_thread");
  if (!status.ok()) return status;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return std::unique_ptr<MpiCommunicator>(new MpiCommunicator(rank, size));
}

MpiCommunicator::~MpiCommunicator() { MPI_Finalize(); }

void MpiCommunicator::Abort(int code) { MPI_Abort(MPI_COMM_WORLD, code); }

absl::Status MpiCommunicator::AllGather(absl::string_view local,
                                        std::string* all,
                                        std::vector<int64_t>* offsets) {
  const int64_t size = static_cast<int64_t>(local.size());
  std::vector<int64_t> sizes(size_, 0);
  absl::Status status = Check(MPI_Allgather(&size, 1, MPI_INT64_T, sizes.data(),
                                            1, MPI_INT64_T, MPI_COMM_WORLD),
                              "MPI_Allgather");
  if (!status.ok()) return status;
  offsets->assign(size_ + 1, 0);
  for (int r = 0; r < size_; ++r) {
    (*offsets)[r + 1] = (*offsets)[r] + sizes[r];
  }
  const int64_t total = offsets->back();
  all->resize(total);
  bytes_sent_ += size * (size_ - 1);
  bytes_received_ += total - size;
  if (total <= std::numeric_limits<int>::max()) {
    std::vector<int> counts(size_), displacements(size_);
    for (int r = 0; r < size_; ++r) {
      counts[r] = static_cast<int>(sizes[r]);
      displacements[r] = static_cast<int>((*offsets)[r]);
    }
    return Check(MPI_Allgatherv(local.data(), static_cast<int>(size), MPI_BYTE,
                                all->data(), counts.data(),
                                displacements.data(), MPI_BYTE, MPI_COMM_WORLD),
                 "MPI_Allgatherv");
  }
  // Over 2 GB: one broadcast per rank, in chunks.
  for (int r = 0; r < size_; ++r) {
    char* at = all->data() + (*offsets)[r];
    if (r == rank_ && size > 0) std::memcpy(at, local.data(), size);
    for (int64_t done = 0; done < sizes[r]; done += kChunk) {
      const int count = static_cast<int>(std::min(kChunk, sizes[r] - done));
      status = Check(MPI_Bcast(at + done, count, MPI_BYTE, r, MPI_COMM_WORLD),
                     "MPI_Bcast");
      if (!status.ok()) return status;
    }
  }
  return absl::OkStatus();
}

absl::Status MpiCommunicator::Broadcast(int root, double* data, int64_t count) {
  for (int64_t done = 0; done < count; done += kChunk) {
    const int chunk = static_cast<int>(std::min(kChunk, count - done));
    absl::Status status =
        Check(MPI_Bcast(data + done, chunk, MPI_DOUBLE, root, MPI_COMM_WORLD),
              "MPI_Bcast");
    if (!status.ok()) return status;
  }
  const int64_t bytes = count * static_cast<int64_t>(sizeof(double));
  if (rank_ == root) {
    bytes_sent_ += bytes * (size_ - 1);
  } else {
    bytes_received_ += bytes;
  }
  return absl::OkStatus();
}

absl::Status MpiCommunicator::Send(int to, const double* data, int64_t count) {
  for (int64_t done = 0; done < count; done += kChunk) {
    const int chunk = static_cast<int>(std::min(kChunk, count - done));
    absl::Status status =
        Check(MPI_Send(data + done, chunk, MPI_DOUBLE, to, 0, MPI_COMM_WORLD),
              "MPI_Send");
    if (!status.ok()) return status;
  }
  bytes_sent_ += count * static_cast<int64_t>(sizeof(double));
  return absl::OkStatus();
}

absl::Status MpiCommunicator::Receive(int from, double* data, int64_t count) {
  for (int64_t done = 0; done < count; done += kChunk) {
    const int chunk = static_cast<int>(std::min(kChunk, count - done));
    absl::Status status = Check(MPI_Recv(data + done, chunk, MPI_DOUBLE, from,
                                         0, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                                "MPI_Recv");
    if (!status.ok()) return status;
  }
  bytes_received_ += count * static_cast<int64_t>(sizeof(double));
  return absl::OkStatus();
}

}  // namespace chaintag
